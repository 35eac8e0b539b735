/* jobs — the jobs of a tree: one per live cell and phase.
 *
 * A job exists when its phase is not skipped for the cell and it lands in at
 * least one workflow.  It lands in workflow W when the phase lists W and W
 * takes the cell: W names no tier, or the cell is in one of W's tiers, or in
 * one of W's `on_request` tiers (then the job is "gated": it runs on a pull
 * request only when the commit message asks).
 *
 * A phase does not run for a cell its `skip` matches, nor for a cell none of
 * its `only` patterns match.  `requires` names phases of the same cell or
 * outside jobs (`setup`).  A required phase that does not run for the cell
 * is transparent: its own requires are used instead.
 *
 * A phase with `per` (an aggregate) makes one job per group instead: the
 * live cells it runs for that have every `per` dimension, grouped by those
 * values.  The group's job is bound to a group cell (the `per` values, the
 * variables of the nodes every member shares) and comes right after the
 * jobs of the group's last cell.  It lands in workflow W when W takes one
 * of its cells (gated when one of those is); requiring a phase means the
 * jobs of that phase of every cell of the group.  A cell's job requiring an
 * aggregate phase requires its group's job.
 */
#ifndef CIGEN_JOBS_H
#define CIGEN_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/expand.h"
#include "lang/manifest.h"
#include "lang/tree.h"

typedef struct cg_job {
    const char *name;
    const cg_tree *tree;
    const cg_cell *cell;
    uint32_t phase;
    uint32_t index;
    const char **requires;     /* job names */
    const cg_pos **requires_pos; /* where each was asked for */
    const int32_t *requires_job; /* the generated job each names (its index), or -1 */
    const bool *requires_optional; /* written `name?`: written only when the job it names is in
                                * the written workflow; NULL when none is */
    uint32_t nrequires;
    uint64_t workflows;        /* bit w: lands in manifest workflow w */
    uint64_t gated;            /* bit w: on request in workflow w */
    uint64_t special;          /* bit w: put there by a special-PR selection */
    const cg_cell *const *members; /* a phase with `per`: the cells of the job's group
                                * (`cell` is then the group: the values of the
                                * `per` dimensions only); NULL for a cell's job */
    uint32_t nmembers;
} cg_job;

/* The requires of the job being built: each name, where it was asked for,
 * and the generated job it names (its index), or -1. */
typedef struct cg_requires_buf {
    const char **name;
    const cg_pos **pos;
    int32_t *job;
    bool *opt;
    size_t cap;
} cg_requires_buf;

/* Appends one require to j's (j->nrequires counts them in b); a name
 * outside the tree (job -1) only once (required plainly once, it is not
 * optional).  The caller keeps a generated job from coming twice (it knows
 * which it has seen cheaper than a scan). */
void cg_requires_add(cg_requires_buf *b, cg_job *j, const char *name, int32_t job, const cg_pos *pos,
                     bool optional);
/* Whether j's requirement r is optional (written `name?`). */
static inline bool cg_job_require_optional(const cg_job *j, uint32_t r)
{
    return j->requires_optional && j->requires_optional[r];
}
/* Whether phase ph runs for the bound cell (its skip and only); counts the
 * patterns' hits.  A pattern that fails records its error in the env's.
 * The full load and the walk (model/walk.c) both ask it. */
bool cg_phase_runs(const cg_phase *ph, cg_env *env);
void cg_requires_release(cg_requires_buf *b);

typedef struct cg_jobs {
    cg_job *v;
    size_t n, cap;
    cg_index by_name;          /* name -> index */
    uint64_t name_bytes;       /* of every name made so far (limits: max_name_bytes) */
} cg_jobs;

/* Builds the jobs of one tree, appending to `jobs`.  `skipped` (NULL, or
 * [nphases] zeroed) counts the live cells for which each phase does not run
 * (its `skip` or `only`). */
int cg_jobs_build(cg_jobs *jobs, const cg_tree *t, const cg_cells *cells, const cg_manifest *m,
                  cg_pool *pool, size_t *skipped, cg_error *err);
void cg_jobs_release(cg_jobs *jobs);
const cg_job *cg_jobs_find(const cg_jobs *jobs, const char *name);

/* The tree's `paths` (docs/tree-language.md, "Paths per cell"): the first
 * path glob of job j's cell (of one of its group's cells, for a job of a
 * phase with `per`) that matches changed file `file` ('*' crosses '/', as
 * the manifest's `pipeline: paths` rules), with its position in *pos; NULL
 * when none does or the cell has none.  The globs themselves:
 * cg_tree_cell_paths(cell->leaf, ...). */
const char *cg_job_paths_match(const cg_job *j, const char *file, cg_pos *pos);

/* The effective name of a static workflow entry ("setup" or
 * {setup: {name: x}}). */
const char *cg_static_entry_name(json_t *entry);

/* The job an item of a static entry's `requires` names: "a", or the key
 * of {a: failed} (a one-key mapping: the status CircleCI waits for);
 * NULL for anything else (lint reports it). */
const char *cg_requires_item_name(const json_t *item);

/* Checks `requires` against each workflow's jobs (generated and static).
 * An optional requirement (`name?`) may be absent from a workflow, but must
 * name a job of the project (cg_optional_require_check). */
int cg_jobs_check_requires(const cg_jobs *jobs, const cg_manifest *m, const cg_tree *const *trees, size_t ntrees,
                           cg_error *err);
/* An optional requirement's name (without its '?') must be a generated job,
 * a static entry of some workflow or a phase of some tree (whose jobs may
 * all be skipped); anything else is a typo: an error at pos with the
 * nearest names. */
int cg_optional_require_check(const cg_jobs *jobs, const cg_manifest *m, const cg_tree *const *trees,
                              size_t ntrees, const char *name, const cg_pos *pos, cg_error *err);

#endif
