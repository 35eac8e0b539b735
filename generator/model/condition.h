/* condition — CircleCI's logic statements (a workflow's `when` and
 * `unless`) evaluated on what a pipeline knows when it starts, so that
 * `cigen select` picks no job of a workflow CircleCI will not run and can
 * say why.
 *
 * Known pipeline values: `pipeline.parameters.NAME` (the value given, or
 * the declaration's default), `pipeline.schedule.name`, `pipeline.git.branch`
 * and `pipeline.git.tag` (empty when the pipeline has none).  Statements:
 * a value (truthy unless false, null, 0, "" — CircleCI's rule), `and`, `or`,
 * `not`, `equal`.  Anything else (`matches`: a Java regular expression;
 * other pipeline values) is unknown: the workflow keeps its jobs and
 * CircleCI decides, since the continuation config keeps the statement.
 * Pure: values in, verdict out.
 */
#ifndef CIGEN_CONDITION_H
#define CIGEN_CONDITION_H

#include <jansson.h>

#include "base/strbuf.h"
#include "lang/yamlload.h"

typedef struct cg_pipeline_values {
    json_t *parameters;      /* name -> value (given, else the default); borrowed */
    const char *schedule;    /* "" when not scheduled */
    const char *branch;      /* "" when none (a tag) */
    const char *tag;         /* "" when none */
    int source;              /* what pipeline.trigger_source is known to be */
} cg_pipeline_values;

/* cg_pipeline_values.source: CircleCI sets pipeline.trigger_source to
 * `scheduled_pipeline` for a scheduled pipeline; a push has another value
 * (`webhook`, or the GitHub App's own), so only "not scheduled_pipeline" is
 * known of it. */
enum { CG_SOURCE_UNKNOWN = 0, CG_SOURCE_PUSH, CG_SOURCE_SCHEDULED_PIPELINE };

/* Adds to `into` the default of each pipeline parameter `doc` declares
 * (its top-level `parameters:`), typed as its declaration says: a boolean's
 * or an integer's as YAML reads it, every other as the text written. */
void cg_parameter_defaults(const cg_doc *doc, json_t *into);

/* The value of pipeline parameter `name` given as `text`, typed by its
 * declaration in `decls` (name -> declaration: boolean, integer, enum,
 * string): a new reference, or NULL with the error in *msg ("--parameter
 * 'x': ..."; an undeclared name suggests a declared one). */
json_t *cg_parameter_given(json_t *decls, const char *name, const char *text, cg_strbuf *msg);

enum { CG_COND_FALSE = 0, CG_COND_TRUE = 1, CG_COND_UNKNOWN = -1 };

/* The truth of `stmt`; on CG_COND_UNKNOWN, *why (when not NULL) gets what
 * could not be evaluated ("'pipeline.trigger_source' is not known when the
 * pipeline starts"). */
int cg_condition_eval(json_t *stmt, const cg_pipeline_values *pv, cg_strbuf *why);

#endif
