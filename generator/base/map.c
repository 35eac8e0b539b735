#include "base/map.h"

#include "base/alloc.h"
#include "base/hash.h"

#include <stdlib.h>
#include <string.h>

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

uint32_t cg_index_hash(const char *key, size_t len)
{
    return (uint32_t)cg_hash(key, len);
}

void cg_index_prefetch(const cg_index *x, uint32_t hash)
{
#if defined(__GNUC__) || defined(__clang__)
    if (x->cap)
        __builtin_prefetch(&x->slot[hash & (x->cap - 1)]);
#else
    (void)x, (void)hash;
#endif
}

uint32_t cg_index_find_hashed(cg_index *x, const char *key, size_t len, uint32_t hash, cg_index_pos *at)
{
    if ((x->len + 1) * 2 > x->cap)
        index_rehash(x, x->cap ? x->cap * 2 : 16);
    at->tag = hash;
    at->slot = index_slot(x, key, len, at->tag);
    return x->slot[at->slot].id1;
}


void cg_index_put_at(cg_index *x, const cg_index_pos *at, uint32_t id)
{
    x->slot[at->slot] = (cg_index_slot){at->tag, id + 1};
    x->len++;
}
