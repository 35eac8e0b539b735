/* alloc — allocation that cannot fail: on out of memory cigen prints one
 * line and exits 2 (cg_die_oom), so callers never check for NULL.
 *
 * Every pointer returned here is owned by the caller and freed with free().
 */
#ifndef CIGEN_ALLOC_H
#define CIGEN_ALLOC_H

#include <stddef.h>

#define CG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

_Noreturn void cg_die_oom(void);
/* malloc/calloc/realloc that never return NULL (a zero size allocates one
 * byte).  The caller owns the result and frees it with free(). */
void *cg_xmalloc(size_t n);
void *cg_xcalloc(size_t n, size_t size);
/* Once, at the start: blocks of 1 MiB and more each mapped on their own
 * and unmapped when freed, up to 8 MiB free kept at a heap's top (glibc's
 * M_MMAP_THRESHOLD and M_TRIM_THRESHOLD, fixed; elsewhere nothing).  glibc
 * otherwise raises the first to the largest block freed, and the large
 * blocks a thread frees after that stay in its arena: a drifted check at
 * 100k jobs peaked at 122 MB instead of 111. */
void cg_alloc_init(void);
/* Takes over p (which may be NULL): the caller owns the result instead. */
void *cg_xrealloc(void *p, size_t n);
/* Grows *p (an array of `size`-byte items with capacity *cap, owned by the
 * caller) to hold `need`. */
void cg_grow(void *p, size_t *cap, size_t need, size_t size);
/* A malloc'd copy of s (of s[0..n), NUL-terminated); the caller frees it. */
char *cg_xstrdup(const char *s);
char *cg_xstrndup(const char *s, size_t n);
/* Copies s[0..n) into dst, which holds n + 1 bytes, and terminates it;
 * returns dst.  The one body of every *_strndup (heap, pool, arena). */
char *cg_strcopy(char *dst, const char *s, size_t n);

#endif
