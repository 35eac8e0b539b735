/* The test runner: every suite, one summary line at the end. */
#include <stdlib.h>

#include "testutil.h"

int main(void)
{
    SRunner *sr = srunner_create(make_yamlload_suite());
    srunner_add_suite(sr, make_yamlwrite_suite());
    srunner_add_suite(sr, make_placeholder_suite());
    srunner_add_suite(sr, make_diff_suite());
    srunner_add_suite(sr, make_report_suite());
    srunner_add_suite(sr, make_digest_suite());
    srunner_add_suite(sr, make_util_suite());
    srunner_add_suite(sr, make_ref_regex_suite());
    srunner_add_suite(sr, make_regex_java_suite());
    srunner_add_suite(sr, make_cli_suite());
    srunner_add_suite(sr, make_dot_suite());
    srunner_add_suite(sr, make_golden_suite());
    srunner_add_suite(sr, make_default_suite());
    srunner_add_suite(sr, make_import_suite());
    srunner_add_suite(sr, make_pipeline_suite());
    srunner_add_suite(sr, make_merge_suite());
    srunner_add_suite(sr, make_scripts_suite());
    srunner_add_suite(sr, make_robust_suite());
    srunner_add_suite(sr, make_layers_suite());
    srunner_add_suite(sr, make_snake_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
