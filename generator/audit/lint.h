/* lint — what CircleCI would reject, found before anyone pushes.
 *
 * Checked on the assembled config, reported at the source that caused it:
 *   - every workflow written has jobs (CircleCI rejects `jobs: []`);
 *   - every job a workflow invokes is defined (or an approval, or from a
 *     declared orb); every `requires` names a job of the same workflow; no
 *     cycles; no duplicate names in a workflow;
 *   - 2.1 parameters: an entry passes only parameters the job declares, of
 *     the declared type (string, boolean, integer, enum, executor, steps), and
 *     every parameter without a default; the same for commands invoked in
 *     steps and executors invoked with arguments;
 *   - referenced executors and commands exist; unused jobs, commands and
 *     executors are warnings;
 *   - `<< ... >>`: `<< pipeline.parameters.X >>` names a declared pipeline
 *     parameter, `<< pipeline.X >>` a pipeline value CircleCI documents,
 *     `<< parameters.X >>` in a job, command or executor one of its own
 *     (fragments, templates, values from the tree, workflows' `when`);
 *   - limits: the size with every alias expanded against the manifest's
 *     `limits.max_config_bytes` (CircleCI: 8 MB; a warning from 90%), jobs per
 *     workflow (`max_jobs`, a warning), nesting depth (a warning).
 *
 * Generated entries are checked as they are rendered (lint is the entry
 * observer of render/entry.h, plugged in by cmd/project.c), so linting
 * costs one pass over the jobs.
 */
#ifndef CIGEN_LINT_H
#define CIGEN_LINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "lang/placeholder.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "lang/yamlload.h"

struct cg_model;
struct cg_config;
struct cg_template;

typedef struct cg_finding {
    bool error;          /* or a warning */
    const char *code;    /* "undefined-job", "bad-parameter", ... */
    cg_pos pos;          /* the source */
    cg_pos note_pos;     /* a second place, or file NULL */
    char *note;
    cg_pos note2_pos;    /* a third place, or file NULL */
    char *note2;
    char *message;
    int job, workflow;   /* a generated entry, for the config line; -1 when not */
    size_t repeats;      /* identical findings folded into this one */
    uint32_t out_line;   /* the line of config.yml, once known (0: none) */
} cg_finding;

/* A definition (job, command, executor) from a fragment. */
typedef struct cg_def {
    const char *name;
    json_t *value;
    const cg_doc *doc;
    const char *path;
    bool used;
} cg_def;

typedef struct cg_lint {
    const struct cg_model *p;
    const struct cg_config *out; /* the rendered config, once cg_lint_finish runs */
    cg_def *jobs, *commands, *executors;
    size_t njobs, ncommands, nexecutors;
    cg_map job_index, command_index, executor_index; /* name -> index + 1 */
    cg_map orbs;
    json_t *pipeline_params;   /* the fragments' top-level `parameters:` names (values null) */
    cg_finding *v;
    size_t n, cap;
    cg_map seen;         /* folding key -> finding index + 1 */
    cg_pool pool;
    /* the generated entry being rendered */
    const cg_def *entry_job;
    const struct cg_template *entry_tpl;
    int entry_job_index, entry_workflow;
    const char *entry_invoke;
    const char **entry_given;  /* the argument keys of the entry (a handful: a list) */
    size_t entry_ngiven, entry_given_cap;
    bool entry_orb_or_approval;
    /* what lint found about each constant template key, for every job that
     * template makes: an open-addressing table keyed by the key's node */
    struct lint_arg *args;
    size_t nargs, args_cap;
    const char ***required;    /* [njobs]: each job's parameters without a default, NULL-ended */
    size_t nerrors, nwarnings;
    /* set by the command: the output file holds the rendered config (it was
     * in sync, or is being written), so a finding may point at its line;
     * otherwise "config.yml:N" would name a line of some other file */
    bool output_on_disk;
} cg_lint;

void cg_lint_init(cg_lint *l, const struct cg_model *p);
void cg_lint_release(cg_lint *l);

/* What the entry observer (render/entry.h) calls, as each entry is rendered. */
void cg_lint_entry_begin(cg_lint *l, const struct cg_template *tpl, int job, int workflow, const char *invoke);
/* One argument: its key as rendered (`key_id`, the key's template node when
 * the key is constant, lets lint remember what it found; the key text must
 * then outlive the entry), the template paths of key and value, for scalars
 * the rendered text and whether it is typed, and, for a value that is one
 * placeholder, the name (`source_id` in `env`, else -1) whose value it is:
 * a finding is blamed on where that value was written in the tree. */
struct cg_env;
void cg_lint_entry_arg(cg_lint *l, const void *key_id, const char *key, const char *key_path, char kind,
                       const char *text, bool typed, const char *value_path, struct cg_env *env, int source_id);
void cg_lint_entry_end(cg_lint *l);

/* The checks that need everything: definitions, static and verbatim
 * entries, requires, unused definitions, limits.  Call after rendering
 * `out` (which must outlive l). */
void cg_lint_finish(cg_lint *l, const struct cg_config *out);

/* Prints the findings (file:line:col: error: ...) */
void cg_lint_print(const cg_lint *l, cg_strbuf *out);
/* The same, without the warnings when `warnings` is false. */
void cg_lint_print_some(const cg_lint *l, bool warnings, cg_strbuf *out);
json_t *cg_lint_json(const cg_lint *l);

#endif
