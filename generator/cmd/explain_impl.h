/* explain_impl.h — what the parts of `cigen explain` share (cmd/explain.c:
 * the command and a generated job; explain_cell.c: --cell; explain_lookup.c:
 * any other name).  Not a public header. */
#ifndef CIGEN_EXPLAIN_IMPL_H
#define CIGEN_EXPLAIN_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "model/env.h"
#include "model/query.h"
#include "model/walk.h"

/* "file:line:col" of p, appended to sb. */
void cg_explain_pos(cg_strbuf *sb, const cg_pos *p);

/* --cell, a cell at a time, from the whole model or a walk (model/walk.h):
 * cell_tree, each cell (cell_one) with its jobs after it (cell_job), then
 * cell_tree_end; cell_done at the end. */
typedef struct cg_explain_cells {
    const cg_qgroup *g;
    cg_strbuf *out;
    size_t shown;
    const cg_tree *t;          /* the tree being read, when the spec names only its dimensions */
    bool open;                 /* a live cell's "its jobs:" line is being written */
    size_t nj;
    cg_strbuf *vals;           /* [g->n]: the values of a term's dimension where the others match */
    size_t *nv;
} cg_explain_cells;

/* A job a fragment defines: where, and what runs it (static entries,
 * generated entries by tree and phase, verbatim workflows of fragments). */
/* The generated entries that run a fragment's job, counted per tree and
 * phase: how many, in which workflows. */
typedef struct cg_explain_frags {
    cg_strbuf inv;
    size_t ntrees;
    size_t **count;            /* [ntrees][nphases] */
    uint64_t **wf;
} cg_explain_frags;

/* explain JOB from a walk of the jobs (model/walk.h): the job asked for,
 * copied out of the walk (its cell's arrays, its requires' names); until it
 * is found, what explain_skipped and cg_suggest would say if it is not. */
typedef struct cg_explain_find {
    const char *name;
    cg_pool *pool;
    bool found;
    cg_job job;
    cg_cell cell;
    int skipped;               /* explain_skipped's answer so far (1: in skip_text) */
    cg_strbuf skip_text, jn;
    char *suggest;             /* cg_suggest's over the jobs so far */
    size_t suggest_d, suggest_max;
    /* a fragment's job: the generated entries that run it, counted */
    const cg_model *m;
    int frag;                  /* -1: not known yet; 1: the name is a fragment's job */
    cg_explain_frags fc;
    cg_env env;                /* of env_tree, bound to its cell env_cell */
    const cg_tree *env_tree;
    uint32_t env_cell;
    cg_error env_err;
} cg_explain_find;

void cg_explain_cells_init(cg_explain_cells *E, const cg_query *q, cg_strbuf *out);
void cg_explain_cells_release(cg_explain_cells *E);
/* 0 when a cell matched, else what exists said into E's out and 1. */
int cg_explain_cells_done(cg_explain_cells *E);
/* The walker that says the cells as they are walked. */
cg_walker cg_explain_cells_walker(cg_explain_cells *E);
/* The same from the whole model: 0 when a cell matched, else 1. */
int cg_explain_cells_of_model(const cg_model *m, const cg_query *q, cg_strbuf *out);

/* name NULL: --cell (nothing is looked up). */
void cg_explain_find_init(cg_explain_find *F, const char *name, cg_model *m);
void cg_explain_find_release(cg_explain_find *F);
cg_walker cg_explain_find_walker(cg_explain_find *F);
/* A static entry of the manifest's workflows named `name`: said, true. */
bool cg_explain_static(const cg_model *m, const char *name, cg_strbuf *out);
/* A job a fragment defines: said, 1 (fc: the walk's count, or NULL to count
 * on the model); 0 when no fragment defines it; -1 on error. */
int cg_explain_fragment_job(const cg_model *m, const char *name, cg_explain_frags *fc, cg_strbuf *out, cg_error *err);
/* A job a phase's skip or only removed: said, 1; 0 if none; -1 on error. */
int cg_explain_skipped(const cg_model *m, const char *name, cg_strbuf *out, cg_error *err);

#endif
