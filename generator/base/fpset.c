/* fpset — a set of 64-bit hashes kept compact (base/fpset.h).
 *
 * A run holds RUN_N sorted fingerprints as Elias-Fano does: the low
 * LOW_BITS bits of each, in order; the high RUN_LOG bits as a bit vector
 * where the i-th fingerprint is a one at (its high bits + i). */
#include "base/fpset.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#define RUN_LOG CG_FPSET_RUN_LOG
#define RUN_N ((size_t)1 << RUN_LOG)
#define LOW_BITS (CG_FPSET_BITS - RUN_LOG)

_Static_assert(LOW_BITS == 32, "the low bits of a fingerprint are a uint32_t");

struct cg_fpset_run {
    uint32_t *low;             /* [n] */
    uint64_t *high;            /* [(n + RUN_N + 63) / 64] */
    size_t n;
};

void cg_fpset_init(cg_fpset *s)
{
    memset(s, 0, sizeof *s);
}

void cg_fpset_release(cg_fpset *s)
{
    for (size_t i = 0; i < s->nruns; i++) {
        free(s->runs[i].low);
        free(s->runs[i].high);
    }
    free(s->runs);
    free(s->buf);
    cg_fpset_init(s);
}

/* Sorts in place (qsort's merge sort would take as much memory again). */
static void sift(uint64_t *v, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (v[i] >= v[c])
            return;
        uint64_t x = v[i];
        v[i] = v[c];
        v[c] = x;
        i = c;
    }
}

static void heap_sort(uint64_t *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(v, i, n);
    for (size_t end = n; end > 1; end--) {
        uint64_t x = v[0];
        v[0] = v[end - 1];
        v[end - 1] = x;
        sift(v, 0, end - 1);
    }
}

/* The full buffer, sorted, becomes a run. */
static void flush(cg_fpset *s)
{
    heap_sort(s->buf, s->nbuf);
    cg_grow(&s->runs, &s->cap, s->nruns + 1, sizeof *s->runs);
    cg_fpset_run *r = &s->runs[s->nruns++];
    r->n = s->nbuf;
    r->low = cg_xmalloc(r->n * sizeof *r->low);
    r->high = cg_xcalloc((r->n + RUN_N + 63) / 64, sizeof *r->high);
    for (size_t i = 0; i < r->n; i++) {
        uint64_t f = s->buf[i];
        r->low[i] = (uint32_t)f;
        size_t at = (size_t)(f >> LOW_BITS) + i;
        r->high[at / 64] |= (uint64_t)1 << (at % 64);
    }
    s->nbuf = 0;
}

uint64_t cg_fpset_key(uint64_t h)
{
    return h >> (64 - CG_FPSET_BITS);
}

void cg_fpset_add(cg_fpset *s, uint64_t h)
{
    if (!s->buf)
        s->buf = cg_xmalloc(RUN_N * sizeof *s->buf);
    s->buf[s->nbuf++] = cg_fpset_key(h);
    if (s->nbuf == RUN_N)
        flush(s);
}

/* A run read in order (or the sorted buffer: run NULL). */
typedef struct cursor {
    const cg_fpset_run *run;
    const uint64_t *sorted;
    size_t i, n, pos;
    uint64_t cur;
} cursor;

/* Moves to the next fingerprint; false at the end. */
static bool next(cursor *c)
{
    if (c->i == c->n)
        return false;
    if (!c->run) {
        c->cur = c->sorted[c->i++];
        return true;
    }
    const uint64_t *w = c->run->high;
    while (!(w[c->pos / 64] >> (c->pos % 64)))
        c->pos = (c->pos / 64 + 1) * 64; /* no one left in this word */
    while (!((w[c->pos / 64] >> (c->pos % 64)) & 1))
        c->pos++;
    c->cur = (uint64_t)(c->pos - c->i) << LOW_BITS | c->run->low[c->i];
    c->i++;
    c->pos++;
    return true;
}

/* A min-heap of cursors by their fingerprint. */
static void sift_down(cursor **h, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && h[c + 1]->cur < h[c]->cur)
            c++;
        if (h[i]->cur <= h[c]->cur)
            return;
        cursor *x = h[i];
        h[i] = h[c];
        h[c] = x;
        i = c;
    }
}

size_t cg_fpset_twins(cg_fpset *s, uint64_t *out, size_t max)
{
    heap_sort(s->buf, s->nbuf);
    size_t n = s->nruns + 1;
    cursor *cs = cg_xcalloc(n, sizeof *cs);
    cursor **heap = cg_xcalloc(n, sizeof *heap);
    size_t nh = 0;
    for (size_t i = 0; i < n; i++) {
        cursor *c = &cs[i];
        if (i < s->nruns)
            c->run = &s->runs[i], c->n = s->runs[i].n;
        else
            c->sorted = s->buf, c->n = s->nbuf;
        if (next(c))
            heap[nh++] = c;
    }
    for (size_t i = nh / 2; i-- > 0;)
        sift_down(heap, i, nh);
    size_t ntwins = 0, count = 0; /* count: of the fingerprint `last` so far */
    uint64_t last = 0;
    while (nh && ntwins <= max) {
        cursor *c = heap[0];
        if (count && c->cur == last) {
            if (++count == 2 && ntwins++ < max)
                out[ntwins - 1] = last;
        } else {
            last = c->cur;
            count = 1;
        }
        if (!next(c))
            heap[0] = heap[--nh];
        sift_down(heap, 0, nh);
    }
    free(cs);
    free(heap);
    return ntwins;
}
