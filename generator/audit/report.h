/* report — what changed between two versions of config.yml, as jobs.
 *
 * One concern in four files, by role, each calling only those before it:
 * report_read.c (a config's text as jobs), report_group.c (the groups),
 * report_compare.c (the comparison, then the grouping), report_print.c
 * (the text and the JSON).
 *
 * Both texts are read as CircleCI configs: every workflow entry is a job
 * (its effective name, the job it invokes, its arguments, its workflows);
 * `jobs:`, `commands:` and `executors:` entries are definitions.  The report
 * lists jobs added, removed and changed (field by field), and groups them by
 * the dimension value that explains them when one does ("+12 jobs:
 * python=3.8"), using the current model for the jobs it knows.
 */
#ifndef CIGEN_REPORT_H
#define CIGEN_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diff.h"
#include "model/model.h"

typedef struct cg_field_change {
    char *field;        /* "docker_image", "workflows", "job" */
    char *before;       /* NULL: not there before */
    char *after;        /* NULL: not there now */
} cg_field_change;

typedef struct cg_job_change {
    char *name;
    cg_field_change *v;
    size_t n;
} cg_job_change;

typedef struct cg_group {
    char kind;          /* '+', '-' or '~' */
    char *label;        /* "python=3.8", or for '~' the change itself */
    char *why;          /* the explaining value of a '~' group, or NULL */
    char **jobs;
    size_t n;
} cg_group;

typedef struct cg_matrix {
    bool valid;         /* both texts could be read */
    char *problem;      /* why not */
    char **added, **removed;
    size_t nadded, nremoved;
    cg_job_change *changed;
    size_t nchanged;
    char **definitions; /* "jobs.binary_linux_build" */
    size_t ndefinitions;
    cg_group *groups;
    size_t ngroups;
} cg_matrix;

/* Compares the committed text with the generated one; `p` (the current
 * model, may be NULL) explains the groups.  Reads them sliced when it can
 * (cg_matrix_compare_sliced), else whole. */
void cg_matrix_compare(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                       const cg_model *p, cg_matrix *m);
/* The two readings, for the tests that hold them to the same result.
 * Whole: both texts read as YAML documents (jansson values), each job's
 * entries compared as values.  Sliced: the texts cut into their top-level
 * keys, workflows and entries, compared as text, only the entries that
 * differ read as YAML; false (nothing set) when a text is not laid out so
 * that slicing reads it as a parser would. */
void cg_matrix_compare_whole(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                             const cg_model *p, cg_matrix *m);
bool cg_matrix_compare_sliced(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                              const cg_model *p, cg_matrix *m);
void cg_matrix_release(cg_matrix *m);
/* How the jobs changed, as generate ("written (+2 jobs, 1 changed)") and
 * check ("jobs: -1 job") print it, only the parts that are not zero: "+3
 * jobs, -1 job, 5 changed", "2 changed", "1 definition changed"
 * (definitions only when no job changed), or "no job added, removed or
 * changed". */
void cg_matrix_summary(const cg_matrix *m, cg_strbuf *out);
/* The readable report (indented lines), in at most max_lines lines (0: no
 * limit but CG_REPORT_MAX_GROUPS) when it has any group to leave out. */
void cg_matrix_print(const cg_matrix *m, size_t max_lines, cg_strbuf *out);
/* Its lines after the summary: the jobs by group, named. */
void cg_matrix_print_groups(const cg_matrix *m, size_t max_lines, cg_strbuf *out);
/* The text report names at most this many groups (and definitions), then
 * says how many more there are; each line is escaped (cg_escape_line) and
 * cut at CG_DIFF_MAX_WIDTH bytes. */
#define CG_REPORT_MAX_GROUPS ((size_t)50)
json_t *cg_matrix_json(const cg_matrix *m);

#endif
