/* cell — one combination of a tree's dimension values, as expansion made
 * it (model/expand.h), live or removed by a filter.
 *
 * A cell borrows everything it points to: the values and zipped variables
 * live in the pool given to cg_expand(), the leaf, patterns and nodes in the
 * tree.  A cg_cells owns only its array, freed by cg_cells_release().
 */
#ifndef CIGEN_CELL_H
#define CIGEN_CELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "lang/tree.h"

enum cg_cell_status { CG_CELL_LIVE, CG_CELL_EXCLUDED, CG_CELL_NOT_ONLY };

typedef struct cg_cell {
    uint32_t index;              /* in the tree's cell list */
    uint8_t status;              /* cg_cell_status */
    bool extra;                  /* from `extra`: exempt from filters */
    bool group;                  /* a group's cell (a phase with `per`, model/jobs.h):
                                  * a variable using a name it lacks is unset */
    const cg_tnode *leaf;
    const char **values;         /* [ndims]; NULL where a dimension is absent */
    const cg_vardecl **zvars;    /* variables set by zips on the path */
    uint32_t nzvars;
    const cg_pattern *removed_by;
    const cg_tnode *removed_at;  /* the node declaring the filter */
    uint64_t tiers;              /* bit i: in tree tier i */
} cg_cell;

typedef struct cg_cells {
    cg_cell *v;
    size_t n, cap;
    size_t nlive;
} cg_cells;

void cg_cells_release(cg_cells *cells);

/* Where the value of dimension `dim` of a cell is written in the tree. */
cg_pos cg_cell_value_pos(const cg_cell *cell, int dim);

/* The first and last values of the list that gives the cell its value of
 * `dim` (a node's values, a zip's column); false when the cell has none. */
bool cg_cell_value_ends(const cg_cell *cell, int dim, const char **first, const char **last);

/* "os=linux,package=conda,python=3.7" for messages (appended to out). */
void cg_cell_describe(const cg_tree *t, const cg_cell *c, cg_strbuf *out);

#endif
