/* dynamic — the manifest's `pipeline:` section: how a pipeline picks its jobs.
 *
 *   pipeline:
 *     mode: dynamic                 # classic (the default): one config.yml
 *     continuation: continuation.yml  # dynamic: every job (the default name);
 *                                   # `output` becomes the setup config that picks from it
 *     project: .circleci            # the project folder from the repository's root
 *                                   # (default: from `output`, which must then be
 *                                   # config.yml or end in .circleci/config.yml)
 *     image: cimg/base:2024.01      # the setup job's docker image
 *     install: make build/cigen     # how the setup job gets cigen (required in
 *     cigen: build/cigen            # dynamic mode) and runs it, from the root
 *     cache:                        # optional: the setup job caches what install makes
 *       key: scripts/get-cigen.sh --key   # run with a file's path appended: writes the key
 *       path: ~/.cache/cigen        # saved and restored under that file's {{ checksum }}
 *     base_branch: main             # changed files are taken against it
 *     schedules: pipelines          # classic: a scheduled workflow runs in the scheduled
 *                                   # pipeline named like it (when:), not by its cron
 *                                   # trigger (triggers, the default)
 *     run_all: [main, nightly]      # branches that run every job
 *     paths:                        # changed files -> the jobs they call for
 *       - {changed: "scripts/binary_macos_*.sh", select: os=macos}
 *       - {changed: "*.md", select: none}
 *
 * The rules themselves are applied by model/pick.h.
 */
#ifndef CIGEN_DYNAMIC_H
#define CIGEN_DYNAMIC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/pool.h"
#include "lang/yamlload.h"

typedef struct cg_path_rule {
    const char *glob;      /* of a changed file, from the repository's root ('*' crosses '/') */
    cg_pos pos;
    const char **select;   /* "all", "none", or patterns (NAME=GLOB,... or a job-name glob) */
    cg_pos *select_pos;
    size_t nselect;
} cg_path_rule;

typedef struct cg_dynamic_decl {
    bool set;              /* the manifest has `pipeline:` */
    bool dynamic;          /* mode: dynamic */
    cg_pos pos;            /* of the `pipeline` key */
    const char *continuation;   /* dynamic: the full continuation config */
    cg_pos continuation_pos;
    const char *project;   /* the project folder, from the repository's root (NULL: from the setup path) */
    bool project_derived;  /* project was derived from `output` (config.yml: .circleci) */
    cg_pos project_pos;
    const char *setup;     /* dynamic: the setup config (the manifest's `output`) */
    cg_pos setup_pos;
    const char *image;
    const char *resource_class;
    const char *install;
    const char *cigen;
    const char *cache_key; /* cache: key: a command that, given a file's path, writes the cache key
                            * there (NULL: no cache) */
    const char *cache_path;     /* cache: path: what install makes, saved and restored */
    const char *base_branch;
    bool scheduled_pipelines;   /* schedules: pipelines (classic mode): a scheduled workflow runs when its
                                 * scheduled pipeline, named like it, starts, not by a trigger */
    cg_pos schedules_pos;
    const char **run_all;  /* branch globs on which every job of the per-change workflow runs */
    cg_pos *run_all_pos;
    size_t nrun_all;
    cg_path_rule *paths;
    size_t npaths;
} cg_dynamic_decl;

/* Parses `pipeline:` (v, at doc path "/pipeline"); strings are borrowed
 * from doc or live in pool. */
int cg_dynamic_parse(const cg_doc *doc, cg_pool *pool, json_t *v, cg_dynamic_decl *d, cg_error *err);

#endif
