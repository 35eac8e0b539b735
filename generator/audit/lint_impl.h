/* lint_impl — what the parts of lint share (audit/lint.c: findings, the
 * generated entries, limits and the result; audit/lint_defs.c: definitions
 * and parameter values; audit/lint_workflows.c: workflow names, requires and
 * cycles; audit/lint_refs.c: the `<< ... >>` CircleCI fills in); each part
 * defines the helpers of its concern.  Internal to
 * audit/lint*.c: the public interface is audit/lint.h.
 */
#ifndef CIGEN_LINT_IMPL_H
#define CIGEN_LINT_IMPL_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/expand.h"
#include "model/model.h"
#include "render/config.h"
#include "lang/schema.h"
#include "lang/template.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"

/* audit/lint.h's (not included: a module and its parts never include each
 * other) */
typedef struct cg_lint cg_lint;
typedef struct cg_def cg_def;

static const char *const builtin_steps[] = {
    "run", "checkout", "setup_remote_docker", "save_cache", "restore_cache", "deploy",
    "store_artifacts", "store_test_results", "persist_to_workspace", "attach_workspace",
    "add_ssh_keys", "when", "unless"};
static const char *const invocation_keys[] = {
    "requires", "name", "context", "filters", "matrix", "type", "pre-steps", "post-steps",
    "serial-group", "override-with", "plan_name", "key"};

static inline bool one_of(const char *s, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cg_streq(s, v[i]))
            return true;
    return false;
}

static inline bool templated(const char *s)
{
    return s && strstr(s, "<<") && strstr(s, ">>");
}

/* A tag-filtered job requiring one without tag filters (lint_workflows.c). */
void cg_lint_check_tag_traps(cg_lint *l);

void cg_lint_add(cg_lint *l, bool error, const char *code, const cg_pos *pos, const cg_pos *note_pos,
                 const char *note, int job, int wf, const char *fmt, ...) __attribute__((format(printf, 9, 10)));

void cg_lint_hint(cg_strbuf *out, const char *word, const cg_def *defs, size_t n, const char *const *more,
    size_t nmore);

/* " (did you mean 'x'?)" over the names of a `parameters:` mapping (NULL: none). */
void cg_lint_param_hint(cg_strbuf *out, const char *word, json_t *params);

void cg_lint_collect(cg_lint *l, const char *section, cg_def **out, size_t *n, cg_map *index);

cg_def *cg_lint_find(cg_def *defs, const cg_map *index, const char *name);

bool cg_lint_orb_ok(cg_lint *l, const char *ref, const cg_pos *pos, const char *what);

/* A parameter's type, as one letter: s string, b boolean, i integer,
 * e enum, S steps, x executor, 0 anything else. */
char cg_lint_type_code(json_t *pdef);
/* Whether job definition `job` runs `executor: << parameters.NAME >>`: a
 * parameter that names an executor whatever its declared type (a string
 * one, as many configs declare it). */
bool cg_lint_executor_param(json_t *job, const char *name);

/* Why `value` does not fit the parameter (NULL when it does). */
const char *cg_lint_misfit(json_t *pdef, char kind, const char *text, bool typed, cg_strbuf *why);

/* Arguments given in a loaded file (`given`, at doc/path) against the
 * parameters a job or command definition (`def`) declares. `what`/`target`:
 * "job 'x'", for messages. */
void cg_lint_check_args(cg_lint *l, const char *what, const char *target, json_t *def, json_t *given,
                        const cg_doc *doc, const char *path, const cg_pos *at, bool skip_invocation_keys,
                        json_t *matrix_params);

unsigned cg_lint_depth_of(json_t *v);

void cg_lint_check_definitions(cg_lint *l);

void cg_lint_check_workflows(cg_lint *l);

/* The definition a text is in, for its `<< parameters.X >>`. */
typedef struct cg_ref_scope {
    json_t *params;      /* its `parameters:` (NULL: none) */
    const char *what;    /* "job", "command", "executor" */
    const char *name;
} cg_ref_scope;

/* Checks each `<< name >>` of s, written at pos (sc: the definition it is
 * in, or NULL outside one); job, wf, note: as for cg_lint_add. */
void cg_lint_refs(cg_lint *l, const char *s, const cg_pos *pos, const cg_ref_scope *sc, int job, int wf,
                  const cg_pos *note_pos, const char *note);

/* The references of the fragments and of the manifest's workflows' `when`. */
void cg_lint_check_refs(cg_lint *l);

/* The references in the constant text of the templates' nested arguments
 * (once every template is loaded: after rendering). */
void cg_lint_check_templates_refs(cg_lint *l);

/* lint_project.c: the checks of the whole project, in cg_lint_finish's order */
void cg_lint_check_version(cg_lint *l);
void cg_lint_check_spaced_values(cg_lint *l);
void cg_lint_check_on_request(cg_lint *l);
void cg_lint_check_unused(cg_lint *l);
void cg_lint_check_idle(cg_lint *l);
void cg_lint_check_limits(cg_lint *l);

#endif
