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

/* Lines (both sides) above which a region is searched a window at a time
 * (about 8 MB of config). */
#define LARGE_REGION 200000

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

static size_t count_lines(const char *t, size_t len)
{
    size_t n = 0, i = 0;
#if defined(__GNUC__) || defined(__clang__)
    /* sixteen bytes at a time in vector registers (GCC's and Clang's
     * vector extensions: SSE2 on x86-64, NEON on arm64): each '\n' is all
     * ones in the comparison, counted per byte lane over at most 255 blocks */
    typedef unsigned char v16 __attribute__((vector_size(16)));
    const v16 nl = {'\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n',
                    '\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n'};
    while (i + 16 <= len) {
        v16 acc = {0}; /* (unsigned: 255 wraps nowhere, and -(0xFF) adds 1) */
        size_t blocks = (len - i) / 16 < 255 ? (len - i) / 16 : 255;
        for (size_t b = 0; b < blocks; b++, i += 16) {
            v16 w;
            memcpy(&w, t + i, 16);
            acc -= (v16)(w == nl);
        }
        for (int k = 0; k < 16; k++)
            n += acc[k];
    }
#endif
    /* eight bytes at a time: a byte of w ^ NL8 is zero where t has '\n' */
    const uint64_t NL8 = 0x0A0A0A0A0A0A0A0Aull, LOW7 = 0x7F7F7F7F7F7F7F7Full;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, t + i, 8);
        w ^= NL8;
        /* the high bit of each byte set where the byte is not zero; those
         * bits, moved to the low one and summed into the top byte (no
         * popcount: without -mpopcnt it is a call a word) */
        uint64_t nz = ((w & LOW7) + LOW7) | w;
        n += 8 - (size_t)((((nz & ~LOW7) >> 7) * 0x0101010101010101ull) >> 56);
    }
    for (; i < len; i++)
        n += t[i] == '\n';
    return n + (len && t[len - 1] != '\n');
}

/* The last '\n' of t[0..n), or NULL. */
static const char *last_nl(const char *t, size_t n)
{
    while (n > 0)
        if (t[--n] == '\n')
            return t + n;
    return NULL;
}

/* The offset of the line `back` lines before the one at `at` (a line
 * start), or 0. */
static size_t lines_back(const char *t, size_t at, size_t back)
{
    while (at > 0 && back-- > 0) {
        const char *nl = last_nl(t, at - 1);
        at = nl ? (size_t)(nl - t) + 1 : 0;
    }
    return at;
}

/* The offset `fwd` lines after the line start `at`, or len. */
static size_t lines_fwd(const char *t, size_t len, size_t at, size_t fwd)
{
    while (at < len && fwd-- > 0) {
        const char *nl = memchr(t + at, '\n', len - at);
        at = nl ? (size_t)(nl - t) + 1 : len;
    }
    return at;
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
    bool windowed;     /* a window of solve_windows: searched whole */
    size_t large;      /* lines (both sides) above which a region is windowed */
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

static void solve_windows(search *S, size_t a0, size_t n, size_t b0, size_t m);

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
    if (n + m > S->large && !S->windowed) {
        solve_windows(S, a0, n, b0, m);
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

/* After a window of wn x wm lines at (a0 + *i, b0 + *j) was searched into
 * `part` (released here): when the sides met again inside it (or it reached
 * both ends, `all`), its first change (or all of them) goes into d and the
 * walk moves past it: true.  False: widen the window. */
static bool take_window(cg_diff *part, bool all, size_t a0, size_t b0, size_t n, size_t m, size_t wn, size_t wm,
                        size_t *i, size_t *j, cg_diff *d)
{
    const cg_hunk *h = &part->hunks[0]; /* a[i] and b[j] differ: there is one */
    bool met = h->a_start + h->a_len < a0 + *i + wn && h->b_start + h->b_len < b0 + *j + wm;
    if (met || all) {
        size_t upto = all ? part->n : 1;
        for (size_t k = 0; k < upto; k++)
            add_hunk(d, part->hunks[k].a_start, part->hunks[k].a_len, part->hunks[k].b_start, part->hunks[k].b_len);
        const cg_hunk *last = &part->hunks[upto - 1];
        *i = all ? n : last->a_start + last->a_len - a0;
        *j = all ? m : last->b_start + last->b_len - b0;
    }
    cg_diff_release(part);
    return met || all;
}

/* A region of more lines than the shortest script can be searched for in
 * time (a template edit that changes every tenth line of a 60 MB config):
 * from its first difference on, the shortest script of a window of lines
 * of both sides (16 lines, four times more until the sides meet again in
 * it) gives the first change; the walk goes on after it.  Each change then
 * costs about its own size, not the region's. */
static void solve_windows(search *S, size_t a0, size_t n, size_t b0, size_t m)
{
    size_t i = 0, j = 0;
    while (i < n && j < m) {
        while (i < n && j < m && eq(&S->a[a0 + i], &S->b[b0 + j]))
            i++, j++;
        if (i == n || j == m)
            break;
        for (size_t w = 16;; w *= 4) {
            size_t wn = n - i < w ? n - i : w, wm = m - j < w ? m - j : w;
            bool all = wn == n - i && wm == m - j;
            if (wn + wm > S->large) { /* no meeting point near: the rest is one block */
                add_hunk(S->d, a0 + i, n - i, b0 + j, m - j);
                return;
            }
            cg_diff part;
            memset(&part, 0, sizeof part);
            long half = (long)((wn + wm + 1) / 2) + 2;
            search T = {S->a, S->b, cg_xcalloc(2 * (size_t)half + 3, sizeof *T.vf),
                        cg_xcalloc(2 * (size_t)half + 3, sizeof *T.vb), half + 1, MAX_STEPS, &part, true, S->large};
            solve(&T, a0 + i, wn, b0 + j, wm);
            free(T.vf);
            free(T.vb);
            if (take_window(&part, all, a0, b0, n, m, wn, wm, &i, &j, S->d))
                break;
        }
    }
    if (i < n || j < m)
        add_hunk(S->d, a0 + i, n - i, b0 + j, m - j);
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

/* Bytes common to a and b from the start. */
static size_t common_head(const char *a, const char *b, size_t max)
{
    size_t p = 0;
    while (p < max) {
        size_t c = max - p < 4096 ? max - p : 4096;
        if (memcmp(a + p, b + p, c) != 0) {
            while (a[p] == b[p])
                p++;
            return p;
        }
        p += c;
    }
    return p;
}

/* Bytes common to a[0..alen) and b[0..blen) at their ends, at most max. */
static size_t common_tail(const char *a, size_t alen, const char *b, size_t blen, size_t max)
{
    size_t s = 0;
    while (s < max) {
        size_t c = max - s < 4096 ? max - s : 4096;
        if (memcmp(a + alen - s - c, b + blen - s - c, c) != 0) {
            while (a[alen - 1 - s] == b[blen - 1 - s])
                s++;
            return s;
        }
        s += c;
    }
    return s;
}

static void compute(const char *a, size_t alen, const char *b, size_t blen, const cg_diff_opts *o, cg_diff *d)
{
    memset(d, 0, sizeof *d);
    size_t margin = o->margin, large = o->large_region ? o->large_region : LARGE_REGION;
    /* the common head and tail, found on the bytes: the whole lines before
     * the first differing byte, and after the last one those that start a
     * line on both sides */
    size_t min = alen < blen ? alen : blen, p = common_head(a, b, min);
    const char *nl = last_nl(a, p);
    size_t pa = nl ? (size_t)(nl - a) + 1 : 0;
    size_t s = common_tail(a, alen, b, blen, min - pa), qa = alen - s, qb = blen - s;
    if (!((qa == pa || a[qa - 1] == '\n') && (qb == pa || b[qb - 1] == '\n'))) {
        nl = memchr(a + qa, '\n', alen - qa);
        qa = nl ? (size_t)(nl - a) + 1 : alen;
        qb = blen - (alen - qa);
    }
    /* only the lines between them are split, with a margin around them for
     * place_blocks, which slides blocks of repeated lines */
    size_t wa0 = lines_back(a, pa, margin), wa1 = lines_fwd(a, alen, qa, margin), wb1 = lines_fwd(b, blen, qb, margin);
    size_t base = count_lines(a, wa0), r0 = count_lines(a + wa0, pa - wa0);
    size_t n = count_lines(a + pa, qa - pa), m = count_lines(b + pa, qb - pa);
    size_t nwa, nwb;
    line *la = split(a + wa0, wa1 - wa0, &nwa), *lb = split(b + wa0, wb1 - wa0, &nwb);
    long half = (long)((n + m + 1) / 2) + 2;
    search S = {la, lb, cg_xcalloc(2 * (size_t)half + 3, sizeof *S.vf), cg_xcalloc(2 * (size_t)half + 3, sizeof *S.vb),
                half + 1, MAX_STEPS, d, false, large};
    solve(&S, r0, n, r0, m);
    free(S.vf);
    free(S.vb);
    /* past the margin the two texts are the same bytes (their common tail) */
    size_t after = count_lines(a + wa1, alen - wa1);
    d->a_lines = base + nwa + after;
    d->b_lines = base + nwb + after;
    place_blocks(d, la, nwa, lb, nwb);
    free(la);
    free(lb);
    /* a block that slid to the edge of the lines split may slide further */
    for (size_t i = 0; i < d->n; i++) {
        const cg_hunk *h = &d->hunks[i];
        if ((wa0 > 0 && (h->a_start == 0 || h->b_start == 0)) || (wa1 < alen && h->a_start + h->a_len >= nwa) ||
            (wb1 < blen && h->b_start + h->b_len >= nwb)) {
            cg_diff_opts whole = *o;
            whole.margin = SIZE_MAX;
            cg_diff_release(d);
            compute(a, alen, b, blen, &whole, d);
            return;
        }
    }
    for (size_t i = 0; i < d->n; i++) {
        d->hunks[i].a_start += base;
        d->hunks[i].b_start += base;
    }
}

void cg_diff_compute_with(const char *a, size_t alen, const char *b, size_t blen, const cg_diff_opts *o, cg_diff *d)
{
    compute(a, alen, b, blen, o, d);
}

void cg_diff_compute_margin(const char *a, size_t alen, const char *b, size_t blen, size_t margin, cg_diff *d)
{
    cg_diff_compute_with(a, alen, b, blen, &(cg_diff_opts){.margin = margin}, d);
}

void cg_diff_compute(const char *a, size_t alen, const char *b, size_t blen, cg_diff *d)
{
    cg_diff_compute_margin(a, alen, b, blen, 1000, d);
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

/* A forward reader of a text's lines: the unified diff reads the lines
 * around its hunks without splitting the whole texts. */
typedef struct cursor {
    const char *t;
    size_t len, at, line;   /* line `line` starts at `at` */
} cursor;

/* Line i (at or after the cursor's). */
static line line_at(cursor *c, size_t i)
{
    while (c->line < i && c->at < c->len) {
        const char *nl = memchr(c->t + c->at, '\n', c->len - c->at);
        c->at = nl ? (size_t)(nl - c->t) + 1 : c->len;
        c->line++;
    }
    const char *nl = memchr(c->t + c->at, '\n', c->len - c->at);
    size_t e = nl ? (size_t)(nl - c->t) : c->len;
    return (line){c->t + c->at, e - c->at, 0, nl != NULL};
}

static void unified(const cg_diff *d, cursor *ca, cursor *cb, const char *a_name, const char *b_name, unsigned context,
                    size_t max_lines, cg_strbuf *out)
{
    if (d->n == 0)
        return;
    size_t na = d->a_lines;
    line l;
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
                l = line_at(ca, x++), emit_line(&body, ' ', &l, width), y++;
            for (size_t q = 0; q < h->a_len && !cut; q++) {
                l = line_at(ca, x++);
                emit_line(&body, '-', &l, width);
                cut = max_lines && ++shown >= max_lines && shown < total;
            }
            for (size_t q = 0; q < h->b_len && !cut; q++) {
                l = line_at(cb, y++);
                emit_line(&body, '+', &l, width);
                cut = max_lines && ++shown >= max_lines && shown < total;
            }
        }
        while (!cut && x < ae)
            l = line_at(ca, x++), emit_line(&body, ' ', &l, width), y++;
        cg_strbuf_addf(out, "@@ -%zu,%zu +%zu,%zu @@\n", x > as ? as + 1 : as, x - as, y > bs ? bs + 1 : bs, y - bs);
        cg_strbuf_add(out, body.buf, body.len);
        i = j + 1;
    }
    if (cut)
        cg_strbuf_addf(out, "... (%zu more changed lines not shown; use --full-diff)\n", total - shown);
    cg_strbuf_release(&body);
}

void cg_diff_unified(const cg_diff *d, const char *a, size_t alen, const char *b, size_t blen,
                     const char *a_name, const char *b_name, unsigned context, size_t max_lines,
                     cg_strbuf *out)
{
    cursor ca = {a, alen, 0, 0}, cb = {b, blen, 0, 0};
    unified(d, &ca, &cb, a_name, b_name, context, max_lines, out);
}
