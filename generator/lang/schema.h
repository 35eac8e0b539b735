/* schema — checking the shape of loaded YAML (the manifest, trees, templates).
 *
 * Each helper reports at the right position: a wrong type at the value, an
 * unknown key at the key, with a "did you mean" for near misses.  All return
 * 0 on success and -1 after recording an error.
 */
#ifndef CIGEN_SCHEMA_H
#define CIGEN_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

#include "base/diag.h"
#include "lang/yaml_path.h"
#include "lang/yamlload.h"

/* "a mapping", "a list", "a string" (all scalars are strings here) or, for
 * a plain empty scalar such as `key:` with nothing after it, "an empty value". */
const char *cg_kind_name(const cg_doc *doc, const char *path, const json_t *v);

/* `what` names the thing in messages, e.g. "'output'" or "a tree node". */
int cg_expect_object(const cg_doc *doc, const char *path, const json_t *v,
                     const char *what, cg_error *err);
int cg_expect_array(const cg_doc *doc, const char *path, const json_t *v,
                    const char *what, cg_error *err);
int cg_expect_string(const cg_doc *doc, const char *path, const json_t *v,
                     const char *what, cg_error *err);
/* A non-empty string without surrounding blanks. */
int cg_expect_nonempty(const cg_doc *doc, const char *path, const json_t *v,
                       const char *what, cg_error *err);
/* A name: letters, digits, '_' and '-', starting with a letter or '_'. */
int cg_expect_name(const cg_doc *doc, const char *path, const json_t *v,
                   const char *what, cg_error *err);

/* Rejects keys of `obj` that are not in `allowed`; `where` describes the
 * mapping ("in the manifest"). */
int cg_check_keys(const cg_doc *doc, const char *path, const json_t *obj,
                  const char *const *allowed, size_t nallowed, const char *where,
                  cg_error *err);

/* A "did you mean" suffix: " (did you mean 'x'?)" or "". */
void cg_did_you_mean(cg_strbuf *sb, const char *word, const char *const *candidates, size_t n);

/* Positions of a key or value given its parent path. */
cg_pos cg_key_pos(const cg_doc *doc, const char *path, const char *key);
cg_pos cg_val_pos(const cg_doc *doc, const char *path, const char *key);
cg_pos cg_item_pos(const cg_doc *doc, const char *path, size_t index);

#endif
