/* What the loader (model/load.c) uses of the model's services
 * (model/model.c); not part of model/model.h. */
#ifndef CIGEN_MODEL_IMPL_H
#define CIGEN_MODEL_IMPL_H

#include "model/model.h"

/* Reads and parses a source beneath the project (its identity kept for
 * cg_model_source_kind): the document, owned by the caller, or NULL + err. */
cg_doc *cg_model_load_doc(cg_model *p, const char *rel, const cg_pos *ref, const cg_load_opts *opts,
                          cg_error *err);
/* The same, read once and kept by the model (trees, lists, templates). */
const cg_doc *cg_model_doc(cg_model *p, const char *rel, const cg_pos *ref, cg_error *err);
/* Loads and compiles every template a workflow entry uses, in the order
 * the config renders them (so the first error is the one rendering would
 * meet first): 0, or -1 + err. */
int cg_model_load_templates(cg_model *p, cg_error *err);

#endif
