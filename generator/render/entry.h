/* entry — one generated workflow entry, written from its template.
 *
 * cigen adds `name:` (the job name), `requires:` (from the phase) and, when
 * the workflow filters branches per job, `filters:`.  An observer (lint)
 * may watch each argument as it is written, without the renderer knowing
 * what it does with them.
 */
#ifndef CIGEN_ENTRY_H
#define CIGEN_ENTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/template.h"
#include "lang/yamlwrite.h"
#include "model/expand.h"

/* Sees the entries as they are rendered: begin (the job it invokes), then
 * each argument, then end.  For arg: its key as rendered (`key_id`, the
 * key's template node when the key is constant, lets the observer remember
 * what it found; the key text must then outlive the entry), the template
 * paths of key and value, for scalars the rendered text and whether it is
 * typed, and, for a value that is one placeholder, the name (`source_id` in
 * `env`, else -1) whose value it is. */
typedef struct cg_entry_observer {
    void (*begin)(void *ctx, const cg_template *tpl, int job, int workflow, const char *invoke);
    void (*arg)(void *ctx, const void *key_id, const char *key, const char *key_path, char kind, const char *text,
                bool typed, const char *value_path, cg_env *env, int source_id);
    void (*end)(void *ctx);
    void *ctx;
} cg_entry_observer;

typedef struct cg_render_job {
    const char *name;
    const char *const *requires;
    size_t nrequires;
    const cg_ref_filter *branches; /* per-job filters to add, or NULL */
    const cg_ref_filter *tags;
    bool lift_filters;             /* drop the template's own `filters:` too */
    const struct cg_entry_observer *observer; /* sees each argument as it is written, or NULL */
    int job, workflow;             /* for the observer */
    cg_strbuf *scratch;            /* reused between entries, or NULL */
} cg_render_job;

/* Writes one workflow entry ("- job: {...}") into a sequence of `w`.  The
 * env must be bound to the job's cell with its built-ins set. */
int cg_template_render(const cg_template *tpl, cg_env *env, const cg_render_job *job, cg_yw *w,
                       cg_error *err);

/* Writes `filters:` for branch/tag filters (used for static entries too). */
void cg_write_filters(cg_yw *w, const cg_ref_filter *branches, const cg_ref_filter *tags);

#endif
