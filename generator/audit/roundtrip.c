#include "audit/roundtrip.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yamlload.h"
#include "render/config.h"

typedef struct rec_arg {
    const char *key;
    char kind;        /* 'v' scalar, 'm', 's' */
    const char *text; /* scalars */
} rec_arg;

typedef struct rec_entry {
    int job, workflow;
    const char *invoke;
    bool no_name;
    size_t first, nargs; /* in args */
} rec_entry;

typedef struct recorder {
    cg_pool pool;
    rec_entry *v;
    size_t n, cap;
    rec_arg *args;
    size_t nargs, args_cap;
} recorder;

static void on_begin(void *ctx, const cg_template *tpl, int job, int workflow, const char *invoke)
{
    recorder *R = ctx;
    cg_grow(&R->v, &R->cap, R->n + 1, sizeof *R->v);
    R->v[R->n++] = (rec_entry){job, workflow, cg_intern(&R->pool, invoke), tpl->no_name, R->nargs, 0};
}

static void on_arg(void *ctx, const void *key_id, const char *key, const char *key_path, char kind, const char *text,
                   bool typed, const char *value_path, cg_env *env, int source_id)
{
    (void)key_id, (void)key_path, (void)typed, (void)value_path, (void)env, (void)source_id;
    recorder *R = ctx;
    cg_grow(&R->args, &R->args_cap, R->nargs + 1, sizeof *R->args);
    R->args[R->nargs++] = (rec_arg){cg_pool_strndup(&R->pool, key, strlen(key)), kind,
                                    text ? cg_pool_strndup(&R->pool, text, strlen(text)) : NULL};
    R->v[R->n - 1].nargs++;
}

static void on_end(void *ctx)
{
    (void)ctx;
}

/* The fragments' top-level sections, combined as the assembler does. */
static json_t *fragments_data(const cg_model *m)
{
    json_t *all = json_object();
    for (size_t f = 0; f < m->nfragments; f++) {
        json_t *root = cg_doc_root(m->fragments[f].doc);
        const char *k;
        json_t *v;
        json_object_foreach(root, k, v) {
            json_t *have = json_object_get(all, k);
            if (have && json_is_object(have) && json_is_object(v))
                json_object_update(have, v);
            else
                json_object_set_new(all, k, json_deep_copy(v));
        }
    }
    return all;
}

/* Entry e of the generated ones against the loaded entry `got`; 0 or -1. */
static int same_entry(const cg_model *m, const recorder *R, const rec_entry *e, json_t *got, const char *wf,
                      cg_error *err)
{
    json_t *args = json_object_get(got, e->invoke);
    const char *job = m->jobs.v[e->job].name;
    if (!json_is_object(got) || json_object_size(got) != 1 || !(json_is_object(args) || json_is_string(args)))
        return cg_error_plain(err, "config.yml: the entry of job '%s' in workflow '%s' does not run '%s'", job, wf,
                              e->invoke);
    for (size_t i = 0; i < e->nargs; i++) {
        const rec_arg *a = &R->args[e->first + i];
        json_t *v = json_object_get(args, a->key);
        bool ok = a->kind == 'v' ? json_is_string(v) && a->text && cg_streq(json_string_value(v), a->text)
                : a->kind == 'm'  ? json_is_object(v) || (cg_streq(a->key, "filters") && v)
                                  : json_is_array(v);
        if (!ok)
            return cg_error_plain(err, "config.yml: argument '%s' of job '%s' in workflow '%s' loads to other data "
                                  "than cigen wrote", a->key, job, wf);
    }
    return 0;
}

/* Whether loaded entry `got` is the one of job e (by the job it runs and
 * its name). */
static bool is_entry(const cg_model *m, const rec_entry *e, json_t *got)
{
    if (!json_is_object(got) || json_object_size(got) != 1)
        return false;
    json_t *args = json_object_get(got, e->invoke);
    if (!args)
        return false;
    if (e->no_name)
        return true;
    json_t *name = json_object_get(args, "name");
    return json_is_string(name) && cg_streq(json_string_value(name), m->jobs.v[e->job].name);
}

static int compare(const cg_model *m, const recorder *R, json_t *got, cg_error *err)
{
    if (!json_is_object(got))
        return cg_error_plain(err, "config.yml: not a mapping");
    json_t *want = fragments_data(m);
    int rc = 0;
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v) {
        json_t *g = json_object_get(got, k);
        if (cg_streq(k, "workflows") && json_is_object(v) && json_is_object(g)) {
            const char *w;
            json_t *wv;
            json_object_foreach(v, w, wv) {
                if (!json_equal(wv, json_object_get(g, w))) {
                    rc = cg_error_plain(err, "config.yml: workflow '%s' loads to other data than its fragment holds",
                                        w);
                    break;
                }
            }
        } else if (!json_equal(v, g)) {
            rc = cg_error_plain(err, "config.yml: section '%s' loads to other data than the fragments hold", k);
        }
        if (rc != 0)
            break;
    }
    json_object_foreach(got, k, v) {
        if (rc == 0 && !json_object_get(want, k) && !cg_streq(k, "workflows"))
            rc = cg_error_plain(err, "config.yml: section '%s' is in no fragment", k);
    }
    json_decref(want);
    /* the generated entries, in order within each workflow (static ones
     * between them are passed over) */
    size_t nw = m->manifest.nworkflows;
    size_t *at = cg_xcalloc(nw + 1, sizeof *at);
    json_t *wfs = json_object_get(got, "workflows");
    for (size_t i = 0; i < R->n && rc == 0; i++) {
        const rec_entry *e = &R->v[i];
        const char *wf = m->manifest.workflows[e->workflow].name;
        json_t *jobs = json_object_get(json_object_get(wfs, wf), "jobs");
        size_t j = at[e->workflow];
        while (j < json_array_size(jobs) && !is_entry(m, e, json_array_get(jobs, j)))
            j++;
        if (j >= json_array_size(jobs)) {
            rc = cg_error_plain(err, "config.yml: job '%s' is not in workflow '%s' where cigen wrote it",
                                m->jobs.v[e->job].name, wf);
            break;
        }
        rc = same_entry(m, R, e, json_array_get(jobs, j), wf, err);
        at[e->workflow] = j + 1;
    }
    free(at);
    return rc;
}

int cg_roundtrip_check(const cg_model *m, cg_error *err)
{
    recorder R = {0};
    cg_pool_init(&R.pool);
    cg_entry_observer obs = {on_begin, on_arg, on_end, &R};
    cg_config cfg;
    cg_config_init(&cfg);
    int rc = cg_config_render(m, &obs, &cfg, err);
    if (rc == 0) {
        cg_error e;
        cg_error_init(&e);
        cg_doc *doc = cg_doc_parse("config.yml", cfg.config.buf ? cfg.config.buf : "", cfg.config.len, NULL, &e);
        if (!doc)
            rc = cg_error_plain(err, "the config.yml cigen renders does not load: %s", cg_strbuf_str(&e.text));
        else if (!cg_doc_root(doc)) {
            /* nothing but the header: the same as an empty mapping */
            json_t *none = json_object();
            rc = compare(m, &R, none, err);
            json_decref(none);
        } else
            rc = compare(m, &R, cg_doc_root(doc), err);
        cg_doc_free(doc);
        cg_error_release(&e);
    }
    cg_config_release(&cfg);
    free(R.v);
    free(R.args);
    cg_pool_release(&R.pool);
    return rc;
}
