/* cigen explain JOB | --cell NAME=VALUE,... — how a job came to be. */
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "check/branches.h"
#include "cmd/cli.h"
#include "model/query.h"

static void pos_str(cg_strbuf *sb, const cg_pos *p)
{
    cg_strbuf_addf(sb, "%s:%u:%u", p->file ? p->file : "?", (unsigned)p->line, (unsigned)p->col);
}

/* "os: linux, python: 3.7m" — what this node bound for the cell. */
static void node_bindings(const cg_tree *t, const cg_tnode *n, const cg_cell *c, cg_strbuf *out)
{
    bool first = true;
    for (size_t f = 0; f < n->nfans; f++) {
        if (!c->values[n->fans[f].dim])
            continue; /* a group's: a dimension its cells do not share */
        cg_strbuf_addf(out, "%s%s: %s", first ? "" : ", ", t->dims[n->fans[f].dim], c->values[n->fans[f].dim]);
        first = false;
    }
    if (n->zip) {
        for (size_t k = 0; k < n->zip->nnames; k++) {
            int id = n->zip->ids[k];
            if (cg_tree_is_dim(t, id) && c->values[id])
                cg_strbuf_addf(out, "%s%s: %s (zip)", first ? "" : ", ", t->names[id], c->values[id]);
            first = false;
        }
    }
    if (first)
        cg_strbuf_adds(out, n->extra ? "(extra cell)" : "(no dimension)");
    else if (n->extra && (!n->parent || !n->parent->extra))
        cg_strbuf_adds(out, "  [extra: filters do not apply]");
}

static void explain_filters(const cg_tree *t, const cg_cell *c, cg_env *env, cg_strbuf *out)
{
    bool any = false;
    for (const cg_tnode *n = c->leaf; n; n = n->parent) {
        for (size_t i = 0; i < n->nexclude + n->nonly; i++) {
            const cg_pattern *p = i < n->nexclude ? n->exclude[i] : n->only[i - n->nexclude];
            bool m = cg_pattern_matches(p, env);
            if (!any)
                cg_strbuf_adds(out, "filters in scope:\n");
            any = true;
            cg_strbuf_adds(out, "  ");
            pos_str(out, &p->pos);
            cg_strbuf_addf(out, "  %s %s: %s\n", p->kind, p->text,
                           c->extra ? "not applied (extra cell)"
                           : cg_streq(p->kind, "exclude") ? (m ? "matches: removes it" : "does not match")
                           : (m ? "matches: keeps it" : "does not match: removes it"));
        }
    }
    (void)t;
}

static void explain_vars(const cg_tree *t, cg_env *env, cg_strbuf *out)
{
    bool header = false;
    for (size_t id = t->ndims + CG_NBUILTINS; id < t->nnames; id++) {
        const char *v;
        size_t n;
        bool typed;
        int got = cg_env_get(env, (int)id, &v, &n, &typed);
        bool unset = got == 0 && env->win[id] && env->win[id]->unset; /* `~` */
        if (got != 1 && !unset)
            continue;
        if (!header)
            cg_strbuf_adds(out, "variables:\n");
        header = true;
        cg_var_step steps[32];
        size_t ns = cg_env_history(env, (int)id, steps, 32);
        cg_strbuf_addf(out, "  %s = ", t->names[id]);
        if (unset)
            cg_strbuf_adds(out, "~ (unset: an optional key using it is left out)");
        else if (env->is_list[id])
            cg_strbuf_add(out, v, n); /* a list, in YAML's flow style */
        else {
            cg_strbuf_add(out, "\"", 1);
            cg_strbuf_add(out, v, n);
            cg_strbuf_adds(out, "\"");
        }
        if (!unset && typed)
            cg_strbuf_adds(out, " (typed)");
        if (ns) {
            const cg_var_step *win = &steps[ns - 1];
            cg_strbuf_adds(out, "\n      set at ");
            pos_str(out, &win->decl->pos);
            if (win->override)
                cg_strbuf_addf(out, " by the override when %s", win->override->when->text);
            else if (win->phase)
                cg_strbuf_addf(out, " by phase '%s'", win->phase->name);
            if (win->decl->nreplace)
                cg_strbuf_addf(out, " (from \"%s\", its 'replace' applied)", win->decl->raw);
            for (size_t i = ns - 1; i-- > 0;) {
                cg_strbuf_addf(out, "\n      overrides \"%s\" from ", steps[i].decl->raw);
                pos_str(out, &steps[i].decl->pos);
            }
        }
        cg_strbuf_addc(out, '\n');
    }
}

static int explain_job(cg_project *p, const cg_job *j, cg_strbuf *out, cg_error *err)
{
    const cg_tree *t = j->tree;
    const cg_cell *c = j->cell;
    cg_env env;
    cg_env_init(&env, t, err);
    int rc = cg_model_bind_job(&p->m, &env, j, -1);
    if (rc != 0) {
        cg_env_release(&env);
        return -1;
    }
    cg_strbuf_addf(out, "job %s\n", j->name);
    cg_strbuf_addf(out, "tree: %s (%s)\n", t->name, t->file);
    cg_strbuf_addf(out, "phase: %s (", t->phases[j->phase].name);
    pos_str(out, &t->phases[j->phase].pos);
    const cg_phase *ph = &t->phases[j->phase];
    if (j->nmembers) {
        /* one job for a group of cells */
        cg_strbuf_adds(out, ")\ngroup: ");
        size_t at = out->len;
        cg_cell_describe(t, c, out);
        if (out->len == at)
            cg_strbuf_adds(out, "every cell");
        cg_strbuf_adds(out, " (per [");
        for (size_t d = 0; d < ph->nper; d++)
            cg_strbuf_addf(out, "%s%s", d ? ", " : "", t->dims[ph->per[d]]);
        cg_strbuf_adds(out, "] at ");
        pos_str(out, &ph->per_pos);
        cg_strbuf_addf(out, "), %u cell%s:\n", j->nmembers, j->nmembers == 1 ? "" : "s");
        for (uint32_t m = 0; m < j->nmembers; m++) {
            cg_strbuf_adds(out, "  ");
            cg_cell_describe(t, j->members[m], out);
            cg_strbuf_addc(out, '\n');
        }
        cg_strbuf_adds(out, "tree path (shared by the group):\n");
        if (!c->leaf->parent)
            cg_strbuf_adds(out, "  (the top of the tree)\n");
    } else {
        cg_strbuf_adds(out, ")\ncell: ");
        cg_cell_describe(t, c, out);
        cg_strbuf_adds(out, "\ntree path:\n");
    }
    const cg_tnode *chain[256];
    size_t depth = 0;
    for (const cg_tnode *n = c->leaf; n && n->parent && depth < 256; n = n->parent)
        chain[depth++] = n;
    while (depth > 0) {
        const cg_tnode *n = chain[--depth];
        cg_strbuf_adds(out, "  ");
        pos_str(out, &n->pos);
        cg_strbuf_adds(out, "  ");
        node_bindings(t, n, c, out);
        cg_strbuf_addc(out, '\n');
    }
    explain_vars(t, &env, out);
    if (t->has_paths) { /* the tree's `paths`: the changed files that call for the job (a group: those its
                         * cells share; each cell's own count too) */
        const char *globs[64];
        size_t np = cg_tree_cell_paths(c->leaf, globs, 64);
        cg_strbuf_adds(out, "paths:");
        for (size_t i = 0; i < np && i < 64; i++)
            cg_strbuf_addf(out, "%s %s", i ? "," : "", globs[i]);
        cg_strbuf_adds(out, np ? "\n" : " (none: the manifest's path rules decide)\n");
    }
    if (env.napplied) {
        cg_strbuf_adds(out, "overrides applied:\n");
        for (size_t i = 0; i < env.napplied; i++) {
            cg_strbuf_adds(out, "  ");
            pos_str(out, &env.applied[i]->pos);
            cg_strbuf_addf(out, "  when %s\n", env.applied[i]->when->text);
        }
    }
    if (!j->nmembers)
        explain_filters(t, c, &env, out);
    cg_strbuf tpl = CG_STRBUF_INIT;
    if (!t->phases[j->phase].template_raw) {
        cg_strbuf_addf(out, "template: the default (job '%s' given every dimension and variable the cell sets; "
                       "phase at ", t->phases[j->phase].name);
        pos_str(out, &t->phases[j->phase].template_pos);
        cg_strbuf_adds(out, ")\nworkflows:");
    } else if (cg_model_template_path(&p->m, j, &env, &tpl, err) != 0) {
        cg_strbuf_release(&tpl);
        cg_env_release(&env);
        return -1;
    } else {
        cg_strbuf_addf(out, "template: %s (named at ", tpl.buf);
        pos_str(out, &t->phases[j->phase].template_pos);
        cg_strbuf_adds(out, ")\nworkflows:");
    }
    cg_strbuf_release(&tpl);
    for (size_t w = 0; w < p->m.manifest.nworkflows; w++) {
        uint64_t bit = (uint64_t)1 << w;
        if (j->workflows & bit)
            cg_strbuf_addf(out, " %s%s", p->m.manifest.workflows[w].name, (j->gated & bit) ? " (on request)" :
                           (j->special & bit) ? " (special-PR selection)" : "");
    }
    if (!j->workflows)
        cg_strbuf_adds(out, " (none: culled)");
    if (p->m.marks) {
        cg_strbuf_adds(out, "\nspecial-PR (from ");
        cg_strbuf_adds(out, p->m.selection.source);
        cg_strbuf_adds(out, "): ");
        cg_cli_mark_text(&p->m, &p->m.marks[j->index], out);
        if (j->special)
            cg_strbuf_adds(out, "; ungated, branch filters lifted");
    }
    cg_strbuf_adds(out, "\ntiers:");
    size_t ntiers = 0;
    for (size_t k = 0; k < t->ntiers; k++)
        if (c->tiers & ((uint64_t)1 << k)) {
            cg_strbuf_addf(out, " %s", t->tiers[k].name);
            ntiers++;
        }
    if (!ntiers)
        cg_strbuf_adds(out, " (none)");
    cg_strbuf_adds(out, "\nrequires:");
    cg_model_requires_text(&p->m, j->requires, j->requires_optional, j->requires_job, j->nrequires, j->workflows, out);
    if (!j->nrequires)
        cg_strbuf_adds(out, " (nothing)");
    cg_strbuf_addc(out, '\n');
    cg_env_release(&env);
    return 0;
}

/* "removed by the exclude {...} at f:l:c", or the whole `only` list */
static void describe_removal(const cg_cell *cell, cg_strbuf *out)
{
    const cg_pattern *p = cell->removed_by;
    if (cell->status == CG_CELL_EXCLUDED || !cell->removed_at || cell->removed_at->nonly < 2) {
        cg_strbuf_addf(out, "  removed by the %s %s at ", p->kind, p->text);
        pos_str(out, &p->pos);
        cg_strbuf_addc(out, '\n');
        return;
    }
    cg_strbuf_adds(out, "  removed: it matches none of the 'only' patterns");
    for (size_t i = 0; i < cell->removed_at->nonly; i++) {
        cg_strbuf_addf(out, "%s %s at ", i ? "," : "", cell->removed_at->only[i]->text);
        pos_str(out, &cell->removed_at->only[i]->pos);
    }
    cg_strbuf_addc(out, '\n');
}

/* --cell, a cell at a time, from the whole model or a walk (model/walk.h):
 * cell_tree, each cell (cell_one) with its jobs after it (cell_job), then
 * cell_tree_end; cell_done at the end. */
typedef struct cell_expl {
    const cg_qgroup *g;
    cg_strbuf *out;
    size_t shown;
    const cg_tree *t;          /* the tree being read, when the spec names only its dimensions */
    bool open;                 /* a live cell's "its jobs:" line is being written */
    size_t nj;
    cg_strbuf *vals;           /* [g->n]: the values of a term's dimension where the others match */
    size_t *nv;
} cell_expl;

static bool term_hits(const cg_qterm *term, const cg_tree *t, const cg_cell *cell)
{
    const char *v = cell->values[cg_tree_name_id(t, term->name)];
    bool hit = v && fnmatch(term->glob, v, 0) == 0;
    return term->negate ? !hit : hit;
}

static void cell_close(cell_expl *E)
{
    if (E->open)
        cg_strbuf_adds(E->out, E->nj ? "\n" : " none (every phase is skipped or lands in no workflow)\n");
    E->open = false;
}

static void cell_tree(cell_expl *E, const cg_tree *t)
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

static void cell_one(cell_expl *E, const cg_cell *cell)
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
        pos_str(E->out, &cell->leaf->pos);
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
static void cell_job(cell_expl *E, const char *name)
{
    if (E->open) {
        cg_strbuf_addf(E->out, " %s", name);
        E->nj++;
    }
}

static void cell_tree_end(cell_expl *E)
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

static void cell_init(cell_expl *E, const cg_query *q, cg_strbuf *out)
{
    memset(E, 0, sizeof *E);
    E->g = &q->groups[0];
    E->out = out;
    E->vals = cg_xcalloc(E->g->n + 1, sizeof *E->vals);
    E->nv = cg_xcalloc(E->g->n + 1, sizeof *E->nv);
    for (size_t k = 0; k < E->g->n; k++)
        cg_strbuf_init(&E->vals[k]);
}

static void cell_release(cell_expl *E)
{
    for (size_t k = 0; E->vals && k < E->g->n; k++)
        cg_strbuf_release(&E->vals[k]);
    free(E->vals);
    free(E->nv);
}

/* 0 when a cell matched, 1 when none did (said first in out). */
static int cell_done(cell_expl *E)
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
static int explain_cell(cg_project *p, const cg_query *q, cg_strbuf *out)
{
    cell_expl E;
    cell_init(&E, q, out);
    for (size_t ti = 0; ti < p->m.ntrees; ti++) {
        const cg_tree *t = p->m.trees[ti];
        const cg_cells *cells = &p->m.cells[ti];
        cell_tree_end(&E);
        cell_tree(&E, t);
        for (size_t c = 0; c < cells->n && E.t; c++) {
            const cg_cell *cell = &cells->v[c];
            cell_one(&E, cell);
            for (size_t k = 0; k < p->m.jobs.n && E.open; k++)
                if (p->m.jobs.v[k].cell == cell)
                    cell_job(&E, p->m.jobs.v[k].name);
        }
    }
    int rc = cell_done(&E);
    cell_release(&E);
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

/* Where a fragment defines job `name` (its key), or false. */
static bool fragment_def(const cg_model *m, const char *name, cg_pos *at)
{
    for (size_t f = 0; f < m->nfragments; f++) {
        const cg_doc *doc = m->fragments[f].doc;
        if (!json_object_get(json_object_get(cg_doc_root(doc), "jobs"), name))
            continue;
        cg_strbuf path = CG_STRBUF_INIT;
        cg_strbuf_adds(&path, "/jobs");
        cg_path_push_key(&path, name);
        *at = cg_doc_key_where(doc, path.buf);
        cg_strbuf_release(&path);
        return true;
    }
    return false;
}

/* A job a fragment defines: where, and what runs it (static entries,
 * generated entries by tree and phase, verbatim workflows of fragments). */
/* The generated entries that run a fragment's job, counted per tree and
 * phase: how many, in which workflows. */
typedef struct frag_count {
    cg_strbuf inv;
    size_t ntrees;
    size_t **count;            /* [ntrees][nphases] */
    uint64_t **wf;
} frag_count;

static void frag_count_init(frag_count *fc, const cg_model *m)
{
    cg_strbuf_init(&fc->inv);
    fc->ntrees = m->manifest.ntrees;
    fc->count = cg_xcalloc(m->manifest.ntrees + 1, sizeof *fc->count);
    fc->wf = cg_xcalloc(m->manifest.ntrees + 1, sizeof *fc->wf);
}

static void frag_count_release(frag_count *fc)
{
    for (size_t i = 0; fc->count && i < fc->ntrees; i++) {
        free(fc->count[i]);
        free(fc->wf[i]);
    }
    free(fc->count);
    free(fc->wf);
    cg_strbuf_release(&fc->inv);
}

/* Counts job j (env: the tree's, any binding) if its entry runs `name`. */
static int frag_count_job(frag_count *fc, const cg_model *m, cg_env *env, const cg_job *j, const char *name,
                          cg_error *err)
{
    const cg_tree *t = j->tree;
    if (!j->workflows)
        return 0;
    if (!fc->count[t->index]) {
        fc->count[t->index] = cg_xcalloc(t->nphases + 1, sizeof **fc->count);
        fc->wf[t->index] = cg_xcalloc(t->nphases + 1, sizeof **fc->wf);
    }
    const cg_template *tpl = NULL;
    if (cg_model_bind_job(m, env, j, -1) != 0 || !(tpl = cg_model_template(m, j, env, err)))
        return -1;
    cg_strbuf_reset(&fc->inv);
    if (tpl->invoke.ctext)
        cg_strbuf_add(&fc->inv, tpl->invoke.ctext, tpl->invoke.ctext_len);
    else {
        cg_src src = {tpl->doc, tpl->invoke.path, {0}, false};
        if (cg_env_expand(env, &tpl->invoke.text, CG_EXPAND_PLAIN, NULL, &fc->inv, &src, "the template") != 0)
            return -1;
    }
    if (cg_streq(cg_strbuf_str(&fc->inv), name)) {
        fc->count[t->index][j->phase]++;
        fc->wf[t->index][j->phase] |= j->workflows;
    }
    return 0;
}

/* A job a fragment defines: where, and what runs it; the generated entries
 * counted in fc (from a walk), or here from the whole model (fc NULL). */
static int explain_fragment_job(const cg_model *m, const char *name, frag_count *fc, cg_strbuf *out, cg_error *err)
{
    cg_pos at;
    if (!fragment_def(m, name, &at))
        return 0;
    cg_strbuf_addf(out, "job %s: defined in a fragment at ", name);
    pos_str(out, &at);
    cg_strbuf_adds(out, "\nrun by:");
    size_t before = out->len;
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (sj->culled || !cg_streq(sj->invokes, name))
            continue;
        cg_strbuf_addf(out, "\n  entry '%s' of workflow '%s' (", sj->name, m->manifest.workflows[sj->workflow].name);
        pos_str(out, &sj->pos);
        cg_strbuf_adds(out, ")");
    }
    /* generated entries, counted per tree and phase */
    frag_count own;
    if (!fc) {
        fc = &own;
        frag_count_init(fc, m);
    }
    int rc = 0;
    for (size_t ti = 0; ti < m->ntrees && rc == 0; ti++) {
        const cg_tree *t = m->trees[ti];
        cg_env env;
        cg_env_init(&env, t, err);
        for (size_t k = 0; fc == &own && k < m->jobs.n && rc == 0; k++)
            if (m->jobs.v[k].tree == t)
                rc = frag_count_job(fc, m, &env, &m->jobs.v[k], name, err);
        const size_t *count = fc->count[ti];
        const uint64_t *wf = fc->wf[ti];
        for (size_t ph = 0; count && ph < t->nphases && rc == 0; ph++) {
            if (!count[ph])
                continue;
            cg_strbuf_addf(out, "\n  %zu generated entr%s of phase '%s', tree %s, in workflow%s", count[ph],
                           count[ph] == 1 ? "y" : "ies", t->phases[ph].name, t->name,
                           (wf[ph] & (wf[ph] - 1)) ? "s" : "");
            for (size_t w = 0; w < m->manifest.nworkflows; w++)
                if (wf[ph] & ((uint64_t)1 << w))
                    cg_strbuf_addf(out, " %s", m->manifest.workflows[w].name);
        }
        cg_env_release(&env);
    }
    if (fc == &own)
        frag_count_release(fc);
    if (rc != 0)
        return -1;
    for (size_t f = 0; f < m->nfragments; f++) {
        json_t *wfs = json_object_get(cg_doc_root(m->fragments[f].doc), "workflows");
        const char *wn;
        json_t *wd;
        json_object_foreach(wfs, wn, wd) {
            json_t *jl = json_is_object(wd) ? json_object_get(wd, "jobs") : NULL;
            for (size_t i = 0; i < json_array_size(jl); i++) {
                json_t *e = json_array_get(jl, i);
                const char *k = json_is_string(e) ? json_string_value(e) : NULL;
                json_t *v;
                if (!k)
                    json_object_foreach(e, k, v)
                        break;
                if (k && cg_streq(k, name)) {
                    cg_strbuf_addf(out, "\n  workflow '%s', written as it is in fragment %s", wn,
                                   m->fragments[f].file);
                    break;
                }
            }
        }
    }
    if (out->len == before) {
        bool idle = false;
        for (size_t i = 0; i < m->manifest.nidle && !idle; i++)
            idle = cg_streq(m->manifest.idle_jobs[i], name);
        cg_strbuf_adds(out, idle ? " no workflow (kept for manual runs: listed in the manifest's idle_jobs)"
                                 : " no workflow (lint warns about it)");
    }
    cg_strbuf_addc(out, '\n');
    return 1;
}

/* A static entry (a job listed in a workflow of the manifest): where, what
 * it runs, and what a special-PR selection did to it. */
static bool explain_static(const cg_model *m, const char *name, cg_strbuf *out)
{
    bool any = false;
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (!cg_streq(sj->name, name))
            continue;
        any = true;
        cg_strbuf_addf(out, "%s: listed in workflow '%s' of the manifest at ", sj->name,
                       m->manifest.workflows[sj->origin].name);
        pos_str(out, &sj->pos);
        if (sj->workflow != sj->origin)
            cg_strbuf_addf(out, ", copied into workflow '%s'", m->manifest.workflows[sj->workflow].name);
        cg_strbuf_addf(out, "\nruns: %s", sj->invokes);
        if (sj->context)
            cg_strbuf_addf(out, " (context '%s')", sj->context);
        cg_pos def;
        if (fragment_def(m, sj->invokes, &def)) {
            cg_strbuf_adds(out, ", defined in a fragment at ");
            pos_str(out, &def);
        }
        if (sj->nrequires) {
            cg_strbuf_adds(out, "\nrequires:");
            cg_model_requires_text(m, sj->requires, sj->requires_optional, NULL, sj->nrequires,
                                   sj->culled ? 0 : (uint64_t)1 << sj->workflow, out);
        }
        if (m->marks) {
            cg_strbuf_addf(out, "\nspecial-PR (from %s): ", m->selection.source);
            cg_cli_mark_text(m, &sj->mark, out);
            if (sj->lift)
                cg_strbuf_adds(out, "; branch filters lifted");
        }
        if (m->omitted & ((uint64_t)1 << sj->workflow))
            cg_strbuf_addf(out, "\nworkflow '%s' is not written: the selection left it without jobs",
                           m->manifest.workflows[sj->workflow].name);
        cg_strbuf_addc(out, '\n');
    }
    return any;
}

/* In a live cell (env bound to it): the job a phase's `skip` or `only`
 * removed, if it would have been named `name`.  1 found (said in out), 0
 * not, -1 on error; jn is scratch. */
static int skipped_in_cell(const cg_tree *t, const cg_cell *cell, cg_env *env, const char *name, cg_strbuf *jn,
                           cg_strbuf *out)
{
    for (size_t k = 0; k < t->nphases; k++) {
        const cg_phase *ph = &t->phases[k];
        if (ph->aggregate)
            continue;
        const cg_pattern *by = NULL;
        for (size_t s = 0; s < ph->nskip && !by; s++)
            if (cg_pattern_matches(ph->skip[s], env))
                by = ph->skip[s];
        bool kept = ph->nonly == 0;
        for (size_t s = 0; s < ph->nonly && !kept; s++)
            kept = cg_pattern_matches(ph->only[s], env);
        if (!by && kept)
            continue;
        cg_strbuf_reset(jn);
        cg_env_set_builtin(env, CG_B_PHASE, ph->name, false);
        bool own = ph->job_name.nsegs > 0;
        if (cg_env_expand(env, own ? &ph->job_name : &t->job_name, CG_EXPAND_NAME, t, jn,
                          own ? &ph->job_name_src : &t->job_name_src, "the job name pattern") != 0)
            return -1;
        if (!cg_streq(cg_strbuf_str(jn), name))
            continue;
        cg_strbuf_addf(out, "no job %s: phase '%s' (", name, ph->name);
        pos_str(out, &ph->pos);
        cg_strbuf_adds(out, ") does not run for cell ");
        cg_cell_describe(t, cell, out);
        cg_strbuf_addf(out, " (tree %s, ", t->name);
        pos_str(out, &cell->leaf->pos);
        cg_strbuf_adds(out, ")\n");
        if (by) {
            cg_strbuf_addf(out, "  removed by the phase's skip %s at ", by->text);
            pos_str(out, &by->pos);
            cg_strbuf_addc(out, '\n');
        } else {
            cg_strbuf_adds(out, "  removed: it matches none of the phase's 'only' patterns");
            for (size_t s = 0; s < ph->nonly; s++) {
                cg_strbuf_addf(out, "%s %s at ", s ? "," : "", ph->only[s]->text);
                pos_str(out, &ph->only[s]->pos);
            }
            cg_strbuf_addc(out, '\n');
        }
        return 1;
    }
    return 0;
}

/* A name no job has: the job a phase's `skip` or `only` removed from a
 * live cell, if one would have had that name.  1 found (said in out), 0 not,
 * -1 on error. */
static int explain_skipped(const cg_model *m, const char *name, cg_strbuf *out, cg_error *err)
{
    int found = 0;
    cg_strbuf jn = CG_STRBUF_INIT;
    for (size_t ti = 0; ti < m->ntrees && !found; ti++) {
        const cg_tree *t = m->trees[ti];
        const cg_cells *cells = &m->cells[ti];
        cg_env env;
        cg_env_init(&env, t, err);
        for (size_t c = 0; c < cells->n && !found; c++) {
            const cg_cell *cell = &cells->v[c];
            if (cell->status != CG_CELL_LIVE)
                continue;
            found = cg_env_bind(&env, cell) != 0 ? -1 : skipped_in_cell(t, cell, &env, name, &jn, out);
        }
        cg_env_release(&env);
    }
    cg_strbuf_release(&jn);
    return found;
}

/* explain JOB from a walk of the jobs (model/walk.h): the job asked for,
 * copied out of the walk (its cell's arrays, its requires' names); until it
 * is found, what explain_skipped and cg_suggest would say if it is not. */
typedef struct find_job {
    const char *name;
    cg_pool *pool;
    bool found;
    cg_job job;
    cg_cell cell;
    int skipped;               /* explain_skipped's answer so far (1: in skip_text) */
    cg_strbuf skip_text, jn;
    char *suggest;             /* cg_suggest's over the jobs so far */
    size_t suggest_d, suggest_max;
    /* a fragment's job: the generated entries that run it, counted */
    const cg_model *m;
    int frag;                  /* -1: not known yet; 1: the name is a fragment's job */
    frag_count fc;
    cg_env env;                /* of env_tree, bound to its cell env_cell */
    const cg_tree *env_tree;
    uint32_t env_cell;
    cg_error env_err;
} find_job;

static void find_job_release(find_job *F)
{
    cg_strbuf_release(&F->skip_text);
    cg_strbuf_release(&F->jn);
    free(F->suggest);
    if (F->frag == 1)
        frag_count_release(&F->fc);
    if (F->env_tree)
        cg_env_release(&F->env);
    cg_error_release(&F->env_err);
}

static int find_skipped_fn(void *ctx, const cg_tree *t, const cg_cell *cell, cg_env *env)
{
    find_job *F = ctx;
    if (F->found || F->skipped || cell->status != CG_CELL_LIVE)
        return 0;
    F->skipped = skipped_in_cell(t, cell, env, F->name, &F->jn, &F->skip_text);
    cg_env_set_builtin(env, CG_B_PHASE, NULL, false); /* as bound: the walk sets it per job */
    return F->skipped < 0 ? -1 : 0;
}

static int find_job_fn(void *ctx, const cg_job *j)
{
    find_job *F = ctx;
    if (F->found)
        return 0;
    if (F->frag < 0) {
        cg_pos at;
        F->frag = fragment_def(F->m, F->name, &at);
        if (F->frag)
            frag_count_init(&F->fc, F->m);
    }
    if (F->frag) {
        if (F->env_tree != j->tree) {
            if (F->env_tree)
                cg_env_release(&F->env);
            cg_env_init(&F->env, j->tree, &F->env_err);
            F->env_tree = j->tree;
            F->env_cell = UINT32_MAX;
        }
        /* the walk's cells share one address (cg_model_bind_job binds a
         * cell at another address only): bound here when it changes */
        if (F->env_cell != j->cell->index) {
            if (cg_env_bind(&F->env, j->cell) != 0)
                return -1;
            F->env_cell = j->cell->index;
        }
        if (frag_count_job(&F->fc, F->m, &F->env, j, F->name, &F->env_err) != 0)
            return -1;
    }
    if (!cg_streq(j->name, F->name)) {
        /* cg_suggest, one candidate at a time */
        size_t d = cg_edit_distance(F->name, j->name, F->suggest_max);
        if (d < F->suggest_d) {
            F->suggest_d = d;
            free(F->suggest);
            F->suggest = cg_xstrdup(j->name);
        }
        return 0;
    }
    const cg_tree *t = j->tree;
    F->found = true;
    F->cell = *j->cell;
    const char **values = cg_pool_alloc(F->pool, (t->ndims + 1) * sizeof *values);
    memcpy(values, j->cell->values, t->ndims * sizeof *values);
    F->cell.values = values;
    if (j->cell->nzvars) {
        const cg_vardecl **zv = cg_pool_alloc(F->pool, j->cell->nzvars * sizeof *zv);
        memcpy(zv, j->cell->zvars, j->cell->nzvars * sizeof *zv);
        F->cell.zvars = zv;
    }
    F->job = *j;
    F->job.name = cg_intern(F->pool, j->name);
    F->job.cell = &F->cell;
    const char **names = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *names);
    const cg_pos **pos = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *pos);
    int32_t *idx = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *idx);
    for (uint32_t r = 0; r < j->nrequires; r++) {
        names[r] = cg_intern(F->pool, j->requires[r]);
        pos[r] = j->requires_pos[r];
        idx[r] = j->requires_job[r];
    }
    F->job.requires = names;
    F->job.requires_pos = pos;
    F->job.requires_job = idx;
    return 0;
}

/* explain JOB --branch/--tag/--schedule: whether CircleCI runs the job on
 * that pipeline, each workflow's entry of that name, and why not (the
 * simulation of check/branches.h on the config the sources make). */
static int explain_pipeline(const cg_global *g, const cg_sim_input *in, const char *job, cg_strbuf *out)
{
    cg_project p;
    cg_project_init(&p);
    int rc = cg_cli_build(g, &p, true);
    cg_branch_run run = {0};
    cg_error err;
    cg_error_init(&err);
    if (rc == 0 && cg_pipeline_simulate(p.m.manifest.output, p.out.config.buf, p.out.config.len, in, NULL, &run,
                                        &err) != 0) {
        cg_cli_print_error(&err);
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0) {
        cg_strbuf what = CG_STRBUF_INIT;
        cg_sim_describe(in, &what);
        size_t n = 0;
        for (size_t i = 0; i < run.n; i++) {
            if (!cg_streq(run.v[i].job, job))
                continue;
            if (!n++)
                cg_strbuf_addf(out, "on %s (as CircleCI runs %s):\n", what.buf, p.m.manifest.output);
            cg_strbuf_addf(out, "  workflow '%s': %s%s%s\n", run.v[i].workflow,
                           run.v[i].state == CG_RUNS ? "runs" : run.v[i].state == CG_SKIPPED ? "does not run"
                                                                                            : "not simulated",
                           run.v[i].why ? ": " : "", run.v[i].why ? run.v[i].why : "");
        }
        if (!n)
            cg_strbuf_addf(out, "on %s: no workflow of %s runs it\n", what.buf, p.m.manifest.output);
        cg_strbuf_release(&what);
    }
    cg_branch_run_release(&run);
    cg_error_release(&err);
    cg_project_release(&p);
    return rc;
}

int cg_cmd_explain(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"cell", required_argument, NULL, 'c'},
        {"branch", required_argument, NULL, 'b'}, {"tag", required_argument, NULL, 'T'},
        {"schedule", required_argument, NULL, 'S'}, {"parameter", required_argument, NULL, 'P'},
        CG_SELECTION_LONGOPTS, CG_GLOBAL_LONGOPTS, {0}};
    cg_sim_input sim = {0};
    const char *pnames[64], *pvalues[64];
    char *pown[64];
    bool simulate = false;
    cg_query q;
    cg_query_init(&q);
    int c;
    cg_global local = *g0, *g = &local;
    cg_selection sel;
    cg_selection_init(&sel);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqv", longopts)) != -1) {
        if (cg_cli_selection_option(g, &sel, c, optarg))
            continue;
        if (c == 'h') {
            puts("usage: cigen explain JOB [--branch NAME | --tag NAME] [--schedule NAME]\n"
                 "                 [--parameter NAME=VALUE]...\n"
                 "       cigen explain --cell NAME=VALUE[,NAME=VALUE...]\n"
                 "       (either with [--only PATTERN]... [--also PATTERN]... [--overlay FILE]\n"
                 "        [--allow-protected] [--pr-branch NAME])\n\n"
                 "Shows how a job came to be: its tree path with the file:line of every node, each\n"
                 "variable with where its value was set (and what it overrode), the overrides and\n"
                 "filters that touched it, its template, workflows, tiers and requires; for a job\n"
                 "of a phase with 'per', its group and the group's cells.  A static entry of the\n"
                 "manifest (and where its job is defined), a job a fragment defines (where, and\n"
                 "which entries and workflows run it), and a job that a phase's 'skip' or 'only'\n"
                 "removed from its cell (which pattern; exit 1) are explained too.\n"
                 "--cell looks a combination up, live or removed: for a removed one it names the\n"
                 "filter that removed it; for one no branch produces, the values that exist.\n"
                 "With a special-PR selection it says when a job is there because of it.\n"
                 "--branch, --tag, --schedule and --parameter add whether CircleCI runs the job\n"
                 "on that pipeline, in each workflow, and why not (as `cigen list --branch ...`;\n"
                 "docs/pipeline.md).\n\n"
                 CG_SELECTION_HELP
                 "\nExit status: 0 found, 1 no such job or combination, 2 error.");
            cg_query_release(&q);
            cg_selection_release(&sel);
            return 0;
        }
        if (c == 'b' || c == 'T' || c == 'S' || c == 'P') {
            simulate = true;
            if (c == 'b')
                sim.branch = optarg;
            else if (c == 'T')
                sim.tag = optarg;
            else if (c == 'S')
                sim.schedule = optarg;
            else {
                const char *eq = strchr(optarg, '=');
                if (!eq || eq == optarg || sim.nparams == 64) {
                    fprintf(stderr, "cigen: error: --parameter takes NAME=VALUE (at most 64), not '%s'\n",
                            cg_cli_shown(optarg));
                    for (size_t i = 0; i < sim.nparams; i++)
                        free(pown[i]);
                    cg_query_release(&q);
                    cg_selection_release(&sel);
                    return CG_EXIT_ERROR;
                }
                pnames[sim.nparams] = pown[sim.nparams] = cg_xstrndup(optarg, (size_t)(eq - optarg));
                pvalues[sim.nparams++] = eq + 1;
            }
            continue;
        }
        if (c == 'c') {
            if (q.n || cg_query_add(&q, optarg) != 0) {
                fprintf(stderr, "cigen: error: --cell wants NAME=VALUE[,NAME=VALUE...] once, not '%s'\n", cg_cli_shown(optarg));
                cg_query_release(&q);
                cg_selection_release(&sel);
                return CG_EXIT_ERROR;
            }
            continue;
        }
        cg_query_release(&q);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    bool cell_mode = q.n > 0;
    sim.param_names = pnames;
    sim.param_values = pvalues;
    if (simulate && (cell_mode || (sim.branch && sim.tag))) {
        fputs(cell_mode ? "cigen: error: --branch/--tag/--schedule go with a job name, not --cell\n"
                        : "cigen: error: a pipeline has a branch or a tag, not both\n", stderr);
        for (size_t i = 0; i < sim.nparams; i++)
            free(pown[i]);
        cg_query_release(&q);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    if (cell_mode ? optind != argc : optind + 1 != argc) {
        fputs(cell_mode ? "cigen: error: explain --cell takes no job name\n"
                        : "cigen: error: explain needs one job name (or --cell)\n", stderr);
        cg_query_release(&q);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    for (size_t k = 0; cell_mode && k < q.groups[0].n; k++)
        if (!q.groups[0].terms[k].name) {
            fprintf(stderr, "cigen: error: --cell wants NAME=VALUE terms ('%s')\n", cg_cli_shown(q.groups[0].terms[k].glob));
            cg_query_release(&q);
            cg_selection_release(&sel);
            return CG_EXIT_ERROR;
        }
    cg_project p;
    cg_project_init(&p);
    /* a job's name or --cell: walk the cells and jobs, keeping none (what
     * is said is made on the way); the whole model for a fragment's job, or
     * when the walk cannot give the same answer (model/walk.h) */
    find_job F = {.name = cell_mode ? NULL : argv[optind], .pool = &p.m.pool, .m = &p.m, .frag = -1};
    cg_strbuf_init(&F.skip_text);
    cg_strbuf_init(&F.jn);
    cg_error_init(&F.env_err);
    if (!cell_mode) {
        size_t len = strlen(F.name);
        F.suggest_max = len <= 3 ? 1 : len <= 6 ? 2 : 3; /* as cg_suggest */
        F.suggest_d = F.suggest_max + 1;
    }
    cg_walker walker = {.cell = find_skipped_fn, .job = find_job_fn, .ctx = &F};
    /* --cell: the cells as they are walked, said into cell_out */
    cg_strbuf cell_out = CG_STRBUF_INIT;
    cell_expl E;
    if (cell_mode) {
        cell_init(&E, &q, &cell_out);
        walker = (cg_walker){.tree = cell_tree_fn, .cell = cell_one_fn, .job = cell_job_fn, .ctx = &E};
    }
    bool walked = cg_cli_build_walk(g, &p, &walker) == 0;
    /* walked and no generated job found: a static entry needs none; a
     * fragment's job, a skipped job and a suggestion were found on the way */
    if (walked)
        cg_cli_warnings(g, &p);
    int rc = walked ? 0 : cg_cli_build(g, &p, false);
    cg_selection_release(&sel);
    if (rc != 0) {
        for (size_t i = 0; i < sim.nparams; i++)
            free(pown[i]);
        if (cell_mode)
            cell_release(&E);
        cg_strbuf_release(&cell_out);
        find_job_release(&F);
        cg_project_release(&p);
        cg_query_release(&q);
        return rc;
    }
    cg_error err;
    cg_error_init(&err);
    cg_strbuf out = CG_STRBUF_INIT;
    if (cell_mode) {
        if (cg_query_check_names(&q, &p.m, NULL, &err) != 0)
            rc = CG_EXIT_ERROR;
        else if (walked) {
            rc = cell_done(&E) == 0 ? 0 : CG_EXIT_DIFF;
            cg_strbuf_add(&out, cell_out.buf, cell_out.len);
        } else
            rc = explain_cell(&p, &q, &out) == 0 ? 0 : CG_EXIT_DIFF;
    } else {
        const cg_job *j = walked ? (F.found ? &F.job : NULL) : cg_jobs_find(&p.m.jobs, argv[optind]);
        int sk = 0;
        if (!j && explain_static(&p.m, argv[optind], &out)) {
            /* a static entry of the manifest's workflows */
        } else if (!j && (sk = explain_fragment_job(&p.m, argv[optind], walked ? &F.fc : NULL, &out, &err)) != 0) {
            rc = sk < 0 ? CG_EXIT_ERROR : 0; /* a job of a fragment */
        } else if (!j && walked && F.skipped) {
            cg_strbuf_add(&out, F.skip_text.buf, F.skip_text.len); /* explain_skipped's, from the walk */
            rc = CG_EXIT_DIFF;
        } else if (!j && !walked && (sk = explain_skipped(&p.m, argv[optind], &out, &err)) != 0) {
            rc = sk < 0 ? CG_EXIT_ERROR : CG_EXIT_DIFF; /* a job a phase's skip or only removed */
        } else if (!j) {
            const char **names = walked ? NULL : cg_xmalloc((p.m.jobs.n + 1) * sizeof *names);
            for (size_t k = 0; names && k < p.m.jobs.n; k++)
                names[k] = p.m.jobs.v[k].name;
            const char *s = walked ? F.suggest : cg_suggest(argv[optind], names, p.m.jobs.n);
            fprintf(stderr, "cigen: no job is named '%s'%s%s%s\n", cg_cli_shown(argv[optind]), s ? " (did you mean '" : "",
                    s ? s : "", s ? "'?)" : "");
            free(names);
            rc = CG_EXIT_DIFF;
        } else if (explain_job(&p, j, &out, &err) != 0) {
            rc = CG_EXIT_ERROR;
        }
    }
    if (rc != CG_EXIT_ERROR && simulate && explain_pipeline(g, &sim, argv[optind], &out) != 0)
        rc = CG_EXIT_ERROR; /* printed */
    else if (rc == CG_EXIT_ERROR)
        cg_cli_print_error(&err);
    if (rc != CG_EXIT_ERROR)
        fputs(cg_strbuf_str(&out), stdout);
    for (size_t i = 0; i < sim.nparams; i++)
        free(pown[i]);
    cg_strbuf_release(&out);
    cg_error_release(&err);
    if (cell_mode)
        cell_release(&E);
    cg_strbuf_release(&cell_out);
    find_job_release(&F);
    cg_project_release(&p);
    cg_query_release(&q);
    return rc;
}
