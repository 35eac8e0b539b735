/* simulate — which workflow entries CircleCI runs for one pipeline.
 *
 * A simulation of CircleCI's rules on a written config (docs/pipeline.md
 * cites the CircleCI documentation for each):
 *   - the pipeline is a push to a branch, a push of a tag, or a scheduled
 *     run (cg_sim_input.schedule): a workflow with `triggers:` runs only
 *     when its schedule fires (schedule names it), on a branch its schedule's
 *     filters let through, and then no other workflow runs; a schedule that
 *     names no such workflow is a scheduled pipeline of that name, which
 *     runs every workflow without `triggers:` whose `when` allows it;
 *   - a workflow's `when:`/`unless:` is evaluated on the pipeline's values
 *     (model/condition.h: the parameters given, else their defaults; the
 *     branch, the tag, the schedule's name); what is not known when the
 *     pipeline starts leaves the workflow not simulated;
 *   - on a branch, a job runs when its `filters: branches:` let the branch
 *     through: `only` (a name, a /regex/ matching the whole name, or a list
 *     of them) must match when given, then `ignore` must not; `tags:`
 *     filters do not count;
 *   - on a tag, a job runs only when its `filters: tags:` let the tag
 *     through (no `tags:` filter: it does not run), `only` before `ignore`;
 *     `branches:` filters do not count;
 *   - a job whose required job does not run, does not run either (so on a
 *     tag every job a tag-filtered job requires needs a tag filter too).
 */
#ifndef CIGEN_SIMULATE_H
#define CIGEN_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"

enum { CG_RUNS, CG_SKIPPED, CG_UNKNOWN };

typedef struct cg_sim_entry {
    char *workflow;
    char *job;
    int state;           /* CG_RUNS, CG_SKIPPED, CG_UNKNOWN */
    char *why;           /* why not (NULL when it runs) */
    bool context;        /* the entry has a `context:` (credentials) */
} cg_sim_entry;

typedef struct cg_sim_result {
    cg_sim_entry *v;
    size_t n, cap;
} cg_sim_result;

/* One pipeline, as CircleCI starts it. */
typedef struct cg_sim_input {
    const char *branch;        /* the branch (NULL or "": none) */
    const char *tag;           /* a push of this tag (NULL or "": none) */
    const char *schedule;      /* a scheduled run: a workflow's trigger, or a
                                * scheduled pipeline's name (NULL or "": none) */
    const char **param_names;  /* pipeline parameters given, as text; typed by */
    const char **param_values; /* the config's top-level `parameters:` */
    size_t nparams;
} cg_sim_input;

/* Simulates the pipeline on the config's text; only workflow `workflow`
 * when not NULL (an unknown one is an error), as is a parameter the config
 * does not declare or a value that does not fit its type. */
int cg_sim_run(const char *file, const char *text, size_t len, const cg_sim_input *in,
                         const char *workflow, cg_sim_result *out, cg_error *err);
/* A push to `branch`. */
int cg_sim_branch(const char *file, const char *text, size_t len, const char *branch, const char *workflow,
                       cg_sim_result *out, cg_error *err);
/* The pipeline in words: "a push to 'x'", "a push of tag 'v1'", ... */
void cg_sim_describe(const cg_sim_input *in, cg_strbuf *out);
void cg_sim_result_release(cg_sim_result *r);

#endif
