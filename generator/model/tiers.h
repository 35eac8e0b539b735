/* tiers — which of a tree's tiers each live cell belongs to.
 *
 * A tree declares up to 64 tiers at its top level: `all` (every live cell),
 * a list of cell patterns, or `pairwise` (the cells model/pairwise.h selects
 * to cover every pair of values of its dimensions, with pinned cells and
 * costs).  Bit i of cg_cell.tiers is tier i.
 *
 * A pairwise tier stays put: the committed config.yml records its cells in
 * its header, one line each,
 *
 *   # cigen-tier: binary_builds pr os=linux,package=conda,python=3.7,cuda=cpu
 *
 * (the tree, the tier, the cell's dimension values; bytes that would break
 * the line or the fields written %XX), and the next selection starts from
 * them: a cell stays while it is live and needed, so adding or removing a
 * value adds or drops only the cells the changed pairs need.  What entered
 * or left, and why, is recorded for generate's summary.
 */
#ifndef CIGEN_TIERS_H
#define CIGEN_TIERS_H

#include "base/diag.h"
#include "base/map.h"
#include "base/pool.h"
#include "lang/tree.h"
#include "model/cell.h"
#include "model/env.h"

/* The cells of the pairwise tiers the committed config recorded. */
typedef struct cg_tier_prev {
    cg_map cells;     /* "tree\x1ftier\x1fcell key" -> its order + 1 */
    cg_map tiers;     /* "tree\x1ftier" -> 1: the tier was recorded */
    const char **keys; /* [n]: the first map's keys, in the order read */
    size_t n, cap;
    bool fresh;       /* only to report changes: the selection starts afresh */
    cg_pool pool;
} cg_tier_prev;

void cg_tier_prev_init(cg_tier_prev *prev);
void cg_tier_prev_release(cg_tier_prev *prev);
/* Reads the `# cigen-tier:` lines of a config's header (the leading comment
 * lines, through the digest line); anything else is ignored. */
void cg_tier_prev_parse(cg_tier_prev *prev, const char *text, size_t len);

/* The header line prefix, and a cell's line (appended to out). */
#define CG_TIER_LINE "# cigen-tier: "
void cg_tier_line(const cg_tree *t, const cg_tier *tier, const cg_cell *c, cg_strbuf *out);

/* A cell that entered or left a pairwise tier compared with the committed
 * config. */
typedef struct cg_tier_change {
    const char *tree, *tier;   /* borrowed from the tree */
    char *cell;                /* "os=linux,cuda=cu101" (owned) */
    char *why;                 /* owned */
    bool entered;
} cg_tier_change;

typedef struct cg_tier_changes {
    cg_tier_change *v;
    size_t n, cap;
} cg_tier_changes;

void cg_tier_changes_release(cg_tier_changes *ch);

/* Sets the tier bits of every live cell of `cells` (expanded from t), using
 * env (the caller's, for t) to match patterns; counts the patterns' hits in
 * t.  A pairwise tier starts from the cells `prev` recorded for it (may be
 * NULL) and appends what changed to `changes` (may be NULL).  A tier pattern
 * no live cell matches is an error: -1. */
int cg_tiers_assign(cg_tree *t, cg_cells *cells, cg_env *env, const cg_tier_prev *prev, cg_tier_changes *changes,
                    cg_error *err);

#endif
