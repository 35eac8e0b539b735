/* template — a workflow entry with placeholders, filled per job.
 *
 * A template file holds one CircleCI 2.1 workflow entry: the job to invoke
 * (usually defined with parameters in a verbatim fragment) and the arguments
 * to pass:
 *
 *   binary_linux_build:                  # the job to run (may use placeholders)
 *     build_environment: "{{ build_environment }}"
 *     docker_image: "{{ docker_image }}"
 *     resource_class: large
 *
 * It is parsed as YAML first and filled afterwards, so a value can never
 * change the structure.  A scalar that is exactly one placeholder keeps the
 * type of what it names (a variable written `true` or `4` stays a boolean or
 * a number; a dimension value is always a string); any other scalar with a
 * placeholder is a string; a plain scalar without one keeps its YAML type.
 * cigen adds `name:` (the job name), `requires:` (from the phase) and, when
 * the workflow filters branches per job, `filters:`.
 *
 * Optional parts: a key written with a trailing '?' (`resource_class?:
 * "{{ resource_class }}"`) is left out, with its whole value, for a job
 * where a name its key or value needs is unset (names under a nested
 * optional key or item do not count); a sequence item that is exactly one
 * optional placeholder (`- "{{ extra? }}"`) is left out when unset.
 */
#ifndef CIGEN_TEMPLATE_H
#define CIGEN_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/manifest.h"
#include "lang/placeholder.h"
#include "lang/tree.h"
#include "lang/yamlwrite.h"

typedef struct cg_tpl_node {
    char kind;                 /* 'm' mapping, 's' sequence, 'v' scalar */
    cg_pstr text;              /* scalar */
    bool plain;                /* scalar written plain */
    const char *path;          /* in the template's doc */
    struct cg_tpl_node *kids;  /* mapping: key, value, key, value ...; sequence: items */
    size_t nkids;
    /* a scalar without placeholders, formatted once when compiled: */
    const char *ctext;         /* its text */
    size_t ctext_len;
    const char *cyaml;         /* as written to config.yml; NULL: a literal block */
    size_t cyaml_len;
    bool ctyped;               /* written as a number, bool or null */
    bool optional;             /* a key written `key?:` (its entry may be left out), or an
                                * item that is one {{ name? }} (left out when unset) */
} cg_tpl_node;

typedef struct cg_template {
    const char *file;
    const cg_doc *doc;
    const cg_tree *tree;       /* names are resolved against this tree */
    cg_tpl_node invoke;        /* the key: the job to invoke */
    cg_tpl_node args;          /* its value: a mapping (maybe empty) */
    int name_arg;              /* index of a `name:` argument pair, or -1 */
    bool no_name;              /* `name: ~`: write no `name:` (the job is named like the job it runs) */
    bool has_filters;
    int filters_arg;           /* index of the `filters:` argument pair, or -1 */
    bool is_default;           /* made for a phase without 'template' (no file) */
} cg_template;

/* Compiles a loaded template for one tree (pooled). */
cg_template *cg_template_compile(const cg_doc *doc, const cg_tree *t, cg_pool *pool, cg_error *err);

/* The default template of phase `phase` of `t`, which names no 'template':
 * it invokes the job named like the phase with every dimension and then
 * every variable of the tree, in the tree's order, as an optional argument
 * of the same name (`os?: "{{ os }}"`: a cell that does not set it passes
 * nothing).  Its doc is the tree's and every node's path the phase's, so
 * whatever is reported about it points at the phase (pooled). */
cg_template *cg_template_default(const cg_tree *t, size_t phase, cg_pool *pool);

#endif
