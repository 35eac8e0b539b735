/* map — two open-addressing hash tables keyed by strings: cg_map (string
 * → pointer) and cg_index (name → entry of an array that holds the names).
 *
 * Neither copies or frees keys or values: they are borrowed and must
 * outlive the table (keep keys in a cg_pool).  A table owns only its slot
 * array, freed by *_release.
 */
#ifndef CIGEN_MAP_H
#define CIGEN_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An open-addressing map from NUL-terminated string keys to `void *`.
 * Keys are not copied: they must outlive the map (use a cg_pool). */
typedef struct cg_map_slot {
    uint64_t hash;     /* of the key: compared before the bytes, kept for rehashing */
    const char *key;   /* NULL: an empty slot */
    void *val;
} cg_map_slot;

typedef struct cg_map {
    cg_map_slot *slots;  /* one array: a probe touches one cache line */
    size_t cap, len;
} cg_map;

void cg_map_init(cg_map *m);
/* Frees the slots only: keys and values belong to the caller. */
void cg_map_release(cg_map *m);
void *cg_map_get(const cg_map *m, const char *key);
/* The same for key[0..len) (need not be NUL-terminated). */
void *cg_map_getn(const cg_map *m, const char *key, size_t len);
bool cg_map_has(const cg_map *m, const char *key);
/* Inserts or replaces; returns the previous value (or NULL), which the
 * caller frees if it owned it.  key is borrowed (not copied). */
void *cg_map_put(cg_map *m, const char *key, void *val);
/* Inserts when the key is absent and returns NULL; else returns the value
 * already there and changes nothing (one lookup for "add unless a duplicate"). */
void *cg_map_put_new(cg_map *m, const char *key, void *val);
/* Makes room for n keys at once: no rehashing on the way there. */
void cg_map_reserve(cg_map *m, size_t n);
/* Iteration in slot order (not a meaningful order): NULL for empty slots. */
static inline const char *cg_map_key_at(const cg_map *m, size_t i) { return m->slots[i].key; }

/* A compact index from names to the entries of an array that holds them
 * (jobs by name): 8 bytes a slot, a 32-bit hash tag checked before the
 * name, which key_of() reads from the array.  For a million names this is
 * a third of a cg_map's memory and cache misses.  The array (ctx) and its
 * names are borrowed: they must outlive the index. */
typedef const char *(*cg_index_key_fn)(const void *ctx, uint32_t id);
typedef struct cg_index_slot {
    uint32_t tag;   /* the low 32 bits of the name's hash */
    uint32_t id1;   /* entry + 1; 0: empty */
} cg_index_slot;
typedef struct cg_index {
    cg_index_slot *slot;
    size_t cap, len;
    cg_index_key_fn key_of;
    const void *ctx;
} cg_index;

void cg_index_init(cg_index *x, cg_index_key_fn key_of, const void *ctx);
/* Frees the slots only. */
void cg_index_release(cg_index *x);
void cg_index_reserve(cg_index *x, size_t n);
/* The entry named key[0..len), + 1; 0 when there is none. */
uint32_t cg_index_get(const cg_index *x, const char *key, size_t len);
/* Adds entry `id` under its name unless the name is taken: returns 0, or
 * the entry that has it + 1. */
uint32_t cg_index_add(cg_index *x, uint32_t id);
/* Looking a name up and adding it when it is missing, hashed and probed
 * once: cg_index_find_hashed gives the entry named key[0..len) (its
 * cg_index_hash given) + 1, 0 when there is none, and where it would go
 * (room made for it); cg_index_put_at then adds entry `id`, whose name
 * key_of() must give, there.  Nothing may be added in between.  A large
 * index is a cache miss a lookup: a reader that knows a name before it
 * can look it up (it has more to read first) hashes it and asks the
 * processor to fetch its slot meanwhile (cg_index_prefetch). */
typedef struct cg_index_pos {
    size_t slot;
    uint32_t tag;
} cg_index_pos;
uint32_t cg_index_hash(const char *key, size_t len);
void cg_index_prefetch(const cg_index *x, uint32_t hash);
uint32_t cg_index_find_hashed(cg_index *x, const char *key, size_t len, uint32_t hash, cg_index_pos *at);
void cg_index_put_at(cg_index *x, const cg_index_pos *at, uint32_t id);

#endif
