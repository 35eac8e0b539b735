#include "render/dot.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- looks ---- */

/* Fill colours: of a dimension level (by dimension index) in the tree
 * diagram, of a phase (by phase index) in the job graph. */
static const char *const palette[] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#fce5cd",
                                      "#ead1dc", "#d9d2e9", "#d0e0e3", "#f4cccc"};
#define PALETTE(i) palette[(size_t)(i) % CG_ARRAY_LEN(palette)]
#define STATIC_FILL "#eeeeee"
/* what does not run: removed cells, their branches */
#define GREY_ATTRS "fillcolor=\"#f2f2f2\", color=\"#a6a6a6\", fontcolor=\"#8c8c8c\""
#define GREY_EDGE " [style=dashed, color=\"#bbbbbb\"]"
#define NONE UINT32_MAX

void cg_dot_opts_init(cg_dot_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_nodes = CG_DOT_MAX_NODES;
}

bool cg_dot_is_generated(const char *data, size_t len)
{
    size_t n = strlen(CG_DOT_HEADER_PREFIX);
    return len >= n && memcmp(data, CG_DOT_HEADER_PREFIX, n) == 0;
}

/* ---- escaping ---- */

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void cg_dot_quote(cg_strbuf *out, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    cg_strbuf_addc(out, '"');
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c == '"' || c == '\\') {
            cg_strbuf_addc(out, '\\');
            cg_strbuf_addc(out, (char)c);
            i++;
        } else if (c == '\n' || c == '\r') {
            cg_strbuf_adds(out, "\\n");
            i += c == '\r' && i + 1 < n && u[i + 1] == '\n' ? 2 : 1;
        } else {
            size_t k = c < 0x20 || c == 0x7f ? 0 : utf8_len(u + i, n - i);
            if (k == 0) {
                cg_strbuf_addf(out, "\\\\x%02X", c); /* shows as \xNN */
                i++;
            } else {
                cg_strbuf_add(out, s + i, k);
                i += k;
            }
        }
    }
    cg_strbuf_addc(out, '"');
}

static void quote(cg_strbuf *out, const char *s)
{
    cg_dot_quote(out, s, strlen(s));
}

static void quote_sb(cg_strbuf *out, const cg_strbuf *s)
{
    cg_dot_quote(out, cg_strbuf_str(s), s->len);
}

/* Text for a `//` comment: one line. */
static void comment_text(cg_strbuf *out, const char *s)
{
    for (; *s; s++)
        cg_strbuf_addc(out, (unsigned char)*s < 0x20 ? '?' : *s);
}

/* One component of a node id: dim=value, with the bytes that separate
 * components (and control bytes) percent-encoded; NULL is a collapsed "*".
 * The path starts at out->buf[start]. */
static void path_add(cg_strbuf *out, size_t start, const char *dim, const char *value)
{
    if (out->len > start)
        cg_strbuf_addc(out, '/');
    cg_strbuf_adds(out, dim);
    cg_strbuf_addc(out, '=');
    if (!value) {
        cg_strbuf_addc(out, '*');
        return;
    }
    for (const unsigned char *u = (const unsigned char *)value; *u; u++) {
        if (*u == '%' || *u == '/' || *u == '=' || *u == '*' || *u == '#' || *u == ':' || *u < 0x20 || *u == 0x7f)
            cg_strbuf_addf(out, "%%%02X", *u);
        else
            cg_strbuf_addc(out, (char)*u);
    }
}

/* ---- shared pieces ---- */

static const char *manifest_file(const cg_model *p)
{
    return p->manifest.doc ? cg_doc_file(p->manifest.doc) : "cigen.yml";
}

bool cg_dot_is_generated_by(const cg_model *p, const char *data, size_t len)
{
    cg_strbuf line = CG_STRBUF_INIT;
    cg_strbuf_adds(&line, CG_DOT_HEADER_PREFIX);
    comment_text(&line, manifest_file(p));
    cg_strbuf_adds(&line, "; do not edit.\n");
    bool mine = len >= line.len && memcmp(data, line.buf, line.len) == 0;
    cg_strbuf_release(&line);
    return mine;
}

static void begin_graph(cg_strbuf *out, const cg_model *p, const char *what, const char *kind,
                        const char *name, const cg_strbuf *label)
{
    cg_strbuf_adds(out, CG_DOT_HEADER_PREFIX);
    comment_text(out, manifest_file(p));
    cg_strbuf_adds(out, "; do not edit.\n// ");
    comment_text(out, what);
    cg_strbuf_adds(out, " Render it with `dot -Tsvg`.\ndigraph ");
    cg_strbuf g = CG_STRBUF_INIT;
    cg_strbuf_addf(&g, "%s-%s", kind, name);
    quote_sb(out, &g);
    cg_strbuf_release(&g);
    cg_strbuf_adds(out, " {\n  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=12, labelloc=t, labeljust=l, "
                        "nodesep=0.12, ranksep=0.4, label=");
    quote_sb(out, label);
    cg_strbuf_adds(out, "];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, "
                        "height=0.3, color=\"#666666\", fillcolor=\"#ffffff\"];\n"
                        "  edge [color=\"#888888\", arrowsize=0.5];\n");
}

static void plural(cg_strbuf *out, size_t n, const char *one, const char *many)
{
    cg_strbuf_addf(out, "%zu %s", n, n == 1 ? one : many);
}

static void names_line(cg_strbuf *out, const char *what, const char *const *names, size_t n)
{
    cg_strbuf_addf(out, "%s:", what);
    for (size_t i = 0; i < n; i++)
        cg_strbuf_addf(out, "%s %s", i ? "," : "", names[i]);
}

/* Makes `id` unique in `used` (appending #2, #3, ...) and records it. */
static void unique_id(cg_map *used, cg_pool *pool, cg_strbuf *id)
{
    size_t base = id->len;
    for (unsigned k = 2; cg_map_has(used, cg_strbuf_str(id)); k++) {
        cg_strbuf_truncate(id, base);
        cg_strbuf_addf(id, "#%u", k);
    }
    cg_map_put(used, cg_pool_strndup(pool, cg_strbuf_str(id), id->len), (void *)1);
}

/* A word for a suggested command line, quoted for the shell when needed. */
static void shell_word(cg_strbuf *out, const char *s)
{
    bool plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = cg_isalnum(*c) || strchr("._-/+:=,@", *c);
    if (plain) {
        cg_strbuf_adds(out, s);
        return;
    }
    cg_strbuf_addc(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            cg_strbuf_adds(out, "'\\''");
        else
            cg_strbuf_addc(out, *s);
    }
    cg_strbuf_addc(out, '\'');
}

/* Which dimensions of a tree the options collapse ([ndims], malloc'd). */
static bool *collapse_mask(const cg_tree *t, const char *const *names, size_t n)
{
    bool *mask = cg_xcalloc(t->ndims + 1, sizeof *mask);
    for (size_t i = 0; i < n; i++) {
        int id = cg_tree_name_id(t, names[i]);
        if (cg_tree_is_dim(t, id))
            mask[id] = true;
    }
    return mask;
}

/* ---- a small hash set of indexes into the caller's array ---- */

typedef struct htab {
    uint32_t *slot; /* index + 1; 0: empty */
    uint64_t *hash;
    size_t cap, n;
} htab;

typedef bool (*htab_eq)(const void *ctx, uint32_t stored, uint32_t probe);

static void htab_release(htab *h)
{
    free(h->slot);
    free(h->hash);
    memset(h, 0, sizeof *h);
}

static void htab_place(htab *h, uint64_t hash, uint32_t idx)
{
    size_t mask = h->cap - 1;
    size_t i = (size_t)hash & mask;
    while (h->slot[i])
        i = (i + 1) & mask;
    h->slot[i] = idx + 1;
    h->hash[i] = hash;
}

/* The stored entry equal to `probe`; when there is none, `probe` itself
 * (now stored).  The caller has put the probe at index `probe` of its array
 * and keeps it only when this returns `probe`. */
static uint32_t htab_intern(htab *h, uint64_t hash, uint32_t probe, htab_eq eq, const void *ctx)
{
    if ((h->n + 1) * 2 > h->cap) {
        htab old = *h;
        h->cap = old.cap ? old.cap * 2 : 64;
        h->slot = cg_xcalloc(h->cap, sizeof *h->slot);
        h->hash = cg_xcalloc(h->cap, sizeof *h->hash);
        for (size_t i = 0; i < old.cap; i++)
            if (old.slot[i])
                htab_place(h, old.hash[i], old.slot[i] - 1);
        free(old.slot);
        free(old.hash);
    }
    size_t mask = h->cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        if (!h->slot[i]) {
            h->slot[i] = probe + 1;
            h->hash[i] = hash;
            h->n++;
            return probe;
        }
        if (h->hash[i] == hash && eq(ctx, h->slot[i] - 1, probe))
            return h->slot[i] - 1;
    }
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

static uint64_t str_hash(const char *s)
{
    return cg_hash(s, strlen(s));
}

static bool str_eq_or_null(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Cells seen through the collapse mask: equal when every value matches,
 * collapsed ones only in being present.  Cell values are interned in the
 * project's pool, so equal values are the same pointer: no string work. */
static bool masked_eq(const cg_tree *t, const bool *mask, const cg_cell *a, const cg_cell *b)
{
    for (size_t d = 0; d < t->ndims; d++) {
        const char *x = a->values[d], *y = b->values[d];
        if (!x || !y) {
            if (x != y)
                return false;
        } else if (!mask[d] && x != y) {
            return false;
        }
    }
    return true;
}

static uint64_t masked_hash(const cg_tree *t, const bool *mask, const cg_cell *c)
{
    uint64_t h = 0x5bd1e995;
    for (size_t d = 0; d < t->ndims; d++)
        h = mix(h, !c->values[d] ? 1 : mask[d] ? 2 : (uint64_t)(uintptr_t)c->values[d]); /* interned */
    return h;
}

/* A cell with a collapsed dimension is drawn with the cells that differ
 * from it only there. */
static bool grouped(const cg_tree *t, const bool *mask, const cg_cell *c)
{
    for (size_t d = 0; d < t->ndims; d++)
        if (mask[d] && c->values[d])
            return true;
    return false;
}

static void masked_path(const cg_tree *t, const bool *mask, const cg_cell *c, cg_strbuf *out)
{
    size_t start = out->len;
    for (size_t d = 0; d < t->ndims; d++)
        if (c->values[d])
            path_add(out, start, t->dims[d], mask && mask[d] ? NULL : c->values[d]);
}

/* ---- names of cells and jobs, collapsed values shown as '*' ---- */

typedef struct namer {
    const cg_tree *t;
    cg_env env;
    cg_error err;          /* scratch: a name that cannot be made falls back */
    const char **values;   /* [ndims] */
} namer;

static void namer_init(namer *nm, const cg_tree *t)
{
    nm->t = t;
    cg_error_init(&nm->err);
    cg_env_init(&nm->env, t, &nm->err);
    nm->values = cg_xcalloc(t->ndims + 1, sizeof *nm->values);
}

static void namer_release(namer *nm)
{
    cg_env_release(&nm->env);
    cg_error_release(&nm->err);
    free(nm->values);
}

/* Appends the cell name (phase < 0: the tree's pattern without the phase) or
 * the name of the cell's job in `phase`. */
static void namer_name(namer *nm, const cg_cell *c, const bool *mask, int phase, cg_strbuf *out)
{
    const cg_tree *t = nm->t;
    cg_cell tmp = *c;
    for (size_t d = 0; d < t->ndims; d++)
        nm->values[d] = c->values[d] && mask && mask[d] ? "*" : c->values[d];
    tmp.values = nm->values;
    size_t start = out->len;
    int rc = cg_env_bind(&nm->env, &tmp);
    if (rc == 0) {
        const cg_pstr *pat = &t->job_name;
        const cg_src *src = &t->job_name_src;
        if (phase >= 0) {
            const cg_phase *ph = &t->phases[phase];
            cg_env_set_builtin(&nm->env, CG_B_PHASE, ph->name, false);
            if (ph->job_name.nsegs) {
                pat = &ph->job_name;
                src = &ph->job_name_src;
            }
        }
        rc = cg_env_expand(&nm->env, pat, true, t, out, src, "the job name pattern");
    }
    if (rc != 0 || out->len == start) {
        /* the values joined, like the default pattern */
        cg_strbuf_truncate(out, start);
        for (size_t d = 0; d < t->ndims; d++)
            if (nm->values[d])
                cg_strbuf_addf(out, "%s%s", out->len > start ? "_" : "", nm->values[d]);
        if (phase >= 0)
            cg_strbuf_addf(out, "%s%s", out->len > start ? "_" : "", t->phases[phase].name);
        cg_error_release(&nm->err);
        cg_error_init(&nm->err);
    }
    nm->env.cell = NULL; /* tmp is gone */
}

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
    htab nodes, seen_tab;
} tmodel;

static bool vnode_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const tmodel *m = ctx;
    const vnode *x = &m->v[a], *y = &m->v[b];
    return x->parent == y->parent && x->dim == y->dim && str_eq_or_null(x->value, y->value);
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
    c->hash = mix(mix(m->v[parent].hash, (uint64_t)dim + 1), value ? str_hash(value) : 0x2a);
    c->first = c->last = c->next = NONE;
    uint32_t got = htab_intern(&m->nodes, c->hash, (uint32_t)m->n, vnode_eq, m);
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

/* Builds the trie of the cells' values; njobs[cell] may be NULL. */
static void tm_build(tmodel *m, const cg_tree *t, const cg_cells *cells, const bool *mask, const uint32_t *njobs)
{
    memset(m, 0, sizeof *m);
    m->t = t;
    m->cells = cells;
    m->next_cell = cg_xcalloc(cells->n + 1, sizeof *m->next_cell);
    cg_grow(&m->v, &m->cap, 1, sizeof *m->v);
    m->v[0] = (vnode){.parent = NONE, .dim = -1, .hash = 0x243f6a8885a308d3ULL, .first = NONE, .last = NONE,
                      .next = NONE};
    m->n = 1;
    for (size_t ci = 0; ci < cells->n; ci++) {
        const cg_cell *c = &cells->v[ci];
        bool live = c->status == CG_CELL_LIVE, any_collapsed = false;
        uint32_t cur = 0;
        m->v[0].ncells++;
        m->v[0].nlive += live;
        for (size_t d = 0; d < t->ndims; d++) {
            const char *val = c->values[d];
            if (!val)
                continue;
            cur = tm_child(m, cur, (int)d, mask[d] ? NULL : val);
            m->v[cur].ncells++;
            m->v[cur].nlive += live;
            if (mask[d]) {
                any_collapsed = true;
                cg_grow(&m->seen, &m->seen_cap, m->nseen + 1, sizeof *m->seen);
                m->seen[m->nseen] = (vseen){cur, val};
                uint64_t h = mix(m->v[cur].hash, str_hash(val));
                if (htab_intern(&m->seen_tab, h, (uint32_t)m->nseen, vseen_eq, m) == m->nseen) {
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
        m->next_cell[ci] = NONE;
        if (L->last_cell == NONE)
            L->first_cell = (uint32_t)ci;
        else
            m->next_cell[L->last_cell] = (uint32_t)ci;
        L->last_cell = (uint32_t)ci;
    }
}

static void tm_release(tmodel *m)
{
    free(m->v);
    free(m->l);
    free(m->next_cell);
    free(m->seen);
    htab_release(&m->nodes);
    htab_release(&m->seen_tab);
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
    uint32_t parent, id; /* id 0: an empty slot */
    int32_t dim;
} tn_slot;

typedef struct tn_table {
    tn_slot *slot;
    size_t cap;
    uint8_t *has_child, *group; /* per node id */
    uint32_t *leaves;
    uint32_t n;                 /* nodes, the root (0) included */
} tn_table;

static uint64_t tn_hash(uint32_t parent, int32_t dim, const char *value)
{
    return mix(mix(parent, (uint64_t)dim + 1), (uint64_t)(uintptr_t)value);
}

static void tn_grow(tn_table *T)
{
    tn_slot *old = T->slot;
    size_t old_cap = T->cap;
    T->cap = old_cap ? old_cap * 2 : 1024;
    T->slot = cg_xcalloc(T->cap, sizeof *T->slot);
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].id)
            continue;
        size_t h = (size_t)tn_hash(old[i].parent, old[i].dim, old[i].value) & (T->cap - 1);
        while (T->slot[h].id)
            h = (h + 1) & (T->cap - 1);
        T->slot[h] = old[i];
    }
    free(old);
    T->has_child = cg_xrealloc(T->has_child, T->cap / 2 + 1);
    T->group = cg_xrealloc(T->group, T->cap / 2 + 1);
    T->leaves = cg_xrealloc(T->leaves, (T->cap / 2 + 1) * sizeof *T->leaves);
    memset(T->has_child + old_cap / 2, 0, T->cap / 2 + 1 - old_cap / 2);
    memset(T->group + old_cap / 2, 0, T->cap / 2 + 1 - old_cap / 2);
    memset(T->leaves + old_cap / 2, 0, (T->cap / 2 + 1 - old_cap / 2) * sizeof *T->leaves);
}

/* The number of nodes tm_build() would draw, without the model: a table
 * of (parent, dimension, value) with the value as its pointer (cell values
 * are interned), and per node whether it has children and how many leaves. */
static size_t tree_nodes(const cg_tree *t, const cg_cells *cells, const bool *mask)
{
    tn_table T = {0};
    T.n = 1; /* the root */
    tn_grow(&T);
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
            if ((size_t)T.n + 1 > T.cap / 2)
                tn_grow(&T);
            size_t h = (size_t)tn_hash(cur, (int32_t)d, val) & (T.cap - 1);
            while (T.slot[h].id && !(T.slot[h].parent == cur && T.slot[h].dim == (int32_t)d && T.slot[h].value == val))
                h = (h + 1) & (T.cap - 1);
            if (!T.slot[h].id) {
                T.slot[h] = (tn_slot){val, cur, T.n++, (int32_t)d};
                T.has_child[cur] = 1;
            }
            cur = prev_node[d] = T.slot[h].id;
        }
        if (!collapsed || !T.group[cur]) {
            T.group[cur] |= collapsed;
            T.leaves[cur]++;
            nl++;
        }
    }
    size_t count = T.n + nl;
    for (uint32_t i = 1; i < T.n; i++)
        count -= !T.has_child[i] && T.leaves[i] == 1; /* drawn as its leaf */
    free(prev);
    free(prev_node);
    free(T.slot);
    free(T.has_child);
    free(T.group);
    free(T.leaves);
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
    bool *mask = collapse_mask(t, names, n);
    size_t count = tree_nodes(t, &c->p->cells[c->ti], mask);
    free(mask);
    return count;
}

/* ---- the note drawn instead of a diagram over the node limit ---- */

/* How many nodes the diagram has with dimensions `names` collapsed. */
typedef size_t (*count_fn)(const void *ctx, const char *const *names, size_t n);

static void suggest_command(cg_strbuf *out, const char *kind, const char *name, const char *const *names, size_t n)
{
    cg_strbuf_addf(out, "cigen graph --%s ", kind);
    shell_word(out, name);
    for (size_t i = 0; i < n; i++) {
        cg_strbuf_adds(out, " --collapse ");
        shell_word(out, names[i]);
    }
}

/* A graph of one note: how many nodes the diagram would have, and the
 * collapses (chosen greedily, most nodes saved first, the later dimension on
 * a tie) that bring it under the limit. */
static void emit_note(cg_strbuf *out, const cg_model *p, const char *kind, const char *name,
                      const cg_dot_opts *o, size_t count, const char *const *cands, size_t ncands, count_fn fn,
                      const void *ctx, const cg_strbuf *label, const char *what)
{
    const char **names = cg_xmalloc((o->ncollapse + ncands + 1) * sizeof *names);
    bool *taken = cg_xcalloc(ncands + 1, sizeof *taken);
    size_t n = o->ncollapse;
    if (n)
        memcpy(names, o->collapse, n * sizeof *names);
    for (size_t k = 0; k < ncands; k++)
        for (size_t i = 0; i < n; i++)
            taken[k] |= cg_streq(cands[k], names[i]);
    size_t cur = count;
    while (cur > o->max_nodes) {
        size_t best = NONE, best_count = cur;
        for (size_t k = 0; k < ncands; k++) {
            if (taken[k])
                continue;
            names[n] = cands[k];
            size_t c = fn(ctx, names, n + 1);
            if (c < cur && (best == NONE || c <= best_count)) /* ties: the deeper dimension */
                best = k, best_count = c;
        }
        if (best == NONE)
            break;
        names[n++] = cands[best];
        taken[best] = true;
        cur = best_count;
    }
    cg_strbuf note = CG_STRBUF_INIT;
    cg_strbuf_addf(&note, "This diagram would have %zu nodes, more than the limit of %zu.\n", count, o->max_nodes);
    if (n > o->ncollapse) {
        cg_strbuf_addf(&note, cur <= o->max_nodes ? "Collapse dimensions to draw it with %zu nodes:\n"
                                                  : "Collapsing dimensions leaves %zu nodes:\n", cur);
        suggest_command(&note, kind, name, names, n);
        cg_strbuf_adds(&note, "\n");
    }
    cg_strbuf_adds(&note, "Draw it whole with: ");
    suggest_command(&note, kind, name, o->collapse, o->ncollapse);
    cg_strbuf_adds(&note, " --max-nodes 0");
    begin_graph(out, p, what, kind, name, label);
    cg_strbuf_adds(out, "  \"note\" [shape=note, style=filled, fillcolor=\"#fff2cc\", fontsize=11, label=");
    quote_sb(out, &note);
    cg_strbuf_adds(out, "];\n}\n");
    cg_strbuf_release(&note);
    free(names);
    free(taken);
}

/* ---- rendering the dimension tree ---- */

typedef struct trender {
    const tmodel *m;
    const bool *mask;
    namer nm;
    char **paths;          /* [m->n]: "os=linux/package=conda"; "" for the root */
    cg_map used;           /* leaf ids */
    cg_pool pool;
    cg_strbuf *out;
} trender;

static void node_id(const trender *R, uint32_t i, cg_strbuf *id)
{
    if (i == 0)
        cg_strbuf_adds(id, "root");
    else
        cg_strbuf_addf(id, "v:%s", R->paths[i]);
}

static void emit_edge(cg_strbuf *out, const cg_strbuf *from, const cg_strbuf *to, bool grey)
{
    cg_strbuf_adds(out, "  ");
    quote_sb(out, from);
    cg_strbuf_adds(out, " -> ");
    quote_sb(out, to);
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
        plural(label, v->nvalues, "value", "values");
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
        cg_strbuf_addf(&id, "%s:%s", L->group ? "g" : "c", R->paths[L->node]);
        unique_id(&R->used, &R->pool, &id);
        node_id(R, L->node, &from);
    }
    namer_name(&R->nm, first, L->ncells > 1 ? R->mask : NULL, -1, &label);
    cg_strbuf_addc(&label, '\n');
    if (!L->group) {
        if (!L->nlive)
            removal_reason(m->t, first, &label);
        else if (L->njobs)
            plural(&label, L->njobs, "job", "jobs");
        else
            cg_strbuf_adds(&label, "no job");
        if (L->nextra)
            cg_strbuf_adds(&label, "\n(extra cell)");
    } else {
        plural(&label, L->ncells, "cell", "cells");
        if (L->nlive && L->nlive < L->ncells)
            cg_strbuf_addf(&label, " (%u removed)", (unsigned)(L->ncells - L->nlive));
        if (L->nlive) {
            cg_strbuf_adds(&label, ", ");
            plural(&label, L->njobs, "job", "jobs");
        } else {
            cg_strbuf_adds(&label, ", all removed");
        }
        if (L->nextra)
            cg_strbuf_addf(&label, "\n(%u extra)", (unsigned)L->nextra);
        leaf_reasons(m, L, &label);
    }
    cg_strbuf *out = R->out;
    cg_strbuf_adds(out, "  ");
    quote_sb(out, &id);
    cg_strbuf_adds(out, " [label=");
    quote_sb(out, &label);
    if (L->nlive == 0)
        cg_strbuf_adds(out, ", style=\"filled,dashed\", " GREY_ATTRS);
    else
        cg_strbuf_addf(out, ", style=filled, penwidth=1.5, fillcolor=\"%s\"",
                       merged ? PALETTE(at->dim) : "#ffffff");
    if (L->nextra)
        cg_strbuf_adds(out, ", peripheries=2");
    cg_strbuf_adds(out, "];\n");
    emit_edge(out, &from, &id, L->nlive == 0);
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
    quote_sb(out, &id);
    if (i == 0) {
        cg_strbuf_adds(out, " [shape=folder, style=filled, label=");
        quote(out, m->t->name);
        cg_strbuf_adds(out, grey ? ", " GREY_ATTRS "];\n" : ", fillcolor=\"" STATIC_FILL "\"];\n");
    } else {
        value_label(m, v, &label);
        cg_strbuf_adds(out, " [label=");
        quote_sb(out, &label);
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
    cg_strbuf_release(&id);
    cg_strbuf_release(&label);
    for (uint32_t item = v->first; item != NONE; item = item & 1 ? m->l[item >> 1].next : m->v[item >> 1].next) {
        if (item & 1)
            emit_leaf(R, item >> 1, false);
        else
            emit_value(R, item >> 1);
    }
}

void cg_dot_tree(const cg_model *p, size_t ti, const cg_dot_opts *o, cg_strbuf *out)
{
    const cg_tree *t = p->trees[ti];
    const cg_cells *cells = &p->cells[ti];
    bool *mask = collapse_mask(t, o->collapse, o->ncollapse);
    uint32_t *njobs = cg_xcalloc(cells->n + 1, sizeof *njobs);
    size_t total_jobs = 0;
    for (size_t k = 0; k < p->jobs.n; k++)
        if (p->jobs.v[k].tree == t) {
            njobs[p->jobs.v[k].cell->index]++;
            total_jobs++;
        }
    /* count first: over the limit, only the note is drawn and no model built */
    size_t count = tree_nodes(t, cells, mask);
    bool note = o->max_nodes && count > o->max_nodes;
    tmodel m;
    if (!note)
        tm_build(&m, t, cells, mask, njobs);
    cg_strbuf label = CG_STRBUF_INIT, what = CG_STRBUF_INIT;
    cg_strbuf_addf(&label, "tree %s (%s)\n", t->name, t->file);
    plural(&label, cells->n, "cell", "cells");
    cg_strbuf_addf(&label, ": %zu live, %zu removed; ", cells->nlive, cells->n - cells->nlive);
    plural(&label, total_jobs, "job", "jobs");
    cg_strbuf_adds(&label, "\nlevels:");
    for (size_t d = 0; d < t->ndims; d++)
        cg_strbuf_addf(&label, "%s %s", d ? " >" : "", t->dims[d]);
    if (o->ncollapse) {
        cg_strbuf_adds(&label, "\n");
        names_line(&label, "collapsed", o->collapse, o->ncollapse);
        cg_strbuf_addf(&label, " (drawn as %zu nodes)", count);
    }
    cg_strbuf_addf(&what, "The dimension tree of '%s' (%s): one level per dimension, cells as leaves, "
                          "removed cells grey and dashed.", t->name, t->file);
    if (note) {
        tree_counter tc = {p, ti};
        emit_note(out, p, "tree", t->name, o, count, t->dims, t->ndims, tree_count, &tc, &label, what.buf);
    } else {
        trender R = {.m = &m, .mask = mask, .out = out};
        namer_init(&R.nm, t);
        cg_map_init(&R.used);
        cg_pool_init(&R.pool);
        R.paths = cg_xcalloc(m.n + 1, sizeof *R.paths);
        cg_strbuf path = CG_STRBUF_INIT;
        R.paths[0] = cg_xstrdup("");
        for (size_t i = 1; i < m.n; i++) { /* parents come first */
            const vnode *v = &m.v[i];
            cg_strbuf_reset(&path);
            cg_strbuf_adds(&path, R.paths[v->parent]);
            path_add(&path, 0, t->dims[v->dim], v->value);
            R.paths[i] = cg_xstrdup(path.buf);
        }
        cg_strbuf_release(&path);
        begin_graph(out, p, what.buf, "tree", t->name, &label);
        emit_value(&R, 0);
        cg_strbuf_adds(out, "}\n");
        for (size_t i = 0; i < m.n; i++)
            free(R.paths[i]);
        free(R.paths);
        cg_map_release(&R.used);
        cg_pool_release(&R.pool);
        namer_release(&R.nm);
    }
    cg_strbuf_release(&label);
    cg_strbuf_release(&what);
    if (!note)
        tm_release(&m);
    free(njobs);
    free(mask);
}

/* ---- the job graph of a workflow ---- */

enum { G_STATIC, G_JOB, G_MISSING };

typedef struct gnode {
    uint8_t kind;
    bool grouped;          /* JOB: jobs that differ only in collapsed dimensions */
    const char *name;      /* STATIC, MISSING: the job name */
    const char *invokes;   /* STATIC: the job it runs, when `name:` renames it */
    const cg_job *job;     /* JOB: the first job */
    uint32_t tree;         /* JOB */
    uint32_t njobs, ngated;
    uint32_t cluster;      /* index + 1; 0: none */
    uint32_t next;         /* the next node of the same cluster */
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
    htab node_tab, cluster_tab, edge_tab;
    cg_map by_name;        /* static and missing names -> node + 1 */
    uint32_t *job_node;    /* [p->jobs.n]: node + 1 of the jobs in the workflow */
    size_t nstatic, njobs, ngated;
    size_t nrequires;      /* requires listed (edges may merge when collapsed) */
} gmodel;

static bool gnode_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const gmodel *G = ctx;
    const gnode *x = &G->v[a], *y = &G->v[b];
    if (x->tree != y->tree || x->job->phase != y->job->phase || x->grouped != y->grouped)
        return false;
    if (!x->grouped)
        return x->job->cell == y->job->cell;
    return masked_eq(G->p->trees[x->tree], G->masks[x->tree], x->job->cell, y->job->cell);
}

static bool gcluster_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const gmodel *G = ctx;
    const gcluster *x = &G->c[a], *y = &G->c[b];
    if (x->tree != y->tree || x->grouped != y->grouped)
        return false;
    if (!x->grouped)
        return x->job->cell == y->job->cell;
    return masked_eq(G->p->trees[x->tree], G->masks[x->tree], x->job->cell, y->job->cell);
}

static bool gedge_eq(const void *ctx, uint32_t a, uint32_t b)
{
    const gmodel *G = ctx;
    return G->e[a].from == G->e[b].from && G->e[a].to == G->e[b].to;
}

static uint64_t cell_key_hash(const gmodel *G, uint32_t tree, bool is_grouped, const cg_cell *c)
{
    uint64_t h = mix(0x9e37, tree);
    return is_grouped ? mix(h, masked_hash(G->p->trees[tree], G->masks[tree], c)) : mix(h ^ 1, c->index);
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

static uint32_t gm_add(gmodel *G, uint8_t kind, const char *name)
{
    cg_grow(&G->v, &G->cap, G->n + 1, sizeof *G->v);
    G->v[G->n] = (gnode){.kind = kind, .name = name, .next = NONE};
    if (name)
        cg_map_put(&G->by_name, name, (void *)(uintptr_t)(G->n + 1));
    return (uint32_t)G->n++;
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

static void gm_edge(gmodel *G, uint32_t from, uint32_t to)
{
    G->nrequires++;
    cg_grow(&G->e, &G->ecap, G->ne + 1, sizeof *G->e);
    G->e[G->ne] = (gedge){from, to};
    if (htab_intern(&G->edge_tab, mix(mix(0x51, from), to), (uint32_t)G->ne, gedge_eq, G) == G->ne)
        G->ne++;
}

/* Builds the job graph to draw (wf_counter_init() counts it without). */
static void gm_build(gmodel *G, const cg_model *p, size_t w, const char *const *names, size_t nnames)
{
    memset(G, 0, sizeof *G);
    G->p = p;
    G->masks = cg_xcalloc(p->ntrees + 1, sizeof *G->masks);
    for (size_t i = 0; i < p->ntrees; i++)
        G->masks[i] = collapse_mask(p->trees[i], names, nnames);
    G->job_node = cg_xcalloc(p->jobs.n + 1, sizeof *G->job_node);
    cg_map_init(&G->by_name);
    const cg_workflow_decl *wd = &p->manifest.workflows[w];
    /* the manifest's entries first, as config.yml lists them */
    for (size_t i = 0; i < json_array_size(wd->jobs); i++) {
        const char *name, *invokes;
        json_t *req;
        static_entry(json_array_get(wd->jobs, i), &name, &invokes, &req);
        if (!name || cg_map_has(&G->by_name, name))
            continue;
        uint32_t node = gm_add(G, G_STATIC, name);
        G->v[node].invokes = invokes;
    }
    G->nstatic = G->n;
    uint64_t bit = (uint64_t)1 << w;
    for (size_t k = 0; k < p->jobs.n; k++) {
        const cg_job *j = &p->jobs.v[k];
        if (!(j->workflows & bit))
            continue;
        uint32_t ti = (uint32_t)j->tree->index;
        bool gr = grouped(j->tree, G->masks[ti], j->cell);
        cg_grow(&G->v, &G->cap, G->n + 1, sizeof *G->v);
        G->v[G->n] = (gnode){.kind = G_JOB, .grouped = gr, .job = j, .tree = ti, .next = NONE};
        uint64_t h = mix(cell_key_hash(G, ti, gr, j->cell), j->phase);
        uint32_t node = htab_intern(&G->node_tab, h, (uint32_t)G->n, gnode_eq, G);
        bool fresh = node == G->n;
        G->n += fresh;
        if (fresh) {
            cg_grow(&G->c, &G->ccap, G->nc + 1, sizeof *G->c);
            G->c[G->nc] = (gcluster){.job = j, .tree = ti, .grouped = gr, .first = NONE, .last = NONE};
            uint32_t c = htab_intern(&G->cluster_tab, cell_key_hash(G, ti, gr, j->cell), (uint32_t)G->nc,
                                     gcluster_eq, G);
            if (c == G->nc)
                G->nc++;
            gcluster *C = &G->c[c];
            if (C->last == NONE)
                C->first = node;
            else
                G->v[C->last].next = node;
            C->last = node;
            C->nnodes++;
            G->v[node].cluster = c + 1;
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
    for (size_t i = 0; i < json_array_size(wd->jobs); i++) {
        const char *name, *invokes;
        json_t *req;
        static_entry(json_array_get(wd->jobs, i), &name, &invokes, &req);
        uint32_t to = name ? gm_resolve(G, name) : NONE;
        for (size_t r = 0; to != NONE && r < json_array_size(req); r++)
            if (json_is_string(json_array_get(req, r)))
                gm_edge(G, gm_resolve(G, json_string_value(json_array_get(req, r))), to);
    }
    for (size_t k = 0; k < p->jobs.n; k++) {
        if (!G->job_node[k])
            continue;
        const cg_job *j = &p->jobs.v[k];
        for (uint32_t r = 0; r < j->nrequires; r++)
            gm_edge(G, gm_resolve(G, j->requires[r]), G->job_node[k] - 1);
    }
}

static void gm_release(gmodel *G)
{
    for (size_t i = 0; i < G->p->ntrees; i++)
        free(G->masks[i]);
    free(G->masks);
    free(G->v);
    free(G->c);
    free(G->e);
    htab_release(&G->node_tab);
    htab_release(&G->cluster_tab);
    htab_release(&G->edge_tab);
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
    const cg_workflow_decl *wd = &p->manifest.workflows[w];
    cg_map seen, missing;
    cg_map_init(&seen);
    cg_map_init(&missing);
    for (size_t i = 0; i < json_array_size(wd->jobs); i++) {
        const char *name, *invokes;
        json_t *req;
        static_entry(json_array_get(wd->jobs, i), &name, &invokes, &req);
        if (name && !cg_map_put_new(&seen, name, (void *)1))
            c->nstatic++;
    }
    for (size_t i = 0; i < json_array_size(wd->jobs); i++) {
        const char *name, *invokes;
        json_t *req;
        static_entry(json_array_get(wd->jobs, i), &name, &invokes, &req);
        for (size_t r = 0; name && r < json_array_size(req); r++) {
            const char *need = json_string_value(json_array_get(req, r));
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
        c->nrequires += j->nrequires;
        wf_cells *t = &c->trees[j->tree->index];
        if (!t->n || t->cell[t->n - 1] != j->cell) { /* a cell's jobs are consecutive */
            cg_grow(&t->cell, &t->cap, t->n + 1, sizeof *t->cell);
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
        bool *mask = collapse_mask(t, names, n);
        /* grouped cells: an open-addressing table of representative cells */
        size_t cap = 16;
        while (cap < 2 * wc->n)
            cap *= 2;
        uint32_t *slot = cg_xcalloc(cap, sizeof *slot);
        uint64_t *acc = cg_xcalloc(wc->n + 1, sizeof *acc);
        for (size_t i = 0; i < wc->n; i++) {
            const cg_cell *cell = wc->cell[i];
            if (!grouped(t, mask, cell)) {
                count += popcount64(wc->phases[i]);
                continue;
            }
            size_t h = (size_t)masked_hash(t, mask, cell) & (cap - 1);
            while (slot[h] && !masked_eq(t, mask, wc->cell[slot[h] - 1], cell))
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

typedef struct grender {
    const gmodel *G;
    namer **namers;        /* [ntrees], made on first use */
    char **ids;            /* [G->n] */
    char **cluster_names;  /* [G->nc]: the cell name, '*' for collapsed values */
    cg_strbuf *out;
} grender;

static namer *gr_namer(grender *R, uint32_t tree)
{
    if (!R->namers[tree]) {
        R->namers[tree] = cg_xmalloc(sizeof **R->namers);
        namer_init(R->namers[tree], R->G->p->trees[tree]);
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
    quote(out, R->ids[i]);
    if (v->kind == G_STATIC) {
        cg_strbuf_adds(&label, v->name);
        if (v->invokes)
            cg_strbuf_addf(&label, "\n(runs %s)", v->invokes);
        cg_strbuf_adds(out, " [label=");
        quote_sb(out, &label);
        cg_strbuf_adds(out, ", fillcolor=\"" STATIC_FILL "\"];\n");
    } else if (v->kind == G_MISSING) {
        cg_strbuf_addf(&label, "%s\nnot in this workflow", v->name);
        cg_strbuf_adds(out, " [label=");
        quote_sb(out, &label);
        cg_strbuf_adds(out, ", style=\"rounded,dashed\", color=\"#cc0000\", fontcolor=\"#cc0000\"];\n");
    } else {
        const cg_job *j = v->job;
        if (v->grouped && v->njobs > 1)
            namer_name(gr_namer(R, v->tree), j->cell, G->masks[v->tree], (int)j->phase, &full);
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
        quote_sb(out, &label);
        if (shown != full.buf) {
            cg_strbuf_adds(out, ", tooltip=");
            quote_sb(out, &full);
        }
        cg_strbuf_addf(out, ", fillcolor=\"%s\"", PALETTE(j->phase));
        if (v->ngated == v->njobs)
            cg_strbuf_adds(out, ", style=\"rounded,filled,dashed\"");
        cg_strbuf_adds(out, "];\n");
    }
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

static void workflow_label(const wf_stats *G, const cg_workflow_decl *wd, const cg_dot_opts *o, bool drawn,
                           cg_strbuf *label)
{
    cg_strbuf_addf(label, "workflow %s", wd->name);
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
            names_line(label, "tier", wd->tiers, wd->ntiers);
        if (wd->ntiers && wd->non_request)
            cg_strbuf_adds(label, "; ");
        if (wd->non_request)
            names_line(label, "on request (dashed)", wd->on_request, wd->non_request);
    }
    cg_strbuf_adds(label, "\n");
    plural(label, G->nstatic + G->njobs, "job", "jobs");
    cg_strbuf_addf(label, ": %zu listed in the manifest, %zu generated", G->nstatic, G->njobs);
    if (G->ngated)
        cg_strbuf_addf(label, " (%zu on request)", G->ngated);
    cg_strbuf_adds(label, "; ");
    plural(label, G->nrequires, "requires edge", "requires edges");
    if (o->ncollapse) {
        cg_strbuf_adds(label, "\n");
        names_line(label, "collapsed", o->collapse, o->ncollapse);
        if (drawn)
            cg_strbuf_addf(label, " (drawn as %zu nodes, %zu edges)", G->n, G->ne);
    }
}

void cg_dot_workflow(const cg_model *p, size_t w, const cg_dot_opts *o, cg_strbuf *out)
{
    const cg_workflow_decl *wd = &p->manifest.workflows[w];
    /* count first: over the limit, only the note is drawn and no graph built */
    wf_counter wc;
    wf_counter_init(&wc, p, w);
    size_t count = workflow_count(&wc, o->collapse, o->ncollapse);
    bool note = o->max_nodes && count > o->max_nodes;
    gmodel G;
    wf_stats stats = {wc.nstatic, wc.njobs, wc.ngated, wc.nrequires, count, 0};
    if (!note) {
        gm_build(&G, p, w, o->collapse, o->ncollapse);
        stats = (wf_stats){G.nstatic, G.njobs, G.ngated, G.nrequires, G.n, G.ne};
    }
    cg_strbuf label = CG_STRBUF_INIT, what = CG_STRBUF_INIT;
    workflow_label(&stats, wd, o, !note, &label);
    cg_strbuf_addf(&what, "The job graph of workflow '%s': requires as edges (from the required job), the jobs of "
                          "a cell boxed together, on-request jobs dashed.", wd->name);
    if (note) {
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
        emit_note(out, p, "workflow", wd->name, o, count, cands, ncands, workflow_count, &wc, &label, what.buf);
        free(cands);
    } else {
        grender R = {.G = &G, .out = out};
        R.namers = cg_xcalloc(p->ntrees + 1, sizeof *R.namers);
        R.ids = cg_xcalloc(G.n + 1, sizeof *R.ids);
        R.cluster_names = cg_xcalloc(G.nc + 1, sizeof *R.cluster_names);
        cg_map used;
        cg_pool pool;
        cg_map_init(&used);
        cg_pool_init(&pool);
        cg_strbuf id = CG_STRBUF_INIT;
        for (size_t i = 0; i < G.n; i++) {
            const gnode *v = &G.v[i];
            cg_strbuf_reset(&id);
            if (v->kind != G_JOB) {
                cg_strbuf_addf(&id, "j:%s", v->name);
            } else if (!v->grouped) {
                cg_strbuf_addf(&id, "j:%s", v->job->name);
            } else {
                const cg_tree *t = p->trees[v->tree];
                cg_strbuf_addf(&id, "g:%s:%s:", t->name, t->phases[v->job->phase].name);
                masked_path(t, G.masks[v->tree], v->job->cell, &id);
            }
            unique_id(&used, &pool, &id);
            R.ids[i] = cg_xstrdup(id.buf);
        }
        for (size_t c = 0; c < G.nc; c++) {
            const gcluster *C = &G.c[c];
            cg_strbuf_reset(&id);
            namer_name(gr_namer(&R, C->tree), C->job->cell, C->grouped ? G.masks[C->tree] : NULL, -1, &id);
            R.cluster_names[c] = cg_xstrdup(id.buf);
        }
        begin_graph(out, p, what.buf, "workflow", wd->name, &label);
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
            masked_path(t, C->grouped ? G.masks[C->tree] : NULL, C->job->cell, &id);
            unique_id(&used, &pool, &id);
            cg_strbuf_adds(out, "  subgraph ");
            quote_sb(out, &id);
            cg_strbuf_adds(out, " {\n    graph [style=rounded, color=\"#bbbbbb\", fontsize=10, label=");
            cg_strbuf_reset(&id);
            cg_strbuf_adds(&id, R.cluster_names[v->cluster - 1]);
            if (C->ncells > 1)
                cg_strbuf_addf(&id, " (%u cells)", (unsigned)C->ncells);
            quote_sb(out, &id);
            cg_strbuf_adds(out, "];\n");
            for (uint32_t k = C->first; k != NONE; k = G.v[k].next)
                emit_job_node(&R, k, "    ");
            cg_strbuf_adds(out, "  }\n");
        }
        for (size_t e = 0; e < G.ne; e++) {
            cg_strbuf_adds(out, "  ");
            quote(out, R.ids[G.e[e].from]);
            cg_strbuf_adds(out, " -> ");
            quote(out, R.ids[G.e[e].to]);
            cg_strbuf_adds(out, ";\n");
        }
        cg_strbuf_adds(out, "}\n");
        cg_strbuf_release(&id);
        for (size_t i = 0; i < G.n; i++)
            free(R.ids[i]);
        for (size_t c = 0; c < G.nc; c++)
            free(R.cluster_names[c]);
        for (size_t t = 0; t < p->ntrees; t++)
            if (R.namers[t]) {
                namer_release(R.namers[t]);
                free(R.namers[t]);
            }
        free(R.ids);
        free(R.cluster_names);
        free(R.namers);
        cg_map_release(&used);
        cg_pool_release(&pool);
        gm_release(&G);
    }
    cg_strbuf_release(&label);
    cg_strbuf_release(&what);
    wf_counter_release(&wc);
}

/* ---- the files of the `diagrams:` folder ---- */

static void file_name(cg_strbuf *out, const char *kind, const char *name)
{
    cg_strbuf_addf(out, "%s-", kind);
    for (const char *c = name; *c; c++)
        cg_strbuf_addc(out, cg_isalnum(*c) || *c == '.' || *c == '_' || *c == '-' ? *c : '_');
}

size_t cg_dot_outputs(const cg_model *p, cg_pool *pool, cg_dot_output *out, size_t max)
{
    const cg_manifest *m = &p->manifest;
    if (!m->diagrams)
        return 0;
    size_t total = p->ntrees + m->nworkflows;
    size_t dirlen = strlen(m->diagrams);
    while (dirlen && m->diagrams[dirlen - 1] == '/')
        dirlen--;
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    cg_strbuf path = CG_STRBUF_INIT, data = CG_STRBUF_INIT;
    for (size_t i = 0; i < total && i < max; i++) {
        bool tree = i < p->ntrees;
        size_t k = tree ? i : i - p->ntrees;
        cg_strbuf_reset(&path);
        cg_strbuf_reset(&data);
        if (dirlen && !(dirlen == 1 && m->diagrams[0] == '.')) {
            cg_strbuf_add(&path, m->diagrams, dirlen);
            cg_strbuf_addc(&path, '/');
        }
        file_name(&path, tree ? "tree" : "workflow", tree ? p->trees[k]->name : m->workflows[k].name);
        /* two names made the same by the file-name rule */
        size_t stem = path.len;
        for (unsigned n = 2;; n++) {
            cg_strbuf_adds(&path, ".dot");
            bool dup = false;
            for (size_t j = 0; j < i && !dup; j++)
                dup = cg_streq(out[j].rel, path.buf);
            if (!dup)
                break;
            cg_strbuf_truncate(&path, stem);
            cg_strbuf_addf(&path, "-%u", n);
        }
        if (tree)
            cg_dot_tree(p, k, &o, &data);
        else
            cg_dot_workflow(p, k, &o, &data);
        out[i].rel = cg_pool_strndup(pool, path.buf, path.len);
        out[i].data = cg_pool_strndup(pool, cg_strbuf_str(&data), data.len);
        out[i].len = data.len;
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&data);
    return total;
}
