#include "base/diff.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"

/* Comparison steps before the diff stops looking for the shortest script
 * (about a second of work; a 2,000-line rewrite of a large file fits). */
#define MAX_STEPS 200000000L

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

/* Linear-space Myers: find the middle snake of the shortest edit script,
 * then solve the two halves the same way.  Memory is O(N+M); time is
 * O((N+M)D), bounded by a budget of comparison steps, after which the rest
 * of a region is reported as one replaced block (still correct). */

typedef struct search {
    const line *a, *b;
    long *vf, *vb;     /* furthest x per diagonal, forward and backward */
    long off;          /* index of diagonal 0 in vf, vb */
    long budget;       /* steps left before giving up on minimality */
    cg_diff *d;
} search;

/* The middle snake of a[0..n) against b[0..m) (both non-empty, first and
 * last lines differing): from (x,y) to (u,v).  Returns false when the budget
 * runs out. */
static bool middle_snake(search *S, const line *a, long n, const line *b, long m, long *x0, long *y0, long *u0,
                         long *v0)
{
    long delta = n - m, off = S->off;
    bool odd = delta & 1;
    long *vf = S->vf, *vb = S->vb;
    vf[off + 1] = 0;
    vb[off + 1] = 0;
    for (long d = 0; d <= (n + m + 1) / 2; d++) {
        if ((S->budget -= 2 * d + 1) < 0)
            return false;
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && vf[off + k - 1] < vf[off + k + 1])) ? vf[off + k + 1]
                                                                               : vf[off + k - 1] + 1;
            long y = x - k, sx = x, sy = y;
            while (x < n && y < m && eq(&a[x], &b[y]))
                x++, y++;
            S->budget -= x - sx;
            vf[off + k] = x;
            long c = delta - k; /* the same diagonal, seen from the end */
            if (odd && c >= -(d - 1) && c <= d - 1 && vf[off + k] + vb[off + c] >= n) {
                *x0 = sx, *y0 = sy, *u0 = x, *v0 = y;
                return true;
            }
        }
        for (long c = -d; c <= d; c += 2) {
            long x = (c == -d || (c != d && vb[off + c - 1] < vb[off + c + 1])) ? vb[off + c + 1]
                                                                               : vb[off + c - 1] + 1;
            long y = x - c, sx = x, sy = y;
            while (x < n && y < m && eq(&a[n - 1 - x], &b[m - 1 - y]))
                x++, y++;
            S->budget -= x - sx;
            vb[off + c] = x;
            long k = delta - c;
            if (!odd && k >= -d && k <= d && vb[off + c] + vf[off + k] >= n) {
                *x0 = n - x, *y0 = m - y, *u0 = n - sx, *v0 = m - sy;
                return true;
            }
        }
    }
    return false;
}

static void solve(search *S, size_t a0, size_t n, size_t b0, size_t m)
{
    const line *a = S->a, *b = S->b;
    while (n && m && eq(&a[a0], &b[b0]))
        a0++, b0++, n--, m--;
    while (n && m && eq(&a[a0 + n - 1], &b[b0 + m - 1]))
        n--, m--;
    if (!n || !m) {
        add_hunk(S->d, a0, n, b0, m);
        return;
    }
    long x, y, u, v;
    if (!middle_snake(S, a + a0, (long)n, b + b0, (long)m, &x, &y, &u, &v)) {
        add_hunk(S->d, a0, n, b0, m); /* over budget: one replaced block */
        return;
    }
    solve(S, a0, (size_t)x, b0, (size_t)y);
    solve(S, a0 + (size_t)u, n - (size_t)u, b0 + (size_t)v, m - (size_t)v);
}

static size_t indent_of(const line *l)
{
    size_t i = 0;
    while (i < l->n && l->s[i] == ' ')
        i++;
    return i == l->n ? SIZE_MAX : i; /* a blank line starts nothing */
}

/* A block of only added (or only removed) lines that repeats the lines
 * around it can be shown at several places.  Show it where its first line
 * is least indented (the latest such place): a YAML entry is then added
 * whole, "- build:" first, as people and git's indent heuristic write it. */
static void place_block(size_t *start, size_t len, size_t *other, size_t lo, size_t hi, size_t olo, size_t ohi,
                        const line *v)
{
    /* the other side moves with it and must stay between the neighbours */
    if (*start - lo > *other - olo)
        lo = *start - (*other - olo);
    if (hi - (*start + len) > ohi - *other)
        hi = *start + len + (ohi - *other);
    while (*start > lo && eq(&v[*start - 1], &v[*start + len - 1]))
        (*start)--, (*other)--;
    size_t best = *start, best_other = *other, best_indent = indent_of(&v[*start]);
    while (*start + len < hi && eq(&v[*start], &v[*start + len])) {
        (*start)++, (*other)++;
        size_t in = indent_of(&v[*start]);
        if (in <= best_indent)
            best = *start, best_other = *other, best_indent = in;
    }
    *start = best;
    *other = best_other;
}

static void place_blocks(cg_diff *d, const line *la, size_t na, const line *lb, size_t nb)
{
    for (size_t i = 0; i < d->n; i++) {
        cg_hunk *h = &d->hunks[i];
        const cg_hunk *prev = i ? &d->hunks[i - 1] : NULL, *next = i + 1 < d->n ? &d->hunks[i + 1] : NULL;
        size_t alo = prev ? prev->a_start + prev->a_len : 0, ahi = next ? next->a_start : na;
        size_t blo = prev ? prev->b_start + prev->b_len : 0, bhi = next ? next->b_start : nb;
        if (h->a_len == 0 && h->b_len)
            place_block(&h->b_start, h->b_len, &h->a_start, blo, bhi, alo, ahi, lb);
        else if (h->b_len == 0 && h->a_len)
            place_block(&h->a_start, h->a_len, &h->b_start, alo, ahi, blo, bhi, la);
    }
    /* blocks that now touch are one hunk */
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (k && d->hunks[k - 1].a_start + d->hunks[k - 1].a_len == d->hunks[i].a_start &&
            d->hunks[k - 1].b_start + d->hunks[k - 1].b_len == d->hunks[i].b_start) {
            d->hunks[k - 1].a_len += d->hunks[i].a_len;
            d->hunks[k - 1].b_len += d->hunks[i].b_len;
        } else {
            d->hunks[k++] = d->hunks[i];
        }
    }
    d->n = k;
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
    long half = (long)((n + m + 1) / 2) + 2;
    search S = {la, lb, cg_xcalloc(2 * (size_t)half + 3, sizeof *S.vf),
                cg_xcalloc(2 * (size_t)half + 3, sizeof *S.vb), half + 1, MAX_STEPS, d};
    solve(&S, pre, n, pre, m);
    place_blocks(d, la, na, lb, nb);
    free(S.vf);
    free(S.vb);
    free(la);
    free(lb);
}

void cg_diff_release(cg_diff *d)
{
    free(d->hunks);
    memset(d, 0, sizeof *d);
}

/* A diff line, escaped as every message is (base/diag.h, cg_escape_line):
 * control characters, escape sequences (C1 included), line breaks and bytes
 * that are not UTF-8 are written \x1b, \u009b, \xff, so a committed file
 * can neither drive the terminal nor make the report invalid UTF-8 (check
 * --json carries the same text).  `width` (0: none) cuts a longer line,
 * saying how many bytes were left out. */
static void emit_line(cg_strbuf *out, char tag, const line *l, size_t width)
{
    cg_strbuf_addc(out, tag);
    size_t n = l->n;
    if (width && n > width) {
        /* never cut inside a UTF-8 sequence */
        n = width;
        while (n > 0 && ((unsigned char)l->s[n] & 0xC0) == 0x80 && width - n < 4)
            n--;
    }
    cg_escape_line(out, l->s, n);
    if (n < l->n)
        cg_strbuf_addf(out, " ... (%zu more bytes of this line not shown; use --full-diff)", l->n - n);
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
    size_t width = max_lines ? CG_DIFF_MAX_WIDTH : 0;
    cg_strbuf_addf(out, "--- %s\n+++ %s\n", a_name, b_name);
    size_t total = d->added + d->removed;
    size_t shown = 0;
    bool cut = false;
    cg_strbuf body = CG_STRBUF_INIT;
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
        /* the group's lines go to `body` first: a group cut short gets a
         * header that counts the lines it shows */
        cg_strbuf_reset(&body);
        size_t x = as, y = bs;
        for (size_t k = i; k <= j && !cut; k++) {
            const cg_hunk *h = &d->hunks[k];
            while (x < h->a_start)
                emit_line(&body, ' ', &la[x++], width), y++;
            for (size_t q = 0; q < h->a_len && !cut; q++) {
                emit_line(&body, '-', &la[x++], width);
                cut = max_lines && ++shown >= max_lines && shown < total;
            }
            for (size_t q = 0; q < h->b_len && !cut; q++) {
                emit_line(&body, '+', &lb[y++], width);
                cut = max_lines && ++shown >= max_lines && shown < total;
            }
        }
        while (!cut && x < ae)
            emit_line(&body, ' ', &la[x++], width), y++;
        cg_strbuf_addf(out, "@@ -%zu,%zu +%zu,%zu @@\n", x > as ? as + 1 : as, x - as, y > bs ? bs + 1 : bs, y - bs);
        cg_strbuf_add(out, body.buf, body.len);
        i = j + 1;
    }
    if (cut)
        cg_strbuf_addf(out, "... (%zu more changed lines not shown; use --full-diff)\n", total - shown);
    cg_strbuf_release(&body);
    free(la);
    free(lb);
}
