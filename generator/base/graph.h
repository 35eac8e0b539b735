/* graph — a cycle in a directed graph, found depth-first (the phases'
 * `requires` of a tree, the jobs' `requires` of a workflow).
 *
 * The graph is read through two callbacks, so callers keep their own edge
 * lists.  The search starts at nodes 0, 1, ... in order and follows edges in
 * order, so the cycle reported is the same on every run.
 */
#ifndef CIGEN_GRAPH_H
#define CIGEN_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

typedef struct cg_graph {
    size_t n;                                               /* nodes 0 .. n-1 */
    size_t (*degree)(const void *ctx, size_t u);            /* u's edges */
    ptrdiff_t (*target)(const void *ctx, size_t u, size_t i); /* where u's edge i goes; < 0: nowhere */
    const void *ctx;
} cg_graph;

typedef struct cg_cycle {
    size_t *nodes;  /* in order along the edges; the last one's edge `edge` closes it (malloc'd) */
    size_t len;
    size_t edge;
} cg_cycle;

/* True and the first cycle met in *out (released with cg_cycle_release),
 * or false (nothing to release). */
bool cg_graph_find_cycle(const cg_graph *g, cg_cycle *out);
void cg_cycle_release(cg_cycle *c);
/* Appends "a -> b -> a" (names borrowed from name(ctx, node)). */
void cg_cycle_describe(const cg_cycle *c, const char *(*name)(const void *ctx, size_t node), const void *ctx,
                       cg_strbuf *out);

#endif
