/* cigen select on the embedded default: simulated pipelines and the exact
 * jobs each runs (tests/pipeline/default-*.txt), the commit-message tokens
 * read as scripts/should_run_job.sh reads them, and the token parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"
#include "model/condition.h"
#include "model/pipeline.h"

static const struct {
    const char *expect;   /* tests/pipeline/NAME.txt */
    const char *args;
} pipelines[] = {
    {"default-ordinary-pr", "--branch my-pr --message 'fix a bug' --changed torch/foo.py --changed README.md"},
    {"default-conda-ci", "--branch my-pr --message 'new conda recipe [conda ci]' --changed torch/foo.py"},
    {"default-ci-only", "--branch my-pr --message 'try [ci only: os=linux,package=conda]' --changed torch/foo.py"},
    {"default-macos-scripts", "--branch my-pr --message 'macOS wheel fix' "
                              "--changed .circleci/scripts/binary_macos_build.sh"},
    {"default-main", "--branch main --message 'Merge pull request #1'"},
    {"default-scheduled-binary_builds", "--branch main --schedule binary_builds"},
    {"default-scheduled-update_s3_htmls", "--branch main --schedule update_s3_htmls"},
    {"default-scheduled-binarysmoketests", "--branch main --schedule binarysmoketests"},
};

/* The exact set of jobs each simulated pipeline runs. */
START_TEST(default_pipelines)
{
    cg_strbuf cmd = CG_STRBUF_INIT, path = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s' -q select %s", tu_srcdir(), pipelines[_i].args);
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
    cg_pipeline_tokens t;
    cg_pipeline_tokens_parse("Fix [CI ALL] [Conda ci] [ci only: os=linux,package=conda] [ci also:  x_* ] "
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
    cg_pipeline_tokens_free(&t);
    cg_pipeline_tokens_parse(NULL, &t);
    ck_assert(!t.all && !t.nwords && !t.nonly && !t.nalso);
    cg_pipeline_tokens_free(&t);
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
    cg_pipeline_values pv = {params, "nightly", "my-pr", ""};
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

Suite *make_pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 240); /* a guard: should_run_job.sh runs once per on-request job */
    tcase_add_loop_test(tc, default_pipelines, 0, (int)CG_ARRAY_LEN(pipelines));
    tcase_add_test(tc, tokens_agree_with_should_run_job);
    tcase_add_test(tc, token_parser);
    tcase_add_test(tc, dynamic_example);
    tcase_add_loop_test(tc, condition_eval, 0, (int)CG_ARRAY_LEN(conditions));
    suite_add_tcase(s, tc);
    return s;
}
