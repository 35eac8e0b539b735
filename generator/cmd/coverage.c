/* cigen coverage — does a tier cover every pair of values? */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "cmd/cli.h"
#include "model/pairwise.h"

/* The dimensions to pair: the tier's own (pairwise), --dims, or all; dims
 * has room for every dimension of the tree (--dims names each once). */
static size_t coverage_dims(const cg_tree *t, const cg_tier *tier, const char *spec, int *dims, cg_error *err)
{
    size_t n = 0;
    if (tier->kind == CG_TIER_PAIRWISE && !spec) {
        memcpy(dims, tier->dims, tier->ndims * sizeof *dims);
        return tier->ndims;
    }
    if (!spec) {
        for (size_t d = 0; d < t->ndims; d++)
            dims[n++] = (int)d;
        return n;
    }
    char *copy = cg_xstrdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int id = cg_tree_name_id(t, tok);
        if (!cg_tree_is_dim(t, id)) {
            cg_strbuf hint = CG_STRBUF_INIT;
            const char *s = cg_suggest(tok, t->dims, t->ndims);
            if (s)
                cg_strbuf_addf(&hint, " (did you mean '%s'?)", s);
            cg_error_plain(err, "tree '%s' has no dimension '%s'%s", t->name, tok, cg_strbuf_str(&hint));
            cg_strbuf_release(&hint);
            free(copy);
            return (size_t)-1;
        }
        for (size_t i = 0; i < n; i++)
            if (dims[i] == id) {
                cg_error_plain(err, "--dims names '%s' twice", tok);
                free(copy);
                return (size_t)-1;
            }
        dims[n++] = id;
    }
    free(copy);
    if (n < 2)
        return cg_error_plain(err, "--dims wants two dimensions or more (a pair is two values of two "
                              "dimensions), not '%s'", spec), (size_t)-1;
    return n;
}

static bool pinned_cell(const cg_tier *tier, const cg_cell *cell, cg_env *env)
{
    if (tier->kind != CG_TIER_PAIRWISE || cg_env_bind(env, cell) != 0)
        return false;
    for (size_t k = 0; k < tier->ncells; k++)
        if (cg_pattern_matches(tier->cells[k], env))
            return true;
    return false;
}

/* "python=3.8 + cuda=cu101": a pair, as the report names it (into sb, reset first). */
static void pair_text(cg_strbuf *sb, const cg_tree *t, const cg_pair *m)
{
    cg_strbuf_reset(sb);
    cg_strbuf_addf(sb, "%s=%s + %s=%s", t->dims[m->d1], m->v1, t->dims[m->d2], m->v2);
}

/* What the report of one tier says, however it was found: from the whole
 * model (tier_from_model) or from a walk of the cells (struct tier_walk). */
typedef struct tier_report {
    const cg_tree *t;
    const cg_tier *tier;
    const int *dims;
    size_t nd;
    size_t nsel, nlive;
    double cost;               /* when tier->ncosts */
    char **cell;               /* [nsel]: the selected cells, described */
    bool *pinned;              /* [nsel] */
    const cg_pair *pairs;      /* the reachable pairs, in the order of cg_coverage */
    size_t npairs;
    const size_t *by;          /* [npairs]: the selected cell (its place + 1) that covers it first, or 0 */
} tier_report;

/* Writes out to `to` and empties it, once it holds 64 KB (to NULL: keeps it
 * all, for a report an error may still replace). */
static void spill(cg_strbuf *out, FILE *to)
{
    if (to && out->len >= 65536) {
        fwrite(out->buf, 1, out->len, to);
        cg_strbuf_reset(out);
    }
}

static int print_tier(const tier_report *r, bool json, json_t *arr, cg_strbuf *out, FILE *to)
{
    const cg_tree *t = r->t;
    const cg_tier *tier = r->tier;
    size_t covered = 0;
    for (size_t i = 0; i < r->npairs; i++)
        covered += r->by[i] != 0;
    size_t nmissing = r->npairs - covered;
    json_t *o = json ? json_object() : NULL;
    json_t *jcells = json ? json_array() : NULL, *jmissing = json ? json_array() : NULL, *jdims = NULL;
    if (json) {
        json_object_set_new(o, "tree", json_string(t->name));
        json_object_set_new(o, "tier", json_string(tier->name));
        json_object_set_new(o, "kind", json_string(tier->kind == CG_TIER_PAIRWISE ? "pairwise" :
                                                   tier->kind == CG_TIER_ALL ? "all" :
                                                   tier->kind == CG_TIER_NONE ? "none" : "cells"));
        jdims = json_array();
        for (size_t i = 0; i < r->nd; i++)
            json_array_append_new(jdims, json_string(t->dims[r->dims[i]]));
        json_object_set_new(o, "dimensions", jdims);
        json_object_set_new(o, "reachable_pairs", json_integer((json_int_t)r->npairs));
        json_object_set_new(o, "covered_pairs", json_integer((json_int_t)covered));
        json_object_set_new(o, "live_cells", json_integer((json_int_t)r->nlive));
        if (tier->ncosts)
            json_object_set_new(o, "cost", json_real(r->cost));
    } else {
        cg_strbuf_addf(out, "tree %s, tier %s (%s over", t->name, tier->name,
                       tier->kind == CG_TIER_PAIRWISE ? "pairwise" : tier->kind == CG_TIER_ALL ? "all cells" :
                       tier->kind == CG_TIER_NONE ? "no cells" : "listed cells");
        for (size_t i = 0; i < r->nd; i++)
            cg_strbuf_addf(out, "%s %s", i ? "," : "", t->dims[r->dims[i]]);
        cg_strbuf_addf(out, ")\n  pairs covered: %zu/%zu\n  cells: %zu of %zu live cells", covered, r->npairs,
                       r->nsel, r->nlive);
        if (tier->ncosts)
            cg_strbuf_addf(out, ", cost %g", r->cost);
        cg_strbuf_addc(out, '\n');
    }
    for (size_t c = 0; c < r->nsel; c++) {
        if (json) {
            json_t *x = json_object();
            json_object_set_new(x, "cell", json_string(r->cell[c]));
            json_object_set_new(x, "pinned", json_boolean(r->pinned[c]));
            json_array_append_new(jcells, x);
        } else {
            cg_strbuf_addf(out, "    %s%s\n", r->cell[c], r->pinned[c] ? "  (pinned)" : "");
            spill(out, to);
        }
    }
    /* the proof: each covered pair, and the first selected cell that has it */
    json_t *jpairs = json ? json_array() : NULL;
    if (covered && !json)
        cg_strbuf_addf(out, "  covered pairs (%zu):\n", covered);
    cg_strbuf line = CG_STRBUF_INIT;
    for (size_t i = 0; i < r->npairs; i++) {
        if (!r->by[i])
            continue;
        pair_text(&line, t, &r->pairs[i]);
        const char *cell = r->cell[r->by[i] - 1];
        if (json) {
            json_t *x = json_object();
            json_object_set_new(x, "pair", json_string(line.buf));
            json_object_set_new(x, "cell", json_string(cell));
            json_array_append_new(jpairs, x);
        } else {
            cg_strbuf_addf(out, "    %-40s by %s\n", line.buf, cell);
            spill(out, to);
        }
    }
    if (nmissing && !json)
        cg_strbuf_addf(out, "  missing pairs (%zu):\n", nmissing);
    for (size_t i = 0; i < r->npairs; i++) {
        if (r->by[i])
            continue;
        pair_text(&line, t, &r->pairs[i]);
        if (json)
            json_array_append_new(jmissing, json_string(line.buf));
        else
            cg_strbuf_addf(out, "    %s\n", line.buf), spill(out, to);
    }
    cg_strbuf_release(&line);
    if (json) {
        json_object_set_new(o, "cells", jcells);
        json_object_set_new(o, "covered", jpairs);
        json_object_set_new(o, "missing", jmissing);
        json_array_append_new(arr, o);
    }
    return nmissing ? 1 : 0;
}

/* The cost of the selected cells: per cell, the product of the matching rules. */
static double cell_cost(const cg_tier *tier, cg_env *env)
{
    double cost = 1;
    for (size_t r = 0; r < tier->ncosts; r++)
        if (cg_pattern_matches(tier->costs[r], env))
            cost *= tier->cost_values[r];
    return cost;
}

/* A tier's report from the whole model. */
static int tier_from_model(cg_project *p, size_t ti, size_t k, const int *dims, size_t nd, bool json, json_t *arr,
                           cg_strbuf *out, cg_error *err)
{
    const cg_tree *t = p->m.trees[ti];
    const cg_tier *tier = &t->tiers[k];
    const cg_cells *cells = &p->m.cells[ti];
    bool *selected = cg_xcalloc(cells->n + 1, sizeof *selected);
    size_t *place = cg_xcalloc(cells->n + 1, sizeof *place);
    tier_report r = {.t = t, .tier = tier, .dims = dims, .nd = nd, .nlive = cells->nlive};
    r.cell = cg_xcalloc(cells->n + 1, sizeof *r.cell);
    r.pinned = cg_xcalloc(cells->n + 1, sizeof *r.pinned);
    cg_env env;
    cg_env_init(&env, t, err);
    for (size_t c = 0; c < cells->n; c++) {
        /* a removed cell has no job: a node's tier does not select it */
        if (cells->v[c].status != CG_CELL_LIVE || !(cells->v[c].tiers & ((uint64_t)1 << k)))
            continue;
        selected[c] = true;
        place[c] = r.nsel + 1;
        cg_strbuf d = CG_STRBUF_INIT;
        cg_cell_describe(t, &cells->v[c], &d);
        r.cell[r.nsel] = cg_strbuf_detach(&d, NULL);
        r.pinned[r.nsel] = pinned_cell(tier, &cells->v[c], &env);
        r.nsel++;
    }
    for (size_t c = 0; c < cells->n && tier->ncosts; c++)
        if (selected[c] && cg_env_bind(&env, &cells->v[c]) == 0)
            r.cost += cell_cost(tier, &env);
    cg_coverage cov;
    cg_coverage_compute(t, cells, dims, nd, selected, &cov);
    /* back in the order of the pairs: covered and missing ones each keep it */
    r.npairs = cov.reachable;
    cg_pair *pairs = cg_xcalloc(r.npairs + 1, sizeof *pairs);
    size_t *by = cg_xcalloc(r.npairs + 1, sizeof *by);
    for (size_t i = 0; i < cov.covered; i++)
        pairs[i] = cov.pairs[i], by[i] = place[cov.by[i]];
    for (size_t i = 0; i < cov.nmissing; i++)
        pairs[cov.covered + i] = cov.missing[i];
    r.pairs = pairs;
    r.by = by;
    int rc = print_tier(&r, json, arr, out, NULL);
    for (size_t c = 0; c < r.nsel; c++)
        free(r.cell[c]);
    free(r.cell);
    free(r.pinned);
    free(pairs);
    free(by);
    cg_env_release(&env);
    cg_coverage_release(&cov);
    free(selected);
    free(place);
    return rc;
}

/* ---- coverage from a walk of the cells (model/walk.h): only the pair
 * tables and the selected cells are kept, never the matrix ---- */

typedef struct tier_walk {
    size_t ti, k;
    int *dims;
    size_t nd;                 /* (size_t)-1: --dims is wrong for the tree */
    cg_error err;              /* why (report_tier says it again) */
    tier_report r;
    cg_pair *pairs;
    size_t *by;
    size_t npairs, cap, by_cap, cell_cap;
    uint32_t *slot;            /* open addressing: pair + 1, 0 empty */
    size_t nslots;
} tier_walk;

typedef struct cov_walk {
    const char *want_tree, *want_tier, *dims;
    tier_walk *v;
    size_t n, cap, first;      /* v[first..n): the tiers of the tree being walked */
} cov_walk;

/* Whether tier k is reported (and how the whole-model loop picks it). */
static bool reported(const cg_tree *t, size_t k, const char *want_tree, const char *want_tier)
{
    const cg_tier *tier = &t->tiers[k];
    if (want_tree && !cg_streq(t->name, want_tree))
        return false;
    if (tier->kind == CG_TIER_NONE) /* the tree takes no part: nothing to cover */
        return false;
    return want_tier ? cg_streq(tier->name, want_tier) : tier->kind != CG_TIER_ALL;
}

/* The pairs' table: a pair's number (+ 1) by its dimensions and values,
 * without a key string per pair (a large matrix has tens of thousands). */
static uint64_t pair_hash(const cg_pair *p)
{
    uint64_t h = cg_hash(p->v1, strlen(p->v1)) * 0x9e3779b97f4a7c15u;
    h ^= cg_hash(p->v2, strlen(p->v2)) + ((uint64_t)(unsigned)p->d1 << 32) + (uint64_t)(unsigned)p->d2;
    return h ^ (h >> 29);
}

/* Whether the pair is in the table; *at is its slot, or the empty one it
 * would take. */
static bool pair_slot(const tier_walk *w, const cg_pair *p, size_t *at)
{
    size_t mask = w->nslots - 1;
    for (size_t i = (size_t)pair_hash(p) & mask;; i = (i + 1) & mask) {
        uint32_t k = w->slot[i];
        *at = i;
        if (!k)
            return false;
        const cg_pair *q = &w->pairs[k - 1];
        if (q->d1 == p->d1 && q->d2 == p->d2 && cg_streq(q->v1, p->v1) && cg_streq(q->v2, p->v2))
            return true;
    }
}

static size_t pair_find(const tier_walk *w, const cg_pair *p)
{
    size_t at;
    return w->nslots && pair_slot(w, p, &at) ? w->slot[at] : 0;
}

static size_t pair_add(tier_walk *w, const cg_pair *p)
{
    if ((w->npairs + 1) * 2 > w->nslots) {
        free(w->slot);
        w->nslots = w->nslots ? 2 * w->nslots : 64;
        w->slot = cg_xcalloc(w->nslots, sizeof *w->slot);
        for (size_t i = 0; i < w->npairs; i++) {
            size_t at;
            pair_slot(w, &w->pairs[i], &at);
            w->slot[at] = (uint32_t)(i + 1);
        }
    }
    cg_grow(&w->pairs, &w->cap, w->npairs + 1, sizeof *w->pairs);
    cg_grow(&w->by, &w->by_cap, w->npairs + 1, sizeof *w->by);
    w->pairs[w->npairs] = *p;
    w->by[w->npairs] = 0;
    size_t at;
    pair_slot(w, p, &at);
    w->slot[at] = (uint32_t)(w->npairs + 1);
    return ++w->npairs;
}

static void walk_tree(void *ctx, const cg_tree *t)
{
    cov_walk *C = ctx;
    C->first = C->n;
    for (size_t k = 0; k < t->ntiers; k++) {
        if (!reported(t, k, C->want_tree, C->want_tier))
            continue;
        cg_grow(&C->v, &C->cap, C->n + 1, sizeof *C->v);
        tier_walk *w = &C->v[C->n++];
        memset(w, 0, sizeof *w);
        w->ti = t->index;
        w->k = k;
        cg_error_init(&w->err);
        w->dims = cg_xcalloc(t->ndims + 1, sizeof *w->dims);
        w->nd = coverage_dims(t, &t->tiers[k], C->dims, w->dims, &w->err);
        w->r = (tier_report){.t = t, .tier = &t->tiers[k], .dims = w->dims, .nd = w->nd};
    }
}

static int walk_cell(void *ctx, const cg_tree *t, const cg_cell *cell, cg_env *env)
{
    cov_walk *C = ctx;
    bool live = cell->status == CG_CELL_LIVE;
    for (size_t i = C->first; i < C->n; i++) {
        tier_walk *w = &C->v[i];
        if (w->nd == (size_t)-1)
            continue;
        size_t place = 0;
        w->r.nlive += live;
        if (live && (cell->tiers & ((uint64_t)1 << w->k))) {
            cg_grow(&w->r.cell, &w->cell_cap, w->r.nsel + 1, sizeof *w->r.cell);
            w->r.pinned = cg_xrealloc(w->r.pinned, w->cell_cap * sizeof *w->r.pinned);
            cg_strbuf d = CG_STRBUF_INIT;
            cg_cell_describe(t, cell, &d);
            w->r.cell[w->r.nsel] = cg_strbuf_detach(&d, NULL);
            w->r.pinned[w->r.nsel] = false; /* pinned cells are a pairwise tier's: never walked */
            place = ++w->r.nsel;
            if (w->r.tier->ncosts)
                w->r.cost += cell_cost(w->r.tier, env);
        }
        if (!live)
            continue;
        /* the pairs of the cell, numbered in the order they first occur */
        for (size_t a = 0; a < w->nd; a++)
            for (size_t b = a + 1; b < w->nd; b++) {
                int d1 = w->dims[a] < w->dims[b] ? w->dims[a] : w->dims[b];
                int d2 = w->dims[a] < w->dims[b] ? w->dims[b] : w->dims[a];
                const char *v1 = cell->values[d1], *v2 = cell->values[d2];
                if (!v1 || !v2)
                    continue;
                cg_pair pr = {d1, d2, v1, v2};
                size_t n = pair_find(w, &pr);
                if (!n)
                    n = pair_add(w, &pr);
                if (place && !w->by[n - 1])
                    w->by[n - 1] = place;
            }
    }
    return 0;
}

static void tier_walk_release(tier_walk *w)
{
    for (size_t c = 0; c < w->r.nsel; c++)
        free(w->r.cell[c]);
    free(w->r.cell);
    free(w->r.pinned);
    free(w->pairs);
    free(w->by);
    free(w->dims);
    free(w->slot);
    cg_error_release(&w->err);
}

/* Reports tier k of tree ti: from the walk when there was one, else from
 * the whole model.  1 when a pair is missing, -1 after an error. */
static int report_tier(cg_project *p, const cov_walk *C, size_t ti, size_t k, const char *dims_spec, bool json,
                       json_t *arr, cg_strbuf *out, FILE *to, cg_error *err)
{
    if (C) {
        for (size_t i = 0; i < C->n; i++) {
            tier_walk *w = &C->v[i];
            if (w->ti != ti || w->k != k)
                continue;
            if (w->nd == (size_t)-1)
                break; /* --dims is wrong for the tree: said below */
            w->r.pairs = w->pairs;
            w->r.by = w->by;
            w->r.npairs = w->npairs;
            return print_tier(&w->r, json, arr, out, to);
        }
    }
    const cg_tree *t = p->m.trees[ti];
    int *dims = cg_xcalloc(t->ndims + 1, sizeof *dims);
    size_t nd = coverage_dims(t, &t->tiers[k], dims_spec, dims, err);
    int rc = nd == (size_t)-1 ? -1 : tier_from_model(p, ti, k, dims, nd, json, arr, out, err);
    free(dims);
    return rc;
}

int cg_cmd_coverage(const cg_global *g0, int argc, char **argv)
{
    cg_global local = *g0, *g = &local;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"tier", required_argument, NULL, 't'},
                                             {"tree", required_argument, NULL, 'T'},
                                             {"dims", required_argument, NULL, 'd'},
                                             {"json", no_argument, NULL, 'j'},
                                             CG_GLOBAL_LONGOPTS,
                                             {0}};
    const char *want_tier = NULL, *want_tree = NULL, *dims = NULL;
    bool json = false;
    int c;
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqv", longopts)) != -1) {
        switch (c) {
        case 'h':
            puts("usage: cigen coverage [--tier NAME] [--tree NAME] [--dims A,B,...] [--json]\n\n"
                 "For each tier that selects cells (pairwise or an explicit list), prints how many\n"
                 "of the reachable pairs of values it covers (a pair is two values of two dimensions\n"
                 "that occur together in some live cell), the cells it selects, each pair it covers\n"
                 "with the first selected cell that has it (\"os=linux + cuda=cu90  by CELL\"), and the pairs it\n"
                 "misses.  Pairwise tiers are checked over their own dimensions, explicit lists over\n"
                 "every dimension of the tree (or --dims).\n\n"
                 "Exit status: 0 every reachable pair covered, 1 some pair missing, 2 error.");
            return 0;
        case 't': want_tier = optarg; break;
        case 'T': want_tree = optarg; break;
        case 'd': dims = optarg; break;
        case 'j': json = true; break;
        default: return CG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: coverage takes no arguments ('%s')\n", cg_cli_shown(argv[optind]));
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    /* walk the cells, keeping the pair tables only; the whole model when
     * the walk cannot give the same report (model/walk.h) */
    cov_walk C = {.want_tree = want_tree, .want_tier = want_tier, .dims = dims};
    cg_walker walker = {.tree = walk_tree, .cell = walk_cell, .ctx = &C};
    bool walked = cg_cli_build_walk(g, &p, &walker) == 0;
    if (walked)
        cg_cli_warnings(g, &p);
    int rc = walked ? 0 : cg_cli_build(g, &p, false);
    if (rc != 0) {
        cg_project_release(&p);
        return rc;
    }
    cg_error err;
    cg_error_init(&err);
    cg_strbuf out = CG_STRBUF_INIT;
    json_t *arr = json ? json_array() : NULL;
    size_t reported = 0;
    bool missing = false;
    /* from a walk with every --dims right, no error can follow the first
     * line: the text goes out as it is made, not kept whole */
    FILE *to = walked && !json ? stdout : NULL;
    for (size_t i = 0; i < C.n && to; i++)
        if (C.v[i].nd == (size_t)-1)
            to = NULL;
    for (size_t ti = 0; ti < p.m.ntrees && rc == 0; ti++) {
        const cg_tree *t = p.m.trees[ti];
        if (want_tree && !cg_streq(t->name, want_tree))
            continue;
        for (size_t k = 0; k < t->ntiers && rc == 0; k++) {
            const cg_tier *tier = &t->tiers[k];
            if (tier->kind == CG_TIER_NONE) /* the tree takes no part: nothing to cover */
                continue;
            if (want_tier ? !cg_streq(tier->name, want_tier) : tier->kind == CG_TIER_ALL)
                continue;
            int r = report_tier(&p, walked ? &C : NULL, ti, k, dims, json, arr, &out, to, &err);
            if (r < 0)
                rc = CG_EXIT_ERROR;
            missing = missing || r == 1;
            reported++;
        }
    }
    if (rc == 0 && reported == 0) {
        cg_error_plain(&err, want_tier ? "no tree has a tier named '%s'" : "no tier selects cells (nothing to check)%s",
                       want_tier ? want_tier : "");
        rc = CG_EXIT_ERROR;
    }
    if (rc == CG_EXIT_ERROR) {
        cg_cli_print_error(&err);
    } else {
        if (json) {
            json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            putchar('\n');
        } else {
            fputs(cg_strbuf_str(&out), stdout);
        }
        rc = missing ? CG_EXIT_DIFF : 0;
    }
    if (arr)
        json_decref(arr);
    cg_strbuf_release(&out);
    cg_error_release(&err);
    for (size_t i = 0; i < C.n; i++)
        tier_walk_release(&C.v[i]);
    free(C.v);
    cg_project_release(&p);
    return rc;
}
