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
 * After the run the whole folder must equal the input (base and in/)
 * overlaid with expect/ (and without the paths of `gone`):
 * nothing else written, nothing left behind, and for an error case, every
 * output byte-identical.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"

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
    ck_abort_msg("%s: %s differs\n--- expected\n%.*s--- actual\n%.*s", c, what, (int)elen, expected,
                 (int)alen, actual);
}

START_TEST(golden_case)
{
    const char *c = cases[_i];
    char *tmp = tu_mkdtemp();
    cg_strbuf work = CG_STRBUF_INIT, want = CG_STRBUF_INIT;
    cg_strbuf_addf(&work, "%s/work", tmp);
    cg_strbuf_addf(&want, "%s/want", tmp);
    tu_case_input(c, work.buf);
    tu_case_input(c, want.buf);
    cg_strbuf ex = CG_STRBUF_INIT;
    cg_strbuf_addf(&ex, "%s/expect", c);
    if (tu_exists(ex.buf)) {
        /* overlay: expect/ replaces or adds files */
        size_t n;
        char **names = tu_list_dir(ex.buf, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
            cg_strbuf_addf(&a, "%s/%s", ex.buf, names[i]);
            cg_strbuf_addf(&b, "%s/%s", want.buf, names[i]);
            tu_rm_rf(b.buf);
            tu_copy_tree(a.buf, b.buf);
            cg_strbuf_release(&a);
            cg_strbuf_release(&b);
        }
        tu_free_list(names, n);
    }
    size_t len;
    char *gone = case_file(c, "gone", &len);
    for (char *line = gone ? strtok(gone, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        cg_strbuf g = CG_STRBUF_INIT;
        cg_strbuf_addf(&g, "%s/%s", want.buf, line);
        tu_rm_rf(g.buf);
        cg_strbuf_release(&g);
    }
    free(gone);
    char *cmdfile = case_file(c, "cmd", &len);
    cg_strbuf cmd = CG_STRBUF_INIT;
    if (cmdfile) {
        while (len && (cmdfile[len - 1] == '\n' || cmdfile[len - 1] == ' '))
            cmdfile[--len] = '\0';
    }
    if (cmdfile && strstr(cmdfile, "$CIGEN"))
        cg_strbuf_adds(&cmd, cmdfile);
    else
        cg_strbuf_addf(&cmd, "$CIGEN %s", cmdfile ? cmdfile : "generate");
    free(cmdfile);
    tu_run r = tu_sh(work.buf, cmd.buf);
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
    ck_assert_msg(r.status == want_status, "%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", c,
                  r.status, want_status, r.out, r.err);
    char *diff = tu_diff_trees(want.buf, work.buf);
    ck_assert_msg(diff == NULL, "%s: the project folder after the run is not as expected:\n%s", c, diff);
    tu_run_free(&r);
    cg_strbuf_release(&work);
    cg_strbuf_release(&want);
    cg_strbuf_release(&ex);
    cg_strbuf_release(&cmd);
    tu_rm_rf(tmp);
    free(tmp);
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
