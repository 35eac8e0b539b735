#include "base/alloc.h"

#include <malloc.h> /* mallopt() */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cg_alloc_init(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    (void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* fixing one fixes both: the trim threshold would stay at 128 KiB, and
     * every heap would be given back and faulted in again as it breathes */
    (void)mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

static void *block(size_t n)
{
    return malloc(n ? n : 1);
}

_Noreturn void cg_die_oom(void)
{
    fputs("cigen: error: out of memory\n", stderr); /* layers: allowed (the one message of a dying process) */
    exit(2);
}

void *cg_xmalloc(size_t n)
{
    void *p = block(n);
    if (!p)
        cg_die_oom();
    return p;
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
        void *p = block(n * size);
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

char *cg_strcopy(char *dst, const char *s, size_t n)
{
    memcpy(dst, s, n);
    dst[n] = '\0';
    return dst;
}

char *cg_xstrdup(const char *s)
{
    return cg_xstrndup(s, strlen(s));
}

char *cg_xstrndup(const char *s, size_t n)
{
    return cg_strcopy(cg_xmalloc(n + 1), s, n);
}
