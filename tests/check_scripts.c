/* The CI shell scripts: each case of tests/scripts/run-tests.sh is a check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"

static int count_cases(void)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "bash '%s/tests/scripts/run-tests.sh' --count", tu_srcdir());
    FILE *p = popen(cmd.buf, "r");
    cg_strbuf_release(&cmd);
    int n = 0;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

START_TEST(script_case)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "bash '%s/tests/scripts/run-tests.sh' --case %d", tu_srcdir(), _i);
    /* run directly, not through $CIGEN: these test shell scripts */
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "script case %d failed:\n%s%s", _i, r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
}
END_TEST

/* Lines of FILE (under tests/scripts/) that start with `prefix`, or, with
 * prefix NULL, that are neither blank nor a comment. */
static size_t count_lines(const char *file, const char *prefix)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/tests/scripts/%s", tu_srcdir(), file);
    char *text = tu_read(p.buf, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", p.buf);
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (prefix ? strncmp(line, prefix, strlen(prefix)) == 0 : line[strspn(line, " \t")] && line[0] != '#')
            n++;
    }
    free(text);
    cg_strbuf_release(&p);
    return n;
}

/* Occurrences of the line `name` in the newline-separated list `names`. */
static size_t count_name(const char *names, const char *name)
{
    size_t n = 0, len = strlen(name);
    for (const char *p = names; (p = strstr(p, name)) != NULL; p += len)
        if ((p == names || p[-1] == '\n') && p[len] == '\n')
            n++;
    return n;
}

/* The runner's case list (--list) holds --count cases: every case of the
 * two .cases files, a shellcheck and a strict-mode case for every
 * scripts/NAME.sh; --name refuses a case past the count. */
START_TEST(script_cases_exist)
{
    int count = count_cases();
    ck_assert_msg(count > 0, "tests/scripts/run-tests.sh --count gave no cases");
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "bash '%s/tests/scripts/run-tests.sh' --list && ! bash '%s/tests/scripts/run-tests.sh' --name %d 2>/dev/null",
                   tu_srcdir(), tu_srcdir(), count);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "listing the case names failed:\n%s%s", r.out, r.err);
    size_t populate = 0, should_run = 0, lines = 0;
    for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
        lines++;
        populate += strncmp(p, "populate_env: ", 14) == 0;
        should_run += strncmp(p, "should_run_job: ", 16) == 0;
        if (!p[strcspn(p, "\n")])
            break;
    }
    ck_assert_uint_eq(lines, (size_t)count);
    ck_assert_uint_eq(populate, count_lines("populate_env.cases", "== "));
    ck_assert_uint_eq(should_run, count_lines("should_run_job.cases", NULL));
    cg_strbuf dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/scripts", tu_srcdir());
    size_t n;
    char **scripts = tu_list_dir(dir.buf, &n);
    size_t sh = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(scripts[i]);
        if (len < 3 || strcmp(scripts[i] + len - 3, ".sh") != 0)
            continue;
        sh++;
        cg_strbuf want = CG_STRBUF_INIT;
        cg_strbuf_addf(&want, "shellcheck -x scripts/%s", scripts[i]);
        ck_assert_msg(count_name(r.out, want.buf) == 1, "no case '%s'", want.buf);
        cg_strbuf_reset(&want);
        cg_strbuf_addf(&want, "strict mode and header: scripts/%s", scripts[i]);
        ck_assert_msg(count_name(r.out, want.buf) == 1, "no case '%s'", want.buf);
        cg_strbuf_release(&want);
    }
    ck_assert_msg(sh > 0, "no scripts/*.sh found");
    tu_free_list(scripts, n);
    cg_strbuf_release(&dir);
    cg_strbuf_release(&cmd);
    tu_run_free(&r);
}
END_TEST

Suite *make_scripts_suite(void)
{
    Suite *s = suite_create("scripts");
    TCase *tc = tcase_create("cases");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, script_cases_exist);
    tcase_add_loop_test(tc, script_case, 0, count_cases());
    suite_add_tcase(s, tc);
    return s;
}
