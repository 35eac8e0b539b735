#include "render/dot.h"
#include "render/dot_impl.h"

/* ---- looks ---- */

/* Fill colours: of a dimension level (by dimension index) in the tree
 * diagram, of a phase (by phase index) in the job graph. */
const char *const cg_dot_palette[8] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#fce5cd",
                                         "#ead1dc", "#d9d2e9", "#d0e0e3", "#f4cccc"};

bool cg_dot_is_generated(const char *data, size_t len)
{
    size_t n = strlen(CG_DOT_HEADER_PREFIX);
    return len >= n && memcmp(data, CG_DOT_HEADER_PREFIX, n) == 0;
}

void cg_dot_spill(const cg_dot_sink *sink, cg_strbuf *out, bool all)
{
    if (sink && out->len && (all || out->len >= (sink->chunk ? sink->chunk : CG_DOT_CHUNK))) {
        sink->put(sink->ctx, out->buf, out->len);
        cg_strbuf_reset(out);
    }
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

static void quote_body(cg_strbuf *out, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
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
}

void cg_dot_quote(cg_strbuf *out, const char *s, size_t n)
{
    cg_strbuf_addc(out, '"');
    quote_body(out, s, n);
    cg_strbuf_addc(out, '"');
}

void cg_dot_quotes(cg_strbuf *out, const char *s)
{
    cg_dot_quote(out, s, strlen(s));
}

void cg_dot_quote_sb(cg_strbuf *out, const cg_strbuf *s)
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
void cg_dot_path_add(cg_strbuf *out, size_t start, const char *dim, const char *value)
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

void cg_dot_begin_graph(cg_strbuf *out, const cg_model *p, const char *what, const char *kind,
                        const char *name, const cg_strbuf *label)
{
    cg_strbuf_adds(out, CG_DOT_HEADER_PREFIX);
    comment_text(out, manifest_file(p));
    cg_strbuf_adds(out, "; do not edit.\n// ");
    comment_text(out, what);
    cg_strbuf_adds(out, " Render it with `dot -Tsvg`.\ndigraph ");
    cg_strbuf g = CG_STRBUF_INIT;
    cg_strbuf_addf(&g, "%s-%s", kind, name);
    cg_dot_quote_sb(out, &g);
    cg_strbuf_release(&g);
    cg_strbuf_adds(out, " {\n  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=12, labelloc=t, labeljust=l, "
                        "nodesep=0.12, ranksep=0.4, label=");
    cg_dot_quote_sb(out, label);
    cg_strbuf_adds(out, "];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, "
                        "height=0.3, color=\"#666666\", fillcolor=\"#ffffff\"];\n"
                        "  edge [color=\"#888888\", arrowsize=0.5];\n");
}

void cg_dot_plural(cg_strbuf *out, size_t n, const char *one, const char *many)
{
    cg_strbuf_addf(out, "%zu %s", n, n == 1 ? one : many);
}

void cg_dot_names_line(cg_strbuf *out, const char *what, const char *const *names, size_t n)
{
    cg_strbuf_addf(out, "%s:", what);
    for (size_t i = 0; i < n; i++)
        cg_strbuf_addf(out, "%s %s", i ? "," : "", names[i]);
}

/* Makes `id` unique in `used` (appending #2, #3, ...) and records it. */
/* The id as one C string: a prefixed one spelt in the scratch buffer
 * (valid until the next call). */
static const char *id_at(const void *ctx, uint32_t i)
{
    const cg_dot_ids *ids = ctx;
    const cg_dot_id *id = &ids->v[i];
    if (!id->prefix)
        return id->s;
    cg_strbuf_reset(ids->scratch);
    cg_strbuf_adds(ids->scratch, id->prefix);
    cg_strbuf_adds(ids->scratch, id->s);
    return ids->scratch->buf;
}

void cg_dot_ids_init(cg_dot_ids *ids)
{
    memset(ids, 0, sizeof *ids);
    cg_index_init(&ids->index, id_at, ids);
    cg_pool_init(&ids->pool);
    ids->scratch = cg_xcalloc(1, sizeof *ids->scratch);
}

void cg_dot_ids_release(cg_dot_ids *ids)
{
    free(ids->v);
    cg_index_release(&ids->index);
    cg_pool_release(&ids->pool);
    cg_strbuf_release(ids->scratch);
    free(ids->scratch);
    cg_strbuf_release(&ids->probe);
}

/* Ids are compared as C strings (up to a NUL), as a cg_map compares keys. */
static bool id_taken(const cg_dot_ids *ids, const char *s)
{
    return cg_index_get(&ids->index, s, strlen(s)) != 0;
}

static void id_push(cg_dot_ids *ids, const char *prefix, const char *s)
{
    cg_grow(&ids->v, &ids->cap, ids->n + 1, sizeof *ids->v);
    ids->v[ids->n] = (cg_dot_id){prefix, s};
    cg_index_add(&ids->index, (uint32_t)ids->n++);
}

void cg_dot_ids_take(cg_dot_ids *ids, cg_strbuf *id)
{
    size_t base = id->len;
    for (unsigned k = 2; id_taken(ids, cg_strbuf_str(id)); k++) {
        cg_strbuf_truncate(id, base);
        cg_strbuf_addf(id, "#%u", k);
    }
    id_push(ids, NULL, cg_pool_strndup(&ids->pool, cg_strbuf_str(id), id->len));
}

void cg_dot_ids_take_name(cg_dot_ids *ids, const char *prefix, const char *s)
{
    cg_strbuf *id = &ids->probe;
    cg_strbuf_reset(id);
    cg_strbuf_adds(id, prefix);
    cg_strbuf_adds(id, s);
    if (id_taken(ids, id->buf))
        cg_dot_ids_take(ids, id);
    else
        id_push(ids, prefix, s);
}

void cg_dot_quote_id(cg_strbuf *out, const cg_dot_id *id)
{
    cg_strbuf_addc(out, '"');
    if (id->prefix) /* plain ASCII: quoting the two is quoting each */
        quote_body(out, id->prefix, strlen(id->prefix));
    quote_body(out, id->s, strlen(id->s));
    cg_strbuf_addc(out, '"');
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
    cg_strbuf_add_shell_quoted(out, s);
}

/* Which dimensions of a tree the options collapse ([ndims], malloc'd). */
bool *cg_dot_collapse_mask(const cg_tree *t, const char *const *names, size_t n)
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



void cg_dot_htab_release(cg_dot_htab *h)
{
    free(h->slot);
    free(h->hash);
    memset(h, 0, sizeof *h);
}

static void htab_place(cg_dot_htab *h, uint64_t hash, uint32_t idx)
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
uint32_t cg_dot_htab_intern(cg_dot_htab *h, uint64_t hash, uint32_t probe, cg_dot_htab_eq eq, const void *ctx)
{
    if ((h->n + 1) * 2 > h->cap) {
        cg_dot_htab old = *h;
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

uint64_t cg_dot_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

uint64_t cg_dot_str_hash(const char *s)
{
    return cg_hash(s, strlen(s));
}

/* ---- names of cells and jobs, collapsed values shown as '*' ---- */


void cg_dot_namer_init(cg_dot_namer *nm, const cg_tree *t)
{
    nm->t = t;
    cg_error_init(&nm->err);
    cg_env_init(&nm->env, t, &nm->err);
    nm->values = cg_xcalloc(t->ndims + 1, sizeof *nm->values);
}

void cg_dot_namer_release(cg_dot_namer *nm)
{
    cg_env_release(&nm->env);
    cg_error_release(&nm->err);
    free(nm->values);
}

/* Appends the cell name (phase < 0: the tree's pattern without the phase) or
 * the name of the cell's job in `phase`. */
void cg_dot_namer_name(cg_dot_namer *nm, const cg_cell *c, const bool *mask, int phase, cg_strbuf *out)
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
        rc = cg_env_expand(&nm->env, pat, CG_EXPAND_NAME, t, out, src, "the job name pattern");
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

/* ---- the note drawn instead of a diagram over the node limit ---- */


static void suggest_command(cg_strbuf *out, const char *kind, const char *name, const char *const *names, size_t n)
{
    cg_strbuf_addf(out, "cigen graph --%s ", kind);
    shell_word(out, name);
    for (size_t i = 0; i < n; i++) {
        cg_strbuf_adds(out, " --collapse ");
        shell_word(out, names[i]);
    }
}

void cg_dot_whole_line(cg_strbuf *out, const char *kind, const char *name)
{
    static const char *const none[] = {"none"};
    cg_strbuf_adds(out, "\nthe whole diagram: ");
    suggest_command(out, kind, name, none, 1);
}

/* A graph of one note: how many nodes the diagram would have, and the
 * collapses (chosen greedily, most nodes saved first, the later dimension on
 * a tie) that bring it under the limit. */
void cg_dot_emit_note(cg_strbuf *out, const cg_model *p, const char *kind, const char *name,
                      const cg_dot_opts *o, size_t count, const char *const *cands, size_t ncands, cg_dot_count_fn fn,
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
    cg_dot_begin_graph(out, p, what, kind, name, label);
    cg_strbuf_adds(out, "  \"note\" [shape=note, style=filled, fillcolor=\"#fff2cc\", fontsize=11, label=");
    cg_dot_quote_sb(out, &note);
    cg_strbuf_adds(out, "];\n}\n");
    cg_strbuf_release(&note);
    free(names);
    free(taken);
}

/* ---- fitting a diagram to a screen ---- */

double cg_dot_node_h(size_t lines)
{
    double h = (double)lines * CG_DOT_LINE_PT + 8.0;
    return h < 21.6 ? 21.6 : h;
}

double cg_dot_node_w(size_t chars)
{
    double w = (double)chars * CG_DOT_CHAR_PT + 16.0;
    return w < 54.0 ? 54.0 : w;
}

size_t cg_dot_px(double w_pt, double h_pt, const cg_strbuf *label)
{
    size_t lines = 1, widest = 0, cur = 0;
    for (size_t i = 0; i < label->len; i++) {
        if (label->buf[i] == '\n') {
            lines++;
            cur = 0;
        } else if (((unsigned char)label->buf[i] & 0xc0) != 0x80) {
            widest = ++cur > widest ? cur : widest;
        }
    }
    h_pt += (double)lines * 14.5 + 8.0;
    double lw = (double)widest * 6.8 + 16.0;
    if (lw > w_pt)
        w_pt = lw;
    double side = (w_pt > h_pt ? w_pt : h_pt) * 96.0 / 72.0;
    return (size_t)side + 1;
}

void cg_dot_fit(const char *const *cands, size_t ncands, size_t budget, cg_dot_est_fn est, const void *ctx,
                const char **names, size_t *n)
{
    size_t cur = est(ctx, names, *n);
    while (cur > budget) {
        size_t best = NONE, best_est = cur;
        for (size_t k = 0; k < ncands; k++) {
            bool taken = false;
            for (size_t i = 0; i < *n && !taken; i++)
                taken = cg_streq(names[i], cands[k]);
            if (taken)
                continue;
            names[*n] = cands[k];
            size_t e = est(ctx, names, *n + 1);
            if (e < cur && (best == NONE || e <= best_est)) /* ties: the later candidate */
                best = k, best_est = e;
        }
        if (best == NONE)
            break;
        names[(*n)++] = cands[best];
        cur = best_est;
    }
}

/* ---- cells under a collapse mask (mask[d]: dimension d collapsed) ---- */

bool cg_dot_masked_eq(const cg_tree *t, const bool *mask, const cg_cell *a, const cg_cell *b)
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

uint64_t cg_dot_masked_hash(const cg_tree *t, const bool *mask, const cg_cell *c)
{
    uint64_t h = 0x5bd1e995;
    for (size_t d = 0; d < t->ndims; d++)
        h = cg_dot_mix(h, !c->values[d] ? 1 : mask[d] ? 2 : (uint64_t)(uintptr_t)c->values[d]); /* interned */
    return h;
}

/* A cell with a collapsed dimension is drawn with the cells that differ
 * from it only there. */
bool cg_dot_grouped(const cg_tree *t, const bool *mask, const cg_cell *c)
{
    for (size_t d = 0; d < t->ndims; d++)
        if (mask[d] && c->values[d])
            return true;
    return false;
}

void cg_dot_masked_path(const cg_tree *t, const bool *mask, const cg_cell *c, cg_strbuf *out)
{
    size_t start = out->len;
    for (size_t d = 0; d < t->ndims; d++)
        if (c->values[d])
            cg_dot_path_add(out, start, t->dims[d], mask && mask[d] ? NULL : c->values[d]);
}
