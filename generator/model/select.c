/* The special-PR selection in force, applied to the jobs of the model
 * (model/select.h). */
#include "model/select.h"

#include <stdlib.h>
#include <string.h>

#include "io/fsio.h"
#include "model/query.h"

static void copy_selection(cg_selection *to, const cg_selection *from, const char *source)
{
    for (size_t i = 0; i < from->nonly; i++)
        cg_selection_add(to, true, from->only[i], &from->only_pos[i]);
    for (size_t i = 0; i < from->nalso; i++)
        cg_selection_add(to, false, from->also[i], &from->also_pos[i]);
    free(to->source);
    to->source = cg_xstrdup(from->source ? from->source : source);
}

/* The selection in force: flags, --overlay, special-pr.yml, or the fallback. */
static int load_selection(cg_model *p, cg_error *err)
{
    const cg_options *o = &p->opt;
    if (o->selection && !cg_selection_empty(o->selection)) {
        copy_selection(&p->selection, o->selection, "the command line");
        return 0;
    }
    const char *file = o->overlay ? o->overlay : o->no_overlay ? NULL : CG_DEFAULT_OVERLAY;
    if (file) {
        char *data = NULL;
        size_t len = 0;
        cg_pos ref = {0};
        if (cg_check_project_path(file, &ref, "the overlay path", err) != 0)
            return -1;
        int r = cg_model_read_source(p, file, &ref, &data, &len, o->overlay == NULL, err);
        if (r < 0)
            return -1;
        if (r == 0) {
            int rc = cg_selection_parse(&p->selection, file, data, len, err);
            free(data);
            return rc;
        }
    }
    if (o->fallback && !cg_selection_empty(o->fallback))
        copy_selection(&p->selection, o->fallback, "the header of the committed config");
    return 0;
}

static int pattern_error(cg_error *err, const cg_selection *s, bool only, size_t i, const char *what)
{
    const cg_pos *pos = only ? &s->only_pos[i] : &s->also_pos[i];
    const char *pat = only ? s->only[i] : s->also[i];
    if (pos->file)
        return cg_error_at(err, pos, "'%s' %s", pat, what);
    return cg_error_plain(err, "--%s '%s' %s", only ? "only" : "also", pat, what);
}

/* Puts the selected jobs (and what they require) into the per-change
 * workflow, ungated; with `only`, culls every other generated job. */
static int apply_selection(cg_model *p, cg_error *err)
{
    const cg_selection *s = &p->selection;
    if (cg_selection_empty(s))
        return 0;
    if (p->per_change < 0)
        return cg_error_plain(err, "a special-PR selection (from %s) needs a workflow marked 'per_change: true' "
                              "in %s", s->source, p->opt.manifest);
    size_t ngroups = s->nonly + s->nalso;
    cg_query *q = cg_xcalloc(ngroups + 1, sizeof *q);
    int rc = 0;
    for (size_t i = 0; i < ngroups && rc == 0; i++) {
        bool only = i < s->nonly;
        size_t k = only ? i : i - s->nonly;
        cg_query_init(&q[i]);
        const char *pat = only ? s->only[k] : s->also[k];
        const cg_pos *pos = only ? &s->only_pos[k] : &s->also_pos[k];
        /* the header records it on a comment line; its text stays out of the message */
        if (cg_line_breaker(pat, NULL) && pos->file)
            rc = cg_error_at(err, pos, "a pattern holds a control character or a line break");
        else if (cg_line_breaker(pat, NULL))
            rc = cg_error_plain(err, "an --%s pattern holds a control character or a line break",
                                only ? "only" : "also");
        else if (cg_query_add(&q[i], pat) != 0)
            rc = pattern_error(err, s, only, k, "is not a pattern (NAME=GLOB,... or a job-name glob)");
        else if (cg_query_check_names(&q[i], p, pos, err) != 0)
            rc = -1;
    }
    /* A pattern of dimension values selects only the jobs of phases that run
     * on pull requests (that land in the per-change workflow); upload or
     * smoke jobs must be named: by phase=..., or by a job-name glob. */
    bool *explicit_phase = cg_xcalloc(ngroups + 1, sizeof *explicit_phase);
    for (size_t i = 0; i < ngroups; i++)
        for (size_t t = 0; rc == 0 && t < q[i].groups[0].n; t++) {
            const char *name = q[i].groups[0].terms[t].name;
            explicit_phase[i] = explicit_phase[i] || !name || cg_streq(name, "phase") || cg_streq(name, "job");
        }
    bool *selected = cg_xcalloc(p->jobs.n + 1, sizeof *selected);
    size_t *hits = cg_xcalloc(ngroups + 1, sizeof *hits), *ineligible = cg_xcalloc(ngroups + 1, sizeof *ineligible);
    cg_env *envs = cg_xcalloc(p->ntrees + 1, sizeof *envs);
    for (size_t t = 0; t < p->ntrees; t++)
        cg_env_init(&envs[t], p->trees[t], err);
    for (size_t k = 0; k < p->jobs.n && rc == 0; k++) {
        const cg_job *j = &p->jobs.v[k];
        cg_env *env = &envs[j->tree->index];
        if (cg_model_bind_job(p, env, j, -1) != 0) {
            rc = -1;
            break;
        }
        const cg_phase *ph = &j->tree->phases[j->phase];
        bool runs_on_prs = false;
        for (size_t w = 0; w < ph->nworkflows; w++)
            runs_on_prs = runs_on_prs || ph->workflows[w] == p->per_change;
        for (size_t i = 0; i < ngroups; i++) {
            int m = cg_query_match(&q[i], p, j, env);
            if (m < 0)
                rc = -1;
            if (m == 1 && !runs_on_prs && !explicit_phase[i])
                ineligible[i]++;
            else if (m == 1) {
                selected[k] = true;
                hits[i]++;
            }
        }
    }
    for (size_t i = 0; i < ngroups && rc == 0; i++)
        if (!hits[i])
            rc = pattern_error(err, s, i < s->nonly, i < s->nonly ? i : i - s->nonly,
                               ineligible[i] ? "selects only jobs of phases that do not run on pull requests "
                                               "(name them to run them: add phase=NAME, or use a job-name glob)"
                                             : "selects no job");
    if (rc == 0) {
        /* the jobs the selected ones require come along */
        size_t *stack = cg_xmalloc((p->jobs.n + 1) * sizeof *stack), n = 0;
        for (size_t k = 0; k < p->jobs.n; k++)
            if (selected[k])
                stack[n++] = k;
        while (n) {
            const cg_job *j = &p->jobs.v[stack[--n]];
            for (uint32_t r = 0; r < j->nrequires; r++) {
                const cg_job *dep = cg_jobs_find(&p->jobs, j->requires[r]);
                if (dep && !selected[dep->index]) {
                    selected[dep->index] = true;
                    stack[n++] = dep->index;
                }
            }
        }
        free(stack);
        uint64_t bit = (uint64_t)1 << p->per_change;
        for (size_t k = 0; k < p->jobs.n; k++) {
            cg_job *j = &p->jobs.v[k];
            if (selected[k]) {
                j->workflows |= bit;
                j->gated &= ~bit;
                j->special |= bit;
            } else if (s->nonly) {
                j->workflows = 0;
                j->gated = 0;
            }
        }
    }
    for (size_t i = 0; i < ngroups; i++)
        cg_query_release(&q[i]);
    for (size_t t = 0; t < p->ntrees; t++)
        cg_env_release(&envs[t]);
    free(envs);
    free(q);
    free(selected);
    free(hits);
    free(ineligible);
    free(explicit_phase);
    return rc;
}


int cg_model_select(cg_model *p, cg_error *err)
{
    if (load_selection(p, err) != 0)
        return -1;
    return apply_selection(p, err);
}
