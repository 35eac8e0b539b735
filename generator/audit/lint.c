/* lint — the findings; the observer of each entry as it is rendered (its
 * arguments against the job's parameters); cg_lint_finish, which runs the
 * checks of the whole config (lint_defs, lint_refs, lint_workflows,
 * lint_project); printing and JSON. */
#include "audit/lint.h"
#include "audit/lint_impl.h"

/* ---- findings ---- */

void cg_lint_add(cg_lint *l, bool error, const char *code, const cg_pos *pos, const cg_pos *note_pos,
                 const char *note, int job, int wf, const char *fmt, ...)
{
    cg_strbuf msg = CG_STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    /* the same finding at the same place is reported once, with a count */
    cg_strbuf key = CG_STRBUF_INIT;
    cg_strbuf_addf(&key, "%s|%s|%u|%u|%s", code, pos && pos->file ? pos->file : "", pos ? pos->line : 0,
                   pos ? pos->col : 0, msg.buf);
    size_t k = (size_t)cg_map_get(&l->seen, key.buf);
    if (k) {
        l->v[k - 1].repeats++;
        cg_strbuf_release(&msg);
        cg_strbuf_release(&key);
        return;
    }
    cg_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
    cg_finding *f = &l->v[l->n];
    memset(f, 0, sizeof *f);
    f->error = error;
    f->code = code;
    if (pos)
        f->pos = *pos;
    if (note_pos && note) {
        f->note_pos = *note_pos;
        f->note = cg_xstrdup(note);
    }
    f->message = cg_strbuf_detach(&msg, NULL);
    f->job = job;
    f->workflow = wf;
    cg_map_put(&l->seen, cg_intern(&l->pool, key.buf), (void *)(l->n + 1));
    l->n++;
    if (error)
        l->nerrors++;
    else
        l->nwarnings++;
    cg_strbuf_release(&key);
}

void cg_lint_hint(cg_strbuf *out, const char *word, const cg_def *defs, size_t n, const char *const *more, size_t nmore)
{
    const char **c = cg_xmalloc((n + nmore + 1) * sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = defs[i].name;
    for (size_t i = 0; i < nmore; i++)
        c[n + i] = more[i];
    cg_did_you_mean(out, word, c, n + nmore);
    free(c);
}

/* " (did you mean 'x'?)" over the names of a `parameters:` mapping (NULL: none). */
void cg_lint_param_hint(cg_strbuf *out, const char *word, json_t *params)
{
    const char **names = cg_xmalloc((json_object_size(params) + 1) * sizeof *names);
    size_t nn = 0;
    const char *pk;
    json_t *pv;
    json_object_foreach(params, pk, pv) names[nn++] = pk;
    cg_did_you_mean(out, word, names, nn);
    free(names);
}

void cg_lint_init(cg_lint *l, const cg_model *p)
{
    memset(l, 0, sizeof *l);
    l->p = p;
    cg_map_init(&l->job_index);
    cg_map_init(&l->command_index);
    cg_map_init(&l->executor_index);
    cg_map_init(&l->orbs);
    cg_map_init(&l->seen);
    cg_pool_init(&l->pool);
    cg_lint_collect(l, "jobs", &l->jobs, &l->njobs, &l->job_index);
    cg_lint_collect(l, "commands", &l->commands, &l->ncommands, &l->command_index);
    cg_lint_collect(l, "executors", &l->executors, &l->nexecutors, &l->executor_index);
    l->pipeline_params = json_object();
    for (size_t f = 0; f < p->nfragments; f++) {
        json_t *orbs = json_object_get(cg_doc_root(p->fragments[f].doc), "orbs");
        const char *k;
        json_t *v;
        json_object_foreach(orbs, k, v) cg_map_put(&l->orbs, cg_intern(&l->pool, k), (void *)1);
        json_t *params = json_object_get(cg_doc_root(p->fragments[f].doc), "parameters");
        json_object_foreach(params, k, v) json_object_set_new(l->pipeline_params, k, json_null());
    }
    cg_lint_check_definitions(l);
    cg_lint_check_refs(l);
}

void cg_lint_release(cg_lint *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].message);
        free(l->v[i].note);
        free(l->v[i].note2);
    }
    free(l->v);
    free(l->jobs);
    free(l->commands);
    free(l->executors);
    cg_map_release(&l->job_index);
    cg_map_release(&l->command_index);
    cg_map_release(&l->executor_index);
    cg_map_release(&l->orbs);
    json_decref(l->pipeline_params);
    cg_map_release(&l->seen);
    free(l->entry_given);
    free(l->args);
    free(l->required);
    cg_pool_release(&l->pool);
    memset(l, 0, sizeof *l);
}

/* ---- generated entries (called while rendering) ---- */

static cg_pos leaf_pos(const cg_lint *l, int job)
{
    return job >= 0 ? l->p->jobs.v[job].cell->leaf->pos : (cg_pos){0};
}

static char *for_job(const cg_lint *l, int job)
{
    cg_strbuf s = CG_STRBUF_INIT;
    const cg_job *j = &l->p->jobs.v[job];
    cg_strbuf_addf(&s, "in job '%s', whose %s comes from here", j->name, j->members ? "group" : "cell");
    return cg_strbuf_detach(&s, NULL);
}

/* The note on where the template of the entry passes a value. */
static const char *passes_it(const cg_lint *l)
{
    return l->entry_tpl->is_default ? "the default template (the phase has no 'template') passes it here"
                                    : "the template passes it here";
}

void cg_lint_entry_begin(cg_lint *l, const cg_template *tpl, int job, int workflow, const char *invoke)
{
    l->entry_tpl = tpl;
    l->entry_job_index = job;
    l->entry_workflow = workflow;
    l->entry_invoke = cg_intern(&l->pool, invoke);
    l->entry_ngiven = 0;
    cg_def *d = cg_lint_find(l->jobs, &l->job_index, invoke);
    l->entry_job = d;
    l->entry_orb_or_approval = false;
    if (d) {
        d->used = true;
        return;
    }
    cg_pos at = cg_doc_key_where(tpl->doc, tpl->invoke.path);
    if (strchr(invoke, '/')) {
        l->entry_orb_or_approval = true;
        cg_lint_orb_ok(l, invoke, &at, "job");
        return;
    }
    cg_strbuf h = CG_STRBUF_INIT;
    cg_lint_hint(&h, invoke, l->jobs, l->njobs, NULL, 0);
    if (tpl->is_default)
        cg_strbuf_adds(&h, " (the phase has no 'template': its jobs run the job named like the phase)");
    cg_pos lp = leaf_pos(l, job);
    char *note = for_job(l, job);
    cg_lint_add(l, true, "undefined-job", &at, &lp, note, job, workflow,
        "job '%s' is not defined under 'jobs:' in any fragment%s",
        invoke, cg_strbuf_str(&h));
    free(note);
    cg_strbuf_release(&h);
}

/* What lint found about one constant key of a template for the job it invokes. */
typedef struct lint_arg {
    const void *key_id;   /* the key's template node; NULL: an empty slot */
    const cg_def *job;
    json_t *pdef;         /* the parameter, or NULL when the job has none of that name */
    bool invocation;      /* requires, name, context, ... */
    char type;            /* cg_lint_type_code() */
    bool executor;        /* names an executor: typed so, or what the job's `executor:` is */
} lint_arg;

static struct lint_arg *arg_slot(cg_lint *l, const void *key_id, const cg_def *job)
{
    size_t mask = l->args_cap - 1;
    size_t i = (size_t)(((uintptr_t)key_id >> 4) * 0x9E3779B97F4A7C15ULL) & mask;
    while (l->args[i].key_id && !(l->args[i].key_id == key_id && l->args[i].job == job))
        i = (i + 1) & mask;
    return &l->args[i];
}

/* The facts about `key` for the entry's job: remembered per constant key. */
static lint_arg arg_facts(cg_lint *l, const void *key_id, const char *key)
{
    if (key_id && l->args_cap) {
        lint_arg *a = arg_slot(l, key_id, l->entry_job);
        if (a->key_id)
            return *a;
    }
    lint_arg f = {key_id, l->entry_job, NULL, one_of(key, invocation_keys, CG_ARRAY_LEN(invocation_keys)), 0,
                  false};
    if (!f.invocation && l->entry_job) {
        f.pdef = json_object_get(json_object_get(l->entry_job->value, "parameters"), key);
        f.type = f.pdef ? cg_lint_type_code(f.pdef) : 0;
        f.executor = f.type == 'x' || (f.pdef && cg_lint_executor_param(l->entry_job->value, key));
    }
    if (key_id) {
        if ((l->nargs + 1) * 2 > l->args_cap) {
            lint_arg *old = l->args;
            size_t old_cap = l->args_cap;
            l->args_cap = old_cap ? old_cap * 2 : 64;
            l->args = cg_xcalloc(l->args_cap, sizeof *l->args);
            for (size_t i = 0; i < old_cap; i++)
                if (old[i].key_id)
                    *arg_slot(l, old[i].key_id, old[i].job) = old[i];
            free(old);
        }
        *arg_slot(l, key_id, l->entry_job) = f;
        l->nargs++;
    }
    return f;
}

/* Where a finding about a value is blamed: the tree, when the template
 * only names it (source_id), else the template (vp). */
static cg_pos value_blame(cg_env *env, int source_id, const cg_pos *vp, bool *from_tree)
{
    cg_pos source = env && source_id >= 0 ? cg_env_value_pos(env, source_id) : (cg_pos){0};
    *from_tree = source.file != NULL;
    return *from_tree ? source : *vp;
}

/* The value at a JSON pointer of the loaded template ("/run/matrix"), or NULL. */
static json_t *value_at(json_t *v, const char *path)
{
    cg_strbuf part = CG_STRBUF_INIT;
    while (v && *path == '/') {
        path++;
        cg_strbuf_reset(&part);
        for (; *path && *path != '/'; path++) {
            if (path[0] == '~' && (path[1] == '0' || path[1] == '1'))
                cg_strbuf_addc(&part, *++path == '0' ? '~' : '/');
            else
                cg_strbuf_addc(&part, *path);
        }
        const char *k = cg_strbuf_str(&part);
        if (json_is_array(v)) {
            char *end;
            unsigned long i = strtoul(k, &end, 10);
            v = *k && !*end ? json_array_get(v, i) : NULL;
        } else {
            v = json_object_get(v, k);
        }
    }
    cg_strbuf_release(&part);
    return v;
}

/* A template's `matrix: parameters:`: each name is passed to every instance
 * of the job, so it counts as given, and one the job does not declare is
 * the error CircleCI would give (as for a direct argument). */
static void entry_matrix(cg_lint *l, const char *value_path)
{
    const cg_doc *doc = l->entry_tpl->doc;
    json_t *mparams = json_object_get(value_at(cg_doc_root(doc), value_path), "parameters");
    if (!json_is_object(mparams))
        return;
    json_t *params = json_object_get(l->entry_job->value, "parameters");
    cg_strbuf mp = CG_STRBUF_INIT, kp = CG_STRBUF_INIT;
    cg_path_join_key(&mp, value_path, "parameters");
    const char *k;
    json_t *v;
    json_object_foreach(mparams, k, v) {
        cg_grow(&l->entry_given, &l->entry_given_cap, l->entry_ngiven + 1, sizeof *l->entry_given);
        l->entry_given[l->entry_ngiven++] = cg_intern(&l->pool, k);
        if (json_object_get(params, k) || templated(k))
            continue;
        cg_path_join_key(&kp, mp.buf, k);
        cg_pos at = cg_doc_key_where(doc, kp.buf), lp = leaf_pos(l, l->entry_job_index);
        cg_strbuf h = CG_STRBUF_INIT;
        cg_lint_param_hint(&h, k, params);
        char *note = for_job(l, l->entry_job_index);
        cg_lint_add(l, true, "undeclared-parameter", &at, &lp, note, l->entry_job_index, l->entry_workflow,
                    "job '%s' has no parameter '%s' (used in its matrix)%s", l->entry_invoke, k,
                    cg_strbuf_str(&h));
        free(note);
        cg_strbuf_release(&h);
    }
    cg_strbuf_release(&mp);
    cg_strbuf_release(&kp);
}

/* The `<< ... >>` of a scalar an entry passes: blamed on the tree when
 * the value is one placeholder, else on the template. */
static void entry_refs(cg_lint *l, const char *text, const char *value_path, cg_env *env, int source_id)
{
    cg_pos vp = cg_doc_where(l->entry_tpl->doc, value_path), lp = leaf_pos(l, l->entry_job_index);
    bool from_tree;
    cg_pos at = value_blame(env, source_id, &vp, &from_tree);
    char *note = for_job(l, l->entry_job_index);
    size_t before = l->n;
    cg_lint_refs(l, text, &at, NULL, l->entry_job_index, l->entry_workflow, &lp, note);
    for (size_t i = before; from_tree && i < l->n; i++) {
        l->v[i].note2_pos = vp;
        l->v[i].note2 = cg_xstrdup(passes_it(l));
    }
    free(note);
}

void cg_lint_entry_arg(cg_lint *l, const void *key_id, const char *key, const char *key_path, char kind,
                       const char *text, bool typed, const char *value_path, cg_env *env, int source_id)
{
    lint_arg f = arg_facts(l, key_id, key);
    if (kind == 'v' && text && strstr(text, "<<"))
        entry_refs(l, text, value_path, env, source_id);
    if (f.invocation) {
        if (cg_streq(key, "type") && text && cg_streq(text, "approval"))
            l->entry_orb_or_approval = true;
        if (cg_streq(key, "matrix") && kind == 'm' && l->entry_job && value_path)
            entry_matrix(l, value_path);
        return;
    }
    cg_grow(&l->entry_given, &l->entry_given_cap, l->entry_ngiven + 1, sizeof *l->entry_given);
    l->entry_given[l->entry_ngiven++] = key_id ? key : cg_intern(&l->pool, key);
    if (!l->entry_job)
        return;
    const cg_doc *doc = l->entry_tpl->doc;
    json_t *pdef = f.pdef;
    int job = l->entry_job_index, wf = l->entry_workflow;
    if (!pdef) {
        json_t *params = json_object_get(l->entry_job->value, "parameters");
        cg_pos kp = cg_doc_key_where(doc, key_path);
        cg_pos lp = leaf_pos(l, job);
        cg_strbuf h = CG_STRBUF_INIT;
        if (l->entry_tpl->is_default)
            cg_strbuf_addf(&h, " (the phase has no 'template', so its jobs pass every dimension and variable of "
                           "the cell: declare '%s' in the job, or give the phase a template)", key);
        else
            cg_lint_param_hint(&h, key, params);
        char *note = for_job(l, job);
        cg_lint_add(l, true, "undeclared-parameter", &kp, &lp, note, job, wf, "job '%s' has no parameter '%s'%s",
            l->entry_invoke, key, cg_strbuf_str(&h));
        free(note);
        cg_strbuf_release(&h);
        return;
    }
    /* a plain string parameter given a scalar: nothing to check (unless
     * it names the job's executor) */
    if (f.type == 's' && kind == 'v' && !f.executor)
        return;
    cg_strbuf why = CG_STRBUF_INIT;
    const char *bad = cg_lint_misfit(pdef, kind, text ? text : "", typed, &why);
    if (bad) {
        cg_pos vp = cg_doc_where(doc, value_path), lp = leaf_pos(l, job);
        bool from_tree;
        cg_pos at = value_blame(env, source_id, &vp, &from_tree);
        char *note = for_job(l, job);
        cg_lint_add(l, true, "parameter-type", &at, &lp, note, job, wf, "parameter '%s' of job '%s': %s", key,
            l->entry_invoke, bad);
        if (from_tree && l->n && !l->v[l->n - 1].note2 && !l->v[l->n - 1].repeats) {
            l->v[l->n - 1].note2_pos = vp;
            l->v[l->n - 1].note2 = cg_xstrdup(passes_it(l));
        }
        free(note);
    }
    cg_strbuf_release(&why);
    if (f.executor && kind == 'v' && text) {
        cg_def *ex = cg_lint_find(l->executors, &l->executor_index, text);
        if (ex) {
            ex->used = true;
        } else if (!templated(text) && !strchr(text, '/')) {
            cg_pos vp = cg_doc_where(doc, value_path), lp = leaf_pos(l, job);
            bool from_tree;
            cg_pos at = value_blame(env, source_id, &vp, &from_tree);
            char *note = for_job(l, job);
            cg_strbuf h = CG_STRBUF_INIT;
            cg_lint_hint(&h, text, l->executors, l->nexecutors, NULL, 0);
            cg_lint_add(l, true, "undefined-executor", &at, &lp, note, job, wf,
                "executor '%s' is not defined under 'executors:'%s", text, cg_strbuf_str(&h));
            if (from_tree && l->n && !l->v[l->n - 1].note2 && !l->v[l->n - 1].repeats) {
                l->v[l->n - 1].note2_pos = vp;
                l->v[l->n - 1].note2 = cg_xstrdup(passes_it(l));
            }
            cg_strbuf_release(&h);
            free(note);
        }
    }
}

static bool given(const cg_lint *l, const char *key)
{
    for (size_t i = 0; i < l->entry_ngiven; i++)
        if (cg_streq(l->entry_given[i], key))
            return true;
    return false;
}

/* The parameters of a job definition that have no default (found once). */
static const char **required_params(cg_lint *l, const cg_def *d)
{
    size_t i = (size_t)(d - l->jobs);
    if (!l->required)
        l->required = cg_xcalloc(l->njobs + 1, sizeof *l->required);
    if (!l->required[i]) {
        json_t *params = json_object_get(d->value, "parameters");
        const char **v = cg_pool_alloc(&l->pool, (json_object_size(params) + 1) * sizeof *v);
        size_t n = 0;
        const char *k;
        json_t *p;
        json_object_foreach(params, k, p)
            if (json_is_object(p) && !json_object_get(p, "default"))
                v[n++] = k;
        v[n] = NULL;
        l->required[i] = v;
    }
    return l->required[i];
}

void cg_lint_entry_end(cg_lint *l)
{
    if (!l->entry_job)
        return;
    for (const char **r = required_params(l, l->entry_job); *r; r++) {
        const char *k = *r;
        if (given(l, k))
            continue;
        cg_pos at = cg_doc_key_where(l->entry_tpl->doc, l->entry_tpl->invoke.path);
        cg_pos lp = leaf_pos(l, l->entry_job_index);
        char *note = for_job(l, l->entry_job_index);
        cg_lint_add(l, true, "missing-parameter", &at, &lp, note, l->entry_job_index, l->entry_workflow,
            "job '%s' needs parameter '%s' (it has no default)", l->entry_invoke, k);
        free(note);
    }
}

void cg_lint_finish(cg_lint *l, const cg_config *out)
{
    l->out = out;
    cg_lint_check_version(l);
    cg_lint_check_templates_refs(l);
    cg_lint_check_spaced_values(l);
    cg_lint_check_on_request(l);
    cg_lint_check_workflows(l);
    cg_lint_check_tag_traps(l);
    cg_lint_check_unused(l);
    cg_lint_check_idle(l);
    cg_lint_check_limits(l);
    /* the generated line of each finding about a generated job: its first
     * line in the finding's workflow (or in any) */
    const cg_linemap *map = &l->out->linemap;
    bool any = false;
    for (size_t i = 0; i < l->n && !any; i++)
        any = l->v[i].job >= 0;
    if (!any)
        return;
    size_t nw = l->p->manifest.nworkflows;
    uint32_t *first = cg_xcalloc((l->p->jobs.n + 1) * (nw + 1), sizeof *first); /* [job][workflow + 1] */
    for (size_t e = map->n; e-- > 0;) {
        const cg_linemap_entry *x = &map->v[e];
        if (x->job < 0)
            continue;
        size_t row = (size_t)x->job * (nw + 1);
        first[row] = x->out_line;
        if (x->workflow >= 0 && (size_t)x->workflow < nw)
            first[row + 1 + (size_t)x->workflow] = x->out_line;
    }
    for (size_t i = 0; i < l->n; i++) {
        cg_finding *f = &l->v[i];
        if (f->job < 0)
            continue;
        size_t row = (size_t)f->job * (nw + 1);
        uint32_t line = f->workflow < 0 ? first[row] : first[row + 1 + (size_t)f->workflow];
        if (line)
            f->out_line = line;
    }
    free(first);
}

/* A finding as the one diagnostic type, its notes in the order printed. */
static void finding_diag(const cg_lint *l, const cg_finding *f, cg_diag *d)
{
    cg_strbuf msg = CG_STRBUF_INIT;
    cg_strbuf_adds(&msg, f->message);
    if (f->repeats)
        cg_strbuf_addf(&msg, " (and %zu more like it)", f->repeats);
    *d = (cg_diag){f->error ? CG_SEV_ERROR : CG_SEV_WARNING, f->pos, cg_strbuf_detach(&msg, NULL), NULL, 0};
    if (f->note2)
        cg_diag_note(d, &f->note2_pos, f->note2);
    if (f->note)
        cg_diag_note(d, &f->note_pos, f->note);
    if (f->out_line && l->output_on_disk) {
        cg_diag_note(d, &(cg_pos){l->p->manifest.output, f->out_line, 0}, "the generated line");
    } else if (f->out_line) {
        /* the file on disk holds another config: name no line of it */
        char text[600];
        snprintf(text, sizeof text, "line %u of the %s these sources make (not written: the file on disk "
                 "holds another config)", (unsigned)f->out_line, l->p->manifest.output);
        cg_diag_note(d, NULL, text);
    }
}

void cg_lint_print(const cg_lint *l, cg_strbuf *out)
{
    cg_lint_print_some(l, true, out);
}

void cg_lint_print_some(const cg_lint *l, bool warnings, cg_strbuf *out)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!warnings && !l->v[i].error)
            continue;
        cg_diag d;
        finding_diag(l, &l->v[i], &d);
        cg_diag_format(&d, out);
        cg_strbuf_addc(out, '\n');
        cg_diag_release(&d);
    }
}

json_t *cg_lint_json(const cg_lint *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++) {
        const cg_finding *f = &l->v[i];
        json_t *o = json_object();
        json_object_set_new(o, "severity", json_string(f->error ? "error" : "warning"));
        json_object_set_new(o, "code", json_string(f->code));
        json_object_set_new(o, "file", f->pos.file ? json_string(f->pos.file) : json_null());
        json_object_set_new(o, "line", json_integer(f->pos.line));
        json_object_set_new(o, "column", json_integer(f->pos.col));
        json_object_set_new(o, "message", json_string(f->message));
        json_object_set_new(o, "repeats", json_integer((json_int_t)f->repeats));
        if (f->note) {
            json_t *n = json_object();
            json_object_set_new(n, "file", f->note_pos.file ? json_string(f->note_pos.file) : json_null());
            json_object_set_new(n, "line", json_integer(f->note_pos.line));
            json_object_set_new(n, "column", json_integer(f->note_pos.col));
            json_object_set_new(n, "message", json_string(f->note));
            json_object_set_new(o, "note", n);
        }
        json_object_set_new(o, "config_line", f->out_line ? json_integer(f->out_line) : json_null());
        /* whether config_line is a line of the file on disk, or of the config not written */
        json_object_set_new(o, "config_on_disk", json_boolean(l->output_on_disk));
        json_array_append_new(a, o);
    }
    return a;
}
