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
    uint64_t tiers;
} walk;

static cg_cell *new_cell(walk *W, const cg_tnode *leaf, bool extra)
{
    cg_cells *c = W->out;
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

static void apply_filters(walk *W, cg_cell *cell)
{
    for (size_t s = 0; s < W->nscope; s++) {
        const cg_tnode *n = W->scope[s];
        for (size_t i = 0; i < n->nexclude; i++) {
            cg_pattern *p = n->exclude[i];
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
        for (size_t i = 0; i < n->nonly; i++) {
            cg_pattern *p = n->only[i];
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
        return filter_cell(W, cell);
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
            cg_streq(p->kind, "phase only"))
            continue;
        const char *why = cg_streq(p->kind, "only") ? " (a typo? cells must match one 'only' pattern of their scope)" : "";
        if (strict)
            return cg_error_at(err, &p->pos, "%s pattern %s matches no cell%s", p->kind, p->text, why);
        cg_warn_at(warn, &p->pos, "%s pattern %s matches no cell%s", p->kind, p->text, why);
    }
    return 0;
}

/* Every cell the tree spells out is filtered away: almost always a mistake. */
static int report_all_removed(const cg_tree *t, const cg_cells *cells, bool strict, cg_warnings *warn,
                              cg_error *err)
{
    const cg_pattern *by = cells->v[0].removed_by;
    for (size_t c = 1; c < cells->n && by; c++)
        if (cells->v[c].removed_by != by)
            by = NULL;
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

int cg_expand_bound(const cg_tree *t, long max_cells, long max_jobs, uint64_t *jobs, cg_error *err)
{
    uint64_t cells;
    if (count_cells(t, t->root, max_cells, &cells, err) != 0)
        return -1;
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

int cg_expand(cg_tree *t, cg_pool *pool, cg_cells *out, long max_cells, bool strict, cg_warnings *warn,
              cg_error *err)
{
    uint64_t total;
    if (count_cells(t, t->root, max_cells, &total, err) != 0)
        return -1;
    if (t->ntiers > 64) {
        cg_pos p = t->tiers[64].pos;
        return cg_error_at(err, &p, "a tree can declare at most 64 tiers");
    }
    walk W = {0};
    W.t = t;
    W.pool = pool;
    W.out = out;
    W.err = err;
    cg_env_init(&W.env, t, err);
    W.values = cg_xcalloc(t->ndims, sizeof *W.values);
    W.scope = cg_xcalloc(t->nnodes + 1, sizeof *W.scope);
    int rc = visit(&W, t->root);
    if (rc == 0) {
        for (size_t c = 0; c < out->n; c++)
            out->nlive += out->v[c].status == CG_CELL_LIVE;
        rc = cg_tiers_assign(t, out, &W.env, err);
    }
    if (rc == 0)
        rc = report_unmatched(t, strict, warn, err);
    if (rc == 0 && out->n && !out->nlive)
        rc = report_all_removed(t, out, strict, warn, err);
    free(W.values);
    free(W.scope);
    free(W.zstack);
    cg_env_release(&W.env);
    return rc;
}
