#include "base/pool.h"

#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- cg_pool ---- */

struct cg_pool_block {
    cg_pool_block *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

void cg_pool_init(cg_pool *p)
{
    p->blocks = NULL;
    cg_map_init(&p->index);
}

void cg_pool_release(cg_pool *p)
{
    cg_pool_block *b = p->blocks;
    while (b) {
        cg_pool_block *next = b->next;
        free(b);
        b = next;
    }
    cg_map_release(&p->index);
    p->blocks = NULL;
}

void *cg_pool_alloc(cg_pool *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    cg_pool_block *b = p->blocks;
    if (!b || b->cap - b->used < n) {
        /* each block twice the last, up to 4 MiB: a large pool (the job
         * names at 100k jobs) is a few large blocks, not thousands */
        size_t cap = b && b->cap < (2 << 20) ? 2 * b->cap : b ? (size_t)4 << 20 : 65536;
        cap = n > cap ? n : cap;
        b = cg_xmalloc(sizeof *b + cap);
        b->cap = cap;
        b->used = 0;
        b->next = p->blocks;
        p->blocks = b;
    }
    void *r = b->data + b->used;
    b->used += n;
    return r;
}

char *cg_pool_strndup(cg_pool *p, const char *s, size_t n)
{
    return cg_strcopy(cg_pool_alloc(p, n + 1), s, n);
}

const char *cg_internn(cg_pool *p, const char *s, size_t n)
{
    const char *hit = cg_map_getn(&p->index, s, n);
    if (!hit) {
        char *copy = cg_pool_strndup(p, s, n);
        cg_map_put(&p->index, copy, copy);
        hit = copy;
    }
    return hit;
}

const char *cg_intern(cg_pool *p, const char *s)
{
    return cg_internn(p, s, strlen(s));
}

/* ---- cg_arena ---- */

void cg_arena_init(cg_arena *a)
{
    memset(a, 0, sizeof *a);
}

void cg_arena_release(cg_arena *a)
{
    for (size_t i = 0; i < a->nblocks; i++)
        free(a->blocks[i]);
    free(a->blocks);
    free(a->sizes);
    cg_arena_init(a);
}

void cg_arena_reset(cg_arena *a)
{
    a->block = 0;
    a->used = 0;
}

void *cg_arena_alloc(cg_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    while (a->block < a->nblocks && a->sizes[a->block] - a->used < n) {
        a->block++;
        a->used = 0;
    }
    if (a->block == a->nblocks) {
        size_t size = n > 65536 ? n : 65536;
        cg_grow(&a->blocks, &a->cap_blocks, a->nblocks + 1, sizeof *a->blocks);
        a->sizes = cg_xrealloc(a->sizes, a->cap_blocks * sizeof *a->sizes);
        a->blocks[a->nblocks] = cg_xmalloc(size);
        a->sizes[a->nblocks] = size;
        a->nblocks++;
        a->used = 0;
    }
    void *p = a->blocks[a->block] + a->used;
    a->used += n;
    return p;
}

char *cg_arena_strndup(cg_arena *a, const char *s, size_t n)
{
    return cg_strcopy(cg_arena_alloc(a, n + 1), s, n);
}
