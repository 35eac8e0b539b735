#include "diff.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_EDITS 4000

typedef struct line {
    const char *s;
    size_t n;      /* without the newline */
    uint64_t h;
    bool nl;       /* ends with a newline (only the last line may not) */
} line;

static line *split(const char *t, size_t len, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += t[i] == '\n';
    if (len && t[len - 1] != '\n')
        n++;
    line *v = cg_xmalloc((n + 1) * sizeof *v);
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len ? i > start : t[i] == '\n') {
            v[k].s = t + start;
            v[k].n = i - start;
            v[k].h = cg_hash(v[k].s, v[k].n);
            v[k].nl = i < len;
            k++;
            start = i + 1;
        }
    }
    *count = k;
    return v;
}

static int eq(const line *a, const line *b)
{
    return a->h == b->h && a->n == b->n && a->nl == b->nl && memcmp(a->s, b->s, a->n) == 0;
}

static void add_hunk(cg_diff *d, size_t as, size_t al, size_t bs, size_t bl)
{
    if (!al && !bl)
        return;
    if (d->n) {
        cg_hunk *last = &d->hunks[d->n - 1];
        if (last->a_start + last->a_len == as && last->b_start + last->b_len == bs) {
            last->a_len += al;
            last->b_len += bl;
            d->removed += al;
            d->added += bl;
            return;
        }
    }
    cg_grow(&d->hunks, &d->cap, d->n + 1, sizeof *d->hunks);
    d->hunks[d->n++] = (cg_hunk){as, al, bs, bl};
    d->removed += al;
    d->added += bl;
}

/* Myers with a saved V per step, for backtracking. Returns 0, or -1 when
 * the distance exceeds MAX_EDITS. */
static int myers(const line *a, size_t n, const line *b, size_t m, size_t a0, size_t b0, cg_diff *d)
{
    size_t max = n + m;
    if (max == 0)
        return 0;
    size_t dmax = max < MAX_EDITS ? max : MAX_EDITS;
    size_t off = dmax + 1;
    size_t width = 2 * dmax + 3;
    long *v = cg_xcalloc(width, sizeof *v);
    long **trace = cg_xcalloc(dmax + 2, sizeof *trace);
    long found = -1;
    for (size_t e = 0; e <= dmax && found < 0; e++) {
        trace[e] = cg_xmalloc(width * sizeof *v);
        memcpy(trace[e], v, width * sizeof *v);
        long de = (long)e;
        for (long k = -de; k <= de; k += 2) {
            long x;
            if (k == -de || (k != de && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1];
            else
                x = v[off + k - 1] + 1;
            long y = x - k;
            while ((size_t)x < n && y >= 0 && (size_t)y < m && eq(&a[x], &b[y]))
                x++, y++;
            v[off + k] = x;
            if ((size_t)x >= n && y >= 0 && (size_t)y >= m) {
                found = de;
                break;
            }
        }
    }
    int rc = 0;
    if (found < 0) {
        rc = -1;
    } else {
        /* walk back, collecting edits from the end */
        size_t cap = (size_t)found + 1, ne = 0;
        struct edit { long x, y; char op; } *edits = cg_xmalloc((cap + 1) * sizeof *edits);
        long x = (long)n, y = (long)m;
        for (long e = found; e > 0; e--) {
            long *pv = trace[e];
            long k = x - y, pk;
            if (k == -e || (k != e && pv[off + k - 1] < pv[off + k + 1]))
                pk = k + 1;
            else
                pk = k - 1;
            long px = pv[off + pk], py = px - pk;
            while (x > px && y > py)
                x--, y--;
            if (pk == k + 1)
                edits[ne++] = (struct edit){px, py, '+'}; /* b[py] inserted */
            else
                edits[ne++] = (struct edit){px, py, '-'}; /* a[px] deleted */
            x = px;
            y = py;
        }
        for (size_t i = ne; i-- > 0;) {
            if (edits[i].op == '-')
                add_hunk(d, a0 + (size_t)edits[i].x, 1, b0 + (size_t)edits[i].y, 0);
            else
                add_hunk(d, a0 + (size_t)edits[i].x, 0, b0 + (size_t)edits[i].y, 1);
        }
        free(edits);
    }
    for (size_t e = 0; e <= dmax + 1; e++)
        free(trace[e]);
    free(trace);
    free(v);
    return rc;
}

void cg_diff_compute(const char *a, size_t alen, const char *b, size_t blen, cg_diff *d)
{
    memset(d, 0, sizeof *d);
    size_t na, nb;
    line *la = split(a, alen, &na), *lb = split(b, blen, &nb);
    d->a_lines = na;
    d->b_lines = nb;
    size_t pre = 0;
    while (pre < na && pre < nb && eq(&la[pre], &lb[pre]))
        pre++;
    size_t suf = 0;
    while (suf < na - pre && suf < nb - pre && eq(&la[na - 1 - suf], &lb[nb - 1 - suf]))
        suf++;
    size_t n = na - pre - suf, m = nb - pre - suf;
    if (myers(la + pre, n, lb + pre, m, pre, pre, d) != 0) {
        d->n = 0;
        d->removed = d->added = 0;
        add_hunk(d, pre, n, pre, m);
    }
    free(la);
    free(lb);
}

void cg_diff_release(cg_diff *d)
{
    free(d->hunks);
    memset(d, 0, sizeof *d);
}

/* A diff line; control bytes are shown escaped ("\x00"), so a report
 * prints whole whatever the file holds. */
static void emit_line(cg_strbuf *out, char tag, const line *l)
{
    cg_strbuf_addc(out, tag);
    size_t start = 0;
    for (size_t i = 0; i < l->n; i++) {
        unsigned char c = (unsigned char)l->s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7F) {
            cg_strbuf_add(out, l->s + start, i - start);
            cg_strbuf_addf(out, "\\x%02X", c);
            start = i + 1;
        }
    }
    cg_strbuf_add(out, l->s + start, l->n - start);
    cg_strbuf_addc(out, '\n');
    if (!l->nl)
        cg_strbuf_adds(out, "\\ No newline at end of file\n");
}

void cg_diff_unified(const cg_diff *d, const char *a, size_t alen, const char *b, size_t blen,
                     const char *a_name, const char *b_name, unsigned context, size_t max_lines,
                     cg_strbuf *out)
{
    if (d->n == 0)
        return;
    size_t na, nb;
    line *la = split(a, alen, &na), *lb = split(b, blen, &nb);
    cg_strbuf_addf(out, "--- %s\n+++ %s\n", a_name, b_name);
    size_t written = 0, total = d->added + d->removed;
    size_t shown = 0;
    bool cut = false;
    for (size_t i = 0; i < d->n && !cut;) {
        /* group hunks whose context overlaps */
        size_t j = i;
        while (j + 1 < d->n && d->hunks[j + 1].a_start <= d->hunks[j].a_start + d->hunks[j].a_len + 2 * context)
            j++;
        const cg_hunk *h0 = &d->hunks[i], *h1 = &d->hunks[j];
        size_t as = h0->a_start > context ? h0->a_start - context : 0;
        size_t bs = h0->b_start > context ? h0->b_start - context : 0;
        size_t ae = h1->a_start + h1->a_len + context;
        if (ae > na)
            ae = na;
        size_t be = h1->b_start + h1->b_len + context;
        if (be > nb)
            be = nb;
        cg_strbuf_addf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ae > as ? as + 1 : as, ae - as,
                       be > bs ? bs + 1 : bs, be - bs);
        size_t x = as, y = bs;
        for (size_t k = i; k <= j && !cut; k++) {
            const cg_hunk *h = &d->hunks[k];
            while (x < h->a_start)
                emit_line(out, ' ', &la[x++]), y++;
            for (size_t q = 0; q < h->a_len; q++) {
                emit_line(out, '-', &la[x++]);
                shown++;
            }
            for (size_t q = 0; q < h->b_len; q++) {
                emit_line(out, '+', &lb[y++]);
                shown++;
            }
            written += h->a_len + h->b_len;
            if (max_lines && written >= max_lines && k < d->n - 1)
                cut = true;
        }
        while (!cut && x < ae)
            emit_line(out, ' ', &la[x++]);
        i = j + 1;
    }
    if (cut)
        cg_strbuf_addf(out, "... (%zu more changed lines not shown; use --full-diff)\n", total - shown);
    free(la);
    free(lb);
}
