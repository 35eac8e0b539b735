/* The embedded default: it generates, `list` agrees with config.yml, and the
 * README's counts are the real ones. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"
#include "lang/yamlload.h"

/* The generated jobs of list --json (the static entries and fragment jobs
 * after them have a "kind"). */
static json_t *list_json(void)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s' list --json", tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "list --json failed: %s", r.err);
    json_error_t e;
    json_t *v = json_loads(r.out, 0, &e);
    ck_assert_msg(v && json_is_array(v), "list --json is not a JSON array: %s", e.text);
    bool others = false;
    for (size_t i = 0; i < json_array_size(v);) {
        if (json_object_get(json_array_get(v, i), "kind")) {
            others = true;
            json_array_remove(v, i);
            continue;
        }
        ck_assert_msg(!others, "list --json has a generated job after the static entries");
        i++;
    }
    ck_assert_msg(others, "list --json has no static entry (the default has 'setup')");
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
    return v;
}

static cg_doc *load_config(size_t *len)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/config.yml", tu_srcdir());
    char *text = tu_read(p.buf, len);
    ck_assert_msg(text != NULL, "no config.yml in the repository");
    cg_error err;
    cg_error_init(&err);
    cg_doc *d = cg_doc_parse("config.yml", text, *len, NULL, &err);
    ck_assert_msg(d != NULL, "config.yml does not load: %s", cg_strbuf_str(&err.text));
    cg_error_release(&err);
    free(text);
    cg_strbuf_release(&p);
    return d;
}

/* The effective names of the generated entries of every workflow. */
static void config_names(cg_doc *d, cg_map *names, size_t *entries, size_t *workflows)
{
    json_t *wfs = json_object_get(cg_doc_root(d), "workflows");
    const char *wname;
    json_t *wf;
    *entries = 0;
    *workflows = 0;
    json_object_foreach(wfs, wname, wf) {
        (*workflows)++;
        json_t *jobs = json_object_get(wf, "jobs");
        for (size_t i = 0; i < json_array_size(jobs); i++) {
            json_t *e = json_array_get(jobs, i);
            (*entries)++;
            if (!json_is_object(e))
                continue;
            json_t *args = json_object_iter_value(json_object_iter(e));
            json_t *name = json_is_object(args) ? json_object_get(args, "name") : NULL;
            if (json_is_string(name))
                cg_map_put(names, json_string_value(name), (void *)1);
        }
    }
}

/* The number after "| label |" in the README. */
static long readme_number(const char *readme, const char *label)
{
    cg_strbuf key = CG_STRBUF_INIT;
    cg_strbuf_addf(&key, "| %s | ", label);
    const char *p = strstr(readme, key.buf);
    ck_assert_msg(p != NULL, "README has no row '%s'", label);
    long n = strtol(p + key.len, NULL, 10);
    cg_strbuf_release(&key);
    return n;
}

START_TEST(list_matches_config)
{
    json_t *jobs = list_json();
    size_t len, entries, workflows;
    cg_doc *d = load_config(&len);
    cg_map names;
    cg_map_init(&names);
    config_names(d, &names, &entries, &workflows);
    cg_map listed;
    cg_map_init(&listed);
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        const char *n = json_string_value(json_object_get(json_array_get(jobs, i), "name"));
        ck_assert_msg(cg_map_has(&names, n), "listed job %s is not in config.yml", n);
        cg_map_put(&listed, n, (void *)1);
        json_t *o = json_array_get(jobs, i);
        static const char *const keys[] = {"name", "tree", "phase", "dimensions", "variables",
                                           "workflows", "tiers", "source"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            ck_assert_msg(json_object_get(o, keys[k]) != NULL, "list --json lacks '%s'", keys[k]);
    }
    for (size_t i = 0; i < names.cap; i++)
        if (cg_map_key_at(&names, i))
            ck_assert_msg(cg_map_has(&listed, cg_map_key_at(&names, i)), "config.yml job %s is not listed",
                          cg_map_key_at(&names, i));
    cg_map_release(&names);
    cg_map_release(&listed);
    cg_doc_free(d);
    json_decref(jobs);
}
END_TEST

START_TEST(readme_counts)
{
    json_t *jobs = list_json();
    size_t len, entries, workflows;
    cg_doc *d = load_config(&len);
    cg_map names;
    cg_map_init(&names);
    config_names(d, &names, &entries, &workflows);
    cg_map cells;
    cg_map_init(&cells);
    cg_pool pool;
    cg_pool_init(&pool);
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *o = json_array_get(jobs, i);
        char *dims = json_dumps(json_object_get(o, "dimensions"), JSON_COMPACT | JSON_SORT_KEYS);
        cg_strbuf key = CG_STRBUF_INIT;
        cg_strbuf_addf(&key, "%s %s", json_string_value(json_object_get(o, "tree")), dims);
        cg_map_put(&cells, cg_intern(&pool, key.buf), (void *)1);
        cg_strbuf_release(&key);
        free(dims);
    }
    cg_strbuf rp = CG_STRBUF_INIT;
    cg_strbuf_addf(&rp, "%s/README.md", tu_srcdir());
    char *readme = tu_read(rp.buf, NULL);
    ck_assert_ptr_nonnull(readme);
    ck_assert_int_eq(readme_number(readme, "binary configurations (cells)"), (long)cells.len);
    ck_assert_int_eq(readme_number(readme, "jobs"), (long)json_array_size(jobs));
    ck_assert_int_eq(readme_number(readme, "workflows"), (long)workflows);
    ck_assert_int_eq(readme_number(readme, "workflow entries"), (long)entries);
    ck_assert_int_eq(readme_number(readme, "config.yml"), (long)len);
    free(readme);
    cg_strbuf_release(&rp);
    cg_pool_release(&pool);
    cg_map_release(&cells);
    cg_map_release(&names);
    cg_doc_free(d);
    json_decref(jobs);
}
END_TEST

START_TEST(default_is_in_sync)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s' check", tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "the committed default is out of sync:\n%s%s", r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
}
END_TEST

/* Every project of examples/ (a folder with a cigen.yml): in sync with its
 * sources, and lint-clean (warnings are errors), so the special-PR cases start
 * from a config CircleCI takes and the examples the docs point to work. The
 * three that issue 18 asks for must be there: a loop over nothing passes. */
START_TEST(examples_in_sync_and_clean)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd,
                   "n=0; for d in '%s'/examples/*/; do [ -f \"$d/cigen.yml\" ] || continue; "
                   "$CIGEN -C \"$d\" check >/dev/null && $CIGEN -C \"$d\" --strict lint >/dev/null "
                   "|| { echo \"$d is out of sync or not lint-clean\"; exit 1; }; "
                   "echo \"$(basename \"$d\")\"; done",
                   tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    ck_assert_msg(strstr(r.out, "pytorch-like\n") && strstr(r.out, "torchvision-like\n") &&
                      strstr(r.out, "conda-forge-like\n"),
                  "examples checked:\n%s(expected pytorch-like, torchvision-like, conda-forge-like)", r.out);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
}
END_TEST

Suite *make_default_suite(void)
{
    Suite *s = suite_create("default");
    TCase *tc = tcase_create("default");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, default_is_in_sync);
    tcase_add_test(tc, examples_in_sync_and_clean);
    tcase_add_test(tc, list_matches_config);
    tcase_add_test(tc, readme_counts);
    suite_add_tcase(s, tc);
    return s;
}
