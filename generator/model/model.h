/* model — everything a manifest names, loaded and expanded, read-only after.
 *
 *   cg_model_load   manifest, fragments, trees -> cells -> jobs, every
 *                   template the jobs use (compiled), the special-PR
 *                   selection applied, the digest of the sources
 *
 * Reading happens here (through io/fsio); once cg_model_load returns, the
 * model is only read: the renderers (render/), the audits (audit/) and the
 * commands (cmd/) take a `const cg_model *`, and any number of threads may
 * read it at once.
 */
#ifndef CIGEN_MODEL_H
#define CIGEN_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/util.h"
#include "lang/fragment.h"
#include "lang/manifest.h"
#include "lang/template.h"
#include "lang/tree.h"
#include "model/expand.h"
#include "model/jobs.h"
#include "model/order.h"
#include "model/special.h"

typedef struct cg_options {
    const char *dir;          /* the project folder (-C); default "." */
    const char *manifest;     /* relative to dir; default "cigen.yml" */
    bool strict;              /* warnings about the sources are errors */
    /* a special-PR selection, in this order of precedence: */
    const cg_special *selection; /* --only/--also flags (may be empty) */
    const char *overlay;      /* --overlay FILE; else special-pr.yml when it exists */
    bool no_overlay;          /* do not look for special-pr.yml */
    const cg_special *fallback; /* used when nothing above selects (check --allow-special) */
    bool fresh_tiers;         /* choose pairwise tiers afresh, not from the committed config's */
    const struct cg_pick_input *pipeline; /* cigen select: pick the jobs of this pipeline
                                               * (model/pick.h) instead of a selection */
    const struct cg_walker *walker; /* walk the cells and jobs, keep none (model/walk.h) */
} cg_options;

/* The overlay cigen picks up by itself when it exists in the project folder
 * (-C DIR; not next to a manifest given with -m sub/m.yml). */
#define CG_DEFAULT_OVERLAY "special-pr.yml"

/* What a special-PR selection did to a job, generated or static. */
enum { CG_MARK_NONE, CG_MARK_SELECTED, CG_MARK_PULLED, CG_MARK_KEPT, CG_MARK_CULLED };
typedef struct cg_mark {
    uint8_t kind;
    int32_t pattern;     /* SELECTED: the pattern (only[] first, then also[]) */
    const char *by;      /* PULLED: the job that requires it; CULLED: a culled job it
                          * requires (NULL: no --only pattern matched it) */
} cg_mark;

/* A static entry of a manifest workflow (`jobs:`), as it is written. */
typedef struct cg_static_job {
    const char *name;        /* the entry's name (`name:` or the job) */
    const char *invokes;     /* the job it runs */
    const char **requires;   /* without the '?' of an optional one */
    const bool *requires_optional; /* [nrequires] written `name?`, or NULL when none is */
    uint32_t nrequires;
    json_t *entry;           /* borrowed from the manifest */
    const char *path;        /* its doc path in the manifest */
    cg_pos pos;
    const char *context;     /* `context:` (credentials), or NULL */
    cg_pos context_pos;
    uint32_t index;          /* its place in the manifest workflow's `jobs` */
    uint32_t workflow;       /* where it is written */
    uint32_t origin;         /* where the manifest lists it (differs for a copy
                              * a selection put into the per-change workflow) */
    bool culled;             /* by a special-PR selection: not written */
    bool lift;               /* run on the pull request: no branch filters */
    bool by_its_job;         /* selected by the job it runs, no pattern naming the entry */
    cg_mark mark;
} cg_static_job;

/* Whether static entry sj's requirement r is optional (written `name?`). */
static inline bool cg_static_require_optional(const cg_static_job *sj, uint32_t r)
{
    return sj->requires_optional && sj->requires_optional[r];
}

typedef struct cg_model {
    cg_options opt;
    char *root;               /* canonical project folder (owned) */
    cg_pool pool;             /* names, paths, compiled templates */
    cg_doc **docs;            /* manifest, trees, templates (owned) */
    size_t ndocs, docs_cap;
    cg_map doc_by_path;       /* relative path -> cg_doc* */
    struct cg_source_id {     /* every source read, by identity: an output */
        cg_file_id id;        /* reached through a linked folder is still */
        const char *rel;      /* known as a source (rel in pool) */
    } *source_ids;
    size_t nsource_ids, source_ids_cap;
    cg_doc *manifest_doc;
    cg_manifest manifest;
    cg_lists lists;           /* the shared value lists of the manifest's `lists` */
    cg_tree **trees;          /* [ntrees], owned */
    cg_cells *cells;          /* [ntrees] */
    size_t ntrees;
    cg_fragment *fragments;
    size_t nfragments;
    cg_jobs jobs;
    cg_wf_order *orders;      /* [nworkflows]: each workflow's entries, in order */
    cg_map templates;         /* "tree-index:path" -> cg_template* */
    const cg_template ***phase_templates; /* [tree][phase]: for constant template paths */
    const cg_template **job_templates; /* [jobs.n]: a job's template, when its path names dimensions only */
    cg_warnings warnings;     /* what load found questionable */
    cg_special selection;   /* the special-PR selection in force (may be empty) */
    cg_static_job *statics;   /* every workflow's static entries, in order; copies a
                               * selection put into the per-change workflow last */
    size_t nstatics;
    cg_mark *marks;           /* [jobs.n]: what the selection did; NULL without one */
    uint64_t omitted;         /* bit w: a selection left workflow w without jobs */
    int per_change;           /* index of the per-change workflow, or -1 */
    struct cg_pick_run *run; /* what opt.pipeline chose (owned), or NULL */
    char sources_digest[41];  /* of every source read, sorted by path */
    cg_tier_prev tier_prev;   /* the pairwise tiers' cells the committed config recorded */
    cg_tier_changes tier_changes; /* cells that entered or left them since */
    struct cg_walk *walk;     /* opt.walker's state (model/walk.c), or NULL */
} cg_model;

void cg_model_init(cg_model *m);
void cg_model_release(cg_model *m);
int cg_model_load(cg_model *m, const cg_options *o, cg_error *err);
/* Reads a source of the project (cg_read_source), remembering which file it
 * was for cg_model_source_kind. */
int cg_model_read_source(cg_model *m, const char *rel, const cg_pos *ref, char **data, size_t *len,
                         bool missing_ok, cg_error *err);

/* What kind of source `rel` is ("the manifest", "a template", ...), or NULL
 * when it is none of the project's sources: by its path, or by the file it
 * resolves to (a linked folder on its path). */
const char *cg_model_source_kind(const cg_model *m, const char *rel);

/* The compiled template of a job in a workflow (loaded by cg_model_load);
 * env must be bound to the job (cg_model_bind_job).  NULL + error when its
 * path does not expand (it did at load, so only for a job no workflow runs). */
/* The template path of a job, expanded (env bound to the job). */
int cg_model_template_path(const cg_model *m, const cg_job *j, cg_env *env, cg_strbuf *out, cg_error *err);
const cg_template *cg_model_template(const cg_model *m, const cg_job *j, cg_env *env, cg_error *err);
/* Loads and compiles (once per path) the templates job j uses in its
 * workflows, as cg_model_load does for every job: for a walk (model/walk.h),
 * where j is gone after.  env is bound to j's cell. */
int cg_model_job_templates(cg_model *m, const cg_job *j, cg_env *env, cg_error *err);

/* Binds env to the job's cell and sets its built-ins (job, phase, cell,
 * workflow, on_request); workflow may be -1. */
int cg_model_bind_job(const cg_model *m, cg_env *env, const cg_job *j, int workflow);

/* Whether workflow w, as written, has an entry named `name` (`job`: the
 * generated job the name is, or -1 to look it up): a generated job landing
 * there, or a static entry no selection culled.  An optional requirement
 * (`name?`) is written where this holds and dropped elsewhere. */
bool cg_model_written_in(const cg_model *m, size_t w, const char *name, int32_t job);
/* Appends " NAME" for each of n requirements (`job`: the generated job each
 * names, or NULL), and for an optional one " NAME? (kept in ci, dropped in
 * nightly)": in each workflow of `workflows`, whether it is written. */
void cg_model_requires_text(const cg_model *m, const char *const *names, const bool *optional, const int32_t *job,
                            uint32_t n, uint64_t workflows, cg_strbuf *out);

#endif
