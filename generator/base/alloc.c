#define _DEFAULT_SOURCE /* madvise() */
#include "base/alloc.h"

#include <malloc.h> /* malloc_usable_size() */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* With cg_alloc_huge_blocks(true), large blocks (the jobs, their index, a
 * diagram's tables: megabytes each at 100k jobs) are backed by huge pages
 * where the kernel offers them on request (transparent huge pages in
 * `madvise` mode): one fault maps 2 MiB instead of 512 faults mapping 4 KiB
 * each, and on a virtual machine a fault costs several microseconds.  A
 * hint: no error is possible that matters, and the bytes are the same
 * either way.  The price is memory (a huge page is mapped whole on its
 * first write, and a doubled array is copied, not moved): generate pays it
 * (its peak is under its output's size), the others keep small pages. */
enum {
    HUGE_PAGE = 2 << 20,
    /* from 4 MiB: a huge page is mapped whole on its first write, and
     * blocks of 2 to 4 MiB (the arrays of a 10k-job project) would grow
     * its peak RSS by a third */
    HUGE_FROM = 4 << 20
};

static bool huge_blocks; /* cg_alloc_huge_blocks() */


void cg_alloc_huge_blocks(bool on)
{
    huge_blocks = on;
}

void cg_alloc_init(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    (void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* fixing one fixes both: the trim threshold would stay at 128 KiB, and
     * every heap would be given back and faulted in again as it breathes */
    (void)mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

/* A block of n bytes at a huge page's boundary (a huge page only maps an
 * aligned 2 MiB, and a block where malloc puts it holds one fewer: a block
 * of 4 MiB often only one), its whole huge pages marked for them (the tail
 * stays on small pages: no 2 MiB held for a few bytes); NULL when there is
 * no memory.  Advice: where it is refused, small pages. */
static void *huge_block(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, n) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n & ~(size_t)(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

/* A block of n bytes: on huge pages when generate asked and it is large. */
static void *block(size_t n)
{
    if (huge_blocks && n >= HUGE_FROM)
        return huge_block(n);
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
#ifdef MADV_HUGEPAGE
    /* grown by half or more (an array doubled): into a new block, on huge
     * pages (one that realloc() moves stays on small pages); an array that
     * grows an item at a time is left to realloc(), which seldom copies */
    size_t old = p ? malloc_usable_size(p) : 0;
    if (huge_blocks && n >= HUGE_FROM && old + old / 2 <= n) {
        void *q = cg_xmalloc(n);
        if (p) {
            memcpy(q, p, old);
            free(p);
        }
        return q;
    }
#endif
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
