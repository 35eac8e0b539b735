/* explain --cell: the cells that match NAME=VALUE terms, live or removed. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/explain_impl.h"

static void describe_removal(const cg_cell *cell, cg_strbuf *out)
{
    const cg_pattern *p = cell->removed_by;
    if (cell->status == CG_CELL_EXCLUDED || !cell->removed_at || cell->removed_at->nonly < 2) {
        cg_strbuf_addf(out, "  removed by the %s %s at ", p->kind, p->text);
        cg_explain_pos(out, &p->pos);
        cg_strbuf_addc(out, '\n');
        return;
    }
    cg_strbuf_adds(out, "  removed: it matches none of the 'only' patterns");
    for (size_t i = 0; i < cell->removed_at->nonly; i++) {
        cg_strbuf_addf(out, "%s %s at ", i ? "," : "", cell->removed_at->only[i]->text);
        cg_explain_pos(out, &cell->removed_at->only[i]->pos);
    }
    cg_strbuf_addc(out, '\n');
}


static bool term_hits(const cg_qterm *term, const cg_tree *t, const cg_cell *cell)
{
    const char *v = cell->values[cg_tree_name_id(t, term->name)];
    bool hit = v && fnmatch(term->glob, v, 0) == 0;
    return term->negate ? !hit : hit;
}

static void cell_close(cg_explain_cells *E)
{
    if (E->open)
        cg_strbuf_adds(E->out, E->nj ? "\n" : " none (every phase is skipped or lands in no workflow)\n");
    E->open = false;
}

static void cell_tree(cg_explain_cells *E, const cg_tree *t)
{
    const cg_qgroup *g = E->g;
    /* the spec must name only this tree's dimensions */
    bool applies = true;
    for (size_t k = 0; k < g->n && applies; k++)
        applies = g->terms[k].name && cg_tree_is_dim(t, cg_tree_name_id(t, g->terms[k].name));
    E->t = applies ? t : NULL;
    for (size_t k = 0; k < g->n; k++) {
        cg_strbuf_reset(&E->vals[k]);
        E->nv[k] = 0;
    }
}

static void cell_one(cg_explain_cells *E, const cg_cell *cell)
{
    const cg_tree *t = E->t;
    const cg_qgroup *g = E->g;
    if (!t)
        return;
    cell_close(E);
    bool m = true;
    for (size_t k = 0; k < g->n && m; k++)
        m = term_hits(&g->terms[k], t, cell);
    if (m) {
        E->shown++;
        cg_strbuf_addf(E->out, "cell ");
        cg_cell_describe(t, cell, E->out);
        cg_strbuf_addf(E->out, " (tree %s, ", t->name);
        cg_explain_pos(E->out, &cell->leaf->pos);
        cg_strbuf_adds(E->out, ")\n");
        if (cell->status == CG_CELL_LIVE) {
            cg_strbuf_adds(E->out, "  live; its jobs:");
            E->open = true;
            E->nj = 0;
        } else {
            describe_removal(cell, E->out);
        }
    }
    if (E->shown)
        return; /* what the tree produces is said only when nothing matched */
    for (size_t k = 0; k < g->n; k++) {
        bool others = true;
        for (size_t o = 0; o < g->n && others; o++)
            others = o == k || term_hits(&g->terms[o], t, cell);
        const char *v = cell->values[cg_tree_name_id(t, g->terms[k].name)];
        if (!others || !v)
            continue;
        char needle[512];
        snprintf(needle, sizeof needle, " %s,", v);
        cg_strbuf probe = CG_STRBUF_INIT;
        cg_strbuf_addf(&probe, " %s,", cg_strbuf_str(&E->vals[k]));
        bool dup = strstr(probe.buf, needle) != NULL;
        cg_strbuf_release(&probe);
        if (dup)
            continue;
        cg_strbuf_addf(&E->vals[k], "%s%s", E->nv[k] ? ", " : "", v);
        E->nv[k]++;
    }
}

/* A job of the cell last given to cell_one. */
static void cell_job(cg_explain_cells *E, const char *name)
{
    if (E->open) {
        cg_strbuf_addf(E->out, " %s", name);
        E->nj++;
    }
}

static void cell_tree_end(cg_explain_cells *E)
{
    cell_close(E);
    const cg_qgroup *g = E->g;
    if (!E->t || E->shown)
        return;
    /* nothing: say which values the tree does produce next to the others
     * (a dimension no cell of the rest has says nothing of itself) */
    size_t said = 0;
    for (size_t k = 0; k < g->n; k++)
        if (E->nv[k]) {
            cg_strbuf_addf(E->out, "  %stree %s has %s: %s\n", g->n > 1 ? "where the rest matches, " : "", E->t->name,
                           g->terms[k].name, E->vals[k].buf);
            said++;
        }
    if (!said && g->n > 1)
        cg_strbuf_addf(E->out, "  tree %s has no cell where all but one of them match\n", E->t->name);
    E->t = NULL;
}

void cg_explain_cells_init(cg_explain_cells *E, const cg_query *q, cg_strbuf *out)
{
    memset(E, 0, sizeof *E);
    E->g = &q->groups[0];
    E->out = out;
    E->vals = cg_xcalloc(E->g->n + 1, sizeof *E->vals);
    E->nv = cg_xcalloc(E->g->n + 1, sizeof *E->nv);
    for (size_t k = 0; k < E->g->n; k++)
        cg_strbuf_init(&E->vals[k]);
}

void cg_explain_cells_release(cg_explain_cells *E)
{
    for (size_t k = 0; E->vals && k < E->g->n; k++)
        cg_strbuf_release(&E->vals[k]);
    free(E->vals);
    free(E->nv);
}

/* 0 when a cell matched, 1 when none did (said first in out). */
int cg_explain_cells_done(cg_explain_cells *E)
{
    cell_tree_end(E);
    if (!E->shown) {
        cg_strbuf tmp = CG_STRBUF_INIT;
        cg_strbuf_addf(&tmp, "no branch of any tree produces %s\n", cg_cli_shown(E->g->text));
        cg_strbuf_add(&tmp, E->out->buf ? E->out->buf : "", E->out->len);
        cg_strbuf_reset(E->out);
        cg_strbuf_add(E->out, tmp.buf, tmp.len);
        cg_strbuf_release(&tmp);
    }
    return E->shown ? 0 : 1;
}

/* --cell: the cells (live or removed) that match a dimension spec, from the
 * whole model. */
int cg_explain_cells_of_model(const cg_model *m, const cg_query *q, cg_strbuf *out)
{
    cg_explain_cells E;
    cg_explain_cells_init(&E, q, out);
    for (size_t ti = 0; ti < m->ntrees; ti++) {
        const cg_tree *t = m->trees[ti];
        const cg_cells *cells = &m->cells[ti];
        cell_tree_end(&E);
        cell_tree(&E, t);
        for (size_t c = 0; c < cells->n && E.t; c++) {
            const cg_cell *cell = &cells->v[c];
            cell_one(&E, cell);
            for (size_t k = 0; k < m->jobs.n && E.open; k++)
                if (m->jobs.v[k].cell == cell)
                    cell_job(&E, m->jobs.v[k].name);
        }
    }
    int rc = cg_explain_cells_done(&E);
    cg_explain_cells_release(&E);
    return rc;
}

static void cell_tree_fn(void *ctx, const cg_tree *t)
{
    cell_tree_end(ctx);
    cell_tree(ctx, t);
}

static int cell_one_fn(void *ctx, const cg_tree *t, const cg_cell *cell, cg_env *env)
{
    (void)t;
    (void)env;
    cell_one(ctx, cell);
    return 0;
}

static int cell_job_fn(void *ctx, const cg_job *j)
{
    cell_job(ctx, j->name);
    return 0;
}

cg_walker cg_explain_cells_walker(cg_explain_cells *E)
{
    return (cg_walker){.tree = cell_tree_fn, .cell = cell_one_fn, .job = cell_job_fn, .ctx = E};
}
