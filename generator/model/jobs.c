#include "model/jobs.h"
#include "lang/schema.h"

#include "base/text.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

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
    cg_requires_buf r;
    uint32_t *seen;     /* [jobs]: index + 1 of the job whose requires hold it */
} req_buf;

/* One group of an aggregate phase (`per`): its cells, in cell order. */
typedef struct group {
    uint32_t phase;
    uint32_t *mem;      /* indexes of cells */
    size_t n, cap;
    int32_t job;        /* its job, or -1 (it lands in no workflow) */
} group;

/* What building one tree's jobs keeps. */
typedef struct build {
    const cg_tree *t;
    const cg_cells *cells;
    cg_jobs *jobs;
    size_t np;
    uint64_t *runs;     /* [cells]: bit p, phase p runs for the cell (a member of a group for `per`) */
    int32_t *at;        /* [cells * np]: the cell's job of phase p, or for an aggregate phase its
                         * group; -1 for none */
    group *g;
    size_t ng, gcap;
    req_buf rb;
    const cg_manifest *m;
    cg_error *err;
} build;

void cg_requires_add(cg_requires_buf *b, cg_job *j, const char *name, int32_t job, const cg_pos *pos,
                     bool optional)
{
    if (job < 0)
        for (uint32_t i = 0; i < j->nrequires; i++)
            if (b->job[i] < 0 && (b->name[i] == name || cg_streq(b->name[i], name))) {
                b->opt[i] = b->opt[i] && optional;
                return;
            }
    if (j->nrequires >= b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->name = cg_xrealloc(b->name, b->cap * sizeof *b->name);
        b->pos = cg_xrealloc(b->pos, b->cap * sizeof *b->pos);
        b->job = cg_xrealloc(b->job, b->cap * sizeof *b->job);
        b->opt = cg_xrealloc(b->opt, b->cap * sizeof *b->opt);
    }
    b->name[j->nrequires] = name;
    b->pos[j->nrequires] = pos;
    b->job[j->nrequires] = job;
    b->opt[j->nrequires] = optional;
    j->nrequires++;
}

void cg_requires_release(cg_requires_buf *b)
{
    free(b->name);
    free(b->pos);
    free(b->job);
    free(b->opt);
    memset(b, 0, sizeof *b);
}

/* A generated job is added once (b->seen, by index: a group's job may
 * require thousands); a name outside the tree once among those. */
static void add_require(cg_job *j, const char *name, int32_t job, const cg_pos *pos, bool optional, req_buf *b)
{
    if (job >= 0) {
        if (b->seen[job] == j->index + 1) {
            /* required plainly once, it is not optional */
            for (uint32_t i = 0; !optional && i < j->nrequires; i++)
                if (b->r.job[i] == job)
                    b->r.opt[i] = false;
            return;
        }
        b->seen[job] = j->index + 1;
    }
    cg_requires_add(&b->r, j, name, job, pos, optional);
}

static bool is_member(const build *B, size_t cell, size_t q)
{
    return (B->runs[cell] >> q) & 1;
}

static int requires_of(build *B, cg_job *j, size_t p, size_t cell, const cg_pos *origin, unsigned depth);

/* Adds to j the job(s) that phase q has for one cell, looking through a
 * phase that does not run for it. */
static int require_for_cell(build *B, cg_job *j, size_t q, size_t cell, const cg_pos *at, unsigned depth,
                            bool optional)
{
    const cg_tree *t = B->t;
    /* an optional requirement of a phase the cell does not run is dropped,
     * not looked through */
    if (!is_member(B, cell, q))
        return optional ? 0 : requires_of(B, j, q, cell, at, depth + 1);
    int32_t k = B->at[cell * B->np + q];
    if (k >= 0 && t->phases[q].aggregate)
        k = B->g[k].job;
    if (k < 0 && optional)
        return 0;
    if (k < 0 && j->nmembers) {
        cg_strbuf d = CG_STRBUF_INIT;
        cg_cell_describe(t, &B->cells->v[cell], &d);
        int rc = cg_error_at(B->err, at, "job '%s' requires the '%s' job of every cell of its group, but cell %s "
                             "has none in the workflows '%s' lands in (its tiers); narrow the group with 'only', "
                             "or let those workflows take all of its cells", j->name, t->phases[q].name, d.buf,
                             j->name);
        cg_strbuf_release(&d);
        return rc;
    }
    if (k < 0)
        return cg_error_at(B->err, at, "job '%s' requires phase '%s', but that phase has no job for %s "
                           "(it lands in no workflow)", j->name, t->phases[q].name,
                           t->phases[q].aggregate ? "its group" : "this cell");
    const cg_job *dep = &B->jobs->v[k];
    if (dep == j)
        return 0;
    uint64_t missing = optional ? 0 : j->workflows & ~dep->workflows;
    if (missing) {
        size_t w = 0;
        while (!(missing & ((uint64_t)1 << w)))
            w++;
        if (j->nmembers)
            return cg_error_at(B->err, at, "job '%s' lands in workflow '%s', but '%s' of its group does not: "
                               "a phase with 'per' requires the '%s' jobs of every cell of its group; narrow "
                               "the group with 'only', or let the workflow take all of its cells",
                               j->name, B->m->workflows[w].name, dep->name, t->phases[q].name);
        return cg_error_at(B->err, at, "job '%s' requires '%s', which is not in every workflow '%s' is in; "
                           "list the same workflows for phases '%s' and '%s'",
                           j->name, dep->name, j->name, t->phases[j->phase].name, t->phases[q].name);
    }
    add_require(j, dep->name, k, at, optional, &B->rb);
    return 0;
}

/* Adds to j what phase p requires, for one cell (`cell`), or for every
 * cell of j's group when cell is SIZE_MAX. */
static int requires_of(build *B, cg_job *j, size_t p, size_t cell, const cg_pos *origin, unsigned depth)
{
    const cg_tree *t = B->t;
    const cg_phase *ph = &t->phases[p];
    if (depth > t->nphases)
        return 0; /* cycles were rejected when parsing */
    for (size_t r = 0; r < ph->nrequires; r++) {
        const cg_pos *at = origin ? origin : &ph->requires_pos[r];
        int q = ph->requires_phase[r];
        bool opt = ph->requires_optional && ph->requires_optional[r];
        if (q < 0) {
            add_require(j, ph->requires[r], -1, at, opt, &B->rb);
            continue;
        }
        if (cell != SIZE_MAX) {
            if (require_for_cell(B, j, (size_t)q, cell, at, depth, opt) != 0)
                return -1;
            continue;
        }
        /* every cell of the group (through a phase a cell does not run, as
         * for a cell's job); a fan-in that gathers nothing is a mistake */
        bool any = false;
        uint32_t before = j->nrequires;
        for (uint32_t m = 0; m < j->nmembers; m++) {
            any = any || is_member(B, j->members[m]->index, (size_t)q);
            if (require_for_cell(B, j, (size_t)q, j->members[m]->index, at, depth, opt) != 0)
                return -1;
        }
        if (!any && j->nrequires == before && !opt) {
            cg_strbuf d = CG_STRBUF_INIT;
            cg_cell_describe(t, j->cell, &d);
            int rc = cg_error_at(B->err, at, "job '%s' requires phase '%s', but no cell of its group (%s%s%u "
                                 "cell%s) runs phase '%s', nor anything it requires", j->name, t->phases[q].name,
                                 d.buf, d.len ? ", " : "", j->nmembers, j->nmembers == 1 ? "" : "s",
                                 t->phases[q].name);
            cg_error_note(B->err, &t->phases[q].pos, "phase '%s' is declared here; its 'skip', 'only' or 'per' "
                          "leave no job in the group", t->phases[q].name);
            cg_strbuf_release(&d);
            return rc;
        }
    }
    return 0;
}

bool cg_phase_runs(const cg_phase *ph, cg_env *env)
{
    for (size_t s = 0; s < ph->nskip; s++)
        if (cg_pattern_matches(ph->skip[s], env)) {
            ph->skip[s]->hits++;
            return false;
        }
    bool kept = ph->nonly == 0;
    for (size_t s = 0; s < ph->nonly; s++)
        if (cg_pattern_matches(ph->only[s], env)) {
            kept = true;
            ph->only[s]->hits++;
        }
    return kept;
}

/* Which phases run for cell c (env bound to it): B->runs[c]; counts the
 * cells a phase does not run for in skipped. */
static int cell_runs(build *B, cg_env *env, size_t c, size_t *skipped)
{
    const cg_cell *cell = &B->cells->v[c];
    for (size_t p = 0; p < B->np; p++) {
        const cg_phase *ph = &B->t->phases[p];
        bool runs = cg_phase_runs(ph, env);
        if (B->err->set)
            return -1;
        for (size_t d = 0; d < ph->nper && runs; d++)
            runs = cell->values[ph->per[d]] != NULL; /* no value to group by: in no group */
        if (runs)
            B->runs[c] |= (uint64_t)1 << p;
        else if (skipped)
            skipped[p]++;
    }
    return 0;
}

/* The deepest node above both a and b. */
static const cg_tnode *common_node(const cg_tnode *a, const cg_tnode *b)
{
    while (a->depth > b->depth)
        a = a->parent;
    while (b->depth > a->depth)
        b = b->parent;
    while (a != b) {
        a = a->parent;
        b = b->parent;
    }
    return a;
}

/* The cell a group's job is bound to: the `per` values, the nodes every
 * member lies under (their variables), the zipped variables every member
 * has, the tiers of any member. */
static cg_cell *group_cell(const build *B, const group *g, cg_pool *pool)
{
    const cg_tree *t = B->t;
    const cg_phase *ph = &t->phases[g->phase];
    const cg_cell *first = &B->cells->v[g->mem[0]];
    cg_cell *c = cg_pool_alloc(pool, sizeof *c);
    memset(c, 0, sizeof *c);
    c->index = first->index;
    c->status = CG_CELL_LIVE;
    c->group = true;
    const char **values = cg_pool_alloc(pool, (t->ndims ? t->ndims : 1) * sizeof *values);
    memset(values, 0, (t->ndims ? t->ndims : 1) * sizeof *values);
    for (size_t d = 0; d < ph->nper; d++)
        values[ph->per[d]] = first->values[ph->per[d]];
    c->values = values;
    const cg_tnode *leaf = first->leaf;
    for (size_t m = 1; m < g->n; m++)
        leaf = common_node(leaf, B->cells->v[g->mem[m]].leaf);
    c->leaf = leaf;
    const cg_vardecl **zv = cg_pool_alloc(pool, (first->nzvars ? first->nzvars : 1) * sizeof *zv);
    for (uint32_t z = 0; z < first->nzvars; z++) {
        bool all = true;
        for (size_t m = 1; m < g->n && all; m++) {
            const cg_cell *o = &B->cells->v[g->mem[m]];
            bool has = false;
            for (uint32_t y = 0; y < o->nzvars && !has; y++)
                has = o->zvars[y] == first->zvars[z];
            all = has;
        }
        if (all)
            zv[c->nzvars++] = first->zvars[z];
    }
    c->zvars = zv;
    for (size_t m = 0; m < g->n; m++)
        c->tiers |= B->cells->v[g->mem[m]].tiers;
    return c;
}

/* Groups the cells of the aggregate phases (the cells each runs for). */
static void make_groups(build *B, cg_pool *pool)
{
    const cg_tree *t = B->t;
    cg_strbuf key = CG_STRBUF_INIT;
    for (size_t p = 0; p < B->np; p++) {
        const cg_phase *ph = &t->phases[p];
        if (!ph->aggregate)
            continue;
        cg_map by_key;
        cg_map_init(&by_key);
        for (size_t c = 0; c < B->cells->n; c++) {
            if (!is_member(B, c, p))
                continue;
            const cg_cell *cell = &B->cells->v[c];
            cg_strbuf_reset(&key);
            for (size_t d = 0; d < ph->nper; d++) {
                cg_strbuf_adds(&key, cell->values[ph->per[d]]);
                cg_strbuf_addc(&key, '\x1f');
            }
            size_t gi = (size_t)(uintptr_t)cg_map_getn(&by_key, cg_strbuf_str(&key), key.len);
            if (!gi) {
                cg_grow(&B->g, &B->gcap, B->ng + 1, sizeof *B->g);
                memset(&B->g[B->ng], 0, sizeof *B->g);
                B->g[B->ng].phase = (uint32_t)p;
                B->g[B->ng].job = -1;
                gi = ++B->ng;
                cg_map_put(&by_key, cg_pool_strndup(pool, cg_strbuf_str(&key), key.len), (void *)(uintptr_t)gi);
            }
            group *g = &B->g[gi - 1];
            cg_grow(&g->mem, &g->cap, g->n + 1, sizeof *g->mem);
            g->mem[g->n++] = (uint32_t)c;
            B->at[c * B->np + p] = (int32_t)(gi - 1);
        }
        cg_map_release(&by_key);
    }
    cg_strbuf_release(&key);
}

/* The code point of the UTF-8 character at s (one cg_blank_char() found). */
static unsigned code_point(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (*p < 0x80)
        return *p;
    if (*p < 0xe0)
        return (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    return (unsigned)(p[0] & 0x0f) << 12 | (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
}

/* Names and adds the job of phase p for the bound env's cell (or group);
 * its index, -1 after an error, -2 when it lands in no workflow (in == 0). */
static int64_t add_job(build *B, cg_env *env, size_t p, uint64_t in, uint64_t gate, cg_pool *pool,
                       cg_strbuf *name)
{
    const cg_tree *t = B->t;
    cg_jobs *jobs = B->jobs;
    const cg_phase *ph = &t->phases[p];
    const cg_cell *cell = env->cell;
    cg_error *err = B->err;
    if (!in)
        return -2;
    cg_strbuf_reset(name);
    cg_env_set_builtin(env, CG_B_PHASE, ph->name, false);
    bool own = ph->job_name.nsegs > 0;
    if (cg_env_expand(env, own ? &ph->job_name : &t->job_name, CG_EXPAND_NAME, t, name,
                      own ? &ph->job_name_src : &t->job_name_src, "the job name pattern") != 0)
        return -1;
    if (name->len == 0) {
        cg_error_at(err, own ? &ph->job_name_src.pos : &t->job_name_src.pos,
                    "the job name pattern gives an empty name");
        return -1;
    }
    /* every name is kept: their bytes are counted as they are made, and a
     * matrix of long values stops here, not out of memory */
    jobs->name_bytes += name->len;
    if (jobs->name_bytes > (uint64_t)B->m->max_name_bytes) {
        cg_strbuf a = CG_STRBUF_INIT;
        cg_cell_describe(t, cell, &a);
        cg_error_at(err, own ? &ph->job_name_src.pos : &t->job_name_src.pos,
                    "the job names come to more than %ld bytes (the manifest's 'limits: max_name_bytes') at job "
                    "%zu, phase '%s' of %s %.200s%s (its name alone is %zu bytes); shorten the values the names are "
                    "made of, or raise the limit", B->m->max_name_bytes, jobs->n + 1, ph->name,
                    ph->aggregate ? "group" : "cell", a.len ? cg_strbuf_str(&a) : "of every cell",
                    a.len > 200 ? "..." : "", name->len);
        cg_strbuf_release(&a);
        return -1;
    }
    /* dimension values are checked where they are written; a variable's
     * value or a `replace` may still bring a tab or a line break */
    const char *why = cg_name_breaker(name->buf);
    if (why) {
        cg_strbuf a = CG_STRBUF_INIT, shown = CG_STRBUF_INIT;
        cg_cell_describe(t, cell, &a);
        cg_add_tabs_shown(&shown, name->buf);
        cg_error_at(err, own ? &ph->job_name_src.pos : &t->job_name_src.pos,
                    "the job name pattern gives '%s' for %s %s%s, phase '%s', which holds %s (from a variable's "
                    "value or 'replace'); a job name is one line of printable text", shown.buf,
                    ph->aggregate ? "group" : "cell", a.len ? "" : "of every cell", cg_strbuf_str(&a), ph->name,
                    why);
        cg_strbuf_release(&a);
        cg_strbuf_release(&shown);
        return -1;
    }
    /* a name of only whitespace shows as nothing; `<<` is CircleCI's own
     * `<< parameter >>`, replaced when it compiles the config, so the job
     * would not be named what cigen wrote (nor required, nor selected) */
    bool blank = cg_blank_name(name->buf);
    if (blank || strstr(name->buf, "<<")) {
        cg_strbuf a = CG_STRBUF_INIT, shown = CG_STRBUF_INIT;
        cg_cell_describe(t, cell, &a);
        if (blank) {
            cg_strbuf_adds(&shown, "a name of only whitespace (");
            for (const char *c = name->buf; *c; c += cg_blank_char(c))
                cg_strbuf_addf(&shown, "%sU+%04X", c == name->buf ? "" : " ", code_point(c));
            cg_strbuf_addc(&shown, ')');
        } else {
            cg_strbuf_adds(&shown, "'");
            cg_add_tabs_shown(&shown, name->buf);
            cg_strbuf_adds(&shown, "'");
        }
        cg_error_at(err, own ? &ph->job_name_src.pos : &t->job_name_src.pos,
                    "the job name pattern gives %s for %s %s%s, phase '%s'%s; %s", shown.buf,
                    ph->aggregate ? "group" : "cell", a.len ? "" : "of every cell", cg_strbuf_str(&a), ph->name,
                    blank ? " (from its values or 'replace')"
                          : ", which holds '<<' (from the pattern, a variable's value or 'replace')",
                    blank ? "a job name needs a visible character"
                          : "CircleCI reads '<< ... >>' as a parameter when it compiles the config, so the job "
                            "would not be named what cigen wrote");
        cg_strbuf_release(&a);
        cg_strbuf_release(&shown);
        return -1;
    }
    /* names are unique (a duplicate is an error), so one lookup that
     * inserts serves for both the check and the index */
    const char *jname = cg_pool_strndup(pool, name->buf, name->len);
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
        cg_pos here = ph->aggregate ? ph->per_pos : cell->leaf->pos;
        cg_pos there = other->nmembers ? other->tree->phases[other->phase].per_pos : other->cell->leaf->pos;
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
            } else if (other->cell == cell || ph->aggregate || other->nmembers) {
                /* one cell (or group), two phases: the pattern lacks {{ phase }} */
                here = own ? ph->job_name_src.pos : t->job_name_src.pos;
                there = here;
            }
        }
        const char *what = ph->aggregate ? "group" : "cell";
        cg_error_at(err, &here, "two jobs are named '%s' (this one from %s %s%s, phase '%s')", jname, what,
                    a.len ? "" : "of every cell", a.buf, ph->name);
        cg_error_note(err, &there, "the other comes from %s %s%s, phase '%s'", other->nmembers ? "group" : "cell",
                      b.len ? "" : "of every cell", b.buf, other->tree->phases[other->phase].name);
        cg_strbuf_release(&a);
        cg_strbuf_release(&b);
        return -1;
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
    return (int64_t)jobs->n++;
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
    build B = {.t = t, .cells = cells, .jobs = jobs, .np = np, .m = m, .err = err};
    B.runs = cg_xcalloc(cells->n + 1, sizeof *B.runs);
    B.at = cg_xmalloc((cells->n * np + 1) * sizeof *B.at);
    for (size_t i = 0; i < cells->n * np; i++)
        B.at[i] = -1;
    cg_env env;
    cg_env_init(&env, t, err);
    cg_strbuf name = CG_STRBUF_INIT;
    int rc = 0;
    if (!jobs->by_name.key_of)
        cg_index_init(&jobs->by_name, job_name_at, jobs);
    /* at most one job per live cell and phase: made once at that size, not
     * grown by copying (the pages past the jobs made are never touched) */
    cg_index_reserve(&jobs->by_name, jobs->n + cells->nlive * np);
    cg_grow(&jobs->v, &jobs->cap, jobs->n + cells->nlive * np, sizeof *jobs->v);
    size_t first_job = jobs->n;
    /* which phases run for which cells: first when groups need them all,
     * else cell by cell below (binding each cell once) */
    bool groups = false;
    for (size_t p = 0; p < np; p++)
        groups = groups || t->phases[p].aggregate;
    for (size_t c = 0; groups && c < cells->n && rc == 0; c++) {
        if (cells->v[c].status != CG_CELL_LIVE)
            continue;
        if ((rc = cg_env_bind(&env, &cells->v[c])) == 0)
            rc = cell_runs(&B, &env, c, skipped);
    }
    if (rc == 0)
        make_groups(&B, pool);
    /* groups in the order their jobs are made: after their last cell (a
     * stable counting sort: phase order among the groups ending at a cell) */
    uint32_t *order = cg_xmalloc((B.ng + 1) * sizeof *order);
    size_t *start = cg_xcalloc(cells->n + 1, sizeof *start);
    for (size_t g = 0; g < B.ng; g++)
        start[B.g[g].mem[B.g[g].n - 1] + 1]++;
    for (size_t c = 0; c < cells->n; c++)
        start[c + 1] += start[c];
    for (size_t g = 0; g < B.ng; g++)
        order[start[B.g[g].mem[B.g[g].n - 1]]++] = (uint32_t)g;
    free(start);
    size_t next_group = 0;
    /* the jobs: each cell's, then those of the groups it ends */
    for (size_t c = 0; c < cells->n && rc == 0; c++) {
        const cg_cell *cell = &cells->v[c];
        if (cell->status != CG_CELL_LIVE)
            continue;
        if ((rc = cg_env_bind(&env, cell)) != 0 || (!groups && (rc = cell_runs(&B, &env, c, skipped)) != 0))
            break;
        for (size_t p = 0; p < np && rc == 0; p++) {
            const cg_phase *ph = &t->phases[p];
            if (ph->aggregate || !is_member(&B, c, p))
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
            int64_t k = add_job(&B, &env, p, in, gate, pool, &name);
            if (k == -1)
                rc = -1;
            else if (k >= 0)
                B.at[c * np + p] = (int32_t)k;
        }
        for (; next_group < B.ng && rc == 0; next_group++) {
            group *g = &B.g[order[next_group]];
            if (g->mem[g->n - 1] != c)
                break;
            const cg_phase *ph = &t->phases[g->phase];
            uint64_t in = 0, gate = 0;
            for (size_t mi = 0; mi < g->n; mi++) {
                const cg_cell *mc = &cells->v[g->mem[mi]];
                for (size_t k = 0; k < ph->nworkflows; k++) {
                    int w = ph->workflows[k];
                    uint64_t bit = (uint64_t)1 << w;
                    if (all[w] || (mc->tiers & ungated[w]))
                        in |= bit;
                    else if (mc->tiers & gated[w])
                        in |= bit, gate |= bit;
                }
            }
            if (!in)
                continue;
            cg_cell *gc = group_cell(&B, g, pool);
            if ((rc = cg_env_bind(&env, gc)) != 0)
                break;
            int64_t k = add_job(&B, &env, g->phase, in, gate, pool, &name);
            if (k < 0) {
                rc = -1;
                break;
            }
            g->job = (int32_t)k;
            const cg_cell **mem = cg_pool_alloc(pool, g->n * sizeof *mem);
            for (size_t mi = 0; mi < g->n; mi++)
                mem[mi] = &cells->v[g->mem[mi]];
            jobs->v[k].members = mem;
            jobs->v[k].nmembers = (uint32_t)g->n;
        }
    }
    /* requires, now that every job of the tree is made */
    B.rb.seen = cg_xcalloc(jobs->n + 1, sizeof *B.rb.seen);
    for (size_t k = first_job; k < jobs->n && rc == 0; k++) {
        cg_job *j = &jobs->v[k];
        j->nrequires = 0;
        rc = requires_of(&B, j, j->phase, j->nmembers ? SIZE_MAX : j->cell->index, NULL, 0);
        if (rc == 0 && j->nrequires) {
            const char **names = cg_pool_alloc(pool, j->nrequires * sizeof *names);
            const cg_pos **pos = cg_pool_alloc(pool, j->nrequires * sizeof *pos);
            int32_t *idx = cg_pool_alloc(pool, j->nrequires * sizeof *idx);
            memcpy(names, B.rb.r.name, j->nrequires * sizeof *names);
            memcpy(pos, B.rb.r.pos, j->nrequires * sizeof *pos);
            memcpy(idx, B.rb.r.job, j->nrequires * sizeof *idx);
            j->requires = names;
            j->requires_pos = pos;
            j->requires_job = idx;
            bool any_opt = false;
            for (uint32_t r = 0; r < j->nrequires; r++)
                any_opt = any_opt || B.rb.r.opt[r];
            if (any_opt) {
                bool *opt = cg_pool_alloc(pool, j->nrequires * sizeof *opt);
                memcpy(opt, B.rb.r.opt, j->nrequires * sizeof *opt);
                j->requires_optional = opt;
            }
        }
    }
    cg_strbuf_release(&name);
    cg_env_release(&env);
    for (size_t g = 0; g < B.ng; g++)
        free(B.g[g].mem);
    free(B.g);
    free(order);
    free(B.runs);
    free(B.at);
    cg_requires_release(&B.rb.r);
    free(B.rb.seen);
    free(ungated);
    free(gated);
    free(all);
    return rc;
}
