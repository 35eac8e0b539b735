/* order — the order of each workflow's entries (the manifest's `order`).
 *
 *   order: cell      static entries, then each cell's jobs together (default)
 *   order: phase     static entries, then all jobs of a phase together, the
 *                    phases in the order the trees declare them
 *   order: [setup, {phase: build}, {phase: [test, upload]}, notify]
 *                    static entries by name and phases' jobs, as listed;
 *                    every static entry and every (tree, phase) landing in
 *                    the workflow must be placed once
 *   {tree: main} / {tree: main, phase: [build]}
 *                    in a list: one tree's phases only (all that land, or
 *                    those named), cell by cell
 *
 * Within a group, jobs keep their order (trees in manifest order, cells in
 * tree order), so the result depends only on the sources.
 */
#ifndef CIGEN_ORDER_H
#define CIGEN_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "lang/manifest.h"
#include "lang/tree.h"
#include "model/jobs.h"

/* One workflow's entries: an item >= 0 is a job index, an item < 0 the
 * static entry -(item + 1) of the workflow's `jobs`. */
typedef struct cg_wf_order {
    int32_t *items;
    size_t n;
} cg_wf_order;

/* Fills out[nworkflows] (caller-allocated, zeroed); errors name the item
 * of `order` at fault. */
int cg_order_build(const cg_manifest *m, cg_tree *const *trees, size_t ntrees, const cg_jobs *jobs,
                   cg_wf_order *out, cg_error *err);
void cg_order_release(cg_wf_order *o, size_t n);

#endif
