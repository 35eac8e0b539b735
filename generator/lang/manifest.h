/* manifest — cigen.yml: how config.yml is assembled.
 *
 *   output: config.yml              # the generated CircleCI config
 *   diagrams: diagrams              # folder for the .dot diagrams (optional)
 *   regenerate: ./regenerate.sh     # the command the header and `check` name
 *   fragments: [verbatim-sources/header.yml, ...]   # verbatim YAML, in order
 *   trees: [dimensions/binary_builds.yml, ...]      # dimension trees
 *   lists: [dimensions/lists.yml]   # named value lists the trees share
 *   workflows:                      # the generated workflows, in order
 *     binary_builds:
 *       schedule: "5 5 * * *"       # cron (UTC) -> triggers
 *       branches: [main]            # trigger filter, or per-job filter
 *       tier: nightly               # which cells' jobs land here
 *       jobs: [setup]               # entries written before generated ones
 *       order: phase                # or cell, or [setup, {phase: build}, ...]
 *   protected: ["*_upload"]         # never pulled into a special PR by a requirement
 *   pipeline: {mode: dynamic, continuation: continuation.yml, ...}   # lang/dynamic.h
 *   limits: {max_config_bytes: 8388608, max_jobs_per_workflow: 500,
 *            max_cells: 1000000}    # cells per tree, checked before expanding
 *
 * Every path is relative to the manifest's folder and must stay inside it.
 */
#ifndef CIGEN_MANIFEST_H
#define CIGEN_MANIFEST_H

#define CG_DEFAULT_MAX_CELLS 1000000L
/* jobs of all trees (cells x phases), checked before expanding */
#define CG_DEFAULT_MAX_JOBS 2000000L
/* cells x exclude/only patterns that must be tried on every cell */
#define CG_DEFAULT_MAX_FILTER_TESTS 100000000L
/* a pairwise tier's cells x pairs of its dimensions (what choosing its
 * cells costs: about 0.6 us each, 12 s at the default) */
#define CG_DEFAULT_MAX_PAIR_TESTS 20000000L
/* the bytes of all job names together (each made from its cell's values):
 * counted as they are made, so that a matrix of long values is refused
 * naming the limit instead of running out of memory (256 MiB) */
#define CG_DEFAULT_MAX_NAME_BYTES 268435456L
/* the largest value a limit may be given (10^15): larger is an error, never
 * clamped */
#define CG_LIMIT_CEILING 1000000000000000L

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/util.h"
#include "io/paths.h"
#include "lang/dynamic.h"
#include "lang/ref_regex.h"
#include "lang/yamlload.h"

typedef struct cg_ref_filter {
    const char **only;   /* branch or tag names/regexes, as written */
    size_t nonly;
    const char **ignore;
    size_t nignore;
    cg_pos pos;
    bool set;
    bool only_scalar;    /* written `only: main` (or `branches: main`): written back so */
    bool ignore_scalar;
} cg_ref_filter;

/* A workflow's entries: its static `jobs` then the generated ones cell by
 * cell (CELL, the default), or phase by phase (PHASE), or as `order` lists
 * them (LIST: static entries by name, generated ones by phase). */
enum cg_order { CG_ORDER_CELL, CG_ORDER_PHASE, CG_ORDER_LIST };

typedef struct cg_workflow_decl {
    const char *name;
    cg_pos pos;          /* of its key */
    const char *path;    /* doc path of its mapping */
    json_t *jobs;        /* static entries (borrowed from the doc), or NULL */
    const char *schedule;
    cg_pos schedule_pos;
    cg_ref_filter branches, tags;
    json_t *when;        /* verbatim `when:` (borrowed), or NULL */
    const char **tiers;  /* cells of these tiers land here (none: every cell) */
    cg_pos *tier_pos;
    size_t ntiers;
    const char **on_request; /* cells of these tiers land here gated */
    cg_pos *on_request_pos;
    size_t non_request;
    bool per_change;     /* the workflow special-PR configs put jobs into */
    int order;           /* CG_ORDER_*: the order of its entries */
    json_t *order_list;  /* CG_ORDER_LIST: static names and {phase: ...} (borrowed) */
    cg_pos order_pos;
    const char **keep;   /* static entries a special-PR selection never culls (the consistency check) */
    cg_pos *keep_pos;
    size_t nkeep;
    long max_jobs;       /* lint threshold; 0: the manifest's default */
} cg_workflow_decl;

typedef struct cg_manifest {
    const cg_doc *doc;
    const char *output;
    cg_pos output_pos;
    const char *diagrams;    /* NULL: no diagrams */
    cg_pos diagrams_pos;
    const char *regenerate;
    const char **fragments;
    cg_pos *fragment_pos;
    size_t nfragments;
    const char **trees;
    cg_pos *tree_pos;
    size_t ntrees;
    const char **lists;      /* files of shared value lists (lang/lists.h) */
    cg_pos *list_pos;
    size_t nlists;
    cg_workflow_decl *workflows;
    size_t nworkflows;
    const char *workflows_version; /* `workflows: {version: 2}` (2.0-style), or NULL */
    cg_pos workflows_version_pos;
    const char **idle_jobs;  /* jobs of fragments no workflow runs, on purpose */
    cg_pos *idle_pos;
    size_t nidle;
    const char **idle_commands;  /* commands of fragments nothing uses, on purpose */
    cg_pos *idle_commands_pos;
    size_t nidle_commands;
    const char **idle_executors; /* executors of fragments no job uses, on purpose */
    cg_pos *idle_executors_pos;
    size_t nidle_executors;
    long max_config_bytes;
    long max_jobs_per_workflow;
    long max_cells;           /* per tree: a guard against a matrix that explodes */
    long max_jobs;            /* all trees: cells x phases, checked before expanding */
    long max_filter_tests;    /* per tree: cells x glob filter patterns, checked before expanding */
    long max_pair_tests;      /* per pairwise tier: cells x pairs of its dimensions, checked before expanding */
    long max_name_bytes;      /* all trees: the bytes of the job names, counted as each is made */
    const char **protected;   /* job-name globs: jobs a selection never pulls in */
    cg_pos *protected_pos;
    size_t nprotected;
    cg_dynamic_decl pipeline; /* `pipeline:`; in dynamic mode `output` is the continuation
                                * config and pipeline.setup the manifest's `output` */
} cg_manifest;

/* Parses a loaded manifest; strings live in `pool`.  The manifest borrows
 * from `doc`, which must outlive it. */
int cg_manifest_parse(const cg_doc *doc, cg_pool *pool, cg_manifest *m, cg_error *err);
void cg_manifest_release(cg_manifest *m);

#endif
