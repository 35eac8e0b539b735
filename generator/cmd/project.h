/* project — what one command run holds: the model, the rendered config,
 * lint's findings about it, and the diagrams.
 *
 *   cg_project_load     the model (model/model.h)
 *   cg_project_render   config.yml (render/config.h), watched by lint
 *                       (audit/lint.h); for a large matrix the diagrams are
 *                       drawn on a second thread meanwhile (render/dot.h)
 *
 * The model is read-only once loaded; everything here after it is the
 * command's state, kept apart from it.
 */
#ifndef CIGEN_PROJECT_H
#define CIGEN_PROJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "audit/lint.h"
#include "model/model.h"
#include "render/config.h"
#include "render/dot.h"

typedef struct cg_project {
    cg_model m;
    cg_config out;            /* config.yml, once rendered */
    cg_lint lint;             /* the findings about the rendered config */
    bool linted;
    /* the diagrams: cg_project_render draws them on a second thread, beside
     * the config, when draw_diagrams is set; else cg_project_diagrams() does */
    bool draw_diagrams;
    bool drawn;
    cg_dot_output *diagrams;
    size_t ndiagrams;
    cg_pool diagrams_pool;
    cg_strbuf setup;          /* dynamic mode: the setup config (render/setup.h), once rendered */
} cg_project;

void cg_project_init(cg_project *p);
void cg_project_release(cg_project *p);
int cg_project_load(cg_project *p, const cg_options *o, cg_error *err);
/* Renders config.yml into p->out and lints it. */
int cg_project_render(cg_project *p, cg_error *err);
/* The diagrams of the `diagrams:` folder (see cg_dot_outputs), drawn once:
 * sets *out and returns how many. */
size_t cg_project_diagrams(cg_project *p, const cg_dot_output **out);

#endif
