#include "model/expand.h"

#include <stdlib.h>
#include <string.h>

#include "model/tiers.h"

/* ---- expansion ---- */

typedef struct walk {
    cg_tree *t;
    cg_pool *pool;
    cg_cells *out;
    cg_env env;
    cg_error *err;
    const char **values;          /* [ndims] */
    const cg_vardecl **zstack;
    size_t nz, zcap;
    const cg_tnode **scope;       /* nodes on the path, root first */
    size_t nscope;
    struct filter_index *fx;      /* [nnodes * 2]: each node's exclude, only */
    uint32_t *cand;               /* candidates of one list, for one cell */
    size_t cand_cap;
    cg_strbuf key;
    uint64_t tiers;
    /* cg_expand_each: no `out`; each cell is made in `scratch`, handed to fn */
    cg_cell scratch;
    cg_cell_fn fn;
    void *ctx;
    size_t n, nlive;
    const cg_pattern *by;         /* what removed every removed cell so far, or NULL */
} walk;

static cg_cell *new_cell(walk *W, const cg_tnode *leaf, bool extra)
{
    cg_cells *c = W->out;
    if (!c) {
        cg_cell *cell = &W->scratch;
        memset(cell, 0, sizeof *cell);
        cell->index = (uint32_t)W->n++;
        cell->leaf = leaf;
        cell->extra = extra;
        cell->values = W->values;
        cell->zvars = W->nz ? W->zstack : NULL;
        cell->nzvars = (uint32_t)W->nz;
        cell->tiers = W->tiers;
        return cell;
    }
    cg_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v);
    cg_cell *cell = &c->v[c->n];
    memset(cell, 0, sizeof *cell);
    cell->index = (uint32_t)c->n++;
    cell->leaf = leaf;
    cell->extra = extra;
    size_t nd = W->t->ndims;
    cell->values = cg_pool_alloc(W->pool, nd * sizeof *cell->values);
    memcpy(cell->values, W->values, nd * sizeof *cell->values);
    if (W->nz) {
        cell->zvars = cg_pool_alloc(W->pool, W->nz * sizeof *cell->zvars);
        memcpy(cell->zvars, W->zstack, W->nz * sizeof *cell->zvars);
        cell->nzvars = (uint32_t)W->nz;
    }
    cell->tiers = W->tiers;
    return cell;
}

/* The patterns of one `exclude` or `only` list by value: a pattern with an
 * item that is one literal value (no glob character, not negated) can only
 * match a cell that has that value, so it is filed under it; the others
 * are tried on every cell.  So 20,000 patterns over 100,000 cells cost a
 * lookup per cell, not 2 billion matches (issue 21). */
typedef struct filter_index {
    bool built;
    cg_map by_value;              /* "id\x1fvalue" -> list + 1 */
    struct { uint32_t *v; size_t n, cap; } *lists;
    size_t nlists, lists_cap;
    int *ids;                     /* the names patterns are filed by */
    size_t nids;
    uint32_t *general;            /* patterns tried on every cell */
    size_t ngeneral;
    cg_pool pool;
} filter_index;

static bool literal_item(const cg_match *m)
{
    return !m->absent && m->nglobs == 1 && m->globs[0].kind == CG_GLOB_TEXT && !m->globs[0].negate &&
           !strpbrk(m->globs[0].text, "*?[\\");
}

static void index_build(walk *W, filter_index *fx, cg_pattern **pats, size_t n)
{
    fx->built = true;
    cg_map_init(&fx->by_value);
    cg_pool_init(&fx->pool);
    fx->ids = cg_xcalloc(W->t->nnames + 1, sizeof *fx->ids);
    fx->general = cg_xcalloc(n + 1, sizeof *fx->general);
    bool *have = cg_xcalloc(W->t->nnames + 1, sizeof *have);
    for (size_t i = 0; i < n; i++) {
        const cg_match *key = NULL;
        for (size_t k = 0; k < pats[i]->nitems && !key; k++)
            if (literal_item(&pats[i]->items[k]) && pats[i]->items[k].id >= 0 &&
                (size_t)pats[i]->items[k].id < W->t->nnames)
                key = &pats[i]->items[k];
        if (!key) {
            fx->general[fx->ngeneral++] = (uint32_t)i;
            continue;
        }
        if (!have[key->id]) {
            have[key->id] = true;
            fx->ids[fx->nids++] = key->id;
        }
        cg_strbuf_reset(&W->key);
        cg_strbuf_addf(&W->key, "%d\x1f%s", key->id, key->globs[0].text);
        size_t l = (size_t)cg_map_get(&fx->by_value, W->key.buf);
        if (!l) {
            cg_grow(&fx->lists, &fx->lists_cap, fx->nlists + 1, sizeof *fx->lists);
            memset(&fx->lists[fx->nlists], 0, sizeof *fx->lists);
            cg_map_put(&fx->by_value, cg_intern(&fx->pool, W->key.buf), (void *)(fx->nlists + 1));
            l = ++fx->nlists;
        }
        cg_grow(&fx->lists[l - 1].v, &fx->lists[l - 1].cap, fx->lists[l - 1].n + 1, sizeof *fx->lists[l - 1].v);
        fx->lists[l - 1].v[fx->lists[l - 1].n++] = (uint32_t)i;
    }
    free(have);
}

static void index_release(filter_index *fx)
{
    if (!fx->built)
        return;
    for (size_t i = 0; i < fx->nlists; i++)
        free(fx->lists[i].v);
    free(fx->lists);
    free(fx->ids);
    free(fx->general);
    cg_map_release(&fx->by_value);
    cg_pool_release(&fx->pool);
}

static int by_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The patterns of the list that may match the bound cell, in list order
 * (W->cand); their number. */
static size_t candidates(walk *W, filter_index *fx, cg_pattern **pats, size_t n)
{
    if (!fx->built)
        index_build(W, fx, pats, n);
    cg_grow(&W->cand, &W->cand_cap, n + 1, sizeof *W->cand);
    size_t nc = 0;
    for (size_t i = 0; i < fx->ngeneral; i++)
        W->cand[nc++] = fx->general[i];
    for (size_t k = 0; k < fx->nids; k++) {
        const char *v;
        size_t vl;
        bool typed;
        if (cg_env_get(&W->env, fx->ids[k], &v, &vl, &typed) != 1)
            continue;
        cg_strbuf_reset(&W->key);
        cg_strbuf_addf(&W->key, "%d\x1f", fx->ids[k]);
        cg_strbuf_add(&W->key, v, vl);
        size_t l = (size_t)cg_map_getn(&fx->by_value, W->key.buf, W->key.len);
        if (l)
            for (size_t j = 0; j < fx->lists[l - 1].n; j++)
                W->cand[nc++] = fx->lists[l - 1].v[j];
    }
    if (nc > 1)
        qsort(W->cand, nc, sizeof *W->cand, by_index);
    return nc;
}

static void apply_filters(walk *W, cg_cell *cell)
{
    for (size_t s = 0; s < W->nscope; s++) {
        const cg_tnode *n = W->scope[s];
        if (!n->nexclude)
            continue;
        size_t nc = candidates(W, &W->fx[2 * n->index], n->exclude, n->nexclude);
        for (size_t c = 0; c < nc; c++) {
            cg_pattern *p = n->exclude[W->cand[c]];
            if (cg_pattern_matches(p, &W->env)) {
                p->hits++;
                if (cell->status == CG_CELL_LIVE) {
                    cell->status = CG_CELL_EXCLUDED;
                    cell->removed_by = p;
                    cell->removed_at = n;
                }
            }
        }
    }
    /* the patterns of one `only` are alternatives; each scope's `only` applies */
    for (size_t s = 0; s < W->nscope; s++) {
        const cg_tnode *n = W->scope[s];
        bool kept = n->nonly == 0;
        size_t nc = n->nonly ? candidates(W, &W->fx[2 * n->index + 1], n->only, n->nonly) : 0;
        for (size_t c = 0; c < nc; c++) {
            cg_pattern *p = n->only[W->cand[c]];
            if (cg_pattern_matches(p, &W->env)) {
                p->hits++;
                kept = true;
            }
        }
        if (!kept && cell->status == CG_CELL_LIVE) {
            cell->status = CG_CELL_NOT_ONLY;
            cell->removed_by = n->only[0];
            cell->removed_at = n;
        }
    }
}

static int filter_cell(walk *W, cg_cell *cell)
{
    if (cg_env_bind(&W->env, cell) != 0)
        return -1;
    if (!cell->extra)
        apply_filters(W, cell);
    if (cell->status == CG_CELL_LIVE)
        for (size_t a = 0; a < W->env.napplied; a++)
            ((cg_override *)W->env.applied[a])->when->hits++;
    return W->err->set ? -1 : 0;
}

static int visit(walk *W, const cg_tnode *node);

static int visit_bound(walk *W, const cg_tnode *node)
{
    if (node->nchildren == 0) {
        bool extra = node->extra;
        cg_cell *cell = new_cell(W, node, extra);
        if (filter_cell(W, cell) != 0)
            return -1;
        if (!W->fn)
            return 0;
        if (cell->status == CG_CELL_LIVE)
            W->nlive++;
        else if (cell->index == 0 || (W->by && W->by != cell->removed_by))
            W->by = cell->index == 0 ? cell->removed_by : NULL;
        return W->fn(W->ctx, cell, &W->env);
    }
    for (size_t i = 0; i < node->nchildren; i++)
        if (visit(W, node->children[i]) != 0)
            return -1;
    return 0;
}

/* Multiplies the node's factors (fans and the zip) in dimension order. */
static int visit_factors(walk *W, const cg_tnode *node, size_t fan, bool zip_done)
{
    /* the zip goes before the first fan whose dimension comes after it */
    if (node->zip && !zip_done && (fan == node->nfans || node->zip->order < node->fans[fan].dim)) {
        const cg_zip *z = node->zip;
        for (size_t b = 0; b < z->n; b++) {
            size_t pushed = 0;
            for (size_t c = 0; c < z->nnames; c++) {
                const cg_vardecl *cell = &z->cells[b * z->nnames + c];
                if (cg_tree_is_dim(W->t, cell->id)) {
                    W->values[cell->id] = cell->raw;
                } else {
                    cg_grow(&W->zstack, &W->zcap, W->nz + 1, sizeof *W->zstack);
                    W->zstack[W->nz++] = cell;
                    pushed++;
                }
            }
            int rc = visit_factors(W, node, fan, true);
            W->nz -= pushed;
            for (size_t c = 0; c < z->nnames; c++)
                if (cg_tree_is_dim(W->t, z->ids[c]))
                    W->values[z->ids[c]] = NULL;
            if (rc != 0)
                return -1;
        }
        return 0;
    }
    if (fan == node->nfans)
        return visit_bound(W, node);
    const cg_fan *f = &node->fans[fan];
    for (size_t i = 0; i < f->n; i++) {
        W->values[f->dim] = f->values[i];
        if (visit_factors(W, node, fan + 1, zip_done) != 0)
            return -1;
    }
    W->values[f->dim] = NULL;
    return 0;
}

static int visit(walk *W, const cg_tnode *node)
{
    uint64_t saved_tiers = W->tiers;
    for (size_t i = 0; i < node->ntiers; i++)
        W->tiers |= (uint64_t)1 << node->tiers[i];
    W->scope[W->nscope++] = node;
    int rc = visit_factors(W, node, 0, false);
    W->nscope--;
    W->tiers = saved_tiers;
    return rc;
}

static int report_unmatched(cg_tree *t, bool strict, cg_warnings *warn, cg_error *err)
{
    for (size_t i = 0; i < t->npatterns; i++) {
        const cg_pattern *p = t->patterns[i];
        /* tiers must match (an error, in assign_tiers); skips are counted with the jobs */
        if (p->hits || cg_streq(p->kind, "tier") || cg_streq(p->kind, "cost") || cg_streq(p->kind, "skip") ||
            cg_streq(p->kind, "phase only") || p->names_phase) /* (the last two: counted per job) */
            continue;
        const char *why = cg_streq(p->kind, "only") ? " (a typo? cells must match one 'only' pattern of their scope)" : "";
        if (strict)
            return cg_error_at(err, &p->pos, "%s pattern %s matches no cell%s", p->kind, p->text, why);
        cg_warn_at(warn, &p->pos, "%s pattern %s matches no cell%s", p->kind, p->text, why);
    }
    return 0;
}

/* Every cell the tree spells out is filtered away: almost always a mistake. */
static int report_all_removed(const cg_tree *t, const cg_pattern *by, bool strict, cg_warnings *warn,
                              cg_error *err)
{
    cg_pos pos = by ? by->pos : t->dim_pos[0];
    char what[256];
    if (by)
        snprintf(what, sizeof what, "%s pattern %s removes every cell", by->kind, by->text);
    else
        snprintf(what, sizeof what, "the 'exclude' and 'only' patterns remove every cell");
    if (strict)
        return cg_error_at(err, &pos, "%s; the tree makes no jobs", what);
    cg_warn_at(warn, &pos, "%s; the tree makes no jobs", what);
    return 0;
}

/* How many cells a node makes (saturating at UINT64_MAX): the product of
 * its factors times the sum of its sub-trees' cells. */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t node_factors(const cg_tnode *n)
{
    uint64_t k = n->zip ? n->zip->n : 1;
    for (size_t i = 0; i < n->nfans; i++)
        k = sat_mul(k, n->fans[i].n);
    return k;
}

/* Counts the cells before making them, so a tree that would make billions
 * fails at once with a message rather than after eating the memory. */
static int count_cells(const cg_tree *t, const cg_tnode *n, long max, uint64_t *out, cg_error *err)
{
    uint64_t below = n->nchildren ? 0 : 1;
    for (size_t i = 0; i < n->nchildren; i++) {
        uint64_t c;
        if (count_cells(t, n->children[i], max, &c, err) != 0)
            return -1;
        below = below > UINT64_MAX - c ? UINT64_MAX : below + c;
    }
    *out = sat_mul(node_factors(n), below);
    if (*out <= (uint64_t)max)
        return 0;
    cg_strbuf why = CG_STRBUF_INIT;
    bool same = !n->zip && n->nchildren == 0 && n->nfans > 1;
    for (size_t i = 1; i < n->nfans && same; i++)
        same = n->fans[i].n == n->fans[0].n;
    if (same) {
        cg_strbuf_addf(&why, "%zu values in each of %zu dimensions", n->fans[0].n, n->nfans);
    } else {
        for (size_t i = 0; i < n->nfans; i++)
            cg_strbuf_addf(&why, "%s%s: %zu", why.len ? " x " : "", t->dims[n->fans[i].dim], n->fans[i].n);
        if (n->zip)
            cg_strbuf_addf(&why, "%s%zu zipped rows", why.len ? " x " : "", n->zip->n);
        if (n->nchildren && below == UINT64_MAX)
            cg_strbuf_addf(&why, "%stoo many cells below", why.len ? " x " : "");
        else if (n->nchildren)
            cg_strbuf_addf(&why, "%s%llu cells below", why.len ? " x " : "", (unsigned long long)below);
    }
    char count[32];
    if (*out == UINT64_MAX)
        snprintf(count, sizeof count, "more than %llu", (unsigned long long)UINT64_MAX);
    else
        snprintf(count, sizeof count, "%llu", (unsigned long long)*out);
    cg_error_at(err, &n->pos, "this node makes %s cells (%s), more than the limit of %ld "
                "(the manifest's 'limits: max_cells')", count, cg_strbuf_str(&why), max);
    cg_strbuf_release(&why);
    return -1;
}

/* exclude/only patterns that are tried on every cell (no literal item to
 * look them up by: see filter_index), and the first of them */
static size_t glob_filters(const cg_tree *t, const cg_pattern **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; i < t->nnodes; i++) {
        const cg_tnode *node = t->nodes[i];
        for (size_t k = 0; k < node->nexclude + node->nonly; k++) {
            const cg_pattern *p = k < node->nexclude ? node->exclude[k] : node->only[k - node->nexclude];
            bool literal = false;
            for (size_t m = 0; m < p->nitems && !literal; m++)
                literal = literal_item(&p->items[m]);
            if (!literal && !n++)
                *first = p;
        }
    }
    return n;
}

int cg_expand_bound(const cg_tree *t, long max_cells, long max_jobs, long max_filter_tests, long max_pair_tests,
                    uint64_t *jobs, cg_error *err)
{
    uint64_t cells;
    if (count_cells(t, t->root, max_cells, &cells, err) != 0)
        return -1;
    const cg_pattern *first;
    size_t globs = glob_filters(t, &first);
    uint64_t tests = sat_mul(cells, globs);
    if (tests > (uint64_t)max_filter_tests)
        return cg_error_at(err, &first->pos, "this tree's 'exclude' and 'only' patterns would be tried %llu times "
                           "(%llu cells x %zu patterns without a plain value to look them up by, this one first), "
                           "more than the limit of %ld (the manifest's 'limits: max_filter_tests'); give each "
                           "pattern one plain value (os: linux, not a glob), or raise the limit",
                           (unsigned long long)tests, (unsigned long long)cells, globs, max_filter_tests);
    /* a pairwise tier weighs each cell against each pair of its dimensions */
    for (size_t k = 0; k < t->ntiers; k++) {
        const cg_tier *tier = &t->tiers[k];
        if (tier->kind != CG_TIER_PAIRWISE)
            continue;
        /* its own pairs, and every pair of the tree's dimensions (which
         * break its ties: model/pairwise.c) */
        uint64_t pairs = (uint64_t)tier->ndims * (tier->ndims ? tier->ndims - 1 : 0) / 2 +
                         (uint64_t)t->ndims * (t->ndims ? t->ndims - 1 : 0) / 2;
        uint64_t ptests = sat_mul(cells, pairs);
        if (ptests > (uint64_t)max_pair_tests)
            return cg_error_at(err, &tier->pos, "pairwise tier '%s' would weigh %llu cells against %llu pairs of "
                               "dimensions (its own, and the tree's that break its ties), %llu tests, more than the "
                               "limit of %ld (the manifest's 'limits: max_pair_tests'); split the tree or raise the "
                               "limit", tier->name, (unsigned long long)cells, (unsigned long long)pairs,
                               (unsigned long long)ptests, max_pair_tests);
    }
    /* a job is written once per workflow it lands in: count the entries
     * (cells x phases, each phase times its workflows), so a phase sent to
     * many workflows is bounded before anything is expanded too */
    uint64_t per_cell = 0;
    size_t most_workflows = 1;
    for (size_t i = 0; i < t->nphases; i++) {
        size_t nw = t->phases[i].nworkflows ? t->phases[i].nworkflows : 1;
        per_cell += nw;
        most_workflows = nw > most_workflows ? nw : most_workflows;
    }
    uint64_t mine = sat_mul(cells, per_cell ? per_cell : 1);
    uint64_t total = *jobs > UINT64_MAX - mine ? UINT64_MAX : *jobs + mine;
    if (total > (uint64_t)max_jobs) {
        cg_pos p = t->nphases ? cg_doc_key_where(t->doc, "/phases") : cg_doc_where(t->doc, "");
        cg_strbuf what = CG_STRBUF_INIT;
        if (most_workflows > 1)
            cg_strbuf_addf(&what, "%llu workflow entries (%llu cells x %zu phases, each in up to %zu workflows)",
                           (unsigned long long)mine, (unsigned long long)cells, t->nphases, most_workflows);
        else
            cg_strbuf_addf(&what, "%llu jobs (%llu cells x %zu phases)", (unsigned long long)mine,
                           (unsigned long long)cells, t->nphases);
        if (*jobs)
            cg_error_at(err, &p, "this tree would make %s, %llu with the trees before it, more than the limit of %ld "
                        "(the manifest's 'limits: max_jobs')", what.buf, (unsigned long long)total, max_jobs);
        else
            cg_error_at(err, &p, "this tree would make %s, more than the limit of %ld (the manifest's 'limits: "
                        "max_jobs')", what.buf, max_jobs);
        cg_strbuf_release(&what);
        return -1;
    }
    *jobs = total;
    return 0;
}

/* What both expansions check first: the matrix's size and the tiers'. */
static int expand_checks(cg_tree *t, long max_cells, uint64_t *cells, cg_error *err)
{
    uint64_t total;
    if (count_cells(t, t->root, max_cells, &total, err) != 0)
        return -1;
    if (t->ntiers > 64) {
        cg_pos p = t->tiers[64].pos;
        return cg_error_at(err, &p, "a tree can declare at most 64 tiers");
    }
    if (cells)
        *cells = total;
    return 0;
}

/* Visits W->t's cells (W's output or callback set); the env, values and
 * scopes stay for the caller until walk_done. */
static int walk_tree(walk *W)
{
    const cg_tree *t = W->t;
    cg_env_init(&W->env, t, W->err);
    W->values = cg_xcalloc(t->ndims + 1, sizeof *W->values);
    W->scope = cg_xcalloc(t->nnodes + 1, sizeof *W->scope);
    W->fx = cg_xcalloc(2 * t->nnodes + 1, sizeof *W->fx);
    cg_strbuf_init(&W->key);
    int rc = visit(W, t->root);
    for (size_t i = 0; i < 2 * t->nnodes; i++)
        index_release(&W->fx[i]);
    free(W->fx);
    free(W->cand);
    cg_strbuf_release(&W->key);
    return rc;
}

static void walk_done(walk *W)
{
    free(W->values);
    free(W->scope);
    free(W->zstack);
    cg_env_release(&W->env);
}

int cg_expand(cg_tree *t, cg_pool *pool, cg_cells *out, long max_cells, bool strict, const cg_tier_prev *prev,
              cg_tier_changes *changes, cg_warnings *warn,
              cg_error *err)
{
    uint64_t cells = 0;
    if (expand_checks(t, max_cells, &cells, err) != 0)
        return -1;
    /* every cell, removed ones too (at most max_cells): made at its size,
     * not grown by copying */
    cg_grow(&out->v, &out->cap, out->n + (size_t)cells, sizeof *out->v);
    walk W = {0};
    W.t = t;
    W.pool = pool;
    W.out = out;
    W.err = err;
    int rc = walk_tree(&W);
    if (rc == 0) {
        for (size_t c = 0; c < out->n; c++)
            out->nlive += out->v[c].status == CG_CELL_LIVE;
        rc = cg_tiers_assign(t, out, &W.env, prev, changes, err);
    }
    if (rc == 0)
        rc = report_unmatched(t, strict, warn, err);
    if (rc == 0 && out->n && !out->nlive) {
        const cg_pattern *by = out->v[0].removed_by; /* the same for every cell, or NULL */
        for (size_t c = 1; c < out->n && by; c++)
            if (out->v[c].removed_by != by)
                by = NULL;
        rc = report_all_removed(t, by, strict, warn, err);
    }
    walk_done(&W);
    return rc;
}

int cg_expand_each(cg_tree *t, long max_cells, bool strict, cg_cell_fn fn, void *ctx, cg_warnings *warn,
                   cg_error *err)
{
    if (expand_checks(t, max_cells, NULL, err) != 0)
        return -1;
    walk W = {0};
    W.t = t;
    W.fn = fn;
    W.ctx = ctx;
    W.err = err;
    int rc = walk_tree(&W);
    if (rc == 0)
        rc = report_unmatched(t, strict, warn, err);
    if (rc == 0 && W.n && !W.nlive)
        rc = report_all_removed(t, W.by, strict, warn, err);
    walk_done(&W);
    return rc;
}
