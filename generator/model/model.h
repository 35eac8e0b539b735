/* project — everything a manifest names, loaded, expanded and rendered.
 *
 *   cg_project_load    manifest, fragments, trees -> cells -> jobs
 *   cg_project_render  jobs + templates + fragments -> config.yml bytes
 *
 * Reading happens here (through fsio); the renderers it calls are pure.
 * Two helper threads may run during cg_project_render: one draws the
 * diagrams (draw_diagrams), reading the loaded project only; the other
 * hashes and writes a streamed config's chunks (bgwrite.h).
 */
#ifndef CIGEN_PROJECT_H
#define CIGEN_PROJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "render/assemble.h"
#include "model/expand.h"
#include "lang/fragment.h"
#include "model/jobs.h"
#include "check/lint.h"
#include "lang/manifest.h"
#include "base/digest.h"
#include "model/special.h"
#include "lang/template.h"
#include "lang/tree.h"

typedef struct cg_options {
    const char *dir;          /* the project folder (-C); default "." */
    const char *manifest;     /* relative to dir; default "cigen.yml" */
    bool strict;              /* warnings about the sources are errors */
    /* a special-PR selection, in this order of precedence: */
    const cg_selection *selection; /* --only/--also flags (may be empty) */
    const char *overlay;      /* --overlay FILE; else special-pr.yml when it exists */
    bool no_overlay;          /* do not look for special-pr.yml */
    const cg_selection *fallback; /* used when nothing above selects (check --allow-special) */
} cg_options;

/* The overlay cigen picks up by itself when it exists in the project folder
 * (-C DIR; not next to a manifest given with -m sub/m.yml). */
#define CG_DEFAULT_OVERLAY "special-pr.yml"

typedef struct cg_project {
    cg_options opt;
    char *root;               /* canonical project folder */
    cg_pool pool;
    cg_doc **docs;            /* manifest, trees, templates (owned) */
    size_t ndocs, docs_cap;
    cg_map doc_by_path;       /* relative path -> cg_doc* */
    cg_doc *manifest_doc;
    cg_manifest manifest;
    cg_tree **trees;
    cg_cells *cells;          /* [ntrees] */
    size_t ntrees;
    cg_fragment *fragments;
    size_t nfragments;
    cg_jobs jobs;
    cg_map templates;         /* "tree-index:path" -> cg_template* */
    const cg_template ***phase_templates; /* [tree][phase]: for constant template paths */
    cg_warnings warnings;
    cg_selection selection;   /* the special-PR selection in force (may be empty) */
    int per_change;           /* index of the per-change workflow, or -1 */
    /* rendered */
    cg_strbuf config;         /* config.yml (only its tail when streamed to a sink) */
    size_t config_size;       /* bytes of config.yml, streamed ones included */
    size_t header_len;        /* bytes of the generated header */
    const struct cg_config_sink *sink; /* set before rendering to stream a large config */
    size_t streamed;          /* bytes of config.yml given to the sink */
    struct cg_bgwrite *bg;    /* hashes and writes the streamed chunks, while rendering */
    cg_sha256 body_sha;       /* of the body, as it is rendered */
    cg_linemap linemap;
    char sources_digest[41];
    char body_digest[41];
    cg_lint lint;             /* the findings about the rendered config */
    bool linted;
    /* the diagrams: render() draws them on a second thread, beside the
     * config, when draw_diagrams is set; else cg_project_diagrams() does */
    bool draw_diagrams;
    bool drawn;
    struct cg_dot_output *diagrams;
    size_t ndiagrams;
    cg_pool diagrams_pool;
} cg_project;

/* Where a large config.yml goes instead of memory: once the config is longer
 * than `keep` bytes, its bytes are given to write() in order as they are
 * rendered (the header first, with placeholder digests), and header() gets
 * the final header, of the same length, at the end. */
typedef struct cg_config_sink {
    size_t keep;
    int (*write)(void *ctx, const char *data, size_t len, cg_error *err);
    int (*header)(void *ctx, const char *data, size_t len, cg_error *err);
    void *ctx;
} cg_config_sink;

void cg_project_init(cg_project *p);
void cg_project_free(cg_project *p);
int cg_project_load(cg_project *p, const cg_options *o, cg_error *err);
int cg_project_render(cg_project *p, cg_error *err);
/* The diagrams of the `diagrams:` folder (see cg_dot_outputs), drawn once:
 * sets *out and returns how many. */
size_t cg_project_diagrams(cg_project *p, const struct cg_dot_output **out);

/* What kind of source `rel` is ("the manifest", "a template", ...), or NULL
 * when it is none of the project's sources. */
const char *cg_project_source_kind(const cg_project *p, const char *rel);

/* Loads (once) a YAML source of the project; NULL + error on failure. */
const cg_doc *cg_project_doc(cg_project *p, const char *rel, const cg_pos *ref, cg_error *err);

/* The template of a job (loaded and compiled on first use). */
const cg_template *cg_project_template(cg_project *p, const cg_job *j, cg_env *env, cg_error *err);

/* Binds env to the job's cell and sets its built-ins (job, phase, cell,
 * workflow, on_request); workflow may be -1. */
int cg_project_bind_job(cg_project *p, cg_env *env, const cg_job *j, int workflow);

/* The index of the tree a job comes from. */
size_t cg_project_tree_index(const cg_project *p, const cg_tree *t);

/* The header lines of config.yml for the given digests (and selection). */
void cg_header_write(cg_strbuf *out, const cg_manifest *m, const cg_selection *special, const char *sources,
                     const char *body);

#endif
