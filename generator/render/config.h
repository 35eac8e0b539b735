/* config — the whole config.yml, rendered from the model.
 *
 *   header (render/header.h) + the fragments, verbatim, with the generated
 *   workflows written in their place (render/assemble.h, render/entry.h)
 *
 * A pure function of the model: bytes and the line map out, no file read,
 * no thread started.  Rendering stops with an error once the workflows grow
 * past four times 'limits: max_config_bytes' (lint refuses the config past
 * the limit itself).
 */
#ifndef CIGEN_CONFIG_H
#define CIGEN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/digest.h"
#include "model/model.h"
#include "render/assemble.h"
#include "render/entry.h"

typedef struct cg_config {
    cg_strbuf config;         /* config.yml */
    size_t header_len;        /* bytes of the generated header */
    cg_linemap linemap;       /* config.yml's lines -> sources */
    char body_digest[41];
} cg_config;

void cg_config_init(cg_config *c);
void cg_config_release(cg_config *c);

/* Renders the model into *out (observer may be NULL). */
int cg_config_render(const cg_model *m, const cg_entry_observer *observer, cg_config *out, cg_error *err);

#endif
