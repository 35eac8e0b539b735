/* cull — the special-PR selection (model/special.h) applied to the model's jobs.
 *
 * The selection in force comes, in this order, from the --only/--also
 * flags, the overlay file (--overlay, else special-pr.yml when it exists)
 * or the fallback (check --allow-special: the committed config's header).
 * Its patterns are matched (model/query.h) against every job; the selected
 * jobs and what they require go into the per-change workflow, ungated and
 * with branch filters lifted; with --only every other generated job is
 * culled.  cigen select's picks (cg_special.stay) run where they are,
 * filters kept, in the workflows its simulation of CircleCI runs them.
 * The parsing of patterns and overlay files is model/special.h.
 */
#ifndef CIGEN_CULL_H
#define CIGEN_CULL_H

#include "model/model.h"

/* Reads the selection in force into m->selection and applies it. */
int cg_cull_apply(cg_model *m, cg_error *err);
/* Reads the selection in force (flags, overlay) into m->selection only. */
int cg_cull_load(cg_model *m, cg_error *err);
/* Gathers every workflow's static entries into m->statics (once). */
void cg_cull_collect_statics(cg_model *m);
/* Applies m->selection as it is (model/pick.c fills it itself); with an
 * empty one, only gathers the static entries. */
int cg_cull_apply_loaded(cg_model *m, cg_error *err);

#endif
