/* select — the special-PR selection applied to the model's jobs.
 *
 * The selection in force comes, in this order, from the --only/--also
 * flags, the overlay file (--overlay, else special-pr.yml when it exists)
 * or the fallback (check --allow-special: the committed config's header).
 * Its patterns are matched (model/query.h) against every job; the selected
 * jobs and what they require go into the per-change workflow, ungated and
 * with branch filters lifted; with --only every other generated job is
 * culled.  The parsing of patterns and overlay files is model/special.h.
 */
#ifndef CIGEN_SELECT_H
#define CIGEN_SELECT_H

#include "model/model.h"

/* Reads the selection in force into m->selection and applies it. */
int cg_model_select(cg_model *m, cg_error *err);
/* Applies m->selection as it is (model/pipeline.c fills it itself); with an
 * empty one, only gathers the static entries. */
int cg_model_apply_selection(cg_model *m, cg_error *err);

#endif
