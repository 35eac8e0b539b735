#include "check/lint.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/expand.h"
#include "model/model.h"
#include "render/config.h"
#include "lang/schema.h"
#include "lang/template.h"
#include "lang/yamlwrite.h"

static const char *const builtin_steps[] = {
    "run", "checkout", "setup_remote_docker", "save_cache", "restore_cache", "deploy",
    "store_artifacts", "store_test_results", "persist_to_workspace", "attach_workspace",
    "add_ssh_keys", "when", "unless"};
static const char *const invocation_keys[] = {
    "requires", "name", "context", "filters", "matrix", "type", "pre-steps", "post-steps",
    "serial-group", "override-with", "plan_name", "key"};

#define MAX_DEPTH_WARNING 32

static bool one_of(const char *s, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cg_streq(s, v[i]))
            return true;
    return false;
}

static bool templated(const char *s)
{
    return s && strstr(s, "<<") && strstr(s, ">>");
}

/* ---- findings ---- */

static void add(cg_lint *l, bool error, const char *code, const cg_pos *pos, const cg_pos *note_pos,
                const char *note, int job, int wf, const char *fmt, ...) __attribute__((format(printf, 9, 10)));

static void add(cg_lint *l, bool error, const char *code, const cg_pos *pos, const cg_pos *note_pos,
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

static void hint(cg_strbuf *out, const char *word, const cg_def *defs, size_t n, const char *const *more, size_t nmore)
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
static void param_hint(cg_strbuf *out, const char *word, json_t *params)
{
    const char **names = cg_xmalloc((json_object_size(params) + 1) * sizeof *names);
    size_t nn = 0;
    const char *pk;
    json_t *pv;
    json_object_foreach(params, pk, pv) names[nn++] = pk;
    cg_did_you_mean(out, word, names, nn);
    free(names);
}

/* ---- definitions ---- */

static void collect(cg_lint *l, const char *section, cg_def **out, size_t *n, cg_map *index)
{
    const cg_model *p = l->p;
    size_t cap = 0;
    for (size_t f = 0; f < p->nfragments; f++) {
        const cg_doc *doc = p->fragments[f].doc;
        json_t *sec = json_object_get(cg_doc_root(doc), section);
        const char *k;
        json_t *v;
        json_object_foreach(sec, k, v) {
            cg_strbuf path = CG_STRBUF_INIT;
            cg_strbuf_addc(&path, '/');
            cg_strbuf_adds(&path, section);
            cg_path_push_key(&path, k);
            cg_grow(out, &cap, *n + 1, sizeof **out);
            (*out)[*n] = (cg_def){k, v, doc, cg_pool_strndup(&l->pool, path.buf, path.len), false};
            cg_map_put(index, k, (void *)(*n + 1));
            (*n)++;
            cg_strbuf_release(&path);
        }
    }
}

static cg_def *find(cg_def *defs, const cg_map *index, const char *name)
{
    size_t k = (size_t)cg_map_get(index, name);
    return k ? &defs[k - 1] : NULL;
}

static bool orb_ok(cg_lint *l, const char *ref, const cg_pos *pos, const char *what)
{
    const char *slash = strchr(ref, '/');
    char orb[256];
    snprintf(orb, sizeof orb, "%.*s", (int)(slash - ref), ref);
    if (cg_map_has(&l->orbs, orb))
        return true;
    add(l, true, "undeclared-orb", pos, NULL, NULL, -1, -1, "%s '%s' uses orb '%s', which is not declared under 'orbs:'",
        what, ref, orb);
    return false;
}

/* ---- parameter values ---- */

/* A parameter's type, as one letter: s string, b boolean, i integer,
 * e enum, S steps, x executor, 0 anything else. */
static char type_code(json_t *pdef)
{
    const char *type = json_string_value(json_object_get(pdef, "type"));
    static const char *const names[] = {"string", "boolean", "integer", "enum", "steps", "executor"};
    static const char codes[] = "sbieSx";
    for (size_t i = 0; type && i < CG_ARRAY_LEN(names); i++)
        if (cg_streq(type, names[i]))
            return codes[i];
    return 0;
}

/* Why `value` does not fit the parameter (NULL when it does). */
static const char *misfit(json_t *pdef, char kind, const char *text, bool typed, cg_strbuf *why)
{
    char code = type_code(pdef);
    const char *type = code == 's' ? "string" : code == 'b' ? "boolean" : code == 'i' ? "integer"
                     : code == 'e' ? "enum" : code == 'S' ? "steps" : code == 'x' ? "executor" : NULL;
    if (kind == 'v' && templated(text))
        return NULL;
    if (!type)
        return NULL;
    if (code == 's' && kind == 'v')
        return NULL; /* the common case, first */
    cg_strbuf_reset(why);
    if (cg_streq(type, "string") && kind != 'v')
        cg_strbuf_adds(why, "a string is expected, not a mapping or a list");
    else if (cg_streq(type, "boolean") && !(kind == 'v' && typed && cg_yaml_resolve(text, strlen(text)) == CG_T_BOOL))
        cg_strbuf_addf(why, "a boolean is expected (true or false), not %s%s%s",
                       kind == 'v' ? (typed ? "" : "the string '") : "a collection", kind == 'v' ? text : "",
                       kind == 'v' && !typed ? "'" : "");
    else if (cg_streq(type, "integer") && !(kind == 'v' && typed && cg_yaml_resolve(text, strlen(text)) == CG_T_INT))
        cg_strbuf_addf(why, "an integer is expected, not %s%s%s", kind == 'v' ? (typed ? "" : "the string '") : "a collection",
                       kind == 'v' ? text : "", kind == 'v' && !typed ? "'" : "");
    else if (cg_streq(type, "enum")) {
        json_t *e = json_object_get(pdef, "enum");
        bool ok = false;
        for (size_t i = 0; kind == 'v' && i < json_array_size(e); i++)
            ok = ok || cg_streq(json_string_value(json_array_get(e, i)), text);
        if (!ok && json_is_array(e)) {
            cg_strbuf_adds(why, "one of ");
            for (size_t i = 0; i < json_array_size(e); i++)
                cg_strbuf_addf(why, "%s%s", i ? ", " : "", json_string_value(json_array_get(e, i)));
            cg_strbuf_addf(why, " is expected, not '%s'", kind == 'v' ? text : "a collection");
        }
    } else if (cg_streq(type, "steps") && kind != 's')
        cg_strbuf_adds(why, "a list of steps is expected");
    else if (cg_streq(type, "executor") && kind == 's')
        cg_strbuf_adds(why, "an executor name or {name: ...} is expected, not a list");
    return why->len ? why->buf : NULL;
}

/* An executor named by an `executor` value (a name, or {name: ...}). */
static void executor_ref(cg_lint *l, json_t *ex, const cg_doc *doc, const char *path)
{
    const char *name = json_is_object(ex) ? json_string_value(json_object_get(ex, "name")) : json_string_value(ex);
    if (!name || templated(name))
        return;
    cg_pos pos = cg_doc_where(doc, path);
    cg_def *d = find(l->executors, &l->executor_index, name);
    if (d) {
        d->used = true;
        json_t *params = json_object_get(d->value, "parameters");
        if (!json_is_object(ex))
            return;
        const char *k;
        json_t *v;
        cg_strbuf why = CG_STRBUF_INIT, vp = CG_STRBUF_INIT;
        json_object_foreach(ex, k, v) {
            if (cg_streq(k, "name"))
                continue;
            cg_path_join_key(&vp, path, k);
            json_t *pdef = json_object_get(params, k);
            cg_pos kp = cg_doc_key_where(doc, vp.buf);
            if (!pdef) {
                cg_strbuf h = CG_STRBUF_INIT;
                param_hint(&h, k, params);
                add(l, true, "undeclared-parameter", &kp, NULL, NULL, -1, -1, "executor '%s' has no parameter '%s'%s",
                    name, k, cg_strbuf_str(&h));
                cg_strbuf_release(&h);
                continue;
            }
            const char *text = json_is_string(v) ? json_string_value(v) : "";
            const char *bad = misfit(pdef, json_is_object(v) ? 'm' : json_is_array(v) ? 's' : 'v', text,
                                     cg_doc_is_plain(doc, vp.buf) && cg_yaml_resolve(text, strlen(text)) != CG_T_STR, &why);
            if (bad) {
                cg_pos p2 = cg_doc_where(doc, vp.buf);
                add(l, true, "parameter-type", &p2, NULL, NULL, -1, -1, "parameter '%s' of executor '%s': %s", k, name, bad);
            }
        }
        json_object_foreach(params, k, v)
            if (json_is_object(v) && !json_object_get(v, "default") && !json_object_get(ex, k))
                add(l, true, "missing-parameter", &pos, NULL, NULL, -1, -1,
                    "executor '%s' needs parameter '%s' (it has no default)", name, k);
        cg_strbuf_release(&why);
        cg_strbuf_release(&vp);
        return;
    }
    if (strchr(name, '/')) {
        orb_ok(l, name, &pos, "executor");
        return;
    }
    cg_strbuf h = CG_STRBUF_INIT;
    hint(&h, name, l->executors, l->nexecutors, NULL, 0);
    add(l, true, "undefined-executor", &pos, NULL, NULL, -1, -1, "executor '%s' is not defined under 'executors:'%s",
        name, cg_strbuf_str(&h));
    cg_strbuf_release(&h);
}

/* Arguments given in a loaded file (`given`, at doc/path) against a
 * parameters declaration. `what`/`target`: "job 'x'", for messages. */
static void check_args(cg_lint *l, const char *what, const char *target, json_t *params, json_t *given,
                       const cg_doc *doc, const char *path, const cg_pos *at, bool skip_invocation_keys,
                       json_t *matrix_params)
{
    cg_strbuf why = CG_STRBUF_INIT, vp = CG_STRBUF_INIT;
    const char *k;
    json_t *v;
    json_object_foreach(given, k, v) {
        if (skip_invocation_keys && one_of(k, invocation_keys, CG_ARRAY_LEN(invocation_keys)))
            continue;
        cg_path_join_key(&vp, path, k);
        json_t *pdef = json_object_get(params, k);
        if (!pdef) {
            cg_pos kp = cg_doc_key_where(doc, vp.buf);
            cg_strbuf h = CG_STRBUF_INIT;
            param_hint(&h, k, params);
            add(l, true, "undeclared-parameter", &kp, NULL, NULL, -1, -1, "%s '%s' has no parameter '%s'%s", what,
                target, k, cg_strbuf_str(&h));
            cg_strbuf_release(&h);
            continue;
        }
        const char *text = json_is_string(v) ? json_string_value(v) : "";
        char kind = json_is_object(v) ? 'm' : json_is_array(v) ? 's' : 'v';
        bool typed = kind == 'v' && cg_doc_is_plain(doc, vp.buf) && cg_yaml_resolve(text, strlen(text)) != CG_T_STR;
        const char *bad = misfit(pdef, kind, text, typed, &why);
        if (bad) {
            cg_pos p2 = cg_doc_where(doc, vp.buf);
            add(l, true, "parameter-type", &p2, NULL, NULL, -1, -1, "parameter '%s' of %s '%s': %s", k, what, target, bad);
        }
        const char *type = json_string_value(json_object_get(pdef, "type"));
        if (cg_streq(type, "executor"))
            executor_ref(l, v, doc, vp.buf);
    }
    json_object_foreach(params, k, v) {
        if (!json_is_object(v) || json_object_get(v, "default"))
            continue;
        if (json_object_get(given, k) || (matrix_params && json_object_get(matrix_params, k)))
            continue;
        add(l, true, "missing-parameter", at, NULL, NULL, -1, -1, "%s '%s' needs parameter '%s' (it has no default)",
            what, target, k);
    }
    cg_strbuf_release(&why);
    cg_strbuf_release(&vp);
}

static void check_steps(cg_lint *l, json_t *steps, const cg_doc *doc, const char *path)
{
    if (!json_is_array(steps))
        return;
    cg_strbuf sp = CG_STRBUF_INIT, ap = CG_STRBUF_INIT;
    for (size_t i = 0; i < json_array_size(steps); i++) {
        json_t *st = json_array_get(steps, i);
        cg_path_join_index(&sp, path, i);
        const char *name = NULL;
        json_t *args = NULL;
        if (json_is_string(st)) {
            name = json_string_value(st);
        } else if (json_is_object(st) && json_object_size(st) == 1) {
            name = json_object_iter_key(json_object_iter(st));
            args = json_object_iter_value(json_object_iter(st));
        }
        if (!name || templated(name))
            continue;
        cg_pos pos = cg_doc_where(doc, sp.buf);
        cg_path_join_key(&ap, sp.buf, name);
        if (cg_streq(name, "when") || cg_streq(name, "unless")) {
            cg_strbuf inner = CG_STRBUF_INIT;
            cg_path_join_key(&inner, ap.buf, "steps");
            check_steps(l, json_object_get(args, "steps"), doc, inner.buf);
            cg_strbuf_release(&inner);
            continue;
        }
        if (one_of(name, builtin_steps, CG_ARRAY_LEN(builtin_steps)))
            continue;
        /* `- steps: << parameters.x >>` runs a steps parameter (CircleCI 2.1) */
        if (cg_streq(name, "steps") && json_is_string(args) && templated(json_string_value(args)))
            continue;
        cg_def *cmd = find(l->commands, &l->command_index, name);
        if (cmd) {
            cmd->used = true;
            json_t *given = json_is_object(args) ? args : NULL;
            check_args(l, "command", name, json_object_get(cmd->value, "parameters"), given, doc, ap.buf, &pos,
                       false, NULL);
            continue;
        }
        if (strchr(name, '/')) {
            orb_ok(l, name, &pos, "step");
            continue;
        }
        cg_strbuf h = CG_STRBUF_INIT;
        hint(&h, name, l->commands, l->ncommands, builtin_steps, CG_ARRAY_LEN(builtin_steps));
        add(l, true, "undefined-step", &pos, NULL, NULL, -1, -1,
            "step '%s' is not a built-in step, a command under 'commands:', or an orb command%s", name,
            cg_strbuf_str(&h));
        cg_strbuf_release(&h);
    }
    cg_strbuf_release(&sp);
    cg_strbuf_release(&ap);
}

static unsigned depth_of(json_t *v)
{
    unsigned d = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            unsigned c = depth_of(x);
            if (c > d)
                d = c;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            unsigned c = depth_of(json_array_get(v, i));
            if (c > d)
                d = c;
        }
        return d + 1;
    }
    return 0;
}

static void check_definitions(cg_lint *l)
{
    cg_strbuf p2 = CG_STRBUF_INIT;
    for (size_t i = 0; i < l->njobs; i++) {
        const cg_def *d = &l->jobs[i];
        json_t *ex = json_object_get(d->value, "executor");
        if (ex) {
            cg_path_join_key(&p2, d->path, "executor");
            executor_ref(l, ex, d->doc, p2.buf);
        }
        cg_path_join_key(&p2, d->path, "steps");
        check_steps(l, json_object_get(d->value, "steps"), d->doc, p2.buf);
        /* executor-typed parameters name executors through their defaults */
        json_t *params = json_object_get(d->value, "parameters");
        const char *k;
        json_t *pd;
        json_object_foreach(params, k, pd) {
            json_t *def = json_object_get(pd, "default");
            if (def && cg_streq(json_string_value(json_object_get(pd, "type")), "executor")) {
                cg_strbuf dp = CG_STRBUF_INIT;
                cg_path_join_key(&dp, d->path, "parameters");
                cg_path_push_key(&dp, k);
                cg_path_push_key(&dp, "default");
                executor_ref(l, def, d->doc, dp.buf);
                cg_strbuf_release(&dp);
            }
        }
    }
    for (size_t i = 0; i < l->ncommands; i++) {
        cg_path_join_key(&p2, l->commands[i].path, "steps");
        check_steps(l, json_object_get(l->commands[i].value, "steps"), l->commands[i].doc, p2.buf);
    }
    cg_strbuf_release(&p2);
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
    collect(l, "jobs", &l->jobs, &l->njobs, &l->job_index);
    collect(l, "commands", &l->commands, &l->ncommands, &l->command_index);
    collect(l, "executors", &l->executors, &l->nexecutors, &l->executor_index);
    for (size_t f = 0; f < p->nfragments; f++) {
        json_t *orbs = json_object_get(cg_doc_root(p->fragments[f].doc), "orbs");
        const char *k;
        json_t *v;
        json_object_foreach(orbs, k, v) cg_map_put(&l->orbs, cg_intern(&l->pool, k), (void *)1);
    }
    check_definitions(l);
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
    cg_strbuf_addf(&s, "in job '%s', whose cell comes from here", l->p->jobs.v[job].name);
    return cg_strbuf_detach(&s, NULL);
}

void cg_lint_entry_begin(cg_lint *l, const cg_template *tpl, int job, int workflow, const char *invoke)
{
    l->entry_tpl = tpl;
    l->entry_job_index = job;
    l->entry_workflow = workflow;
    l->entry_invoke = cg_intern(&l->pool, invoke);
    l->entry_ngiven = 0;
    cg_def *d = find(l->jobs, &l->job_index, invoke);
    l->entry_job = d;
    l->entry_orb_or_approval = false;
    if (d) {
        d->used = true;
        return;
    }
    cg_pos at = cg_doc_key_where(tpl->doc, tpl->invoke.path);
    if (strchr(invoke, '/')) {
        l->entry_orb_or_approval = true;
        orb_ok(l, invoke, &at, "job");
        return;
    }
    cg_strbuf h = CG_STRBUF_INIT;
    hint(&h, invoke, l->jobs, l->njobs, NULL, 0);
    cg_pos lp = leaf_pos(l, job);
    char *note = for_job(l, job);
    add(l, true, "undefined-job", &at, &lp, note, job, workflow, "job '%s' is not defined under 'jobs:' in any fragment%s",
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
    char type;            /* type_code() */
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
    lint_arg f = {key_id, l->entry_job, NULL, one_of(key, invocation_keys, CG_ARRAY_LEN(invocation_keys)), 0};
    if (!f.invocation && l->entry_job) {
        f.pdef = json_object_get(json_object_get(l->entry_job->value, "parameters"), key);
        f.type = f.pdef ? type_code(f.pdef) : 0;
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

void cg_lint_entry_arg(cg_lint *l, const void *key_id, const char *key, const char *key_path, char kind,
                       const char *text, bool typed, const char *value_path, cg_env *env, int source_id)
{
    lint_arg f = arg_facts(l, key_id, key);
    if (f.invocation) {
        if (cg_streq(key, "type") && text && cg_streq(text, "approval"))
            l->entry_orb_or_approval = true;
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
        param_hint(&h, key, params);
        char *note = for_job(l, job);
        add(l, true, "undeclared-parameter", &kp, &lp, note, job, wf, "job '%s' has no parameter '%s'%s",
            l->entry_invoke, key, cg_strbuf_str(&h));
        free(note);
        cg_strbuf_release(&h);
        return;
    }
    /* a plain string parameter given a scalar: nothing to check */
    if (f.type == 's' && kind == 'v')
        return;
    cg_strbuf why = CG_STRBUF_INIT;
    const char *bad = misfit(pdef, kind, text ? text : "", typed, &why);
    if (bad) {
        cg_pos vp = cg_doc_where(doc, value_path), lp = leaf_pos(l, job);
        bool from_tree;
        cg_pos at = value_blame(env, source_id, &vp, &from_tree);
        char *note = for_job(l, job);
        add(l, true, "parameter-type", &at, &lp, note, job, wf, "parameter '%s' of job '%s': %s", key,
            l->entry_invoke, bad);
        if (from_tree && l->n && !l->v[l->n - 1].note2 && !l->v[l->n - 1].repeats) {
            l->v[l->n - 1].note2_pos = vp;
            l->v[l->n - 1].note2 = cg_xstrdup("the template passes it here");
        }
        free(note);
    }
    cg_strbuf_release(&why);
    if (f.type == 'x' && kind == 'v' && text) {
        cg_def *ex = find(l->executors, &l->executor_index, text);
        if (ex) {
            ex->used = true;
        } else if (!templated(text) && !strchr(text, '/')) {
            cg_pos vp = cg_doc_where(doc, value_path), lp = leaf_pos(l, job);
            bool from_tree;
            cg_pos at = value_blame(env, source_id, &vp, &from_tree);
            char *note = for_job(l, job);
            cg_strbuf h = CG_STRBUF_INIT;
            hint(&h, text, l->executors, l->nexecutors, NULL, 0);
            add(l, true, "undefined-executor", &at, &lp, note, job, wf,
                "executor '%s' is not defined under 'executors:'%s", text, cg_strbuf_str(&h));
            if (from_tree && l->n && !l->v[l->n - 1].note2 && !l->v[l->n - 1].repeats) {
                l->v[l->n - 1].note2_pos = vp;
                l->v[l->n - 1].note2 = cg_xstrdup("the template passes it here");
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
        add(l, true, "missing-parameter", &at, &lp, note, l->entry_job_index, l->entry_workflow,
            "job '%s' needs parameter '%s' (it has no default)", l->entry_invoke, k);
        free(note);
    }
}

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
        add(l, true, "duplicate-name", pos, &g->v[k - 1].pos, "the first one", job, wf,
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
    cg_def *d = find(l->jobs, &l->job_index, ref);
    json_t *matrix = args ? json_object_get(args, "matrix") : NULL;
    json_t *mparams = json_is_object(matrix) ? json_object_get(matrix, "parameters") : NULL;
    if (d) {
        d->used = true;
        check_args(l, "job", ref, json_object_get(d->value, "parameters"), args, doc, ap.buf, &pos, true, mparams);
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
                    add(l, true, "undeclared-parameter", &kp, NULL, NULL, -1, wf,
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
                    const char *bad = misfit(pdef, json_is_object(x) ? 'm' : json_is_array(x) ? 's' : 'v', text, typed, &why);
                    if (bad) {
                        cg_pos p2 = cg_doc_where(doc, xp.buf);
                        add(l, true, "parameter-type", &p2, NULL, NULL, -1, wf, "parameter '%s' of job '%s': %s", k, ref, bad);
                    }
                    cg_strbuf_release(&xp);
                }
            }
            cg_strbuf_release(&mp);
            cg_strbuf_release(&why);
        }
    } else if (!approval) {
        if (strchr(ref, '/')) {
            orb_ok(l, ref, &pos, "job");
        } else {
            cg_strbuf h = CG_STRBUF_INIT;
            hint(&h, ref, l->jobs, l->njobs, NULL, 0);
            add(l, true, "undefined-job", &pos, NULL, NULL, -1, wf, "job '%s' is not defined under 'jobs:'%s", ref,
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
            add(l, true, "unknown-requires", gen ? gen->requires_pos[r] : &nd->requires_pos[r], NULL, NULL, nd->job, wf,
                "'%s' requires '%s', but workflow '%s' has no job of that name%s", nd->name, need, wname,
                cg_strbuf_str(&h));
            cg_strbuf_release(&h);
        }
    }
    /* cycles: depth-first search with colours */
    int *colour = cg_xcalloc(g->n + 1, sizeof *colour);
    size_t *stack = cg_xmalloc((g->n + 1) * sizeof *stack), *next = cg_xcalloc(g->n + 1, sizeof *next);
    for (size_t s = 0; s < g->n; s++) {
        if (colour[s])
            continue;
        size_t depth = 0;
        stack[depth++] = s;
        colour[s] = 1;
        bool found = false;
        while (depth && !found) {
            size_t u = stack[depth - 1];
            if (next[u] < adj_n[u]) {
                size_t w = edges[first[u] + next[u]++];
                if (colour[w] == 1) {
                    cg_strbuf cyc = CG_STRBUF_INIT;
                    size_t from = 0;
                    while (stack[from] != w)
                        from++;
                    for (size_t i = from; i < depth; i++)
                        cg_strbuf_addf(&cyc, "%s -> ", g->v[stack[i]].name);
                    cg_strbuf_adds(&cyc, g->v[w].name);
                    add(l, true, "requires-cycle", &g->v[u].pos, NULL, NULL, g->v[u].job, wf,
                        "the jobs of workflow '%s' require each other in a cycle: %s", wname, cyc.buf);
                    cg_strbuf_release(&cyc);
                    found = true;
                } else if (colour[w] == 0) {
                    colour[w] = 1;
                    stack[depth++] = w;
                }
            } else {
                colour[u] = 2;
                depth--;
            }
        }
        if (found)
            break;
    }
    free(edges);
    free(first);
    free(adj_n);
    free(colour);
    free(stack);
    free(next);
}

static void check_workflows(cg_lint *l)
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
            if (cg_streq(wname, "version"))
                continue;
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
        wgraph g = {0};
        cg_index_init(&g.index, wnode_name, &g);
        cg_map_init(&g.alias);
        for (size_t i = 0; wd->jobs && i < json_array_size(wd->jobs); i++) {
            cg_strbuf_reset(&path);
            cg_strbuf_adds(&path, wd->path);
            cg_strbuf_adds(&path, "/jobs");
            cg_path_push_index(&path, i);
            written_entry(l, &g, json_array_get(wd->jobs, i), m->doc, path.buf, (int)w, wd->name);
        }
        /* generated names are unique (cg_jobs_build checked): only a clash
         * with a written entry is looked for; their nodes are found by job */
        size_t generated = 0;
        g.jobs = &p->jobs;
        g.job_node = cg_xcalloc(p->jobs.n + 1, sizeof *g.job_node);
        for (size_t k = 0; k < p->jobs.n; k++) {
            const cg_job *j = &p->jobs.v[k];
            if (!(j->workflows & ((uint64_t)1 << w)))
                continue;
            generated++;
            size_t first = cg_index_get(&g.index, j->name, strlen(j->name));
            if (first) {
                add(l, true, "duplicate-name", &j->cell->leaf->pos, &g.v[first - 1].pos, "the first one", (int)k,
                    (int)w, "two jobs are named '%s' in workflow '%s'", j->name, wd->name);
                continue;
            }
            cg_grow(&g.v, &g.cap, g.n + 1, sizeof *g.v);
            g.v[g.n] = (wnode){j->name, j->cell->leaf->pos, j->requires, NULL, j->nrequires, (int)k};
            g.job_node[k] = (uint32_t)++g.n;
        }
        check_graph(l, &g, (int)w, wd->name);
        long max = wd->max_jobs ? wd->max_jobs : m->max_jobs_per_workflow;
        if ((long)g.n > max)
            add(l, false, "workflow-size", &wd->pos, NULL, NULL, -1, (int)w,
                "workflow '%s' has %zu jobs (%zu generated), more than %ld (raise 'max_jobs' if that is intended)",
                wd->name, g.n, generated, max);
        free(g.v);
        free(g.job_node);
        cg_index_release(&g.index);
        cg_map_release(&g.alias);
    }
    cg_strbuf_release(&path);
}

static void check_limits(cg_lint *l)
{
    const cg_model *p = l->p;
    const cg_manifest *m = &p->manifest;
    /* the size with every alias and merge expanded: each fragment's tree
     * written out, plus the generated text (which has no aliases) */
    size_t expanded = l->out->config_size, depth = 0;
    for (size_t f = 0; f < p->nfragments; f++) {
        const cg_doc *doc = p->fragments[f].doc;
        cg_strbuf dump = CG_STRBUF_INIT;
        cg_yw w;
        cg_yw_init(&w, &dump);
        cg_yw_value(&w, doc, "", cg_doc_root(doc));
        cg_yw_release(&w);
        expanded = expanded - (p->fragments[f].len < expanded ? p->fragments[f].len : expanded) + dump.len;
        cg_strbuf_release(&dump);
        size_t d = depth_of(cg_doc_root(doc));
        if (d > depth)
            depth = d;
    }
    long limit = m->max_config_bytes;
    cg_pos at = m->output_pos;
    if ((long)expanded > limit)
        add(l, true, "config-size", &at, NULL, NULL, -1, -1,
            "%s is %zu bytes with its aliases expanded, over the limit of %ld (CircleCI allows 8 MB; "
            "'limits.max_config_bytes' in the manifest)", m->output, expanded, limit);
    else if ((double)expanded > 0.9 * (double)limit)
        add(l, false, "config-size", &at, NULL, NULL, -1, -1,
            "%s is %zu bytes with its aliases expanded, %.0f%% of the limit of %ld", m->output, expanded,
            100.0 * (double)expanded / (double)limit, limit);
    if (depth > MAX_DEPTH_WARNING)
        add(l, false, "nesting", &at, NULL, NULL, -1, -1,
            "a fragment nests %zu levels deep; keep CircleCI configs shallower than %d", depth, MAX_DEPTH_WARNING);
}

static void check_unused(cg_lint *l)
{
    static const struct {
        const char *what;
        size_t off;
    } kinds[] = {{"job", 0}, {"command", 1}, {"executor", 2}};
    for (size_t k = 0; k < 3; k++) {
        /* --only culls jobs on purpose; the full config is linted on landing */
        if (k == 0 && l->p->selection.nonly)
            continue;
        cg_def *defs = k == 0 ? l->jobs : k == 1 ? l->commands : l->executors;
        size_t n = k == 0 ? l->njobs : k == 1 ? l->ncommands : l->nexecutors;
        for (size_t i = 0; i < n; i++) {
            if (defs[i].used)
                continue;
            cg_pos pos = cg_doc_key_where(defs[i].doc, defs[i].path);
            add(l, false, "unused", &pos, NULL, NULL, -1, -1, "%s '%s' is defined but %s", kinds[k].what, defs[i].name,
                k == 0 ? "no workflow runs it" : k == 1 ? "no job or command uses it" : "no job uses it");
        }
    }
}

/* CircleCI needs a top-level 'version'; only fragments can give one. */
static void check_version(cg_lint *l)
{
    const cg_model *p = l->p;
    for (size_t i = 0; i < p->nfragments; i++)
        if (json_object_get(cg_doc_root(p->fragments[i].doc), "version"))
            return;
    cg_pos at = p->manifest.nfragments ? p->manifest.fragment_pos[0] : cg_doc_where(p->manifest_doc, "");
    add(l, true, "no-version", &at, NULL, NULL, -1, -1,
        "%s has no 'version' (CircleCI needs one, e.g. version: 2.1); write it in a fragment", p->manifest.output);
}

void cg_lint_finish(cg_lint *l, const cg_config *out)
{
    l->out = out;
    check_version(l);
    check_workflows(l);
    check_unused(l);
    check_limits(l);
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
    if (f->out_line)
        cg_diag_note(d, &(cg_pos){l->p->manifest.output, f->out_line, 0}, "the generated line");
}

void cg_lint_print(const cg_lint *l, cg_strbuf *out)
{
    for (size_t i = 0; i < l->n; i++) {
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
        json_array_append_new(a, o);
    }
    return a;
}
