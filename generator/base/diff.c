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

/* A text: its bytes in memory (t), or read through a callback (src) a
 * window at a time. */
typedef struct text {
    const char *t;
    const cg_diff_src *src;
    size_t len, window;
} text;

/* A text's lines read where they are, without a table: a cursor at line
 * `line`, which starts at byte `at` (`next`: where the line after it
 * starts, once known) of the range of `len` bytes from byte `from` of the
 * text.  Moving it costs the bytes it passes.  A text read through a
 * callback is held a window at a time (buf: the range's bytes [bs, bs + bn)). */
typedef struct lcur {
    const text *x;
    size_t from, len, line, at, next;
    char *buf;
    size_t bs, bn, cap;
} lcur;

static lcur lcur_at(const text *x, size_t from, size_t len, size_t line_no, size_t at)
{
    return (lcur){x, from, len, line_no, at, SIZE_MAX, NULL, 0, 0, 0};
}

static void lcur_release(lcur *c)
{
    free(c->buf);
    c->buf = NULL;
    c->bn = c->cap = 0;
}

/* Holds the range's bytes [s, s + n). */
static void lc_load(lcur *c, size_t s, size_t n)
{
    if (n > c->cap) {
        free(c->buf);
        c->cap = n;
        c->buf = cg_xmalloc(n);
    }
    if (n)
        c->x->src->read(c->x->src->ctx, c->from + s, c->buf, n);
    c->bs = s, c->bn = n;
}

/* The range's bytes [i, e), held. */
static const char *lc_bytes(lcur *c, size_t i, size_t e)
{
    if (!c->x->src)
        return c->x->t + c->from + i;
    if (i == e)
        return "";
    if (i < c->bs || e > c->bs + c->bn) {
        size_t n = e - i > c->x->window ? e - i : c->x->window;
        lc_load(c, i, n < c->len - i ? n : c->len - i);
    }
    return c->buf + (i - c->bs);
}

/* The first '\n' of the range's bytes [i, len), or SIZE_MAX. */
static size_t lc_nl_fwd(lcur *c, size_t i)
{
    if (!c->x->src) {
        const char *t = c->x->t + c->from, *nl = i < c->len ? memchr(t + i, '\n', c->len - i) : NULL;
        return nl ? (size_t)(nl - t) : SIZE_MAX;
    }
    while (i < c->len) {
        if (i < c->bs || i >= c->bs + c->bn)
            lc_load(c, i, c->len - i < c->x->window ? c->len - i : c->x->window);
        const char *nl = memchr(c->buf + (i - c->bs), '\n', c->bs + c->bn - i);
        if (nl)
            return c->bs + (size_t)(nl - c->buf);
        i = c->bs + c->bn;
    }
    return SIZE_MAX;
}

/* The last '\n' of the range's bytes [0, e), or SIZE_MAX. */
static size_t lc_nl_back(lcur *c, size_t e)
{
    if (!c->x->src) {
        const char *t = c->x->t + c->from, *nl = last_nl(t, e);
        return nl ? (size_t)(nl - t) : SIZE_MAX;
    }
    while (e > 0) {
        if (e <= c->bs || e > c->bs + c->bn) {
            size_t s = e > c->x->window ? e - c->x->window : 0;
            lc_load(c, s, e - s);
        }
        const char *nl = last_nl(c->buf, e - c->bs);
        if (nl)
            return c->bs + (size_t)(nl - c->buf);
        e = c->bs;
    }
    return SIZE_MAX;
}

/* Line k of the cursor's text (its hash left 0: lines read this way are
 * compared with each other only, and eq then compares their bytes).  Its
 * bytes last until the cursor moves again. */
static line lcur_get(lcur *c, size_t k)
{
    while (c->line < k) {
        if (c->next == SIZE_MAX) {
            size_t nl = lc_nl_fwd(c, c->at);
            c->next = nl != SIZE_MAX ? nl + 1 : c->len;
        }
        c->at = c->next, c->next = SIZE_MAX, c->line++;
    }
    while (c->line > k) {
        size_t nl = c->at >= 2 ? lc_nl_back(c, c->at - 1) : SIZE_MAX;
        c->next = c->at, c->at = nl != SIZE_MAX ? nl + 1 : 0, c->line--;
    }
    size_t nl = lc_nl_fwd(c, c->at), e = nl != SIZE_MAX ? nl : c->len;
    c->next = nl != SIZE_MAX ? e + 1 : c->len;
    return (line){lc_bytes(c, c->at, e), e - c->at, 0, nl != SIZE_MAX};
}

/* The bytes of the `k` lines from the cursor's on (at least), held; *n:
 * how many. */
static const char *lc_span(lcur *c, size_t k, size_t *n)
{
    if (!c->x->src) {
        *n = c->len - c->at;
        return c->x->t + c->from + c->at;
    }
    size_t e = c->at;
    for (size_t i = 0; i < k && e < c->len; i++) {
        size_t nl = lc_nl_fwd(c, e);
        e = nl != SIZE_MAX ? nl + 1 : c->len;
    }
    *n = e - c->at;
    return lc_bytes(c, c->at, e);
}

/* One side's lines for place_blocks: a table, or two cursors over the
 * text (one at each end of the block being slid). */
typedef struct lines {
    const line *v;
    lcur c[2];
} lines;

static line lines_get(lines *L, int which, size_t k)
{
    return L->v ? L->v[k] : lcur_get(&L->c[which], k);
}

static bool lines_eq(lines *L, size_t x, size_t y)
{
    line lx = lines_get(L, 0, x), ly = lines_get(L, 1, y);
    return eq(&lx, &ly);
}

/* A block of only added (or only removed) lines that repeats the lines
 * around it can be shown at several places.  Show it where its first line
 * is least indented (the latest such place): a YAML entry is then added
 * whole, "- build:" first, as people and git's indent heuristic write it. */
static void place_block(size_t *start, size_t len, size_t *other, size_t lo, size_t hi, size_t olo, size_t ohi,
                        lines *v)
{
    /* the other side moves with it and must stay between the neighbours */
    if (*start - lo > *other - olo)
        lo = *start - (*other - olo);
    if (hi - (*start + len) > ohi - *other)
        hi = *start + len + (ohi - *other);
    while (*start > lo && lines_eq(v, *start - 1, *start + len - 1))
        (*start)--, (*other)--;
    line first = lines_get(v, 0, *start);
    size_t best = *start, best_other = *other, best_indent = indent_of(&first);
    while (*start + len < hi && lines_eq(v, *start, *start + len)) {
        (*start)++, (*other)++;
        first = lines_get(v, 0, *start);
        size_t in = indent_of(&first);
        if (in <= best_indent)
            best = *start, best_other = *other, best_indent = in;
    }
    *start = best;
    *other = best_other;
}

static void place_blocks(cg_diff *d, lines *la, size_t na, lines *lb, size_t nb)
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

/* The first k lines of t[0..len) (fewer when it has fewer) into v, hashed
 * (or not, `hash` false: their hashes left 0, and eq compares their bytes),
 * as split makes them: *end is where the bytes after them start. */
static size_t split_some(const char *t, size_t len, size_t k, line *v, size_t *end, bool hash)
{
    size_t got = 0, at = 0;
    while (got < k && at < len) {
        const char *nl = memchr(t + at, '\n', len - at);
        size_t e = nl ? (size_t)(nl - t) : len;
        v[got] = (line){t + at, e - at, hash ? cg_hash(t + at, e - at) : 0, nl != NULL};
        got++;
        at = nl ? e + 1 : len;
    }
    *end = at;
    return got;
}

enum { SMALL_WINDOW = 256 }; /* lines, both sides */

/* Solves lines [0, n) of ta against [0, m) of tb (the texts from those
 * lines on) with tables of just those lines, adding the hunks to d shifted
 * by (as, bs).  `windowed`: as a window of solve_windows. */
static void solve_split(const char *ta, size_t alen, size_t n, const char *tb, size_t blen, size_t m, size_t as,
                        size_t bs, bool windowed, size_t large, cg_diff *d)
{
    size_t ea, eb;
    line *wa = cg_xmalloc((n + 1) * sizeof *wa), *wb = cg_xmalloc((m + 1) * sizeof *wb);
    /* a small window's lines are compared a few times each: hashing each
     * whole costs more than the comparisons it spares (a template edit's
     * windows of 16 lines, one per change) */
    bool hash = n + m > SMALL_WINDOW;
    split_some(ta, alen, n, wa, &ea, hash);
    split_some(tb, blen, m, wb, &eb, hash);
    cg_diff part;
    memset(&part, 0, sizeof part);
    long half = (long)((n + m + 1) / 2) + 2;
    search T = {wa, wb, cg_xcalloc(2 * (size_t)half + 3, sizeof *T.vf), cg_xcalloc(2 * (size_t)half + 3, sizeof *T.vb),
                half + 1, MAX_STEPS, &part, windowed, large};
    solve(&T, 0, n, 0, m);
    free(T.vf);
    free(T.vb);
    free(wa);
    free(wb);
    for (size_t k = 0; k < part.n; k++)
        add_hunk(d, part.hunks[k].a_start + as, part.hunks[k].a_len, part.hunks[k].b_start + bs,
                 part.hunks[k].b_len);
    cg_diff_release(&part);
}

/* The range's bytes from i on that the cursor holds (reading a window
 * from i when it holds none): *n of them (0 at the range's end). */
static const char *lc_held(lcur *c, size_t i, size_t *n)
{
    if (!c->x->src) {
        *n = c->len - i;
        return c->x->t + c->from + i;
    }
    if (i >= c->len) {
        *n = 0;
        return "";
    }
    if (i < c->bs || i >= c->bs + c->bn)
        lc_load(c, i, c->len - i < c->x->window ? c->len - i : c->x->window);
    *n = c->bs + c->bn - i;
    return c->buf + (i - c->bs);
}

/* The '\n's of t[0, len) and where the last one is (*last; untouched when
 * there is none). */
static size_t count_nl(const char *t, size_t len, size_t *last)
{
    size_t k = count_lines(t, len) - (len && t[len - 1] != '\n');
    if (k) {
        const char *nl = last_nl(t, len);
        *last = (size_t)(nl - t);
    }
    return k;
}

enum {
    SKIP_BLOCK = 1 << 16,
    KNOWN_MIN = 256 /* fewer bytes known the same: compared (a line or two) */
};

/* The walk of solve_windows_lazy over lines the same on both sides, at
 * most `max` of them, done on the bytes: the two cursors (at lines ka and
 * kb) move past the whole lines before the first byte that differs (a
 * line is the same when its bytes and its '\n' are), a block of bytes at a
 * time, instead of a line at a time.  How many lines it passed. */
static size_t skip_same(lcur *ca, size_t ka, lcur *cb, size_t kb, size_t max)
{
    lcur_get(ca, ka);
    lcur_get(cb, kb);
    size_t at_a = ca->at, at_b = cb->at, passed = 0;
    /* a block at a time, from a few lines to SKIP_BLOCK: the next
     * difference is often near (a memcmp past it is work for nothing, and
     * a checking memcmp reads the whole range) */
    const cg_diff_src *sb = cb->x->src;
    for (size_t block = 256;; block = block < SKIP_BLOCK ? 2 * block : SKIP_BLOCK) {
        size_t na, nb;
        /* bytes b's reader knows to be a's: a's lines counted, b not read */
        size_t known = sb && sb->same && passed < max ? sb->same(sb->ctx, cb->from + at_b, ca->from + at_a) : 0;
        if (known >= KNOWN_MIN) {
            const char *x = lc_held(ca, at_a, &na);
            size_t c = na < known ? na : known, last = 0;
            c = c < cb->len - at_b ? c : cb->len - at_b;
            size_t k = count_nl(x, c, &last);
            if (k && k <= max - passed) {
                passed += k;
                at_a += last + 1, at_b += last + 1;
                continue;
            }
        }
        const char *x = lc_held(ca, at_a, &na), *y = lc_held(cb, at_b, &nb);
        size_t c = na < nb ? na : nb;
        if (c > block)
            c = block;
        if (!c || passed == max)
            break;
        size_t same = c;
        if (memcmp(x, y, c) != 0) {
            same = 0;
            while (x[same] == y[same])
                same++;
        }
        size_t last = 0, k = count_nl(x, same, &last);
        if (k > max - passed) { /* only max lines: where the last of them ends */
            k = max - passed;
            const char *q = x;
            for (size_t t = 0; t < k; t++)
                q = (const char *)memchr(q, '\n', (size_t)(x + same - q)) + 1;
            last = (size_t)(q - x) - 1;
        }
        if (k) {
            passed += k;
            at_a += last + 1, at_b += last + 1;
        }
        if (same < c || passed == max || !k)
            break;
    }
    /* the cursors where the walk stopped */
    ca->line = ka + passed, ca->at = at_a, ca->next = SIZE_MAX;
    cb->line = kb + passed, cb->at = at_b, cb->next = SIZE_MAX;
    return passed;
}

/* solve_windows without tables: the walk reads the lines where they are,
 * and each window is split alone (the same hunks, in memory of the
 * window's size, not the region's). */
static void solve_windows_lazy(lcur *ca, lcur *cb, size_t a0, size_t n, size_t b0, size_t m, size_t large,
                               cg_diff *d)
{
    size_t i = 0, j = 0;
    while (i < n && j < m) {
        size_t k = skip_same(ca, a0 + i, cb, b0 + j, n - i < m - j ? n - i : m - j);
        i += k, j += k;
        for (;;) {
            if (i >= n || j >= m)
                break;
            line x = lcur_get(ca, a0 + i), y = lcur_get(cb, b0 + j);
            if (!eq(&x, &y))
                break;
            i++, j++;
        }
        if (i == n || j == m)
            break;
        lcur_get(ca, a0 + i);
        lcur_get(cb, b0 + j);
        for (size_t w = 16;; w *= 4) {
            size_t wn = n - i < w ? n - i : w, wm = m - j < w ? m - j : w;
            bool all = wn == n - i && wm == m - j;
            if (wn + wm > large) { /* no meeting point near: the rest is one block */
                add_hunk(d, a0 + i, n - i, b0 + j, m - j);
                return;
            }
            cg_diff part;
            memset(&part, 0, sizeof part);
            size_t an, bn;
            const char *ta = lc_span(ca, wn, &an), *tb = lc_span(cb, wm, &bn);
            solve_split(ta, an, wn, tb, bn, wm, a0 + i, b0 + j, true, large, &part);
            if (take_window(&part, all, a0, b0, n, m, wn, wm, &i, &j, d))
                break;
        }
    }
    if (i < n || j < m)
        add_hunk(d, a0 + i, n - i, b0 + j, m - j);
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

/* ---- the same over a text held whole or read a window at a time ---- */

enum { SRC_WINDOW = 1 << 18 };

/* The text's bytes [off, off + n): where they are, or read into tmp. */
static const char *tx_get(const text *x, size_t off, size_t n, char *tmp)
{
    if (!x->src)
        return x->t + off;
    if (n)
        x->src->read(x->src->ctx, off, tmp, n);
    return tmp;
}

/* common_head and common_tail of two texts */
static size_t tx_head(const text *a, const text *b, size_t max)
{
    if (!a->src && !b->src)
        return common_head(a->t, b->t, max);
    size_t w = a->window, p = 0;
    char *ta = cg_xmalloc(w), *tb = cg_xmalloc(w);
    while (p < max) {
        size_t c = max - p < w ? max - p : w;
        const char *x = tx_get(a, p, c, ta), *y = tx_get(b, p, c, tb);
        size_t k = common_head(x, y, c);
        p += k;
        if (k < c)
            break;
    }
    free(ta);
    free(tb);
    return p;
}

static size_t tx_tail(const text *a, const text *b, size_t max)
{
    if (!a->src && !b->src)
        return common_tail(a->t, a->len, b->t, b->len, max);
    size_t w = a->window, s = 0;
    char *ta = cg_xmalloc(w), *tb = cg_xmalloc(w);
    while (s < max) {
        size_t c = max - s < w ? max - s : w;
        const char *x = tx_get(a, a->len - s - c, c, ta), *y = tx_get(b, b->len - s - c, c, tb);
        size_t k = common_tail(x, c, y, c, c);
        s += k;
        if (k < c)
            break;
    }
    free(ta);
    free(tb);
    return s;
}

/* count_lines of the text's bytes [from, to) */
static size_t tx_count(const text *x, size_t from, size_t to)
{
    if (!x->src)
        return count_lines(x->t + from, to - from);
    char *tmp = cg_xmalloc(x->window);
    size_t n = 0;
    char last = '\n';
    for (size_t at = from; at < to;) {
        size_t c = to - at < x->window ? to - at : x->window;
        const char *t = tx_get(x, at, c, tmp);
        last = t[c - 1];
        n += count_lines(t, c) - (last != '\n'); /* the '\n's only */
        at += c;
    }
    free(tmp);
    return n + (last != '\n');
}

/* lines_back and lines_fwd of a text */
static size_t tx_lines_back(const text *x, size_t at, size_t back)
{
    if (!x->src)
        return lines_back(x->t, at, back);
    lcur c = lcur_at(x, 0, x->len, 0, 0);
    while (at > 0 && back-- > 0) {
        size_t nl = lc_nl_back(&c, at - 1);
        at = nl != SIZE_MAX ? nl + 1 : 0;
    }
    lcur_release(&c);
    return at;
}

static size_t tx_lines_fwd(const text *x, size_t at, size_t fwd)
{
    if (!x->src)
        return lines_fwd(x->t, x->len, at, fwd);
    lcur c = lcur_at(x, 0, x->len, 0, 0);
    while (at < x->len && fwd-- > 0) {
        size_t nl = lc_nl_fwd(&c, at);
        at = nl != SIZE_MAX ? nl + 1 : x->len;
    }
    lcur_release(&c);
    return at;
}

static void compute(const text *A, const text *B, const cg_diff_opts *o, cg_diff *d)
{
    memset(d, 0, sizeof *d);
    size_t alen = A->len, blen = B->len;
    size_t margin = o->margin, large = o->large_region ? o->large_region : LARGE_REGION;
    /* the common head and tail, found on the bytes: the whole lines before
     * the first differing byte, and after the last one those that start a
     * line on both sides */
    lcur wa = lcur_at(A, 0, alen, 0, 0), wb = lcur_at(B, 0, blen, 0, 0);
    size_t min = alen < blen ? alen : blen, p = tx_head(A, B, min);
    size_t nl = lc_nl_back(&wa, p);
    size_t pa = nl != SIZE_MAX ? nl + 1 : 0;
    size_t s = tx_tail(A, B, min - pa), qa = alen - s, qb = blen - s;
    if (!((qa == pa || *lc_bytes(&wa, qa - 1, qa) == '\n') && (qb == pa || *lc_bytes(&wb, qb - 1, qb) == '\n'))) {
        nl = lc_nl_fwd(&wa, qa);
        qa = nl != SIZE_MAX ? nl + 1 : alen;
        qb = blen - (alen - qa);
    }
    lcur_release(&wa);
    lcur_release(&wb);
    /* only the lines between them are split, with a margin around them for
     * place_blocks, which slides blocks of repeated lines */
    size_t wa0 = tx_lines_back(A, pa, margin), wa1 = tx_lines_fwd(A, qa, margin), wb1 = tx_lines_fwd(B, qb, margin);
    size_t base = tx_count(A, 0, wa0), pre = base + tx_count(A, wa0, pa);
    size_t n = tx_count(A, pa, qa), m = tx_count(B, pa, qb);
    /* a region searched a window at a time is never split whole: its lines
     * are read where they are (the same hunks; memory of a window) */
    bool lazy = !o->tables && n + m > large;
    size_t nwa, nwb, r0 = pre - base;
    line *la = NULL, *lb = NULL;
    char *ha = NULL, *hb = NULL; /* a text read through a callback: the lines split */
    lines LA, LB;
    if (lazy) {
        /* the lines split would be: those before the region (it starts a
         * line), its own, and the margin after it */
        nwa = r0 + n + tx_count(A, qa, wa1);
        nwb = r0 + m + tx_count(B, qb, wb1);
        lcur ca = lcur_at(A, wa0, wa1 - wa0, r0, pa - wa0), cb = lcur_at(B, wa0, wb1 - wa0, r0, pa - wa0);
        lcur ea = lcur_at(A, wa0, wa1 - wa0, r0 + n, qa - wa0), eb = lcur_at(B, wa0, wb1 - wa0, r0 + m, qb - wa0);
        size_t a0 = r0, b0 = r0;
        /* what solve does first: the common lines at both ends */
        while (n && m) {
            line x = lcur_get(&ca, a0), y = lcur_get(&cb, b0);
            if (!eq(&x, &y))
                break;
            a0++, b0++, n--, m--;
        }
        while (n && m) {
            line x = lcur_get(&ea, a0 + n - 1), y = lcur_get(&eb, b0 + m - 1);
            if (!eq(&x, &y))
                break;
            n--, m--;
        }
        if (!n || !m) {
            add_hunk(d, a0, n, b0, m);
        } else {
            lcur_get(&ca, a0);
            lcur_get(&cb, b0);
            if (n + m > large) {
                solve_windows_lazy(&ca, &cb, a0, n, b0, m, large, d);
            } else {
                size_t an, bn;
                const char *ta = lc_span(&ca, n, &an), *tb = lc_span(&cb, m, &bn);
                solve_split(ta, an, n, tb, bn, m, a0, b0, false, large, d);
            }
        }
        lcur_release(&ca);
        lcur_release(&cb);
        lcur_release(&ea);
        lcur_release(&eb);
        LA = (lines){NULL, {lcur_at(A, wa0, wa1 - wa0, 0, 0), lcur_at(A, wa0, wa1 - wa0, 0, 0)}};
        LB = (lines){NULL, {lcur_at(B, wa0, wb1 - wa0, 0, 0), lcur_at(B, wa0, wb1 - wa0, 0, 0)}};
    } else {
        if (A->src)
            ha = cg_xmalloc(wa1 - wa0 + 1);
        if (B->src)
            hb = cg_xmalloc(wb1 - wa0 + 1);
        la = split(tx_get(A, wa0, wa1 - wa0, ha), wa1 - wa0, &nwa);
        lb = split(tx_get(B, wa0, wb1 - wa0, hb), wb1 - wa0, &nwb);
        long half = (long)((n + m + 1) / 2) + 2;
        search S = {la, lb, cg_xcalloc(2 * (size_t)half + 3, sizeof *S.vf),
                    cg_xcalloc(2 * (size_t)half + 3, sizeof *S.vb), half + 1, MAX_STEPS, d, false, large};
        solve(&S, r0, n, r0, m);
        free(S.vf);
        free(S.vb);
        LA = (lines){la, {{0}}};
        LB = (lines){lb, {{0}}};
    }
    /* past the margin the two texts are the same bytes (their common tail) */
    size_t after = tx_count(A, wa1, alen);
    d->a_lines = base + nwa + after;
    d->b_lines = base + nwb + after;
    place_blocks(d, &LA, nwa, &LB, nwb);
    for (int k = 0; k < 2; k++) {
        lcur_release(&LA.c[k]);
        lcur_release(&LB.c[k]);
    }
    free(la);
    free(lb);
    free(ha);
    free(hb);
    /* a block that slid to the edge of the lines split may slide further */
    for (size_t i = 0; i < d->n; i++) {
        const cg_hunk *h = &d->hunks[i];
        if ((wa0 > 0 && (h->a_start == 0 || h->b_start == 0)) || (wa1 < alen && h->a_start + h->a_len >= nwa) ||
            (wb1 < blen && h->b_start + h->b_len >= nwb)) {
            cg_diff_opts whole = *o;
            whole.margin = SIZE_MAX;
            cg_diff_release(d);
            compute(A, B, &whole, d);
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
    text A = {a, NULL, alen, 0}, B = {b, NULL, blen, 0};
    compute(&A, &B, o, d);
}

void cg_diff_compute_src(const cg_diff_src *a, const cg_diff_src *b, const cg_diff_opts *o, cg_diff *d)
{
    cg_diff_opts dflt = {.margin = 1000};
    if (!o)
        o = &dflt;
    size_t w = o->window ? o->window : SRC_WINDOW;
    text A = {NULL, a, a->len, w}, B = {NULL, b, b->len, w};
    compute(&A, &B, o, d);
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

/* A forward reader of either kind of text. */
typedef struct ucur {
    cursor m;
    lcur l;
    bool src;
} ucur;

static line ucur_line(ucur *u, size_t i)
{
    return u->src ? lcur_get(&u->l, i) : line_at(&u->m, i);
}

static void unified(const cg_diff *d, ucur *ca, ucur *cb, const char *a_name, const char *b_name, unsigned context,
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
                l = ucur_line(ca, x++), emit_line(&body, ' ', &l, width), y++;
            for (size_t q = 0; q < h->a_len && !cut; q++) {
                l = ucur_line(ca, x++);
                emit_line(&body, '-', &l, width);
                cut = max_lines && ++shown >= max_lines && shown < total;
            }
            for (size_t q = 0; q < h->b_len && !cut; q++) {
                l = ucur_line(cb, y++);
                emit_line(&body, '+', &l, width);
                cut = max_lines && ++shown >= max_lines && shown < total;
            }
        }
        while (!cut && x < ae)
            l = ucur_line(ca, x++), emit_line(&body, ' ', &l, width), y++;
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
    ucur ca = {{a, alen, 0, 0}, {0}, false}, cb = {{b, blen, 0, 0}, {0}, false};
    unified(d, &ca, &cb, a_name, b_name, context, max_lines, out);
}

void cg_diff_unified_src(const cg_diff *d, const cg_diff_src *a, const cg_diff_src *b, size_t window,
                         const char *a_name, const char *b_name, unsigned context, size_t max_lines,
                         cg_strbuf *out)
{
    size_t w = window ? window : SRC_WINDOW;
    text A = {NULL, a, a->len, w}, B = {NULL, b, b->len, w};
    ucur ca = {{0}, lcur_at(&A, 0, A.len, 0, 0), true}, cb = {{0}, lcur_at(&B, 0, B.len, 0, 0), true};
    unified(d, &ca, &cb, a_name, b_name, context, max_lines, out);
    lcur_release(&ca.l);
    lcur_release(&cb.l);
}
