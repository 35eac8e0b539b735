/* dot_impl — what the diagram renderers (render/dot.c, dot_tree.c,
 * dot_workflow.c) share, defined in render/dot_common.c: looks, DOT
 * escaping, the header line that marks a diagram as cigen's, a hash set of
 * array indexes, the names of cells and jobs with collapsed values, and the
 * note drawn instead of a diagram over the node limit.  Internal to
 * render/dot*.c: the public interface is render/dot.h.
 */
#ifndef CIGEN_DOT_IMPL_H
#define CIGEN_DOT_IMPL_H

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "lang/tree.h"
#include "model/cell.h"
#include "model/env.h"
#include "model/model.h"

/* render/dot.h's (not included: a module and its parts never include each
 * other) */
typedef struct cg_dot_opts cg_dot_opts;
typedef struct cg_dot_sink cg_dot_sink;

/* Hands `out` to the sink (when there is one) once it holds a chunk, or,
 * with `all`, whatever it holds. */
void cg_dot_spill(const cg_dot_sink *sink, cg_strbuf *out, bool all);

/* Fill colours: of a dimension level (by dimension index) in the tree
 * diagram, of a phase (by phase index) in the job graph. */
extern const char *const cg_dot_palette[8];
#define PALETTE(i) cg_dot_palette[(size_t)(i) % CG_ARRAY_LEN(cg_dot_palette)]
#define STATIC_FILL "#eeeeee"
/* what does not run: removed cells, their branches */
#define GREY_ATTRS "fillcolor=\"#f2f2f2\", color=\"#a6a6a6\", fontcolor=\"#8c8c8c\""
#define GREY_EDGE " [style=dashed, color=\"#bbbbbb\"]"
#define NONE UINT32_MAX
/* the border of what runs on every pull request */
#define PR_COLOR "#2e7d32"

typedef struct cg_dot_htab {
    uint32_t *slot; /* index + 1; 0: empty */
    uint64_t *hash;
    size_t cap, n;
} cg_dot_htab;

typedef bool (*cg_dot_htab_eq)(const void *ctx, uint32_t stored, uint32_t probe);

typedef struct cg_dot_namer {
    const cg_tree *t;
    cg_env env;
    cg_error err;          /* scratch: a name that cannot be made falls back */
    const char **values;   /* [ndims] */
} cg_dot_namer;

/* How many nodes the diagram has with dimensions `names` collapsed. */
typedef size_t (*cg_dot_count_fn)(const void *ctx, const char *const *names, size_t n);

/* The estimated long side, in pixels, of the diagram with dimensions `names`
 * collapsed; SIZE_MAX when it would be over the node limit. */
typedef size_t (*cg_dot_est_fn)(const void *ctx, const char *const *names, size_t n);

/* Layout estimates, in points (72 a inch), of Graphviz's defaults as
 * cg_dot_begin_graph sets them: a node of `lines` lines of fontsize 10 (at
 * least 0.3 inch), `chars` characters wide, the gaps between nodes. */
#define CG_DOT_LINE_PT 12.0
#define CG_DOT_CHAR_PT 5.8
#define CG_DOT_NODESEP_PT 8.64
#define CG_DOT_RANKSEP_PT 28.8
#define CG_DOT_CLUSTER_PT 30.0 /* a cluster's label and margins */
double cg_dot_node_h(size_t lines);
double cg_dot_node_w(size_t chars);
/* Points to pixels of `dot -Tpng` (96 dpi); the graph label adds its lines
 * above and its widest line. */
size_t cg_dot_px(double w_pt, double h_pt, const cg_strbuf *label);

/* Adds to names[*n..] candidates (each at most once, not already in names)
 * greedily, the one whose estimate is the smallest first (the later
 * candidate on a tie), until the estimate is at most `budget`; a candidate
 * that makes it no smaller is not taken.  names has room for *n + ncands. */
void cg_dot_fit(const char *const *cands, size_t ncands, size_t budget, cg_dot_est_fn est, const void *ctx,
                const char **names, size_t *n);

/* cg_dot_quote() of a NUL-terminated string, of a cg_strbuf. */
void cg_dot_quotes(cg_strbuf *out, const char *s);
void cg_dot_quote_sb(cg_strbuf *out, const cg_strbuf *s);

/* One component of a node id: dim=value, with the bytes that separate
 * components (and control bytes) percent-encoded; NULL is a collapsed "*".
 * The path starts at out->buf[start]. */
void cg_dot_path_add(cg_strbuf *out, size_t start, const char *dim, const char *value);

/* The header line (CG_DOT_HEADER_PREFIX, the manifest, "do not edit"), a
 * comment saying `what`, and `digraph "<kind>-<name>" {` with the graph's
 * label and default looks. */
void cg_dot_begin_graph(cg_strbuf *out, const cg_model *p, const char *what, const char *kind,
                        const char *name, const cg_strbuf *label);

/* "1 job", "2 jobs". */
void cg_dot_plural(cg_strbuf *out, size_t n, const char *one, const char *many);

/* "what: a, b, c". */
void cg_dot_names_line(cg_strbuf *out, const char *what, const char *const *names, size_t n);

/* "\nwhole: cigen graph --<kind> NAME --collapse none", for a fitted diagram. */
void cg_dot_whole_line(cg_strbuf *out, const char *kind, const char *name);

/* A node id: `prefix` (a string constant; NULL: none), then `s`. */
typedef struct cg_dot_id {
    const char *prefix, *s;
} cg_dot_id;

/* The node ids a diagram has taken, each once, in the order taken: a name
 * the model holds is borrowed (with its prefix), any other id copied into
 * a pool; an index of them (8 bytes a slot) finds them. */
typedef struct cg_dot_ids {
    cg_dot_id *v;
    size_t n, cap;
    cg_index index;
    cg_pool pool;
    cg_strbuf *scratch;     /* a prefixed id, spelt whole for the index */
    cg_strbuf probe;        /* the id being taken */
} cg_dot_ids;

void cg_dot_ids_init(cg_dot_ids *ids);
void cg_dot_ids_release(cg_dot_ids *ids);

/* Makes `id` unique among the ids taken (appending #2, #3, ...) and takes
 * it: it is ids->v[ids->n - 1] from now on, a copy. */
void cg_dot_ids_take(cg_dot_ids *ids, cg_strbuf *id);

/* Takes prefix + s, borrowing s (which must outlive ids) when no id taken
 * is spelt so; else as cg_dot_ids_take. */
void cg_dot_ids_take_name(cg_dot_ids *ids, const char *prefix, const char *s);

/* cg_dot_quote() of an id. */
void cg_dot_quote_id(cg_strbuf *out, const cg_dot_id *id);

/* Which dimensions of a tree the options collapse ([ndims], malloc'd). */
bool *cg_dot_collapse_mask(const cg_tree *t, const char *const *names, size_t n);

/* A hash set of indexes into the caller's array (which holds the entries
 * and is borrowed); the set owns its two tables. */
void cg_dot_htab_release(cg_dot_htab *h);

/* The stored entry equal to `probe`; when there is none, `probe` itself
 * (now stored).  The caller has put the probe at index `probe` of its array
 * and keeps it only when this returns `probe`. */
uint32_t cg_dot_htab_intern(cg_dot_htab *h, uint64_t hash, uint32_t probe, cg_dot_htab_eq eq, const void *ctx);

/* Hashing for the sets: one value into a running hash, a string's hash. */
uint64_t cg_dot_mix(uint64_t h, uint64_t v);
uint64_t cg_dot_str_hash(const char *s);

/* Names cells and jobs the way the tree's job-name patterns do, with
 * collapsed values shown as '*'; owns a scratch env and error. */
void cg_dot_namer_init(cg_dot_namer *nm, const cg_tree *t);
void cg_dot_namer_release(cg_dot_namer *nm);

/* Appends the cell name (phase < 0: the tree's pattern without the phase) or
 * the name of the cell's job in `phase`. */
void cg_dot_namer_name(cg_dot_namer *nm, const cg_cell *c, const bool *mask, int phase, cg_strbuf *out);

/* A graph of one note: how many nodes the diagram would have, and the
 * collapses (chosen greedily, most nodes saved first, the later dimension on
 * a tie) that bring it under the limit. */
void cg_dot_emit_note(cg_strbuf *out, const cg_model *p, const char *kind, const char *name,
                      const cg_dot_opts *o, size_t count, const char *const *cands, size_t ncands, cg_dot_count_fn fn,
                      const void *ctx, const cg_strbuf *label, const char *what);

/* Cells under a collapse mask (mask[d]: dimension d collapsed): equal but
 * for the collapsed dimensions, a hash agreeing with that equality, whether
 * a cell has a collapsed value (drawn with the others), and its path with
 * '*' for the collapsed values. */
bool cg_dot_masked_eq(const cg_tree *t, const bool *mask, const cg_cell *a, const cg_cell *b);
uint64_t cg_dot_masked_hash(const cg_tree *t, const bool *mask, const cg_cell *c);
bool cg_dot_grouped(const cg_tree *t, const bool *mask, const cg_cell *c);
void cg_dot_masked_path(const cg_tree *t, const bool *mask, const cg_cell *c, cg_strbuf *out);

#endif
