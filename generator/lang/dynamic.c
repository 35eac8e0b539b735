/* The manifest's `pipeline:` section (lang/dynamic.h). */
#include "lang/dynamic.h"
#include "lang/ref_regex.h"

#include <string.h>

#include "base/util.h"
#include "io/paths.h"
#include "lang/schema.h"
#include "lang/yaml_path.h"

/* A one-line string without control characters, at key of obj (at doc
 * path base): a command or a name. */
static int one_line_in(const cg_doc *doc, json_t *obj, const char *base, const char *key, const char **out,
                       cg_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    cg_strbuf path = CG_STRBUF_INIT;
    cg_path_join_key(&path, base, key);
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    int rc = cg_expect_nonempty(doc, path.buf, v, what, err);
    if (rc == 0 && (json_string_length(v) != strlen(json_string_value(v)) ||
                    cg_line_breaker(json_string_value(v), NULL))) {
        cg_pos p = cg_doc_where(doc, path.buf);
        rc = cg_error_at(err, &p, "'%s' must be one line, without control characters", key);
    }
    if (rc == 0)
        *out = json_string_value(v);
    cg_strbuf_release(&path);
    return rc;
}

static int one_line(const cg_doc *doc, json_t *obj, const char *key, const char **out, cg_error *err)
{
    return one_line_in(doc, obj, "/pipeline", key, out, err);
}

/* A string or a list of strings, each non-empty. */
static int strings(const cg_doc *doc, cg_pool *pool, const char *path, json_t *v, const char *what,
                   const char ***out, cg_pos **pos, size_t *n, cg_error *err)
{
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v)) {
        cg_pos p = cg_doc_where(doc, path);
        return cg_error_at(err, &p, "%s must be a string or a list of strings, not %s", what,
                           cg_kind_name(doc, path, v));
    }
    if (json_is_array(v) && !count) {
        cg_pos p = cg_doc_where(doc, path);
        return cg_error_at(err, &p, "%s is an empty list", what);
    }
    *out = cg_pool_alloc(pool, (count + 1) * sizeof **out);
    *pos = cg_pool_alloc(pool, (count + 1) * sizeof **pos);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
        cg_strbuf_reset(&ip);
        if (json_is_array(v))
            cg_path_join_index(&ip, path, i);
        else
            cg_strbuf_adds(&ip, path);
        if (!json_is_string(e)) {
            cg_pos p = cg_doc_where(doc, ip.buf);
            rc = cg_error_at(err, &p, "each entry of %s must be a string, not %s", what, cg_kind_name(doc, ip.buf, e));
            break;
        }
        rc = cg_expect_nonempty(doc, ip.buf, e, what, err);
        if (rc == 0 && cg_line_breaker(json_string_value(e), NULL)) {
            cg_pos p = cg_doc_where(doc, ip.buf);
            rc = cg_error_at(err, &p, "%s holds a control character or a line break", what);
        }
        (*out)[i] = json_string_value(e);
        (*pos)[i] = cg_doc_where(doc, ip.buf);
    }
    *n = count;
    cg_strbuf_release(&ip);
    return rc;
}

static int parse_paths(const cg_doc *doc, cg_pool *pool, json_t *v, cg_dynamic_decl *d, cg_error *err)
{
    if (cg_expect_array(doc, "/pipeline/paths", v, "'paths'", err) != 0)
        return -1;
    static const char *const keys[] = {"changed", "select"};
    d->npaths = json_array_size(v);
    d->paths = cg_pool_alloc(pool, (d->npaths + 1) * sizeof *d->paths);
    memset(d->paths, 0, (d->npaths + 1) * sizeof *d->paths);
    cg_strbuf path = CG_STRBUF_INIT, sub = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < d->npaths && rc == 0; i++) {
        cg_path_rule *r = &d->paths[i];
        json_t *e = json_array_get(v, i);
        cg_strbuf_reset(&path);
        cg_path_join_index(&path, "/pipeline/paths", i);
        r->pos = cg_doc_where(doc, path.buf);
        if (cg_expect_object(doc, path.buf, e, "a path rule ({changed: GLOB, select: PATTERN})", err) != 0 ||
            cg_check_keys(doc, path.buf, e, keys, CG_ARRAY_LEN(keys), "in a path rule", err) != 0) {
            rc = -1;
            break;
        }
        json_t *g = json_object_get(e, "changed"), *s = json_object_get(e, "select");
        if (!g || !s) {
            rc = cg_error_at(err, &r->pos, "a path rule needs 'changed' (a glob of changed files) and 'select' "
                             "(all, none, or patterns of jobs)");
            break;
        }
        cg_path_join_key(&sub, path.buf, "changed");
        if (cg_expect_nonempty(doc, sub.buf, g, "'changed'", err) != 0) {
            rc = -1;
            break;
        }
        r->glob = json_string_value(g);
        r->pos = cg_doc_where(doc, sub.buf);
        cg_path_join_key(&sub, path.buf, "select");
        rc = strings(doc, pool, sub.buf, s, "'select'", &r->select, &r->select_pos, &r->nselect, err);
        for (size_t k = 0; k < r->nselect && rc == 0 && r->nselect > 1; k++)
            if (cg_streq(r->select[k], "all") || cg_streq(r->select[k], "none"))
                rc = cg_error_at(err, &r->select_pos[k], "'%s' stands alone in 'select', not in a list of patterns",
                                 r->select[k]);
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&sub);
    return rc;
}

/* cache: {key: COMMAND, path: FOLDER}, both one line */
static int parse_cache(const cg_doc *doc, json_t *v, cg_dynamic_decl *d, cg_error *err)
{
    static const char *const keys[] = {"key", "path"};
    if (cg_expect_object(doc, "/pipeline/cache", v, "'cache' ({key: COMMAND, path: FOLDER})", err) != 0 ||
        cg_check_keys(doc, "/pipeline/cache", v, keys, CG_ARRAY_LEN(keys), "in 'cache'", err) != 0)
        return -1;
    if (!json_object_get(v, "key") || !json_object_get(v, "path")) {
        cg_pos p = cg_key_pos(doc, "/pipeline", "cache");
        return cg_error_at(err, &p, "'cache' needs 'key' (a command that, given a file's path, writes the "
                           "cache key's contents there, e.g. '.circleci/scripts/get-cigen.sh --key') and 'path' "
                           "(what 'install' makes, e.g. '~/.cache/cigen')");
    }
    if (one_line_in(doc, v, "/pipeline/cache", "key", &d->cache_key, err) != 0 ||
        one_line_in(doc, v, "/pipeline/cache", "path", &d->cache_path, err) != 0)
        return -1;
    return 0;
}

int cg_dynamic_parse(const cg_doc *doc, cg_pool *pool, json_t *v, cg_dynamic_decl *d, cg_error *err)
{
    static const char *const keys[] = {"mode", "continuation", "project", "image", "resource_class", "install",
                                       "cache", "cigen", "base_branch", "run_all", "paths", "schedules"};
    memset(d, 0, sizeof *d);
    d->set = true;
    d->pos = cg_key_pos(doc, "", "pipeline");
    d->image = "cimg/base:2024.01";
    d->resource_class = "small";
    d->base_branch = "main";
    if (cg_expect_object(doc, "/pipeline", v, "'pipeline'", err) != 0 ||
        cg_check_keys(doc, "/pipeline", v, keys, CG_ARRAY_LEN(keys), "in 'pipeline'", err) != 0)
        return -1;
    const char *mode = "classic";
    if (one_line(doc, v, "mode", &mode, err) != 0)
        return -1;
    if (!cg_streq(mode, "classic") && !cg_streq(mode, "dynamic")) {
        cg_pos p = cg_doc_where(doc, "/pipeline/mode");
        return cg_error_at(err, &p, "'mode' is classic (one config.yml) or dynamic (a setup config that picks the "
                           "jobs when the pipeline starts), not '%s'", mode);
    }
    d->dynamic = cg_streq(mode, "dynamic");
    const char *schedules = NULL;
    if (one_line(doc, v, "schedules", &schedules, err) != 0)
        return -1;
    if (schedules) {
        d->schedules_pos = cg_doc_where(doc, "/pipeline/schedules");
        if (!cg_streq(schedules, "triggers") && !cg_streq(schedules, "pipelines"))
            return cg_error_at(err, &d->schedules_pos, "'schedules' is triggers (scheduled workflows: a cron "
                               "trigger in config.yml) or pipelines (scheduled pipelines set up on CircleCI, "
                               "one named like each scheduled workflow), not '%s'", schedules);
        d->scheduled_pipelines = cg_streq(schedules, "pipelines");
        if (d->dynamic)
            return cg_error_at(err, &d->schedules_pos, "'schedules' is for classic mode: in dynamic mode a "
                               "schedule is always a scheduled pipeline (the setup job hands its name to cigen "
                               "select); remove it");
    }
    if (one_line(doc, v, "continuation", &d->continuation, err) != 0 || one_line(doc, v, "image", &d->image, err) != 0 ||
        one_line(doc, v, "resource_class", &d->resource_class, err) != 0 ||
        one_line(doc, v, "install", &d->install, err) != 0 || one_line(doc, v, "cigen", &d->cigen, err) != 0 ||
        one_line(doc, v, "base_branch", &d->base_branch, err) != 0 ||
        one_line(doc, v, "project", &d->project, err) != 0)
        return -1;
    if (d->continuation) {
        d->continuation_pos = cg_doc_where(doc, "/pipeline/continuation");
        if (cg_check_project_path(d->continuation, &d->continuation_pos, "'continuation'", err) != 0)
            return -1;
    } else {
        d->continuation = "continuation.yml";
        d->continuation_pos = d->pos;
    }
    if (d->project) {
        d->project_pos = cg_doc_where(doc, "/pipeline/project");
        if (!cg_streq(d->project, ".") &&
            cg_check_project_path(d->project, &d->project_pos, "'project' (the project folder's path from the "
                                  "repository's root)", err) != 0)
            return -1;
    }
    /* the setup job runs in a user's repository: no default can know how
     * cigen gets there */
    if (d->dynamic && (!d->install || !d->cigen))
        return cg_error_at(err, &d->pos, "'mode: dynamic' needs '%s': how the setup job gets cigen and how it "
                           "runs it, from the repository's root, e.g. 'install: make -C tools/cigen build/cigen' "
                           "and 'cigen: tools/cigen/build/cigen' (cigen vendored in tools/cigen), or 'install: "
                           "curl -fsSL -o /tmp/cigen URL && chmod +x /tmp/cigen' and 'cigen: /tmp/cigen' (a "
                           "release binary)", !d->install && !d->cigen ? "install' and 'cigen"
                                             : !d->install ? "install" : "cigen");
    if (!cg_is_name(d->base_branch) && !strchr(d->base_branch, '/')) {
        cg_pos p = cg_doc_where(doc, "/pipeline/base_branch");
        return cg_error_at(err, &p, "'base_branch' '%s' is not a branch name", d->base_branch);
    }
    json_t *x;
    if ((x = json_object_get(v, "run_all")) &&
        strings(doc, pool, "/pipeline/run_all", x, "'run_all'", &d->run_all, &d->run_all_pos, &d->nrun_all, err) != 0)
        return -1;
    /* globs, matched by cigen select: a filter's /regex/ form would be
     * taken as a glob of its characters, and never match */
    for (size_t i = 0; i < d->nrun_all; i++)
        if (cg_ref_is_regex(d->run_all[i]))
            return cg_error_at(err, &d->run_all_pos[i], "'run_all' takes branch globs ('main', 'release/*'), not a "
                               "/regex/ as filters do: '%s' would match no branch", d->run_all[i]);
    if ((x = json_object_get(v, "cache")) && parse_cache(doc, x, d, err) != 0)
        return -1;
    if ((x = json_object_get(v, "paths")) && parse_paths(doc, pool, x, d, err) != 0)
        return -1;
    return 0;
}
