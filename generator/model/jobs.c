#include "model/jobs.h"

#include <stdlib.h>
#include <string.h>

typedef struct cell_jobs {
    bool *skipped;        /* [nphases] */
    const char **names;   /* [nphases] */
    int *job;             /* [nphases]: index in jobs, or -1 */
} cell_jobs;

const cg_job *cg_jobs_find(const cg_jobs *jobs, const char *name)
{
    size_t i = cg_index_get(&jobs->by_name, name, strlen(name));
    return i ? &jobs->v[i - 1] : NULL;
}

static const char *job_name_at(const void *ctx, uint32_t id)
{
    return ((const cg_jobs *)ctx)->v[id].name;
}

void cg_jobs_release(cg_jobs *jobs)
{
    free(jobs->v);
    cg_index_release(&jobs->by_name);
    memset(jobs, 0, sizeof *jobs);
}

/* Bits of the tree's tiers named by a workflow's list. */
static uint64_t tier_mask(const cg_tree *t, const char *const *names, size_t n)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t->ntiers; k++)
            if (cg_streq(t->tiers[k].name, names[i]))
                mask |= (uint64_t)1 << k;
    return mask;
}

/* The requires of the job being built, before they go to the pool. */
typedef struct req_buf {
    const char **name;
    const cg_pos **pos;
    int32_t *job;
    size_t cap;
} req_buf;

static int add_require(cg_job *j, const char *name, int32_t job, const cg_pos *pos, req_buf *b)
{
    for (uint32_t i = 0; i < j->nrequires; i++)
        if (b->name[i] == name || cg_streq(b->name[i], name))
            return 0;
    if (j->nrequires >= b->cap)
        return -1;
    b->name[j->nrequires] = name;
    b->pos[j->nrequires] = pos;
    b->job[j->nrequires] = job;
    j->nrequires++;
    return 0;
}

/* Adds the jobs that phase `p` requires (looking through skipped phases). */
static int resolve_requires(const cg_tree *t, cg_jobs *jobs, cg_job *j, const cell_jobs *cj, size_t p,
                            const cg_pos *origin, req_buf *b, unsigned depth, cg_error *err)
{
    const cg_phase *ph = &t->phases[p];
    if (depth > t->nphases)
        return 0; /* cycles were rejected when parsing */
    for (size_t r = 0; r < ph->nrequires; r++) {
        const cg_pos *at = origin ? origin : &ph->requires_pos[r];
        int q = ph->requires_phase[r];
        if (q < 0) {
            add_require(j, ph->requires[r], -1, at, b);
            continue;
        }
        if (cj->skipped[q]) {
            if (resolve_requires(t, jobs, j, cj, (size_t)q, at, b, depth + 1, err) != 0)
                return -1;
            continue;
        }
        if (cj->job[q] < 0)
            return cg_error_at(err, at,
                               "job '%s' requires phase '%s', but that phase has no job for this cell "
                               "(it lands in no workflow)", j->name, t->phases[q].name);
        const cg_job *dep = &jobs->v[cj->job[q]];
        uint64_t missing = j->workflows & ~dep->workflows;
        if (missing)
            return cg_error_at(err, at,
                               "job '%s' requires '%s', which is not in every workflow '%s' is in; "
                               "list the same workflows for phases '%s' and '%s'",
                               j->name, dep->name, j->name, t->phases[j->phase].name, t->phases[q].name);
        add_require(j, dep->name, cj->job[q], at, b);
    }
    return 0;
}

int cg_jobs_build(cg_jobs *jobs, const cg_tree *t, const cg_cells *cells, const cg_manifest *m,
                  cg_pool *pool, size_t *skipped, cg_error *err)
{
    if (m->nworkflows > 64)
        return cg_error_at(err, &m->workflows[64].pos, "cigen supports at most 64 workflows");
    uint64_t *ungated = cg_xcalloc(m->nworkflows + 1, sizeof *ungated);
    uint64_t *gated = cg_xcalloc(m->nworkflows + 1, sizeof *gated);
    bool *all = cg_xcalloc(m->nworkflows + 1, sizeof *all);
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        all[w] = wd->ntiers == 0 && wd->non_request == 0;
        ungated[w] = tier_mask(t, wd->tiers, wd->ntiers);
        gated[w] = tier_mask(t, wd->on_request, wd->non_request);
    }
    size_t np = t->nphases;
    cell_jobs cj = {cg_xcalloc(np, sizeof *cj.skipped), cg_xcalloc(np, sizeof *cj.names),
                    cg_xcalloc(np, sizeof *cj.job)};
    size_t cap = 0;
    for (size_t p = 0; p < np; p++)
        cap += t->phases[p].nrequires;
    cap = cap * np + 1;
    req_buf rb = {cg_xmalloc(cap * sizeof *rb.name), cg_xmalloc(cap * sizeof *rb.pos),
                  cg_xmalloc(cap * sizeof *rb.job), cap};
    cg_env env;
    cg_env_init(&env, t, err);
    cg_strbuf name = CG_STRBUF_INIT;
    int rc = 0;
    if (!jobs->by_name.key_of)
        cg_index_init(&jobs->by_name, job_name_at, jobs);
    cg_index_reserve(&jobs->by_name, jobs->n + cells->nlive * np); /* at most one job per live cell and phase */
    for (size_t c = 0; c < cells->n && rc == 0; c++) {
        const cg_cell *cell = &cells->v[c];
        if (cell->status != CG_CELL_LIVE)
            continue;
        if ((rc = cg_env_bind(&env, cell)) != 0)
            break;
        size_t first_job = jobs->n;
        for (size_t p = 0; p < np && rc == 0; p++) {
            const cg_phase *ph = &t->phases[p];
            cj.job[p] = -1;
            cj.skipped[p] = false;
            for (size_t s = 0; s < ph->nskip && !cj.skipped[p]; s++) {
                if (cg_pattern_matches(ph->skip[s], &env)) {
                    cj.skipped[p] = true;
                    ph->skip[s]->hits++;
                }
            }
            bool kept = ph->nonly == 0;
            for (size_t s = 0; s < ph->nonly; s++)
                if (cg_pattern_matches(ph->only[s], &env)) {
                    kept = true;
                    ph->only[s]->hits++;
                }
            cj.skipped[p] = cj.skipped[p] || !kept;
            if (cj.skipped[p] && skipped)
                skipped[p]++;
            if (err->set) {
                rc = -1;
                break;
            }
            if (cj.skipped[p])
                continue;
            uint64_t in = 0, gate = 0;
            for (size_t k = 0; k < ph->nworkflows; k++) {
                int w = ph->workflows[k];
                uint64_t bit = (uint64_t)1 << w;
                if (all[w] || (cell->tiers & ungated[w]))
                    in |= bit;
                else if (cell->tiers & gated[w])
                    in |= bit, gate |= bit;
            }
            if (!in)
                continue;
            cg_strbuf_reset(&name);
            cg_env_set_builtin(&env, CG_B_PHASE, ph->name, false);
            bool own = ph->job_name.nsegs > 0;
            if ((rc = cg_env_expand(&env, own ? &ph->job_name : &t->job_name, CG_EXPAND_NAME, t, &name,
                                    own ? &ph->job_name_src : &t->job_name_src, "the job name pattern")) != 0)
                break;
            if (name.len == 0) {
                rc = cg_error_at(err, own ? &ph->job_name_src.pos : &t->job_name_src.pos,
                                 "the job name pattern gives an empty name");
                break;
            }
            /* names are unique (a duplicate is an error), so one lookup that
             * inserts serves for both the check and the index */
            const char *jname = cg_pool_strndup(pool, name.buf, name.len);
            cg_grow(&jobs->v, &jobs->cap, jobs->n + 1, sizeof *jobs->v);
            jobs->v[jobs->n].name = jname; /* the index reads names from the array */
            size_t dup = cg_index_add(&jobs->by_name, (uint32_t)jobs->n);
            const cg_job *other = dup ? &jobs->v[dup - 1] : NULL;
            if (other) {
                cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
                cg_cell_describe(t, cell, &a);
                cg_cell_describe(other->tree, other->cell, &b);
                /* point at what tells the two apart and the name loses:
                 * the first differing value, else the pattern */
                cg_pos here = cell->leaf->pos, there = other->cell->leaf->pos;
                if (other->tree == t) {
                    size_t d = 0;
                    while (d < t->ndims && (cell->values[d] == other->cell->values[d] ||
                                            (cell->values[d] && other->cell->values[d] &&
                                             cg_streq(cell->values[d], other->cell->values[d]))))
                        d++;
                    if (d < t->ndims) {
                        cg_pos h = cg_cell_value_pos(cell, (int)d), o = cg_cell_value_pos(other->cell, (int)d);
                        if (h.line && o.line)
                            here = h, there = o;
                    } else if (other->cell == cell) {
                        /* one cell, two phases: the pattern lacks {{ phase }} */
                        here = own ? ph->job_name_src.pos : t->job_name_src.pos;
                        there = here;
                    }
                }
                cg_error_at(err, &here, "two jobs are named '%s' (this one from cell %s, phase '%s')",
                            jname, a.buf, ph->name);
                cg_error_note(err, &there, "the other comes from cell %s, phase '%s'", b.buf,
                              other->tree->phases[other->phase].name);
                cg_strbuf_release(&a);
                cg_strbuf_release(&b);
                rc = -1;
                break;
            }
            cg_job *j = &jobs->v[jobs->n];
            memset(j, 0, sizeof *j);
            j->name = jname;
            j->tree = t;
            j->cell = cell;
            j->phase = (uint32_t)p;
            j->index = (uint32_t)jobs->n;
            j->workflows = in;
            j->gated = gate;
            cj.job[p] = (int)jobs->n;
            jobs->n++;
        }
        /* requires, now that every phase of the cell has its job */
        for (size_t k = first_job; k < jobs->n && rc == 0; k++) {
            cg_job *j = &jobs->v[k];
            j->nrequires = 0;
            rc = resolve_requires(t, jobs, j, &cj, j->phase, NULL, &rb, 0, err);
            if (rc == 0 && j->nrequires) {
                const char **names = cg_pool_alloc(pool, j->nrequires * sizeof *names);
                const cg_pos **pos = cg_pool_alloc(pool, j->nrequires * sizeof *pos);
                int32_t *idx = cg_pool_alloc(pool, j->nrequires * sizeof *idx);
                memcpy(names, rb.name, j->nrequires * sizeof *names);
                memcpy(pos, rb.pos, j->nrequires * sizeof *pos);
                memcpy(idx, rb.job, j->nrequires * sizeof *idx);
                j->requires = names;
                j->requires_pos = pos;
                j->requires_job = idx;
            }
        }
    }
    cg_strbuf_release(&name);
    cg_env_release(&env);
    free(cj.skipped);
    free(cj.names);
    free(cj.job);
    free(rb.name);
    free(rb.pos);
    free(rb.job);
    free(ungated);
    free(gated);
    free(all);
    return rc;
}

const char *cg_static_entry_name(json_t *entry)
{
    if (json_is_string(entry))
        return json_string_value(entry);
    const char *k = NULL;
    json_t *v;
    json_object_foreach(entry, k, v) {
        json_t *n = json_is_object(v) ? json_object_get(v, "name") : NULL;
        return json_is_string(n) ? json_string_value(n) : k;
    }
    return NULL;
}

int cg_jobs_check_requires(const cg_jobs *jobs, const cg_manifest *m, cg_error *err)
{
    for (size_t k = 0; k < jobs->n; k++) {
        const cg_job *j = &jobs->v[k];
        for (uint32_t r = 0; r < j->nrequires; r++) {
            const char *need = j->requires[r];
            const cg_job *dep = j->requires_job[r] >= 0 ? &jobs->v[j->requires_job[r]] : cg_jobs_find(jobs, need);
            for (size_t w = 0; w < m->nworkflows; w++) {
                if (!(j->workflows & ((uint64_t)1 << w)))
                    continue;
                if (dep && (dep->workflows & ((uint64_t)1 << w)))
                    continue;
                bool found = false;
                json_t *st = m->workflows[w].jobs;
                for (size_t i = 0; st && i < json_array_size(st) && !found; i++)
                    found = cg_streq(cg_static_entry_name(json_array_get(st, i)), need);
                if (found)
                    continue;
                cg_error_at(err, j->requires_pos[r],
                            "job '%s' requires '%s', but workflow '%s' has no job of that name", j->name,
                            need, m->workflows[w].name);
                cg_error_note(err, &m->workflows[w].pos, "workflow '%s' is declared here; add '%s' to its 'jobs' "
                              "or fix the name", m->workflows[w].name, need);
                return -1;
            }
        }
    }
    /* generated names must not collide with static entries of their workflows */
    for (size_t w = 0; w < m->nworkflows; w++) {
        json_t *st = m->workflows[w].jobs;
        for (size_t i = 0; st && i < json_array_size(st); i++) {
            const char *sn = cg_static_entry_name(json_array_get(st, i));
            const cg_job *j = sn ? cg_jobs_find(jobs, sn) : NULL;
            if (j && (j->workflows & ((uint64_t)1 << w))) {
                cg_error_at(err, &j->cell->leaf->pos, "generated job '%s' has the name of a job listed in workflow '%s'",
                            sn, m->workflows[w].name);
                cg_strbuf p = CG_STRBUF_INIT;
                cg_strbuf_adds(&p, m->workflows[w].path);
                cg_strbuf_adds(&p, "/jobs");
                cg_pos ep = cg_doc_where(m->doc, p.buf);
                cg_strbuf_release(&p);
                cg_error_note(err, &ep, "listed here");
                return -1;
            }
        }
    }
    return 0;
}
