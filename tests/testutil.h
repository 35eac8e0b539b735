/* testutil — helpers for the check suites: files, folders, running cigen. */
#ifndef CIGEN_TESTUTIL_H
#define CIGEN_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* The source tree (CIGEN_SRCDIR) and the binary under test (CIGEN). */
const char *tu_srcdir(void);
const char *tu_cigen(void);

/* Reads a whole file; NULL when missing. */
char *tu_read(const char *path, size_t *len);
bool tu_exists(const char *path);
void tu_write(const char *path, const char *data, size_t len);
void tu_writes(const char *path, const char *text);
/* A fresh temporary folder (free() the result, tu_rm_rf it). */
char *tu_mkdtemp(void);
void tu_rm_rf(const char *path);
void tu_copy_tree(const char *from, const char *to);
/* The sorted list of entries of a folder (names only; free with tu_free_list). */
char **tu_list_dir(const char *dir, size_t *n);
void tu_free_list(char **v, size_t n);
/* Copies the tree `from` over the folder `to`: folders present in both are
 * merged, every other entry of `from` replaces the one of `to`. */
void tu_overlay_tree(const char *from, const char *to);
/* The project of case folder `case_dir` (tests/golden/NAME, tests/bad/NAME),
 * made at `to`: the base project named by its file `base` (tests/bases/NAME,
 * minus the paths of its `without PATH` lines), then its in/ over it. */
void tu_case_input(const char *case_dir, const char *to);
/* Compares two folder trees; returns NULL when equal, else a message. */
char *tu_diff_trees(const char *expected, const char *actual);

typedef struct tu_run {
    int status;         /* exit status, or 128+signal */
    char *out, *err;    /* captured output */
    size_t out_len, err_len;
} tu_run;

/* Runs `/bin/sh -c "<cmd>"` with the binary under test available as
 * $CIGEN (wrapped by $CIGEN_WRAPPER when set), in folder `cwd`. */
tu_run tu_sh(const char *cwd, const char *cmd);
void tu_run_free(tu_run *r);
/* A fresh temporary folder holding p/, the project of
 * tests/big-project.sh: 18,000 jobs, a config.yml of about 4 MB (free()
 * the result, tu_rm_rf it). */
char *tu_big_project(void);

/* Suites */
Suite *make_yamlload_suite(void);
Suite *make_yamlwrite_suite(void);
Suite *make_placeholder_suite(void);
Suite *make_diff_suite(void);
Suite *make_report_suite(void);
Suite *make_digest_suite(void);
Suite *make_util_suite(void);
Suite *make_dot_suite(void);
Suite *make_golden_suite(void);
Suite *make_scripts_suite(void);
Suite *make_cli_suite(void);
Suite *make_default_suite(void);
Suite *make_import_suite(void);
Suite *make_pipeline_suite(void);
Suite *make_merge_suite(void);
Suite *make_robust_suite(void);
Suite *make_layers_suite(void);
Suite *make_ref_regex_suite(void);
Suite *make_snake_suite(void);
Suite *make_regex_java_suite(void);

#endif
