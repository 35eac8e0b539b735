/* tree — a dimension tree file: the declaration of one CI matrix.
 *
 * This module parses and validates; expand.h turns a tree into cells.  The
 * language (docs/tree-language.md has the full guide):
 *
 *   dimensions: [os, package, python, cuda]        # named, ordered
 *   job_name: {pattern: "binary_{{ os }}_..._{{ phase }}", replace: {".": "_"}}
 *   workflows: [binary_builds]                     # where the jobs land
 *   vars: {build_environment: "{{ package }} {{ python }}"}
 *   tree:                                          # nodes bind dimensions
 *     - os: linux                                  # one value
 *       vars: {docker_image: "pytorch/manylinux-{{ cuda }}"}
 *       children:
 *         - package: [manywheel, conda]            # a list fans out
 *           python: [3.6m, 3.7m]                   # several dims multiply
 *           zip: {cuda: [cpu, cu100], image: [a, b]}  # advance together
 *   exclude: [{os: macos, cuda: "cu*"}]            # filters (also in nodes)
 *   only: [...]
 *   overrides: [{when: {os: macos}, vars: {xcode: "11"}}]
 *   extra: [{os: linux, package: conda, python: "3.8", cuda: cpu}]
 *   tiers: {nightly: all, pr: {cells: [{os: linux, python: 3.7m}]}}
 *   phases:
 *     build: {template: templates/build.yml, requires: [setup]}
 *     test:  {template: templates/test.yml, requires: [build], skip: {os: macos}}
 *     gradle: {per: [os], template: templates/gradle.yml, requires: [build]}  # one per os
 *
 * Names: dimension indexes come first in the name table, then the built-in
 * names, then every variable declared anywhere in the tree.
 */
#ifndef CIGEN_TREE_H
#define CIGEN_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "lang/lists.h"
#include "lang/manifest.h"
#include "lang/placeholder.h"
#include "base/util.h"
#include "lang/yamlload.h"

/* Built-in names, after the dimensions in a tree's name table. */
enum cg_builtin {
    CG_B_JOB, CG_B_PHASE, CG_B_TREE, CG_B_CELL, CG_B_WORKFLOW, CG_B_ON_REQUEST,
    CG_NBUILTINS
};
extern const char *const cg_builtin_names[CG_NBUILTINS];

/* A glob, or a position: `@first` / `@last` match the first / last value of
 * the list that gives the cell its value of the dimension (a node's list,
 * a zip's column, a shared list), whatever that value is. */
enum cg_glob_kind { CG_GLOB_TEXT, CG_GLOB_FIRST, CG_GLOB_LAST };

typedef struct cg_glob {
    const char *text;
    bool negate;     /* written "!glob" */
    uint8_t kind;    /* cg_glob_kind */
} cg_glob;

typedef struct cg_match {
    int id;          /* a dimension or variable */
    cg_glob *globs;
    size_t nglobs;
    bool absent;     /* written `~`: matches when the name is unset */
    cg_pos pos;
} cg_match;

/* A partial cell: every listed name must match one of its globs. */
typedef struct cg_pattern {
    cg_match *items;
    size_t nitems;
    cg_pos pos;
    const char *kind;   /* "exclude", "only", "override", "skip", "tier" */
    const char *text;   /* the pattern as the user would write it, e.g. {os: macos} */
    unsigned hits;      /* cells matched (see expand.c for when it counts) */
    bool names_phase;   /* an override's `when` naming `phase`: matched per job, counted there */
} cg_pattern;

typedef struct cg_vardecl {
    int id;
    const char *raw;    /* the value as written ("[a, b]" for a list, "~" unset) */
    size_t len;
    bool plain;         /* written plain: may be a typed scalar (true, 2) */
    bool unset;         /* written `~`: the variable is unset here (an optional key is left out) */
    cg_pstr text;       /* a string's value (not a list's) */
    cg_pstr *items;     /* a list's items (`[main, release]`), each a string */
    bool *item_plain;   /* [nitems]: item written plain (may keep its YAML type) */
    size_t nitems;
    bool list;          /* written as a list: a template writes it as a sequence */
    const char **replace_from, **replace_to; /* {value: ..., replace: {".": ""}}: rewrites
                                               * the substituted values, as job_name's */
    size_t nreplace;
    cg_pos pos;
    const char *path;   /* in the tree's doc (for a derived value, its `value`) */
} cg_vardecl;

typedef struct cg_fan {     /* one dimension bound on a node */
    int dim;
    const char **values;    /* interned */
    cg_pos *pos;
    size_t n;
} cg_fan;

typedef struct cg_zip {     /* names advancing together */
    size_t nnames, n;       /* columns, branches */
    int *ids;               /* dimension or variable ids */
    cg_vardecl *cells;      /* [branch * nnames + column] */
    int order;              /* where it multiplies: its first dimension */
    cg_pos pos;
} cg_zip;

typedef struct cg_tnode {
    uint32_t index;         /* in tree->nodes, document order */
    uint32_t depth;
    cg_pos pos;
    const char *path;       /* in the tree's doc */
    struct cg_tnode *parent;
    cg_fan *fans;           /* sorted by dimension order */
    size_t nfans;
    cg_zip *zip;
    cg_vardecl *vars;
    size_t nvars;
    struct cg_tnode **children; /* `children` then `extra` */
    size_t nchildren;
    cg_pattern **exclude;
    size_t nexclude;
    cg_pattern **only;
    size_t nonly;
    int *tiers;             /* tiers this subtree joins */
    size_t ntiers;
    bool extra;             /* declared under `extra`: filters do not apply */
    const char **paths;     /* `paths`: globs of the files its cells' jobs depend on (added to
                             * those of the nodes above: see cg_tree_cell_paths), as written */
    cg_pstr *paths_text;    /* each parsed: `{{ dim }}` names a dimension of the cell */
    cg_pos *paths_pos;
    size_t npaths;
} cg_tnode;

typedef struct cg_override {
    cg_pattern *when;
    cg_vardecl *vars;
    size_t nvars;
    cg_pos pos;
} cg_override;

/* NONE: written `none`, the tree takes no part in the workflows that name
 * the tier (it declares it so that leaving them out is visibly on purpose). */
enum cg_tier_kind { CG_TIER_ALL, CG_TIER_CELLS, CG_TIER_PAIRWISE, CG_TIER_NONE };

typedef struct cg_tier {
    const char *name;
    cg_pos pos;
    enum cg_tier_kind kind;
    cg_pattern **cells;     /* CELLS: each must match a live cell; PAIRWISE: pinned cells */
    size_t ncells;
    int *dims;              /* PAIRWISE: the dimensions to cover */
    size_t ndims;
    cg_pattern **costs;     /* PAIRWISE: cost rules (pattern -> weight) */
    double *cost_values;
    size_t ncosts;
} cg_tier;

/* Phases, like tiers and workflows, are bits of a 64-bit set in places. */
#define CG_MAX_PHASES 64

typedef struct cg_phase {
    const char *name;
    cg_pos pos;
    cg_pstr job_name;       /* its own name pattern, or no segments: the tree's */
    cg_src job_name_src;
    const char *template_raw;
    cg_pstr template_path;
    cg_pos template_pos;
    const char *template_doc_path;
    const char **requires;
    cg_pos *requires_pos;
    size_t nrequires;
    int *requires_phase;    /* index of the phase, or -1: an external job */
    bool *requires_optional; /* written `name?`: required only when the job is in the
                              * written workflow (the name is stored without the '?') */
    cg_pattern **skip;
    size_t nskip;
    cg_pattern **only;      /* the phase runs only for cells matching one of these */
    size_t nonly;
    int *workflows;         /* indexes into the manifest's workflows */
    cg_pos *workflow_pos;
    size_t nworkflows;
    bool aggregate;         /* `per` given: one job per group of cells, not per cell */
    int *per;               /* the dimensions that tell groups apart (may be none) */
    size_t nper;
    cg_pos per_pos;
    cg_vardecl *vars;       /* `vars`: set for this phase's jobs, over the cell's (overrides still win) */
    size_t nvars;
} cg_phase;

typedef struct cg_tree {
    const char *name;       /* the file name without folder and extension */
    const char *file;
    const cg_doc *doc;
    size_t index;           /* in the manifest */
    const char **dims;
    cg_pos *dim_pos;
    size_t ndims;
    const char **names;     /* dims, built-ins, variables */
    size_t nnames;
    cg_map name_ids;        /* name -> id + 1 */
    cg_pstr job_name;
    const char *job_name_raw;
    cg_src job_name_src;
    const char **replace_from, **replace_to;
    size_t nreplace;
    cg_tnode *root;         /* holds the top-level vars, filters and `tree:` */
    cg_tnode **nodes;
    size_t nnodes;
    cg_override *overrides;
    size_t noverrides;
    cg_tier *tiers;
    size_t ntiers;
    cg_phase *phases;
    size_t nphases;
    cg_pattern **patterns;  /* every pattern, for "matches no cell" checks */
    size_t npatterns;
    bool phase_vars;        /* a phase sets `vars` or an override's `when` names `phase`:
                             * a cell's variables depend on the phase of the job */
    bool has_paths;         /* a node declares `paths` */
} cg_tree;

/* Parses a loaded tree file.  `index` is its position in the manifest;
 * `lists` holds the shared value lists (`{list: NAME}`; may be NULL), whose
 * `uses` count the references. */
cg_tree *cg_tree_parse(const cg_doc *doc, size_t index, const cg_manifest *m, cg_lists *lists, cg_pool *pool,
                       cg_error *err);
void cg_tree_free(cg_tree *t);

/* The id of a name, or -1. */
int cg_tree_name_id(const cg_tree *t, const char *name);
static inline bool cg_tree_is_dim(const cg_tree *t, int id) { return id >= 0 && (size_t)id < t->ndims; }
static inline int cg_tree_builtin(const cg_tree *t, enum cg_builtin b) { return (int)t->ndims + (int)b; }

/* The path globs the jobs of a cell made under node `leaf` depend on, as
 * written (with their `{{ dim }}` placeholders): the `paths` of the node and
 * of every node above it, outermost first (none when no node on the way
 * declares `paths`).  Writes at most `max` into out and returns how many
 * there are.  model/jobs.h's cg_job_paths_match fills them for a cell. */
size_t cg_tree_cell_paths(const cg_tnode *leaf, const char **out, size_t max);

/* Appends "{os: macos, cuda: cu*}" for a pattern. */
void cg_pattern_describe(const cg_tree *t, const cg_pattern *p, cg_strbuf *out);

#endif
