/* CircleCI's logic statements on a pipeline's values (model/condition.h). */
#include "model/condition.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/schema.h"
#include "lang/yaml_path.h"

/* The first reason wins: the caller reports one. */
static void because(cg_strbuf *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void because(cg_strbuf *why, const char *fmt, ...)
{
    if (!why || why->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(why, fmt, ap);
    va_end(ap);
}

/* The value of one pipeline value's name, new reference, or NULL (why set). */
static json_t *lookup(const char *name, size_t n, const cg_pipeline_values *pv, cg_strbuf *why)
{
    static const char params[] = "pipeline.parameters.";
    size_t np = sizeof params - 1;
    if (n > np && strncmp(name, params, np) == 0) {
        char *key = cg_xstrndup(name + np, n - np);
        json_t *v = json_object_get(pv->parameters, key);
        if (!v)
            because(why, "pipeline parameter '%s' has no value (no default, none given)", key);
        free(key);
        return v ? json_incref(v) : NULL;
    }
#define IS(lit) (n == sizeof(lit) - 1 && strncmp(name, lit, n) == 0)
    if (IS("pipeline.schedule.name"))
        return json_string(pv->schedule ? pv->schedule : "");
    if (IS("pipeline.git.branch"))
        return json_string(pv->branch ? pv->branch : "");
    if (IS("pipeline.git.tag"))
        return json_string(pv->tag ? pv->tag : "");
    if (IS("pipeline.trigger_source") && pv->source == CG_SOURCE_SCHEDULED_PIPELINE)
        return json_string("scheduled_pipeline");
#undef IS
    because(why, "'%.*s' is not known when the pipeline starts", (int)n, name);
    return NULL;
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

/* A value as text, as CircleCI puts it into a string. */
static void as_text(cg_strbuf *out, json_t *v)
{
    if (json_is_string(v))
        cg_strbuf_add(out, json_string_value(v), json_string_length(v));
    else if (json_is_true(v))
        cg_strbuf_adds(out, "true");
    else if (json_is_false(v))
        cg_strbuf_adds(out, "false");
    else if (json_is_integer(v))
        cg_strbuf_addf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        cg_strbuf_addf(out, "%.17g", json_real_value(v));
}

/* A string with `<< pipeline.X >>` in it: the whole string one reference
 * keeps the value's type; references inside text become text. */
static json_t *interpolate(const char *s, const cg_pipeline_values *pv, cg_strbuf *why)
{
    const char *open = strstr(s, "<<");
    if (!open)
        return json_string(s);
    cg_strbuf out = CG_STRBUF_INIT;
    json_t *whole = NULL;
    size_t refs = 0;
    const char *p = s;
    while ((open = strstr(p, "<<"))) {
        const char *close = strstr(open + 2, ">>");
        if (!close)
            break;
        cg_strbuf_add(&out, p, (size_t)(open - p));
        const char *a = open + 2, *b = close;
        trim(&a, &b);
        json_t *v = lookup(a, (size_t)(b - a), pv, why);
        if (!v) {
            cg_strbuf_release(&out);
            json_decref(whole);
            return NULL;
        }
        as_text(&out, v);
        json_decref(whole);
        whole = v;
        refs++;
        p = close + 2;
    }
    cg_strbuf_adds(&out, p);
    const char *a = s, *b = s + strlen(s);
    trim(&a, &b);
    json_t *r;
    if (refs == 1 && strncmp(a, "<<", 2) == 0 && b - a >= 4 && strncmp(b - 2, ">>", 2) == 0 && !strstr(a + 2, "<<")) {
        r = whole; /* the string is one reference: the value itself */
    } else {
        r = json_stringn(out.buf ? out.buf : "", out.len);
        json_decref(whole);
    }
    cg_strbuf_release(&out);
    return r;
}

/* CircleCI: false, null, 0, NaN and "" are falsy; everything else truthy. */
static bool truthy(json_t *v)
{
    if (!v || json_is_false(v) || json_is_null(v))
        return false;
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_real(v))
        return json_real_value(v) != 0 && !isnan(json_real_value(v));
    if (json_is_string(v))
        return json_string_length(v) != 0;
    return true;
}

/* The value of an operand (new reference), NULL when unknown. */
static json_t *value(json_t *v, const cg_pipeline_values *pv, cg_strbuf *why)
{
    if (json_is_string(v))
        return interpolate(json_string_value(v), pv, why);
    if (json_is_object(v) && json_object_size(v) == 1) {
        int t = cg_condition_eval(v, pv, why);
        return t == CG_COND_UNKNOWN ? NULL : json_boolean(t);
    }
    return json_incref(v);
}

/* `<< pipeline.trigger_source >>`, alone in a string. */
static bool is_trigger_source(json_t *v)
{
    const char *s = json_string_value(v);
    if (!s)
        return false;
    const char *e = s + strlen(s);
    trim(&s, &e);
    static const char open[] = "<<", close[] = ">>", name[] = "pipeline.trigger_source";
    if (e - s < (ptrdiff_t)(sizeof open + sizeof close - 2) || strncmp(s, open, 2) != 0 || strncmp(e - 2, close, 2) != 0)
        return false;
    s += 2;
    e -= 2;
    trim(&s, &e);
    return (size_t)(e - s) == sizeof name - 1 && strncmp(s, name, sizeof name - 1) == 0;
}

/* An `equal` of pipeline.trigger_source and the text scheduled_pipeline on a
 * push: false, though the push's own source is not known. */
static bool push_vs_scheduled(json_t *arg, const cg_pipeline_values *pv)
{
    if (pv->source != CG_SOURCE_PUSH)
        return false;
    bool src = false, sched = false;
    for (size_t i = 0; i < json_array_size(arg); i++) {
        json_t *v = json_array_get(arg, i);
        if (is_trigger_source(v))
            src = true;
        else if (json_is_string(v) && cg_streq(json_string_value(v), "scheduled_pipeline"))
            sched = true;
    }
    return src && sched;
}

int cg_condition_eval(json_t *stmt, const cg_pipeline_values *pv, cg_strbuf *why)
{
    if (!json_is_object(stmt) || json_object_size(stmt) != 1) {
        if (json_is_object(stmt) || json_is_array(stmt)) {
            because(why, "a statement that is not one of and/or/not/equal");
            return CG_COND_UNKNOWN;
        }
        json_t *v = value(stmt, pv, why);
        if (!v)
            return CG_COND_UNKNOWN;
        int t = truthy(v);
        json_decref(v);
        return t;
    }
    const char *op = json_object_iter_key(json_object_iter(stmt));
    json_t *arg = json_object_iter_value(json_object_iter(stmt));
    if (cg_streq(op, "not")) {
        int t = cg_condition_eval(arg, pv, why);
        return t == CG_COND_UNKNOWN ? t : !t;
    }
    if (cg_streq(op, "and") || cg_streq(op, "or")) {
        if (!json_is_array(arg)) {
            because(why, "'%s' without a list", op);
            return CG_COND_UNKNOWN;
        }
        /* CircleCI: an empty list is false; and/or decide on the first
         * known deciding operand, unknown otherwise */
        bool is_and = cg_streq(op, "and"), unknown = false;
        if (!json_array_size(arg))
            return CG_COND_FALSE;
        for (size_t i = 0; i < json_array_size(arg); i++) {
            int t = cg_condition_eval(json_array_get(arg, i), pv, why);
            if (t == CG_COND_UNKNOWN)
                unknown = true;
            else if (t == !is_and)
                return t;
        }
        return unknown ? CG_COND_UNKNOWN : is_and;
    }
    if (cg_streq(op, "equal")) {
        if (!json_is_array(arg) || !json_array_size(arg)) {
            because(why, "'equal' without a list");
            return CG_COND_UNKNOWN;
        }
        if (push_vs_scheduled(arg, pv))
            return CG_COND_FALSE;
        json_t *first = value(json_array_get(arg, 0), pv, why);
        if (!first)
            return CG_COND_UNKNOWN;
        int eq = CG_COND_TRUE;
        for (size_t i = 1; i < json_array_size(arg) && eq == CG_COND_TRUE; i++) {
            json_t *v = value(json_array_get(arg, i), pv, why);
            eq = !v ? CG_COND_UNKNOWN : json_equal(first, v) ? CG_COND_TRUE : CG_COND_FALSE;
            json_decref(v);
        }
        json_decref(first);
        return eq;
    }
    because(why, "'%s' is not evaluated by cigen", op);
    return CG_COND_UNKNOWN;
}

void cg_parameter_defaults(const cg_doc *doc, json_t *into)
{
    const char *name;
    json_t *d;
    cg_strbuf path = CG_STRBUF_INIT;
    json_object_foreach(json_object_get(cg_doc_root(doc), "parameters"), name, d) {
        json_t *def = json_is_object(d) ? json_object_get(d, "default") : NULL;
        const char *type = json_string_value(json_object_get(d, "type"));
        if (!def)
            continue;
        cg_strbuf_reset(&path);
        cg_path_join_key(&path, "/parameters", name);
        cg_path_push_key(&path, "default");
        bool typed = type && (cg_streq(type, "boolean") || cg_streq(type, "integer"));
        json_object_set_new(into, name, typed ? cg_doc_typed(doc, path.buf, def) : json_incref(def));
    }
    cg_strbuf_release(&path);
}

json_t *cg_parameter_given(json_t *decls, const char *name, const char *text, cg_strbuf *msg)
{
    json_t *d = json_object_get(decls, name);
    const char *type = json_string_value(json_object_get(d, "type"));
    if (!d) {
        const char **names = cg_xcalloc(json_object_size(decls) + 1, sizeof *names);
        size_t n = 0;
        const char *k;
        json_t *x;
        cg_strbuf hint = CG_STRBUF_INIT;
        json_object_foreach(decls, k, x)
            names[n++] = k;
        cg_did_you_mean(&hint, name, names, n);
        free(names);
        cg_strbuf_addf(msg, "--parameter '%s': no top-level 'parameters:' declares it%s", name, cg_strbuf_str(&hint));
        cg_strbuf_release(&hint);
        return NULL;
    }
    if (type && cg_streq(type, "boolean")) {
        if (cg_streq(text, "true") || cg_streq(text, "false"))
            return json_boolean(cg_streq(text, "true"));
        cg_strbuf_addf(msg, "--parameter '%s': a boolean parameter is true or false, not '%s'", name, text);
        return NULL;
    }
    if (type && cg_streq(type, "integer")) {
        char *end = NULL;
        long long x = strtoll(text, &end, 10);
        if (*text && end && !*end)
            return json_integer((json_int_t)x);
        cg_strbuf_addf(msg, "--parameter '%s': an integer parameter, not '%s'", name, text);
        return NULL;
    }
    if (type && cg_streq(type, "enum")) {
        json_t *e = json_object_get(d, "enum");
        cg_strbuf all = CG_STRBUF_INIT;
        for (size_t k = 0; k < json_array_size(e); k++) {
            const char *s = json_string_value(json_array_get(e, k));
            if (s && cg_streq(s, text)) {
                cg_strbuf_release(&all);
                return json_string(text);
            }
            cg_strbuf_addf(&all, "%s'%s'", k ? ", " : "", s ? s : "");
        }
        cg_strbuf_addf(msg, "--parameter '%s': '%s' is not one of its enum values (%s)", name, text,
                       all.len ? all.buf : "none");
        cg_strbuf_release(&all);
        return NULL;
    }
    return json_string(text);
}
