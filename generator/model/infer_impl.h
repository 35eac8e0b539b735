/* infer_impl — what the parts of model/infer share: the plans of the
 * workflows (entries, groups of entries, candidate trees and their columns)
 * and the helpers.  infer.c (the files, the fragments, cg_infer_project),
 * infer_groups.c (entries, groups, phases and a tree's plan),
 * infer_pattern.c (the job-name pattern), infer_columns.c (the columns:
 * the arguments that vary), infer_merge.c (one tree for several workflows),
 * infer_write.c (a tree's file and its templates), infer_manifest.c (a
 * workflow in the manifest), infer_shape.c (products, zips, `exclude`,
 * shared lists), infer_nested.c (a node per value of a dimension) and
 * infer_fanin.c (fan-ins).  Internal to model/infer*.c: the public
 * interface is model/infer.h.
 */
#ifndef CIGEN_INFER_IMPL_H
#define CIGEN_INFER_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/diag.h"
#include "base/map.h"
#include "base/pool.h"
#include "base/strbuf.h"
#include "lang/yamlload.h"
#include "lang/yamlwrite.h"
#include "model/infer.h"

/* ---- the candidates: entries, groups of entries, trees ---- */

typedef struct ent {
    const char *kind;      /* the job it runs */
    const char *name;      /* its name: `name:`, or the job */
    json_t *args;          /* its arguments (an object), or NULL */
    char *path;            /* the entry in the config */
    char *apath;           /* its arguments */
    json_t *req;           /* `requires:` (borrowed), or NULL */
    bool eligible;         /* may be a job of a tree */
    bool named;            /* has a `name:` (else it is named like its job) */
    int fam;               /* its group, or -1 */
    int cell;              /* its cell in its tree */
    int fanin;             /* the tree (of its workflow) it is a fan-in of, or -1 */
} ent;

typedef struct fam {
    const char *kind;
    char *sig;
    size_t *mem;           /* entries, in workflow order */
    size_t n, cap;
    int parent;            /* the group whose entries each member requires, or -1 */
    size_t *par;           /* per member: the entry it requires of the parent */
    int tree;              /* -1: none (its entries stay static) */
    char *phase;           /* its phase's name */
    json_t *rtok;          /* its requires: names, and "\x01N" for group N of the same cell */
} fam;

typedef struct col {
    char *name;            /* the dimension's or variable's name */
    char *tname;           /* what the template uses: name, or a typed shadow variable */
    const char *key;       /* the argument */
    bool dim;
    bool typed;            /* some value is a plain non-string (dims then get a shadow) */
    bool empty;            /* some value is "" (a dimension is then absent there, and gets a shadow) */
    bool dim_ok;           /* its values may be a dimension's */
    const char **v;        /* [ncells]: its value per cell, NULL where absent */
    bool *plain;           /* [ncells] */
    bool *phases;          /* [nfams]: the phases whose argument it is */
    size_t follows;        /* product: the dimension (column) whose value sets it */
} col;

/* A fan-in: one entry requiring one phase's jobs of every cell (a phase
 * with `per: []`). */
typedef struct infer_fanin {
    size_t e;              /* the entry */
    char *phase;           /* its phase's name */
    json_t *rtok;          /* its requires, as a phase's rtok */
} infer_fanin;

typedef struct tplan tplan;
typedef struct wplan wplan;
struct tplan {
    char *name;
    int root;
    int *fams;             /* phases, in order of first appearance */
    size_t nfams;
    size_t ncells;
    long *fc;              /* [nfams * ncells]: the entry of phase f in cell c, or -1 */
    col *cols;
    size_t ncols;
    cg_strbuf *pattern;    /* [nfams] */
    int replace;           /* index into cg_infer_replaces[] */
    bool phase_major;
    bool ok;
    bool product;
    /* a tree of another workflow whose jobs are the same: merged into this */
    const struct tplan *into;  /* this one was merged into `into` (not written) */
    size_t nwfs;               /* the workflows it lands in (>1 once merged) */
    const struct wplan **wfs;
    struct tplan **from;       /* [nwfs]: the tree of each workflow (this one first) */
    unsigned char *cell_in;    /* [nwfs * ncells]: 0 out, 1 in, 2 on request */
    bool *phase_in;            /* [nwfs * nfams] */
    int *phase_of;             /* [nwfs * nfams]: the phase's index in that workflow's tree, or -1 */
    int *cell_of;              /* [nwfs * ncells]: the cell's index in that workflow's tree, or -1 */
    bool gated;                /* `on_request` passes the built-in {{ on_request }} */
    bool enabled;              /* not left static by the caller */
    bool shapes;               /* zips, `exclude` and fan-ins allowed */
    bool shaped;               /* in place and with requires a tree can say (another tree may take its jobs) */
    size_t *dimorder;      /* product: the dimensions' columns in multiplication order */
    size_t ndimorder;
    char *why;             /* why it stays static, when !ok */
    /* product: the classes of dimensions whose values determine each other
     * (a zip when more than one), runs of dimorder */
    size_t *cls_start;     /* [nclasses + 1]: where each class starts in dimorder */
    size_t nclasses;
    size_t **rows;         /* [nclasses][nrows]: a cell of each distinct row, in order of appearance */
    size_t *nrows;
    size_t nprod;          /* the product's cells (ncells + those excluded) */
    bool *present;         /* [nprod] */
    long *excl;            /* [nexcl * nclasses]: exclude patterns, a row per class or -1 */
    size_t nexcl;
    bool nested;           /* not a product: a node per value of dimorder[0] */
    size_t *runs;          /* nested: [nruns + 1], where each node's cells start */
    size_t nruns;
    const char **listof;   /* [ndimorder]: the shared list giving each dimension's values, or NULL */
    infer_fanin *fins;     /* fan-in phases */
    size_t nfins, fins_cap;
};

struct wplan {
    const char *name;
    char *path;
    json_t *v;
    bool verbatim;         /* copied into a fragment as it is */
    bool tiered;           /* some tree sends it only some of its cells: a tier */
    bool gated;            /* some cells run on request: an on_request tier */
    char *tier;            /* the tier's name (the workflow's, as a name) */
    ent *e;
    size_t ne;
    fam *f;
    size_t nf;
    tplan *t;
    size_t nt;
};

typedef struct ctx {
    const cg_doc *doc;
    const char *source;
    const char *output;
    int level;
    const unsigned char *enabled;
    size_t candidate;      /* the next candidate tree's number */
    cg_infer *r;
    cg_pool pool;
    wplan *w;
    size_t nw;
    cg_map tree_names;
    cg_map file_names;
} ctx;


/* The `replace` of a job-name pattern: characters the names do not keep. */
typedef struct cg_infer_replace {
    const char *from[2], *to[2];
    size_t n;
} cg_infer_replace;
extern const cg_infer_replace cg_infer_replaces[];
extern const size_t cg_infer_nreplaces;

/* infer.c */
char *cg_infer_pstr(ctx *C, const char *s);
cg_infer_file *cg_infer_add_file(cg_infer *r, const char *rel);
/* A name for a file, a tree, a dimension: letters, digits and '_'. */
void cg_infer_identifier(cg_strbuf *out, const char *s);
/* A name `base` not in `taken` (recorded there): base, base_2, base_3... */
char *cg_infer_unique_name(ctx *C, cg_map *taken, const char *base);
/* Is s a value a pattern reads as it is (no glob character, not empty)? */
bool cg_infer_glob_safe(const char *s);

/* infer_groups.c: the candidates of a workflow */
void cg_infer_read_entries(ctx *C, wplan *W);
void cg_infer_group(ctx *C, wplan *W);
void cg_infer_link_phases(wplan *W);
void cg_infer_plan_trees(ctx *C, wplan *W);
void cg_infer_plan_tree(ctx *C, wplan *W, tplan *T, cg_map *tree_names);

/* infer_pattern.c */
bool cg_infer_find_patterns(tplan *T, const wplan *W);

/* infer_columns.c */
bool cg_infer_reserved(const char *name);
void cg_infer_columns(ctx *C, const wplan *W, tplan *T);
const col *cg_infer_column_of(const tplan *T, size_t fi, const char *k);
bool cg_infer_same_value(const char *a, bool ap, const char *b, bool bp);

/* infer_merge.c */
void cg_infer_merge_trees(ctx *C);

/* infer_write.c */
bool cg_infer_shadowed(const col *cl);
const char *cg_infer_tname(ctx *C, const col *cl);
void cg_infer_emit_tree(ctx *C, const wplan *W, tplan *T);

/* infer_manifest.c */
bool cg_infer_manifest_can_say(json_t *wv);
void cg_infer_copy_lines(const cg_doc *doc, const char *path, cg_strbuf *out);
void cg_infer_write_workflow(ctx *C, cg_yw *w, const wplan *W);

/* infer_shape.c */
void cg_infer_detect_shape(tplan *T, bool shapes);
void cg_infer_shape_text(const tplan *T, cg_strbuf *s);
void cg_infer_write_shape(ctx *C, cg_yw *w, const tplan *T);
void cg_infer_shape_free(tplan *T);
void cg_infer_shared_lists(ctx *C, cg_strbuf *file);
/* Is cl written as a variable (a variable, or a dimension's typed shadow;
 * not the built-in on_request)? */
bool cg_infer_is_var(const tplan *T, const col *cl);

/* infer_nested.c */
void cg_infer_detect_nested(tplan *T);
void cg_infer_write_nested(ctx *C, cg_yw *w, const tplan *T);

/* infer_fanin.c */
bool cg_infer_in_tree(const wplan *W, const ent *e);
void cg_infer_fanins(ctx *C, wplan *W);
void cg_infer_write_fanin(ctx *C, cg_yw *w, const wplan *W, const tplan *T, const infer_fanin *F);

#endif
