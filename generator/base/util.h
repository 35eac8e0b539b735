/* util — allocation, ASCII classification, hashing, interning, suggestions.
 *
 * Character classes are ASCII-only on purpose: <ctype.h> depends on the
 * locale, and cigen's output must not.
 */
#ifndef CIGEN_UTIL_H
#define CIGEN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

_Noreturn void cg_die_oom(void);
/* False when CIGEN_TEST_NO_THREADS is set: the tests take the path cigen
 * follows when it cannot start a thread (the same work, on one thread). */
bool cg_threads_allowed(void);
void *cg_xmalloc(size_t n);
void *cg_xcalloc(size_t n, size_t size);
void *cg_xrealloc(void *p, size_t n);
/* Grows *p (an array of `size`-byte items with capacity *cap) to hold `need`. */
void cg_grow(void *p, size_t *cap, size_t need, size_t size);
char *cg_xstrdup(const char *s);
char *cg_xstrndup(const char *s, size_t n);

static inline bool cg_isdigit(int c) { return c >= '0' && c <= '9'; }
static inline bool cg_isalpha(int c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
static inline bool cg_isalnum(int c) { return cg_isdigit(c) || cg_isalpha(c); }
static inline bool cg_isxdigit(int c) { return cg_isdigit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f'); }
static inline bool cg_isspace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
/* Characters allowed in a dimension, variable or phase name. */
static inline bool cg_isnamechar(int c) { return cg_isalnum(c) || c == '_' || c == '-'; }

bool cg_streq(const char *a, const char *b);
bool cg_starts_with(const char *s, const char *prefix);
bool cg_is_name(const char *s);
/* The first character of s that a one-line comment cannot hold (a control
 * character, or a line break to YAML: CR, LF, NEL, U+2028, U+2029), and its
 * length in bytes (len may be NULL); NULL when there is none.  Tab is
 * allowed. */
const char *cg_line_breaker(const char *s, size_t *len);

/* A 64-bit hash, eight bytes at a time; stable across machines, used for
 * hash tables only. */
uint64_t cg_hash(const void *data, size_t len);
/* The number of '\n' bytes in s[0..n) (eight at a time). */
size_t cg_count_newlines(const char *s, size_t n);

/* Edit distance with an early cut-off: returns > max when farther. */
size_t cg_edit_distance(const char *a, const char *b, size_t max);
/* The candidate closest to `word` when it is a plausible typo, else NULL. */
const char *cg_suggest(const char *word, const char *const *candidates, size_t n);

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
void cg_map_release(cg_map *m);
void *cg_map_get(const cg_map *m, const char *key);
/* The same for key[0..len) (need not be NUL-terminated). */
void *cg_map_getn(const cg_map *m, const char *key, size_t len);
bool cg_map_has(const cg_map *m, const char *key);
/* Inserts or replaces; returns the previous value (or NULL). */
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
 * a third of a cg_map's memory and cache misses. */
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
void cg_index_release(cg_index *x);
void cg_index_reserve(cg_index *x, size_t n);
/* The entry named key[0..len), + 1; 0 when there is none. */
uint32_t cg_index_get(const cg_index *x, const char *key, size_t len);
/* Adds entry `id` under its name unless the name is taken: returns 0, or
 * the entry that has it + 1. */
uint32_t cg_index_add(cg_index *x, uint32_t id);

/* A string pool: interned copies that live until the pool is released. */
typedef struct cg_pool_block cg_pool_block;
typedef struct cg_pool {
    cg_pool_block *blocks;
    cg_map index;
} cg_pool;

void cg_pool_init(cg_pool *p);
void cg_pool_release(cg_pool *p);
/* Returns the pooled copy of s (the same pointer for equal strings). */
const char *cg_intern(cg_pool *p, const char *s);
const char *cg_internn(cg_pool *p, const char *s, size_t n);
/* Copies bytes into the pool without interning (not deduplicated). */
char *cg_pool_strndup(cg_pool *p, const char *s, size_t n);
void *cg_pool_alloc(cg_pool *p, size_t n);

/* A bump allocator for short-lived data (one cell's values): reset keeps the
 * memory for reuse. */
typedef struct cg_arena {
    char **blocks;
    size_t nblocks, cap_blocks;
    size_t block;   /* index of the block in use */
    size_t used;    /* bytes used in it */
    size_t *sizes;
} cg_arena;

void cg_arena_init(cg_arena *a);
void cg_arena_release(cg_arena *a);
void cg_arena_reset(cg_arena *a);
void *cg_arena_alloc(cg_arena *a, size_t n);
char *cg_arena_strndup(cg_arena *a, const char *s, size_t n);

#endif
