/* pick — `cigen select`'s rules: which jobs a pipeline runs, decided when
 * it starts (CircleCI dynamic configuration).  Its rules only narrow what
 * CircleCI itself would run on the full config for this pipeline, which the
 * caller simulates (audit/simulate.h) and hands in as `runs`:
 *
 *   a scheduled pipeline (input.schedule names a scheduled workflow)
 *       that workflow, every job of it CircleCI runs, without its cron
 *       trigger (the scheduled pipeline is the trigger)
 *   a push of a tag
 *       every job whose filters let the tag through (and what it requires)
 *   a push to a branch matching `run_all` (main)
 *       every job CircleCI runs there
 *   a push to any other branch (a pull request), in every push workflow:
 *       the union of
 *         - the default jobs (not on request), unless the list of changed
 *           files is known and every file in it matches a path rule (a known
 *           empty list matches nothing: no default jobs)
 *         - what the path rules of the changed files select (`all`, `none`,
 *           or patterns)
 *         - `[ci all]`: every job; `[WORD ci]`: the on-request jobs with WORD
 *           as their name or one of its '_'-separated parts (any case)
 *
 * What is picked runs where it is, filters kept: CircleCI applies them again
 * to the continuation.  A special PR — `[ci only: P]` / `[ci also: P]` in the
 * commit message, or --only/--also/special-pr.yml as in classic mode — goes
 * through the special-PR selection (model/cull.h): the named jobs and what
 * they require run in the per-change workflow with their branch filters
 * lifted, never a job with credentials pulled in by a requirement; `only`
 * runs exactly those (and the `keep` entries).
 *
 * Each parameter given must be declared by a fragment's top-level
 * `parameters:` and fit its type.
 */
#ifndef CIGEN_PICK_H
#define CIGEN_PICK_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

typedef struct cg_pick_input {
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
    /* whether CircleCI runs entry `entry` of workflow `workflow` on this
     * pipeline, read off the full config (NULL: every entry may run) */
    bool (*runs)(const void *ctx, const char *workflow, const char *entry);
    const void *runs_ctx;
} cg_pick_input;

/* Why a job or static entry is in or out of the pipeline. */
typedef struct cg_pick_why {
    const char *name;        /* a static entry's name (NULL for a generated job) */
    bool in;
    const char *why;
} cg_pick_why;

typedef struct cg_pick_run {
    int workflow;            /* the first workflow written, or -1: nothing runs */
    const char *what;        /* the pipeline in words ("a push to 'my-pr'") */
    const char **notes;      /* what the inputs meant ("[conda ci]: 12 jobs") */
    size_t nnotes, notes_cap;
    const char **job_why;    /* [jobs.n]: the rule that chose the job, or why it is out */
    bool *job_in;            /* [jobs.n]: chosen by a rule (before requirements) */
    cg_pick_why *statics; /* [nstatics]: m->statics as the manifest lists them */
    size_t nstatics;
    json_t *parameters;      /* the parameters given, typed (owned; cg_model_release frees it) */
} cg_pick_run;

/* Decides the pipeline's jobs (m->opt.pipeline) and applies them to the
 * model: called by cg_model_load in place of the special-PR selection. */
int cg_pick_jobs(cg_model *m, cg_error *err);

/* The commit message's tokens: each `[ci only: P]` and `[ci also: P]`
 * pattern (into only/also, NULL to skip), whether `[ci all]` is there, and
 * each `[WORD ci]` word, lower-cased.
 * Arrays are malloc'd, strings too; cg_pick_tokens_free releases them. */
typedef struct cg_pick_tokens {
    char **only, **also, **words;
    size_t nonly, nalso, nwords;
    bool all;
} cg_pick_tokens;
void cg_pick_tokens_parse(const char *message, cg_pick_tokens *t);
void cg_pick_tokens_free(cg_pick_tokens *t);

#endif
