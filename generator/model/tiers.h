/* tiers — which of a tree's tiers each live cell belongs to.
 *
 * A tree declares up to 64 tiers at its top level: `all` (every live cell),
 * a list of cell patterns, or `pairwise` (the cells model/pairwise.h selects
 * to cover every pair of values of its dimensions, with pinned cells and
 * costs).  Bit i of cg_cell.tiers is tier i.
 */
#ifndef CIGEN_TIERS_H
#define CIGEN_TIERS_H

#include "base/diag.h"
#include "lang/tree.h"
#include "model/cell.h"
#include "model/env.h"

/* Sets the tier bits of every live cell of `cells` (expanded from t), using
 * env (the caller's, for t) to match patterns; counts the patterns' hits in
 * t.  A tier pattern no live cell matches is an error: -1. */
int cg_tiers_assign(cg_tree *t, cg_cells *cells, cg_env *env, cg_error *err);

#endif
