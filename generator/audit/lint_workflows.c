/* lint_workflows — the jobs of each workflow: names, requires, cycles. */
#include "audit/lint.h"
#include "audit/lint_impl.h"

#include "base/graph.h"
#include "lang/cron.h"
#include "lang/yamlload.h"

/* ---- workflows: names, requires, cycles ---- */

typedef struct wnode {
    const char *name;
    cg_pos pos;
    const char **requires;
    cg_pos *requires_pos;       /* of a written entry's requires */
    size_t nrequires;
    int job;                    /* a generated job (its index; its requires are the job's), or -1 */
    bool *optional;             /* a manifest entry's `name?` requires, or NULL */
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
    g->v[g->n] = (wnode){name, *pos, NULL, NULL, 0, job, NULL};
    size_t k = cg_index_add(&g->index, (uint32_t)g->n);
    if (k) {
        cg_lint_add(l, true, "duplicate-name", pos, &g->v[k - 1].pos, "the first one", job, wf,
            "two jobs are named '%s' in workflow '%s'", name, wname);
        return;
    }
    g->n++;
}

/* A manifest's static entry (wf >= 0) may write `name?`: required only
 * where that job is written (the '?' never reaches the config). */
static void node_requires(cg_lint *l, wnode *nd, json_t *req, const cg_doc *doc, const char *path, int wf)
{
    if (!json_is_array(req))
        return; /* none, or a shape entry_shape() reports */
    size_t n = json_array_size(req);
    nd->requires = cg_pool_alloc(&l->pool, (n + 1) * sizeof *nd->requires);
    nd->requires_pos = cg_pool_alloc(&l->pool, (n + 1) * sizeof *nd->requires_pos);
    cg_strbuf ip = CG_STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *need = cg_requires_item_name(json_array_get(req, i)); /* "a" or {a: status} */
        if (!need)
            continue;
        cg_path_join_index(&ip, path, i);
        size_t len = strlen(need);
        if (wf >= 0 && len > 1 && need[len - 1] == '?') {
            if (!nd->optional) {
                nd->optional = cg_pool_alloc(&l->pool, n + 1);
                memset(nd->optional, 0, n + 1);
            }
            nd->optional[nd->nrequires] = true;
            len--;
        }
        nd->requires[nd->nrequires] = cg_internn(&l->pool, need, len);
        nd->requires_pos[nd->nrequires++] = cg_doc_where(doc, ip.buf);
    }
    cg_strbuf_release(&ip);
}

/* ---- the shape of a written entry, as CircleCI's schema has it ---- */

/* What a written entry's keys are checked against: its document, the
 * path of its arguments, its name for messages, its workflow. */
typedef struct shape {
    cg_lint *l;
    const cg_doc *doc;
    const char *args_path;
    const char *name;
    int wf;
    cg_strbuf path;
} shape;

/* The path of the arguments' `key` (and of its `sub`, unless NULL), in s->path. */
static const char *arg_path(shape *s, const char *key, const char *sub)
{
    cg_path_join_key(&s->path, s->args_path, key);
    if (sub)
        cg_path_push_key(&s->path, sub);
    return s->path.buf;
}

static void shape_error(shape *s, const char *path, bool at_key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void shape_error(shape *s, const char *path, bool at_key, const char *fmt, ...)
{
    cg_strbuf msg = CG_STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    cg_pos at = at_key ? cg_doc_key_where(s->doc, path) : cg_doc_where(s->doc, path);
    cg_lint_add(s->l, true, "entry-shape", &at, NULL, NULL, -1, s->wf, "%s", msg.buf);
    cg_strbuf_release(&msg);
}

/* A string, or a list of strings: 'context', a filter's 'only' and 'ignore'. */
static void strings(shape *s, json_t *v, const char *path, const char *what, const char *one)
{
    if (json_is_string(v))
        return;
    if (!json_is_array(v)) {
        shape_error(s, path, false, "%s of '%s' must be %s or a list of them, not %s", what, s->name, one,
                    cg_kind_name(s->doc, path, v));
        return;
    }
    cg_strbuf ip = CG_STRBUF_INIT;
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (json_is_string(x))
            continue;
        cg_path_join_index(&ip, path, i);
        shape_error(s, ip.buf, false, "an item of %s of '%s' must be %s, not %s", what, s->name, one,
                    cg_kind_name(s->doc, ip.buf, x));
    }
    cg_strbuf_release(&ip);
}

static bool status_one_of(const char *st, bool in_list)
{
    static const char *const statuses[] = {"success", "failed", "canceled", "not_run", "unauthorized", "terminal"};
    /* 'terminal' (every one of the others) stands alone, never in a list */
    return one_of(st, statuses, CG_ARRAY_LEN(statuses) - in_list);
}

#define STATUSES "success, failed, canceled, not_run, unauthorized or terminal, or a list of them ('terminal' aside)"

/* `requires`: a list of job names and {job: status} mappings, a status
 * one of STATUSES. */
static void shape_requires(shape *s, json_t *req)
{
    const char *path = arg_path(s, "requires", NULL);
    char *rp = cg_xstrdup(path);
    if (!json_is_array(req)) {
        shape_error(s, rp, false, "'requires' of '%s' must be a list (of job names, or {job: status}), not %s",
                    s->name, cg_kind_name(s->doc, rp, req));
        free(rp);
        return;
    }
    cg_strbuf ip = CG_STRBUF_INIT, sp = CG_STRBUF_INIT;
    for (size_t i = 0; i < json_array_size(req); i++) {
        json_t *r = json_array_get(req, i);
        cg_path_join_index(&ip, rp, i);
        if (json_is_string(r))
            continue;
        if (!json_is_object(r) || json_object_size(r) != 1) {
            char kind[64];
            if (json_is_object(r))
                snprintf(kind, sizeof kind, "a mapping of %zu keys", json_object_size(r));
            else
                snprintf(kind, sizeof kind, "%s", cg_kind_name(s->doc, ip.buf, r));
            shape_error(s, ip.buf, false,
                        "an item of 'requires' of '%s' is a job name or a one-key mapping {job: status}, not %s",
                        s->name, kind);
            continue;
        }
        const char *job = json_object_iter_key(json_object_iter(r));
        json_t *st = json_object_iter_value(json_object_iter(r));
        cg_path_join_key(&sp, ip.buf, job);
        if (json_is_string(st) && status_one_of(json_string_value(st), false))
            continue;
        if (json_is_string(st) && json_string_length(st)) {
            shape_error(s, sp.buf, false, "'%s' requires '%s' with status '%s': a status is " STATUSES, s->name,
                        job, json_string_value(st));
            continue;
        }
        if (!json_is_array(st) || json_array_size(st) == 0) {
            shape_error(s, sp.buf, false, "'%s' requires '%s' with %s for a status: a status is " STATUSES, s->name,
                        job, json_is_array(st) ? "an empty list" : cg_kind_name(s->doc, sp.buf, st));
            continue;
        }
        for (size_t k = 0; k < json_array_size(st); k++) {
            json_t *x = json_array_get(st, k);
            if (json_is_string(x) && status_one_of(json_string_value(x), true))
                continue;
            cg_path_join_index(&ip, sp.buf, k);
            if (json_is_string(x) && cg_streq(json_string_value(x), "terminal"))
                shape_error(s, ip.buf, false, "'%s' requires '%s' with a list of statuses holding 'terminal': "
                            "'terminal' (every other status) stands alone, never in a list", s->name, job);
            else if (json_is_string(x) && json_string_length(x))
                shape_error(s, ip.buf, false, "'%s' requires '%s' with status '%s': a status is " STATUSES, s->name,
                            job, json_string_value(x));
            else
                shape_error(s, ip.buf, false, "'%s' requires '%s' with %s in its list of statuses: a status is "
                            STATUSES, s->name, job, cg_kind_name(s->doc, ip.buf, x));
        }
    }
    cg_strbuf_release(&ip);
    cg_strbuf_release(&sp);
    free(rp);
}

/* `filters`: {branches: {only, ignore}, tags: {only, ignore}}, each a
 * string or a list of strings (or a string: a parameter's value). */
static void shape_filters(shape *s, json_t *filters)
{
    if (json_is_string(filters))
        return;
    const char *path = arg_path(s, "filters", NULL);
    if (!json_is_object(filters)) {
        shape_error(s, path, false, "'filters' of '%s' must be a mapping (branches, tags), not %s", s->name,
                    cg_kind_name(s->doc, path, filters));
        return;
    }
    static const char *const on[] = {"branches", "tags"}, *const keys[] = {"only", "ignore"};
    cg_strbuf kp = CG_STRBUF_INIT;
    for (size_t i = 0; i < CG_ARRAY_LEN(on); i++) {
        json_t *f = json_object_get(filters, on[i]);
        if (!f)
            continue;
        char *fp = cg_xstrdup(arg_path(s, "filters", on[i]));
        if (!json_is_object(f)) {
            shape_error(s, fp, false, "'filters: %s' of '%s' must be a mapping (only, ignore), not %s", on[i],
                        s->name, cg_kind_name(s->doc, fp, f));
            free(fp);
            continue;
        }
        const char *k;
        json_t *v;
        json_object_foreach(f, k, v) {
            cg_path_join_key(&kp, fp, k);
            char what[64];
            snprintf(what, sizeof what, "'filters: %s: %s'", on[i], k);
            if (one_of(k, keys, CG_ARRAY_LEN(keys))) {
                strings(s, v, kp.buf, what, i ? "a tag or /pattern/" : "a branch or /pattern/");
                continue;
            }
            cg_strbuf h = CG_STRBUF_INIT;
            cg_did_you_mean(&h, k, keys, CG_ARRAY_LEN(keys));
            shape_error(s, kp.buf, true, "'filters: %s' of '%s' takes 'only' and 'ignore', not '%s'%s", on[i],
                        s->name, k, cg_strbuf_str(&h));
            cg_strbuf_release(&h);
        }
        free(fp);
    }
    cg_strbuf_release(&kp);
}

static void shape_matrix(shape *s, json_t *matrix)
{
    char *mp = cg_xstrdup(arg_path(s, "matrix", NULL));
    json_t *v;
    if (!json_is_object(matrix)) {
        shape_error(s, mp, false, "'matrix' of '%s' must be a mapping (parameters, exclude, alias), not %s", s->name,
                    cg_kind_name(s->doc, mp, matrix));
    } else if (!(v = json_object_get(matrix, "parameters"))) {
        shape_error(s, mp, false, "'matrix' of '%s' needs 'parameters' (a mapping: parameter: [values])", s->name);
    } else if (!json_is_object(v)) {
        const char *p = arg_path(s, "matrix", "parameters");
        shape_error(s, p, false, "'matrix: parameters' of '%s' must be a mapping (parameter: [values]), not %s",
                    s->name, cg_kind_name(s->doc, p, v));
    }
    if (json_is_object(matrix) && (v = json_object_get(matrix, "exclude"))) {
        char *ep = cg_xstrdup(arg_path(s, "matrix", "exclude"));
        if (!json_is_array(v))
            shape_error(s, ep, false, "'matrix: exclude' of '%s' must be a list of mappings (parameter: value), "
                        "not %s", s->name, cg_kind_name(s->doc, ep, v));
        cg_strbuf ip = CG_STRBUF_INIT;
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (json_is_object(json_array_get(v, i)))
                continue;
            cg_path_join_index(&ip, ep, i);
            shape_error(s, ip.buf, false, "an item of 'matrix: exclude' of '%s' must be a mapping (parameter: "
                        "value), not %s", s->name, cg_kind_name(s->doc, ip.buf, json_array_get(v, i)));
        }
        cg_strbuf_release(&ip);
        free(ep);
    }
    if (json_is_object(matrix) && (v = json_object_get(matrix, "alias")) && !json_is_string(v)) {
        const char *p = arg_path(s, "matrix", "alias");
        shape_error(s, p, false, "'matrix: alias' of '%s' must be a string, not %s", s->name,
                    cg_kind_name(s->doc, p, v));
    }
    free(mp);
}

/* The keys of a written entry's arguments that CircleCI's schema
 * constrains; `args` is the value of {job: args} (NULL for "job"). */
static void entry_shape(cg_lint *l, const char *ref, const char *eff, json_t *args, const cg_doc *doc,
                        const char *args_path, int wf)
{
    shape s = {l, doc, args_path, eff, wf, CG_STRBUF_INIT};
    if (!json_is_object(args)) {
        shape_error(&s, args_path, false, "the arguments of job '%s' must be a mapping (name, requires, ...), not "
                    "%s; with none, write '- %s'", ref, cg_kind_name(doc, args_path, args), ref);
        return;
    }
    json_t *v;
    if ((v = json_object_get(args, "requires")))
        shape_requires(&s, v);
    if ((v = json_object_get(args, "context")))
        strings(&s, v, arg_path(&s, "context", NULL), "'context'", "a context name");
    if ((v = json_object_get(args, "filters")))
        shape_filters(&s, v);
    if ((v = json_object_get(args, "matrix")))
        shape_matrix(&s, v);
    static const char *const plain[] = {"type", "serial-group", "override-with"};
    for (size_t i = 0; i < CG_ARRAY_LEN(plain); i++) {
        if (!(v = json_object_get(args, plain[i])))
            continue;
        const char *p = arg_path(&s, plain[i], NULL);
        if (!json_is_string(v))
            shape_error(&s, p, false, "'%s' of '%s' must be a string, not %s", plain[i], eff,
                        cg_kind_name(doc, p, v));
        else if (!json_string_length(v) && cg_streq(plain[i], "serial-group"))
            shape_error(&s, p, false, "'serial-group' of '%s' must not be empty", eff);
    }
    cg_strbuf_release(&s.path);
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
                          const char *wname, bool check_shape)
{
    const char *ref = NULL;
    json_t *args = NULL, *given = NULL;
    if (json_is_string(e)) {
        ref = json_string_value(e);
    } else if (json_is_object(e) && json_object_size(e) == 1) {
        ref = json_object_iter_key(json_object_iter(e));
        args = given = json_object_iter_value(json_object_iter(e));
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
        cg_lint_check_args(l, "job", ref, d->value, args, doc, ap.buf, &pos, true,
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
    if (check_shape && !json_is_string(e))
        entry_shape(l, ref, eff, given, doc, ap.buf, wf);
    cg_strbuf rp = CG_STRBUF_INIT;
    cg_path_join_key(&rp, ap.buf, "requires");
    if (mparams && json_object_size(mparams)) {
        json_t *alias = json_object_get(matrix, "alias");
        const char *al = json_is_string(alias) ? json_string_value(alias) : ref;
        size_t first = g->n;
        matrix_names(l, g, eff, mparams, &pos, wf, wname);
        if (g->n > first) {
            node_requires(l, &g->v[first], args ? json_object_get(args, "requires") : NULL, doc, rp.buf, wf);
            for (size_t i = first + 1; i < g->n; i++) {
                g->v[i].requires = g->v[first].requires;
                g->v[i].requires_pos = g->v[first].requires_pos;
                g->v[i].nrequires = g->v[first].nrequires;
                g->v[i].optional = g->v[first].optional;
            }
            cg_map_put(&g->alias, cg_intern(&l->pool, al), (void *)(first + 1));
        }
    } else {
        size_t before = g->n;
        node_add(l, g, eff, &pos, -1, wf, wname);
        if (g->n > before)
            node_requires(l, &g->v[g->n - 1], args ? json_object_get(args, "requires") : NULL, doc, rp.buf, wf);
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
            if (gen ? cg_job_require_optional(gen, r) : nd->optional && nd->optional[r])
                continue; /* `name?`: not written where its job is not */
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
                written_entry(l, &g, json_array_get(jobs, i), doc, path.buf, -1, wname, true);
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
                written_entry(l, &g, p->statics[i].entry, m->doc, p->statics[i].path, (int)w, wd->name,
                              p->statics[i].origin == w); /* a special-PR copy: its shape is the original's */
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
            g.v[g.n] = (wnode){j->name, j->cell->leaf->pos, j->requires, NULL, j->nrequires, (int)k, NULL};
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

/* ---- the tag trap ---- */

/* Whether an entry's filters let some tag through (tags: with only or ignore). */
static bool runs_on_tags(json_t *args)
{
    json_t *f = json_is_object(args) ? json_object_get(args, "filters") : NULL;
    json_t *t = json_is_object(f) ? json_object_get(f, "tags") : NULL;
    return json_is_object(t) && (json_object_get(t, "only") || json_object_get(t, "ignore"));
}

/* CircleCI's classic trap, read off the written config: a job whose tag
 * filters let a tag through, requiring a job without any, never runs on a
 * tag (https://circleci.com/docs/workflows/#executing-workflows-for-a-git-tag:
 * "if a job requires any other jobs (directly or indirectly), you must
 * specify tag filters for those jobs"). */
void cg_lint_check_tag_traps(cg_lint *l)
{
    const cg_model *p = l->p;
    const cg_config *out = l->out;
    if (!out || !out->config.len || !strstr(cg_strbuf_str(&out->config), "tags:"))
        return; /* no tag filter anywhere: nothing to parse */
    cg_error err;
    cg_error_init(&err);
    cg_doc *doc = cg_doc_parse(p->manifest.output, out->config.buf, out->config.len, NULL, &err);
    cg_error_release(&err);
    if (!doc)
        return; /* lint reports what does not parse elsewhere */
    const char *wname;
    json_t *wf;
    json_object_foreach(json_object_get(cg_doc_root(doc), "workflows"), wname, wf) {
        json_t *jobs = json_is_object(wf) ? json_object_get(wf, "jobs") : NULL;
        cg_map args_of; /* entry name -> its arguments (NULL for a bare name) */
        cg_map_init(&args_of);
        size_t i;
        json_t *e;
        json_array_foreach(jobs, i, e) {
            json_t *a = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
            const char *name = json_is_string(e) ? json_string_value(e) : json_object_iter_key(json_object_iter(e));
            if (json_is_string(json_object_get(a, "name")))
                name = json_string_value(json_object_get(a, "name"));
            if (name)
                cg_map_put(&args_of, name, a ? (void *)a : (void *)jobs);
        }
        json_array_foreach(jobs, i, e) {
            json_t *a = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
            if (!runs_on_tags(a))
                continue;
            const char *name = json_object_iter_key(json_object_iter(e));
            if (json_is_string(json_object_get(a, "name")))
                name = json_string_value(json_object_get(a, "name"));
            json_t *req = json_object_get(a, "requires");
            size_t r;
            json_t *x;
            json_array_foreach(req, r, x) {
                const char *need = cg_requires_item_name(x);
                void *na = need ? cg_map_get(&args_of, need) : NULL;
                if (!na || (na != (void *)jobs && runs_on_tags(na)))
                    continue;
                /* where to point: the generated job's phase, or the static entry */
                const cg_job *j = cg_jobs_find(&p->jobs, name);
                cg_pos at = j ? j->tree->phases[j->phase].pos : p->manifest.output_pos;
                for (size_t s = 0; !j && s < p->nstatics; s++)
                    if (cg_streq(p->statics[s].name, name) &&
                        cg_streq(p->manifest.workflows[p->statics[s].workflow].name, wname))
                        at = p->statics[s].pos;
                cg_lint_add(l, false, "tag-trap", &at, NULL, NULL, j ? (int)j->index : -1, -1,
                            "'%s' in workflow '%s' runs on tags (its 'filters: tags:'), but it requires '%s', "
                            "which has no tag filter and so runs on no tag: '%s' never runs on a tag either; give "
                            "'%s' a tag filter too", name, wname, need, name, need);
            }
        }
        cg_map_release(&args_of);
    }
    cg_doc_free(doc);
}
