/* tree_impl — the tree parser's state and the helpers its parts share:
 * lang/tree.c (names, variables, the top level), tree_pattern.c (patterns),
 * tree_node.c (nodes, zips, values), tree_sections.c (job_name, workflows,
 * tiers, overrides, phases).  Internal to lang/tree*.c: the public interface
 * is lang/tree.h.  Everything the parser allocates lives in P->pool or in
 * the tree (freed by cg_tree_free).
 */
#ifndef CIGEN_TREE_IMPL_H
#define CIGEN_TREE_IMPL_H

#include <stdlib.h>
#include <string.h>

#include "lang/lists.h"
#include "lang/schema.h"
#include "lang/yaml_scalar.h"
#include "lang/manifest.h"
#include "lang/placeholder.h"

/* lang/tree.h's (not included: a module and its parts never include each
 * other) */
typedef struct cg_tree cg_tree;
typedef struct cg_tnode cg_tnode;
typedef struct cg_pattern cg_pattern;
typedef struct cg_vardecl cg_vardecl;

static const char *const node_keywords[] = {"vars", "children", "zip", "exclude", "only",
                                            "extra", "tiers", "paths"};

typedef struct parser {
    cg_tree *t;
    const cg_doc *doc;
    const cg_manifest *m;
    cg_pool *pool;
    cg_error *err;
    size_t nodes_cap;
    size_t patterns_cap;
    int *bound_by;      /* [ndims]: index of the node binding each dimension on the current path, or -1 */
    cg_lists *lists;    /* the manifest's shared lists (may be NULL) */
} parser;

#define PATH(sb, parent, key) (cg_path_join_key(&(sb), (parent), (key)), cg_strbuf_str(&(sb)))

static inline void *palloc(parser *P, size_t n, size_t size)
{
    void *p = cg_pool_alloc(P->pool, (n ? n : 1) * size);
    memset(p, 0, (n ? n : 1) * size);
    return p;
}

static inline const char *pstr(parser *P, const json_t *v)
{
    return cg_pool_strndup(P->pool, json_string_value(v), json_string_length(v));
}

int cg_tree_parse_vardecl(parser *P, const char *path, const char *name, json_t *v, cg_vardecl *out);

int cg_tree_parse_vars(parser *P, const char *path, json_t *vars, cg_vardecl **out, size_t *n);

/* Resolves the names of a parsed string.  `allowed` is a bitmask of the
 * built-ins that may appear; dimensions and variables always may. */
int cg_tree_resolve_pstr(parser *P, const char *path, cg_pstr *s, unsigned allowed,
                         const char *context);

int cg_tree_unknown_name(parser *P, const cg_pos *pos, const char *name, const char *what,
                         bool with_builtins);

/* `kind` names the pattern in later messages ("exclude pattern {os: linux}");
 * `what`, when set, names the place in a type error ("'when' of an override"). */
cg_pattern *cg_tree_parse_pattern(parser *P, const char *path, json_t *v, const char *kind, const char *what);

/* A pattern or a list of patterns, under the key `key`. */
int cg_tree_parse_patterns(parser *P, const char *path, json_t *v, const char *key, const char *kind,
                           cg_pattern ***out, size_t *n);

/* A dimension's values as written: a value, a list, {list: NAME} or a list
 * mixing values and {list: NAME}; duplicates are an error unless `dups`. */
int cg_tree_dim_values(parser *P, const char *path, int dim, json_t *v, bool dups, const char ***values,
                       cg_pos **pos, size_t *n);

cg_tnode *cg_tree_new_node(parser *P, cg_tnode *parent, const char *path);

int cg_tree_parse_node_body(parser *P, const char *path, json_t *obj, cg_tnode *node);

int cg_tree_parse_node_list(parser *P, const char *path, json_t *v, cg_tnode *parent,
                            bool extra, const char *what);

int cg_tree_parse_job_name(parser *P, json_t *root);

int cg_tree_parse_overrides(parser *P, json_t *root);

int cg_tree_parse_phases(parser *P, json_t *root, int *tree_wf, cg_pos *tree_wf_pos, size_t ntree_wf);

int cg_tree_parse_tier_bodies(parser *P, json_t *root);

int cg_tree_parse_tiers(parser *P, json_t *root);

int cg_tree_parse_workflow_list(parser *P, const char *path, json_t *v, int **out, cg_pos **pos,
                                size_t *n);

#endif
