/* cigen select on the embedded default: simulated pipelines and the exact
 * jobs each runs (tests/pipeline/default-*.txt), the commit-message tokens
 * read as scripts/should_run_job.sh reads them, and the token parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/map.h"
#include "base/pool.h"
#include "base/util.h"
#include "model/condition.h"
#include "model/pick.h"
#include "audit/simulate.h"
#include "lang/yamlload.h"

static const struct {
    const char *expect;   /* tests/pipeline/NAME.txt */
    const char *args;
    const char *dir;      /* the project, from the source folder (NULL: the default) */
} pipelines[] = {
    {"default-ordinary-pr", "--branch my-pr --message 'fix a bug' --changed torch/foo.py --changed README.md", NULL},
    {"default-conda-ci", "--branch my-pr --message 'new conda recipe [conda ci]' --changed torch/foo.py", NULL},
    {"default-ci-only", "--branch my-pr --message 'try [ci only: os=linux,package=conda]' --changed torch/foo.py", NULL},
    {"default-macos-scripts", "--branch my-pr --message 'macOS wheel fix' "
                              "--changed .circleci/scripts/binary_macos_build.sh", NULL},
    {"default-main", "--branch main --message 'Merge pull request #1'", NULL},
    {"default-scheduled-binary_builds", "--branch main --schedule binary_builds", NULL},
    {"default-scheduled-update_s3_htmls", "--branch main --schedule update_s3_htmls", NULL},
    {"default-scheduled-binarysmoketests", "--branch main --schedule binarysmoketests", NULL},
    {"default-ci-all", "--branch my-pr --message '[ci all]' --changed torch/foo.py", NULL},
    {"default-docs-only", "--branch my-pr --message 'typo' --changed README.md", NULL},
    {"default-tag", "--tag v1.2.3", NULL},
    {"dynamic-ordinary-pr", "--branch my-pr --message 'fix a bug' --changed src/x.c", "examples/dynamic"},
    {"dynamic-ci-all", "--branch my-pr --message '[ci all]' --changed src/x.c", "examples/dynamic"},
    {"dynamic-docs-only", "--branch my-pr --message 'typo' --changed README.md", "examples/dynamic"},
    {"dynamic-main", "--branch main --message 'Merge'", "examples/dynamic"},
    {"dynamic-tag", "--tag v1.2.3", "examples/dynamic"},
    {"dynamic-scheduled-nightly", "--branch main --schedule nightly", "examples/dynamic"},
    {"release-ordinary-pr", "--branch my-pr --message 'fix a bug' --changed src/x.c", "tests/bases/dynamic-release"},
    {"release-ci-all", "--branch my-pr --message '[ci all]' --changed src/x.c", "tests/bases/dynamic-release"},
    {"release-docs-only", "--branch my-pr --message 'typo' --changed README.md", "tests/bases/dynamic-release"},
    {"release-main", "--branch main --message 'Merge'", "tests/bases/dynamic-release"},
    {"release-tag", "--tag v1.2.3", "tests/bases/dynamic-release"},
    {"release-scheduled-nightly", "--branch main --schedule nightly", "tests/bases/dynamic-release"},
};

/* The exact set of jobs each simulated pipeline runs. */
START_TEST(default_pipelines)
{
    cg_strbuf cmd = CG_STRBUF_INIT, path = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s/%s' -q select %s", tu_srcdir(), pipelines[_i].dir ? pipelines[_i].dir : ".",
                   pipelines[_i].args);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "%s: exit %d: %s", pipelines[_i].expect, r.status, r.err);
    cg_strbuf_addf(&path, "%s/tests/pipeline/%s.txt", tu_srcdir(), pipelines[_i].expect);
    size_t len;
    char *want = tu_read(path.buf, &len);
    ck_assert_msg(want != NULL, "no %s", path.buf);
    ck_assert_msg(strcmp(r.out, want) == 0, "%s: the jobs differ\n--- want\n%s--- got\n%s", pipelines[_i].expect,
                  want, r.out);
    free(want);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
    cg_strbuf_release(&path);
}
END_TEST

/* The on-request jobs a commit message brings in are those for which
 * should_run_job.sh (classic mode) says "run" on a pull request's branch:
 * one reading of the tokens in both modes. */
START_TEST(tokens_agree_with_should_run_job)
{
    static const char *const messages[] = {"fix [CU100 ci] and [ conda  ci ]", "[libtorch ci][cpu ci]"};
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd,
                   "set -e; d='%s'; t=$(mktemp -d); trap 'rm -rf \"$t\"' EXIT\n"
                   "$CIGEN -C \"$d\" -q select --branch my-pr --message x --changed a.c >\"$t/default\"\n"
                   "$CIGEN -C \"$d\" -q select --branch my-pr --message '[ci all]' --changed a.c >\"$t/all\"\n"
                   "printf '%%s\\n' \"$MSG\" >\"$t/msg\"\n"
                   "$CIGEN -C \"$d\" -q select --branch my-pr --message \"$MSG\" --changed a.c >\"$t/got\"\n"
                   "cp \"$t/default\" \"$t/want\"\n"
                   "for j in $(comm -23 \"$t/all\" \"$t/default\"); do\n"
                   "  if ON_REQUEST=true CIRCLE_BRANCH=my-pr COMMIT_MSG_FILE=\"$t/msg\" \\\n"
                   "     \"$d/scripts/should_run_job.sh\" --decide \"$j\" >/dev/null; then echo \"$j\" >>\"$t/want\"; fi\n"
                   "done\n"
                   "LC_ALL=C sort -o \"$t/want\" \"$t/want\"; LC_ALL=C sort -o \"$t/got\" \"$t/got\"\n"
                   "diff \"$t/want\" \"$t/got\"\n",
                   tu_srcdir());
    for (size_t i = 0; i < CG_ARRAY_LEN(messages); i++) {
        setenv("MSG", messages[i], 1);
        tu_run r = tu_sh(NULL, cmd.buf);
        ck_assert_msg(r.status == 0, "message '%s': select and should_run_job.sh disagree:\n%s%s", messages[i], r.out,
                      r.err);
        tu_run_free(&r);
    }
    unsetenv("MSG");
    cg_strbuf_release(&cmd);
}
END_TEST

START_TEST(token_parser)
{
    cg_pick_tokens t;
    cg_pick_tokens_parse("Fix [CI ALL] [Conda ci] [ci only: os=linux,package=conda] [ci also:  x_* ] "
                             "[[cu100 ci] [ci] [not a token] [ci only:] [a b ci]",
                             &t);
    ck_assert(t.all);
    ck_assert_uint_eq(t.nwords, 2);
    ck_assert_str_eq(t.words[0], "conda");
    ck_assert_str_eq(t.words[1], "cu100");
    ck_assert_uint_eq(t.nonly, 1);
    ck_assert_str_eq(t.only[0], "os=linux,package=conda");
    ck_assert_uint_eq(t.nalso, 1);
    ck_assert_str_eq(t.also[0], "x_*");
    cg_pick_tokens_free(&t);
    cg_pick_tokens_parse(NULL, &t);
    ck_assert(!t.all && !t.nwords && !t.nonly && !t.nalso);
    cg_pick_tokens_free(&t);
}
END_TEST

/* examples/dynamic: in sync (setup and continuation), lint-clean; the
 * selected config does not depend on the locale, the time zone or the
 * folder it is asked from */
START_TEST(dynamic_example)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd,
                   "set -e; d='%s/examples/dynamic'; t=$(mktemp -d); trap 'rm -rf \"$t\"' EXIT\n"
                   "$CIGEN -C \"$d\" check; $CIGEN -C \"$d\" --strict lint\n"
                   "a='--branch my-pr --message [conda-ci] --changed x.c'\n"
                   "LC_ALL=C TZ=UTC $CIGEN -C \"$d\" -q select $a -o \"$t/one.yml\"\n"
                   "(cd \"$t\" && LC_ALL=C.UTF-8 TZ=Asia/Tokyo $CIGEN -C \"$d\" -q select $a -o two.yml)\n"
                   "cmp \"$t/one.yml\" \"$t/two.yml\"\n"
                   /* its workflow's `when` reads a pipeline parameter */
                   "[ -n \"$($CIGEN -C \"$d\" -q select --branch my-pr --parameter run_ci=true)\" ]\n"
                   "[ -z \"$($CIGEN -C \"$d\" -q select --branch my-pr --parameter run_ci=false)\" ]\n",
                   tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "examples/dynamic:\n%s%s", r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
}
END_TEST

/* A workflow's `when` on a pipeline's values: CircleCI's truthiness, the
 * operators, typed and interpolated references, and what is left unknown. */
static const struct {
    const char *stmt; /* JSON */
    int expect;
} conditions[] = {
    {"true", CG_COND_TRUE},
    {"false", CG_COND_FALSE},
    {"null", CG_COND_FALSE},
    {"0", CG_COND_FALSE},
    {"1", CG_COND_TRUE},
    {"\"\"", CG_COND_FALSE},
    {"\"false\"", CG_COND_TRUE}, /* a quoted string is text, and not empty */
    {"\"<< pipeline.parameters.flag >>\"", CG_COND_FALSE},
    {"\"<<pipeline.parameters.on>>\"", CG_COND_TRUE},
    {"\" << pipeline.parameters.zero >> \"", CG_COND_FALSE},
    {"\"x<< pipeline.parameters.flag >>\"", CG_COND_TRUE}, /* text "xfalse" */
    {"\"<< pipeline.parameters.empty >>\"", CG_COND_FALSE},
    {"\"<< pipeline.parameters.nodefault >>\"", CG_COND_UNKNOWN},
    {"\"<< pipeline.trigger_source >>\"", CG_COND_UNKNOWN},
    {"{\"not\": \"<< pipeline.parameters.flag >>\"}", CG_COND_TRUE},
    {"{\"not\": \"<< pipeline.id >>\"}", CG_COND_UNKNOWN},
    {"{\"and\": []}", CG_COND_FALSE},
    {"{\"or\": []}", CG_COND_FALSE},
    {"{\"and\": [true, \"<< pipeline.parameters.on >>\"]}", CG_COND_TRUE},
    {"{\"and\": [\"<< pipeline.id >>\", false]}", CG_COND_FALSE},
    {"{\"and\": [\"<< pipeline.id >>\", true]}", CG_COND_UNKNOWN},
    {"{\"or\": [\"<< pipeline.id >>\", true]}", CG_COND_TRUE},
    {"{\"or\": [\"<< pipeline.id >>\", false]}", CG_COND_UNKNOWN},
    {"{\"equal\": [\"nightly\", \"<< pipeline.schedule.name >>\"]}", CG_COND_TRUE},
    {"{\"equal\": [\"main\", \"<< pipeline.git.branch >>\"]}", CG_COND_FALSE},
    {"{\"equal\": [\"\", \"<< pipeline.git.tag >>\"]}", CG_COND_TRUE},
    {"{\"equal\": [2, \"<< pipeline.parameters.two >>\"]}", CG_COND_TRUE},
    {"{\"equal\": [\"2\", \"<< pipeline.parameters.two >>\"]}", CG_COND_FALSE}, /* typed: 2 is not "2" */
    {"{\"equal\": [\"v-2\", \"v-<< pipeline.parameters.two >>\"]}", CG_COND_TRUE},
    {"{\"equal\": [\"docs\", \"<< pipeline.parameters.mode >>\", \"docs\"]}", CG_COND_TRUE},
    {"{\"equal\": [\"docs\", \"<< pipeline.parameters.mode >>\", \"full\"]}", CG_COND_FALSE},
    {"{\"equal\": [\"x\", {\"not\": false}]}", CG_COND_FALSE},
    {"{\"equal\": [true, {\"not\": false}]}", CG_COND_TRUE},
    {"{\"matches\": {\"pattern\": \"^main$\", \"value\": \"main\"}}", CG_COND_UNKNOWN},
    {"{\"a\": 1, \"b\": 2}", CG_COND_UNKNOWN},
    {"[1]", CG_COND_UNKNOWN},
};

START_TEST(condition_eval)
{
    json_t *params = json_loads("{\"flag\": false, \"on\": true, \"zero\": 0, \"empty\": \"\", \"two\": 2, "
                                "\"mode\": \"docs\"}", 0, NULL);
    ck_assert_ptr_nonnull(params);
    cg_pipeline_values pv = {params, "nightly", "my-pr", "", CG_SOURCE_UNKNOWN};
    json_error_t e;
    json_t *stmt = json_loads(conditions[_i].stmt, JSON_DECODE_ANY, &e);
    ck_assert_msg(stmt != NULL, "%s: %s", conditions[_i].stmt, e.text);
    cg_strbuf why = CG_STRBUF_INIT;
    int got = cg_condition_eval(stmt, &pv, &why);
    ck_assert_msg(got == conditions[_i].expect, "%s: got %d, expected %d (%s)", conditions[_i].stmt, got,
                  conditions[_i].expect, cg_strbuf_str(&why));
    if (got == CG_COND_UNKNOWN)
        ck_assert_msg(why.len > 0, "%s: unknown without a reason", conditions[_i].stmt);
    cg_strbuf_release(&why);
    json_decref(stmt);
    json_decref(params);
}
END_TEST


/* pipeline.trigger_source: a scheduled pipeline's is scheduled_pipeline; a
 * push's is not (and nothing more is known of it). */
static const struct {
    int source;
    const char *stmt;
    int expect;
} sources[] = {
    {CG_SOURCE_PUSH, "{\"equal\": [\"scheduled_pipeline\", \"<< pipeline.trigger_source >>\"]}", CG_COND_FALSE},
    {CG_SOURCE_PUSH, "{\"equal\": [\"<<pipeline.trigger_source>>\", \"scheduled_pipeline\"]}", CG_COND_FALSE},
    {CG_SOURCE_PUSH, "{\"not\": {\"equal\": [\"scheduled_pipeline\", \"<< pipeline.trigger_source >>\"]}}",
     CG_COND_TRUE},
    {CG_SOURCE_PUSH, "{\"equal\": [\"webhook\", \"<< pipeline.trigger_source >>\"]}", CG_COND_UNKNOWN},
    {CG_SOURCE_PUSH, "{\"equal\": [\"scheduled_pipeline\", \"x<< pipeline.trigger_source >>\"]}", CG_COND_UNKNOWN},
    {CG_SOURCE_SCHEDULED_PIPELINE, "{\"equal\": [\"scheduled_pipeline\", \"<< pipeline.trigger_source >>\"]}",
     CG_COND_TRUE},
    {CG_SOURCE_SCHEDULED_PIPELINE, "{\"equal\": [\"webhook\", \"<< pipeline.trigger_source >>\"]}", CG_COND_FALSE},
    {CG_SOURCE_SCHEDULED_PIPELINE,
     "{\"and\": [{\"equal\": [\"scheduled_pipeline\", \"<< pipeline.trigger_source >>\"]}, "
     "{\"equal\": [\"nightly\", \"<< pipeline.schedule.name >>\"]}]}",
     CG_COND_TRUE},
    {CG_SOURCE_UNKNOWN, "{\"equal\": [\"scheduled_pipeline\", \"<< pipeline.trigger_source >>\"]}", CG_COND_UNKNOWN},
};

START_TEST(trigger_source_eval)
{
    cg_pipeline_values pv = {NULL, sources[_i].source == CG_SOURCE_SCHEDULED_PIPELINE ? "nightly" : "", "main", "",
                             sources[_i].source};
    json_error_t e;
    json_t *stmt = json_loads(sources[_i].stmt, JSON_DECODE_ANY, &e);
    ck_assert_msg(stmt != NULL, "%s: %s", sources[_i].stmt, e.text);
    cg_strbuf why = CG_STRBUF_INIT;
    int got = cg_condition_eval(stmt, &pv, &why);
    ck_assert_msg(got == sources[_i].expect, "%s (source %d): got %d, expected %d (%s)", sources[_i].stmt,
                  sources[_i].source, got, sources[_i].expect, cg_strbuf_str(&why));
    cg_strbuf_release(&why);
    json_decref(stmt);
}
END_TEST

/* The same project written with `schedules: pipelines` runs, on every push
 * and every scheduled pipeline, the jobs it runs written with legacy
 * triggers: the `when` conditions the option writes are simulated. */
static const struct {
    const char *dir, *copy, *edit;
} scheduled[] = {
    {".", "cigen.yml dimensions scripts templates verbatim-sources",
     "sed -i 's/^  schedules: triggers/  schedules: pipelines/' cigen.yml"},
    {"examples/pytorch-like", ".", "printf 'pipeline:\\n  schedules: pipelines\\n' >>cigen.yml"},
    {"examples/torchvision-like", ".", "printf 'pipeline:\\n  schedules: pipelines\\n' >>cigen.yml"},
};

static void run_set(const char *file, const cg_sim_input *in, cg_map *out, cg_pool *keys)
{
    size_t len;
    char *text = tu_read(file, &len);
    ck_assert_msg(text != NULL, "no %s", file);
    cg_sim_result r = {0};
    cg_error err;
    cg_error_init(&err);
    ck_assert_msg(cg_sim_run(file, text, len, in, NULL, &r, &err) == 0, "%s", cg_strbuf_str(&err.text));
    cg_strbuf key = CG_STRBUF_INIT;
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_msg(r.v[i].state != CG_UNKNOWN || !strstr(file, "pipelines"), "%s: %s/%s not simulated: %s", file,
                      r.v[i].workflow, r.v[i].job, r.v[i].why ? r.v[i].why : "");
        if (r.v[i].state != CG_RUNS)
            continue;
        cg_strbuf_reset(&key);
        cg_strbuf_addf(&key, "%s/%s", r.v[i].workflow, r.v[i].job);
        cg_map_put(out, cg_pool_strndup(keys, key.buf, key.len), (void *)1);
    }
    cg_strbuf_release(&key);
    cg_sim_result_release(&r);
    cg_error_release(&err);
    free(text);
}

START_TEST(schedules_pipelines_run_as_triggers)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT, a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "mkdir -p '%s/p' && cd '%s/%s' && cp -r %s '%s/p/' && cd '%s/p' && %s && "
                         "$CIGEN -q generate >/dev/null", tmp, tu_srcdir(), scheduled[_i].dir, scheduled[_i].copy, tmp,
                   tmp, scheduled[_i].edit);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "%s: %s", cmd.buf, r.err);
    tu_run_free(&r);
    cg_strbuf_addf(&a, "%s/%s/config.yml", tu_srcdir(), scheduled[_i].dir);
    cg_strbuf_addf(&b, "%s/p/config.yml", tmp);
    /* the scheduled workflows, from the legacy config */
    size_t len, blen;
    char *text = tu_read(a.buf, &len), *btext = tu_read(b.buf, &blen);
    ck_assert_msg(text && btext && (len != blen || memcmp(text, btext, len) != 0), "%s: the option changed nothing",
                  scheduled[_i].dir);
    free(btext);
    cg_error err;
    cg_error_init(&err);
    cg_doc *doc = cg_doc_parse(a.buf, text, len, NULL, &err);
    ck_assert_ptr_nonnull(doc);
    const char *sched[16];
    size_t nsched = 0;
    const char *wn;
    json_t *wf;
    json_object_foreach(json_object_get(cg_doc_root(doc), "workflows"), wn, wf)
        if (json_is_object(wf) && json_object_get(wf, "triggers") && nsched < 16)
            sched[nsched++] = wn;
    ck_assert_msg(nsched > 0, "%s: no scheduled workflow", scheduled[_i].dir);
    static const char *const branches[] = {"main", "master", "nightly", "my-pr", "release/1.0", "gh-pages"};
    size_t compared = 0;
    for (size_t s = 0; s <= nsched; s++)
        for (size_t k = 0; k < CG_ARRAY_LEN(branches); k++) {
            cg_sim_input in = {.branch = branches[k], .schedule = s < nsched ? sched[s] : NULL};
            cg_map x, y;
            cg_map_init(&x);
            cg_map_init(&y);
            cg_pool keys;
            cg_pool_init(&keys);
            run_set(a.buf, &in, &x, &keys);
            run_set(b.buf, &in, &y, &keys);
            ck_assert_msg(x.len == y.len, "%s: on %s%s: %zu entries run with triggers, %zu with pipelines",
                          scheduled[_i].dir, branches[k], in.schedule ? " (scheduled)" : "", x.len, y.len);
            for (size_t e = 0; e < x.cap; e++)
                if (cg_map_key_at(&x, e))
                    ck_assert_msg(cg_map_has(&y, cg_map_key_at(&x, e)), "%s: %s runs with triggers only",
                                  scheduled[_i].dir, cg_map_key_at(&x, e));
            compared += x.len;
            cg_pool_release(&keys);
            cg_map_release(&x);
            cg_map_release(&y);
        }
    ck_assert_msg(compared > 0, "%s: nothing ran on any pipeline", scheduled[_i].dir);
    cg_doc_free(doc);
    free(text);
    cg_error_release(&err);
    cg_strbuf_release(&cmd);
    cg_strbuf_release(&a);
    cg_strbuf_release(&b);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

/* ---- property: select only narrows what CircleCI runs ---- */

static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
    return (unsigned)((rng_state >> 33) % n);
}

/* name -> 1 when some entry of that name runs, from a simulation */
static void running_names(const cg_sim_result *r, cg_map *out)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].state != CG_SKIPPED)
            cg_map_put(out, r->v[i].job, (void *)1);
}

static const struct {
    const char *dir, *full;
} projects[] = {
    {".", "config.yml"},
    {"examples/dynamic", "continuation.yml"},
    {"examples/pytorch-like", "config.yml"},
    {"examples/torchvision-like", "config.yml"},
    {"examples/conda-forge-like", "config.yml"},
    {"tests/bases/dynamic-release", "continuation.yml"},
};

/* Seeded random pipelines on every project of the repository: the config
 * select writes runs, on that pipeline, nothing the full config does not
 * run there (but a special PR's named jobs, never one with credentials);
 * every entry it says is in is in the written file and the counts agree;
 * no workflow is written without jobs. */
/* The property on the project in folder `dir` (its full config `full`),
 * for 24 pipelines drawn from `seed`. */
static void narrows(const char *dir, const char *full_name, uint64_t seed)
{
    static const char *const branches[] = {"my-pr", "main", "gh-pages", "release/1.0", "feature/x"};
    static const char *const tags[] = {"v1.2.3", "foo"};
    static const char *const messages[] = {"fix", "[ci all]", "[conda ci]", "[cpu ci] [pip ci]",
                                           "[ci also: os=macos]", "[ci only: python=3.8]", "[ci also: *_build]"};
    static const char *const changed[] = {"", "--changed README.md", "--changed src/a.c",
                                          "--changed scripts/build_linux.sh", "--changed-files - </dev/null",
                                          "--changed examples/dynamic/src/ext.c --changed examples/dynamic/scripts/build_linux.sh"};
    rng_state = seed;
    cg_strbuf path = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT, args = CG_STRBUF_INIT;
    cg_strbuf_addf(&path, "%s/%s", dir, full_name);
    size_t flen;
    char *full = tu_read(path.buf, &flen);
    ck_assert_msg(full != NULL, "no %s", path.buf);
    cg_error err;
    cg_error_init(&err);
    /* the scheduled workflows: those with triggers */
    cg_doc *fdoc = cg_doc_parse(path.buf, full, flen, NULL, &err);
    ck_assert_msg(fdoc != NULL, "%s", path.buf);
    const char *sched[16];
    size_t nsched = 0;
    const char *wn;
    json_t *wf;
    json_object_foreach(json_object_get(cg_doc_root(fdoc), "workflows"), wn, wf)
        if (json_is_object(wf) && json_object_get(wf, "triggers") && nsched < 16)
            sched[nsched++] = wn;
    char *tmp = tu_mkdtemp();
    size_t checked = 0;
    for (int round = 0; round < 24; round++) {
        cg_sim_input in = {0};
        unsigned kind = rnd(10);
        cg_strbuf_reset(&args);
        if (kind == 0) {
            in.tag = tags[rnd(2)];
            cg_strbuf_addf(&args, "--tag '%s'", in.tag);
        } else if (kind == 1 && nsched) {
            in.schedule = sched[rnd((unsigned)nsched)];
            in.branch = "main";
            cg_strbuf_addf(&args, "--schedule '%s' --branch main", in.schedule);
        } else {
            in.branch = branches[rnd(5)];
            const char *msg = messages[rnd(7)];
            cg_strbuf_addf(&args, "--branch '%s' --message '%s' %s", in.branch, msg, changed[rnd(6)]);
        }
        bool special = strstr(args.buf, "[ci only:") || strstr(args.buf, "[ci also:");
        cg_strbuf_reset(&cmd);
        cg_strbuf_addf(&cmd, "rm -f '%s/out.yml'; $CIGEN -C '%s' -q select --json -o '%s/out.yml' %s", tmp, dir,
                       tmp, args.buf);
        tu_run r = tu_sh(NULL, cmd.buf);
        if (r.status == 2 && special) {
            /* a special PR may be refused: naming nothing, or credentials */
            ck_assert_msg(strstr(r.err, "selects no job") || strstr(r.err, "credentials") ||
                              strstr(r.err, "phases that do not run") || strstr(r.err, "unknown name"),
                          "%s: %s: %s", dir, args.buf, r.err);
            tu_run_free(&r);
            continue;
        }
        ck_assert_msg(r.status == 0, "%s: select %s: exit %d: %s", dir, args.buf, r.status, r.err);
        json_t *js = json_loads(r.out, 0, NULL);
        ck_assert_msg(js != NULL, "%s: --json: %s", args.buf, r.out);
        cg_map said;
        cg_map_init(&said);
        size_t nsaid = 0;
        json_t *jobs = json_object_get(js, "jobs"), *e;
        size_t i;
        json_array_foreach(jobs, i, e)
            if (json_is_true(json_object_get(e, "in"))) {
                cg_map_put(&said, json_string_value(json_object_get(e, "name")), (void *)1);
                nsaid++;
            }
        ck_assert_int_eq((size_t)json_integer_value(json_object_get(js, "jobs_in")), nsaid);
        cg_strbuf_reset(&path);
        cg_strbuf_addf(&path, "%s/out.yml", tmp);
        size_t slen;
        char *sel = tu_read(path.buf, &slen);
        if (!sel) {
            ck_assert_msg(nsaid == 0, "%s: %s: %zu jobs said in, nothing written", dir, args.buf, nsaid);
        } else {
            cg_doc *sdoc = cg_doc_parse("out.yml", sel, slen, NULL, &err);
            ck_assert_msg(sdoc != NULL, "%s: %s: the selection does not parse", dir, args.buf);
            /* every workflow has jobs; every entry written is one select said is in, and the other way */
            cg_map written;
            cg_map_init(&written);
            size_t nwritten = 0;
            json_object_foreach(json_object_get(cg_doc_root(sdoc), "workflows"), wn, wf) {
                if (!json_is_object(wf))
                    continue;
                json_t *wj = json_object_get(wf, "jobs");
                ck_assert_msg(json_array_size(wj) > 0, "%s: %s: workflow '%s' without jobs", dir,
                              args.buf, wn);
                json_array_foreach(wj, i, e) {
                    const char *name = json_is_string(e) ? json_string_value(e) : json_object_iter_key(json_object_iter(e));
                    json_t *a = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
                    if (json_is_string(json_object_get(a, "name")))
                        name = json_string_value(json_object_get(a, "name"));
                    ck_assert_msg(cg_map_has(&said, name), "%s: %s: '%s' written, not said in", dir,
                                  args.buf, name);
                    if (!cg_map_has(&written, name))
                        nwritten++;
                    cg_map_put(&written, name, (void *)1);
                }
                /* every requirement written names an entry of the same workflow (an optional
                 * one, `name?`, is dropped where its job is not picked) */
                cg_map here;
                cg_map_init(&here);
                json_array_foreach(wj, i, e) {
                    const char *name = json_is_string(e) ? json_string_value(e) : json_object_iter_key(json_object_iter(e));
                    json_t *a = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
                    if (json_is_string(json_object_get(a, "name")))
                        name = json_string_value(json_object_get(a, "name"));
                    cg_map_put(&here, name, (void *)1);
                }
                json_array_foreach(wj, i, e) {
                    json_t *a = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
                    json_t *req = json_object_get(a, "requires"), *x;
                    size_t ri;
                    ck_assert_msg(!req || json_array_size(req) > 0, "%s: %s: an empty 'requires' in '%s'",
                                  dir, args.buf, wn);
                    json_array_foreach(req, ri, x) {
                        const char *need = json_is_string(x) ? json_string_value(x)
                                           : json_object_iter_key(json_object_iter(x));
                        ck_assert_msg(need && cg_map_has(&here, need), "%s: %s: workflow '%s' requires '%s', "
                                      "which it does not have", dir, args.buf, wn, need ? need : "?");
                    }
                }
                cg_map_release(&here);
            }
            ck_assert_msg(nwritten == nsaid, "%s: %s: %zu said in, %zu written", dir, args.buf, nsaid,
                          nwritten);
            /* read by the simulation, the selection runs nothing the full config would not run there */
            cg_sim_result rf = {0}, rs = {0};
            ck_assert(cg_sim_run("full", full, flen, &in, NULL, &rf, &err) == 0);
            ck_assert(cg_sim_run("out.yml", sel, slen, &in, NULL, &rs, &err) == 0);
            cg_map runs_full;
            cg_map_init(&runs_full);
            running_names(&rf, &runs_full);
            for (size_t k = 0; k < rs.n; k++) {
                if (rs.v[k].state == CG_SKIPPED || cg_map_has(&runs_full, rs.v[k].job))
                    continue;
                ck_assert_msg(special, "%s: %s: '%s' runs in the selection, not in the full config",
                              dir, args.buf, rs.v[k].job);
                ck_assert_msg(!rs.v[k].context, "%s: %s: '%s' (credentials) runs in the selection only",
                              dir, args.buf, rs.v[k].job);
            }
            cg_map_release(&runs_full);
            cg_sim_result_release(&rf);
            cg_sim_result_release(&rs);
            cg_map_release(&written);
            cg_doc_free(sdoc);
            free(sel);
            checked++;
        }
        cg_map_release(&said);
        json_decref(js);
        tu_run_free(&r);
    }
    ck_assert_msg(checked > 0, "%s: no pipeline wrote a selection", dir);
    cg_doc_free(fdoc);
    cg_error_release(&err);
    free(full);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&path);
    cg_strbuf_release(&cmd);
    cg_strbuf_release(&args);
}

START_TEST(select_only_narrows)
{
    cg_strbuf dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/%s", tu_srcdir(), projects[_i].dir);
    narrows(dir.buf, projects[_i].full, 20261128u + (uint64_t)_i);
    cg_strbuf_release(&dir);
}
END_TEST

/* The same property on random projects: the release base with its `unit`
 * workflow replaced by 2 to 7 entries, each with random branch and tag
 * filters (names, lists, /regex/, only and ignore), requirements on the
 * entries before it and, now and then, credentials. */
static void random_unit_workflow(cg_strbuf *out, unsigned *nentries)
{
    static const char *const filters[] = {
        "",
        "filters: {branches: {only: main}}",
        "filters: {branches: {only: [main, /release\\/.*/]}}",
        "filters: {branches: {ignore: gh-pages}}",
        "filters: {branches: {ignore: [gh-pages, /feature\\/.*/]}}",
        "filters: {branches: {only: /feature\\/.*/}}",
        "filters: {branches: {ignore: /.*/}, tags: {only: /^v.*/}}",
        "filters: {tags: {only: /.*/}}",
        "filters: {branches: {only: /.*/}, tags: {ignore: foo}}",
    };
    unsigned n = 2 + rnd(6);
    cg_strbuf_adds(out, "  unit:\n    jobs:\n");
    for (unsigned e = 0; e < n; e++) {
        cg_strbuf_addf(out, "      - setup:\n          name: e%u\n", e);
        const char *f = filters[rnd((unsigned)CG_ARRAY_LEN(filters))];
        if (*f)
            cg_strbuf_addf(out, "          %s\n", f);
        if (rnd(5) == 0)
            cg_strbuf_adds(out, "          context: org-member\n");
        bool any = false;
        for (unsigned r = 0; r < e; r++)
            if (rnd(3) == 0) {
                cg_strbuf_addf(out, "%s e%u", any ? "," : "          requires: [", r);
                any = true;
            }
        if (any)
            cg_strbuf_adds(out, "]\n");
    }
    *nentries = n;
}

START_TEST(select_only_narrows_random)
{
    rng_state = 20261129u + (uint64_t)_i * 7919u;
    char *tmp = tu_mkdtemp();
    cg_strbuf dir = CG_STRBUF_INIT, man = CG_STRBUF_INIT, unit = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/p", tmp);
    cg_strbuf_addf(&cmd, "cp -r '%s/tests/bases/dynamic-release' '%s'", tu_srcdir(), dir.buf);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_int_eq(r.status, 0);
    tu_run_free(&r);
    /* the manifest with its `unit` workflow (up to `nightly`) replaced */
    cg_strbuf_addf(&man, "%s/cigen.yml", dir.buf);
    size_t len;
    char *text = tu_read(man.buf, &len);
    ck_assert_ptr_nonnull(text);
    const char *from = strstr(text, "\n  unit:\n"), *to = strstr(text, "\n  nightly:\n");
    ck_assert_msg(from && to && from < to, "the release base's manifest changed shape");
    unsigned n;
    random_unit_workflow(&unit, &n);
    cg_strbuf body = CG_STRBUF_INIT;
    cg_strbuf_add(&body, text, (size_t)(from - text) + 1);
    cg_strbuf_add(&body, unit.buf, unit.len);
    cg_strbuf_adds(&body, to);
    tu_write(man.buf, body.buf, body.len);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s' -q generate", dir.buf);
    r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "random project %d (%u entries) not generated: %s\n%s", _i, n, r.err, unit.buf);
    tu_run_free(&r);
    narrows(dir.buf, "continuation.yml", rng_state);
    free(text);
    cg_strbuf_release(&body);
    cg_strbuf_release(&dir);
    cg_strbuf_release(&man);
    cg_strbuf_release(&unit);
    cg_strbuf_release(&cmd);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

Suite *make_pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 240); /* a guard: should_run_job.sh runs once per on-request job */
    tcase_add_loop_test(tc, default_pipelines, 0, (int)CG_ARRAY_LEN(pipelines));
    tcase_add_test(tc, tokens_agree_with_should_run_job);
    tcase_add_test(tc, token_parser);
    tcase_add_test(tc, dynamic_example);
    tcase_add_loop_test(tc, select_only_narrows, 0, (int)CG_ARRAY_LEN(projects));
    tcase_add_loop_test(tc, select_only_narrows_random, 0, 16);
    tcase_add_loop_test(tc, condition_eval, 0, (int)CG_ARRAY_LEN(conditions));
    tcase_add_loop_test(tc, trigger_source_eval, 0, (int)CG_ARRAY_LEN(sources));
    tcase_add_loop_test(tc, schedules_pipelines_run_as_triggers, 0, (int)CG_ARRAY_LEN(scheduled));
    suite_add_tcase(s, tc);
    return s;
}
