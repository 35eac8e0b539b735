/* Comparing two configs read as jobs (audit/report.h): the jobs added,
 * removed and changed, field by field, and the definitions; then grouped
 * (report_group.c). */
#include "audit/report.h"

#include <stdlib.h>
#include <string.h>

#include "audit/report_impl.h"

static char *show(json_t *v)
{
    if (!v)
        return NULL;
    if (json_is_string(v))
        return cg_xstrndup(json_string_value(v), json_string_length(v));
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* Adds one change (taking before and after, either NULL), unless the job
 * has it already. */
static void add_change_text(cg_job_change *jc, const char *field, char *b, char *a)
{
    for (size_t i = 0; i < jc->n; i++) {
        cg_field_change *f = &jc->v[i];
        if (cg_streq(f->field, field) && cg_streq(f->before, b) && cg_streq(f->after, a)) {
            free(a);
            free(b);
            return;
        }
    }
    jc->v = cg_xrealloc(jc->v, (jc->n + 1) * sizeof *jc->v);
    jc->v[jc->n++] = (cg_field_change){cg_xstrdup(field), b, a};
}

static void add_change(cg_job_change *jc, const char *field, json_t *before, json_t *after)
{
    add_change_text(jc, field, show(before), show(after));
}

static void workflows_of(const config *c, const jobrec *r, cg_strbuf *out)
{
    for (const wf_args *e = cg_report_first(c, r); e; e = cg_report_next(c, e))
        cg_strbuf_addf(out, "%s%s", e != cg_report_first(c, r) ? ", " : "", e->workflow);
}

static bool same_workflows(const config *ca, const jobrec *a, const config *cb, const jobrec *b)
{
    const wf_args *x = cg_report_first(ca, a), *y = cg_report_first(cb, b);
    for (; x && y; x = cg_report_next(ca, x), y = cg_report_next(cb, y))
        if (x->workflow != y->workflow && strcmp(x->workflow, y->workflow) != 0)
            return false;
    return !x && !y;
}

/* ---- plain entries, as text ---- */

static bool span_eq(span a, span b)
{
    return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

/* The argument named key, looked for at `hint` first (two entries of a
 * template list their arguments in the same order). */
static kv *kv_find(kvs *a, span key, size_t hint)
{
    if (hint < a->n && span_eq(a->v[hint].key, key))
        return &a->v[hint];
    for (size_t i = 0; i < a->n; i++)
        if (span_eq(a->v[i].key, key))
            return &a->v[i];
    return NULL;
}

/* The same value: the same text, or two plain values that read the same. */
static bool kv_same(kv *a, kv *b)
{
    if (span_eq(a->raw, b->raw))
        return true;
    return cg_report_kv_simple(a) && cg_report_kv_simple(b) && span_eq(a->val, b->val);
}

static bool is_name(span key)
{
    return key.n == 4 && memcmp(key.s, "name", 4) == 0;
}

/* Compares two plain entries' arguments (their bytes xt and yt) without
 * reading them as YAML, adding the changes as compare_job would: 0, or 1
 * when a value that differs needs YAML to show (nothing added then). */
static int compare_plain(const wf_args *x, const char *xt, const wf_args *y, const char *yt, cg_job_change *jc)
{
    if (!x->plain || !y->plain || x->args_indent != y->args_indent)
        return 1;
    kvs a, b;
    if (!cg_report_scan_args(x, xt, &a))
        return 1;
    if (!cg_report_scan_args(y, yt, &b)) {
        cg_report_kvs_release(&a);
        return 1;
    }
    /* first whether every change shows without YAML, then the changes in
     * the order compare_job makes them (what a change shows, val, is known
     * by then: kv_simple was asked of both values) */
    int rc = 0;
    for (size_t i = 0; i < a.n && !rc; i++) {
        kv *o = kv_find(&b, a.v[i].key, i);
        if (!is_name(a.v[i].key) && (!o || !kv_same(&a.v[i], o)))
            rc = !cg_report_kv_simple(&a.v[i]) || (o && !cg_report_kv_simple(o));
    }
    for (size_t i = 0; i < b.n && !rc; i++)
        if (!is_name(b.v[i].key) && !kv_find(&a, b.v[i].key, i))
            rc = !cg_report_kv_simple(&b.v[i]);
    for (size_t i = 0; i < a.n && !rc; i++) {
        kv *o = kv_find(&b, a.v[i].key, i);
        if (is_name(a.v[i].key) || (o && kv_same(&a.v[i], o)))
            continue;
        char *field = cg_xstrndup(a.v[i].key.s, a.v[i].key.n);
        add_change_text(jc, field, cg_xstrndup(a.v[i].val.s, a.v[i].val.n),
                             o ? cg_xstrndup(o->val.s, o->val.n) : NULL);
        free(field);
    }
    for (size_t i = 0; i < b.n && !rc; i++) {
        if (is_name(b.v[i].key) || kv_find(&a, b.v[i].key, i))
            continue;
        char *field = cg_xstrndup(b.v[i].key.s, b.v[i].key.n);
        add_change_text(jc, field, NULL, cg_xstrndup(b.v[i].val.s, b.v[i].val.n));
        free(field);
    }
    cg_report_kvs_release(&a);
    cg_report_kvs_release(&b);
    return rc;
}

/* The changes of one pair of entries, read as YAML. */
static void compare_args(json_t *x, json_t *y, cg_job_change *jc)
{
    const char *key;
    json_t *val;
    json_object_foreach(x, key, val) {
        json_t *other = y ? json_object_get(y, key) : NULL;
        if (!cg_streq(key, "name") && (!other || !json_equal(val, other)))
            add_change(jc, key, val, other);
    }
    json_object_foreach(y, key, val)
        if (!cg_streq(key, "name") && !(x && json_object_get(x, key)))
            add_change(jc, key, NULL, val);
}

/* 0, or -1 when a sliced entry does not read alone */
static int compare_job(config *ca, const jobrec *a, config *cb, const jobrec *b, cg_job_change *jc)
{
    if (!cg_streq(a->invoke, b->invoke)) {
        json_t *x = json_string(a->invoke), *y = json_string(b->invoke);
        add_change(jc, "job", x, y);
        json_decref(x);
        json_decref(y);
    }
    cg_strbuf wa = CG_STRBUF_INIT, wb = CG_STRBUF_INIT;
    if (!same_workflows(ca, a, cb, b)) {
        workflows_of(ca, a, &wa);
        workflows_of(cb, b, &wb);
    }
    if (!cg_streq(cg_strbuf_str(&wa), cg_strbuf_str(&wb))) {
        json_t *x = json_string(cg_strbuf_str(&wa)), *y = json_string(cg_strbuf_str(&wb));
        add_change(jc, "workflows", x, y);
        json_decref(x);
        json_decref(y);
    }
    cg_strbuf_release(&wa);
    cg_strbuf_release(&wb);
    for (wf_args *x = cg_report_first(ca, a); x; x = cg_report_next(ca, x)) {
        for (wf_args *y = cg_report_first(cb, b); y; y = cg_report_next(cb, y)) {
            if (!cg_streq(x->workflow, y->workflow))
                continue;
            if (ca->sliced) {
                /* the same text is the same value; plain values compare
                 * as text; anything else is read */
                if ((x->len == y->len && memcmp(x->text, y->text, x->len) == 0) ||
                    compare_plain(x, x->text, y, y->text, jc) == 0) {
                    x->covered = y->covered = true;
                    continue;
                }
                if (cg_report_entry_read(ca, x) != 0 || cg_report_entry_read(cb, y) != 0)
                    return -1;
            }
            compare_args(x->args, y->args, jc);
        }
    }
    return 0;
}

static void compare_definitions(const config *a, const config *b, cg_matrix *m)
{
    static const char *const sections[] = {"jobs", "commands", "executors"};
    if (!a->doc || !b->doc)
        return; /* sliced, and the same text */
    for (size_t s = 0; s < 3; s++) {
        json_t *x = json_object_get(cg_doc_root(a->doc), sections[s]);
        json_t *y = json_object_get(cg_doc_root(b->doc), sections[s]);
        const char *key;
        json_t *val;
        cg_strbuf line = CG_STRBUF_INIT;
        json_object_foreach(y, key, val) {
            json_t *old = x ? json_object_get(x, key) : NULL;
            if (old && json_equal(old, val))
                continue;
            cg_strbuf_reset(&line);
            cg_strbuf_addf(&line, "%s.%s %s", sections[s], key, old ? "changed" : "added");
            m->definitions = cg_xrealloc(m->definitions, (m->ndefinitions + 1) * sizeof *m->definitions);
            m->definitions[m->ndefinitions++] = cg_xstrdup(line.buf);
        }
        json_object_foreach(x, key, val) {
            if (y && json_object_get(y, key))
                continue;
            cg_strbuf_reset(&line);
            cg_strbuf_addf(&line, "%s.%s removed", sections[s], key);
            m->definitions = cg_xrealloc(m->definitions, (m->ndefinitions + 1) * sizeof *m->definitions);
            m->definitions[m->ndefinitions++] = cg_xstrdup(line.buf);
        }
        cg_strbuf_release(&line);
    }
}

static bool same_text(const cg_strbuf *a, const cg_strbuf *b)
{
    return a->len == b->len && memcmp(cg_strbuf_str(a), cg_strbuf_str(b), a->len) == 0;
}

/* Reads what the sliced readings left: the parts besides `workflows:` (for
 * the definitions) and the workflows' skeletons when the two configs'
 * differ, and every entry no comparison read or matched.  0, or -1 when
 * one does not read. */
static int sliced_rest(config *a, config *b)
{
    cg_load_opts o = {.max_bytes = (size_t)1 << 32, .no_positions = true};
    cg_error err;
    cg_error_init(&err);
    int rc = 0;
    for (int side = 0; side < 2 && rc == 0 && !same_text(&a->skeleton, &b->skeleton); side++) {
        config *c = side ? b : a;
        cg_doc *d = cg_doc_parse(c->what, cg_strbuf_str(&c->skeleton), c->skeleton.len, &o, &err);
        rc = d ? 0 : -1;
        cg_doc_free(d);
    }
    if (rc == 0 && !same_text(&a->rest, &b->rest)) {
        a->doc = cg_doc_parse(a->what, cg_strbuf_str(&a->rest), a->rest.len, &o, &err);
        b->doc = a->doc ? cg_doc_parse(b->what, cg_strbuf_str(&b->rest), b->rest.len, &o, &err) : NULL;
        rc = b->doc ? 0 : -1;
    }
    cg_error_release(&err);
    for (int side = 0; side < 2; side++) {
        config *c = side ? b : a;
        for (size_t i = 0; i < c->nents && rc == 0; i++)
            rc = cg_report_entry_check(c, &c->ents[i]);
    }
    return rc;
}

static void job_change_release(cg_job_change *jc)
{
    for (size_t f = 0; f < jc->n; f++) {
        free(jc->v[f].field);
        free(jc->v[f].before);
        free(jc->v[f].after);
    }
    free(jc->v);
    free(jc->name);
    *jc = (cg_job_change){NULL, NULL, 0};
}

/* The jobs of two read configs: 0, or -1 when a sliced reading fell
 * short (m then holds part of a result, for cg_matrix_release). */
static int compare_configs(config *a, config *b, const cg_model *p, cg_matrix *m)
{
    m->valid = true;
    size_t acap = 0, ccap = 0, rcap = 0; /* (doubled as they grow, not one by one) */
    for (size_t i = 0; i < b->n; i++) {
        jobrec *old = cg_report_find(a, b->jobs[i].name);
        if (!old) {
            cg_grow(&m->added, &acap, m->nadded + 1, sizeof *m->added);
            m->added[m->nadded++] = cg_xstrdup(b->jobs[i].name);
            continue;
        }
        cg_job_change jc = {NULL, NULL, 0};
        int rc = compare_job(a, old, b, &b->jobs[i], &jc);
        if (rc != 0 || jc.n) {
            jc.name = cg_xstrdup(b->jobs[i].name);
            cg_grow(&m->changed, &ccap, m->nchanged + 1, sizeof *m->changed);
            m->changed[m->nchanged++] = jc; /* released with m */
        } else {
            job_change_release(&jc);
        }
        if (rc != 0)
            return -1;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (cg_report_find(b, a->jobs[i].name))
            continue;
        cg_grow(&m->removed, &rcap, m->nremoved + 1, sizeof *m->removed);
        m->removed[m->nremoved++] = cg_xstrdup(a->jobs[i].name);
    }
    if (a->sliced && sliced_rest(a, b) != 0)
        return -1;
    compare_definitions(a, b, m);
    cg_report_group(m, p, a, b);
    return 0;
}

void cg_matrix_compare_whole(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                             const cg_model *p, cg_matrix *m)
{
    memset(m, 0, sizeof *m);
    config a, b;
    char *problem = cg_report_read_whole(old_text, old_len, "config.yml (committed)", &a);
    if (problem) {
        m->problem = problem;
        cg_report_config_release(&a);
        return;
    }
    problem = cg_report_read_whole(new_text, new_len, "config.yml (generated)", &b);
    if (problem) {
        m->problem = problem;
        cg_report_config_release(&a);
        cg_report_config_release(&b);
        return;
    }
    compare_configs(&a, &b, p, m);
    cg_report_config_release(&a);
    cg_report_config_release(&b);
}

bool cg_matrix_compare_sliced(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                              const cg_model *p, cg_matrix *m)
{
    memset(m, 0, sizeof *m);
    config a, b;
    size_t hint = p ? p->jobs.n : 0;
    bool ok = cg_report_slice(old_text, old_len, "config.yml (committed)", hint, &a) == 0;
    if (ok) {
        ok = cg_report_slice(new_text, new_len, "config.yml (generated)", hint, &b) == 0 &&
             compare_configs(&a, &b, p, m) == 0;
        cg_report_config_release(&b);
    }
    cg_report_config_release(&a);
    if (!ok)
        cg_matrix_release(m);
    return ok;
}

void cg_matrix_compare(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                       const cg_model *p, cg_matrix *m)
{
    if (!cg_matrix_compare_sliced(old_text, old_len, new_text, new_len, p, m))
        cg_matrix_compare_whole(old_text, old_len, new_text, new_len, p, m);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void cg_matrix_release(cg_matrix *m)
{
    free_list(m->added, m->nadded);
    free_list(m->removed, m->nremoved);
    for (size_t i = 0; i < m->nchanged; i++) {
        for (size_t f = 0; f < m->changed[i].n; f++) {
            free(m->changed[i].v[f].field);
            free(m->changed[i].v[f].before);
            free(m->changed[i].v[f].after);
        }
        free(m->changed[i].v);
        free(m->changed[i].name);
    }
    free(m->changed);
    free_list(m->definitions, m->ndefinitions);
    for (size_t i = 0; i < m->ngroups; i++) {
        free(m->groups[i].label);
        free(m->groups[i].why);
        free_list(m->groups[i].jobs, m->groups[i].n);
    }
    free(m->groups);
    free(m->problem);
    memset(m, 0, sizeof *m);
}
