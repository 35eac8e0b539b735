/* lists — files of named value lists that several trees share.
 *
 *   # dimensions/lists.yml, named by the manifest's `lists:`
 *   cuda: [cpu, cu92, cu100]
 *   python: ["3.6", "3.7", "3.8"]
 *
 * A tree uses one where it would write the values: `cuda: {list: cuda}`, or
 * spliced into a list, `cuda: [cpu, {list: gpu_cuda}]`.  The values stay
 * where the tree puts them, so sharing a list never changes what multiplies
 * or the order of the cells; each value keeps its position in the list file.
 * A list may also be a variable's column of a `zip` (`numpy: {list: numpy}`);
 * only there may it repeat a value (the tree checks a dimension's values).
 */
#ifndef CIGEN_LISTS_H
#define CIGEN_LISTS_H

#include <stddef.h>

#include "base/diag.h"
#include "base/map.h"
#include "base/pool.h"
#include "lang/yamlload.h"

typedef struct cg_list {
    const char *name;
    cg_pos pos;             /* of its key */
    const char **values;    /* interned */
    cg_pos *value_pos;
    size_t n;
    unsigned uses;          /* how many places use it (counted by the trees' parser) */
} cg_list;

typedef struct cg_lists {
    cg_list *v;
    size_t n, cap;
    cg_map by_name;         /* name -> index + 1 */
} cg_lists;

void cg_lists_init(cg_lists *l);
void cg_lists_release(cg_lists *l);

/* Adds the lists of one loaded file (a mapping of names to lists of
 * strings); a name defined twice, in this file or an earlier one, is an
 * error (a value listed twice is not: see above).  Strings live in `pool`. */
int cg_lists_add(cg_lists *l, const cg_doc *doc, cg_pool *pool, cg_error *err);

/* The list named `name`, or NULL. */
cg_list *cg_lists_find(const cg_lists *l, const char *name);

#endif
