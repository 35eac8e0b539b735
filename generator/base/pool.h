/* pool — two region allocators: memory is handed out in pieces and freed
 * all at once by the owner of the region, never piece by piece.
 *
 * cg_pool: strings (and other data) that live as long as the pool, with
 * interning.  cg_arena: short-lived data (one cell's values) reused after
 * cg_arena_reset.  Every pointer either returns is owned by the pool or
 * arena: never free() it, and do not use it after *_release (nor, for an
 * arena, after cg_arena_reset).
 */
#ifndef CIGEN_POOL_H
#define CIGEN_POOL_H

#include <stddef.h>

#include "base/map.h"

/* A string pool: interned copies that live until the pool is released. */
typedef struct cg_pool_block cg_pool_block;
typedef struct cg_pool {
    cg_pool_block *blocks;
    cg_map index;
} cg_pool;

void cg_pool_init(cg_pool *p);
/* Frees every block: all pointers the pool returned become invalid. */
void cg_pool_release(cg_pool *p);
/* Returns the pooled copy of s (the same pointer for equal strings). */
const char *cg_intern(cg_pool *p, const char *s);
const char *cg_internn(cg_pool *p, const char *s, size_t n);
/* Copies bytes into the pool without interning (not deduplicated). */
char *cg_pool_strndup(cg_pool *p, const char *s, size_t n);
/* n bytes, 16-byte aligned, uninitialised. */
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
/* Frees every block. */
void cg_arena_release(cg_arena *a);
/* Keeps the blocks, but every pointer handed out so far is reused. */
void cg_arena_reset(cg_arena *a);
/* n bytes, 16-byte aligned, uninitialised. */
void *cg_arena_alloc(cg_arena *a, size_t n);
char *cg_arena_strndup(cg_arena *a, const char *s, size_t n);

#endif
