/* special — a config for one special pull request.
 *
 * `--only PATTERN` and `--also PATTERN` (or the same in special-pr.yml)
 * select jobs (a job-name glob, or NAME=GLOB,... as in `cigen list --where`).
 * Selected jobs, and the jobs they require, are put into the per-change
 * workflow (the manifest's `per_change: true`), ungated and without branch
 * filters; with `--only` every other generated job is culled.  The header of
 * such a config says so, and `cigen check` refuses it unless
 * `--allow-special` is given (a pull request's CI may pass it; main's must
 * not).
 *
 *   # special-pr.yml: run the conda builds on this pull request (do not land)
 *   reason: test the new conda recipe
 *   only:
 *     - os=linux,package=conda
 *   also:
 *     - binary_macos_conda_3_8_cpu_build
 *   branch: try-conda          # the PR's branch: check --allow-special passes there only
 *   allow_protected: false     # true: required jobs with credentials may come along
 */
#ifndef CIGEN_SPECIAL_H
#define CIGEN_SPECIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"

typedef struct cg_special {
    char **only;          /* patterns */
    cg_pos *only_pos;     /* where each came from (file, or none for flags) */
    size_t nonly;
    char **also;
    cg_pos *also_pos;
    size_t nalso;
    char *source;         /* "the command line", "special-pr.yml", "the header of config.yml" */
    char *overlay;        /* the overlay file the patterns were read from; NULL for flags */
    char *reason;         /* the overlay's 'reason', or NULL */
    char *branch;         /* the pull request's branch it is for ('branch:', --pr-branch), or NULL */
    bool allow_protected; /* may pull protected jobs in ('allow_protected: true', --allow-protected) */
    /* cigen select's own picks (model/pick.h): exact names of entries
     * that run where they are, filters kept, in each workflow where `runs`
     * says CircleCI would run them; everything not picked is culled */
    char **stay;
    size_t nstay;
    bool (*runs)(const void *ctx, const char *workflow, const char *entry);
    const void *runs_ctx;
} cg_special;

void cg_special_init(cg_special *s);
void cg_special_release(cg_special *s);
bool cg_special_empty(const cg_special *s);
void cg_special_add(cg_special *s, bool only, const char *pattern, const cg_pos *pos);
/* An entry cigen select picked by its rules (job=NAME): runs in place. */
void cg_special_add_stay(cg_special *s, const char *pattern);

/* Reads an overlay file's text (YAML).  Returns -1 with an error. */
int cg_special_parse(cg_special *s, const char *file, const char *text, size_t len, cg_error *err);

/* "--only 'os=linux' --also 'x'" (then --allow-protected, --pr-branch 'b'):
 * shell-quoted, copy-paste ready. */
void cg_special_args(const cg_special *s, cg_strbuf *out);
/* The header lines of a special config (the reason, the patterns and the
 * overlay file they came from), and reading them back. */
void cg_special_header(const cg_special *s, cg_strbuf *out);
/* Finds the special line in a config's header; returns false when absent.
 * s->overlay is the overlay file the header names, if any. */
bool cg_special_from_header(cg_special *s, const char *text, size_t len);

#endif
