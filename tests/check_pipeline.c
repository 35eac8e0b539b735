/* cigen select on the embedded default: simulated pipelines and the exact
 * jobs each runs (tests/pipeline/default-*.txt), the commit-message tokens
 * read as scripts/should_run_job.sh reads them, and the token parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"
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
                   "cmp \"$t/one.yml\" \"$t/two.yml\"\n",
                   tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "examples/dynamic:\n%s%s", r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
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
    suite_add_tcase(s, tc);
    return s;
}
