/* The job-level report of two configs never held whole (check/report.h,
 * cg_matrix_compare_src).
 *
 * Each config is read a window at a time to find its workflow entries, as
 * slicing finds them (report_slice.c): the same lines, read the same way.
 * An entry of the generated config that lies where the two configs are the
 * same bytes (a run), with the committed config's entry at the same bytes,
 * is the same entry.  A job whose entries are all the same on both sides
 * (one per workflow) is left out of both, remembered by name only; the
 * rest of both configs, all they hold but those entries, is compared as
 * cg_matrix_compare_sliced compares whole configs, knowing the jobs left
 * out (the entries kept are not copied: read again where they are when
 * they are compared).  Whatever the window reading cannot tell as slicing would (an entry
 * not plain, an anchor, a layout slicing refuses, entries that come out
 * otherwise) makes it give up, and the caller reads both configs whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/report.h"
#include "check/report_impl.h"

enum { WINDOW = 1 << 18 };

/* ---- lines read a window at a time ---- */

typedef struct lcur {
    const cg_diff_src *src;
    char *buf;
    size_t cap, bs, bn;  /* buf holds the text's bytes [bs, bs + bn) */
    size_t i, e;         /* the current line [i, e) (e: its '\n', or the end) */
} lcur;

/* Holds the current line (and finds its end). */
static void lc_hold(lcur *c)
{
    size_t len = c->src->len;
    for (;;) {
        if (c->i >= c->bs && c->i <= c->bs + c->bn) {
            const char *nl = c->i < c->bs + c->bn ? memchr(c->buf + (c->i - c->bs), '\n', c->bs + c->bn - c->i)
                                                  : NULL;
            if (nl || c->bs + c->bn == len) {
                c->e = nl ? c->bs + (size_t)(nl - c->buf) : len;
                return;
            }
        }
        /* from the line's start, twice as much when the line is longer */
        size_t want = c->i >= c->bs && c->i <= c->bs + c->bn && c->bs + c->bn - c->i >= c->cap / 2 ? 2 * c->cap
                                                                                                  : c->cap;
        if (want < WINDOW)
            want = WINDOW;
        if (want > c->cap) {
            free(c->buf);
            c->buf = cg_xmalloc(want);
            c->cap = want;
        }
        size_t n = len - c->i < c->cap ? len - c->i : c->cap;
        if (n)
            c->src->read(c->src->ctx, c->i, c->buf, n);
        c->bs = c->i, c->bn = n;
    }
}

static const char *lc_text(const lcur *c)
{
    return c->buf + (c->i - c->bs);
}

static size_t lc_len(const lcur *c)
{
    return c->e - c->i;
}

static bool lc_eof(const lcur *c)
{
    return c->i >= c->src->len;
}

static void lc_next(lcur *c)
{
    c->i = c->e < c->src->len ? c->e + 1 : c->src->len;
    lc_hold(c);
}

static size_t lc_indent(const lcur *c)
{
    const char *t = lc_text(c);
    size_t n = lc_len(c), k = 0;
    while (k < n && t[k] == ' ')
        k++;
    return k;
}

/* blank, spaces only, or a comment */
static bool lc_blank(const lcur *c)
{
    size_t k = lc_indent(c);
    return k == lc_len(c) || lc_text(c)[k] == '#';
}

/* the end of the `workflows:` block: the end of the text, or a line at
 * column 0 that is not blank (the next top-level key) */
static bool lc_end(const lcur *c)
{
    return lc_eof(c) || (lc_text(c)[0] != ' ' && !lc_blank(c));
}

/* "KEY:" at column `at` of the line, then a space or its end (as slicing
 * reads a key): KEY's length, *rest where its value starts; else 0. */
static size_t lc_key(const lcur *c, size_t at, size_t *rest)
{
    const char *t = lc_text(c);
    size_t n = lc_len(c), k = at;
    if (k >= n)
        return 0;
    if (!(cg_report_chars[(unsigned char)t[k]] & CG_CH_KEY_FIRST))
        return 0;
    while (k < n && (cg_report_chars[(unsigned char)t[k]] & CG_CH_KEY))
        k++;
    if (k >= n || t[k] != ':' || (k + 1 < n && t[k + 1] != ' '))
        return 0;
    size_t r = k + 1;
    while (r < n && t[r] == ' ')
        r++;
    *rest = r;
    return k - at;
}

/* next_content and skip_deeper of report_slice.c */
static void lc_content(lcur *c)
{
    while (!lc_end(c) && lc_blank(c))
        lc_next(c);
}

static void lc_deeper(lcur *c, size_t ind)
{
    static const char spaces[64] = "                                                                ";
    while (!lc_end(c) && (lc_blank(c) || lc_indent(c) > ind)) {
        if (c->e >= c->src->len) { /* the last line */
            lc_next(c);
            continue;
        }
        /* the lines held after it that start deeper than ind (most of an
         * entry's): one comparison and a search for the line's end each */
        const char *b = c->buf;
        size_t i = c->e + 1 - c->bs, n = c->bn;
        while (ind < sizeof spaces && i + ind + 1 < n && memcmp(b + i, spaces, ind + 1) == 0) {
            const char *nl = memchr(b + i + ind + 1, '\n', n - i - ind - 1);
            if (!nl)
                break;
            i = (size_t)(nl - b) + 1;
        }
        c->i = c->bs + i;
        lc_hold(c);
    }
}

/* ---- the entries of one config ---- */

typedef struct ent {
    uint32_t off;        /* (a text past 4 GB is not read this way) */
    uint32_t len;
    uint32_t job;        /* index in jobs.v */
    uint16_t wf;         /* index in jobs.wf */
    bool pair;           /* the same entry is on the other side */
    bool drop;
    /* what cg_report_entry_walk said of its bytes (cg_report_known) */
    const char *invoke;  /* interned in the jobs' pool */
    uint16_t inv_len, args_indent;
    uint8_t kind;
    bool named;
} ent;

/* The jobs of both configs, by name. */
typedef struct jobinfo {
    uint32_t na, nb;     /* its entries on each side */
    int last_wf;         /* the workflow of its last entry read (-1: none) */
    bool keep;           /* one of them differs, or two share a workflow */
} jobinfo;

/* The jobs left out, for the comparison (report_impl.h). */
struct cg_report_shared {
    cg_pool pool;        /* names */
    const char **name;   /* of every job of both configs */
    bool *left;          /* whether it is left out */
    cg_index index;      /* name -> its index + 1 */
};

typedef struct jobs {
    struct cg_report_shared sh;
    jobinfo *v;
    size_t n, cap, ncap;
    const char **wf;     /* workflow names (interned) */
    size_t nwf, wcap;
} jobset;

static const char *job_name(const void *ctx, uint32_t id)
{
    return ((const struct cg_report_shared *)ctx)->name[id];
}

bool cg_report_shared_has(const cg_report_shared *sh, const char *name)
{
    uint32_t id1 = cg_index_get(&sh->index, name, strlen(name));
    return id1 && sh->left[id1 - 1];
}

typedef struct side {
    const cg_diff_src *src;
    int which;           /* 0: committed, 1: generated */
    /* the generated side: where it is the committed one's bytes, and those
     * entries (the pair of each entry is found as it is read) */
    struct side *other;
    const cg_report_run *runs;
    size_t nruns, r, j;
    ent *v;
    size_t n, cap;
    bool bad;            /* read otherwise than slicing would: give up */
    char *tmp;
    size_t tcap;
    cg_report_scan_ctl *ctl; /* read on another thread: its progress, and when to stop */
    const char *inv;     /* what the last entry read invokes (interned), inv_len bytes */
    size_t inv_len;
} side;

/* The entry of the committed side with the bytes of the generated one's
 * [off, off + len), in the same workflow, or NULL. */
static ent *pair_of(side *sd, size_t off, size_t len, size_t wf)
{
    while (sd->r < sd->nruns && sd->runs[sd->r].new_at + sd->runs[sd->r].len <= off)
        sd->r++;
    if (sd->r == sd->nruns)
        return NULL;
    const cg_report_run *run = &sd->runs[sd->r];
    if (off < run->new_at || off + len > run->new_at + run->len)
        return NULL;
    size_t at = off - run->new_at + run->old_at;
    side *a = sd->other;
    while (sd->j < a->n && a->v[sd->j].off < at)
        sd->j++;
    ent *x = sd->j < a->n ? &a->v[sd->j] : NULL;
    return x && x->off == at && x->len == len && x->wf == wf ? x : NULL;
}

/* The value of the `name:` an entry t[0, len) has on its second line, as
 * cigen writes them (found before the entry is read: guess_of). */
static bool name_guess(const char *t, size_t len, const char **v, size_t *n)
{
    const char *p = memchr(t, '\n', len), *end = t + len;
    if (!p)
        return false;
    for (p++; p < end && *p == ' '; p++)
        ;
    if (end - p <= 6 || memcmp(p, "name: ", 6) != 0)
        return false;
    const char *s = p + 6, *e = memchr(s, '\n', (size_t)(end - s));
    for (e = e ? e : end; e > s && e[-1] == ' ';)
        e--;
    *v = s, *n = (size_t)(e - s);
    return true;
}

/* The generated side's entry [off, off + len) of workflow wf, when it is
 * the same bytes as the committed side's entry there: added as that one's
 * pair (the same job, read already).  False when it is not. */
static bool add_paired(side *sd, jobset *J, size_t wf, size_t off, size_t len)
{
    ent *x = sd->other ? pair_of(sd, off, len, wf) : NULL;
    if (!x)
        return false;
    x->pair = true;
    jobinfo *ji = &J->v[x->job];
    ji->nb++;
    ji->keep |= ji->last_wf == (int)wf;
    ji->last_wf = (int)wf;
    cg_grow(&sd->v, &sd->cap, sd->n + 1, sizeof *sd->v);
    ent *y = &sd->v[sd->n++];
    *y = *x; /* (its bytes: what was said of them holds) */
    y->off = (uint32_t)off, y->pair = true, y->drop = false;
    return true;
}

/* The name an entry's job is looked up by, hashed and its index slot
 * fetched before the entry is read (name_guess): the hash, when the
 * reading finds that name. */
typedef struct guess {
    const char *s;
    size_t n;
    uint32_t hash;
} guess;

static guess guess_of(const jobset *J, const char *t, size_t len)
{
    guess g = {NULL, 0, 0};
    if (name_guess(t, len, &g.s, &g.n)) {
        g.hash = cg_index_hash(g.s, g.n);
        cg_index_prefetch(&J->sh.index, g.hash);
    }
    return g;
}

/* The entry t[0, len) at off, of workflow wf, read (kind and pl: what
 * cg_report_entry_walk said of it), added under its job. */
static void add_read(side *sd, jobset *J, size_t wf, size_t off, const char *t, size_t len, int kind,
                     const cg_report_plain *pl, const guess *g)
{
    if (kind <= 0 || cg_report_anchor_like(t, len) || len > UINT32_MAX) {
        sd->bad = true; /* read as YAML, or something like an anchor: slicing reads it otherwise */
        return;
    }
    if (pl->invoke_len > UINT16_MAX || pl->args_indent > UINT16_MAX) {
        sd->bad = true; /* (no entry cigen writes) */
        return;
    }
    /* what it invokes, kept by name (most entries invoke what the one
     * before did) */
    if (!sd->inv || sd->inv_len != pl->invoke_len || memcmp(sd->inv, pl->invoke, pl->invoke_len) != 0)
        sd->inv = cg_internn(&J->sh.pool, pl->invoke, pl->invoke_len), sd->inv_len = pl->invoke_len;
    bool named = kind == 2 && pl->name;
    const char *nm = named ? pl->name : pl->invoke;
    size_t nl = named ? pl->name_len : pl->invoke_len;
    cg_index_pos at;
    uint32_t hash = nm == g->s && nl == g->n ? g->hash : cg_index_hash(nm, nl);
    size_t id = cg_index_find_hashed(&J->sh.index, nm, nl, hash, &at);
    if (!id) {
        if (J->n >= UINT32_MAX - 1) {
            sd->bad = true;
            return;
        }
        cg_grow(&J->v, &J->cap, J->n + 1, sizeof *J->v);
        cg_grow(&J->sh.name, &J->ncap, J->n + 1, sizeof *J->sh.name);
        J->v[J->n] = (jobinfo){0, 0, -1, false};
        J->sh.name[J->n] = cg_pool_strndup(&J->sh.pool, nm, nl);
        cg_index_put_at(&J->sh.index, &at, (uint32_t)J->n);
        id = ++J->n;
    }
    jobinfo *ji = &J->v[id - 1];
    *(sd->which ? &ji->nb : &ji->na) += 1;
    /* two entries of a job in one workflow (they follow each other there:
     * a workflow's entries are read together): kept, their pairs compare
     * across */
    ji->keep |= ji->last_wf == (int)wf;
    ji->last_wf = (int)wf;
    cg_grow(&sd->v, &sd->cap, sd->n + 1, sizeof *sd->v);
    sd->v[sd->n++] = (ent){(uint32_t)off, (uint32_t)len,            (uint32_t)(id - 1),
                           (uint16_t)wf,  false,                    false,
                           sd->inv,       (uint16_t)pl->invoke_len, (uint16_t)pl->args_indent,
                           (uint8_t)kind, named};
}

/* The entry [off, off + len) of workflow wf (its "- " at column E), its
 * bytes read where they are held, or read again. */
static void add_entry(side *sd, jobset *J, const lcur *c, size_t wf, size_t off, size_t len, size_t E)
{
    if (add_paired(sd, J, wf, off, len))
        return;
    const char *t;
    if (off >= c->bs && off + len <= c->bs + c->bn) {
        t = c->buf + (off - c->bs); /* still held */
    } else {
        if (len + 1 > sd->tcap) {
            free(sd->tmp);
            sd->tcap = 2 * (len + 1);
            sd->tmp = cg_xmalloc(sd->tcap);
        }
        sd->src->read(sd->src->ctx, off, sd->tmp, len);
        t = sd->tmp;
    }
    guess g = guess_of(J, t, len);
    size_t end;
    cg_report_plain pl;
    int kind = cg_report_entry_walk(t, len, false, E, &end, &pl);
    add_read(sd, J, wf, off, t, len, kind, &pl, &g);
}

/* The generated side, at the first line of an entry of workflow wf (its
 * "- " at column E): the committed side's entries that are the same bytes
 * from here on, one after the other in that workflow, each with enough of
 * the line after it to tell that it ends there (its indentation and first
 * character: E + 2 bytes), are the entries reading them would find; added
 * (paired, as add_entry adds them) without reading them, the cursor moved
 * past them.  False when there is none. */
static bool skip_same(side *sd, jobset *J, lcur *c, size_t wf, size_t E)
{
    size_t off = c->i;
    while (sd->r < sd->nruns && sd->runs[sd->r].new_at + sd->runs[sd->r].len <= off)
        sd->r++;
    if (sd->r == sd->nruns || off < sd->runs[sd->r].new_at)
        return false;
    const cg_report_run *run = &sd->runs[sd->r];
    const side *a = sd->other;
    size_t j = sd->j, end = off, run_end = run->new_at + run->len;
    while (j < a->n && a->v[j].off < off - run->new_at + run->old_at)
        j++;
    size_t first = j;
    for (; j < a->n; j++) {
        const ent *x = &a->v[j];
        if (x->off != end - run->new_at + run->old_at || x->wf != wf || end + x->len + E + 2 > run_end)
            break;
        end += x->len;
    }
    if (j == first)
        return false;
    for (size_t k = first, at = off; k < j; k++) {
        add_entry(sd, J, c, wf, at, a->v[k].len, E);
        at += a->v[k].len;
    }
    c->i = end;
    lc_hold(c);
    return true;
}

/* A side read on another thread (sd->ctl): says it is at `at`; true (and
 * the side given up) once it was asked to stop. */
static bool stopped(side *sd, size_t at)
{
    if (!sd->ctl)
        return false;
    atomic_store_explicit(&sd->ctl->at, at, memory_order_relaxed);
    if (!atomic_load_explicit(&sd->ctl->stop, memory_order_relaxed))
        return false;
    sd->bad = true;
    return true;
}

/* slice_workflows of report_slice.c, a line at a time: c is at the line
 * after `workflows:`, and is left at the block's end. */
static void scan_workflows(lcur *c, side *sd, jobset *J)
{
    cg_map names;
    cg_map_init(&names);
    lc_content(c);
    size_t W = lc_end(c) ? 0 : lc_indent(c), rest, kl;
    while (!lc_end(c) && !sd->bad) {
        if (lc_indent(c) != W || !(kl = lc_key(c, W, &rest))) {
            sd->bad = true;
            break;
        }
        const char *wname = cg_internn(&J->sh.pool, lc_text(c) + W, kl);
        if (cg_map_has(&names, wname)) {
            sd->bad = true;
            break;
        }
        cg_map_put(&names, wname, (void *)1);
        size_t wf = 0;
        while (wf < J->nwf && J->wf[wf] != wname)
            wf++;
        if (wf == J->nwf) {
            if (wf >= UINT16_MAX) {
                sd->bad = true;
                break;
            }
            cg_grow(&J->wf, &J->wcap, J->nwf + 1, sizeof *J->wf);
            J->wf[J->nwf++] = wname;
        }

        bool value = rest < lc_len(c) && lc_text(c)[rest] != '#';
        lc_next(c);
        if (value) {
            lc_deeper(c, W);
            continue;
        }
        lc_content(c);
        size_t W2 = lc_end(c) ? 0 : lc_indent(c);
        while (!lc_end(c) && !sd->bad) {
            size_t ind = lc_indent(c);
            if (ind <= W)
                break;
            if (ind != W2 || !(kl = lc_key(c, ind, &rest))) {
                sd->bad = true;
                break;
            }
            bool jobs = kl == 4 && memcmp(lc_text(c) + ind, "jobs", 4) == 0;
            value = rest < lc_len(c) && lc_text(c)[rest] != '#';
            lc_next(c);
            if (jobs && value) {
                sd->bad = true;
                break;
            }
            if (!jobs) {
                lc_deeper(c, W2);
                continue;
            }
            lc_content(c);
            size_t E = lc_end(c) ? 0 : lc_indent(c);
            while (!lc_end(c) && !sd->bad) {
                const char *t = lc_text(c);
                size_t n = lc_len(c);
                if (lc_indent(c) != E || E < W2 || t[E] != '-' || (E + 1 < n && t[E + 1] != ' '))
                    break;
                if (sd->other && skip_same(sd, J, c, wf, E))
                    continue;
                if (stopped(sd, c->i))
                    break;
                /* read where it is held, its end found as it is read */
                size_t start = c->i, held = c->bs + c->bn - start, len; /* (t: its bytes held) */
                guess g = guess_of(J, t, held);
                cg_report_plain pl;
                int kind = cg_report_entry_walk(t, held, c->bs + c->bn < c->src->len, E, &len, &pl);
                if (kind == 0) {
                    sd->bad = true; /* not plain: read as YAML, which slicing reads otherwise */
                    break;
                }
                if (kind > 0) {
                    if (!add_paired(sd, J, wf, start, len))
                        add_read(sd, J, wf, start, t, len, kind, &pl, &g);
                    c->i = start + len;
                    lc_hold(c);
                    continue;
                }
                /* longer than what is held: line by line */
                lc_next(c);
                lc_deeper(c, E);
                add_entry(sd, J, c, wf, start, c->i - start, E);
            }
        }
    }
    cg_map_release(&names);
}

/* The top-level keys (cg_report_slice): the `workflows:` block's entries. */
static void scan(side *sd, jobset *J)
{
    for (size_t k = 0; k < J->n; k++) /* (a workflow is read once a side) */
        J->v[k].last_wf = -1;
    lcur c = {sd->src, NULL, 0, 0, 0, 0, 0};
    lc_hold(&c);
    bool seen = false;
    while (!lc_eof(&c) && !sd->bad) {
        size_t rest, kl;
        if (stopped(sd, c.i))
            break;
        if (lc_text(&c)[0] == ' ' || lc_blank(&c) || !(kl = lc_key(&c, 0, &rest))) {
            lc_next(&c); /* (a line slicing refuses is refused again in what is compared) */
            continue;
        }
        if (kl != 9 || memcmp(lc_text(&c), "workflows", 9) != 0) {
            lc_next(&c);
            continue;
        }
        if (seen || (rest < lc_len(&c) && lc_text(&c)[rest] != '#')) {
            sd->bad = true;
            break;
        }
        seen = true;
        lc_next(&c);
        scan_workflows(&c, sd, J);
    }
    free(c.buf);
}

/* ---- the same entries, the jobs left out ---- */

/* Which jobs are left out: each entry the same as one on the other side,
 * as many on both, each workflow once (their index value made odd). */
static size_t choose(side *a, side *b, jobset *J)
{
    for (int s = 0; s < 2; s++) {
        side *sd = s ? b : a;
        for (size_t k = 0; k < sd->n; k++)
            J->v[sd->v[k].job].keep |= !sd->v[k].pair;
    }
    size_t n = 0;
    J->sh.left = cg_xcalloc(J->n + 1, sizeof *J->sh.left);
    for (size_t i = 0; i < J->n; i++) {
        jobinfo *ji = &J->v[i];
        J->sh.left[i] = !ji->keep && ji->na == ji->nb;
        n += J->sh.left[i];
    }
    for (int s = 0; s < 2; s++) {
        side *sd = s ? b : a;
        for (size_t k = 0; k < sd->n; k++) {
            const jobinfo *ji = &J->v[sd->v[k].job];
            sd->v[k].drop = !ji->keep && ji->na == ji->nb;
        }
    }
    return n;
}

/* The text without its workflow entries (the comparison reads those it
 * keeps where they are, cg_report_text): what slicing reads of it. */
static void compact(const side *sd, cg_strbuf *out)
{
    size_t at = 0, len = sd->src->len, total = len;
    for (size_t k = 0; k < sd->n; k++)
        total -= sd->v[k].len;
    cg_strbuf_init(out);
    cg_strbuf_grow(out, total);
    out->buf[0] = '\0';
    for (size_t k = 0; k <= sd->n; k++) {
        size_t upto = k < sd->n ? sd->v[k].off : len;
        if (upto > at) {
            cg_strbuf_grow(out, upto - at);
            sd->src->read(sd->src->ctx, at, out->buf + out->len, upto - at);
            out->len += upto - at;
            out->buf[out->len] = '\0';
        }
        if (k < sd->n)
            at = sd->v[k].off + sd->v[k].len;
    }
}

/* The entries kept, in order, where they were cut out of compact's text
 * and where they are in the side's source: what slicing it must find. */
static cg_report_known *known_of(const side *sd, const jobset *J, size_t *n)
{
    cg_report_known *v = cg_xmalloc((sd->n + 1) * sizeof *v);
    size_t cut = 0;
    *n = 0;
    for (size_t k = 0; k < sd->n; k++) {
        const ent *x = &sd->v[k];
        cut += x->len;
        if (x->drop)
            continue;
        v[(*n)++] = (cg_report_known){x->off - (cut - x->len), x->off,        x->len,         J->wf[x->wf],
                                      J->sh.name[x->job],      x->invoke,     x->inv_len,     x->args_indent,
                                      x->kind,                 x->named};
    }
    return v;
}

/* One side from its entries on: its text without its entries, the entries
 * it keeps, and its slicing (each side reads its own source). */
typedef struct slice_job {
    side *sd;
    const jobset *J;
    const char *what;
    const cg_diff_src *src2; /* the side's source for the comparison's second thread */
    cg_strbuf text;
    config *c;
    int rc;
} slice_job;

static void slice_one(void *v)
{
    slice_job *j = v;
    compact(j->sd, &j->text);
    size_t nk;
    cg_report_known *k = known_of(j->sd, j->J, &nk);
    free(j->sd->v);
    j->sd->v = NULL;
    j->rc = cg_report_slice_known(cg_strbuf_str(&j->text), j->text.len, j->what, k, nk, j->sd->src, j->src2, j->c);
    free(k);
}

/* The committed config's entries and jobs, read before the generated one
 * is known (report.h). */
struct cg_report_old {
    size_t len;          /* the length of the text read */
    jobset J;
    side a;
};

/* A workflow entry takes a few hundred bytes: room for the jobs of a text
 * of `len` bytes made at once (no table rehashed, no array copied on the
 * way there; an estimate, the tables grow past it). */
enum { BYTES_PER_ENTRY = 512 };

static void jobset_init(jobset *J, size_t len)
{
    memset(J, 0, sizeof *J);
    cg_pool_init(&J->sh.pool);
    cg_index_init(&J->sh.index, job_name, &J->sh);
    size_t n = len / BYTES_PER_ENTRY;
    if (n) {
        cg_index_reserve(&J->sh.index, n);
        cg_grow(&J->v, &J->cap, n, sizeof *J->v);
        cg_grow(&J->sh.name, &J->ncap, n, sizeof *J->sh.name);
    }
}

cg_report_old *cg_report_old_scan_ctl(const cg_diff_src *old_src, cg_report_scan_ctl *ctl)
{
    cg_report_old *o = cg_xcalloc(1, sizeof *o);
    o->len = old_src->len;
    bool readable = old_src->len <= UINT32_MAX;
    jobset_init(&o->J, readable ? old_src->len : 0);
    o->a = (side){old_src, 0, NULL, NULL, 0, 0, 0, NULL, 0, 0, false, NULL, 0, ctl, NULL, 0};
    if (readable) {
        cg_grow(&o->a.v, &o->a.cap, old_src->len / BYTES_PER_ENTRY + 1, sizeof *o->a.v);
        scan(&o->a, &o->J);
    } else {
        o->a.bad = true;
    }
    free(o->a.tmp);
    o->a.tmp = NULL, o->a.tcap = 0;
    o->a.src = NULL;
    o->a.ctl = NULL;
    if (ctl && o->a.bad && atomic_load(&ctl->stop)) { /* (bad because it stopped, maybe) */
        cg_report_old_free(o);
        return NULL;
    }
    if (ctl)
        atomic_store(&ctl->at, SIZE_MAX); /* done */
    return o;
}

cg_report_old *cg_report_old_scan(const cg_diff_src *old_src)
{
    return cg_report_old_scan_ctl(old_src, NULL);
}

void cg_report_old_free(cg_report_old *o)
{
    if (!o)
        return;
    free(o->a.v);
    free(o->J.v);
    free(o->J.wf);
    cg_index_release(&o->J.sh.index);
    free(o->J.sh.name);
    free(o->J.sh.left);
    cg_pool_release(&o->J.sh.pool);
    free(o);
}

bool cg_matrix_compare_src(const cg_diff_src *old_src, const cg_diff_src *new_src, const cg_diff_src *old_src2,
                           const cg_diff_src *new_src2, cg_report_run *runs, size_t nruns, const cg_model *p,
                           cg_run_both both, cg_report_old *pre, cg_matrix *m)
{
    memset(m, 0, sizeof *m);
    if (old_src->len > UINT32_MAX || new_src->len > UINT32_MAX) {
        cg_report_old_free(pre);
        free(runs);
        return false;
    }
    /* the committed config read already (the same length: the same text,
     * as every read again of it assumes), or read now */
    cg_report_old *o = pre && pre->len == old_src->len ? pre : NULL;
    if (!o) {
        cg_report_old_free(pre);
        o = cg_report_old_scan(old_src);
    }
    jobset *J = &o->J;
    side a = o->a;
    a.src = old_src;
    o->a.v = NULL;
    side b = {new_src, 1, &a, runs, nruns, 0, 0, NULL, 0, 0, false, NULL, 0, NULL, NULL, 0};
    if (!a.bad) {
        cg_grow(&b.v, &b.cap, new_src->len / BYTES_PER_ENTRY + 1, sizeof *b.v);
        scan(&b, J);
    }
    free(b.tmp);
    free(runs); /* (read) */
    b.runs = NULL, b.nruns = 0;
    bool ok = !a.bad && !b.bad;
    const char **names = NULL;
    if (ok) {
        size_t nnames = choose(&a, &b, J), k = 0;
        names = cg_xmalloc((nnames + 1) * sizeof *names);
        for (size_t i = 0; i < J->n; i++)
            if (J->sh.left[i])
                names[k++] = J->sh.name[i];
        /* from here on only what the comparison needs: the names, the
         * texts, the entries they hold */
        free(J->v);
        J->v = NULL;
        config ca, cb;
        slice_job ja = {&a, J, "config.yml (committed)", old_src2, CG_STRBUF_INIT, &ca, 0},
                  jb = {&b, J, "config.yml (generated)", new_src2, CG_STRBUF_INIT, &cb, 0};
        if (both) {
            both(slice_one, &ja, &jb);
        } else {
            slice_one(&ja);
            slice_one(&jb);
        }
        ok = ja.rc == 0 && jb.rc == 0;
        if (ok) {
            ca.shared = cb.shared = &J->sh;
            ca.shared_names = cb.shared_names = names;
            ca.nshared = cb.nshared = nnames;
            ok = cg_report_compare_configs(&ca, &cb, p, both, m) == 0;
        }
        cg_report_config_release(&ca);
        cg_report_config_release(&cb);
        cg_strbuf_release(&ja.text);
        cg_strbuf_release(&jb.text);
    }
    free(names);
    free(a.v);
    free(b.v);
    cg_report_old_free(o);
    if (!ok)
        cg_matrix_release(m);
    return ok;
}
