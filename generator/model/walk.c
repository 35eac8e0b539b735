/* walk — a model's cells and jobs one at a time (model/walk.h).
 *
 * Each step mirrors the whole load's for the projects walk.h admits: the
 * tiers of cg_tiers_assign (all, listed cells), the jobs of cg_jobs_build
 * (a cell's phases, their names and requires), the checks of
 * cg_jobs_check_requires and the templates of load_templates, cell by cell.
 * One env serves the filters, the tiers, the job names and the templates of
 * a cell, where the whole load binds one per step: the same values, as a
 * variable may use no built-in name but `tree` (lang/ refuses the others),
 * so a cell's variables do not depend on which job bound it first. */
#include "model/walk.h"

#include <stdlib.h>
#include <string.h>

#include "base/fpset.h"
#include "base/hash.h"
#include "base/text.h"
#include "model/cull.h"

/* Fingerprints shared by two job names that a second walk checks name by
 * name; more, and the whole load says whether a name is used twice. */
#define MAX_TWINS 64

struct cg_walk {
    cg_model *m;
    cg_error *err;
    const cg_walker *w;
    /* the tree being walked */
    cg_tree *t;
    size_t ntrees;
    uint64_t *ungated, *gated;  /* [nworkflows]: the tree's tiers a workflow takes */
    bool *all;                  /* [nworkflows]: the workflow takes every cell */
    size_t **skipped;           /* [ntrees][nphases]: live cells a phase does not run for */
    size_t *nlive;              /* [ntrees] */
    /* one cell's jobs, by phase */
    cg_job *jobs;
    cg_strbuf *names;
    bool *has;
    uint64_t runs;
    /* the requires of the job being made */
    cg_requires_buf req;
    uint64_t rseen;             /* phases of the cell already required */
    uint32_t njobs;
    cg_fpset names_seen;        /* of every job name, to find a duplicate */
    /* the second walk, of the names only: the fingerprints two names share,
     * and the names that have one of them */
    uint64_t twins[MAX_TWINS];
    size_t ntwins;
    cg_map twin_names;
    cg_pool twin_pool;
};

void cg_walk_free(struct cg_walk *W)
{
    if (!W)
        return;
    for (size_t i = 0; W->skipped && i < W->ntrees; i++)
        free(W->skipped[i]);
    free(W->skipped);
    free(W->nlive);
    free(W->ungated);
    free(W->gated);
    free(W->all);
    free(W->jobs);
    if (W->names)
        for (size_t p = 0; p < CG_MAX_PHASES; p++)
            cg_strbuf_release(&W->names[p]);
    free(W->names);
    free(W->has);
    cg_requires_release(&W->req);
    cg_fpset_release(&W->names_seen);
    cg_map_release(&W->twin_names);
    cg_pool_release(&W->twin_pool);
    free(W);
}

int cg_walk_begin(cg_model *m, cg_error *err)
{
    const cg_manifest *man = &m->manifest;
    if (man->nworkflows > 64 || m->opt.pipeline || m->opt.overlay ||
        (m->opt.selection && !cg_special_empty(m->opt.selection)) ||
        (m->opt.fallback && !cg_special_empty(m->opt.fallback)))
        return -1;
    for (size_t w = 0; w < man->nworkflows; w++)
        if (man->workflows[w].order == CG_ORDER_LIST)
            return -1;
    /* a static entry's optional requirement (`name?`): kept or dropped by
     * what the whole model writes, and checked against all of its jobs */
    for (size_t w = 0; w < man->nworkflows; w++)
        for (size_t i = 0; man->workflows[w].jobs && i < json_array_size(man->workflows[w].jobs); i++) {
            json_t *e = json_array_get(man->workflows[w].jobs, i);
            json_t *args = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
            json_t *req = json_is_object(args) ? json_object_get(args, "requires") : NULL;
            for (size_t r = 0; r < json_array_size(req); r++) {
                const char *need = cg_requires_item_name(json_array_get(req, r));
                size_t len = need ? strlen(need) : 0;
                if (len > 1 && need[len - 1] == '?')
                    return -1;
            }
        }
    struct cg_walk *W = cg_xcalloc(1, sizeof *W);
    W->m = m;
    W->err = err;
    W->w = m->opt.walker;
    W->ntrees = man->ntrees;
    W->skipped = cg_xcalloc(man->ntrees + 1, sizeof *W->skipped);
    W->nlive = cg_xcalloc(man->ntrees + 1, sizeof *W->nlive);
    W->ungated = cg_xcalloc(man->nworkflows + 1, sizeof *W->ungated);
    W->gated = cg_xcalloc(man->nworkflows + 1, sizeof *W->gated);
    W->all = cg_xcalloc(man->nworkflows + 1, sizeof *W->all);
    W->jobs = cg_xcalloc(CG_MAX_PHASES, sizeof *W->jobs);
    W->names = cg_xcalloc(CG_MAX_PHASES, sizeof *W->names);
    for (size_t p = 0; p < CG_MAX_PHASES; p++)
        cg_strbuf_init(&W->names[p]);
    W->has = cg_xcalloc(CG_MAX_PHASES, sizeof *W->has);
    cg_fpset_init(&W->names_seen);
    cg_map_init(&W->twin_names);
    cg_pool_init(&W->twin_pool);
    m->walk = W;
    return 0;
}

/* Whether the walk can follow the tree cell by cell (see walk.h). */
static bool walkable(const cg_tree *t)
{
    if (t->nphases > CG_MAX_PHASES)
        return false;
    for (size_t k = 0; k < t->ntiers; k++)
        if (t->tiers[k].kind == CG_TIER_PAIRWISE)
            return false;
    for (size_t p = 0; p < t->nphases; p++) {
        if (t->phases[p].aggregate)
            return false;
        /* an optional requirement is kept or dropped by what the whole
         * model writes in each workflow */
        for (size_t r = 0; r < t->phases[p].nrequires; r++)
            if (t->phases[p].requires_optional[r])
                return false;
    }
    return true;
}

/* cg_tiers_assign's tiers that need no other cell: `all` and listed cells. */
static void cell_tiers(cg_tree *t, cg_cell *cell, cg_env *env)
{
    bool live = cell->status == CG_CELL_LIVE;
    for (size_t k = 0; k < t->ntiers; k++) {
        cg_tier *tier = &t->tiers[k];
        uint64_t bit = (uint64_t)1 << k;
        if (tier->kind == CG_TIER_ALL) {
            if (live)
                cell->tiers |= bit;
            continue;
        }
        for (size_t c = 0; c < tier->ncells; c++)
            if (cg_pattern_matches(tier->cells[c], env) && live) {
                cell->tiers |= bit;
                tier->cells[c]->hits++;
            }
    }
}

static void add_require(struct cg_walk *W, cg_job *j, const char *name, int32_t q, const cg_pos *pos)
{
    if (q >= 0) {
        if (W->rseen & ((uint64_t)1 << q))
            return;
        W->rseen |= (uint64_t)1 << q;
    }
    cg_requires_add(&W->req, j, name, q, pos, false);
}

/* cg_jobs_build's requires_of for a cell's job: what phase p requires, looking
 * through the phases that do not run for the cell.  -1 where the whole load
 * reports an error. */
static int requires_of(struct cg_walk *W, cg_job *j, size_t p, const cg_pos *origin, unsigned depth)
{
    const cg_tree *t = W->t;
    const cg_phase *ph = &t->phases[p];
    if (depth > t->nphases)
        return 0;
    for (size_t r = 0; r < ph->nrequires; r++) {
        const cg_pos *at = origin ? origin : &ph->requires_pos[r];
        int q = ph->requires_phase[r];
        if (q < 0) {
            add_require(W, j, ph->requires[r], -1, at);
            continue;
        }
        if (!((W->runs >> q) & 1)) {
            if (requires_of(W, j, (size_t)q, at, depth + 1) != 0)
                return -1;
            continue;
        }
        if (!W->has[q])
            return -1; /* that phase has no job for the cell */
        const cg_job *dep = &W->jobs[q];
        if (dep == j)
            continue;
        if (j->workflows & ~dep->workflows)
            return -1; /* not in every workflow j is in */
        add_require(W, j, dep->name, q, at);
    }
    return 0;
}

/* Whether workflow w lists a static entry named `name`. */
static bool static_entry(const cg_manifest *m, size_t w, const char *name)
{
    json_t *st = m->workflows[w].jobs;
    for (size_t i = 0; st && i < json_array_size(st); i++)
        if (cg_streq(cg_static_entry_name(json_array_get(st, i)), name))
            return true;
    return false;
}

/* cg_jobs_check_requires for one job, and the name of a static entry of its
 * workflows; -1 where the whole load reports an error (or might: an outside
 * name that no static entry has may be a generated job of another cell). */
static int check_job(struct cg_walk *W, const cg_job *j)
{
    const cg_manifest *m = &W->m->manifest;
    for (size_t w = 0; w < m->nworkflows; w++) {
        if (!(j->workflows & ((uint64_t)1 << w)))
            continue;
        if (static_entry(m, w, j->name))
            return -1;
        for (uint32_t r = 0; r < j->nrequires; r++)
            if (j->requires_job[r] < 0 && !static_entry(m, w, j->requires[r]))
                return -1;
    }
    return 0;
}

/* In the second walk: whether the name (its hash h) is one a job of an
 * earlier cell or phase has, among those sharing a fingerprint. */
static bool twin_named(struct cg_walk *W, const char *name, size_t len, uint64_t h)
{
    uint64_t key = cg_fpset_key(h);
    size_t lo = 0, hi = W->ntwins;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (W->twins[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == W->ntwins || W->twins[lo] != key)
        return false;
    if (cg_map_getn(&W->twin_names, name, len))
        return true;
    const char *copy = cg_pool_strndup(&W->twin_pool, name, len);
    cg_map_put(&W->twin_names, copy, (void *)copy);
    return false;
}

/* The names of a live cell's jobs (env bound to it), as cg_jobs_build makes
 * them: W->jobs[p] where W->has[p].  In the second walk (W->ntwins set),
 * nothing else of the walk's state changes: -1 when a name is used twice. */
static int cell_names(struct cg_walk *W, cg_cell *cell, cg_env *env)
{
    cg_tree *t = W->t;
    size_t np = t->nphases, ti = t->index;
    W->runs = 0;
    for (size_t p = 0; p < np; p++) {
        if (cg_phase_runs(&t->phases[p], env))
            W->runs |= (uint64_t)1 << p;
        else if (!W->ntwins)
            W->skipped[ti][p]++;
        if (W->err->set)
            return -1;
    }
    for (size_t p = 0; p < np; p++) {
        const cg_phase *ph = &t->phases[p];
        W->has[p] = false;
        if (!((W->runs >> p) & 1))
            continue;
        uint64_t in = 0, gate = 0;
        for (size_t k = 0; k < ph->nworkflows; k++) {
            int w = ph->workflows[k];
            uint64_t bit = (uint64_t)1 << w;
            if (W->all[w] || (cell->tiers & W->ungated[w]))
                in |= bit;
            else if (cell->tiers & W->gated[w])
                in |= bit, gate |= bit;
        }
        if (!in)
            continue;
        cg_strbuf *name = &W->names[p];
        cg_strbuf_reset(name);
        cg_env_set_builtin(env, CG_B_PHASE, ph->name, false);
        bool own = ph->job_name.nsegs > 0;
        if (cg_env_expand(env, own ? &ph->job_name : &t->job_name, CG_EXPAND_NAME, t, name,
                          own ? &ph->job_name_src : &t->job_name_src, "the job name pattern") != 0 ||
            name->len == 0 || cg_name_breaker(name->buf) || cg_blank_name(name->buf) ||
            strstr(name->buf, "<<"))
            return -1;
        cg_job *j = &W->jobs[p];
        memset(j, 0, sizeof *j);
        j->name = name->buf;
        j->tree = t;
        j->cell = cell;
        j->phase = (uint32_t)p;
        j->workflows = in;
        j->gated = gate;
        W->has[p] = true;
        uint64_t h = cg_hash(name->buf, name->len);
        if (!W->ntwins)
            cg_fpset_add(&W->names_seen, h);
        else if (twin_named(W, name->buf, name->len, h))
            return -1;
    }
    return 0;
}

/* The jobs of one live cell (env bound to it), as cg_jobs_build makes them. */
static int cell_jobs(struct cg_walk *W, cg_cell *cell, cg_env *env)
{
    if (cell_names(W, cell, env) != 0)
        return -1;
    for (size_t p = 0; p < W->t->nphases; p++) {
        if (!W->has[p])
            continue;
        cg_job *j = &W->jobs[p];
        j->index = W->njobs++;
        W->rseen = 0;
        if (requires_of(W, j, p, NULL, 0) != 0)
            return -1;
        j->requires = W->req.name;
        j->requires_pos = W->req.pos;
        j->requires_job = W->req.job;
        if (check_job(W, j) != 0 || cg_model_job_templates(W->m, j, env, W->err) != 0 || W->err->set ||
            (W->w->job && W->w->job(W->w->ctx, j) != 0))
            return -1;
        j->requires = NULL;
        j->requires_pos = NULL;
        j->requires_job = NULL;
    }
    return 0;
}

static int walk_cell(void *ctx, cg_cell *cell, cg_env *env)
{
    struct cg_walk *W = ctx;
    cell_tiers(W->t, cell, env);
    if (W->err->set || (W->w->cell && W->w->cell(W->w->ctx, W->t, cell, env) != 0))
        return -1;
    if (cell->status != CG_CELL_LIVE)
        return 0;
    W->nlive[W->t->index]++;
    return cell_jobs(W, cell, env);
}

/* The cells of the second walk: their job names only. */
static int twin_cell(void *ctx, cg_cell *cell, cg_env *env)
{
    struct cg_walk *W = ctx;
    cell_tiers(W->t, cell, env);
    if (W->err->set)
        return -1;
    return cell->status == CG_CELL_LIVE ? cell_names(W, cell, env) : 0;
}

/* Which of tree t's tiers each workflow takes (W->all, ungated, gated). */
static void tree_workflows(struct cg_walk *W, cg_tree *t)
{
    const cg_manifest *man = &W->m->manifest;
    W->t = t;
    for (size_t w = 0; w < man->nworkflows; w++) {
        const cg_workflow_decl *wd = &man->workflows[w];
        W->all[w] = wd->ntiers == 0 && wd->non_request == 0;
        W->ungated[w] = W->gated[w] = 0;
        for (size_t k = 0; k < t->ntiers; k++) {
            for (size_t i = 0; i < wd->ntiers; i++)
                if (cg_streq(t->tiers[k].name, wd->tiers[i]))
                    W->ungated[w] |= (uint64_t)1 << k;
            for (size_t i = 0; i < wd->non_request; i++)
                if (cg_streq(t->tiers[k].name, wd->on_request[i]))
                    W->gated[w] |= (uint64_t)1 << k;
        }
    }
}

int cg_walk_tree(cg_model *m, cg_tree *t, cg_error *err)
{
    struct cg_walk *W = m->walk;
    const cg_manifest *man = &m->manifest;
    if (!walkable(t))
        return -1;
    tree_workflows(W, t);
    W->skipped[t->index] = cg_xcalloc(t->nphases + 1, sizeof **W->skipped);
    if (W->w->tree)
        W->w->tree(W->w->ctx, t);
    if (cg_expand_each(t, man->max_cells, m->opt.strict, walk_cell, W, &m->warnings, err) != 0)
        return -1;
    /* a listed tier cell no live cell matches is an error */
    for (size_t k = 0; k < t->ntiers; k++)
        for (size_t c = 0; c < t->tiers[k].ncells; c++)
            if (!t->tiers[k].cells[c]->hits)
                return -1;
    return err->set ? -1 : 0;
}

int cg_walk_finish(cg_model *p, cg_error *err)
{
    struct cg_walk *W = p->walk;
    const cg_manifest *m = &p->manifest;
    /* the warnings of the whole load's jobs, in its order */
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        for (size_t k = 0; k < t->nphases; k++) {
            const cg_phase *ph = &t->phases[k];
            if (!W->nlive[i] || W->skipped[i][k] < W->nlive[i])
                continue;
            if (p->opt.strict || (!ph->nskip && !ph->nonly))
                return -1;
            const char *why = ph->nskip && ph->nonly ? "'skip' and 'only'" : ph->nskip ? "'skip'" : "'only'";
            cg_warn_at(&p->warnings, &ph->pos, "phase '%s' runs for no cell: its %s leave%s no job", ph->name, why,
                       ph->nskip && ph->nonly ? "" : "s");
        }
    }
    for (size_t w = 0; w < m->nworkflows; w++)
        if (m->workflows[w].per_change)
            p->per_change = (int)w;
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        for (size_t k = 0; k < t->npatterns; k++) {
            const cg_pattern *pt = t->patterns[k];
            if (pt->hits || !(cg_streq(pt->kind, "skip") || cg_streq(pt->kind, "phase only") || pt->names_phase))
                continue;
            if (p->opt.strict)
                return -1;
            const char *kind = pt->names_phase ? "override" : cg_streq(pt->kind, "skip") ? "skip" : "only";
            cg_warn_at(&p->warnings, &pt->pos, "%s pattern %s matches no cell", kind, pt->text);
        }
    }
    /* two jobs of one name are an error of the whole load: where two names
     * share a fingerprint, a second walk compares the names that have it
     * (a tier's and a pattern's hits only count up again: none becomes 0) */
    W->ntwins = cg_fpset_twins(&W->names_seen, W->twins, MAX_TWINS);
    cg_fpset_release(&W->names_seen);
    if (W->ntwins > MAX_TWINS)
        return -1;
    if (W->ntwins) {
        cg_warnings again; /* the first walk's, said already */
        cg_warnings_init(&again);
        int rc = 0;
        for (size_t i = 0; i < p->ntrees && rc == 0; i++) {
            tree_workflows(W, p->trees[i]);
            rc = cg_expand_each(p->trees[i], m->max_cells, p->opt.strict, twin_cell, W, &again, err);
        }
        cg_warnings_release(&again);
        if (rc != 0)
            return -1;
    }
    /* a special-PR selection (special-pr.yml) changes the jobs: walk none */
    if (cg_cull_apply(p, err) != 0 || !cg_special_empty(&p->selection))
        return -1;
    p->orders = cg_xcalloc(m->nworkflows + 1, sizeof *p->orders);
    return err->set ? -1 : 0;
}
