/* dot_workflow — the job graph of one workflow (cg_dot_workflow, render/dot.h). */
#include "render/dot.h"
#include "render/dot_impl.h"

/* ---- cells seen through the collapse mask ---- */

/* Cells seen through the collapse mask: equal when every value matches,
 * collapsed ones only in being present.  Cell values are interned in the
 * project's pool, so equal values are the same pointer: no string work. */
/* ---- the job graph of a workflow ---- */

enum { G_STATIC, G_JOB, G_MISSING };

typedef struct gnode {
    const char *name;      /* STATIC, MISSING: the job name */
    const char *invokes;   /* STATIC: the job it runs, when `name:` renames it */
    const cg_job *job;     /* JOB: the first job */
    uint32_t tree;         /* JOB */
    uint32_t njobs, ngated;
    uint32_t cluster;      /* index + 1; 0: none */
    uint32_t next;         /* the next node of the same cluster */
    uint8_t kind;
    bool grouped;          /* JOB: jobs that differ only in collapsed dimensions */
} gnode;

typedef struct gcluster {  /* the nodes of a cell (cells, when collapsed) */
    const cg_job *job;     /* the first job */
    uint32_t tree;
    bool grouped;
    uint32_t nnodes, ncells;
    const cg_cell *last_cell;
    uint32_t first, last;
} gcluster;

typedef struct gedge {
    uint32_t from, to;
} gedge;

typedef struct gmodel {
    const cg_model *p;
    bool **masks;          /* [ntrees] */
    gnode *v;
    size_t n, cap;
    gcluster *c;
    size_t nc, ccap;
    gedge *e;
    size_t ne, ecap;
    cg_dot_htab cluster_tab, edge_tab;
    cg_map by_name;        /* static and missing names -> node + 1 */
    uint32_t *job_node;    /* [p->jobs.n]: node + 1 of the jobs in the workflow */
    size_t nstatic, njobs, ngated;
    size_t nrequires;      /* requires listed (edges may merge when collapsed) */
    bool static_job_names; /* a static entry is named as a generated job of the workflow */
} gmodel;

static bool gcluster_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const gmodel *G = ctx;
    const gcluster *x = &G->c[a], *y = &G->c[b];
    if (x->tree != y->tree || x->grouped != y->grouped)
        return false;
    if (!x->grouped)
        return x->job->cell == y->job->cell;
    return cg_dot_masked_eq(G->p->trees[x->tree], G->masks[x->tree], x->job->cell, y->job->cell);
}

static bool gedge_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const gmodel *G = ctx;
    return G->e[a].from == G->e[b].from && G->e[a].to == G->e[b].to;
}

static uint64_t cell_key_hash(const gmodel *G, uint32_t tree, bool is_grouped, const cg_cell *c)
{
    uint64_t h = cg_dot_mix(0x9e37, tree);
    return is_grouped ? cg_dot_mix(h, cg_dot_masked_hash(G->p->trees[tree], G->masks[tree], c)) : cg_dot_mix(h ^ 1, c->index);
}

/* A static entry: "setup", or {job: {name: x, requires: [...], ...}}. */
static void static_entry(json_t *e, const char **name, const char **invokes, json_t **requires)
{
    *name = *invokes = NULL;
    *requires = NULL;
    if (json_is_string(e)) {
        *name = json_string_value(e);
        return;
    }
    if (!json_is_object(e) || json_object_size(e) != 1)
        return;
    const char *key = json_object_iter_key(json_object_iter(e));
    json_t *args = json_object_iter_value(json_object_iter(e));
    *name = key;
    if (!json_is_object(args))
        return;
    json_t *nm = json_object_get(args, "name");
    if (json_is_string(nm) && !cg_streq(json_string_value(nm), key)) {
        *name = json_string_value(nm);
        *invokes = key;
    }
    *requires = json_object_get(args, "requires");
}

/* The job item r of a static entry's requires names as config.yml writes
 * it in workflow w: an optional one (`name?`) without its '?', NULL where
 * that job is not written (or for an item that names no job). */
static const char *entry_need(const cg_model *p, size_t w, json_t *entry, json_t *req, size_t r)
{
    const char *need = cg_requires_item_name(json_array_get(req, r));
    size_t len = need ? strlen(need) : 0;
    if (len < 2 || need[len - 1] != '?')
        return need;
    for (size_t i = 0; i < p->nstatics; i++) {
        const cg_static_job *sj = &p->statics[i];
        if (sj->entry != entry || sj->workflow != w)
            continue;
        uint32_t k = 0; /* sj->requires holds the items that name a job */
        for (size_t x = 0; x < r; x++)
            k += cg_requires_item_name(json_array_get(req, x)) != NULL;
        if (k < sj->nrequires && cg_model_written_in(p, w, sj->requires[k], -1))
            return sj->requires[k];
        return NULL;
    }
    return NULL;
}

static uint32_t gm_add(gmodel *G, uint8_t kind, const char *name)
{
    cg_grow(&G->v, &G->cap, G->n + 1, sizeof *G->v);
    G->v[G->n] = (gnode){.kind = kind, .name = name, .next = NONE};
    if (name)
        cg_map_put(&G->by_name, name, (void *)(uintptr_t)(G->n + 1));
    return (uint32_t)G->n++;
}

/* The next static entry config.yml writes in workflow w, from *i on: the
 * manifest's, less those a special-PR selection culled, then the copies it
 * put there (cg_model.statics); NULL after the last. */
static json_t *next_entry(const cg_model *p, size_t w, size_t *i)
{
    if (!p->statics) { /* (no model of the entries: the manifest's list) */
        json_t *jobs = p->manifest.workflows[w].jobs;
        return *i < json_array_size(jobs) ? json_array_get(jobs, (*i)++) : NULL;
    }
    while (*i < p->nstatics) {
        const cg_static_job *sj = &p->statics[(*i)++];
        if (sj->workflow == w && !sj->culled)
            return sj->entry;
    }
    return NULL;
}

/* The node of a required job: static, generated, or missing from the workflow. */
static uint32_t gm_resolve(gmodel *G, const char *name)
{
    uintptr_t s = (uintptr_t)cg_map_get(&G->by_name, name);
    if (s)
        return (uint32_t)(s - 1);
    const cg_job *j = cg_jobs_find(&G->p->jobs, name);
    if (j && G->job_node[j->index])
        return G->job_node[j->index] - 1;
    return gm_add(G, G_MISSING, name);
}

/* gm_resolve() of a generated job's requires[r], `job` its requires_job[r]:
 * by index, with no lookup by name, when that job is in the workflow (and
 * no static entry has a generated job's name, which by_name would find first). */
static uint32_t gm_resolve_job(gmodel *G, const char *name, int32_t job)
{
    if (job >= 0 && G->job_node[job] && !G->static_job_names)
        return G->job_node[job] - 1;
    return gm_resolve(G, name);
}

static void gm_edge(gmodel *G, uint32_t from, uint32_t to)
{
    G->nrequires++;
    cg_grow(&G->e, &G->ecap, G->ne + 1, sizeof *G->e);
    G->e[G->ne] = (gedge){from, to};
    if (cg_dot_htab_intern(&G->edge_tab, cg_dot_mix(cg_dot_mix(0x51, from), to), (uint32_t)G->ne, gedge_eq, G) == G->ne)
        G->ne++;
}

/* Builds the job graph to draw (wf_counter_init() counts it without). */
static void gm_build(gmodel *G, const cg_model *p, size_t w, const char *const *names, size_t nnames)
{
    memset(G, 0, sizeof *G);
    G->p = p;
    G->masks = cg_xcalloc(p->ntrees + 1, sizeof *G->masks);
    for (size_t i = 0; i < p->ntrees; i++)
        G->masks[i] = cg_dot_collapse_mask(p->trees[i], names, nnames);
    G->job_node = cg_xcalloc(p->jobs.n + 1, sizeof *G->job_node);
    cg_map_init(&G->by_name);
    /* the manifest's entries first, as config.yml lists them */
    json_t *entry;
    for (size_t i = 0; (entry = next_entry(p, w, &i));) {
        const char *name, *invokes;
        json_t *req;
        static_entry(entry, &name, &invokes, &req);
        if (!name || cg_map_has(&G->by_name, name))
            continue;
        uint32_t node = gm_add(G, G_STATIC, name);
        G->v[node].invokes = invokes;
        const cg_job *same = cg_jobs_find(&p->jobs, name);
        G->static_job_names |= same && (same->workflows >> w & 1);
    }
    G->nstatic = G->n;
    uint64_t bit = (uint64_t)1 << w;
    /* a cell's jobs are consecutive: its cluster (the cell, or the cells
     * equal to it but for collapsed dimensions) is found once for them
     * all, and a job's node is the cluster's node of its phase */
    const cg_cell *key_cell = NULL;
    uint32_t cl = 0;
    bool gr = false;
    for (size_t k = 0; k < p->jobs.n; k++) {
        const cg_job *j = &p->jobs.v[k];
        if (!(j->workflows & bit))
            continue;
        uint32_t ti = (uint32_t)j->tree->index;
        if (j->cell != key_cell) {
            key_cell = j->cell;
            gr = cg_dot_grouped(j->tree, G->masks[ti], j->cell);
            cg_grow(&G->c, &G->ccap, G->nc + 1, sizeof *G->c);
            G->c[G->nc] = (gcluster){.job = j, .tree = ti, .grouped = gr, .first = NONE, .last = NONE};
            cl = cg_dot_htab_intern(&G->cluster_tab, cell_key_hash(G, ti, gr, j->cell), (uint32_t)G->nc,
                                    gcluster_eq, G);
            if (cl == G->nc)
                G->nc++;
        }
        uint32_t node = NONE;
        for (uint32_t x = G->c[cl].first; x != NONE && node == NONE; x = G->v[x].next)
            if (G->v[x].job->phase == j->phase)
                node = x;
        if (node == NONE) {
            cg_grow(&G->v, &G->cap, G->n + 1, sizeof *G->v);
            node = (uint32_t)G->n++;
            G->v[node] = (gnode){.kind = G_JOB, .grouped = gr, .job = j, .tree = ti, .next = NONE,
                                 .cluster = cl + 1};
            gcluster *C = &G->c[cl];
            if (C->last == NONE)
                C->first = node;
            else
                G->v[C->last].next = node;
            C->last = node;
            C->nnodes++;
        }
        gnode *v = &G->v[node];
        gcluster *C = &G->c[v->cluster - 1];
        if (C->last_cell != j->cell) { /* a cell's jobs are consecutive */
            C->last_cell = j->cell;
            C->ncells++;
        }
        bool gated = (j->gated & bit) != 0;
        v->njobs++;
        v->ngated += gated;
        G->njobs++;
        G->ngated += gated;
        G->job_node[k] = node + 1;
    }
    for (size_t i = 0; (entry = next_entry(p, w, &i));) {
        const char *name, *invokes;
        json_t *req;
        static_entry(entry, &name, &invokes, &req);
        uint32_t to = name ? gm_resolve(G, name) : NONE;
        for (size_t r = 0; to != NONE && r < json_array_size(req); r++) {
            const char *need = entry_need(p, w, entry, req, r);
            if (need)
                gm_edge(G, gm_resolve(G, need), to);
        }
    }
    for (size_t k = 0; k < p->jobs.n; k++) {
        if (!G->job_node[k])
            continue;
        const cg_job *j = &p->jobs.v[k];
        for (uint32_t r = 0; r < j->nrequires; r++)
            if (!cg_job_require_optional(j, r) || cg_model_written_in(p, w, j->requires[r], j->requires_job[r]))
                gm_edge(G, gm_resolve_job(G, j->requires[r], j->requires_job[r]), G->job_node[k] - 1);
    }
    /* what only building needs */
    cg_dot_htab_release(&G->cluster_tab);
    cg_dot_htab_release(&G->edge_tab);
    cg_map_release(&G->by_name);
    free(G->job_node);
    G->job_node = NULL;
}

static void gm_release(gmodel *G)
{
    for (size_t i = 0; i < G->p->ntrees; i++)
        free(G->masks[i]);
    free(G->masks);
    free(G->v);
    free(G->c);
    free(G->e);
    cg_dot_htab_release(&G->cluster_tab);
    cg_dot_htab_release(&G->edge_tab);
    cg_map_release(&G->by_name);
    free(G->job_node);
}

/* Counting a workflow's nodes under many collapses (the note's search)
 * without building the graph each time: per cell, the phases it has jobs
 * of.  A cell with no collapsed dimension makes one node per job; cells
 * equal but for collapsed dimensions share a node per phase. */
typedef struct wf_cells {
    const cg_cell **cell;
    uint64_t *phases;
    size_t n, cap;
} wf_cells;

typedef struct wf_counter {
    const cg_model *p;
    size_t base;        /* the manifest's entries and the missing jobs they require */
    size_t nstatic, njobs, ngated, nrequires; /* for the label */
    wf_cells *trees;    /* [ntrees] */
} wf_counter;

/* What gm_build() counts, without building the graph: the manifest's
 * entries (each name once), the jobs they require that the workflow lacks,
 * and per cell the phases of its jobs. */
static void wf_counter_init(wf_counter *c, const cg_model *p, size_t w)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    uint64_t bit = (uint64_t)1 << w;
    cg_map seen, missing;
    cg_map_init(&seen);
    cg_map_init(&missing);
    json_t *entry;
    for (size_t i = 0; (entry = next_entry(p, w, &i));) {
        const char *name, *invokes;
        json_t *req;
        static_entry(entry, &name, &invokes, &req);
        if (name && !cg_map_put_new(&seen, name, (void *)1))
            c->nstatic++;
    }
    for (size_t i = 0; (entry = next_entry(p, w, &i));) {
        const char *name, *invokes;
        json_t *req;
        static_entry(entry, &name, &invokes, &req);
        for (size_t r = 0; name && r < json_array_size(req); r++) {
            const char *need = entry_need(p, w, entry, req, r);
            if (!need)
                continue;
            c->nrequires++;
            const cg_job *j = cg_map_has(&seen, need) ? NULL : cg_jobs_find(&p->jobs, need);
            if (!cg_map_has(&seen, need) && !(j && (j->workflows & bit)))
                cg_map_put_new(&missing, need, (void *)1);
        }
    }
    c->base = c->nstatic + missing.len;
    cg_map_release(&seen);
    cg_map_release(&missing);
    c->trees = cg_xcalloc(p->ntrees + 1, sizeof *c->trees);
    for (size_t k = 0; k < p->jobs.n; k++) {
        const cg_job *j = &p->jobs.v[k];
        if (!(j->workflows & bit))
            continue;
        c->njobs++;
        c->ngated += (j->gated & bit) != 0;
        for (uint32_t r = 0; r < j->nrequires; r++)
            c->nrequires += !cg_job_require_optional(j, r) ||
                            cg_model_written_in(p, w, j->requires[r], j->requires_job[r]);
        wf_cells *t = &c->trees[j->tree->index];
        if (!t->n || t->cell[t->n - 1] != j->cell) { /* a cell's jobs are consecutive */
            size_t cap = t->cap;
            cg_grow(&t->cell, &t->cap, t->n + 1, sizeof *t->cell);
            if (t->cap != cap) /* grown with its cells, not once per cell */
                t->phases = cg_xrealloc(t->phases, t->cap * sizeof *t->phases);
            t->cell[t->n] = j->cell;
            t->phases[t->n++] = 0;
        }
        t->phases[t->n - 1] |= (uint64_t)1 << j->phase;
    }
}

static void wf_counter_release(wf_counter *c)
{
    for (size_t i = 0; i < c->p->ntrees; i++) {
        free(c->trees[i].cell);
        free(c->trees[i].phases);
    }
    free(c->trees);
}

static size_t popcount64(uint64_t x)
{
    size_t n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

static size_t workflow_count(const void *ctx, const char *const *names, size_t n)
{
    const wf_counter *c = ctx;
    size_t count = c->base;
    for (size_t ti = 0; ti < c->p->ntrees; ti++) {
        const cg_tree *t = c->p->trees[ti];
        const wf_cells *wc = &c->trees[ti];
        bool *mask = cg_dot_collapse_mask(t, names, n);
        /* grouped cells: an open-addressing table of representative cells */
        size_t cap = 16;
        while (cap < 2 * wc->n)
            cap *= 2;
        uint32_t *slot = cg_xcalloc(cap, sizeof *slot);
        uint64_t *acc = cg_xcalloc(wc->n + 1, sizeof *acc);
        for (size_t i = 0; i < wc->n; i++) {
            const cg_cell *cell = wc->cell[i];
            if (!cg_dot_grouped(t, mask, cell)) {
                count += popcount64(wc->phases[i]);
                continue;
            }
            size_t h = (size_t)cg_dot_masked_hash(t, mask, cell) & (cap - 1);
            while (slot[h] && !cg_dot_masked_eq(t, mask, wc->cell[slot[h] - 1], cell))
                h = (h + 1) & (cap - 1);
            if (!slot[h])
                slot[h] = (uint32_t)i + 1;
            acc[slot[h] - 1] |= wc->phases[i];
        }
        for (size_t i = 0; i < wc->n; i++)
            count += popcount64(acc[i]);
        free(slot);
        free(acc);
        free(mask);
    }
    return count;
}

/* ---- the layout's size, estimated ---- */

typedef struct wf_est_ctx {
    const cg_model *p;
    size_t w;
    const wf_counter *wc;
    size_t max_nodes;
    const cg_strbuf *label;
} wf_est_ctx;

/* The LR layout: a node's column is its longest chain of requires; a
 * column's nodes stack top to bottom, a cluster's label and margins on each
 * column it has nodes in. */
static size_t wf_est(const void *ctx, const char *const *names, size_t n)
{
    const wf_est_ctx *E = ctx;
    size_t count = workflow_count(E->wc, names, n);
    if (E->max_nodes && count > E->max_nodes)
        return SIZE_MAX / 2 + count;
    gmodel G;
    gm_build(&G, E->p, E->w, names, n);
    uint32_t *rank = cg_xcalloc(G.n + 1, sizeof *rank);
    uint32_t nranks = 1;
    bool moved = true;
    for (size_t pass = 0; moved && pass < G.n; pass++) { /* a cycle stops after n passes */
        moved = false;
        for (size_t e = 0; e < G.ne; e++)
            if (rank[G.e[e].to] < rank[G.e[e].from] + 1) {
                rank[G.e[e].to] = rank[G.e[e].from] + 1;
                moved = true;
            }
    }
    for (size_t i = 0; i < G.n; i++)
        nranks = rank[i] + 1 > nranks ? rank[i] + 1 : nranks;
    double *colh = cg_xcalloc(nranks + 1, sizeof *colh), *colw = cg_xcalloc(nranks + 1, sizeof *colw);
    uint32_t *seen = cg_xcalloc((size_t)G.nc * nranks + 1, sizeof *seen);
    for (size_t i = 0; i < G.n; i++) {
        const gnode *v = &G.v[i];
        size_t lines = 1, chars;
        if (v->kind == G_STATIC) {
            lines += v->invokes != NULL;
            chars = strlen(v->name);
        } else if (v->kind == G_MISSING) {
            lines = 2;
            chars = strlen(v->name) > 20 ? strlen(v->name) : 20;
        } else {
            lines += (v->grouped && v->njobs > 1) + (v->ngated > 0);
            const gcluster *C = &G.c[v->cluster - 1];
            chars = C->nnodes > 1 ? strlen(G.p->trees[v->tree]->phases[v->job->phase].name) + 4 : strlen(v->job->name);
            if (C->nnodes > 1 && !seen[(size_t)(v->cluster - 1) * nranks + rank[i]]) {
                seen[(size_t)(v->cluster - 1) * nranks + rank[i]] = 1;
                colh[rank[i]] += CG_DOT_CLUSTER_PT;
            }
        }
        colh[rank[i]] += cg_dot_node_h(lines) + CG_DOT_NODESEP_PT;
        double w = cg_dot_node_w(chars > 12 ? chars : 12);
        colw[rank[i]] = w > colw[rank[i]] ? w : colw[rank[i]];
    }
    double width = 0, height = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        width += colw[r] + CG_DOT_RANKSEP_PT;
        height = colh[r] > height ? colh[r] : height;
    }
    free(colh);
    free(colw);
    free(seen);
    free(rank);
    gm_release(&G);
    return cg_dot_px(width, height, E->label);
}

typedef struct grender {
    const gmodel *G;
    cg_dot_namer **namers;        /* [ntrees], made on first use */
    const cg_dot_id *ids;         /* [G->n]: the nodes' (the first ids taken) */
    const char **cluster_names;   /* [G->nc]: the cell name, '*' for collapsed values */
    cg_strbuf *out;
    const cg_dot_sink *sink;
} grender;

static cg_dot_namer *gr_namer(grender *R, uint32_t tree)
{
    if (!R->namers[tree]) {
        R->namers[tree] = cg_xmalloc(sizeof **R->namers);
        cg_dot_namer_init(R->namers[tree], R->G->p->trees[tree]);
    }
    return R->namers[tree];
}

static void emit_job_node(grender *R, uint32_t i, const char *indent)
{
    const gmodel *G = R->G;
    const gnode *v = &G->v[i];
    cg_strbuf *out = R->out;
    cg_strbuf label = CG_STRBUF_INIT, full = CG_STRBUF_INIT;
    cg_strbuf_adds(out, indent);
    cg_dot_quote_id(out, &R->ids[i]);
    if (v->kind == G_STATIC) {
        cg_strbuf_adds(&label, v->name);
        if (v->invokes)
            cg_strbuf_addf(&label, "\n(runs %s)", v->invokes);
        cg_strbuf_adds(out, " [label=");
        cg_dot_quote_sb(out, &label);
        cg_strbuf_adds(out, ", fillcolor=\"" STATIC_FILL "\"];\n");
    } else if (v->kind == G_MISSING) {
        cg_strbuf_addf(&label, "%s\nnot in this workflow", v->name);
        cg_strbuf_adds(out, " [label=");
        cg_dot_quote_sb(out, &label);
        cg_strbuf_adds(out, ", style=\"rounded,dashed\", color=\"#cc0000\", fontcolor=\"#cc0000\"];\n");
    } else {
        const cg_job *j = v->job;
        if (v->grouped && v->njobs > 1)
            cg_dot_namer_name(gr_namer(R, v->tree), j->cell, G->masks[v->tree], (int)j->phase, &full);
        else
            cg_strbuf_adds(&full, j->name);
        /* in a cluster named after the cell, the phase says enough */
        const char *shown = full.buf;
        const gcluster *C = &G->c[v->cluster - 1];
        if (C->nnodes > 1) {
            const char *cname = R->cluster_names[v->cluster - 1];
            size_t cn = strlen(cname);
            if (strncmp(full.buf, cname, cn) == 0 && full.buf[cn] && strchr("_-.", full.buf[cn]) &&
                full.buf[cn + 1])
                shown = full.buf + cn + 1;
        }
        cg_strbuf_adds(&label, shown);
        if (v->grouped && v->njobs > 1)
            cg_strbuf_addf(&label, "\n%u jobs", (unsigned)v->njobs);
        if (v->ngated == v->njobs)
            cg_strbuf_adds(&label, "\non request");
        else if (v->ngated)
            cg_strbuf_addf(&label, "\n%u on request", (unsigned)v->ngated);
        cg_strbuf_adds(out, " [label=");
        cg_dot_quote_sb(out, &label);
        if (shown != full.buf) {
            cg_strbuf_adds(out, ", tooltip=");
            cg_dot_quote_sb(out, &full);
        }
        cg_strbuf_addf(out, ", fillcolor=\"%s\"", PALETTE(j->phase));
        if (v->ngated == v->njobs)
            cg_strbuf_adds(out, ", style=\"rounded,filled,dashed\"");
        cg_strbuf_adds(out, "];\n");
    }
    cg_dot_spill(R->sink, out, false);
    cg_strbuf_release(&label);
    cg_strbuf_release(&full);
}

static void ref_filter(cg_strbuf *out, const char *what, const cg_ref_filter *f)
{
    cg_strbuf_addf(out, "%s: ", what);
    for (size_t i = 0; i < f->nonly; i++)
        cg_strbuf_addf(out, "%s%s", i ? ", " : "", f->only[i]);
    if (f->nonly && f->nignore)
        cg_strbuf_adds(out, "; ");
    for (size_t i = 0; i < f->nignore; i++)
        cg_strbuf_addf(out, "%s%s", i ? ", " : "ignore ", f->ignore[i]);
}


/* The numbers a workflow's label shows. */
typedef struct wf_stats {
    size_t nstatic, njobs, ngated, nrequires;
    size_t n, ne; /* nodes and edges, when drawn */
} wf_stats;

static void workflow_label(const wf_stats *G, const cg_workflow_decl *wd, bool omitted, const cg_dot_opts *o,
                           bool drawn, cg_strbuf *label)
{
    cg_strbuf_addf(label, "workflow %s", wd->name);
    if (omitted) /* as config.yml has it: not at all */
        cg_strbuf_adds(label, " (not written: the special-PR selection left it without jobs)");
    if (wd->schedule) {
        cg_strbuf_addf(label, "\nschedule: %s (UTC)", wd->schedule);
        if (wd->branches.set) {
            cg_strbuf_adds(label, ", ");
            ref_filter(label, "branches", &wd->branches);
        }
    } else if (wd->branches.set || wd->tags.set) {
        cg_strbuf_adds(label, "\non every job: ");
        if (wd->branches.set)
            ref_filter(label, "branches", &wd->branches);
        if (wd->branches.set && wd->tags.set)
            cg_strbuf_adds(label, "; ");
        if (wd->tags.set)
            ref_filter(label, "tags", &wd->tags);
    }
    if (wd->per_change)
        cg_strbuf_adds(label, "\nper change: special-PR selections land here");
    if (wd->when) {
        char *s = json_dumps(wd->when, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
        cg_strbuf_addf(label, "\nwhen: %s", s ? s : "?");
        free(s);
    }
    if (wd->ntiers || wd->non_request) {
        cg_strbuf_adds(label, "\n");
        if (wd->ntiers)
            cg_dot_names_line(label, "tier", wd->tiers, wd->ntiers);
        if (wd->ntiers && wd->non_request)
            cg_strbuf_adds(label, "; ");
        if (wd->non_request)
            cg_dot_names_line(label, "on request (dashed)", wd->on_request, wd->non_request);
    }
    cg_strbuf_adds(label, "\n");
    cg_dot_plural(label, G->nstatic + G->njobs, "job", "jobs");
    cg_strbuf_addf(label, ": %zu listed in the manifest, %zu generated", G->nstatic, G->njobs);
    if (G->ngated)
        cg_strbuf_addf(label, " (%zu on request)", G->ngated);
    cg_strbuf_adds(label, "; ");
    cg_dot_plural(label, G->nrequires, "requires edge", "requires edges");
    if (o->ncollapse) {
        cg_strbuf_adds(label, "\n");
        cg_dot_names_line(label, o->fit_px ? "collapsed to fit a screen" : "collapsed", o->collapse, o->ncollapse);
        if (drawn)
            cg_strbuf_addf(label, " (drawn as %zu nodes, %zu edges)", G->n, G->ne);
    }
}

void cg_dot_workflow(const cg_model *p, size_t w, const cg_dot_opts *o0, cg_strbuf *out)
{
    const cg_workflow_decl *wd = &p->manifest.workflows[w];
    wf_counter wc;
    wf_counter_init(&wc, p, w);
    /* every tree's dimensions, each once */
    const char **cands = NULL;
    size_t ncands = 0, cap = 0;
    for (size_t ti = 0; ti < p->ntrees; ti++)
        for (size_t d = 0; d < p->trees[ti]->ndims; d++) {
            bool dup = false;
            for (size_t k = 0; k < ncands && !dup; k++)
                dup = cg_streq(cands[k], p->trees[ti]->dims[d]);
            if (!dup) {
                cg_grow(&cands, &cap, ncands + 1, sizeof *cands);
                cands[ncands++] = p->trees[ti]->dims[d];
            }
        }
    /* by default, the collapses that fit the diagram on a screen */
    cg_dot_opts oo = *o0;
    const cg_dot_opts *o = &oo;
    const char **chosen = cg_xmalloc((o0->ncollapse + ncands + 1) * sizeof *chosen);
    if (o0->ncollapse)
        memcpy(chosen, o0->collapse, o0->ncollapse * sizeof *chosen);
    if (o0->fit_px) {
        wf_stats base = {wc.nstatic, wc.njobs, wc.ngated, wc.nrequires, 0, 0};
        cg_strbuf est_label = CG_STRBUF_INIT;
        workflow_label(&base, wd, (p->omitted >> w) & 1, o0, false, &est_label);
        wf_est_ctx we = {p, w, &wc, o0->max_nodes, &est_label};
        cg_dot_fit(cands, ncands, o0->fit_px, wf_est, &we, chosen, &oo.ncollapse);
        oo.collapse = chosen;
        cg_strbuf_release(&est_label);
    }
    bool fitted = oo.ncollapse > o0->ncollapse;
    /* count first: over the limit, only the note is drawn and no graph built */
    size_t count = workflow_count(&wc, o->collapse, o->ncollapse);
    bool note = o->max_nodes && count > o->max_nodes;
    gmodel G;
    wf_stats stats = {wc.nstatic, wc.njobs, wc.ngated, wc.nrequires, count, 0};
    if (!note) {
        gm_build(&G, p, w, o->collapse, o->ncollapse);
        stats = (wf_stats){G.nstatic, G.njobs, G.ngated, G.nrequires, G.n, G.ne};
    }
    cg_strbuf label = CG_STRBUF_INIT, what = CG_STRBUF_INIT;
    workflow_label(&stats, wd, (p->omitted >> w) & 1, o, !note, &label);
    if (fitted && !note)
        cg_dot_whole_line(&label, "workflow", wd->name);
    cg_strbuf_addf(&what, "The job graph of workflow '%s': requires as edges (from the required job), the jobs of "
                          "a cell boxed together, on-request jobs dashed.", wd->name);
    if (note) {
        cg_dot_emit_note(out, p, "workflow", wd->name, o, count, cands, ncands, workflow_count, &wc, &label, what.buf);
    } else {
        grender R = {.G = &G, .out = out, .sink = o->sink};
        R.namers = cg_xcalloc(p->ntrees + 1, sizeof *R.namers);
        R.cluster_names = cg_xcalloc(G.nc + 1, sizeof *R.cluster_names);
        cg_dot_ids used;
        cg_dot_ids_init(&used);
        cg_strbuf id = CG_STRBUF_INIT;
        for (size_t i = 0; i < G.n; i++) {
            const gnode *v = &G.v[i];
            if (v->kind != G_JOB || !v->grouped) { /* names the model holds */
                cg_dot_ids_take_name(&used, "j:", v->kind != G_JOB ? v->name : v->job->name);
                continue;
            }
            const cg_tree *t = p->trees[v->tree];
            cg_strbuf_reset(&id);
            cg_strbuf_addf(&id, "g:%s:%s:", t->name, t->phases[v->job->phase].name);
            cg_dot_masked_path(t, G.masks[v->tree], v->job->cell, &id);
            cg_dot_ids_take(&used, &id);
        }
        R.ids = used.v;
        for (size_t c = 0; c < G.nc; c++) {
            const gcluster *C = &G.c[c];
            cg_strbuf_reset(&id);
            cg_dot_namer_name(gr_namer(&R, C->tree), C->job->cell, C->grouped ? G.masks[C->tree] : NULL, -1, &id);
            R.cluster_names[c] = cg_pool_strndup(&used.pool, cg_strbuf_str(&id), id.len);
        }
        cg_dot_begin_graph(out, p, what.buf, "workflow", wd->name, &label);
        for (size_t i = 0; i < G.n; i++) {
            const gnode *v = &G.v[i];
            const gcluster *C = v->cluster ? &G.c[v->cluster - 1] : NULL;
            if (!C || C->nnodes < 2) {
                emit_job_node(&R, (uint32_t)i, "  ");
                continue;
            }
            if (C->first != i)
                continue; /* drawn with its cluster */
            const cg_tree *t = p->trees[C->tree];
            cg_strbuf_reset(&id);
            cg_strbuf_addf(&id, "cluster_%s:", t->name);
            cg_dot_masked_path(t, C->grouped ? G.masks[C->tree] : NULL, C->job->cell, &id);
            cg_dot_ids_take(&used, &id);
            R.ids = used.v; /* it may have moved */
            cg_strbuf_adds(out, "  subgraph ");
            cg_dot_quote_sb(out, &id);
            cg_strbuf_adds(out, " {\n    graph [style=rounded, color=\"#bbbbbb\", fontsize=10, label=");
            cg_strbuf_reset(&id);
            cg_strbuf_adds(&id, R.cluster_names[v->cluster - 1]);
            if (C->ncells > 1)
                cg_strbuf_addf(&id, " (%u cells)", (unsigned)C->ncells);
            cg_dot_quote_sb(out, &id);
            cg_strbuf_adds(out, "];\n");
            for (uint32_t k = C->first; k != NONE; k = G.v[k].next)
                emit_job_node(&R, k, "    ");
            cg_strbuf_adds(out, "  }\n");
        }
        for (size_t e = 0; e < G.ne; e++) {
            cg_strbuf_adds(out, "  ");
            cg_dot_quote_id(out, &R.ids[G.e[e].from]);
            cg_strbuf_adds(out, " -> ");
            cg_dot_quote_id(out, &R.ids[G.e[e].to]);
            cg_strbuf_adds(out, ";\n");
            cg_dot_spill(o->sink, out, false);
        }
        cg_strbuf_adds(out, "}\n");
        cg_strbuf_release(&id);
        for (size_t t = 0; t < p->ntrees; t++)
            if (R.namers[t]) {
                cg_dot_namer_release(R.namers[t]);
                free(R.namers[t]);
            }
        free(R.cluster_names);
        free(R.namers);
        cg_dot_ids_release(&used);
        gm_release(&G);
    }
    cg_dot_spill(o->sink, out, true);
    cg_strbuf_release(&label);
    cg_strbuf_release(&what);
    wf_counter_release(&wc);
    free(cands);
    free(chosen);
}
