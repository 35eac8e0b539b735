/* A push to one branch, as CircleCI filters it (check/branches.h). */
#include "check/branches.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/ref_regex.h"
#include "lang/yaml_path.h"
#include "lang/yamlload.h"
#include "model/condition.h"

/* 1 when the branch matches a value of v (a value or a list), 0 when not,
 * -1 when none does but one cannot be evaluated (*unknown names it). */
static int json_match(cg_ref_cache *rc, const char *branch, json_t *v, const char **unknown)
{
    int r = 0;
    for (size_t i = 0; i < (json_is_array(v) ? json_array_size(v) : 1) && r != 1; i++) {
        json_t *x = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(x))
            continue;
        int m = cg_ref_cache_match(rc, json_string_value(x), branch);
        if (m < 0 && r == 0)
            *unknown = json_string_value(x);
        r = m == 1 ? 1 : m < 0 ? -1 : r;
    }
    return r;
}

static void add(cg_branch_run *r, const char *wf, const char *job, int state, const char *why)
{
    cg_grow(&r->v, &r->cap, r->n + 1, sizeof *r->v);
    r->v[r->n++] = (cg_branch_job){cg_xstrdup(wf), cg_xstrdup(job), state, why ? cg_xstrdup(why) : NULL};
}

/* The state of one entry's own filters; *why says why not. */
static int filter_state(cg_ref_cache *rc, const char *branch, json_t *filters, cg_strbuf *why)
{
    json_t *b = json_is_object(filters) ? json_object_get(filters, "branches") : NULL;
    if (filters && !json_is_object(filters)) {
        cg_strbuf_adds(why, "its 'filters' is an expression (not simulated)");
        return CG_UNKNOWN;
    }
    if (!b)
        return CG_RUNS;
    json_t *only = json_object_get(b, "only"), *ignore = json_object_get(b, "ignore");
    const char *unknown = NULL;
    int in = only ? json_match(rc, branch, only, &unknown) : 1;
    if (in == 0) {
        cg_strbuf_addf(why, "filters: branches: only does not let '%s' through", branch);
        return CG_SKIPPED;
    }
    int out = in == 1 && ignore ? json_match(rc, branch, ignore, &unknown) : 0;
    if (out == 1) {
        cg_strbuf_addf(why, "filters: branches: ignore matches '%s'", branch);
        return CG_SKIPPED;
    }
    if (in < 0 || out < 0) {
        /* a value only a template's placeholder gave: never checked at load */
        cg_strbuf_addf(why, "its branch filter %s is a regex cigen cannot evaluate (not simulated)", unknown);
        return CG_UNKNOWN;
    }
    return CG_RUNS;
}

static int simulate_workflow(const cg_doc *doc, const cg_pipeline_values *pv, cg_ref_cache *rc, const char *branch,
                             const char *wname, json_t *wf, cg_branch_run *out)
{
    json_t *jobs = json_object_get(wf, "jobs");
    size_t n = json_array_size(jobs), first = out->n;
    const char *wstate_why = NULL;
    int wstate = CG_RUNS;
    json_t *when = json_object_get(wf, "when"), *unless = json_object_get(wf, "unless");
    if (json_object_get(wf, "triggers")) {
        wstate = CG_SKIPPED;
        wstate_why = "the workflow runs on its schedule (triggers), not on a push";
    } else if (when || unless) {
        /* evaluated on the branch and the parameters' defaults (model/condition.h) */
        cg_strbuf path = CG_STRBUF_INIT;
        cg_path_join_key(&path, "/workflows", wname);
        cg_path_push_key(&path, when ? "when" : "unless");
        json_t *stmt = cg_doc_typed(doc, path.buf, when ? when : unless);
        int t = cg_condition_eval(stmt, pv, NULL);
        json_decref(stmt);
        cg_strbuf_release(&path);
        if (t == CG_COND_UNKNOWN) {
            wstate = CG_UNKNOWN;
            wstate_why = "the workflow's 'when'/'unless' depends on pipeline values not known here";
        } else if (t != (when != NULL)) {
            wstate = CG_SKIPPED;
            wstate_why = when ? "the workflow's 'when' is false (on this branch, pipeline parameters at their "
                                "defaults)"
                              : "the workflow's 'unless' is true (on this branch, pipeline parameters at their "
                                "defaults)";
        }
    }
    cg_strbuf why = CG_STRBUF_INIT;
    const char **names = cg_xcalloc(n + 1, sizeof *names);
    json_t **reqs = cg_xcalloc(n + 1, sizeof *reqs);
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
        reqs[i] = json_is_object(args) ? json_object_get(args, "requires") : NULL;
        cg_strbuf_reset(&why);
        int st = wstate;
        if (st == CG_RUNS)
            st = filter_state(rc, branch, json_is_object(args) ? json_object_get(args, "filters") : NULL, &why);
        else
            cg_strbuf_adds(&why, wstate_why);
        add(out, wname, names[i], st, st == CG_RUNS ? NULL : why.buf);
    }
    /* a job whose requirement does not run does not run: to a fixed point */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            cg_branch_job *bj = &out->v[first + i];
            if (bj->state == CG_SKIPPED)
                continue;
            json_t *req = reqs[i];
            size_t nr = json_is_array(req) ? json_array_size(req) : json_is_string(req) ? 1 : 0;
            for (size_t r = 0; r < nr; r++) {
                json_t *x = json_is_array(req) ? json_array_get(req, r) : req;
                const char *rn = json_is_string(x) ? json_string_value(x) : "";
                for (size_t k = 0; k < n; k++) {
                    if (!cg_streq(names[k], rn))
                        continue;
                    int ks = out->v[first + k].state;
                    if (ks == CG_RUNS || (ks == CG_UNKNOWN && bj->state == CG_UNKNOWN))
                        continue;
                    cg_strbuf_reset(&why);
                    cg_strbuf_addf(&why, "it requires '%s', which %s", rn,
                                   ks == CG_SKIPPED ? "does not run" : "may not run");
                    free(bj->why);
                    bj->why = cg_xstrdup(why.buf);
                    bj->state = ks;
                    changed = true;
                    break;
                }
                if (changed && bj->state == CG_SKIPPED)
                    break;
            }
        }
    }
    cg_strbuf_release(&why);
    free(names);
    free(reqs);
    return 0;
}

int cg_branch_simulate(const char *file, const char *text, size_t len, const char *branch, const char *workflow,
                       cg_branch_run *out, cg_error *err)
{
    cg_doc *doc = cg_doc_parse(file, text, len, NULL, err);
    if (!doc)
        return -1;
    json_t *wfs = json_object_get(cg_doc_root(doc), "workflows");
    json_t *params = json_object();
    cg_parameter_defaults(doc, params);
    cg_pipeline_values pv = {params, "", branch, ""};
    const char *wname;
    json_t *wf;
    bool found = false;
    cg_ref_cache cache; /* each /regex/ compiled once for all entries */
    cg_ref_cache_init(&cache);
    json_object_foreach(wfs, wname, wf) {
        if (cg_streq(wname, "version") || !json_is_object(wf))
            continue;
        if (workflow && !cg_streq(workflow, wname))
            continue;
        found = true;
        simulate_workflow(doc, &pv, &cache, branch, wname, wf, out);
    }
    cg_ref_cache_release(&cache);
    json_decref(params);
    cg_doc_free(doc);
    if (workflow && !found)
        return cg_error_plain(err, "%s has no workflow '%s'", file, workflow);
    return 0;
}

void cg_branch_run_release(cg_branch_run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].workflow);
        free(r->v[i].job);
        free(r->v[i].why);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}
