/* assemble — config.yml from its parts (a pure function: no I/O).
 *
 * Sections appear in the order their keys first appear across the fragments
 * (in manifest order).  A section found in several fragments is written once:
 * the first fragment's copy, then the entries of the others.  The generated
 * workflows join the `workflows` section (after any verbatim workflows) or
 * form it at the end.  A line map records where every output line came from.
 */
#ifndef CIGEN_ASSEMBLE_H
#define CIGEN_ASSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "lang/fragment.h"
#include "base/strbuf.h"

typedef struct cg_linemap_entry {
    uint32_t out_line;   /* first output line (1-based) */
    uint32_t nlines;
    const char *file;    /* source file, or NULL for generated lines */
    uint32_t src_line;   /* its first line in the source */
    int32_t job;         /* generated: the job the lines render, or -1 */
    int32_t workflow;    /* generated: the workflow, or -1 */
} cg_linemap_entry;

typedef struct cg_linemap {
    cg_linemap_entry *v;
    size_t n, cap;
} cg_linemap;

void cg_linemap_release(cg_linemap *map);
/* Appends an entry for `text` (counting its lines) starting at *line. */
void cg_linemap_add(cg_linemap *map, uint32_t *line, const char *text, size_t len,
                    const char *file, uint32_t src_line, int32_t job, int32_t workflow);
/* The entry covering output line `line`, or NULL. */
const cg_linemap_entry *cg_linemap_find(const cg_linemap *map, uint32_t line);

typedef struct cg_assembly {
    const char *header;           /* comment lines, each ending in '\n' */
    const cg_fragment *fragments;
    size_t nfragments;
    /* Appends the generated entries of `workflows:` (indented by 2) to out,
     * mapping their lines from *line on; 0, or -1 after an error.  Called
     * where they go, so they are written once, in place. */
    int (*write_workflows)(void *ctx, cg_strbuf *out, cg_linemap *map, uint32_t *line);
    void *ctx;
    const char *const *workflow_names; /* the generated workflows' names */
    const cg_pos *workflow_pos;
    size_t nworkflows;
    /* the manifest's `workflows: version: 2`, or NULL: a fragment's own
     * `version` under `workflows` is then refused (it is written once) */
    const cg_pos *workflows_version_pos;
} cg_assembly;

/* Appends the assembled config to `out` (which may hold a header already);
 * `map` numbers the appended lines from 1. */
int cg_assemble(const cg_assembly *in, cg_strbuf *out, cg_linemap *map, cg_error *err);

#endif
