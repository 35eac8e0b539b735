/* explain JOB for a name that is not (or not yet) a generated job: the
 * lookup during the walk, a static entry of the manifest, a job a fragment
 * defines, a job a phase's skip or only removed from its cell. */
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/explain_impl.h"
#include "lang/yaml_path.h"

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


static void frag_count_init(cg_explain_frags *fc, const cg_model *m)
{
    cg_strbuf_init(&fc->inv);
    fc->ntrees = m->manifest.ntrees;
    fc->count = cg_xcalloc(m->manifest.ntrees + 1, sizeof *fc->count);
    fc->wf = cg_xcalloc(m->manifest.ntrees + 1, sizeof *fc->wf);
}

static void frag_count_release(cg_explain_frags *fc)
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
static int frag_count_job(cg_explain_frags *fc, const cg_model *m, cg_env *env, const cg_job *j, const char *name,
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
int cg_explain_fragment_job(const cg_model *m, const char *name, cg_explain_frags *fc, cg_strbuf *out, cg_error *err)
{
    cg_pos at;
    if (!fragment_def(m, name, &at))
        return 0;
    cg_strbuf_addf(out, "job %s: defined in a fragment at ", name);
    cg_explain_pos(out, &at);
    cg_strbuf_adds(out, "\nrun by:");
    size_t before = out->len;
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (sj->culled || !cg_streq(sj->invokes, name))
            continue;
        cg_strbuf_addf(out, "\n  entry '%s' of workflow '%s' (", sj->name, m->manifest.workflows[sj->workflow].name);
        cg_explain_pos(out, &sj->pos);
        cg_strbuf_adds(out, ")");
    }
    /* generated entries, counted per tree and phase */
    cg_explain_frags own;
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
bool cg_explain_static(const cg_model *m, const char *name, cg_strbuf *out)
{
    bool any = false;
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (!cg_streq(sj->name, name))
            continue;
        any = true;
        cg_strbuf_addf(out, "%s: listed in workflow '%s' of the manifest at ", sj->name,
                       m->manifest.workflows[sj->origin].name);
        cg_explain_pos(out, &sj->pos);
        if (sj->workflow != sj->origin)
            cg_strbuf_addf(out, ", copied into workflow '%s'", m->manifest.workflows[sj->workflow].name);
        cg_strbuf_addf(out, "\nruns: %s", sj->invokes);
        if (sj->context)
            cg_strbuf_addf(out, " (context '%s')", sj->context);
        cg_pos def;
        if (fragment_def(m, sj->invokes, &def)) {
            cg_strbuf_adds(out, ", defined in a fragment at ");
            cg_explain_pos(out, &def);
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
        cg_explain_pos(out, &ph->pos);
        cg_strbuf_adds(out, ") does not run for cell ");
        cg_cell_describe(t, cell, out);
        cg_strbuf_addf(out, " (tree %s, ", t->name);
        cg_explain_pos(out, &cell->leaf->pos);
        cg_strbuf_adds(out, ")\n");
        if (by) {
            cg_strbuf_addf(out, "  removed by the phase's skip %s at ", by->text);
            cg_explain_pos(out, &by->pos);
            cg_strbuf_addc(out, '\n');
        } else {
            cg_strbuf_adds(out, "  removed: it matches none of the phase's 'only' patterns");
            for (size_t s = 0; s < ph->nonly; s++) {
                cg_strbuf_addf(out, "%s %s at ", s ? "," : "", ph->only[s]->text);
                cg_explain_pos(out, &ph->only[s]->pos);
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
int cg_explain_skipped(const cg_model *m, const char *name, cg_strbuf *out, cg_error *err)
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


void cg_explain_find_release(cg_explain_find *F)
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
    cg_explain_find *F = ctx;
    if (F->found || F->skipped || cell->status != CG_CELL_LIVE)
        return 0;
    F->skipped = skipped_in_cell(t, cell, env, F->name, &F->jn, &F->skip_text);
    cg_env_set_builtin(env, CG_B_PHASE, NULL, false); /* as bound: the walk sets it per job */
    return F->skipped < 0 ? -1 : 0;
}

static int find_job_fn(void *ctx, const cg_job *j)
{
    cg_explain_find *F = ctx;
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
    if (j->requires_optional) {
        bool *opt = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *opt);
        memcpy(opt, j->requires_optional, j->nrequires * sizeof *opt);
        F->job.requires_optional = opt;
    }
    return 0;
}
void cg_explain_find_init(cg_explain_find *F, const char *name, cg_model *m)
{
    *F = (cg_explain_find){.name = name, .pool = &m->pool, .m = m, .frag = -1};
    cg_strbuf_init(&F->skip_text);
    cg_strbuf_init(&F->jn);
    cg_error_init(&F->env_err);
    if (name) {
        size_t len = strlen(name);
        F->suggest_max = len <= 3 ? 1 : len <= 6 ? 2 : 3; /* as cg_suggest */
        F->suggest_d = F->suggest_max + 1;
    }
}

cg_walker cg_explain_find_walker(cg_explain_find *F)
{
    return (cg_walker){.cell = find_skipped_fn, .job = find_job_fn, .ctx = F};
}
