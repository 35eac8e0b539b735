/* Golden cases: one folder per case, no C needed to add one.
 *
 *   tests/golden/NAME/   runs that succeed or report (exit status 0 or 1)
 *   tests/bad/NAME/      input cigen must refuse (exit status 2)
 *
 *     base      optional: the name of a base project, tests/bases/NAME,
 *               copied first; further lines `without PATH` remove a file of it
 *     in/       the project (copied to a temporary folder, where cigen runs);
 *               with `base`, only the files that differ from the base or add
 *               to it, copied over it
 *     cmd       the arguments (default "generate"); a line using $CIGEN is
 *               run as a shell command instead
 *     status    the expected exit status (default 0)
 *     stdout    the expected standard output (compared when present)
 *     stderr    the expected standard error (compared when present)
 *     expect/   files expected to differ from the input after the run
 *     gone      paths (one a line) expected to be removed by the run
 *
 * A case that runs plain `generate` with exit 0 is loaded once more in the
 * test and its config checked by cg_roundtrip_check (audit/roundtrip.h):
 * it must load (libyaml, no key twice) to what the model means.
 *
 * A case whose name says "symlink", "linked" or "git" runs a second time
 * with CIGEN_TEST_NO_OPENAT2=1 (paths resolved by cigen's own walk).
 *
 * After the run the whole folder must equal the input (base and in/)
 * overlaid with expect/ (and without the paths of `gone`):
 * nothing else written, nothing left behind, and for an error case, every
 * output byte-identical.
 *
 * CIGEN_BLESS=1 (make check-bless) rewrites the expectations from the
 * current binary instead (see bless() and tests/README.md); never in CI.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "base/util.h"
#include "audit/roundtrip.h"
#include "model/model.h"

static char **cases;
static size_t ncases;

static void forget_cases(void)
{
    tu_free_list(cases, ncases);
    cases = NULL;
    ncases = 0;
}

/* CIGEN_CASES, when set, keeps the cases whose SUITE/NAME or NAME matches
 * it (a shell pattern: CIGEN_CASES='bad/yaml-*'). */
static bool selected(const char *suite, const char *name)
{
    const char *pattern = getenv("CIGEN_CASES");
    if (!pattern || !*pattern)
        return true;
    cg_strbuf full = CG_STRBUF_INIT;
    cg_strbuf_addf(&full, "%s/%s", suite, name);
    bool yes = fnmatch(pattern, full.buf, 0) == 0 || fnmatch(pattern, name, 0) == 0;
    cg_strbuf_release(&full);
    return yes;
}

static void discover(void)
{
    atexit(forget_cases);
    static const char *const roots[] = {"tests/golden", "tests/bad"};
    size_t cap = 0;
    for (size_t r = 0; r < 2; r++) {
        cg_strbuf dir = CG_STRBUF_INIT;
        cg_strbuf_addf(&dir, "%s/%s", tu_srcdir(), roots[r]);
        size_t n;
        char **names = tu_list_dir(dir.buf, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf c = CG_STRBUF_INIT;
            cg_strbuf_addf(&c, "%s/%s", dir.buf, names[i]);
            cg_strbuf in = CG_STRBUF_INIT, base = CG_STRBUF_INIT;
            cg_strbuf_addf(&in, "%s/in", c.buf);
            cg_strbuf_addf(&base, "%s/base", c.buf);
            if ((tu_exists(in.buf) || tu_exists(base.buf)) && selected(roots[r] + 6, names[i])) {
                cg_grow(&cases, &cap, ncases + 1, sizeof *cases);
                cases[ncases++] = cg_strbuf_detach(&c, NULL);
            }
            cg_strbuf_release(&c);
            cg_strbuf_release(&in);
            cg_strbuf_release(&base);
        }
        tu_free_list(names, n);
        cg_strbuf_release(&dir);
    }
}

static char *case_file(const char *c, const char *name, size_t *len)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/%s", c, name);
    char *data = tu_read(p.buf, len);
    cg_strbuf_release(&p);
    return data;
}

static void compare_text(const char *c, const char *what, const char *expected, size_t elen,
                         const char *actual, size_t alen)
{
    if (elen == alen && memcmp(expected, actual, elen) == 0)
        return;
    /* from the line of the first difference, at most 1000 bytes of each:
     * check's messages are limited (a longer one ends the test runner) */
    size_t at = 0, line = 1;
    while (at < elen && at < alen && expected[at] == actual[at])
        at++;
    while (at > 0 && expected[at - 1] != '\n')
        at--;
    for (size_t i = 0; i < at; i++)
        line += expected[i] == '\n';
    size_t en = elen - at < 1000 ? elen - at : 1000, an = alen - at < 1000 ? alen - at : 1000;
    ck_abort_msg("%s: %s differs from line %zu\n--- expected\n%.*s%s--- actual\n%.*s%s", c, what, line, (int)en,
                 expected + at, en < elen - at ? "\n[...]\n" : "", (int)an, actual + at,
                 an < alen - at ? "\n[...]\n" : "");
}

/* Makes at `want` what the case folder must hold after the run: its input
 * overlaid with expect/, without the paths of `gone`. */
static void make_want(const char *c, const char *want)
{
    tu_case_input(c, want);
    cg_strbuf ex = CG_STRBUF_INIT;
    cg_strbuf_addf(&ex, "%s/expect", c);
    if (tu_exists(ex.buf)) {
        /* overlay: expect/ replaces or adds files */
        size_t n;
        char **names = tu_list_dir(ex.buf, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
            cg_strbuf_addf(&a, "%s/%s", ex.buf, names[i]);
            cg_strbuf_addf(&b, "%s/%s", want, names[i]);
            tu_rm_rf(b.buf);
            tu_copy_tree(a.buf, b.buf);
            cg_strbuf_release(&a);
            cg_strbuf_release(&b);
        }
        tu_free_list(names, n);
    }
    cg_strbuf_release(&ex);
    size_t len;
    char *gone = case_file(c, "gone", &len);
    for (char *line = gone ? strtok(gone, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        cg_strbuf g = CG_STRBUF_INIT;
        cg_strbuf_addf(&g, "%s/%s", want, line);
        tu_rm_rf(g.buf);
        cg_strbuf_release(&g);
    }
    free(gone);
}

/* Writes the case file `name` when it differs from data (or is missing and
 * `create`); says so in `what`. */
static void bless_file(const char *c, const char *name, const char *data, size_t dlen, bool create,
                       cg_strbuf *what)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/%s", c, name);
    size_t len;
    char *old = tu_read(p.buf, &len);
    if ((old || create) && (!old || len != dlen || memcmp(old, data, dlen) != 0)) {
        tu_write(p.buf, data, dlen);
        cg_strbuf_addf(what, " %s", name);
    }
    free(old);
    cg_strbuf_release(&p);
}

/* When folder `work` is folder `input` (both folders) with entries removed
 * and nothing added or changed, lists the removed ones (as REL/NAME lines) in gone. */
static bool only_removed(const char *input, const char *work, const char *rel, cg_strbuf *gone)
{
    size_t n;
    char **names = tu_list_dir(work, &n);
    bool only = true;
    for (size_t i = 0; i < n && only; i++) {
        cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
        cg_strbuf_addf(&a, "%s/%s", input, names[i]);
        cg_strbuf_addf(&b, "%s/%s", work, names[i]);
        struct stat sa, sb;
        if (lstat(a.buf, &sa) != 0 || lstat(b.buf, &sb) != 0) {
            only = false;
        } else if (S_ISDIR(sa.st_mode) && S_ISDIR(sb.st_mode)) {
            cg_strbuf r = CG_STRBUF_INIT;
            cg_strbuf_addf(&r, "%s/%s", rel, names[i]);
            only = only_removed(a.buf, b.buf, r.buf, gone);
            cg_strbuf_release(&r);
        } else {
            char *d = tu_diff_trees(a.buf, b.buf);
            only = d == NULL;
            free(d);
        }
        cg_strbuf_release(&a);
        cg_strbuf_release(&b);
    }
    tu_free_list(names, n);
    names = tu_list_dir(input, &n);
    for (size_t i = 0; i < n && only; i++) {
        cg_strbuf b = CG_STRBUF_INIT;
        cg_strbuf_addf(&b, "%s/%s", work, names[i]);
        if (!tu_exists(b.buf))
            cg_strbuf_addf(gone, "%s/%s\n", rel, names[i]);
        cg_strbuf_release(&b);
    }
    tu_free_list(names, n);
    return only;
}

/* CIGEN_BLESS=1 (make check-bless): records what the current binary did as
 * the case's expectations. stdout, stderr and status are rewritten when the
 * case has them (a new case, with none of them, gets all three); expect/ and
 * gone are made again from the folder after the run when it is not as they
 * say: every top-level entry that changed goes to expect/ (a folder that only
 * lost files lists them in gone instead), every one removed to gone. in/ and
 * base are never touched. */
static void bless(const char *c, const tu_run *r, const char *work, const char *tmp)
{
    cg_strbuf p = CG_STRBUF_INIT, what = CG_STRBUF_INIT;
    bool fresh = true;
    static const char *const recorded[] = {"stdout", "stderr", "status"};
    for (size_t i = 0; i < 3; i++) {
        cg_strbuf_reset(&p);
        cg_strbuf_addf(&p, "%s/%s", c, recorded[i]);
        fresh = fresh && !tu_exists(p.buf);
    }
    bless_file(c, "stdout", r->out, r->out_len, fresh, &what);
    bless_file(c, "stderr", r->err, r->err_len, fresh, &what);
    char st[16];
    snprintf(st, sizeof st, "%d\n", r->status);
    bless_file(c, "status", st, strlen(st), fresh && r->status != 0, &what);

    cg_strbuf want = CG_STRBUF_INIT, input = CG_STRBUF_INIT, ex = CG_STRBUF_INIT, gone = CG_STRBUF_INIT;
    cg_strbuf_addf(&want, "%s/bless-want", tmp);
    cg_strbuf_addf(&input, "%s/bless-input", tmp);
    cg_strbuf_addf(&ex, "%s/expect", c);
    make_want(c, want.buf);
    char *diff = tu_diff_trees(want.buf, work);
    if (diff) {
        tu_case_input(c, input.buf);
        tu_rm_rf(ex.buf);
        size_t n;
        char **names = tu_list_dir(work, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
            cg_strbuf_addf(&a, "%s/%s", work, names[i]);
            cg_strbuf_addf(&b, "%s/%s", input.buf, names[i]);
            char *d = tu_diff_trees(b.buf, a.buf);
            size_t mark = gone.len;
            struct stat sa, sb;
            bool dirs = lstat(a.buf, &sa) == 0 && S_ISDIR(sa.st_mode) && lstat(b.buf, &sb) == 0 && S_ISDIR(sb.st_mode);
            if (d && dirs && only_removed(b.buf, a.buf, names[i], &gone)) {
                free(d);
                d = NULL;
            } else {
                cg_strbuf_truncate(&gone, mark);
            }
            if (d) {
                cg_strbuf_reset(&b);
                cg_strbuf_addf(&b, "%s/%s", ex.buf, names[i]);
                mkdir(ex.buf, 0755);
                tu_copy_tree(a.buf, b.buf);
            }
            free(d);
            cg_strbuf_release(&a);
            cg_strbuf_release(&b);
        }
        tu_free_list(names, n);
        names = tu_list_dir(input.buf, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf a = CG_STRBUF_INIT;
            cg_strbuf_addf(&a, "%s/%s", work, names[i]);
            if (!tu_exists(a.buf))
                cg_strbuf_addf(&gone, "%s\n", names[i]);
            cg_strbuf_release(&a);
        }
        tu_free_list(names, n);
        cg_strbuf_reset(&p);
        cg_strbuf_addf(&p, "%s/gone", c);
        tu_rm_rf(p.buf);
        if (gone.len)
            tu_write(p.buf, gone.buf, gone.len);
        cg_strbuf_adds(&what, " expect/ gone");
    }
    free(diff);
    if (what.len)
        fprintf(stderr, "blessed %s:%s\n", c, what.buf);
    cg_strbuf_release(&want);
    cg_strbuf_release(&input);
    cg_strbuf_release(&ex);
    cg_strbuf_release(&gone);
    cg_strbuf_release(&p);
    cg_strbuf_release(&what);
}

/* A case that generated with exit 0: the config.yml it wrote loads to what
 * the model means (audit/roundtrip.h), the promise behind exit 0. */
static void check_roundtrip(const char *c, const char *work)
{
    cg_options o = {.dir = work};
    cg_model m;
    cg_model_init(&m);
    cg_error err;
    cg_error_init(&err);
    int rc = cg_model_load(&m, &o, &err);
    ck_assert_msg(rc == 0, "%s: the project generated, but does not load again: %s", c, cg_strbuf_str(&err.text));
    rc = cg_roundtrip_check(&m, &err);
    ck_assert_msg(rc == 0, "%s: exit 0, but config.yml does not mean what cigen meant: %s", c,
                  cg_strbuf_str(&err.text));
    cg_error_release(&err);
    cg_model_release(&m);
}

/* Runs case c, with `env` (shell text) before its command. */
static void run_case(const char *c, const char *env)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf work = CG_STRBUF_INIT, want = CG_STRBUF_INIT;
    cg_strbuf_addf(&work, "%s/work", tmp);
    cg_strbuf_addf(&want, "%s/want", tmp);
    tu_case_input(c, work.buf);
    size_t len;
    char *cmdfile = case_file(c, "cmd", &len);
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_adds(&cmd, env);
    if (cmdfile) {
        while (len && (cmdfile[len - 1] == '\n' || cmdfile[len - 1] == ' '))
            cmdfile[--len] = '\0';
    }
    bool plain_generate = !cmdfile || cg_streq(cmdfile, "generate");
    cg_strbuf base = CG_STRBUF_INIT;
    if (cmdfile && strstr(cmdfile, "$CIGEN"))
        cg_strbuf_adds(&base, cmdfile);
    else
        cg_strbuf_addf(&base, "$CIGEN %s", cmdfile ? cmdfile : "generate");
    cg_strbuf_add(&cmd, base.buf, base.len);
    cg_strbuf_release(&base);
    free(cmdfile);
    tu_run r = tu_sh(work.buf, cmd.buf);
    const char *blessing = getenv("CIGEN_BLESS");
    if (blessing && strcmp(blessing, "1") == 0 && !*env)
        bless(c, &r, work.buf, tmp);
    make_want(c, want.buf);
    char *status = case_file(c, "status", &len);
    int want_status = status ? atoi(status) : 0;
    free(status);
    bool in_bad = strstr(c, "/tests/bad/") != NULL;
    ck_assert_msg(in_bad ? want_status == 2 : want_status == 0 || want_status == 1,
                  "%s: status %d, but tests/%s holds the cases of exit status %s: move the case to tests/%s", c,
                  want_status, in_bad ? "bad" : "golden", in_bad ? "2" : "0 or 1", in_bad ? "golden" : "bad");
    char *exp_out = case_file(c, "stdout", &len);
    if (exp_out)
        compare_text(c, "stdout", exp_out, len, r.out, r.out_len);
    free(exp_out);
    char *exp_err = case_file(c, "stderr", &len);
    if (exp_err)
        compare_text(c, "stderr", exp_err, len, r.err, r.err_len);
    free(exp_err);
    /* messages cut to what check can carry (a longer one ends the runner) */
    ck_assert_msg(r.status == want_status, "%s: exit status %d, expected %d\nstdout:\n%.1000s\nstderr:\n%.1000s", c,
                  r.status, want_status, r.out, r.err);
    char *diff = tu_diff_trees(want.buf, work.buf);
    ck_assert_msg(diff == NULL, "%s: the project folder after the run is not as expected:\n%.2000s", c, diff);
    if (plain_generate && r.status == 0 && !*env)
        check_roundtrip(c, work.buf);
    tu_run_free(&r);
    cg_strbuf_release(&work);
    cg_strbuf_release(&want);
    cg_strbuf_release(&cmd);
    tu_rm_rf(tmp);
    free(tmp);
}

START_TEST(golden_case)
{
    const char *c = cases[_i];
    run_case(c, "");
    /* a case about links runs again with the walk cigen falls back on where
     * the kernel has no openat2: the same outcome */
    const char *name = strrchr(c, '/') + 1;
    if (strstr(name, "symlink") || strstr(name, "linked") || strstr(name, "git"))
        run_case(c, "export CIGEN_TEST_NO_OPENAT2=1; ");
}
END_TEST

Suite *make_golden_suite(void)
{
    discover();
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("cases");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, golden_case, 0, (int)ncases);
    suite_add_tcase(s, tc);
    return s;
}
