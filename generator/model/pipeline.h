/* pipeline — which jobs a pipeline runs, decided when it starts (CircleCI
 * dynamic configuration; `cigen select`).
 *
 * From what the pipeline knows (cg_pipeline_input) and the manifest's
 * `pipeline:` rules (lang/dynamic.h):
 *
 *   a scheduled pipeline (input.schedule names a workflow)
 *       runs that workflow whole, every job of its tier, gated ones too,
 *       without its schedule trigger or branch filter (the schedule is the
 *       trigger); no other workflow
 *   a push to a branch matching `run_all` (main)
 *       every job of the per-change workflow
 *   a push to any other branch (a pull request), into the per-change workflow:
 *       `[ci only: PATTERN]` in the commit message: exactly the matching jobs
 *       (the special PR, with nothing committed); else the union of
 *         - the default jobs (not on request), unless every changed file
 *           matches a path rule
 *         - what the path rules of the changed files select (`all`, `none`,
 *           or patterns)
 *         - `[ci all]`: every job; `[WORD ci]`: the on-request jobs with WORD
 *           as their name or one of its '_'-separated parts (any case);
 *           `[ci also: PATTERN]`: the matching jobs
 *   a tag: the per-change workflow whole when it has a `tags` filter, else
 *       nothing
 *
 * The workflow's `when` is evaluated on the pipeline's values
 * (model/condition.h: the parameters given, else their defaults; the
 * schedule's name, branch and tag): false, nothing runs; what cannot be
 * known when the pipeline starts is left to CircleCI, which evaluates the
 * same statement in the continuation config.  Each parameter given must be
 * declared by a fragment's top-level `parameters:` and fit its type.
 *
 * A commit message only picks among the jobs of the per-change workflow: it
 * can never start an upload or a scheduled workflow's job.  The chosen jobs
 * go through the special-PR selection (model/select.h): what they require
 * comes along (never a job with credentials: an error), the `keep` entries
 * stay, every other job and workflow is culled, filters are lifted.
 */
#ifndef CIGEN_PIPELINE_H
#define CIGEN_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

typedef struct cg_pipeline_input {
    const char *branch;      /* NULL or "": none */
    const char *tag;         /* NULL or "": none */
    const char *message;     /* the commit message; NULL: none */
    const char **changed;    /* changed files, from the repository's root */
    size_t nchanged;
    bool changed_known;      /* false: the list is unknown (run the defaults) */
    const char *schedule;    /* a scheduled pipeline: the workflow it runs; NULL or "": none */
    const char **param_names;  /* pipeline parameters given (NAME=VALUE split), as text */
    const char **param_values;
    size_t nparams;
} cg_pipeline_input;

/* Why a job or static entry is in or out of the pipeline. */
typedef struct cg_pipeline_why {
    const char *name;        /* a static entry's name (NULL for a generated job) */
    bool in;
    const char *why;
} cg_pipeline_why;

typedef struct cg_pipeline_run {
    int workflow;            /* the one workflow written, or -1: nothing runs */
    const char *what;        /* the pipeline in words ("a push to 'my-pr'") */
    const char **notes;      /* what the inputs meant ("[conda ci]: 12 jobs") */
    size_t nnotes, notes_cap;
    const char **job_why;    /* [jobs.n]: the rule that chose the job, or why it is out */
    bool *job_in;            /* [jobs.n]: chosen by a rule (before requirements) */
    cg_pipeline_why *statics; /* the static entries of the workflow run */
    size_t nstatics;
    json_t *parameters;      /* the parameters given, typed (owned; cg_model_release frees it) */
} cg_pipeline_run;

/* Decides the pipeline's jobs (m->opt.pipeline) and applies them to the
 * model: called by cg_model_load in place of the special-PR selection. */
int cg_pipeline_select(cg_model *m, cg_error *err);

/* The commit message's tokens: each `[ci only: P]` and `[ci also: P]`
 * pattern (into only/also, NULL to skip), whether `[ci all]` is there, and
 * each `[WORD ci]` word, lower-cased.
 * Arrays are malloc'd, strings too; cg_pipeline_tokens_free releases them. */
typedef struct cg_pipeline_tokens {
    char **only, **also, **words;
    size_t nonly, nalso, nwords;
    bool all;
} cg_pipeline_tokens;
void cg_pipeline_tokens_parse(const char *message, cg_pipeline_tokens *t);
void cg_pipeline_tokens_free(cg_pipeline_tokens *t);

#endif
