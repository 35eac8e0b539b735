/* pairwise — all-pairs selection of cells, and its coverage proof.
 *
 * A pair is two values of two dimensions (os=macos with python=3.8). It is
 * reachable when some live cell has both. A set of cells covers a pair when
 * one of its cells has both. Selection is greedy: pinned cells first, then
 * the cells kept from the previous selection (the committed config's), then
 * repeatedly the cell that covers the most uncovered pairs per unit of cost
 * (ties go to the earlier cell), until every reachable pair is covered;
 * redundant cells are dropped afterwards, new ones before kept ones.  The
 * result depends on nothing but the tree and the previous selection, and a
 * result given back as the previous selection is chosen again unchanged.
 */
#ifndef CIGEN_PAIRWISE_H
#define CIGEN_PAIRWISE_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/tree.h"
#include "model/cell.h"

typedef struct cg_pair {
    int d1, d2;              /* dimension ids, d1 < d2 */
    const char *v1, *v2;     /* interned values */
} cg_pair;

typedef struct cg_coverage {
    size_t reachable;
    size_t covered;
    cg_pair *missing;        /* reachable pairs no selected cell has */
    size_t nmissing;
    cg_pair *pairs;          /* the covered pairs, in the order of the dimensions and values */
    size_t *by;              /* [covered]: the first selected cell that has pairs[i] */
} cg_coverage;

/* Selects cells for a pairwise tier. `pinned` marks cells that must be in;
 * `prev` (NULL: none) the cells of the previous selection, kept unless the
 * others cover their pairs; `cost` gives each cell's cost (NULL: all 1).
 * `selected` receives the choice (live cells only).  The arrays are the
 * caller's, one entry per cell. */
void cg_pairwise_select(const cg_tree *t, const cg_cells *cells, const int *dims, size_t ndims,
                        const bool *pinned, const bool *prev, const double *cost, bool *selected);

/* Which reachable pairs over `dims` the selected cells cover; cov owns its
 * `missing` array (values borrowed from the cells), freed by
 * cg_coverage_release. */
void cg_coverage_compute(const cg_tree *t, const cg_cells *cells, const int *dims, size_t ndims,
                         const bool *selected, cg_coverage *cov);
void cg_coverage_release(cg_coverage *cov);

#endif
