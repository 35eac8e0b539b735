/* lint_defs — the fragments' jobs, commands and executors, and the values
 * passed to their parameters. */
#include "audit/lint.h"
#include "audit/lint_impl.h"

/* ---- definitions ---- */

void cg_lint_collect(cg_lint *l, const char *section, cg_def **out, size_t *n, cg_map *index)
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

cg_def *cg_lint_find(cg_def *defs, const cg_map *index, const char *name)
{
    size_t k = (size_t)cg_map_get(index, name);
    return k ? &defs[k - 1] : NULL;
}

bool cg_lint_orb_ok(cg_lint *l, const char *ref, const cg_pos *pos, const char *what)
{
    const char *slash = strchr(ref, '/');
    char orb[256];
    snprintf(orb, sizeof orb, "%.*s", (int)(slash - ref), ref);
    if (cg_map_has(&l->orbs, orb))
        return true;
    cg_lint_add(l, true, "undeclared-orb", pos, NULL, NULL, -1, -1,
        "%s '%s' uses orb '%s', which is not declared under 'orbs:'",
        what, ref, orb);
    return false;
}

/* ---- parameter values ---- */

/* A parameter's type, as one letter: s string, b boolean, i integer,
 * e enum, S steps, x executor, 0 anything else. */
char cg_lint_type_code(json_t *pdef)
{
    const char *type = json_string_value(json_object_get(pdef, "type"));
    static const char *const names[] = {"string", "boolean", "integer", "enum", "steps", "executor"};
    static const char codes[] = "sbieSx";
    for (size_t i = 0; type && i < CG_ARRAY_LEN(names); i++)
        if (cg_streq(type, names[i]))
            return codes[i];
    return 0;
}

bool cg_lint_executor_param(json_t *job, const char *name)
{
    const char *ex = json_string_value(json_object_get(job, "executor"));
    static const char pre[] = "parameters.";
    if (!ex || strncmp(ex, "<<", 2) != 0)
        return false;
    for (ex += 2; *ex == ' '; ex++)
        ;
    size_t n = strlen(name);
    if (strncmp(ex, pre, sizeof pre - 1) != 0 || strncmp(ex + sizeof pre - 1, name, n) != 0)
        return false;
    for (ex += sizeof pre - 1 + n; *ex == ' '; ex++)
        ;
    return cg_streq(ex, ">>");
}

/* Why `value` does not fit the parameter (NULL when it does). */
const char *cg_lint_misfit(json_t *pdef, char kind, const char *text, bool typed, cg_strbuf *why)
{
    char code = cg_lint_type_code(pdef);
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
    cg_def *d = cg_lint_find(l->executors, &l->executor_index, name);
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
                cg_lint_param_hint(&h, k, params);
                cg_lint_add(l, true, "undeclared-parameter", &kp, NULL, NULL, -1, -1,
                    "executor '%s' has no parameter '%s'%s",
                    name, k, cg_strbuf_str(&h));
                cg_strbuf_release(&h);
                continue;
            }
            const char *text = json_is_string(v) ? json_string_value(v) : "";
            bool typed = cg_doc_is_plain(doc, vp.buf) && cg_yaml_resolve(text, strlen(text)) != CG_T_STR;
            const char *bad = cg_lint_misfit(pdef, json_is_object(v) ? 'm' : json_is_array(v) ? 's' : 'v', text,
                                             typed, &why);
            if (bad) {
                cg_pos p2 = cg_doc_where(doc, vp.buf);
                cg_lint_add(l, true, "parameter-type", &p2, NULL, NULL, -1, -1,
                    "parameter '%s' of executor '%s': %s", k, name, bad);
            }
        }
        json_object_foreach(params, k, v)
            if (json_is_object(v) && !json_object_get(v, "default") && !json_object_get(ex, k))
                cg_lint_add(l, true, "missing-parameter", &pos, NULL, NULL, -1, -1,
                    "executor '%s' needs parameter '%s' (it has no default)", name, k);
        cg_strbuf_release(&why);
        cg_strbuf_release(&vp);
        return;
    }
    if (strchr(name, '/')) {
        cg_lint_orb_ok(l, name, &pos, "executor");
        return;
    }
    cg_strbuf h = CG_STRBUF_INIT;
    cg_lint_hint(&h, name, l->executors, l->nexecutors, NULL, 0);
    cg_lint_add(l, true, "undefined-executor", &pos, NULL, NULL, -1, -1,
        "executor '%s' is not defined under 'executors:'%s",
        name, cg_strbuf_str(&h));
    cg_strbuf_release(&h);
}

void cg_lint_check_args(cg_lint *l, const char *what, const char *target, json_t *def, json_t *given,
                        const cg_doc *doc, const char *path, const cg_pos *at, bool skip_invocation_keys,
                        json_t *matrix_params)
{
    json_t *params = json_object_get(def, "parameters");
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
            cg_lint_param_hint(&h, k, params);
            cg_lint_add(l, true, "undeclared-parameter", &kp, NULL, NULL, -1, -1, "%s '%s' has no parameter '%s'%s",
                what,
                target, k, cg_strbuf_str(&h));
            cg_strbuf_release(&h);
            continue;
        }
        const char *text = json_is_string(v) ? json_string_value(v) : "";
        char kind = json_is_object(v) ? 'm' : json_is_array(v) ? 's' : 'v';
        bool typed = kind == 'v' && cg_doc_is_plain(doc, vp.buf) && cg_yaml_resolve(text, strlen(text)) != CG_T_STR;
        const char *bad = cg_lint_misfit(pdef, kind, text, typed, &why);
        if (bad) {
            cg_pos p2 = cg_doc_where(doc, vp.buf);
            cg_lint_add(l, true, "parameter-type", &p2, NULL, NULL, -1, -1, "parameter '%s' of %s '%s': %s", k, what,
                target, bad);
        }
        const char *type = json_string_value(json_object_get(pdef, "type"));
        if (cg_streq(type, "executor") || cg_lint_executor_param(def, k))
            executor_ref(l, v, doc, vp.buf);
    }
    json_object_foreach(params, k, v) {
        if (!json_is_object(v) || json_object_get(v, "default"))
            continue;
        if (json_object_get(given, k) || (matrix_params && json_object_get(matrix_params, k)))
            continue;
        cg_lint_add(l, true, "missing-parameter", at, NULL, NULL, -1, -1,
            "%s '%s' needs parameter '%s' (it has no default)",
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
        cg_def *cmd = cg_lint_find(l->commands, &l->command_index, name);
        if (cmd) {
            cmd->used = true;
            json_t *given = json_is_object(args) ? args : NULL;
            cg_lint_check_args(l, "command", name, cmd->value, given, doc, ap.buf, &pos,
                       false, NULL);
            continue;
        }
        if (strchr(name, '/')) {
            cg_lint_orb_ok(l, name, &pos, "step");
            continue;
        }
        cg_strbuf h = CG_STRBUF_INIT;
        cg_lint_hint(&h, name, l->commands, l->ncommands, builtin_steps, CG_ARRAY_LEN(builtin_steps));
        cg_lint_add(l, true, "undefined-step", &pos, NULL, NULL, -1, -1,
            "step '%s' is not a built-in step, a command under 'commands:', or an orb command%s", name,
            cg_strbuf_str(&h));
        cg_strbuf_release(&h);
    }
    cg_strbuf_release(&sp);
    cg_strbuf_release(&ap);
}

unsigned cg_lint_depth_of(json_t *v)
{
    unsigned d = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            unsigned c = cg_lint_depth_of(x);
            if (c > d)
                d = c;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            unsigned c = cg_lint_depth_of(json_array_get(v, i));
            if (c > d)
                d = c;
        }
        return d + 1;
    }
    return 0;
}

void cg_lint_check_definitions(cg_lint *l)
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
        /* executor-typed parameters (and those `executor:` is) name
         * executors through their defaults */
        json_t *params = json_object_get(d->value, "parameters");
        const char *k;
        json_t *pd;
        json_object_foreach(params, k, pd) {
            json_t *def = json_object_get(pd, "default");
            if (def && (cg_streq(json_string_value(json_object_get(pd, "type")), "executor") ||
                        cg_lint_executor_param(d->value, k))) {
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
