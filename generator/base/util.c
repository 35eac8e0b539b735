#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void cg_die_oom(void)
{
    fputs("cigen: error: out of memory\n", stderr); /* layers: allowed (the one message of a dying process) */
    exit(2);
}

void *cg_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        cg_die_oom();
    return p;
}

bool cg_threads_allowed(void)
{
    return getenv("CIGEN_TEST_NO_THREADS") == NULL; /* layers: allowed (a test switch, read-only) */
}

/* Called through a volatile pointer: compilers turn malloc + memset(0)
 * back into calloc. */
static void *(*volatile zero_fill)(void *, int, size_t) = memset;

void *cg_xcalloc(size_t n, size_t size)
{
    n = n ? n : 1;
    size = size ? size : 1;
    if (n > ((size_t)1 << 20) / size) {
        /* Large blocks are zeroed by writing them: calloc would map the
         * zero page, and the first write to each page (hash tables probe
         * before they store) would then cost a copy-on-write fault, with a
         * TLB shootdown on every core once a second thread runs. */
        if (n > SIZE_MAX / size)
            cg_die_oom();
        void *p = malloc(n * size);
        if (!p)
            cg_die_oom();
        return zero_fill(p, 0, n * size);
    }
    void *p = calloc(n, size);
    if (!p)
        cg_die_oom();
    return p;
}

void *cg_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        cg_die_oom();
    return q;
}

void cg_grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2 / size)
            cg_die_oom();
        c *= 2;
    }
    void **pp = p;
    *pp = cg_xrealloc(*pp, c * size);
    *cap = c;
}

char *cg_xstrdup(const char *s)
{
    return cg_xstrndup(s, strlen(s));
}

char *cg_xstrndup(const char *s, size_t n)
{
    char *d = cg_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

bool cg_streq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool cg_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool cg_is_name(const char *s)
{
    if (!*s || !(cg_isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!cg_isnamechar((unsigned char)*s))
            return false;
    return true;
}

const char *cg_line_breaker(const char *s, size_t *len)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t n = (*p < 0x20 && *p != '\t') || *p == 0x7f                    ? 1
                   : p[0] == 0xc2 && p[1] == 0x85                               ? 2 /* NEL */
                   : p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9) ? 3
                                                                                 : 0;
        if (n) {
            if (len)
                *len = n;
            return (const char *)p;
        }
    }
    return NULL;
}

/* Eight bytes as a little-endian number, whatever the machine, so hashes
 * (and anything that might ever depend on them) are the same everywhere. */
static uint64_t load64le(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* A word-at-a-time multiplicative hash with a murmur3 finaliser: fast on
 * the long job names and paths cigen keys its maps by. */
uint64_t cg_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (len * 0x100000001B3ULL);
    for (; len >= 8; p += 8, len -= 8) {
        h ^= load64le(p, 8);
        h = (h << 29 | h >> 35) * 0x9FB21C651E98DF25ULL;
    }
    h ^= load64le(p, len);
    return mix64(h);
}

size_t cg_count_newlines(const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t count = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        w ^= ones * '\n'; /* newline bytes become zero */
        uint64_t zero = ~(((w & ~highs) + ~highs) | w) & highs; /* exactly the zero bytes */
        /* one bit per zero byte, moved to the byte's low bit; the multiply
         * sums the eight bytes into the top one (at most 8: no carry), which
         * needs no popcount instruction (or libgcc's slow fallback) */
        count += (size_t)(((zero >> 7) * ones) >> 56);
    }
    for (; i < n; i++)
        count += s[i] == '\n';
    return count;
}

size_t cg_edit_distance(const char *a, const char *b, size_t max)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > max)
        return max + 1;
    if (la > 64 || lb > 64)
        return max + 1;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        size_t best = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev[j - 1] + cost;
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            cur[j] = v;
            if (v < best)
                best = v;
        }
        if (best > max)
            return max + 1;
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

const char *cg_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word);
    size_t max = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    const char *best = NULL;
    size_t best_d = max + 1;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i] || cg_streq(candidates[i], word))
            continue;
        size_t d = cg_edit_distance(word, candidates[i], max);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

/* ---- cg_map ---- */

void cg_map_init(cg_map *m)
{
    memset(m, 0, sizeof *m);
}

void cg_map_release(cg_map *m)
{
    free(m->slots);
    cg_map_init(m);
}

/* The slot of key[0..len) (its own slot or the empty one it would take). */
static size_t map_slot(const cg_map *m, const char *key, size_t len, uint64_t h)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)h & mask;
    for (;; i = (i + 1) & mask) {
        const cg_map_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && strncmp(s->key, key, len) == 0 && s->key[len] == '\0'))
            return i;
    }
}

void *cg_map_getn(const cg_map *m, const char *key, size_t len)
{
    if (!m->cap)
        return NULL;
    const cg_map_slot *s = &m->slots[map_slot(m, key, len, cg_hash(key, len))];
    return s->key ? s->val : NULL;
}

void *cg_map_get(const cg_map *m, const char *key)
{
    return cg_map_getn(m, key, strlen(key));
}

bool cg_map_has(const cg_map *m, const char *key)
{
    size_t len = strlen(key);
    return m->cap && m->slots[map_slot(m, key, len, cg_hash(key, len))].key != NULL;
}

static void map_rehash(cg_map *m, size_t cap)
{
    cg_map_slot *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = cg_xcalloc(cap, sizeof *m->slots);
    m->cap = cap;
    size_t mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].key) {
            size_t j = (size_t)old[i].hash & mask;
            while (m->slots[j].key)
                j = (j + 1) & mask;
            m->slots[j] = old[i];
        }
    }
    free(old);
}

/* The slot for key, grown first so an insertion fits (load at most 1/2:
 * linear probing stays short even on misses). */
static cg_map_slot *map_claim(cg_map *m, const char *key)
{
    if ((m->len + 1) * 2 > m->cap)
        map_rehash(m, m->cap ? m->cap * 2 : 16);
    size_t len = strlen(key);
    uint64_t h = cg_hash(key, len);
    cg_map_slot *s = &m->slots[map_slot(m, key, len, h)];
    if (!s->key)
        s->hash = h;
    return s;
}

/* The capacity (a power of two, at least 16) that holds n entries at the
 * tables' load of at most 1/2. */
static size_t table_cap(size_t cap, size_t n)
{
    cap = cap ? cap : 16;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    return cap;
}

void cg_map_reserve(cg_map *m, size_t n)
{
    size_t cap = table_cap(m->cap, n);
    if (cap > m->cap)
        map_rehash(m, cap);
}

void *cg_map_put(cg_map *m, const char *key, void *val)
{
    cg_map_slot *s = map_claim(m, key);
    void *old = s->key ? s->val : NULL;
    if (!s->key) {
        s->key = key;
        m->len++;
    }
    s->val = val;
    return old;
}

void *cg_map_put_new(cg_map *m, const char *key, void *val)
{
    cg_map_slot *s = map_claim(m, key);
    if (s->key)
        return s->val;
    s->key = key;
    s->val = val;
    m->len++;
    return NULL;
}

/* ---- cg_index ---- */

void cg_index_init(cg_index *x, cg_index_key_fn key_of, const void *ctx)
{
    memset(x, 0, sizeof *x);
    x->key_of = key_of;
    x->ctx = ctx;
}

void cg_index_release(cg_index *x)
{
    free(x->slot);
    x->slot = NULL;
    x->cap = x->len = 0;
}

static void index_rehash(cg_index *x, size_t cap)
{
    cg_index_slot *old = x->slot;
    size_t old_cap = x->cap;
    x->slot = cg_xcalloc(cap, sizeof *x->slot);
    x->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].id1)
            continue;
        size_t j = old[i].tag & (cap - 1);
        while (x->slot[j].id1)
            j = (j + 1) & (cap - 1);
        x->slot[j] = old[i];
    }
    free(old);
}

void cg_index_reserve(cg_index *x, size_t n)
{
    size_t cap = table_cap(x->cap, n);
    if (cap > x->cap)
        index_rehash(x, cap);
}

/* The slot of key (its own or the empty one it would take). */
static size_t index_slot(const cg_index *x, const char *key, size_t len, uint32_t tag)
{
    size_t mask = x->cap - 1;
    for (size_t i = tag & mask;; i = (i + 1) & mask) {
        const cg_index_slot *s = &x->slot[i];
        if (!s->id1)
            return i;
        if (s->tag == tag) {
            const char *k = x->key_of(x->ctx, s->id1 - 1);
            if (strncmp(k, key, len) == 0 && k[len] == '\0')
                return i;
        }
    }
}

uint32_t cg_index_get(const cg_index *x, const char *key, size_t len)
{
    if (!x->cap)
        return 0;
    return x->slot[index_slot(x, key, len, (uint32_t)cg_hash(key, len))].id1;
}

uint32_t cg_index_add(cg_index *x, uint32_t id)
{
    if ((x->len + 1) * 2 > x->cap)
        index_rehash(x, x->cap ? x->cap * 2 : 16);
    const char *key = x->key_of(x->ctx, id);
    size_t len = strlen(key);
    uint32_t tag = (uint32_t)cg_hash(key, len);
    cg_index_slot *s = &x->slot[index_slot(x, key, len, tag)];
    if (s->id1)
        return s->id1;
    *s = (cg_index_slot){tag, id + 1};
    x->len++;
    return 0;
}

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
        size_t cap = n > 65536 ? n : 65536;
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
    char *d = cg_pool_alloc(p, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
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
    char *d = cg_arena_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}
