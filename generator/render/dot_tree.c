/* dot_tree — the diagram of one tree's dimensions (cg_dot_tree, render/dot.h). */
#include "render/dot.h"
#include "render/dot_impl.h"

/* ---- the dimension tree ---- */

#define ITEM(idx, leaf) (((uint32_t)(idx) << 1) | (leaf))

typedef struct vnode {     /* a value of a dimension, on the path of some cells */
    uint32_t parent;       /* NONE: the root */
    int dim;               /* -1: the root */
    const char *value;     /* NULL: the dimension is collapsed */
    uint64_t hash;         /* of the whole path */
    uint32_t ncells, nlive;
    uint32_t nvalues;      /* collapsed: distinct values */
    uint32_t nchildren, nleaves;
    uint32_t group;        /* collapsed paths: the leaf (+1) of the cells ending here */
    uint32_t first, last, next; /* child items (value nodes and leaves), in order */
} vnode;

typedef struct vleaf {     /* a cell, or cells differing only in collapsed dimensions */
    uint32_t node;
    uint32_t first_cell, last_cell;
    uint32_t ncells, nlive, nextra, njobs;
    uint32_t npr;          /* cells that run on every pull request */
    uint32_t next;
    bool group;
} vleaf;

typedef struct vseen {
    uint32_t node;
    const char *value;
} vseen;

typedef struct tmodel {
    const cg_tree *t;
    const cg_cells *cells;
    vnode *v;
    size_t n, cap;
    vleaf *l;
    size_t nl, lcap;
    uint32_t *next_cell;   /* [cells->n]: the next cell of the same leaf */
    vseen *seen;
    size_t nseen, seen_cap;
    cg_dot_htab nodes, seen_tab;
} tmodel;

static bool vnode_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const tmodel *m = ctx;
    const vnode *x = &m->v[a], *y = &m->v[b];
    return x->parent == y->parent && x->dim == y->dim && cg_streq(x->value, y->value);
}

static bool vseen_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const tmodel *m = ctx;
    return m->seen[a].node == m->seen[b].node && strcmp(m->seen[a].value, m->seen[b].value) == 0;
}

static uint32_t *item_next(tmodel *m, uint32_t item)
{
    return item & 1 ? &m->l[item >> 1].next : &m->v[item >> 1].next;
}

static void link_item(tmodel *m, uint32_t parent, uint32_t item)
{
    vnode *p = &m->v[parent];
    if (p->last == NONE)
        p->first = item;
    else
        *item_next(m, p->last) = item;
    m->v[parent].last = item;
}

static uint32_t tm_child(tmodel *m, uint32_t parent, int dim, const char *value)
{
    cg_grow(&m->v, &m->cap, m->n + 1, sizeof *m->v);
    vnode *c = &m->v[m->n];
    memset(c, 0, sizeof *c);
    c->parent = parent;
    c->dim = dim;
    c->value = value;
    c->hash = cg_dot_mix(cg_dot_mix(m->v[parent].hash, (uint64_t)dim + 1), value ? cg_dot_str_hash(value) : 0x2a);
    c->first = c->last = c->next = NONE;
    uint32_t got = cg_dot_htab_intern(&m->nodes, c->hash, (uint32_t)m->n, vnode_eq, m);
    if (got == m->n) {
        m->n++;
        link_item(m, parent, ITEM(got, 0));
        m->v[parent].nchildren++;
    }
    return got;
}

static uint32_t tm_leaf(tmodel *m, uint32_t node, bool group)
{
    cg_grow(&m->l, &m->lcap, m->nl + 1, sizeof *m->l);
    m->l[m->nl] = (vleaf){.node = node, .first_cell = NONE, .last_cell = NONE, .next = NONE, .group = group};
    link_item(m, node, ITEM(m->nl, 1));
    m->v[node].nleaves++;
    return (uint32_t)m->nl++;
}

/* Builds the trie of the cells' values; njobs[cell] and pr[cell] may be NULL. */
static void tm_build(tmodel *m, const cg_tree *t, const cg_cells *cells, const bool *mask, const uint32_t *njobs,
                     const bool *pr)
{
    memset(m, 0, sizeof *m);
    m->t = t;
    m->cells = cells;
    m->next_cell = cg_xcalloc(cells->n + 1, sizeof *m->next_cell);
    cg_grow(&m->v, &m->cap, 1, sizeof *m->v);
    m->v[0] = (vnode){.parent = NONE, .dim = -1, .hash = 0x243f6a8885a308d3ULL, .first = NONE, .last = NONE,
                      .next = NONE};
    m->n = 1;
    /* cells come in tree order: where a cell's values up to a dimension are
     * the previous cell's (interned: the same pointers), so is its node
     * there, and its collapsed value was seen already: no lookup */
    const char **prev = cg_xcalloc(t->ndims + 1, sizeof *prev);
    uint32_t *prev_node = cg_xcalloc(t->ndims + 1, sizeof *prev_node);
    for (size_t ci = 0; ci < cells->n; ci++) {
        const cg_cell *c = &cells->v[ci];
        bool live = c->status == CG_CELL_LIVE, any_collapsed = false, same = ci > 0;
        uint32_t cur = 0;
        m->v[0].ncells++;
        m->v[0].nlive += live;
        for (size_t d = 0; d < t->ndims; d++) {
            const char *val = c->values[d];
            same = same && prev[d] == val;
            prev[d] = val;
            if (!val)
                continue;
            if (same) {
                cur = prev_node[d];
                m->v[cur].ncells++;
                m->v[cur].nlive += live;
                any_collapsed |= mask[d];
                continue;
            }
            cur = prev_node[d] = tm_child(m, cur, (int)d, mask[d] ? NULL : val);
            m->v[cur].ncells++;
            m->v[cur].nlive += live;
            if (mask[d]) {
                any_collapsed = true;
                cg_grow(&m->seen, &m->seen_cap, m->nseen + 1, sizeof *m->seen);
                m->seen[m->nseen] = (vseen){cur, val};
                uint64_t h = cg_dot_mix(m->v[cur].hash, cg_dot_str_hash(val));
                if (cg_dot_htab_intern(&m->seen_tab, h, (uint32_t)m->nseen, vseen_eq, m) == m->nseen) {
                    m->nseen++;
                    m->v[cur].nvalues++;
                }
            }
        }
        uint32_t lf;
        if (any_collapsed) {
            if (!m->v[cur].group)
                m->v[cur].group = tm_leaf(m, cur, true) + 1;
            lf = m->v[cur].group - 1;
        } else {
            lf = tm_leaf(m, cur, false);
        }
        vleaf *L = &m->l[lf];
        L->ncells++;
        L->nlive += live;
        L->nextra += c->extra;
        L->njobs += njobs ? njobs[ci] : 0;
        L->npr += pr && pr[ci];
        m->next_cell[ci] = NONE;
        if (L->last_cell == NONE)
            L->first_cell = (uint32_t)ci;
        else
            m->next_cell[L->last_cell] = (uint32_t)ci;
        L->last_cell = (uint32_t)ci;
    }
    free(prev);
    free(prev_node);
    /* what only building needs */
    cg_dot_htab_release(&m->nodes);
    cg_dot_htab_release(&m->seen_tab);
    free(m->seen);
    m->seen = NULL;
}

static void tm_release(tmodel *m)
{
    free(m->v);
    free(m->l);
    free(m->next_cell);
    free(m->seen);
    cg_dot_htab_release(&m->nodes);
    cg_dot_htab_release(&m->seen_tab);
}

/* A value node that holds exactly one leaf and nothing else is drawn as that leaf. */
static bool tm_merged(const tmodel *m, uint32_t i)
{
    return i != 0 && m->v[i].nchildren == 0 && m->v[i].nleaves == 1;
}


/* The number of nodes tm_build() and tm_count() would give, without the
 * model: a table of (parent, dimension, value) with the value as its
 * pointer (cell values are interned), and per node whether it has children
 * and how many leaves. */
typedef struct tn_slot {
    const char *value;
    uint32_t parent, id;
    int32_t dim;
    uint32_t epoch;      /* the slot is empty unless this is the table's */
} tn_slot;

/* Kept between counts (the fit counts a tree many times): a count starts
 * a new epoch in a small part of the table, instead of clearing or
 * allocating it again, and grows that part as it needs (a large table
 * spread thin would miss the cache on every lookup). */
typedef struct tn_table {
    tn_slot *slot;
    size_t cap;                 /* the slots in use: a power of two */
    size_t alloc;               /* the slots allocated */
    uint8_t *has_child, *group; /* per node id, set when the node is made */
    uint32_t *leaves;
    uint32_t n;                 /* nodes, the root (0) included */
    uint32_t epoch;
    uint32_t last_n;            /* the most nodes a count made so far */
} tn_table;

static uint64_t tn_hash(uint32_t parent, int32_t dim, const char *value)
{
    return cg_dot_mix(cg_dot_mix(parent, (uint64_t)dim + 1), (uint64_t)(uintptr_t)value);
}

/* Starts a new epoch: every slot is free again. */
static void tn_new_epoch(tn_table *T)
{
    if (++T->epoch == 0) { /* wrapped: a stale slot could carry any epoch */
        memset(T->slot, 0, T->alloc * sizeof *T->slot);
        T->epoch = 1;
    }
}

static void tn_place(tn_table *T, tn_slot s)
{
    size_t h = (size_t)tn_hash(s.parent, s.dim, s.value) & (T->cap - 1);
    while (T->slot[h].epoch == T->epoch)
        h = (h + 1) & (T->cap - 1);
    s.epoch = T->epoch;
    T->slot[h] = s;
}

/* Doubles the slots in use (from none: to `first`), keeping the entries. */
static void tn_grow(tn_table *T, size_t first)
{
    size_t cap = T->cap ? T->cap * 2 : first;
    tn_slot *keep = NULL;
    size_t nkeep = 0;
    if (T->cap) {
        keep = cg_xmalloc(((size_t)T->n + 1) * sizeof *keep);
        for (size_t i = 0; i < T->cap; i++)
            if (T->slot[i].epoch == T->epoch)
                keep[nkeep++] = T->slot[i];
    }
    if (cap > T->alloc) {
        T->slot = cg_xrealloc(T->slot, cap * sizeof *T->slot);
        memset(T->slot + T->alloc, 0, (cap - T->alloc) * sizeof *T->slot);
        T->alloc = cap;
        T->has_child = cg_xrealloc(T->has_child, cap / 2 + 1);
        T->group = cg_xrealloc(T->group, cap / 2 + 1);
        T->leaves = cg_xrealloc(T->leaves, (cap / 2 + 1) * sizeof *T->leaves);
    }
    T->cap = cap;
    tn_new_epoch(T); /* the kept entries are placed again, in the wider table */
    for (size_t i = 0; i < nkeep; i++)
        tn_place(T, keep[i]);
    free(keep);
}

static void tn_release(tn_table *T)
{
    free(T->slot);
    free(T->has_child);
    free(T->group);
    free(T->leaves);
    memset(T, 0, sizeof *T);
}

/* A new node, id T->n. */
static uint32_t tn_node(tn_table *T)
{
    uint32_t id = T->n++;
    T->has_child[id] = 0;
    T->group[id] = 0;
    T->leaves[id] = 0;
    return id;
}

/* The number of nodes tm_build() would draw, without the model: a table
 * of (parent, dimension, value) with the value as its pointer (cell values
 * are interned), and per node whether it has children and how many leaves.
 * T: the table, kept between calls (zeroed the first time). */
static size_t tree_nodes(const cg_tree *t, const cg_cells *cells, const bool *mask, tn_table *T)
{
    /* a new epoch in the first slots: as many as the largest count so far
     * needed (the counts of a fit are alike), not regrown from 1024 */
    size_t want = 1024, guess = T->last_n ? T->last_n : cells->n; /* the first: about a node per cell */
    while (want / 2 < guess + 1)
        want *= 2;
    T->n = 0;
    T->cap = 0;
    tn_grow(T, want);
    tn_node(T); /* the root */
    size_t nl = 0;
    /* cells come in tree order: a cell's path mostly repeats the previous
     * one's, whose nodes are reused without a lookup */
    const char **prev = cg_xcalloc(t->ndims + 1, sizeof *prev);
    uint32_t *prev_node = cg_xcalloc(t->ndims + 1, sizeof *prev_node);
    static const char absent = 0;
    for (size_t ci = 0; ci < cells->n; ci++) {
        const cg_cell *c = &cells->v[ci];
        uint32_t cur = 0;
        bool collapsed = false, same = ci > 0;
        for (size_t d = 0; d < t->ndims; d++) {
            const char *val = c->values[d];
            const char *seen = !val ? &absent : mask[d] ? NULL : val;
            same = same && prev[d] == seen;
            prev[d] = seen;
            if (!val)
                continue;
            if (mask[d]) {
                val = NULL;
                collapsed = true;
            }
            if (same) {
                cur = prev_node[d];
                continue;
            }
            if ((size_t)T->n + 1 > T->cap / 2)
                tn_grow(T, 0);
            size_t h = (size_t)tn_hash(cur, (int32_t)d, val) & (T->cap - 1);
            while (T->slot[h].epoch == T->epoch &&
                   !(T->slot[h].parent == cur && T->slot[h].dim == (int32_t)d && T->slot[h].value == val))
                h = (h + 1) & (T->cap - 1);
            if (T->slot[h].epoch != T->epoch) {
                T->slot[h] = (tn_slot){val, cur, tn_node(T), (int32_t)d, T->epoch};
                T->has_child[cur] = 1;
            }
            cur = prev_node[d] = T->slot[h].id;
        }
        if (!collapsed || !T->group[cur]) {
            T->group[cur] |= collapsed;
            T->leaves[cur]++;
            nl++;
        }
    }
    T->last_n = T->n > T->last_n ? T->n : T->last_n; /* the most any count needed */
    size_t count = T->n + nl;
    for (uint32_t i = 1; i < T->n; i++)
        count -= !T->has_child[i] && T->leaves[i] == 1; /* drawn as its leaf */
    free(prev);
    free(prev_node);
    return count;
}

/* tree_nodes() with a table of its own. */
static size_t tree_nodes_once(const cg_tree *t, const cg_cells *cells, const bool *mask)
{
    tn_table T = {0};
    size_t count = tree_nodes(t, cells, mask, &T);
    tn_release(&T);
    return count;
}

typedef struct tree_counter {
    const cg_model *p;
    size_t ti;
} tree_counter;

static size_t tree_count(const void *ctx, const char *const *names, size_t n)
{
    const tree_counter *c = ctx;
    const cg_tree *t = c->p->trees[c->ti];
    bool *mask = cg_dot_collapse_mask(t, names, n);
    size_t count = tree_nodes_once(t, &c->p->cells[c->ti], mask);
    free(mask);
    return count;
}

/* ---- the layout's size, estimated ---- */

typedef struct tree_est_ctx {
    const cg_model *p;
    size_t ti;
    const uint32_t *njobs;
    const bool *pr;
    size_t max_nodes;
    const cg_strbuf *label;
    tn_table *nodes;       /* tree_nodes()'s table, kept between estimates */
} tree_est_ctx;

/* The lines of a leaf's label (emit_leaf). */
static size_t leaf_lines(const vleaf *L, bool merged)
{
    size_t lines = 2 + merged + (L->nextra > 0) + (L->npr > 0);
    if (L->group && L->nlive < L->ncells)
        lines++; /* a reason, mostly */
    return lines;
}

/* The LR layout: leaves stacked top to bottom, one column per level. */
static size_t tree_est(const void *ctx, const char *const *names, size_t n)
{
    const tree_est_ctx *E = ctx;
    const cg_tree *t = E->p->trees[E->ti];
    const cg_cells *cells = &E->p->cells[E->ti];
    bool *mask = cg_dot_collapse_mask(t, names, n);
    size_t count = tree_nodes(t, cells, mask, E->nodes);
    if (E->max_nodes && count > E->max_nodes) {
        free(mask);
        return SIZE_MAX / 2 + count;
    }
    tmodel m;
    tm_build(&m, t, cells, mask, E->njobs, E->pr);
    cg_dot_namer nm;
    cg_dot_namer_init(&nm, t);
    uint32_t *depth = cg_xcalloc(m.n + 1, sizeof *depth);
    double *col = cg_xcalloc(t->ndims + 3, sizeof *col);
    double *colh = cg_xcalloc(t->ndims + 3, sizeof *colh);
    double height = 0;
    cg_strbuf name = CG_STRBUF_INIT;
    col[0] = cg_dot_node_w(strlen(t->name));
    for (size_t i = 1; i < m.n; i++) {
        const vnode *v = &m.v[i];
        depth[i] = depth[v->parent] + 1;
        size_t chars = strlen(t->dims[v->dim]) + (v->value ? strlen(v->value) + 1 : 10);
        if (!tm_merged(&m, (uint32_t)i)) {
            double w = cg_dot_node_w(chars);
            col[depth[i]] = w > col[depth[i]] ? w : col[depth[i]];
        }
    }
    for (size_t li = 0; li < m.nl; li++) {
        const vleaf *L = &m.l[li];
        bool merged = tm_merged(&m, L->node);
        cg_strbuf_reset(&name);
        cg_dot_namer_name(&nm, &cells->v[L->first_cell], L->ncells > 1 ? mask : NULL, -1, &name);
        size_t chars = name.len > 24 ? name.len : 24;
        uint32_t d = merged ? depth[L->node] : depth[L->node] + 1;
        double w = cg_dot_node_w(chars);
        col[d] = w > col[d] ? w : col[d];
        colh[d] += cg_dot_node_h(leaf_lines(L, merged)) + CG_DOT_NODESEP_PT;
    }
    /* columns share rows (a leaf beside a deeper branch), in part: the
     * tallest column and a quarter of the rest (measured on dot 2.4x) */
    double sum = 0;
    for (size_t d = 0; d < t->ndims + 2; d++) {
        height = colh[d] > height ? colh[d] : height;
        sum += colh[d];
    }
    height += (sum - height) / 4;
    double width = 0;
    for (size_t d = 0; d < t->ndims + 2; d++)
        if (col[d] > 0)
            width += col[d] + CG_DOT_RANKSEP_PT;
    cg_strbuf_release(&name);
    free(col);
    free(colh);
    free(depth);
    cg_dot_namer_release(&nm);
    tm_release(&m);
    free(mask);
    return cg_dot_px(width, height, E->label);
}

/* ---- rendering the dimension tree ---- */

typedef struct trender {
    const tmodel *m;
    const bool *mask;
    cg_dot_namer nm;
    cg_dot_ids used;       /* leaf ids */
    cg_strbuf *out;
    const cg_dot_sink *sink;
} trender;

/* The path of value node i: "os=linux/package=conda"; "" for the root
 * (spelt when needed, from the root down: never kept per node). */
static void add_path(const tmodel *m, uint32_t i, cg_strbuf *out, size_t start)
{
    if (i == 0)
        return;
    const vnode *v = &m->v[i];
    add_path(m, v->parent, out, start);
    cg_dot_path_add(out, start, m->t->dims[v->dim], v->value);
}

static void node_id(const trender *R, uint32_t i, cg_strbuf *id)
{
    if (i == 0) {
        cg_strbuf_adds(id, "root");
        return;
    }
    cg_strbuf_adds(id, "v:");
    add_path(R->m, i, id, id->len);
}

static void emit_edge(cg_strbuf *out, const cg_strbuf *from, const cg_strbuf *to, bool grey)
{
    cg_strbuf_adds(out, "  ");
    cg_dot_quote_sb(out, from);
    cg_strbuf_adds(out, " -> ");
    cg_dot_quote_sb(out, to);
    if (grey)
        cg_strbuf_adds(out, GREY_EDGE);
    cg_strbuf_adds(out, ";\n");
}

static void removal_reason(const cg_tree *t, const cg_cell *c, cg_strbuf *out)
{
    const cg_pos *pos = c->removed_by ? &c->removed_by->pos : &c->leaf->pos;
    const char *file = pos->file ? pos->file : t->file;
    if (c->status == CG_CELL_EXCLUDED)
        cg_strbuf_addf(out, "excluded by %s:%u", file, (unsigned)pos->line);
    else
        cg_strbuf_addf(out, "not in 'only' at %s:%u", file, (unsigned)pos->line);
}

static void value_label(const tmodel *m, const vnode *v, cg_strbuf *label)
{
    const char *dim = m->t->dims[v->dim];
    if (v->value) {
        cg_strbuf_addf(label, "%s=%s", dim, v->value);
    } else {
        cg_strbuf_addf(label, "%s: ", dim);
        cg_dot_plural(label, v->nvalues, "value", "values");
    }
}

/* The distinct reasons the removed cells of a leaf are gone, a few. */
static void leaf_reasons(const tmodel *m, const vleaf *L, cg_strbuf *label)
{
    enum { SHOWN = 3 };
    cg_strbuf seen[SHOWN];
    size_t n = 0;
    bool more = false;
    for (uint32_t ci = L->first_cell; ci != NONE && !more; ci = m->next_cell[ci]) {
        const cg_cell *c = &m->cells->v[ci];
        if (c->status == CG_CELL_LIVE)
            continue;
        cg_strbuf r = CG_STRBUF_INIT;
        removal_reason(m->t, c, &r);
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = cg_streq(seen[i].buf, r.buf);
        if (dup)
            cg_strbuf_release(&r);
        else if (n < SHOWN)
            seen[n++] = r;
        else
            more = true, cg_strbuf_release(&r);
    }
    for (size_t i = 0; i < n; i++) {
        cg_strbuf_addf(label, "\n%s", seen[i].buf);
        cg_strbuf_release(&seen[i]);
    }
    if (more)
        cg_strbuf_adds(label, "\n...");
}

/* A leaf: one cell, or the cells that differ only in collapsed dimensions.
 * `merged`: drawn in place of its value node (its only content). */
static void emit_leaf(trender *R, uint32_t li, bool merged)
{
    const tmodel *m = R->m;
    const vleaf *L = &m->l[li];
    const vnode *at = &m->v[L->node];
    const cg_cell *first = &m->cells->v[L->first_cell];
    cg_strbuf id = CG_STRBUF_INIT, from = CG_STRBUF_INIT, label = CG_STRBUF_INIT;
    if (merged) {
        node_id(R, L->node, &id);
        node_id(R, at->parent, &from);
        value_label(m, at, &label);
        cg_strbuf_addc(&label, '\n');
    } else {
        cg_strbuf_adds(&id, L->group ? "g:" : "c:");
        add_path(m, L->node, &id, id.len);
        cg_dot_ids_take(&R->used, &id);
        node_id(R, L->node, &from);
    }
    cg_dot_namer_name(&R->nm, first, L->ncells > 1 ? R->mask : NULL, -1, &label);
    cg_strbuf_addc(&label, '\n');
    if (!L->group) {
        if (!L->nlive)
            removal_reason(m->t, first, &label);
        else if (L->njobs)
            cg_dot_plural(&label, L->njobs, "job", "jobs");
        else
            cg_strbuf_adds(&label, "no job");
        if (L->npr)
            cg_strbuf_adds(&label, "\nevery PR");
        if (L->nextra)
            cg_strbuf_adds(&label, "\n(extra cell)");
    } else {
        cg_dot_plural(&label, L->ncells, "cell", "cells");
        if (L->nlive && L->nlive < L->ncells)
            cg_strbuf_addf(&label, " (%u removed)", (unsigned)(L->ncells - L->nlive));
        if (L->nlive) {
            cg_strbuf_adds(&label, ", ");
            cg_dot_plural(&label, L->njobs, "job", "jobs");
        } else {
            cg_strbuf_adds(&label, ", all removed");
        }
        if (L->npr)
            cg_strbuf_addf(&label, "\n%u on every PR", (unsigned)L->npr);
        if (L->nextra)
            cg_strbuf_addf(&label, "\n(%u extra)", (unsigned)L->nextra);
        leaf_reasons(m, L, &label);
    }
    cg_strbuf *out = R->out;
    cg_strbuf_adds(out, "  ");
    cg_dot_quote_sb(out, &id);
    cg_strbuf_adds(out, " [label=");
    cg_dot_quote_sb(out, &label);
    if (L->nlive == 0)
        cg_strbuf_adds(out, ", style=\"filled,dashed\", " GREY_ATTRS);
    else
        cg_strbuf_addf(out, ", style=filled, penwidth=%s, fillcolor=\"%s\"", L->npr ? "3, color=\"" PR_COLOR "\"" : "1.5",
                       merged ? PALETTE(at->dim) : "#ffffff");
    if (L->nextra)
        cg_strbuf_adds(out, ", peripheries=2");
    cg_strbuf_adds(out, "];\n");
    emit_edge(out, &from, &id, L->nlive == 0);
    cg_dot_spill(R->sink, out, false);
    cg_strbuf_release(&id);
    cg_strbuf_release(&from);
    cg_strbuf_release(&label);
}

/* A value node, then what hangs below it, depth first, in cell order. */
static void emit_value(trender *R, uint32_t i)
{
    const tmodel *m = R->m;
    const vnode *v = &m->v[i];
    if (tm_merged(m, i)) {
        emit_leaf(R, v->first >> 1, true);
        return;
    }
    bool grey = v->nlive == 0 && v->ncells > 0;
    cg_strbuf id = CG_STRBUF_INIT, label = CG_STRBUF_INIT;
    node_id(R, i, &id);
    cg_strbuf *out = R->out;
    cg_strbuf_adds(out, "  ");
    cg_dot_quote_sb(out, &id);
    if (i == 0) {
        cg_strbuf_adds(out, " [shape=folder, style=filled, label=");
        cg_dot_quotes(out, m->t->name);
        cg_strbuf_adds(out, grey ? ", " GREY_ATTRS "];\n" : ", fillcolor=\"" STATIC_FILL "\"];\n");
    } else {
        value_label(m, v, &label);
        cg_strbuf_adds(out, " [label=");
        cg_dot_quote_sb(out, &label);
        if (grey)
            cg_strbuf_adds(out, ", style=\"rounded,filled,dashed\", " GREY_ATTRS);
        else
            cg_strbuf_addf(out, ", fillcolor=\"%s\"", PALETTE(v->dim));
        if (!v->value)
            cg_strbuf_adds(out, ", penwidth=2");
        cg_strbuf_adds(out, "];\n");
        cg_strbuf from = CG_STRBUF_INIT;
        node_id(R, v->parent, &from);
        emit_edge(out, &from, &id, grey);
        cg_strbuf_release(&from);
    }
    cg_dot_spill(R->sink, out, false);
    cg_strbuf_release(&id);
    cg_strbuf_release(&label);
    for (uint32_t item = v->first; item != NONE; item = item & 1 ? m->l[item >> 1].next : m->v[item >> 1].next) {
        if (item & 1)
            emit_leaf(R, item >> 1, false);
        else
            emit_value(R, item >> 1);
    }
}

void cg_dot_tree(const cg_model *p, size_t ti, const cg_dot_opts *o0, cg_strbuf *out)
{
    const cg_tree *t = p->trees[ti];
    const cg_cells *cells = &p->cells[ti];
    uint32_t *njobs = cg_xcalloc(cells->n + 1, sizeof *njobs);
    bool *pr = cg_xcalloc(cells->n + 1, sizeof *pr); /* runs on every pull request */
    uint64_t pc = p->per_change >= 0 ? (uint64_t)1 << p->per_change : 0;
    size_t total_jobs = 0, npr = 0;
    for (size_t k = 0; k < p->jobs.n; k++) {
        const cg_job *j = &p->jobs.v[k];
        if (j->tree == t && !j->nmembers) { /* a group's job is no cell's */
            njobs[j->cell->index]++;
            total_jobs++;
            if ((j->workflows & pc) && !(j->gated & pc) && !pr[j->cell->index]) {
                pr[j->cell->index] = true;
                npr++;
            }
        }
    }
    cg_strbuf label = CG_STRBUF_INIT, what = CG_STRBUF_INIT;
    cg_strbuf_addf(&label, "tree %s (%s)\n", t->name, t->file);
    cg_dot_plural(&label, cells->n, "cell", "cells");
    cg_strbuf_addf(&label, ": %zu live, %zu removed; ", cells->nlive, cells->n - cells->nlive);
    cg_dot_plural(&label, total_jobs, "job", "jobs");
    cg_strbuf_adds(&label, "\nlevels:");
    for (size_t d = 0; d < t->ndims; d++)
        cg_strbuf_addf(&label, "%s %s", d ? " >" : "", t->dims[d]);
    if (npr) {
        cg_strbuf_adds(&label, "\ngreen border: runs on every PR (workflow ");
        cg_strbuf_adds(&label, p->manifest.workflows[p->per_change].name);
        cg_strbuf_adds(&label, ", not on request): ");
        cg_dot_plural(&label, npr, "cell", "cells");
    }
    /* by default, the collapses that fit the diagram on a screen */
    cg_dot_opts oo = *o0;
    const cg_dot_opts *o = &oo;
    const char **chosen = cg_xmalloc((o0->ncollapse + t->ndims + 1) * sizeof *chosen);
    if (o0->ncollapse)
        memcpy(chosen, o0->collapse, o0->ncollapse * sizeof *chosen);
    tn_table nodes = {0}; /* the fit's counts and the last one share a table */
    if (o0->fit_px) {
        tree_est_ctx te = {p, ti, njobs, pr, o0->max_nodes, &label, &nodes};
        cg_dot_fit(t->dims, t->ndims, o0->fit_px, tree_est, &te, chosen, &oo.ncollapse);
        oo.collapse = chosen;
    }
    bool fitted = oo.ncollapse > o0->ncollapse;
    bool *mask = cg_dot_collapse_mask(t, o->collapse, o->ncollapse);
    /* count first: over the limit, only the note is drawn and no model built
     * (with no limit and nothing collapsed, the count is not shown) */
    size_t count = o->max_nodes || o->ncollapse ? tree_nodes(t, cells, mask, &nodes) : 0;
    tn_release(&nodes);
    bool note = o->max_nodes && count > o->max_nodes;
    tmodel m;
    if (!note)
        tm_build(&m, t, cells, mask, njobs, pr);
    if (o->ncollapse) {
        cg_strbuf_adds(&label, "\n");
        cg_dot_names_line(&label, fitted ? "collapsed to fit a screen" : "collapsed", o->collapse, o->ncollapse);
        cg_strbuf_addf(&label, " (drawn as %zu nodes)", count);
        if (fitted && !note)
            cg_dot_whole_line(&label, "tree", t->name);
    }
    cg_strbuf_addf(&what, "The dimension tree of '%s' (%s): one level per dimension, cells as leaves, "
                          "removed cells grey and dashed.", t->name, t->file);
    if (note) {
        tree_counter tc = {p, ti};
        cg_dot_emit_note(out, p, "tree", t->name, o, count, t->dims, t->ndims, tree_count, &tc, &label, what.buf);
    } else {
        trender R = {.m = &m, .mask = mask, .out = out, .sink = o->sink};
        cg_dot_namer_init(&R.nm, t);
        cg_dot_ids_init(&R.used);
        cg_dot_begin_graph(out, p, what.buf, "tree", t->name, &label);
        emit_value(&R, 0);
        cg_strbuf_adds(out, "}\n");
        cg_dot_ids_release(&R.used);
        cg_dot_namer_release(&R.nm);
    }
    cg_dot_spill(o->sink, out, true);
    cg_strbuf_release(&label);
    cg_strbuf_release(&what);
    if (!note)
        tm_release(&m);
    free(njobs);
    free(pr);
    free(mask);
    free(chosen);
}
