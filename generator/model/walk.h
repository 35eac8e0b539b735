/* walk — a model's cells and jobs one at a time, none kept.
 *
 * For the commands that read a few cells or jobs of a large matrix, or what
 * each says of it (`coverage`: the pairs of each tier; `explain JOB`: one
 * job, else a skipped job or the nearest name; `explain --cell`: the
 * matching cells) and not all of them at once: cg_model_load with cg_options.walker set loads the sources as ever,
 * then expands each tree and makes its jobs one cell at a time
 * (cg_expand_each), hands each cell and job to the walker and forgets it.
 * Everything the whole load checks is checked on the way (filters, tiers,
 * job names, requires, templates), and the warnings come out the same, in
 * the same order.
 *
 * The load then returns 0 only when the walk saw exactly the cells and jobs
 * the whole load would have made, and nothing was wrong.  Otherwise it
 * returns -1, with an error or not: the caller drops the model and loads the
 * whole of it afresh (cg_options.walker NULL), which says what is wrong.  A
 * project the walk cannot follow cell by cell gives -1 at once: a pairwise
 * tier (its cells are chosen over all cells), a phase with `per` (groups
 * span cells), an optional requirement (`name?`, of a phase or a static
 * entry), a workflow with an `order` list, a special-PR selection,
 * more than 64 workflows; later, a job requiring an outside name that no
 * static entry of its workflows has (it may be a generated job of another
 * cell), and a job name used twice.  To find one, the walk keeps a 46-bit
 * fingerprint of each job name (4.25 bytes a job, in a cg_fpset: nothing
 * else is kept per job); where two names share one, a second walk makes the
 * names again and compares those that have it (more than 64 such
 * fingerprints: -1).
 *
 * The state of a walk (struct cg_walk) lives in cg_model.walk; the three
 * entry points are cg_model_load's (model/load.c).
 */
#ifndef CIGEN_WALK_H
#define CIGEN_WALK_H

#include "model/model.h"

typedef struct cg_walker {
    /* before the cells of tree t (may be NULL) */
    void (*tree)(void *ctx, const cg_tree *t);
    /* every cell of a tree, live or removed, in order, with every tier it is
     * in; env is bound to it (no built-in but tree set).  May be NULL. */
    int (*cell)(void *ctx, const cg_tree *t, const cg_cell *cell, cg_env *env);
    /* every job, in the order of the jobs of the whole load, with its
     * workflows and requires, once its templates are loaded (for
     * cg_model_template).  May be NULL. */
    int (*job)(void *ctx, const cg_job *j);
    void *ctx;
} cg_walker;

int cg_walk_begin(cg_model *m, cg_error *err);
int cg_walk_tree(cg_model *m, cg_tree *t, cg_error *err);
int cg_walk_finish(cg_model *m, cg_error *err);
void cg_walk_free(struct cg_walk *w);

#endif
