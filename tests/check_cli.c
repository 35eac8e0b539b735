/* The command line as users meet it: usage, -C, and determinism. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "base/util.h"

/* The folder of case `name`: tests/golden/NAME or tests/bad/NAME. */
static void case_dir(cg_strbuf *dir, const char *name)
{
    cg_strbuf_addf(dir, "%s/tests/golden/%s", tu_srcdir(), name);
    if (!tu_exists(dir->buf)) {
        cg_strbuf_reset(dir);
        cg_strbuf_addf(dir, "%s/tests/bad/%s", tu_srcdir(), name);
    }
}

/* A copy of a small project: the input of case `name` (its base and in/), as p/. */
static char *project(const char *name)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf from = CG_STRBUF_INIT, to = CG_STRBUF_INIT;
    case_dir(&from, name);
    cg_strbuf_addf(&to, "%s/p", tmp);
    tu_case_input(from.buf, to.buf);
    cg_strbuf_release(&from);
    cg_strbuf_release(&to);
    return tmp;
}

/* Runs script in a fresh copy of case `name`'s project (in it). */
static tu_run run_in_copy(const char *name, const char *script)
{
    char *tmp = project(name);
    cg_strbuf dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/p", tmp);
    tu_run r = tu_sh(dir.buf, script);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&dir);
    return r;
}

START_TEST(help_and_version)
{
    tu_run r = tu_sh(NULL, "$CIGEN --help");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "usage: cigen") != NULL);
    ck_assert(strstr(r.out, "exit status") != NULL);
    tu_run_free(&r);
    r = tu_sh(NULL, "$CIGEN --version");
    ck_assert_int_eq(r.status, 0);
    ck_assert(strncmp(r.out, "cigen ", 6) == 0);
    tu_run_free(&r);
    static const char *const cmds[] = {"generate", "check", "list", "explain"};
    for (size_t i = 0; i < 4; i++) {
        cg_strbuf c = CG_STRBUF_INIT;
        cg_strbuf_addf(&c, "$CIGEN %s --help", cmds[i]);
        r = tu_sh(NULL, c.buf);
        ck_assert_int_eq(r.status, 0);
        ck_assert(strstr(r.out, "usage: cigen") != NULL);
        tu_run_free(&r);
        cg_strbuf_release(&c);
    }
}
END_TEST

/* Whether the man page holds word[0..n), written the roff way ('-' as "\\-"). */
static bool in_man(const char *man, const char *word, size_t n)
{
    cg_strbuf want = CG_STRBUF_INIT;
    for (size_t k = 0; k < n; k++) {
        if (word[k] == '-')
            cg_strbuf_addc(&want, '\\');
        cg_strbuf_addc(&want, word[k]);
    }
    bool found = strstr(man, want.buf) != NULL;
    cg_strbuf_release(&want);
    return found;
}

/* Every long option a --help names is documented in the man page. */
START_TEST(man_page_covers_every_option)
{
    cg_strbuf path = CG_STRBUF_INIT;
    cg_strbuf_addf(&path, "%s/docs/cigen.1", tu_srcdir());
    size_t man_len;
    char *man = tu_read(path.buf, &man_len);
    ck_assert_msg(man != NULL, "cannot read %s", path.buf);
    static const char *const cmds[] = {"", "generate", "check", "list", "explain", "graph", "lint", "coverage",
                                       "merge-driver"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cg_strbuf c = CG_STRBUF_INIT;
        cg_strbuf_addf(&c, "$CIGEN %s --help", cmds[i]);
        tu_run r = tu_sh(NULL, c.buf);
        ck_assert_msg(r.status == 0, "%s: exit %d", c.buf, r.status);
        if (*cmds[i])
            ck_assert_msg(in_man(man, cmds[i], strlen(cmds[i])), "the man page does not mention '%s'", cmds[i]);
        for (const char *o = strstr(r.out, "--"); o; o = strstr(o + 2, "--")) {
            if (o > r.out && o[-1] != ' ' && o[-1] != '[' && o[-1] != '(' && o[-1] != '`')
                continue;
            size_t n = 2;
            while (o[n] == '-' || (o[n] >= 'a' && o[n] <= 'z'))
                n++;
            if (n > 2)
                ck_assert_msg(in_man(man, o, n), "'%.*s' (from `cigen %s --help`) is not in docs/cigen.1",
                              (int)n, o, cmds[i]);
        }
        tu_run_free(&r);
        cg_strbuf_release(&c);
    }
    free(man);
    cg_strbuf_release(&path);
}
END_TEST

/* A command's usage lines (its help up to the first blank line) name every
 * option its help lists ("  --NAME" at the start of a line). */
START_TEST(usage_names_every_option)
{
    static const char *const cmds[] = {"generate", "check", "list", "explain", "graph", "lint", "coverage",
                                       "select"};
    size_t listed = 0; /* (coverage lists none: its usage is all of them) */
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cg_strbuf c = CG_STRBUF_INIT;
        cg_strbuf_addf(&c, "$CIGEN %s --help", cmds[i]);
        tu_run r = tu_sh(NULL, c.buf);
        ck_assert_msg(r.status == 0, "%s: exit %d", c.buf, r.status);
        const char *end = strstr(r.out, "\n\n");
        ck_assert_msg(end != NULL, "%s: no blank line after the usage", c.buf);
        cg_strbuf usage = CG_STRBUF_INIT;
        cg_strbuf_add(&usage, r.out, (size_t)(end - r.out));
        for (const char *o = strstr(r.out, "\n  --"); o; o = strstr(o + 1, "\n  --")) {
            const char *name = o + 3;
            size_t n = 2;
            while (name[n] == '-' || (name[n] >= 'a' && name[n] <= 'z'))
                n++;
            bool found = false;
            char *want = cg_xstrndup(name, n);
            for (const char *u = usage.buf; !found && (u = strstr(u, want)); u++)
                found = !(u[n] == '-' || (u[n] >= 'a' && u[n] <= 'z')); /* the whole option, not a prefix */
            free(want);
            ck_assert_msg(found, "'%.*s' is in `cigen %s --help`'s options but not its usage lines", (int)n, name,
                          cmds[i]);
            listed++;
        }
        cg_strbuf_release(&usage);
        tu_run_free(&r);
        cg_strbuf_release(&c);
    }
    ck_assert_uint_gt(listed, 20);
}
END_TEST

START_TEST(bad_usage_is_exit_2)
{
    static const char *const bad[] = {"$CIGEN", "$CIGEN frobnicate", "$CIGEN --nope generate",
                                      "$CIGEN generate extra", "$CIGEN list --where nonsense=",
                                      "$CIGEN explain", "$CIGEN -C /nonexistent/dir generate"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_run r = tu_sh("/", bad[i]);
        ck_assert_msg(r.status == 2, "%s: exit %d", bad[i], r.status);
        ck_assert_msg(r.err_len > 0, "%s: nothing on stderr", bad[i]);
        tu_run_free(&r);
    }
}
END_TEST

/* A bad option names the command and points to its help; the global options
 * are taken after the command too. */
START_TEST(command_options)
{
    static const char *const cmds[] = {"generate", "check", "list", "explain", "graph", "lint", "coverage"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cg_strbuf c = CG_STRBUF_INIT, want = CG_STRBUF_INIT;
        cg_strbuf_addf(&c, "$CIGEN %s --bogus", cmds[i]);
        cg_strbuf_addf(&want, "cigen %s: unrecognized option '--bogus'\nTry 'cigen %s --help'.\n", cmds[i], cmds[i]);
        tu_run r = tu_sh("/", c.buf);
        ck_assert_msg(r.status == 2, "%s: exit %d", c.buf, r.status);
        ck_assert_msg(cg_streq(r.err, want.buf), "%s:\n%s", c.buf, r.err);
        tu_run_free(&r);
        cg_strbuf_release(&c);
        cg_strbuf_release(&want);
    }
    /* -q after the command silences the summary; --strict is accepted there */
    tu_run r = run_in_copy("e2e-small", "$CIGEN generate && $CIGEN check -q --strict && $CIGEN list --quiet >/dev/null");
    ck_assert_msg(r.status == 0 && r.out_len > 0, "%d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, "in sync") == NULL, "check -q printed:\n%s", r.out);
    tu_run_free(&r);
}
END_TEST

/* regenerate.sh (with a stand-in Makefile: the binary under test is already
 * built) passes options on, and drops pictures whose diagram is gone. */
START_TEST(regenerate_script)
{
    tu_run r = run_in_copy("e2e-small",
                           "cp \"$CIGEN_SRCDIR/regenerate.sh\" . && mkdir -p build diagrams && "
                           "printf '#!/bin/sh\\nexec %s \"$@\"\\n' \"$CIGEN\" > build/cigen && chmod +x build/cigen && "
                           "printf 'build/cigen:\\n\\t@true\\n' > Makefile && "
                           "touch diagrams/workflow-gone.svg diagrams/kept.dot diagrams/kept.svg && "
                           "./regenerate.sh -q && ./regenerate.sh --check --strict -q && "
                           "test ! -e diagrams/workflow-gone.svg && test -e diagrams/kept.svg");
    ck_assert_msg(r.status == 0 && r.out_len == 0, "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* regenerate.sh --help is its own usage (no build, no cigen); the build
 * runs one job per core. */
START_TEST(regenerate_script_help_and_parallel_build)
{
    tu_run r = run_in_copy("e2e-small",
                           "cp \"$CIGEN_SRCDIR/regenerate.sh\" . && printf 'build/cigen:\\n\\t@false\\n' > Makefile && "
                           "./regenerate.sh --help && ./regenerate.sh -h | head -n 1");
    ck_assert_msg(r.status == 0 && strstr(r.out, "usage: ./regenerate.sh [--check] [ARGS...]\n") &&
                      strstr(r.out, "--check    exit 1") && strstr(r.out, "\nusage: ./regenerate.sh") &&
                      !strstr(r.out, "usage: cigen") && !r.err_len,
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    r = run_in_copy("e2e-small",
                    "cp \"$CIGEN_SRCDIR/regenerate.sh\" . && mkdir -p build && "
                    "printf '#!/bin/sh\\nexec %s \"$@\"\\n' \"$CIGEN\" > build/cigen && chmod +x build/cigen && "
                    "printf '.PHONY: build/cigen\\nbuild/cigen:\\n\\t@echo \"$(MAKEFLAGS)\" > flags\\n' > Makefile && "
                    "./regenerate.sh -q && cat flags");
    ck_assert_msg(r.status == 0 && strstr(r.out, "-j"), "no parallel build: %d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* init: a project that is in sync and lint-clean right after; never an
 * overwrite (nothing written when one file exists). */
START_TEST(init_project)
{
    char *dir = tu_mkdtemp();
    tu_run r = tu_sh(dir, "$CIGEN init && $CIGEN check && $CIGEN lint && CIGEN=\"$CIGEN\" ./regenerate.sh --check "
                          "&& ./regenerate.sh --help && ls -R . | tr '\\n' ' '");
    ck_assert_msg(r.status == 0 && strstr(r.out, "in sync") && strstr(r.out, "0 errors, 0 warnings") &&
                      strstr(r.out, "./regenerate.sh --check") && strstr(r.out, "cigen.yml") &&
                      strstr(r.out, "matrix.yml") && !strstr(r.out, "templates") && strstr(r.out, "jobs.yml") &&
                      strstr(r.out, "config.yml"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    r = tu_sh(dir, "$CIGEN init");
    ck_assert_msg(r.status == 2 && cg_streq(r.err, "cigen: error: 'cigen.yml' already exists; init starts a new "
                                                   "project and never overwrites a file (nothing was written)\n"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    tu_rm_rf(dir);
    free(dir);
    dir = tu_mkdtemp();
    r = tu_sh(dir, "echo mine > regenerate.sh; mkdir templates; $CIGEN init; echo \"rc=$?\"; ls; cat regenerate.sh");
    ck_assert_msg(cg_streq(r.out, "rc=2\nregenerate.sh\ntemplates\nmine\n") &&
                      strstr(r.err, "'regenerate.sh' already exists"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    /* in a repository's .circleci/: regenerate named from the root, where
     * CI and pre-commit run it; the merge driver's .gitattributes, which git
     * applies to .circleci/config.yml; one the folder has is not touched */
    r = tu_sh(dir, "mkdir -p repo/.circleci && cd repo && git init -q && $CIGEN -C .circleci init >out && "
                   "$CIGEN -C .circleci check && grep '^regenerate: .circleci/regenerate.sh ' .circleci/cigen.yml && "
                   "grep -c 'Next:.*run .circleci/regenerate.sh' out && git check-attr merge .circleci/config.yml && "
                   "grep -x '#   git config merge.cigen.driver \"cigen -C .circleci merge-driver %O %A %B %P\"' "
                   ".circleci/.gitattributes && mkdir ../p && echo 'x merge=union' > ../p/.gitattributes && "
                   "$CIGEN -C ../p init | head -1 && cat ../p/.gitattributes");
    ck_assert_msg(r.status == 0 && strstr(r.out, ".circleci/config.yml: merge: cigen\n") &&
                      strstr(r.out, "regenerate: .circleci/regenerate.sh") &&
                      strstr(r.out, "cigen: .gitattributes exists; for the merge driver, add to it:\n") &&
                      strstr(r.out, "\nx merge=union\n"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    r = tu_sh(dir, "$CIGEN init --help && $CIGEN init extra");
    ck_assert_msg(r.status == 2 && strstr(r.out, "usage: cigen [-C DIR] init") &&
                      strstr(r.err, "init takes no arguments"), "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    tu_rm_rf(dir);
    free(dir);
}
END_TEST

/* The advice in init's job fragment works as written: declare executors
 * named like the os values, make os {type: executor}, use it; a macOS cell
 * then generates and lints clean. */
START_TEST(init_executor_advice)
{
    char *dir = tu_mkdtemp();
    tu_run r = tu_sh(dir, "set -e; $CIGEN -q init\n"
                          "f=verbatim-sources/jobs.yml\n"
                          "grep -q \"make os\" $f && grep -q \"{type: executor}\" $f\n"
                          "sed -i 's/^jobs:$/executors:\\n  linux: {docker: [{image: cimg\\/python:3.12}]}\\n"
                          "  macos: {macos: {xcode: \"15.4.0\"}}\\n\\njobs:/' $f\n"
                          "sed -i 's/os: {type: string}/os: {type: executor}/; /^    docker:$/d' $f\n"
                          "sed -i 's/^      - image: cimg\\/python:<< parameters.python >>$/    executor: << parameters.os >>/' $f\n"
                          "sed -i 's/^    python: \\[\"3.11\", \"3.12\", \"3.13\"\\]$/&\\n  - os: macos\\n    python: [\"3.12\"]/' "
                          "dimensions/matrix.yml\n"
                          "$CIGEN -q generate && $CIGEN --strict lint && grep -c 'executor: << parameters.os >>' $f "
                          "&& grep -A2 'name: test_macos_3_12' config.yml");
    ck_assert_msg(r.status == 0 && strstr(r.out, "0 errors, 0 warnings") && strstr(r.out, "os: macos"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    tu_rm_rf(dir);
    free(dir);
}
END_TEST

/* init creates its files beneath the project (io/paths.c): a folder it
 * writes into that is a link out of the project is refused, nothing is
 * written there or here; a manifest named outside (-m ../x.yml) or in git's
 * folder is refused before anything is written. */
START_TEST(init_never_leaves_the_project)
{
    char *dir = tu_mkdtemp();
    tu_run r = tu_sh(dir, "mkdir proj outside && ln -s ../outside proj/verbatim-sources && "
                          "$CIGEN -C proj init; echo \"rc=$?\"; ls -A proj outside");
    ck_assert_msg(cg_streq(r.out, "rc=2\noutside:\n\nproj:\nverbatim-sources\n") &&
                      cg_streq(r.err, "cigen: error: cannot write 'verbatim-sources/jobs.yml': a symbolic link on its "
                                      "path leads out of the project folder (nothing was written)\n"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    r = tu_sh(dir, "rm proj/verbatim-sources; $CIGEN -C proj -m ../x.yml init; echo \"rc=$?\"; "
                   "$CIGEN -C proj -m .git/x.yml init; echo \"rc=$?\"; ls -A proj; ls");
    ck_assert_msg(cg_streq(r.out, "rc=2\nrc=2\noutside\nproj\n") &&
                      strstr(r.err, "'../x.yml' leaves the project folder") && strstr(r.err, ".git"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    tu_rm_rf(dir);
    free(dir);
}
END_TEST

/* A project folder inside a repository's git folder is refused by every
 * command, init included, and nothing is written there: .git/hooks (init),
 * .git itself with its output a hook, a worktree's and a submodule's git
 * folder, a --separate-git-dir one and a bare repository (found as git
 * finds one, not by name). */
START_TEST(project_in_git_folder)
{
    static const struct {
        const char *setup, *dir, *cmd;
    } cases[] = {
        {"", "r/.git/hooks", "init"},
        {"", "r/.git", "init"},
        {"cp -r \"$CIGEN_SRCDIR/tests/bases/e2e-small/.\" r/.git/ && "
         "sed -i 's|^output: config.yml|output: hooks/post-checkout|' r/.git/cigen.yml && "
         "printf '#!/bin/sh\\necho hook\\n' > r/.git/hooks/post-checkout && chmod +x r/.git/hooks/post-checkout",
         "r/.git", "generate --force"},
        {"cp -r \"$CIGEN_SRCDIR/tests/bases/e2e-small/.\" r/.git/hooks/", "r/.git/hooks", "generate"},
        {"cp -r \"$CIGEN_SRCDIR/tests/bases/e2e-small/.\" r/.git/hooks/", "r/.git/hooks", "check"},
        {"cp -r \"$CIGEN_SRCDIR/tests/bases/e2e-small/.\" r/.git/hooks/", "r/.git/hooks", "list"},
        {"git -C r commit -q --allow-empty -m c && git -C r worktree add -q ../wt && mkdir r/.git/worktrees/wt/x",
         "r/.git/worktrees/wt/x", "init"},
        {"git -C r commit -q --allow-empty -m c && git init -q sub && git -C sub commit -q --allow-empty -m s && "
         "git -C r -c protocol.file.allow=always submodule -q add ../sub sub",
         "r/.git/modules/sub/hooks", "init"},
        {"git init -q --separate-git-dir=\"$PWD/gd\" r2", "gd/hooks", "init"},
        {"git init -q --separate-git-dir=\"$PWD/gd\" r2", "gd", "init"},
        {"git init -q --bare b.git", "b.git/hooks", "init"},
        {"git init -q --bare b.git && mkdir b.git/refs/x", "b.git/refs/x", "init"},
    };
    for (size_t i = 0; i < CG_ARRAY_LEN(cases); i++) {
        char *dir = tu_mkdtemp();
        cg_strbuf cmd = CG_STRBUF_INIT;
        cg_strbuf_addf(&cmd,
                       "set -e; git init -q r && git -C r config user.email t@example.com && "
                       "git -C r config user.name t && git -C r config commit.gpgsign false\n"
                       "git config --global user.email >/dev/null 2>&1 || export GIT_AUTHOR_NAME=t "
                       "GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com\n"
                       "%s\n"
                       /* the listings outside the folder listed, in a folder of their own
                        * (a fixed name beside it is shared with a concurrent run) */
                       "b=$(mktemp -d)\n"
                       "find . -path ./r/.git/index -prune -o -print | LC_ALL=C sort | xargs cksum 2>/dev/null "
                       ">\"$b/before\" || true\n"
                       "set +e; $CIGEN -C %s %s; echo \"rc=$?\"\n"
                       "find . -path ./r/.git/index -prune -o -print | LC_ALL=C sort | xargs cksum 2>/dev/null "
                       ">\"$b/after\"; cmp -s \"$b/before\" \"$b/after\" && echo unchanged; "
                       "rm -rf \"$b\"",
                       cases[i].setup, cases[i].dir, cases[i].cmd);
        tu_run r = tu_sh(dir, cmd.buf);
        ck_assert_msg(strstr(r.out, "rc=2\n") && strstr(r.out, "unchanged") &&
                          strstr(r.err, "lies inside a repository's git folder"),
                      "case %zu (%s %s): %d\n%s%s", i, cases[i].dir, cases[i].cmd, r.status, r.out, r.err);
        tu_run_free(&r);
        cg_strbuf_release(&cmd);
        tu_rm_rf(dir);
        free(dir);
    }
    /* the work trees themselves are projects like any other */
    char *dir = tu_mkdtemp();
    tu_run r = tu_sh(dir, "set -e; git init -q r; git init -q --separate-git-dir=\"$PWD/gd\" r2; "
                          "$CIGEN -q -C r init && $CIGEN -q -C r2 init && mkdir r/.circleci && "
                          "$CIGEN -q -C r/.circleci init && echo ok");
    ck_assert_msg(r.status == 0 && cg_streq(r.out, "ok\n"), "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    tu_rm_rf(dir);
    free(dir);
}
END_TEST

/* .pre-commit-hooks.yaml: its entry with its args is `cigen check`, which
 * passes on a project in sync and fails on a drifted one; -C DIR before
 * `check` (the sub-folder form the README gives) works too. */
START_TEST(pre_commit_hook)
{
    tu_run r = run_in_copy("e2e-small",
                           "f=\"$CIGEN_SRCDIR/.pre-commit-hooks.yaml\"\n"
                           "entry=$(sed -n 's/^  entry: //p' \"$f\")\n"
                           "args=$(sed -n 's/^  args: \\[\\(.*\\)\\]$/\\1/p' \"$f\" | tr -d ,)\n"
                           "grep -q '^- id: cigen-check$' \"$f\" && grep -q '^  language: system$' \"$f\" &&\n"
                           "grep -q '^  pass_filenames: false$' \"$f\" || exit 9\n"
                           "test \"$entry $args\" = 'cigen check' || exit 8\n"
                           "mkdir bin && ln -s \"$CIGEN\" bin/cigen && PATH=\"$PWD/bin:$PATH\"\n"
                           "$entry $args >/dev/null || exit 7\n"
                           "mkdir -p sub && cp -r * sub/ 2>/dev/null; $entry -C sub $args >/dev/null || exit 6\n"
                           "echo '# drift' >> config.yml; $entry $args >/dev/null; echo \"drift=$?\"");
    ck_assert_msg(r.status == 0 && strstr(r.out, "drift=1"), "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* completion/cigen.bash: the candidates bash's completion function gives,
 * with COMP_WORDS/COMP_CWORD set as bash sets them; the names come from
 * the cigen on PATH (the one under test) run on the project of -C. */
START_TEST(bash_completion)
{
    tu_run r = run_in_copy("e2e-small",
                           "mkdir bin && ln -s \"$CIGEN\" bin/cigen && PATH=\"$PWD/bin:$PATH\"\n"
                           "bash -c '. \"$CIGEN_SRCDIR/completion/cigen.bash\"\n"
                           "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _cigen;\n"
                           "  printf \"%s|\" \"${COMPREPLY[@]}\"; echo; }\n"
                           "t cigen \"\"; t cigen ex; t cigen --st; t cigen check --f; t cigen explain build_linux_3_7\n"
                           "t cigen list --where \"\"; t cigen list --where c; t cigen list --where os=m\n"
                           "t cigen list --where os=linux,cuda=; t cigen generate --only \"!py\"\n"
                           "t cigen graph --collapse p; t cigen graph --format s\n"
                           "t cigen graph --tree \"\"; t cigen graph --workflow \"\"; t cigen list --where workflow=\n"
                           "cd /; t cigen -C \"$OLDPWD\" explain build_m'\n"
                           "! command -v zsh >/dev/null || zsh -n \"$CIGEN_SRCDIR/completion/_cigen\"");
    ck_assert_msg(r.status == 0 &&
                      cg_streq(r.out, "generate|check|list|explain|graph|lint|coverage|merge-driver|init|import|select|\n"
                                      "explain|\n"
                                      "--strict|\n"
                                      "--full-diff|\n"
                                      "build_linux_3_7_cpu_build|build_linux_3_7_cu100_build|\n"
                                      "cuda=|os=|phase=|python=|tier=|tree=|workflow=|\n"
                                      "cuda=|\n"
                                      "os=macos|\n"
                                      "os=linux,cuda=cpu|os=linux,cuda=cu100|\n"
                                      "!python=|\n"
                                      "python|\n"
                                      "svg|\n"
                                      "builds|\n"
                                      "ci|nightly|\n"
                                      "workflow=ci|workflow=nightly|\n"
                                      "build_macos_3_10_build|\n"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* -v says on stderr what was read, skipped and written, with timings; -q
 * silences the summary and every warning (the sources' and lint's), unless
 * --strict makes them errors. */
START_TEST(verbose_and_quiet)
{
    tu_run r = run_in_copy("generate-quiet-lint-warning",
                           "rm -f config.yml; $CIGEN -v generate >out 2>err || exit 9\n"
                           "grep -q '^cigen: verbose: read cigen.yml (the manifest, 102 bytes)$' err || exit 8\n"
                           "grep -q '^cigen: verbose: read jobs.yml (a fragment, 639 bytes)$' err || exit 7\n"
                           "grep -q '^cigen: verbose: loaded in [0-9.]* s: 1 tree, 4 cells, 4 jobs$' err || exit 6\n"
                           "grep -q '^cigen: verbose: writing (new) config.yml$' err || exit 5\n"
                           "grep -q \"^jobs.yml:27:3: warning: job 'orphan'\" err || exit 4\n"
                           "$CIGEN generate --verbose 2>err >/dev/null || exit 3\n"
                           "grep -q '^cigen: verbose: skipped (unchanged, not touched) config.yml$' err || exit 2\n"
                           "$CIGEN generate 2>err >/dev/null; ! grep -q verbose err || exit 1\n"
                           "echo ok");
    ck_assert_msg(r.status == 0 && cg_streq(r.out, "ok\n"), "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    r = run_in_copy("warn-filter-matches-nothing",
                    "$CIGEN generate -q; echo \"rc=$?\"; $CIGEN -q generate --strict; echo \"rc=$?\"");
    ck_assert_msg(cg_streq(r.out, "rc=0\nrc=2\n") && cg_streq(r.err, "tree.yml:6:5: error: exclude pattern "
                                                                  "{python: \"3.9\"} matches no cell\n"),
                  "%d\n%s%s", r.status, r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* A report that cannot be written is an error, not a silent success. */
START_TEST(stdout_write_error)
{
    static const char *const cmds[] = {"list", "list --json", "lint --json", "check", "--help"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cg_strbuf cmd = CG_STRBUF_INIT;
        cg_strbuf_addf(&cmd, "$CIGEN %s > /dev/full", cmds[i]);
        tu_run r = run_in_copy("e2e-small", cmd.buf);
        ck_assert_msg(r.status == 2, "%s: exit %d", cmds[i], r.status);
        ck_assert_msg(cg_streq(r.err, "cigen: error: cannot write to standard output: No space left on device\n"),
                      "%s: %s", cmds[i], r.err);
        tu_run_free(&r);
        cg_strbuf_release(&cmd);
    }
}
END_TEST

/* -C DIR works on DIR as if run there: the same report from anywhere, the
 * output written in DIR and nothing in the current folder, and a folder
 * that does not exist refused. */
START_TEST(directory_option)
{
    char *tmp = project("e2e-small");
    cg_strbuf cmd = CG_STRBUF_INIT, dir = CG_STRBUF_INIT, cfg = CG_STRBUF_INIT, elsewhere = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/p", tmp);
    cg_strbuf_addf(&cfg, "%s/p/config.yml", tmp);
    cg_strbuf_addf(&elsewhere, "%s/elsewhere", tmp);
    tu_run here = tu_sh(dir.buf, "$CIGEN check");
    cg_strbuf_addf(&cmd, "$CIGEN -C '%s' check", dir.buf);
    tu_run r = tu_sh("/", cmd.buf);
    ck_assert_msg(r.status == 0 && here.status == 0, "check via -C from /: %d, in the folder: %d\n%s%s", r.status,
                  here.status, r.out, r.err);
    ck_assert_str_eq(r.out, here.out);
    ck_assert_str_eq(r.err, here.err);
    tu_run_free(&r);
    tu_run_free(&here);

    size_t len;
    char *committed = tu_read(cfg.buf, &len);
    ck_assert_ptr_nonnull(committed);
    unlink(cfg.buf);
    mkdir(elsewhere.buf, 0755);
    cg_strbuf_reset(&cmd);
    cg_strbuf_adds(&cmd, "$CIGEN -C ../p generate");
    r = tu_sh(elsewhere.buf, cmd.buf);
    ck_assert_msg(r.status == 0, "generate via -C: %d\n%s%s", r.status, r.out, r.err);
    size_t glen;
    char *generated = tu_read(cfg.buf, &glen);
    ck_assert_msg(generated && glen == len && memcmp(generated, committed, len) == 0,
                  "generate via -C did not write the same config.yml into the -C folder");
    size_t n;
    char **left = tu_list_dir(elsewhere.buf, &n);
    ck_assert_msg(n == 0, "generate via -C wrote into the current folder: %s", left[0]);
    tu_free_list(left, n);
    free(generated);
    free(committed);
    tu_run_free(&r);

    r = tu_sh(tmp, "$CIGEN -C no-such-folder check");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "error: cannot use folder 'no-such-folder'") != NULL, "-C no-such-folder: %s", r.err);
    tu_run_free(&r);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&cmd);
    cg_strbuf_release(&dir);
    cg_strbuf_release(&cfg);
    cg_strbuf_release(&elsewhere);
}
END_TEST

START_TEST(same_bytes_everywhere)
{
    /* locale, time zone, environment and working folder must not matter */
    static const char *const envs[] = {
        "LC_ALL=C TZ=UTC",
        "LC_ALL=tr_TR.UTF-8 LANG=tr_TR.UTF-8 TZ=Asia/Tokyo",
        "LC_ALL=de_DE.UTF-8 TZ=America/New_York HOME=/nonexistent",
        "env -i PATH=/usr/bin:/bin",
    };
    char *tmp = project("e2e-small");
    cg_strbuf cfg = CG_STRBUF_INIT;
    cg_strbuf_addf(&cfg, "%s/p/config.yml", tmp);
    size_t want_len;
    char *want = tu_read(cfg.buf, &want_len);
    ck_assert_ptr_nonnull(want);
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        unlink(cfg.buf);
        cg_strbuf cmd = CG_STRBUF_INIT;
        /* run from the parent folder through -C, then from inside */
        cg_strbuf_addf(&cmd, "%s $CIGEN -q -C %s generate", envs[i], i % 2 ? "p" : "./p/.");
        tu_run r = tu_sh(tmp, cmd.buf);
        ck_assert_msg(r.status == 0, "%s: %s", envs[i], r.err);
        size_t len;
        char *got = tu_read(cfg.buf, &len);
        ck_assert_msg(got && len == want_len && memcmp(got, want, len) == 0, "output differs with %s", envs[i]);
        free(got);
        tu_run_free(&r);
        cg_strbuf_release(&cmd);
    }
    free(want);
    cg_strbuf_release(&cfg);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

/* A generate that finds everything up to date leaves the file alone (the
 * same inode) and no temporary file behind. */
START_TEST(up_to_date_not_replaced)
{
    char *t = project("e2e-small");
    tu_run r = tu_sh(t, "$CIGEN -q -C p generate && ls -i p/config.yml > before && "
                        "$CIGEN -C p generate && ls -i p/config.yml > after && "
                        "cmp before after && ! ls -a p | grep -q cigen-");
    ck_assert_msg(r.status == 0, "up to date: %s%s", r.out, r.err);
    ck_assert(strstr(r.out, "already up to date") != NULL);
    tu_run_free(&r);
    tu_rm_rf(t);
    free(t);
}
END_TEST

/* lint names config.yml's lines only when the file on disk is this config:
 * a file edited, a folder or a FIFO (never waited on) in its place is
 * merely not the config, and the findings are those of a config that was
 * never written. */
START_TEST(lint_config_on_disk)
{
    static const char *const cases[] = {"lint-clean", "lint-json", "lint-undefined-job", "lint-strict-warning",
                                        "e2e-small"};
    static const char *const prep[] = {"rm -rf p/config.yml", "sed -i '$s/$/ /' p/config.yml",
                                       "rm -rf p/config.yml && mkdir p/config.yml",
                                       "rm -rf p/config.yml && mkfifo p/config.yml"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = project(cases[i]);
        cg_strbuf path = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT;
        case_dir(&path, cases[i]);
        cg_strbuf_adds(&path, "/cmd");
        char *args = tu_read(path.buf, NULL);
        ck_assert_msg(args != NULL, "%s: no cmd", cases[i]);
        args[strcspn(args, "\n")] = '\0';
        if (strstr(args, "lint") == NULL) {
            free(args);
            args = cg_xstrdup("lint --json");
        }
        tu_run want = {0};
        for (size_t k = 0; k < sizeof prep / sizeof prep[0]; k++) {
            cg_strbuf_reset(&cmd);
            cg_strbuf_addf(&cmd, "$CIGEN -q -C p generate >/dev/null 2>&1; %s 2>/dev/null; timeout 20 $CIGEN -C p %s", prep[k],
                           args);
            tu_run r = tu_sh(t, cmd.buf);
            ck_assert_msg(r.status != 124, "%s (%s): lint waited", cases[i], prep[k]);
            if (k == 0) {
                want = r;
                continue;
            }
            ck_assert_msg(want.status == r.status && strcmp(want.out, r.out) == 0 && strcmp(want.err, r.err) == 0,
                          "%s (%s): the findings differ from a config never written:\n%s\n---\n%s", cases[i], prep[k],
                          want.out, r.out);
            tu_run_free(&r);
        }
        tu_run_free(&want);
        free(args);
        cg_strbuf_release(&path);
        cg_strbuf_release(&cmd);
        tu_rm_rf(t);
        free(t);
    }
}
END_TEST

/* A config of a few megabytes: an unused job makes a finding, which says
 * whether the file on disk is the config. */
START_TEST(lint_big_project)
{
    char *big = tu_big_project();
    tu_run idle = tu_sh(big, "printf '  idle:\\n    docker: [{image: cimg/base:stable}]\\n    steps: [checkout]\\n' "
                             ">> p/verbatim-sources/jobs.yml");
    ck_assert_int_eq(idle.status, 0);
    tu_run_free(&idle);
    static const char *const big_prep[] = {"", "sed -i '$s/$/ /' p/config.yml"};
    for (size_t k = 0; k < sizeof big_prep / sizeof big_prep[0]; k++) {
        cg_strbuf cmd = CG_STRBUF_INIT;
        cg_strbuf_addf(&cmd, "$CIGEN -q -C p generate >/dev/null 2>&1; %s%s", big_prep[k], *big_prep[k] ? " && " : "");
        cg_strbuf_adds(&cmd, "$CIGEN -C p lint --json");
        tu_run a = tu_sh(big, cmd.buf);
        ck_assert_msg(strstr(a.out, k ? "\"config_on_disk\": false" : "\"config_on_disk\": true"), "big (%s): %s",
                      big_prep[k], a.out);
        tu_run_free(&a);
        cg_strbuf_release(&cmd);
    }
    tu_rm_rf(big);
    free(big);
}
END_TEST

/* A config.yml that is a FIFO is refused, never waited on, in one line. */
START_TEST(fifo_output_refused_not_waited_on)
{
    static const char *const runs[][2] = {
        {"generate", "error: cannot write 'config.yml': it is not a regular file"},
        {"check", "error: cannot compare 'config.yml': it is not a regular file"}};
    static const char *const modes[] = {""};
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 1; k++) {
            char *t = project("e2e-small");
            cg_strbuf cmd = CG_STRBUF_INIT;
            cg_strbuf_addf(&cmd, "rm -f p/config.yml && mkfifo p/config.yml && %stimeout 20 $CIGEN -C p %s", modes[k],
                           runs[i][0]);
            tu_run r = tu_sh(t, cmd.buf);
            ck_assert_msg(r.status == 2, "%s%s: exit %d: %s", modes[k], runs[i][0], r.status, r.err);
            ck_assert_msg(strstr(r.err, runs[i][1]) && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
                          "%s%s: %s", modes[k], runs[i][0], r.err);
            tu_run_free(&r);
            cg_strbuf_release(&cmd);
            tu_rm_rf(t);
            free(t);
        }
}
END_TEST

/* Without helper threads (as when none can be started) cigen does the same
 * work on one thread: the same files, check agrees, and a drifted check's
 * report is the same. */
START_TEST(no_threads_same_bytes)
{
    char *a = tu_big_project(), *b = tu_big_project();
    tu_run ra = tu_sh(a, "$CIGEN -q -C p generate");
    tu_run rb = tu_sh(b, "export CIGEN_TEST_NO_THREADS=1; $CIGEN -q -C p generate && "
                         "$CIGEN -q -C p check");
    ck_assert_msg(ra.status == 0 && rb.status == 0, "%s%s", ra.err, rb.err);
    char *diff = tu_diff_trees(a, b);
    ck_assert_msg(diff == NULL, "outputs differ without threads: %s", diff ? diff : "");
    tu_run_free(&ra);
    tu_run_free(&rb);
    /* a drifted check (a hand edit and a changed source: the diff and the
     * old body's digest found at once) says the same on one thread */
    ra = tu_sh(a, "sed -i '60000s/$/x/' p/config.yml && sed -i 's/a15/a15x/' p/dimensions/big.yml && "
                  "$CIGEN -C p check --full-diff");
    rb = tu_sh(a, "CIGEN_TEST_NO_THREADS=1 $CIGEN -C p check --full-diff");
    ck_assert_msg(ra.status == 1 && rb.status == 1, "exit %d, without threads %d: %s", ra.status, rb.status, ra.err);
    ck_assert_msg(strstr(ra.out, "edited by hand, and its sources changed") != NULL, "%s", ra.out);
    ck_assert_msg(strcmp(ra.out, rb.out) == 0, "the report differs:\n%s\n---\n%s", ra.out, rb.out);
    tu_run_free(&ra);
    tu_run_free(&rb);
    tu_rm_rf(a);
    tu_rm_rf(b);
    free(a);
    free(b);
}
END_TEST

/* A write that fails halfway (here the file-size limit, as a full disk
 * would): one error, exit 2, the old config.yml untouched, no temporary
 * file left, with helper threads or without, whether the shell ignores
 * SIGXFSZ or not (cigen ignores it itself). */
START_TEST(failed_write_leaves_old_config)
{
    static const char *const modes[] = {"", "CIGEN_TEST_NO_THREADS=1 "};
    for (size_t k = 0; k < 2 * sizeof modes / sizeof modes[0]; k++) {
        size_t i = k / 2;
        const char *trap = k % 2 == 0 ? "trap '' XFSZ; " : "";
        char *t = tu_big_project();
        cg_strbuf cmd = CG_STRBUF_INIT;
        cg_strbuf_addf(&cmd, "$CIGEN -q -C p generate && cp p/config.yml before && "
                             "sed -i 's/a15/a15x/' p/dimensions/big.yml && "
                             "(%sulimit -f 2048; %s$CIGEN -q -C p generate)", trap, modes[i]);
        tu_run r = tu_sh(t, cmd.buf);
        ck_assert_msg(r.status == 2, "%s%s: exit %d: %s", trap, modes[i], r.status, r.err);
        ck_assert_msg(strstr(r.err, "error: cannot write 'config.yml': the file size limit (ulimit -f) is reached") !=
                          NULL, "%s%s: %s", trap, modes[i], r.err);
        ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "%s: more than one line: %s", modes[i],
                      r.err);
        tu_run_free(&r);
        r = tu_sh(t, "cmp before p/config.yml && ! ls -a p | grep cigen-");
        ck_assert_msg(r.status == 0, "%s: the old config changed or a temporary file stayed: %s%s", modes[i],
                      r.out, r.err);
        tu_run_free(&r);
        cg_strbuf_release(&cmd);
        tu_rm_rf(t);
        free(t);
    }
}
END_TEST

Suite *make_cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, usage_names_every_option);
    tcase_add_test(tc, man_page_covers_every_option);
    tcase_add_test(tc, bad_usage_is_exit_2);
    tcase_add_test(tc, command_options);
    tcase_add_test(tc, regenerate_script);
    tcase_add_test(tc, regenerate_script_help_and_parallel_build);
    tcase_add_test(tc, init_project);
    tcase_add_test(tc, project_in_git_folder);
    tcase_add_test(tc, init_executor_advice);
    tcase_add_test(tc, init_never_leaves_the_project);
    tcase_add_test(tc, pre_commit_hook);
    tcase_add_test(tc, bash_completion);
    tcase_add_test(tc, verbose_and_quiet);
    tcase_add_test(tc, stdout_write_error);
    tcase_add_test(tc, directory_option);
    tcase_add_test(tc, same_bytes_everywhere);
    tcase_add_test(tc, up_to_date_not_replaced);
    tcase_add_test(tc, fifo_output_refused_not_waited_on);
    tcase_add_test(tc, lint_config_on_disk);
    tcase_add_test(tc, lint_big_project);
    tcase_add_test(tc, no_threads_same_bytes);
    tcase_add_test(tc, failed_write_leaves_old_config);
    suite_add_tcase(s, tc);
    return s;
}
