/* infer — a cigen project inferred from a CircleCI config (`cigen import`).
 *
 *   cg_infer_project   the config's document -> the files of a project:
 *                      the manifest (cigen.yml), fragments holding every
 *                      top-level section but `workflows` byte for byte, and
 *                      for the workflows: dimension trees and templates for
 *                      the entries that form a matrix, static entries of the
 *                      manifest (in place, through `order`) for the rest
 *
 * Four levels, each a fallback for the one above (cmd/import.c proves the
 * result and steps down when the proof fails):
 *
 *   CG_INFER_SHAPES    matrices become trees of the shapes the tree language
 *                      says: products with zipped dimensions and `exclude`,
 *                      a node per value of a dimension, shared value
 *                      lists, and fan-ins (`per: []`) of the entries that
 *                      require a phase of every cell
 *   CG_INFER_TREES     matrices become trees: plain products, or a node per
 *                      cell; `enabled` (the level of each candidate tree,
 *                      NULL: `level` for all) leaves some as static entries
 *                      (below CG_INFER_TREES) or without shapes
 *   CG_INFER_STATIC    every workflow entry a static entry of the manifest
 *   CG_INFER_VERBATIM  the `workflows:` section a fragment too, byte for byte
 *
 * A matrix, as found: entries of one workflow that invoke the same job with
 * a `name:`, the same non-scalar arguments and scalar arguments that vary
 * (each a column: a dimension when the job names are made of it, else a
 * variable; a key some entries lack an optional key of the template).
 * Entries that require one entry each of another such group, one to one,
 * are a later phase of the same cells.  The job-name pattern is searched for
 * (with `replace` for dots and spaces the names do not keep).  Cells form a
 * product when they are one (dimension values multiplied in order,
 * variables set by overrides on one dimension, or columns of a zip), maybe
 * minus a few cells (`exclude`), else one node per cell.
 *
 * Pure: the files are returned as bytes; nothing is read or written.
 */
#ifndef CIGEN_INFER_H
#define CIGEN_INFER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "lang/yamlload.h"

enum { CG_INFER_VERBATIM = 0, CG_INFER_STATIC = 1, CG_INFER_TREES = 2, CG_INFER_SHAPES = 3 };

typedef struct cg_infer_file {
    char *rel;     /* path in the project (owned) */
    cg_strbuf text;
} cg_infer_file;

typedef struct cg_infer {
    cg_infer_file *files;    /* in the order they are listed (manifest first) */
    size_t nfiles, files_cap;
    cg_strbuf summary;       /* what was inferred, one item a line */
    size_t ncandidates;      /* candidate trees found (the size of `enabled`) */
    size_t ntrees, ntemplates, nstatic, nverbatim_workflows, nfragments;
    size_t ncells, ngenerated; /* cells of the trees, entries they make */
    size_t workflows_lines;  /* lines of the config's `workflows:` section */
} cg_infer;

void cg_infer_init(cg_infer *r);
void cg_infer_release(cg_infer *r);

/* Fills r (initialized, empty) from doc, the loaded config whose display
 * name is `source` (for the comments of the files written).  `output` is
 * the manifest's `output:`.  Returns 0, or -1 with err set when the config
 * is not one a project can hold (not a mapping at its root). */
int cg_infer_project(const cg_doc *doc, const char *source, const char *output, int level,
                     const unsigned char *enabled, cg_infer *r, cg_error *err);

#endif
