/* The merge driver resolves a real conflict in config.yml, in a scratch
 * repository: the sources merge cleanly, their outputs do not. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"

/* A scratch repository holding tests/bases/e2e-small ($SRC: the source tree). */
#define REPO_SETUP                                                                  \
    "set -e\n"                                                                      \
    "cp -r \"$SRC/tests/bases/e2e-small\" repo && cd repo\n"                    \
    "git init -q && git config user.email t@example.com && git config user.name t\n" \
    "git config commit.gpgsign false\n"
#define USE_DRIVER "git config merge.cigen.driver \"$CIGEN merge-driver %O %A %B %P\"\n"
/* From the base commit ($MAIN): branch py38 adds Python 3.8, $MAIN adds an
 * argument to the template; both regenerate their outputs. */
#define TWO_BRANCHES                                                                                       \
    "MAIN=$(git symbolic-ref --short HEAD)\n"                                                              \
    "git checkout -qb py38\n"                                                                              \
    "sed -i 's/    python: \\[\"3.6\", \"3.7\"\\]/    python: [\"3.6\", \"3.7\", \"3.8\"]/' dimensions/builds.yml\n" \
    "$CIGEN -q generate && git commit -qam 'python 3.8'\n"                                                  \
    "git checkout -q \"$MAIN\"\n"                                                                          \
    "printf 'build:\\n  python: \"{{ python }}\"\\n  cuda: \"{{ cuda? }}\"\\n  tag: nightly\\n' > templates/build.yml\n" \
    "sed -i 's/^      cuda: {type: string, default: cpu}$/&\\n      tag: {type: string, default: none}/' "         \
    "verbatim-sources/jobs.yml\n"                                                                          \
    "$CIGEN -q generate && git commit -qam 'tag'\n"

/* Two branches whose config.yml texts conflict (with the driver when
 * $DRIVER is 1). */
static const char scenario[] =
    REPO_SETUP
    "if [ \"$DRIVER\" = 1 ]; then\n"
    "  echo 'config.yml merge=cigen' > .gitattributes\n"
    "  " USE_DRIVER
    "fi\n"
    "git add -A && git commit -qm base\n"
    TWO_BRANCHES
    "set +e\n";

/* Runs script in a new scratch folder (removed after), with $SRC set. */
static tu_run in_scratch(const char *env, const char *script)
{
    char *dir = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "SRC='%s' %s; %s", tu_srcdir(), env, script);
    tu_run r = tu_sh(dir, cmd.buf);
    cg_strbuf_release(&cmd);
    tu_rm_rf(dir);
    free(dir);
    return r;
}

/* The scenario, then action. */
static tu_run run(bool driver, const char *action)
{
    cg_strbuf script = CG_STRBUF_INIT;
    cg_strbuf_adds(&script, scenario);
    cg_strbuf_adds(&script, action);
    tu_run r = in_scratch(driver ? "DRIVER=1" : "DRIVER=0", script.buf);
    cg_strbuf_release(&script);
    return r;
}

static const char merge_then_check[] =
    "git merge py38 -m 'merge py38' >/dev/null 2>&1; echo \"merge=$?\"\n"
    "git status --porcelain | grep '^UU' || true\n"
    "$CIGEN check >/dev/null 2>&1; echo \"check=$?\"\n";

static const char rebase_then_check[] =
    "git checkout -q py38 && git rebase \"$MAIN\" >/dev/null 2>&1; echo \"rebase=$?\"\n"
    "$CIGEN check >/dev/null 2>&1; echo \"check=$?\"\n";

START_TEST(merge_without_driver_conflicts)
{
    tu_run r = run(false, merge_then_check);
    ck_assert_msg(strstr(r.out, "merge=1") && strstr(r.out, "UU config.yml"),
                  "expected a textual conflict without the driver:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

START_TEST(merge_driver_resolves_merge)
{
    tu_run r = run(true, merge_then_check);
    ck_assert_msg(strstr(r.out, "merge=0") && strstr(r.out, "check=0") && !strstr(r.out, "UU"),
                  "the driver did not resolve the merge:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

START_TEST(merge_driver_resolves_rebase)
{
    tu_run r = run(true, rebase_then_check);
    ck_assert_msg(strstr(r.out, "rebase=0") && strstr(r.out, "check=0"),
                  "the driver did not resolve the rebase:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

START_TEST(merge_driver_leaves_source_conflicts)
{
    /* both branches edit the same line of the tree: nothing to regenerate from */
    tu_run r = run(true,
                   "git checkout -q py38\n"
                   "sed -i 's/\"3.8\"\\]/\"3.9\"]/' dimensions/builds.yml && $CIGEN -q generate\n"
                   "git commit -qam 'python 3.9' && git checkout -q \"$MAIN\"\n"
                   "sed -i 's/    python: \\[\"3.6\", \"3.7\"\\]/    python: [\"3.5\"]/' dimensions/builds.yml\n"
                   "$CIGEN -q generate; git commit -qam 'python 3.5'\n"
                   "git merge py38 -m m >/dev/null 2>merge.err; echo \"merge=$?\"\n"
                   "git status --porcelain | grep '^UU' || true\n"
                   "cat merge.err\n");
    ck_assert_msg(strstr(r.out, "merge=1") && strstr(r.out, "UU config.yml") &&
                      strstr(r.out, "UU dimensions/builds.yml") && strstr(r.out, "could not regenerate config.yml"),
                  "expected the sources' conflict to be left, with a hint:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* A conflict inside a source that would still parse (in a multi-line
 * quoted scalar): the markers must not be regenerated into config.yml, and
 * the driver names the file and line. */
START_TEST(merge_driver_leaves_conflicts_that_parse)
{
    tu_run r = in_scratch(
        "", REPO_SETUP
        "echo 'config.yml merge=cigen' > .gitattributes\n"
        USE_DRIVER
        "sed -i 's/^      - run: echo << parameters.python >>$/      - run: \"echo << parameters.python >>\\n"
        "          middle\\n          end\"/' verbatim-sources/jobs.yml\n"
        "grep -q middle verbatim-sources/jobs.yml\n"
        "$CIGEN -q generate --force && git add -A && git commit -qm base\n"
        "MAIN=$(git symbolic-ref --short HEAD)\n"
        "git checkout -qb other && sed -i 's/          middle/          theirs/' verbatim-sources/jobs.yml\n"
        "$CIGEN -q generate && git commit -qam other\n"
        "git checkout -q \"$MAIN\" && sed -i 's/          middle/          ours/' verbatim-sources/jobs.yml\n"
        "$CIGEN -q generate && git commit -qam ours\n"
        "set +e\n"
        "git merge other -m m >/dev/null 2>merge.err; echo \"merge=$?\"\n"
        "git status --porcelain | grep '^UU' || true\n"
        "cat merge.err\n");
    ck_assert_msg(strstr(r.out, "merge=1") && strstr(r.out, "UU config.yml") &&
                      strstr(r.out, "verbatim-sources/jobs.yml:17:1: error: this file holds git's conflict markers"),
                  "expected config.yml left in conflict:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* More outputs than a handful: nine workflows, nine workflow diagrams. */
START_TEST(merge_driver_resolves_every_output)
{
    tu_run r = in_scratch(
        "", REPO_SETUP
        "for i in 1 2 3 4 5 6 7; do printf '  w%s:\\n    jobs: [setup]\\n' $i >> cigen.yml; done\n"
        "sed -i 's/^trees:/diagrams: diagrams\\ntrees:/' cigen.yml\n"
        "printf 'config.yml merge=cigen\\ndiagrams/*.dot merge=cigen\\n' > .gitattributes\n"
        USE_DRIVER
        "$CIGEN -q generate --force && test $(ls diagrams/*.dot | wc -l) -gt 8 && git add -A && git commit -qm base\n"
        TWO_BRANCHES
        "set +e\n"
        "git merge py38 -m m >/dev/null 2>merge.err; echo \"merge=$?\"\n"
        "git status --porcelain | grep '^UU' || true\n"
        "$CIGEN check >/dev/null 2>&1; echo \"check=$?\"\n"
        "cat merge.err\n");
    ck_assert_msg(strstr(r.out, "merge=0") && strstr(r.out, "check=0") && !strstr(r.out, "UU"),
                  "the driver did not resolve every output:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* Git runs the driver once per conflicted output; the merged sources are
 * checked out and rendered by the first run only (one `git merge-tree`),
 * whose reason for giving up is said once. */
START_TEST(merge_driver_renders_once_per_merge)
{
    tu_run r = in_scratch(
        "", REPO_SETUP
        "for i in 1 2 3 4 5 6 7; do printf '  w%s:\\n    jobs: [setup]\\n' $i >> cigen.yml; done\n"
        "sed -i 's/^trees:/diagrams: diagrams\\ntrees:/' cigen.yml\n"
        "printf 'config.yml merge=cigen\\ndiagrams/*.dot merge=cigen\\n' > .gitattributes\n"
        USE_DRIVER
        "$CIGEN -q generate --force && git add -A && git commit -qm base\n"
        TWO_BRANCHES
        "set +e\n"
        "GIT_TRACE=\"$PWD/../trace\" git merge py38 -m m >/dev/null 2>merge.err; echo \"merge=$?\"\n"
        "echo \"merge-trees=$(grep -c 'built-in: git merge-tree' ../trace)\"\n"
        "echo \"entries=$(ls \"$(git rev-parse --git-path cigen-merge)\" | wc -l)\"\n"
        "$CIGEN check >/dev/null 2>&1; echo \"check=$?\"\n"
        /* now a merge whose sources conflict: every output is left in
         * conflict, the reason said once */
        "git checkout -qb a && sed -i 's/\"3.8\"\\]/\"3.9\"]/' dimensions/builds.yml\n"
        "$CIGEN -q generate && git commit -qam a && git checkout -q \"$MAIN\"\n"
        "sed -i 's/\"3.8\"\\]/\"3.10\"]/' dimensions/builds.yml\n"
        "$CIGEN -q generate && git commit -qam b\n"
        "git merge a -m m2 >/dev/null 2>merge2.err; echo \"merge2=$?\"\n"
        "echo \"said=$(grep -c 'could not regenerate' merge2.err)\"\n"
        "cat merge.err merge2.err\n");
    ck_assert_msg(strstr(r.out, "merge=0") && strstr(r.out, "check=0") && strstr(r.out, "merge-trees=1\n") &&
                      strstr(r.out, "entries=1\n"),
                  "expected one render for every output of the merge:\n%s%s", r.out, r.err);
    ck_assert_msg(strstr(r.out, "merge2=1") && strstr(r.out, "said=1\n"),
                  "expected the reason said once:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* The project in .circleci/ of a larger repository, the driver run with -C
 * .circleci; a fragment whose name does not end in .yml is found too. */
START_TEST(merge_driver_project_in_subfolder)
{
    tu_run r = in_scratch(
        "", "set -e\n"
        "mkdir -p repo/src && cp -r \"$SRC/tests/bases/e2e-small\" repo/.circleci && cd repo\n"
        "for i in 1 2 3 4 5; do echo \"file $i\" > src/f$i.c; done\n"
        "git init -q && git config user.email t@example.com && git config user.name t\n"
        "git config commit.gpgsign false\n"
        "echo '.circleci/config.yml merge=cigen' > .gitattributes\n"
        "git config merge.cigen.driver \"$CIGEN -C .circleci merge-driver %O %A %B %P\"\n"
        "cd .circleci && git mv -f verbatim-sources/jobs.yml verbatim-sources/jobs.frag 2>/dev/null || "
        "mv verbatim-sources/jobs.yml verbatim-sources/jobs.frag\n"
        "sed -i 's|verbatim-sources/jobs.yml|verbatim-sources/jobs.frag|' cigen.yml\n"
        "sed -i 's|verbatim-sources/jobs.yml|verbatim-sources/jobs.frag|' dimensions/builds.yml templates/build.yml\n"
        "$CIGEN -q generate --force && git add -A && git commit -qm base\n"
        "MAIN=$(git symbolic-ref --short HEAD)\n"
        "git checkout -qb py38\n"
        "sed -i 's/    python: \\[\"3.6\", \"3.7\"\\]/    python: [\"3.6\", \"3.7\", \"3.8\"]/' dimensions/builds.yml\n"
        "$CIGEN -q generate && git commit -qam 'python 3.8'\n"
        "git checkout -q \"$MAIN\"\n"
        "printf 'build:\\n  python: \"{{ python }}\"\\n  cuda: \"{{ cuda? }}\"\\n  tag: nightly\\n' > templates/build.yml\n"
        "sed -i 's/^      cuda: {type: string, default: cpu}$/&\\n      tag: {type: string, default: none}/' "
        "verbatim-sources/jobs.frag\n"
        "$CIGEN -q generate && git commit -qam 'tag'\n"
        "cd ..\n"
        "set +e\n"
        "git merge py38 -m m >/dev/null 2>merge.err; echo \"merge=$?\"\n"
        "git status --porcelain | grep '^UU' || true\n"
        "grep -c 3.8 .circleci/config.yml >/dev/null && echo has38\n"
        "$CIGEN -C .circleci check >/dev/null 2>&1; echo \"check=$?\"\n"
        "cat merge.err\n");
    ck_assert_msg(strstr(r.out, "merge=0") && strstr(r.out, "has38") && strstr(r.out, "check=0") &&
                      !strstr(r.out, "UU"),
                  "the driver did not resolve the sub-folder project:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* A project folder whose name holds a line break: git's answers, one a
 * line, would shift, and a folder of the project would be taken for the
 * driver's cache and emptied; the driver declines (git's merge of the
 * text stays) and nothing of the project is removed. */
START_TEST(merge_driver_line_break_in_path)
{
    tu_run r = in_scratch(
        "", "set -e\n"
        "mkdir repo && cp -r \"$SRC/tests/bases/e2e-small\" \"repo/$(printf 'ci\\ndimensions')\" && cd repo\n"
        "P=\"$(printf 'ci\\ndimensions')\"\n"
        "git init -q && git config user.email t@example.com && git config user.name t\n"
        "git config commit.gpgsign false\n"
        "printf '*/config.yml merge=cigen\\n' > .gitattributes\n"
        "git config merge.cigen.driver \"$CIGEN -C '$P' merge-driver %O %A %B %P\"\n"
        "echo keep > \"$P/dimensions/untracked.txt\"\n"
        "git add -A ':!*/untracked.txt' && git commit -qm base\n"
        "MAIN=$(git symbolic-ref --short HEAD)\n"
        "git checkout -qb py38\n"
        "sed -i 's/    python: \\[\"3.6\", \"3.7\"\\]/    python: [\"3.6\", \"3.7\", \"3.8\"]/' \"$P/dimensions/builds.yml\"\n"
        "$CIGEN -C \"$P\" -q generate && git commit -qam 'python 3.8'\n"
        "git checkout -q \"$MAIN\"\n"
        "printf 'build:\\n  python: \"{{ python }}\"\\n  cuda: \"{{ cuda? }}\"\\n  tag: nightly\\n' > \"$P/templates/build.yml\"\n"
        "sed -i 's/^      cuda: {type: string, default: cpu}$/&\\n      tag: {type: string, default: none}/' "
        "\"$P/verbatim-sources/jobs.yml\"\n"
        "$CIGEN -C \"$P\" -q generate && git commit -qam 'tag'\n"
        "set +e\n"
        "git merge py38 -m m >/dev/null 2>merge.err; echo \"merge=$?\"\n"
        "git status --porcelain | grep '^ D' || echo none-deleted\n"
        "cat \"$P/dimensions/untracked.txt\"\n"
        "grep -c 'line break' merge.err\n");
    ck_assert_msg(strstr(r.out, "none-deleted") && strstr(r.out, "keep") && !strstr(r.out, "merge=0") &&
                      strstr(r.out, "\n1\n"),
                  "the driver touched the project, or did not decline once:\n%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* The driver's cache under the git folder, planted as a symbolic link (to a
 * folder outside the repository, or to the work tree through ".."): the
 * merge still resolves, nothing in the link's target is removed or
 * written, and the link is left as it was.  A cache folder that is not
 * the user's own (group- or world-writable) is not used either. */
START_TEST(merge_driver_cache_link)
{
    static const char *const plants[] = {
        "ln -s \"$PWD/../victim\" .git/cigen-merge",
        "ln -s .. .git/cigen-merge",
        "ln -s ../.. .git/cigen-merge",
        "mkdir .git/cigen-merge && chmod 777 .git/cigen-merge && echo keep > .git/cigen-merge/other-users-file",
        "mkdir .git/cigen-merge && ln -s \"$PWD/../victim/keep.txt\" .git/cigen-merge/entry",
        "ln -s \"$PWD/../victim/missing\" .git/cigen-merge",
    };
    for (size_t i = 0; i < CG_ARRAY_LEN(plants); i++) {
        cg_strbuf script = CG_STRBUF_INIT;
        cg_strbuf_adds(&script,
                       "mkdir victim && echo keep > victim/keep.txt && echo keep2 > victim/second.txt\n"
                       REPO_SETUP
                       "echo 'config.yml merge=cigen' > .gitattributes\n"
                       USE_DRIVER
                       "git add -A && git commit -qm base\n"
                       TWO_BRANCHES);
        cg_strbuf_adds(&script, plants[i]);
        cg_strbuf_adds(&script, "\n"
                       "ls -a > ../top.before\n"
                       "set +e\n"
                       "git merge py38 -m m >/dev/null 2>../merge.err; echo \"merge=$?\"\n"
                       "ls -a > ../top.after; cmp -s ../top.before ../top.after && echo top-kept\n"
                       "cat ../victim/keep.txt ../victim/second.txt\n"
                       "echo \"victim=$(ls -A ../victim | tr '\\n' ' ')\"\n"
                       "[ -e .git/cigen-merge/other-users-file ] && echo other-kept\n"
                       "$CIGEN check >/dev/null 2>&1; echo \"check=$?\"\n"
                       "cat ../merge.err\n");
        /* the victim folder is made beside the repository */
        tu_run r = in_scratch("", script.buf);
        bool other = strstr(plants[i], "other-users-file") != NULL;
        ck_assert_msg(strstr(r.out, "merge=0") && strstr(r.out, "check=0") && strstr(r.out, "top-kept") &&
                          strstr(r.out, "keep\nkeep2\n") && strstr(r.out, "victim=keep.txt second.txt \n") &&
                          (!other || strstr(r.out, "other-kept")),
                      "plant %zu (%s): the driver went through the planted cache:\n%s%s", i, plants[i], r.out,
                      r.err);
        tu_run_free(&r);
        cg_strbuf_release(&script);
    }
}
END_TEST

START_TEST(merge_driver_usage)
{
    tu_run r = tu_sh(NULL, "$CIGEN merge-driver a b");
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    r = tu_sh(NULL, "$CIGEN merge-driver --help");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "merge.cigen.driver") != NULL);
    tu_run_free(&r);
}
END_TEST

Suite *make_merge_suite(void)
{
    Suite *s = suite_create("merge");
    TCase *tc = tcase_create("driver");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, merge_without_driver_conflicts);
    tcase_add_test(tc, merge_driver_resolves_merge);
    tcase_add_test(tc, merge_driver_resolves_rebase);
    tcase_add_test(tc, merge_driver_leaves_source_conflicts);
    tcase_add_test(tc, merge_driver_leaves_conflicts_that_parse);
    tcase_add_test(tc, merge_driver_resolves_every_output);
    tcase_add_test(tc, merge_driver_renders_once_per_merge);
    tcase_add_test(tc, merge_driver_project_in_subfolder);
    tcase_add_test(tc, merge_driver_line_break_in_path);
    tcase_add_test(tc, merge_driver_cache_link);
    tcase_add_test(tc, merge_driver_usage);
    suite_add_tcase(s, tc);
    return s;
}
