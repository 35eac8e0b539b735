/* lint_workflows — the jobs of each workflow: names, requires, cycles. */
#include "check/lint.h"
#include "check/lint_impl.h"

#include "base/graph.h"
#include "lang/cron.h"

/* ---- workflows: names, requires, cycles ---- */

typedef struct wnode {
    const char *name;
    cg_pos pos;
    const char **requires;
    cg_pos *requires_pos;       /* of a written entry's requires */
    size_t nrequires;
    int job;                    /* a generated job (its index; its requires are the job's), or -1 */
} wnode;

typedef struct wgraph {
    wnode *v;
    size_t n, cap;
    const cg_jobs *jobs;     /* the generated jobs, when the workflow has some */
    uint32_t *job_node;      /* [jobs->n]: the node of a generated job + 1, 0 when not in the workflow */
    cg_index index; /* name -> node (the first of that name) */
    cg_map alias;   /* matrix alias -> index + 1 */
} wgraph;

static const char *wnode_name(const void *ctx, uint32_t id)
{
    return ((const wgraph *)ctx)->v[id].name;
}

static void node_add(cg_lint *l, wgraph *g, const char *name, const cg_pos *pos, int job, int wf,
                     const char *wname)
{
    name = cg_intern(&l->pool, name);
    cg_grow(&g->v, &g->cap, g->n + 1, sizeof *g->v);
    g->v[g->n] = (wnode){name, *pos, NULL, NULL, 0, job};
    size_t k = cg_index_add(&g->index, (uint32_t)g->n);
    if (k) {
        cg_lint_add(l, true, "duplicate-name", pos, &g->v[k - 1].pos, "the first one", job, wf,
            "two jobs are named '%s' in workflow '%s'", name, wname);
        return;
    }
    g->n++;
}

static void node_requires(cg_lint *l, wnode *nd, json_t *req, const cg_doc *doc, const char *path)
{
    if (!req)
        return;
    size_t n = json_is_array(req) ? json_array_size(req) : 1;
    nd->requires = cg_pool_alloc(&l->pool, (n + 1) * sizeof *nd->requires);
    nd->requires_pos = cg_pool_alloc(&l->pool, (n + 1) * sizeof *nd->requires_pos);
    cg_strbuf ip = CG_STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_is_array(req) ? json_array_get(req, i) : req;
        cg_path_join_index(&ip, path, i);
        if (json_is_object(r) && json_object_size(r) == 1) /* {job: status} */
            r = json_string(json_object_iter_key(json_object_iter(r)));
        else
            json_incref(r);
        if (json_is_string(r)) {
            nd->requires[nd->nrequires] = cg_intern(&l->pool, json_string_value(r));
            nd->requires_pos[nd->nrequires++] = cg_doc_where(doc, json_is_array(req) ? ip.buf : path);
        }
        json_decref(r);
    }
    cg_strbuf_release(&ip);
}

/* The names a matrix entry creates: "<name>-<v1>-<v2>..." per combination. */
static void matrix_names(cg_lint *l, wgraph *g, const char *base, json_t *mparams, const cg_pos *pos, int wf,
                         const char *wname)
{
    size_t nk = json_object_size(mparams);
    const char **keys = cg_xmalloc((nk + 1) * sizeof *keys);
    json_t **vals = cg_xmalloc((nk + 1) * sizeof *vals);
    size_t i = 0, total = 1;
    const char *k;
    json_t *v;
    json_object_foreach(mparams, k, v) {
        keys[i] = k;
        vals[i] = v;
        total *= json_is_array(v) && json_array_size(v) ? json_array_size(v) : 1;
        i++;
    }
    for (size_t c = 0; c < total && c < 10000; c++) {
        cg_strbuf name = CG_STRBUF_INIT;
        cg_strbuf_adds(&name, base);
        size_t rest = c;
        size_t *pick = cg_xmalloc((nk + 1) * sizeof *pick);
        for (size_t q = nk; q-- > 0;) {
            size_t n = json_is_array(vals[q]) && json_array_size(vals[q]) ? json_array_size(vals[q]) : 1;
            pick[q] = rest % n;
            rest /= n;
        }
        for (size_t q = 0; q < nk; q++) {
            json_t *x = json_is_array(vals[q]) ? json_array_get(vals[q], pick[q]) : vals[q];
            cg_strbuf_addf(&name, "-%s", json_is_string(x) ? json_string_value(x) : "");
        }
        free(pick);
        node_add(l, g, name.buf, pos, -1, wf, wname);
        cg_strbuf_release(&name);
    }
    free(keys);
    free(vals);
}

/* A written entry (manifest static, or a fragment's verbatim workflow). */
static void written_entry(cg_lint *l, wgraph *g, json_t *e, const cg_doc *doc, const char *path, int wf,
                          const char *wname)
{
    const char *ref = NULL;
    json_t *args = NULL;
    if (json_is_string(e)) {
        ref = json_string_value(e);
    } else if (json_is_object(e) && json_object_size(e) == 1) {
        ref = json_object_iter_key(json_object_iter(e));
        args = json_object_iter_value(json_object_iter(e));
        if (!json_is_object(args))
            args = NULL;
    }
    if (!ref)
        return;
    cg_strbuf ap = CG_STRBUF_INIT;
    cg_path_join_key(&ap, path, ref);
    cg_pos pos = json_is_string(e) ? cg_doc_where(doc, path) : cg_doc_key_where(doc, ap.buf);
    bool approval = args && cg_streq(json_string_value(json_object_get(args, "type")), "approval");
    cg_def *d = cg_lint_find(l->jobs, &l->job_index, ref);
    json_t *matrix = args ? json_object_get(args, "matrix") : NULL;
    json_t *mparams = json_is_object(matrix) ? json_object_get(matrix, "parameters") : NULL;
    if (d) {
        d->used = true;
        cg_lint_check_args(l, "job", ref, json_object_get(d->value, "parameters"), args, doc, ap.buf, &pos, true,
            mparams);
        if (mparams) {
            cg_strbuf mp = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
            const char *k;
            json_t *v;
            json_object_foreach(mparams, k, v) {
                json_t *pdef = json_object_get(json_object_get(d->value, "parameters"), k);
                cg_path_join_key(&mp, ap.buf, "matrix");
                cg_path_push_key(&mp, "parameters");
                cg_path_push_key(&mp, k);
                if (!pdef) {
                    cg_pos kp = cg_doc_key_where(doc, mp.buf);
                    cg_lint_add(l, true, "undeclared-parameter", &kp, NULL, NULL, -1, wf,
                        "job '%s' has no parameter '%s' (used in its matrix)", ref, k);
                    continue;
                }
                for (size_t i = 0; i < (json_is_array(v) ? json_array_size(v) : 1); i++) {
                    json_t *x = json_is_array(v) ? json_array_get(v, i) : v;
                    cg_strbuf xp = CG_STRBUF_INIT;
                    cg_strbuf_adds(&xp, mp.buf);
                    if (json_is_array(v))
                        cg_path_push_index(&xp, i);
                    const char *text = json_is_string(x) ? json_string_value(x) : "";
                    bool typed = cg_doc_is_plain(doc, xp.buf) && cg_yaml_resolve(text, strlen(text)) != CG_T_STR;
                    const char *bad = cg_lint_misfit(pdef, json_is_object(x) ? 'm' : json_is_array(x) ? 's' : 'v',
                        text, typed, &why);
                    if (bad) {
                        cg_pos p2 = cg_doc_where(doc, xp.buf);
                        cg_lint_add(l, true, "parameter-type", &p2, NULL, NULL, -1, wf,
                            "parameter '%s' of job '%s': %s", k, ref, bad);
                    }
                    cg_strbuf_release(&xp);
                }
            }
            cg_strbuf_release(&mp);
            cg_strbuf_release(&why);
        }
    } else if (!approval) {
        if (strchr(ref, '/')) {
            cg_lint_orb_ok(l, ref, &pos, "job");
        } else {
            cg_strbuf h = CG_STRBUF_INIT;
            cg_lint_hint(&h, ref, l->jobs, l->njobs, NULL, 0);
            cg_lint_add(l, true, "undefined-job", &pos, NULL, NULL, -1, wf,
                "job '%s' is not defined under 'jobs:'%s", ref,
                cg_strbuf_str(&h));
            cg_strbuf_release(&h);
        }
    }
    json_t *name = args ? json_object_get(args, "name") : NULL;
    const char *eff = json_is_string(name) ? json_string_value(name) : ref;
    cg_strbuf rp = CG_STRBUF_INIT;
    cg_path_join_key(&rp, ap.buf, "requires");
    if (mparams && json_object_size(mparams)) {
        json_t *alias = json_object_get(matrix, "alias");
        const char *al = json_is_string(alias) ? json_string_value(alias) : ref;
        size_t first = g->n;
        matrix_names(l, g, eff, mparams, &pos, wf, wname);
        if (g->n > first) {
            node_requires(l, &g->v[first], args ? json_object_get(args, "requires") : NULL, doc, rp.buf);
            for (size_t i = first + 1; i < g->n; i++) {
                g->v[i].requires = g->v[first].requires;
                g->v[i].requires_pos = g->v[first].requires_pos;
                g->v[i].nrequires = g->v[first].nrequires;
            }
            cg_map_put(&g->alias, cg_intern(&l->pool, al), (void *)(first + 1));
        }
    } else {
        size_t before = g->n;
        node_add(l, g, eff, &pos, -1, wf, wname);
        if (g->n > before)
            node_requires(l, &g->v[g->n - 1], args ? json_object_get(args, "requires") : NULL, doc, rp.buf);
    }
    cg_strbuf_release(&rp);
    cg_strbuf_release(&ap);
}

/* The edges of node u: edges[first[u] .. first[u] + n[u]). */
typedef struct adjacency {
    const size_t *first, *n, *edges;
} adjacency;

static size_t adj_degree(const void *ctx, size_t u)
{
    const adjacency *a = ctx;
    return a->n[u];
}

static ptrdiff_t adj_target(const void *ctx, size_t u, size_t i)
{
    const adjacency *a = ctx;
    return (ptrdiff_t)a->edges[a->first[u] + i];
}

static const char *graph_node_name(const void *ctx, size_t u)
{
    const wgraph *g = ctx;
    return g->v[u].name;
}

static void check_graph(cg_lint *l, wgraph *g, int wf, const char *wname)
{
    /* requires name jobs of the same workflow; the edges of node i are
     * adj[first[i] ..] (one array for all) */
    size_t *adj_n = cg_xcalloc(g->n + 1, sizeof *adj_n), *first = cg_xmalloc((g->n + 1) * sizeof *first);
    size_t nedges = 0;
    for (size_t i = 0; i < g->n; i++) {
        first[i] = nedges;
        nedges += g->v[i].nrequires;
    }
    size_t *edges = cg_xmalloc((nedges + 1) * sizeof *edges);
    for (size_t i = 0; i < g->n; i++) {
        wnode *nd = &g->v[i];
        size_t *adj_i = edges + first[i];
        const cg_job *gen = nd->job >= 0 ? &g->jobs->v[nd->job] : NULL;
        for (size_t r = 0; r < nd->nrequires; r++) {
            const char *need = nd->requires[r];
            size_t k = 0;
            if (gen && gen->requires_job[r] >= 0)
                k = g->job_node[gen->requires_job[r]]; /* a job of the same cell, by index */
            if (!k)
                k = cg_index_get(&g->index, need, strlen(need));
            if (!k)
                k = (size_t)cg_map_get(&g->alias, need);
            if (!k && g->jobs) {
                const cg_job *j = cg_jobs_find(g->jobs, need);
                k = j ? g->job_node[j->index] : 0;
            }
            if (k) {
                adj_i[adj_n[i]++] = k - 1;
                continue;
            }
            if (templated(need))
                continue;
            const char **names = cg_xmalloc((g->n + 1) * sizeof *names);
            for (size_t q = 0; q < g->n; q++)
                names[q] = g->v[q].name;
            cg_strbuf h = CG_STRBUF_INIT;
            cg_did_you_mean(&h, need, names, g->n);
            free(names);
            cg_lint_add(l, true, "unknown-requires", gen ? gen->requires_pos[r] : &nd->requires_pos[r], NULL, NULL,
                nd->job, wf,
                "'%s' requires '%s', but workflow '%s' has no job of that name%s", nd->name, need, wname,
                cg_strbuf_str(&h));
            cg_strbuf_release(&h);
        }
    }
    /* cycles */
    adjacency adj = {first, adj_n, edges};
    cg_cycle c;
    if (cg_graph_find_cycle(&(cg_graph){g->n, adj_degree, adj_target, &adj}, &c)) {
        cg_strbuf cyc = CG_STRBUF_INIT;
        cg_cycle_describe(&c, graph_node_name, g, &cyc);
        const wnode *u = &g->v[c.nodes[c.len - 1]];
        cg_lint_add(l, true, "requires-cycle", &u->pos, NULL, NULL, u->job, wf,
            "the jobs of workflow '%s' require each other in a cycle: %s", wname, cyc.buf);
        cg_strbuf_release(&cyc);
        cg_cycle_release(&c);
    }
    free(edges);
    free(first);
    free(adj_n);
}

/* A verbatim workflow's `triggers: - schedule: cron:`, checked as the
 * manifest's `schedule` is (CircleCI refuses the config otherwise). */
static void check_triggers(cg_lint *l, const cg_doc *doc, const char *wname, json_t *wf)
{
    json_t *triggers = json_object_get(wf, "triggers");
    cg_strbuf path = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    for (size_t i = 0; i < json_array_size(triggers); i++) {
        json_t *schedule = json_object_get(json_array_get(triggers, i), "schedule");
        if (!schedule)
            continue;
        json_t *cron = json_object_get(schedule, "cron");
        cg_strbuf_reset(&path);
        cg_strbuf_adds(&path, "/workflows");
        cg_path_push_key(&path, wname);
        cg_path_push_key(&path, "triggers");
        cg_path_push_index(&path, i);
        cg_path_push_key(&path, "schedule");
        if (cron)
            cg_path_push_key(&path, "cron");
        cg_pos at = cg_doc_where(doc, path.buf);
        cg_strbuf_reset(&why);
        if (!json_is_string(cron))
            cg_lint_add(l, true, "cron", &at, NULL, NULL, -1, -1,
                        "workflow '%s': a schedule trigger needs 'cron', a string such as \"5 5 * * *\"", wname);
        else if (cg_cron_check(json_string_value(cron), &why) != 0)
            cg_lint_add(l, true, "cron", &at, NULL, NULL, -1, -1, "workflow '%s': cron \"%s\": %s", wname,
                        json_string_value(cron), why.buf);
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&why);
}

void cg_lint_check_workflows(cg_lint *l)
{
    const cg_model *p = l->p;
    const cg_manifest *m = &p->manifest;
    cg_strbuf path = CG_STRBUF_INIT;
    /* verbatim workflows of fragments */
    for (size_t f = 0; f < p->nfragments; f++) {
        const cg_doc *doc = p->fragments[f].doc;
        json_t *wfs = json_object_get(cg_doc_root(doc), "workflows");
        const char *wname;
        json_t *wf;
        json_object_foreach(wfs, wname, wf) {
            if (cg_streq(wname, "version")) {
                /* `version: 2` is the workflows' version, never a workflow */
                if (json_is_object(wf) || json_is_array(wf)) {
                    cg_pos at = cg_key_pos(doc, "/workflows", wname);
                    cg_lint_add(l, true, "workflow-named-version", &at, NULL, NULL, -1, -1,
                                "a workflow cannot be named 'version' (CircleCI reads 'workflows: version:' as "
                                "the version of the workflows, e.g. 2); rename it");
                }
                continue;
            }
            check_triggers(l, doc, wname, wf);
            wgraph g = {0};
            cg_index_init(&g.index, wnode_name, &g);
            cg_map_init(&g.alias);
            json_t *jobs = json_object_get(wf, "jobs");
            for (size_t i = 0; i < json_array_size(jobs); i++) {
                cg_strbuf_reset(&path);
                cg_strbuf_adds(&path, "/workflows");
                cg_path_push_key(&path, wname);
                cg_path_push_key(&path, "jobs");
                cg_path_push_index(&path, i);
                written_entry(l, &g, json_array_get(jobs, i), doc, path.buf, -1, wname);
            }
            check_graph(l, &g, -1, wname);
            free(g.v);
            cg_index_release(&g.index);
            cg_map_release(&g.alias);
        }
    }
    /* the manifest's workflows: static entries, then the generated jobs */
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        if (p->omitted & ((uint64_t)1 << w))
            continue; /* not written: a special-PR selection left it without jobs */
        wgraph g = {0};
        cg_index_init(&g.index, wnode_name, &g);
        cg_map_init(&g.alias);
        /* the entries as written: what a special-PR selection culled is not */
        for (size_t i = 0; i < p->nstatics; i++)
            if (p->statics[i].workflow == w && !p->statics[i].culled)
                written_entry(l, &g, p->statics[i].entry, m->doc, p->statics[i].path, (int)w, wd->name);
        /* generated names are unique (cg_jobs_build checked): only a clash
         * with a written entry is looked for; their nodes are found by job */
        size_t generated = 0;
        g.jobs = &p->jobs;
        g.job_node = cg_xcalloc(p->jobs.n + 1, sizeof *g.job_node);
        cg_grow(&g.v, &g.cap, g.n + p->jobs.n + 1, sizeof *g.v); /* at most every job: made once, not grown */
        for (size_t k = 0; k < p->jobs.n; k++) {
            const cg_job *j = &p->jobs.v[k];
            if (!(j->workflows & ((uint64_t)1 << w)))
                continue;
            generated++;
            size_t first = cg_index_get(&g.index, j->name, strlen(j->name));
            if (first) {
                cg_lint_add(l, true, "duplicate-name", &j->cell->leaf->pos, &g.v[first - 1].pos, "the first one",
                    (int)k,
                    (int)w, "two jobs are named '%s' in workflow '%s'", j->name, wd->name);
                continue;
            }
            cg_grow(&g.v, &g.cap, g.n + 1, sizeof *g.v);
            g.v[g.n] = (wnode){j->name, j->cell->leaf->pos, j->requires, NULL, j->nrequires, (int)k};
            g.job_node[k] = (uint32_t)++g.n;
        }
        check_graph(l, &g, (int)w, wd->name);
        /* the schema wants at least one job: `jobs: []` is rejected */
        if (g.n == 0)
            cg_lint_add(l, true, "empty-workflow", &wd->pos, NULL, NULL, -1, (int)w,
                "workflow '%s' has no jobs, and CircleCI rejects an empty 'jobs' list: give it jobs (a tier "
                "whose cells land here, or 'jobs'), or remove it", wd->name);
        long max = wd->max_jobs ? wd->max_jobs : m->max_jobs_per_workflow;
        if ((long)g.n > max)
            cg_lint_add(l, false, "workflow-size", &wd->pos, NULL, NULL, -1, (int)w,
                "workflow '%s' has %zu jobs (%zu generated), more than %ld (raise 'max_jobs' if that is intended)",
                wd->name, g.n, generated, max);
        free(g.v);
        free(g.job_node);
        cg_index_release(&g.index);
        cg_map_release(&g.alias);
    }
    cg_strbuf_release(&path);
}
