#include "lang/manifest.h"

#include <stdlib.h>
#include <string.h>

#include "lang/cron.h"
#include "lang/schema.h"

typedef struct parse {
    const cg_doc *doc;
    cg_pool *pool;
    cg_error *err;
    cg_strbuf path;
    cg_manifest *m;
} parse;

static const char *pooled(parse *P, json_t *v)
{
    return cg_pool_strndup(P->pool, json_string_value(v), json_string_length(v));
}

static int get_path(parse *P, json_t *obj, const char *key, const char **out, cg_pos *pos,
                    bool required)
{
    json_t *v = json_object_get(obj, key);
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, "", key);
    int rc = 0;
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    if (!v) {
        if (required) {
            cg_pos where = cg_doc_where(P->doc, "");
            rc = cg_error_at(P->err, &where, "the manifest has no '%s' (where to write the config)", key);
        }
    } else if (cg_expect_nonempty(P->doc, p.buf, v, what, P->err) != 0) {
        rc = -1;
    } else {
        *pos = cg_doc_where(P->doc, p.buf);
        *out = pooled(P, v);
        rc = cg_check_project_path(*out, pos, what, P->err);
    }
    cg_strbuf_release(&p);
    return rc;
}

static int path_list(parse *P, json_t *obj, const char *key, const char ***out, cg_pos **pos,
                     size_t *n)
{
    json_t *v = json_object_get(obj, key);
    *n = 0;
    if (!v)
        return 0;
    cg_strbuf p = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    cg_path_join_key(&p, "", key);
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    int rc = cg_expect_array(P->doc, p.buf, v, what, P->err);
    size_t count = rc == 0 ? json_array_size(v) : 0;
    *out = cg_pool_alloc(P->pool, (count + 1) * sizeof **out);
    *pos = cg_pool_alloc(P->pool, (count + 1) * sizeof **pos);
    /* each path's one spelling -> its index + 1: a long list costs linear time */
    cg_map seen;
    cg_map_init(&seen);
    cg_strbuf norm = CG_STRBUF_INIT;
    for (size_t i = 0; i < count && rc == 0; i++) {
        json_t *item = json_array_get(v, i);
        cg_path_join_index(&ip, p.buf, i);
        snprintf(what, sizeof what, "each entry of '%s'", key);
        if (cg_expect_nonempty(P->doc, ip.buf, item, what, P->err) != 0) {
            rc = -1;
            break;
        }
        (*pos)[i] = cg_doc_where(P->doc, ip.buf);
        (*out)[i] = pooled(P, item);
        snprintf(what, sizeof what, "'%s' entry", key);
        rc = cg_check_project_path((*out)[i], &(*pos)[i], what, P->err);
        if (rc == 0) {
            cg_strbuf_reset(&norm);
            cg_path_normalize((*out)[i], &norm);
            uintptr_t j1 = (uintptr_t)cg_map_put_new(&seen, cg_intern(P->pool, norm.buf), (void *)(uintptr_t)(i + 1));
            if (j1) {
                rc = cg_error_at(P->err, &(*pos)[i], "'%s' is listed twice in '%s'", (*out)[i], key);
                cg_error_note(P->err, &(*pos)[j1 - 1], "first listed here");
            }
        }
        *n = i + 1;
    }
    cg_map_release(&seen);
    cg_strbuf_release(&norm);
    cg_strbuf_release(&p);
    cg_strbuf_release(&ip);
    return rc;
}

/* A string or a list of strings. */
/* A name or a list of names under `key`; `item` is "a tier name" and the
 * like, for messages. */
static int name_list(parse *P, const char *path, json_t *v, const char *key, const char *item,
                     const char ***out, cg_pos **pos, size_t *n)
{
    cg_strbuf ip = CG_STRBUF_INIT;
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    int rc = 0;
    if (json_is_string(v)) {
        *out = cg_pool_alloc(P->pool, sizeof **out);
        *pos = cg_pool_alloc(P->pool, sizeof **pos);
        rc = cg_expect_nonempty(P->doc, path, v, what, P->err);
        (*out)[0] = pooled(P, v);
        (*pos)[0] = cg_doc_where(P->doc, path);
        *n = 1;
    } else if (!json_is_array(v)) {
        cg_pos p = cg_doc_where(P->doc, path);
        rc = cg_error_at(P->err, &p, "'%s' must be %s or a list of %ss, not %s", key, item, item + 2,
                         cg_kind_name(P->doc, path, v));
    } else {
        size_t count = json_array_size(v);
        *out = cg_pool_alloc(P->pool, (count + 1) * sizeof **out);
        *pos = cg_pool_alloc(P->pool, (count + 1) * sizeof **pos);
        *n = count;
        for (size_t i = 0; i < count && rc == 0; i++) {
            cg_path_join_index(&ip, path, i);
            json_t *e = json_array_get(v, i);
            if (!json_is_string(e)) {
                cg_pos p = cg_doc_where(P->doc, ip.buf);
                rc = cg_error_at(P->err, &p, "each entry of '%s' must be %s, not %s", key, item,
                                 cg_kind_name(P->doc, ip.buf, e));
                break;
            }
            rc = cg_expect_nonempty(P->doc, ip.buf, e, what, P->err);
            if (rc == 0) {
                (*out)[i] = pooled(P, e);
                (*pos)[i] = cg_doc_where(P->doc, ip.buf);
            }
        }
    }
    cg_strbuf_release(&ip);
    return rc;
}

/* The values of a filter: each /regex/ is one cigen can evaluate (checked
 * here, where the error can name the value's place). */
static int ref_values(parse *P, const char *kind, const char **names, const cg_pos *pos, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cg_ref_value *v = cg_ref_value_new(names[i], kind, &pos[i], P->err);
        if (!v)
            return -1;
        cg_ref_value_free(v);
    }
    return 0;
}

static int ref_filter(parse *P, const char *wpath, json_t *wf, const char *key, cg_ref_filter *f)
{
    json_t *v = json_object_get(wf, key);
    if (!v)
        return 0;
    cg_strbuf p = CG_STRBUF_INIT, sub = CG_STRBUF_INIT;
    cg_path_join_key(&p, wpath, key);
    f->set = true;
    f->pos = cg_doc_where(P->doc, p.buf);
    const char *item = cg_streq(key, "tags") ? "a tag name" : "a branch name";
    const char *kind = cg_streq(key, "tags") ? "tag" : "branch";
    char what[80];
    snprintf(what, sizeof what, "'%s'", key);
    cg_pos *only_pos = NULL, *ignore_pos = NULL;
    int rc = 0;
    if (json_is_object(v)) {
        static const char *const keys[] = {"only", "ignore"};
        snprintf(what, sizeof what, "in '%s'", key);
        rc = cg_check_keys(P->doc, p.buf, v, keys, 2, what, P->err);
        json_t *only = json_object_get(v, "only"), *ignore = json_object_get(v, "ignore");
        if (rc == 0 && only) {
            cg_path_join_key(&sub, p.buf, "only");
            rc = name_list(P, sub.buf, only, "only", item, &f->only, &only_pos, &f->nonly);
            f->only_scalar = json_is_string(only);
        }
        if (rc == 0 && ignore) {
            cg_path_join_key(&sub, p.buf, "ignore");
            rc = name_list(P, sub.buf, ignore, "ignore", item, &f->ignore, &ignore_pos, &f->nignore);
            f->ignore_scalar = json_is_string(ignore);
        }
        if (rc == 0 && !only && !ignore)
            rc = cg_error_at(P->err, &f->pos, "'%s' needs 'only' or 'ignore'", key);
    } else {
        rc = name_list(P, p.buf, v, key, item, &f->only, &only_pos, &f->nonly);
        f->only_scalar = json_is_string(v);
    }
    if (rc == 0)
        rc = ref_values(P, kind, f->only, only_pos, f->nonly);
    if (rc == 0)
        rc = ref_values(P, kind, f->ignore, ignore_pos, f->nignore);
    cg_strbuf_release(&p);
    cg_strbuf_release(&sub);
    return rc;
}

static int check_cron(parse *P, const char *cron, const cg_pos *pos)
{
    int fields = 0;
    bool in_field = false;
    for (const char *c = cron; *c; c++) {
        if (*c == ' ') {
            in_field = false;
            continue;
        }
        if (!(cg_isalnum((unsigned char)*c) || strchr("*/,-", *c)))
            return cg_error_at(P->err, pos, "'schedule' has an unexpected character '%c' for a cron expression", *c);
        if (!in_field)
            fields++;
        in_field = true;
    }
    if (fields != 5)
        return cg_error_at(P->err, pos,
                           "'schedule' must be a cron expression with 5 fields "
                           "(minute hour day-of-month month day-of-week), e.g. \"5 5 * * *\"; "
                           "this one has %d", fields);
    /* each field's values, ranges and steps, as CircleCI checks them */
    cg_strbuf why = CG_STRBUF_INIT;
    int rc = cg_cron_check(cron, &why) == 0 ? 0 : cg_error_at(P->err, pos, "'schedule' \"%s\": %s", cron, why.buf);
    cg_strbuf_release(&why);
    return rc;
}

static int parse_workflow(parse *P, const char *name, json_t *wf, cg_workflow_decl *w)
{
    static const char *const keys[] = {"jobs", "schedule", "branches", "tags", "when",
                                       "tier", "on_request", "per_change", "max_jobs", "order", "keep"};
    cg_strbuf p = CG_STRBUF_INIT, sub = CG_STRBUF_INIT;
    cg_path_join_key(&p, "/workflows", name);
    w->name = cg_intern(P->pool, name);
    w->pos = cg_doc_key_where(P->doc, p.buf);
    w->path = cg_pool_strndup(P->pool, p.buf, p.len);
    int rc = 0;
    char what[160];
    snprintf(what, sizeof what, "workflow '%s'", name);
    if (json_is_null(wf) || (json_is_string(wf) && json_string_length(wf) == 0))
        goto done; /* `name:` with nothing: an empty declaration */
    if (cg_expect_object(P->doc, p.buf, wf, what, P->err) != 0) {
        rc = -1;
        goto done;
    }
    snprintf(what, sizeof what, "in workflow '%s'", name);
    if ((rc = cg_check_keys(P->doc, p.buf, wf, keys, CG_ARRAY_LEN(keys), what, P->err)) != 0)
        goto done;
    json_t *v;
    if ((v = json_object_get(wf, "jobs"))) {
        cg_path_join_key(&sub, p.buf, "jobs");
        if ((rc = cg_expect_array(P->doc, sub.buf, v, "'jobs'", P->err)) != 0)
            goto done;
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            if (json_is_string(e) || (json_is_object(e) && json_object_size(e) == 1))
                continue;
            cg_pos ep = cg_item_pos(P->doc, sub.buf, i);
            rc = cg_error_at(P->err, &ep,
                             "a workflow job entry is a job name or a one-key mapping "
                             "(job: {parameters})");
            goto done;
        }
        if ((rc = cg_ref_entries_check(P->doc, sub.buf, v, P->err)) != 0)
            goto done;
        w->jobs = v;
    }
    if ((v = json_object_get(wf, "schedule"))) {
        cg_path_join_key(&sub, p.buf, "schedule");
        if ((rc = cg_expect_nonempty(P->doc, sub.buf, v, "'schedule'", P->err)) != 0)
            goto done;
        w->schedule = pooled(P, v);
        w->schedule_pos = cg_doc_where(P->doc, sub.buf);
        if ((rc = check_cron(P, w->schedule, &w->schedule_pos)) != 0)
            goto done;
    }
    if ((rc = ref_filter(P, p.buf, wf, "branches", &w->branches)) != 0 ||
        (rc = ref_filter(P, p.buf, wf, "tags", &w->tags)) != 0)
        goto done;
    if (w->schedule && w->tags.set) {
        rc = cg_error_at(P->err, &w->tags.pos,
                         "a scheduled workflow cannot filter on tags; use 'branches'");
        goto done;
    }
    w->when = json_object_get(wf, "when");
    if ((v = json_object_get(wf, "tier"))) {
        cg_path_join_key(&sub, p.buf, "tier");
        if ((rc = name_list(P, sub.buf, v, "tier", "a tier name", &w->tiers, &w->tier_pos, &w->ntiers)) != 0)
            goto done;
    }
    if ((v = json_object_get(wf, "on_request"))) {
        cg_path_join_key(&sub, p.buf, "on_request");
        if ((rc = name_list(P, sub.buf, v, "on_request", "a tier name", &w->on_request, &w->on_request_pos,
                            &w->non_request)) != 0)
            goto done;
    }
    if ((v = json_object_get(wf, "per_change"))) {
        cg_path_join_key(&sub, p.buf, "per_change");
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        if (!cg_streq(s, "true") && !cg_streq(s, "false")) {
            cg_pos vp = cg_doc_where(P->doc, sub.buf);
            rc = cg_error_at(P->err, &vp, "'per_change' must be true or false");
            goto done;
        }
        w->per_change = cg_streq(s, "true");
    }
    if ((v = json_object_get(wf, "order"))) {
        cg_path_join_key(&sub, p.buf, "order");
        w->order_pos = cg_doc_where(P->doc, sub.buf);
        if (json_is_string(v) && (cg_streq(json_string_value(v), "cell") || cg_streq(json_string_value(v), "phase"))) {
            w->order = cg_streq(json_string_value(v), "cell") ? CG_ORDER_CELL : CG_ORDER_PHASE;
        } else if (json_is_array(v) && json_array_size(v) > 0) {
            w->order = CG_ORDER_LIST;
            w->order_list = v;
            cg_strbuf ip = CG_STRBUF_INIT, kp = CG_STRBUF_INIT;
            for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
                json_t *e = json_array_get(v, i);
                cg_path_join_index(&ip, sub.buf, i);
                if (json_is_string(e)) {
                    rc = cg_expect_nonempty(P->doc, ip.buf, e, "a static entry's name", P->err);
                    continue;
                }
                static const char *const okeys[] = {"phase", "tree"};
                json_t *ph = json_is_object(e) ? json_object_get(e, "phase") : NULL;
                json_t *tr = json_is_object(e) ? json_object_get(e, "tree") : NULL;
                if (!json_is_object(e) || (!ph && !tr)) {
                    cg_pos ep = cg_doc_where(P->doc, ip.buf);
                    rc = cg_error_at(P->err, &ep, "an item of 'order' is the name of a static entry of 'jobs', "
                                     "{phase: NAME} (or a list of phases): the generated jobs of those phases, "
                                     "or {tree: NAME} (with 'phase': only that tree's)");
                    break;
                }
                if ((rc = cg_check_keys(P->doc, ip.buf, e, okeys, 2, "in an item of 'order'", P->err)) != 0)
                    break;
                if (tr) {
                    cg_path_join_key(&kp, ip.buf, "tree");
                    if ((rc = cg_expect_nonempty(P->doc, kp.buf, tr, "'tree' (the name of one tree, its file name "
                                                 "without .yml)", P->err)) != 0)
                        break;
                }
                if (ph) {
                    cg_path_join_key(&kp, ip.buf, "phase");
                    const char **names;
                    cg_pos *npos;
                    size_t nn;
                    rc = name_list(P, kp.buf, ph, "phase", "a phase name", &names, &npos, &nn);
                }
            }
            cg_strbuf_release(&ip);
            cg_strbuf_release(&kp);
            if (rc != 0)
                goto done;
        } else {
            rc = cg_error_at(P->err, &w->order_pos, "'order' must be 'cell' (each cell's jobs together, the "
                             "default), 'phase' (all jobs of a phase together) or a list placing static entries "
                             "and phases, e.g. [setup, {phase: build}, {phase: test}]");
            goto done;
        }
    }
    if ((v = json_object_get(wf, "keep"))) {
        cg_path_join_key(&sub, p.buf, "keep");
        if ((rc = name_list(P, sub.buf, v, "keep", "a job name", &w->keep, &w->keep_pos, &w->nkeep)) != 0)
            goto done;
    }
    if ((v = json_object_get(wf, "max_jobs"))) {
        cg_path_join_key(&sub, p.buf, "max_jobs");
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        long n;
        int r = cg_parse_limit(s, CG_LIMIT_CEILING, &n);
        if (r != 0) {
            cg_pos vp = cg_doc_where(P->doc, sub.buf);
            rc = r == -2 ? cg_error_at(P->err, &vp, "'max_jobs' is too large (at most %ld)", CG_LIMIT_CEILING)
                         : cg_error_at(P->err, &vp, "'max_jobs' must be a positive whole number");
            goto done;
        }
        w->max_jobs = n;
    }
done:
    cg_strbuf_release(&p);
    cg_strbuf_release(&sub);
    return rc;
}

static int parse_limits(parse *P, json_t *v, cg_manifest *m)
{
    static const char *const keys[] = {"max_config_bytes", "max_jobs_per_workflow", "max_cells", "max_jobs",
                                       "max_filter_tests", "max_pair_tests", "max_name_bytes"};
    if (cg_expect_object(P->doc, "/limits", v, "'limits'", P->err) != 0 ||
        cg_check_keys(P->doc, "/limits", v, keys, CG_ARRAY_LEN(keys), "in 'limits'", P->err) != 0)
        return -1;
    long *dest[] = {&m->max_config_bytes, &m->max_jobs_per_workflow, &m->max_cells, &m->max_jobs,
                    &m->max_filter_tests, &m->max_pair_tests, &m->max_name_bytes};
    for (size_t i = 0; i < CG_ARRAY_LEN(keys); i++) {
        json_t *x = json_object_get(v, keys[i]);
        if (!x)
            continue;
        const char *s = json_is_string(x) ? json_string_value(x) : "";
        long n;
        int r = cg_parse_limit(s, CG_LIMIT_CEILING, &n);
        if (r != 0) {
            cg_pos p = cg_val_pos(P->doc, "/limits", keys[i]);
            if (r == -2)
                return cg_error_at(P->err, &p, "'%s' is too large (at most %ld)", keys[i], CG_LIMIT_CEILING);
            return cg_error_at(P->err, &p, "'%s' must be a positive whole number", keys[i]);
        }
        *dest[i] = n;
    }
    return 0;
}

int cg_manifest_parse(const cg_doc *doc, cg_pool *pool, cg_manifest *m, cg_error *err)
{
    static const char *const keys[] = {"output", "diagrams", "regenerate", "fragments",
                                       "trees", "lists", "workflows", "idle_jobs", "idle_commands",
                                       "idle_executors", "limits", "protected", "pipeline"};
    memset(m, 0, sizeof *m);
    m->doc = doc;
    m->regenerate = "cigen generate";
    m->max_config_bytes = 8L << 20;
    m->max_jobs_per_workflow = 500;
    m->max_cells = CG_DEFAULT_MAX_CELLS;
    m->max_jobs = CG_DEFAULT_MAX_JOBS;
    m->max_filter_tests = CG_DEFAULT_MAX_FILTER_TESTS;
    m->max_pair_tests = CG_DEFAULT_MAX_PAIR_TESTS;
    m->max_name_bytes = CG_DEFAULT_MAX_NAME_BYTES;
    parse P = {doc, pool, err, CG_STRBUF_INIT, m};
    json_t *root = cg_doc_root(doc);
    if (!root)
        return cg_error_at(err, &(cg_pos){cg_doc_file(doc), 0, 0},
                           "the manifest is empty; it needs at least 'output'");
    if (cg_expect_object(doc, "", root, "the manifest", err) != 0 ||
        cg_check_keys(doc, "", root, keys, CG_ARRAY_LEN(keys), "in the manifest", err) != 0)
        return -1;
    if (get_path(&P, root, "output", &m->output, &m->output_pos, true) != 0 ||
        get_path(&P, root, "diagrams", &m->diagrams, &m->diagrams_pos, false) != 0)
        return -1;
    json_t *v;
    if ((v = json_object_get(root, "pipeline"))) {
        if (cg_dynamic_parse(doc, pool, v, &m->pipeline, err) != 0)
            return -1;
        if (m->pipeline.dynamic) {
            /* everything cigen knows of "the config" is the continuation; the
             * setup config is one more output */
            if (cg_streq(m->pipeline.continuation, m->output))
                return cg_error_at(err, &m->pipeline.continuation_pos, "'continuation' '%s' is the manifest's "
                                   "'output', which dynamic mode makes the setup config; name another file",
                                   m->output);
            m->pipeline.setup = m->output;
            m->pipeline.setup_pos = m->output_pos;
            /* CircleCI reads the setup config at .circleci/config.yml of the
             * repository: that places the project folder, unless told */
            if (!m->pipeline.project && cg_streq(m->output, "config.yml")) {
                m->pipeline.project = ".circleci";
                m->pipeline.project_derived = true;
            } else if (!m->pipeline.project && cg_streq(m->output, ".circleci/config.yml")) {
                m->pipeline.project = ".";
                m->pipeline.project_derived = true;
            }
            else if (!m->pipeline.project)
                return cg_error_at(err, &m->output_pos, "'output' '%s' is the setup config of a dynamic pipeline, "
                                   "which CircleCI reads at .circleci/config.yml of the repository; say where this "
                                   "project's folder is from the repository's root ('pipeline: project: PATH')",
                                   m->output);
            m->output = m->pipeline.continuation;
            m->output_pos = m->pipeline.continuation_pos;
        }
    }
    /* cigen names (and removes) the files of the diagrams folder itself */
    if (m->diagrams && (cg_path_within(m->output, m->diagrams) || cg_path_within(m->diagrams, m->output)))
        return cg_error_at(err, &m->output_pos, "'output' '%s' and the diagrams folder '%s' overlap; write the "
                           "config outside the folder cigen fills with diagrams", m->output, m->diagrams);
    if (m->pipeline.setup && m->diagrams &&
        (cg_path_within(m->pipeline.setup, m->diagrams) || cg_path_within(m->diagrams, m->pipeline.setup)))
        return cg_error_at(err, &m->pipeline.setup_pos, "'output' '%s' and the diagrams folder '%s' overlap",
                           m->pipeline.setup, m->diagrams);
    if ((v = json_object_get(root, "regenerate"))) {
        if (json_is_string(v) && (json_string_length(v) != strlen(json_string_value(v)) ||
                                  cg_line_breaker(json_string_value(v), NULL))) {
            cg_pos p = cg_doc_where(doc, "/regenerate");
            return cg_error_at(err, &p, "'regenerate' must be a one-line command, without control characters");
        }
        if (cg_expect_nonempty(doc, "/regenerate", v, "'regenerate'", err) != 0)
            return -1;
        m->regenerate = pooled(&P, v);
    }
    if (path_list(&P, root, "fragments", &m->fragments, &m->fragment_pos, &m->nfragments) != 0 ||
        path_list(&P, root, "trees", &m->trees, &m->tree_pos, &m->ntrees) != 0 ||
        path_list(&P, root, "lists", &m->lists, &m->list_pos, &m->nlists) != 0)
        return -1;
    if ((v = json_object_get(root, "limits")) && parse_limits(&P, v, m) != 0)
        return -1;
    if ((v = json_object_get(root, "protected")) &&
        name_list(&P, "/protected", v, "protected", "a job-name glob", &m->protected,
                  &m->protected_pos, &m->nprotected) != 0)
        return -1;
    if ((v = json_object_get(root, "idle_jobs")) &&
        name_list(&P, "/idle_jobs", v, "idle_jobs", "a job name", &m->idle_jobs, &m->idle_pos, &m->nidle) != 0)
        return -1;
    if ((v = json_object_get(root, "idle_commands")) &&
        name_list(&P, "/idle_commands", v, "idle_commands", "a command name", &m->idle_commands,
                  &m->idle_commands_pos, &m->nidle_commands) != 0)
        return -1;
    if ((v = json_object_get(root, "idle_executors")) &&
        name_list(&P, "/idle_executors", v, "idle_executors", "an executor name", &m->idle_executors,
                  &m->idle_executors_pos, &m->nidle_executors) != 0)
        return -1;
    if ((v = json_object_get(root, "workflows"))) {
        if (cg_expect_object(doc, "/workflows", v, "'workflows'", err) != 0)
            return -1;
        m->workflows = cg_xcalloc(json_object_size(v) + 1, sizeof *m->workflows);
        const char *name;
        json_t *wf;
        int per_change = -1;
        json_object_foreach(v, name, wf) {
            cg_workflow_decl *w = &m->workflows[m->nworkflows];
            cg_pos kp = cg_key_pos(doc, "/workflows", name);
            if (cg_streq(name, "version")) {
                /* CircleCI 2.0's `workflows: {version: 2}`, written back as given */
                cg_pos vp = cg_doc_where(doc, "/workflows/version");
                if (!json_is_string(wf) || !cg_doc_is_plain(doc, "/workflows/version") ||
                    !cg_streq(json_string_value(wf), "2"))
                    return cg_error_at(err, &vp, "'version' under 'workflows' must be 2 (CircleCI 2.0's workflows "
                                       "version); a workflow cannot be named 'version'");
                m->workflows_version = "2";
                m->workflows_version_pos = vp;
                continue;
            }
            if (!cg_is_name(name))
                return cg_error_at(err, &kp,
                                   "workflow name '%s' is not a valid name (letters, digits, '_' and '-')",
                                   name);
            if (parse_workflow(&P, name, wf, w) != 0)
                return -1;
            if (w->per_change) {
                if (per_change >= 0) {
                    cg_error_at(err, &w->pos, "only one workflow can be 'per_change'");
                    cg_error_note(err, &m->workflows[per_change].pos, "'%s' is already per_change",
                                  m->workflows[per_change].name);
                    return -1;
                }
                per_change = (int)m->nworkflows;
            }
            m->nworkflows++;
        }
    }
    return 0;
}

void cg_manifest_release(cg_manifest *m)
{
    free(m->workflows);
    memset(m, 0, sizeof *m);
}
