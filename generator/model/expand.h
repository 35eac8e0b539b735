/* expand — a tree's cells.
 *
 * Expansion walks the tree depth-first in document order.  On each node the
 * listed dimensions multiply in dimension order (a zip is one factor, placed
 * at its first dimension); a node without children is where cells are made.
 * Every combination becomes a cell, live or removed: removed cells are kept,
 * with the filter that removed them, for `explain` and the diagrams.
 *
 * Filters: an `exclude` removes the cells it matches; an `only` (a list of
 * alternatives) removes the cells that match none of its patterns.  Both apply
 * to the cells of the node that declares them (the whole tree at the top
 * level); cells under `extra` are exempt.
 * The variables of a cell are model/env.h's; tier membership is
 * model/tiers.h's, assigned by cg_expand().
 */
#ifndef CIGEN_EXPAND_H
#define CIGEN_EXPAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/util.h"
#include "lang/tree.h"
#include "model/cell.h"
#include "model/env.h"
#include "model/tiers.h"

/* Expands the tree into cells (appended to out, which the caller owns and
 * releases with cg_cells_release; each cell's arrays are allocated in
 * `pool`), with their tiers (pairwise ones starting from `prev`, what
 * changed appended to `changes`; both may be NULL); reports patterns that match nothing as warnings
 * (errors when `strict`).  A tree that would make more than max_cells cells
 * fails before any is made.  Counts pattern hits in the tree (t is
 * written). */
int cg_expand(cg_tree *t, cg_pool *pool, cg_cells *out, long max_cells, bool strict, const cg_tier_prev *prev,
              cg_tier_changes *changes, cg_warnings *warn,
              cg_error *err);
/* What cg_expand_each hands on: one cell, live or removed (filters applied,
 * the tiers of the nodes above it; not yet those cg_tiers_assign gives), and
 * the env bound to it.  Both are valid only during the call: the cell's
 * arrays are the walk's and change with the next cell.  Non-zero stops the
 * walk (cg_expand_each then returns -1). */
typedef int (*cg_cell_fn)(void *ctx, cg_cell *cell, cg_env *env);

/* Expands the tree as cg_expand() does, in the same order, without keeping
 * the cells: each goes to fn and is gone.  Counts pattern hits and reports
 * patterns that match nothing and a tree whose cells are all removed as
 * cg_expand() does; assigns no tiers (the caller does, for the tier kinds it
 * can: cg_tiers_assign needs every cell). */
int cg_expand_each(cg_tree *t, long max_cells, bool strict, cg_cell_fn fn, void *ctx, cg_warnings *warn,
                   cg_error *err);
/* Checks before expanding: t makes at most max_cells cells, its glob
 * filters are tried at most max_filter_tests times, each pairwise tier
 * weighs at most max_pair_tests (cell, pair of dimensions), and its jobs
 * (cells x phases) added to *jobs (those of the trees before it) are at
 * most max_jobs; adds them to *jobs, or returns -1 after an error at the
 * tree, pattern or tier. */
int cg_expand_bound(const cg_tree *t, long max_cells, long max_jobs, long max_filter_tests, long max_pair_tests,
                    uint64_t *jobs, cg_error *err);

#endif
