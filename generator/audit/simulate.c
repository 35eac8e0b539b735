/* Which workflow entries CircleCI runs for one pipeline (audit/simulate.h). */
#include "audit/simulate.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/ref_regex.h"
#include "lang/yaml_path.h"
#include "lang/yamlload.h"
#include "model/condition.h"

/* 1 when the name matches a value of v (a value or a list), 0 when not,
 * -1 when none does but one cannot be evaluated (*unknown names it). */
static int json_match(cg_ref_cache *rc, const char *name, json_t *v, const char **unknown)
{
    int r = 0;
    for (size_t i = 0; i < (json_is_array(v) ? json_array_size(v) : 1) && r != 1; i++) {
        json_t *x = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(x))
            continue;
        int m = cg_ref_cache_match(rc, json_string_value(x), name);
        if (m < 0 && r == 0)
            *unknown = json_string_value(x);
        r = m == 1 ? 1 : m < 0 ? -1 : r;
    }
    return r;
}

static void add(cg_sim_result *r, const char *wf, const char *job, int state, const char *why, bool context)
{
    cg_grow(&r->v, &r->cap, r->n + 1, sizeof *r->v);
    r->v[r->n++] = (cg_sim_entry){cg_xstrdup(wf), cg_xstrdup(job), state, why ? cg_xstrdup(why) : NULL, context};
}

/* `only` then `ignore` of one filter (branches or tags) on `name`: the
 * documented order, https://circleci.com/docs/configuration-reference/#filters */
static int only_ignore(cg_ref_cache *rc, const char *kind, const char *what, const char *name, json_t *f,
                       cg_strbuf *why)
{
    json_t *only = json_object_get(f, "only"), *ignore = json_object_get(f, "ignore");
    const char *unknown = NULL;
    int in = only ? json_match(rc, name, only, &unknown) : 1;
    if (in == 0) {
        cg_strbuf_addf(why, "filters: %s: only does not let %s '%s' through", kind, what, name);
        return CG_SKIPPED;
    }
    int out = in == 1 && ignore ? json_match(rc, name, ignore, &unknown) : 0;
    if (out == 1) {
        cg_strbuf_addf(why, "filters: %s: ignore matches %s '%s'", kind, what, name);
        return CG_SKIPPED;
    }
    if (in < 0 || out < 0) {
        /* a value only a template's placeholder gave: never checked at load */
        cg_strbuf_addf(why, "its %s filter %s is a regex cigen cannot evaluate (not simulated)", what, unknown);
        return CG_UNKNOWN;
    }
    return CG_RUNS;
}

/* The state of one entry's own filters on this pipeline; *why says why not. */
static int filter_state(cg_ref_cache *rc, const cg_sim_input *in, json_t *filters, cg_strbuf *why)
{
    if (filters && !json_is_object(filters)) {
        cg_strbuf_adds(why, "its 'filters' is an expression (not simulated)");
        return CG_UNKNOWN;
    }
    if (in->tag && *in->tag) {
        /* https://circleci.com/docs/workflows/#executing-workflows-for-a-git-tag */
        json_t *t = json_is_object(filters) ? json_object_get(filters, "tags") : NULL;
        if (!json_is_object(t)) {
            cg_strbuf_addf(why, "it has no 'filters: tags:', so it runs on no tag ('%s')", in->tag);
            return CG_SKIPPED;
        }
        if (!json_object_get(t, "only") && !json_object_get(t, "ignore")) {
            cg_strbuf_addf(why, "its 'filters: tags:' has neither only nor ignore: it runs on no tag ('%s')",
                           in->tag);
            return CG_SKIPPED;
        }
        return only_ignore(rc, "tags", "tag", in->tag, t, why);
    }
    json_t *b = json_is_object(filters) ? json_object_get(filters, "branches") : NULL;
    if (!json_is_object(b))
        return CG_RUNS;
    if (!in->branch || !*in->branch) {
        cg_strbuf_adds(why, "it has branch filters and the pipeline names no branch (not simulated)");
        return CG_UNKNOWN;
    }
    return only_ignore(rc, "branches", "branch", in->branch, b, why);
}

typedef struct sim {
    const cg_doc *doc;
    const cg_sim_input *in;
    const cg_pipeline_values *pv;
    cg_ref_cache *rc;
    bool fired;              /* a workflow's schedule trigger is what runs */
} sim;

/* The workflow's own state: its trigger, its when/unless. */
static int workflow_state(const sim *S, const char *wname, json_t *wf, cg_strbuf *why)
{
    const cg_sim_input *in = S->in;
    json_t *triggers = json_object_get(wf, "triggers");
    if (triggers && !(S->fired && cg_streq(in->schedule, wname))) {
        cg_strbuf_adds(why, S->fired ? "the schedule of another workflow fired (only that one runs)"
                                     : "the workflow runs on its schedule (triggers), not on this pipeline");
        return CG_SKIPPED;
    }
    if (!triggers && S->fired) {
        cg_strbuf_addf(why, "the schedule of workflow '%s' fired: no other workflow runs", in->schedule);
        return CG_SKIPPED;
    }
    if (triggers) {
        /* its schedule's filters: the branch it runs on */
        json_t *t0 = json_array_get(triggers, 0);
        json_t *sch = json_is_object(t0) ? json_object_get(t0, "schedule") : NULL;
        json_t *f = json_is_object(sch) ? json_object_get(sch, "filters") : NULL;
        json_t *b = json_is_object(f) ? json_object_get(f, "branches") : NULL;
        if (json_is_object(b)) {
            if (!in->branch || !*in->branch) {
                cg_strbuf_adds(why, "its schedule has branch filters and no branch is given (not simulated)");
                return CG_UNKNOWN;
            }
            int st = only_ignore(S->rc, "branches", "branch", in->branch, b, why);
            if (st != CG_RUNS) {
                cg_strbuf_adds(why, " (its schedule's filters)");
                return st;
            }
        }
    }
    json_t *when = json_object_get(wf, "when"), *unless = json_object_get(wf, "unless");
    if (!when && !unless)
        return CG_RUNS;
    /* https://circleci.com/docs/configuration-reference/#using-when-in-workflows */
    cg_strbuf path = CG_STRBUF_INIT;
    cg_path_join_key(&path, "/workflows", wname);
    cg_path_push_key(&path, when ? "when" : "unless");
    json_t *stmt = cg_doc_typed(S->doc, path.buf, when ? when : unless);
    int t = cg_condition_eval(stmt, S->pv, NULL);
    json_decref(stmt);
    cg_strbuf_release(&path);
    if (t == CG_COND_UNKNOWN) {
        cg_strbuf_adds(why, "the workflow's 'when'/'unless' depends on pipeline values not known here");
        return CG_UNKNOWN;
    }
    if (t != (when != NULL)) {
        cg_strbuf_addf(why, "the workflow's '%s' is %s (for this pipeline, pipeline parameters given or at their "
                       "defaults)", when ? "when" : "unless", when ? "false" : "true");
        return CG_SKIPPED;
    }
    return CG_RUNS;
}

static void simulate_workflow(const sim *S, const char *wname, json_t *wf, cg_sim_result *out)
{
    json_t *jobs = json_object_get(wf, "jobs");
    size_t n = json_array_size(jobs), first = out->n;
    cg_strbuf why = CG_STRBUF_INIT, wwhy = CG_STRBUF_INIT;
    int wstate = workflow_state(S, wname, wf, &wwhy);
    const char **names = cg_xcalloc(n + 1, sizeof *names);
    json_t **reqs = cg_xcalloc(n + 1, sizeof *reqs);
    cg_map index; /* name -> 1 + its place: requires are looked up, not searched */
    cg_map_init(&index);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(jobs, i);
        json_t *args = NULL;
        const char *name = json_is_string(e) ? json_string_value(e) : NULL;
        if (json_is_object(e)) {
            name = json_object_iter_key(json_object_iter(e));
            args = json_object_iter_value(json_object_iter(e));
            json_t *nm = json_is_object(args) ? json_object_get(args, "name") : NULL;
            if (json_is_string(nm))
                name = json_string_value(nm);
        }
        names[i] = name ? name : "";
        if (!cg_map_get(&index, names[i]))
            cg_map_put(&index, names[i], (void *)(uintptr_t)(i + 1));
        reqs[i] = json_is_object(args) ? json_object_get(args, "requires") : NULL;
        cg_strbuf_reset(&why);
        int st = wstate;
        if (st == CG_RUNS)
            st = filter_state(S->rc, S->in, json_is_object(args) ? json_object_get(args, "filters") : NULL, &why);
        else
            cg_strbuf_adds(&why, wwhy.buf);
        add(out, wname, names[i], st, st == CG_RUNS ? NULL : why.buf,
            json_is_object(args) && json_object_get(args, "context"));
    }
    /* https://circleci.com/docs/workflows/#sequential-job-execution-example:
     * a job whose requirement does not run does not run; in entry order
     * to a fixed point (requires may name a later entry) */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            cg_sim_entry *bj = &out->v[first + i];
            if (bj->state == CG_SKIPPED)
                continue;
            json_t *req = reqs[i];
            size_t nr = json_is_array(req) ? json_array_size(req) : json_is_string(req) ? 1 : 0;
            for (size_t r = 0; r < nr; r++) {
                json_t *x = json_is_array(req) ? json_array_get(req, r) : req;
                const char *rn = json_is_string(x) ? json_string_value(x)
                                 : json_is_object(x) ? json_object_iter_key(json_object_iter(x)) : "";
                uintptr_t k1 = (uintptr_t)cg_map_get(&index, rn ? rn : "");
                if (!k1)
                    continue;
                int ks = out->v[first + k1 - 1].state;
                if (ks == CG_RUNS || (ks == CG_UNKNOWN && bj->state == CG_UNKNOWN))
                    continue;
                cg_strbuf_reset(&why);
                cg_strbuf_addf(&why, "it requires '%s', which %s", rn,
                               ks == CG_SKIPPED ? "does not run" : "may not run");
                free(bj->why);
                bj->why = cg_xstrdup(why.buf);
                bj->state = ks;
                changed = true;
                if (ks == CG_SKIPPED)
                    break;
            }
        }
    }
    cg_map_release(&index);
    cg_strbuf_release(&why);
    cg_strbuf_release(&wwhy);
    free(names);
    free(reqs);
}

int cg_sim_run(const char *file, const char *text, size_t len, const cg_sim_input *in,
                         const char *workflow, cg_sim_result *out, cg_error *err)
{
    cg_doc *doc = cg_doc_parse(file, text, len, NULL, err);
    if (!doc)
        return -1;
    json_t *root = cg_doc_root(doc);
    json_t *wfs = json_object_get(root, "workflows");
    json_t *params = json_object(), *decls = json_object_get(root, "parameters");
    cg_parameter_defaults(doc, params);
    int rc = 0;
    for (size_t i = 0; i < in->nparams && rc == 0; i++) {
        cg_strbuf msg = CG_STRBUF_INIT;
        json_t *v = cg_parameter_given(decls, in->param_names[i], in->param_values[i], &msg);
        if (v)
            json_object_set_new(params, in->param_names[i], v);
        else
            rc = cg_error_plain(err, "%s", msg.buf);
        cg_strbuf_release(&msg);
    }
    bool tag = in->tag && *in->tag;
    cg_pipeline_values pv = {params, in->schedule ? in->schedule : "", tag || !in->branch ? "" : in->branch,
                             tag ? in->tag : "", CG_SOURCE_PUSH};
    sim S = {doc, in, &pv, NULL, false};
    if (in->schedule && *in->schedule) {
        json_t *w = json_object_get(wfs, in->schedule);
        S.fired = json_is_object(w) && json_object_get(w, "triggers");
        /* a legacy trigger's source is not documented */
        pv.source = S.fired ? CG_SOURCE_UNKNOWN : CG_SOURCE_SCHEDULED_PIPELINE;
    }
    const char *wname;
    json_t *wf;
    bool found = false;
    cg_ref_cache cache; /* each /regex/ compiled once for all entries */
    cg_ref_cache_init(&cache);
    S.rc = &cache;
    json_object_foreach(wfs, wname, wf) {
        if (rc != 0)
            break;
        if (cg_streq(wname, "version") || !json_is_object(wf))
            continue;
        if (workflow && !cg_streq(workflow, wname))
            continue;
        found = true;
        simulate_workflow(&S, wname, wf, out);
    }
    cg_ref_cache_release(&cache);
    json_decref(params);
    cg_doc_free(doc);
    if (rc == 0 && workflow && !found)
        rc = cg_error_plain(err, "%s has no workflow '%s'", file, workflow);
    return rc;
}

int cg_sim_branch(const char *file, const char *text, size_t len, const char *branch, const char *workflow,
                       cg_sim_result *out, cg_error *err)
{
    cg_sim_input in = {branch, NULL, NULL, NULL, NULL, 0};
    return cg_sim_run(file, text, len, &in, workflow, out, err);
}

void cg_sim_describe(const cg_sim_input *in, cg_strbuf *out)
{
    if (in->schedule && *in->schedule)
        cg_strbuf_addf(out, "the schedule '%s'", in->schedule);
    if (in->tag && *in->tag)
        cg_strbuf_addf(out, "%sa push of tag '%s'", out->len ? " on " : "", in->tag);
    else if (in->branch && *in->branch)
        cg_strbuf_addf(out, "%s'%s'", out->len ? " on " : "a push to ", in->branch);
    if (!out->len)
        cg_strbuf_adds(out, "a pipeline with no branch");
}

void cg_sim_result_release(cg_sim_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].workflow);
        free(r->v[i].job);
        free(r->v[i].why);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}
