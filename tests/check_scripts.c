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

START_TEST(script_cases_exist)
{
    ck_assert_msg(count_cases() >= 40, "tests/scripts/run-tests.sh --count gave too few cases");
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
