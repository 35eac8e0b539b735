/* branches — what CircleCI would run on a push to one branch.
 *
 * A simulation of CircleCI's branch filtering on a written config:
 *   - a workflow with `triggers:` (a schedule) does not run on a push;
 *   - a workflow's `when:`/`unless:` is evaluated on the branch and the
 *     pipeline parameters' defaults (model/condition.h); one that needs
 *     other pipeline values is reported as not simulated;
 *   - a job runs when its `filters: branches:` let the branch through:
 *     `only` (a name, a /regex/ matching the whole name, or a list of them)
 *     must match when given, then `ignore` must not; a job with `tags:`
 *     filters alone still runs on branches; a /regex/ cigen cannot
 *     evaluate (lang/ref_regex.h) leaves the job not simulated;
 *   - a job whose required job does not run, does not run either.
 */
#ifndef CIGEN_BRANCHES_H
#define CIGEN_BRANCHES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"

enum { CG_RUNS, CG_SKIPPED, CG_UNKNOWN };

typedef struct cg_branch_job {
    char *workflow;
    char *job;
    int state;           /* CG_RUNS, CG_SKIPPED, CG_UNKNOWN */
    char *why;           /* why not (NULL when it runs) */
} cg_branch_job;

typedef struct cg_branch_run {
    cg_branch_job *v;
    size_t n, cap;
} cg_branch_run;

/* Simulates a push of `branch` on the config's text; only workflow
 * `workflow` when not NULL (an unknown one is an error). */
int cg_branch_simulate(const char *file, const char *text, size_t len, const char *branch, const char *workflow,
                       cg_branch_run *out, cg_error *err);
void cg_branch_run_release(cg_branch_run *r);

#endif
