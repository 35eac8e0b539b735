#include "lang/yamlload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yaml_snake.h"
#include "lang/yaml_text.h"

typedef struct doc_name {
    const char *name; /* interned in the doc's pool */
    cg_pos pos;
    const cg_doc *source; /* aliases: the document defining the anchor, NULL for this one */
} doc_name;

/* An anchor's value, kept after loading so that later documents may name it
 * (cg_load_opts.scope). */
typedef struct anchor {
    const char *name;
    json_t *value; /* a reference owned by the document (merges may drop theirs) */
    const char *path;
    size_t count;
} anchor;

typedef struct doc_names {
    doc_name *v;
    size_t n, cap;
} doc_names;

struct cg_doc {
    char *file;
    char *text;
    size_t len;
    json_t *root;
    cg_pool pool;    /* path strings and position records */
    cg_map positions; /* path -> cg_node_pos* */
    doc_names anchors;  /* &name, in order */
    doc_names aliases;  /* *name, in order */
    anchor *defs;       /* the anchors' values, in order */
    size_t ndefs;
    cg_map def_index;   /* name -> index in defs + 1 (the last of that name) */
    cg_map merge_keys;  /* mapping path -> cg_pos* of its '<<' */
    cg_doc_layout layout;
    cg_doc_entry_text *entries; /* layout.entries, owned */
};

static void note_name(cg_doc *doc, doc_names *list, const char *name, yaml_mark_t m)
{
    cg_grow(&list->v, &list->cap, list->n + 1, sizeof *list->v);
    list->v[list->n++] = (doc_name){cg_intern(&doc->pool, name),
                                    {doc->file, (uint32_t)m.line + 1, (uint32_t)m.column + 1}, NULL};
}

static void note_anchor(cg_doc *doc, const char *name, yaml_mark_t m)
{
    note_name(doc, &doc->anchors, name, m);
}

size_t cg_doc_anchor_count(const cg_doc *doc)
{
    return doc->anchors.n;
}

const char *cg_doc_anchor(const cg_doc *doc, size_t i, cg_pos *pos)
{
    if (pos)
        *pos = doc->anchors.v[i].pos;
    return doc->anchors.v[i].name;
}

size_t cg_doc_alias_count(const cg_doc *doc)
{
    return doc->aliases.n;
}

const char *cg_doc_alias(const cg_doc *doc, size_t i, cg_pos *pos)
{
    if (pos)
        *pos = doc->aliases.v[i].pos;
    return doc->aliases.v[i].name;
}

const cg_doc *cg_doc_alias_source(const cg_doc *doc, size_t i)
{
    return doc->aliases.v[i].source;
}

/* ---- positions of libyaml's marks ---- */

/* Where a line starts: `from` is a (line, offset) already known at or
 * before it, so marks met in order cost linear time in all. */
typedef struct line_cursor {
    size_t line0, off;
} line_cursor;

/* Byte offset of a libyaml mark (0-based line, column in characters);
 * `cur` (may be NULL) remembers the line it found, for the next mark. */
static size_t mark_offset(const cg_doc *doc, line_cursor *cur, size_t line0, size_t col0)
{
    size_t i = 0, l = 0;
    if (cur && cur->line0 <= line0) {
        i = cur->off;
        l = cur->line0;
    }
    for (; l < line0 && i < doc->len; i++)
        if (doc->text[i] == '\n')
            l++;
    if (cur && l == line0)
        *cur = (line_cursor){line0, i};
    for (size_t c = 0; c < col0 && i < doc->len; c++) {
        i++;
        while (i < doc->len && ((unsigned char)doc->text[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

/* ---- the event loop ---- */

typedef struct merge_src {
    json_t *value;    /* a reference owned by the frame */
    const char *path; /* where its keys' positions live (for an anchor of another
                       * document: the alias, whose position its keys take) */
} merge_src;

typedef struct frame {
    json_t *node;
    size_t path_len;  /* length of this node's path in the path buffer */
    size_t count;     /* nodes in this subtree, aliases expanded */
    char *anchor;
    bool is_map;
    cg_node_pos *pos;
    /* mapping state */
    char *key;         /* pending key, or NULL */
    cg_node_pos key_pos;
    bool key_is_merge;
    bool flow;         /* a flow collection ([...] or {...}) */
    cg_pos merge_key;  /* where its '<<' is (line 0: none yet) */
    merge_src *merges;
    size_t nmerges, merges_cap;
} frame;

typedef struct loader {
    cg_doc *doc;
    const cg_load_opts *opts;
    cg_error *err;
    cg_strbuf path;
    frame *stack;
    size_t depth, stack_cap;
    size_t anchors_cap;    /* of doc->defs */
    size_t alias_nodes;
    size_t max_depth, budget;
    line_cursor flow_marks;  /* for mark_offset on flow mappings, met in order */
    /* the text of the root mapping's entries (cg_doc_layout), as marks
     * until the end: where the last token of the current entry ends */
    yaml_mark_t *ends;
    yaml_mark_t *block_starts; /* the entry's last token is a block scalar starting here */
    bool *block_last;
    size_t nentries, entries_cap;
} loader;

/* Records an anchor's value (takes a reference to it). */
static void define_anchor(loader *L, const char *name, json_t *value, const char *path, size_t count)
{
    cg_doc *doc = L->doc;
    cg_grow(&doc->defs, &L->anchors_cap, doc->ndefs + 1, sizeof *doc->defs);
    doc->defs[doc->ndefs] = (anchor){cg_intern(&doc->pool, name), json_incref(value), path, count};
    cg_map_put(&doc->def_index, doc->defs[doc->ndefs].name, (void *)(doc->ndefs + 1));
    doc->ndefs++;
}

static cg_pos mk_pos(const loader *L, yaml_mark_t m)
{
    return (cg_pos){L->doc->file, (uint32_t)m.line + 1, (uint32_t)m.column + 1};
}

static cg_node_pos *record(loader *L, const char *path, yaml_mark_t start,
                           yaml_mark_t end, uint8_t style)
{
    if (L->opts->no_positions)
        return NULL;
    cg_node_pos *p = cg_pool_alloc(&L->doc->pool, sizeof *p);
    memset(p, 0, sizeof *p);
    p->line = (uint32_t)start.line + 1;
    p->col = (uint32_t)start.column + 1;
    p->end_line = (uint32_t)end.line + 1;
    p->style = style;
    const char *key = cg_pool_strndup(&L->doc->pool, path, strlen(path));
    cg_map_put(&L->doc->positions, key, p);
    return p;
}

static uint8_t scalar_style(yaml_scalar_style_t s)
{
    switch (s) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: return CG_STYLE_SINGLE;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return CG_STYLE_DOUBLE;
    case YAML_LITERAL_SCALAR_STYLE: return CG_STYLE_LITERAL;
    case YAML_FOLDED_SCALAR_STYLE: return CG_STYLE_FOLDED;
    default: return CG_STYLE_PLAIN;
    }
}

static int check_tag(loader *L, const yaml_char_t *tag, yaml_mark_t m, bool scalar,
                     bool *is_str)
{
    *is_str = false;
    if (!tag)
        return 0;
    const char *t = (const char *)tag;
    if (scalar && (cg_streq(t, "tag:yaml.org,2002:str") || cg_streq(t, "!"))) {
        *is_str = true;
        return 0;
    }
    static const char *const scalar_tags[] = {
        "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"};
    static const char *const coll_tags[] = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"};
    const char *const *ok = scalar ? scalar_tags : coll_tags;
    size_t n = scalar ? CG_ARRAY_LEN(scalar_tags) : CG_ARRAY_LEN(coll_tags);
    for (size_t i = 0; i < n; i++)
        if (cg_streq(t, ok[i]))
            return 0;
    const char *shown = cg_starts_with(t, "tag:yaml.org,2002:") ? t + 18 : t;
    cg_pos p = mk_pos(L, m);
    return cg_error_at(L->err, &p, "unsupported tag '%s%s'",
                       cg_starts_with(t, "tag:yaml.org,2002:") ? "!!" : "", shown);
}

static int budget_add(loader *L, size_t n, yaml_mark_t m, const char *what)
{
    L->alias_nodes += n;
    if (L->alias_nodes > L->budget) {
        cg_pos p = mk_pos(L, m);
        return cg_error_at(L->err, &p,
                           "%s expands the document beyond %zu nodes; is it an alias bomb?",
                           what, L->budget);
    }
    return 0;
}

/* The path the next value of the top frame will get. */
static void push_child_path(loader *L)
{
    if (L->depth == 0)
        return;
    frame *f = &L->stack[L->depth - 1];
    if (f->is_map)
        cg_path_push_key(&L->path, f->key);
    else
        cg_path_push_index(&L->path, json_array_size(f->node));
}

/* Takes ownership of `value` (a mapping, or a list of mappings, to merge in). */
static int add_merge(loader *L, frame *f, json_t *value, const char *src_path, yaml_mark_t m)
{
    cg_pos p = mk_pos(L, m);
    if (json_is_object(value)) {
        cg_grow(&f->merges, &f->merges_cap, f->nmerges + 1, sizeof *f->merges);
        f->merges[f->nmerges++] = (merge_src){value, src_path};
        return 0;
    }
    if (!json_is_array(value)) {
        json_decref(value);
        return cg_error_at(L->err, &p, "merge key '<<' needs a mapping or a list of mappings");
    }
    for (size_t i = 0; i < json_array_size(value); i++) {
        json_t *item = json_array_get(value, i);
        if (!json_is_object(item)) {
            json_decref(value);
            return cg_error_at(L->err, &p,
                               "merge key '<<' needs a mapping or a list of mappings");
        }
        cg_strbuf ip = CG_STRBUF_INIT;
        cg_strbuf_adds(&ip, src_path);
        cg_path_push_index(&ip, i);
        /* An alias item keeps its positions under its anchor. */
        const char *item_path = cg_pool_strndup(&L->doc->pool, ip.buf, ip.len);
        cg_strbuf_release(&ip);
        cg_node_pos np;
        if (cg_doc_lookup(L->doc, item_path, &np) && np.redirect)
            item_path = np.redirect;
        cg_grow(&f->merges, &f->merges_cap, f->nmerges + 1, sizeof *f->merges);
        f->merges[f->nmerges++] = (merge_src){json_incref(item), item_path};
    }
    json_decref(value);
    return 0;
}

/* Attaches a finished value to the top frame (or makes it the root).  Steals
 * the reference.  `src_path` is where the value's own positions live (the
 * anchor's path for an alias).  The path buffer holds the value's path. */
static int attach(loader *L, json_t *value, size_t count, const char *src_path, yaml_mark_t m)
{
    if (L->depth == 0) {
        L->doc->root = value;
        return 0;
    }
    frame *f = &L->stack[L->depth - 1];
    f->count += count;
    if (!f->is_map) {
        json_array_append_new(f->node, value);
        return 0;
    }
    char *key = f->key;
    f->key = NULL;
    if (f->key_is_merge) {
        f->key_is_merge = false;
        free(key);
        return add_merge(L, f, value, src_path, m);
    }
    if (json_object_set_new(f->node, key, value) != 0) {
        cg_pos p = {L->doc->file, f->key_pos.key_line, f->key_pos.key_col};
        free(key);
        return cg_error_at(L->err, &p, "key is not valid UTF-8 text");
    }
    free(key);
    return 0;
}

static int begin_key(loader *L, frame *f, const yaml_event_t *ev)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    cg_pos p = mk_pos(L, ev->start_mark);
    if (memchr(text, '\0', len))
        return cg_error_at(L->err, &p, "a key may not contain a NUL character");
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
    if (plain && cg_streq(text, "<<")) {
        if (f->merge_key.line) {
            cg_error_at(L->err, &p, "a second merge key ('<<') in this mapping; YAML readers disagree on which one "
                        "wins (the first, or the last): write one '<<' with a list (<<: [*a, *b]), in which the "
                        "first mapping wins");
            cg_error_note(L->err, &f->merge_key, "the first merge key is here");
            return -1;
        }
        f->merge_key = p;
        if (!L->opts->no_positions)
            cg_map_put(&L->doc->merge_keys, cg_pool_strndup(&L->doc->pool, L->path.buf ? L->path.buf : "", L->path.len),
                       memcpy(cg_pool_alloc(&L->doc->pool, sizeof p), &p, sizeof p));
        f->key = cg_xstrdup(text);
        f->key_is_merge = true;
        f->key_pos.key_line = p.line;
        f->key_pos.key_col = p.col;
        return 0;
    }
    if (json_object_get(f->node, text)) {
        cg_strbuf kp = CG_STRBUF_INIT;
        cg_strbuf_add(&kp, L->path.buf, L->path.len);
        cg_path_push_key(&kp, text);
        cg_node_pos first;
        bool known = cg_doc_lookup(L->doc, kp.buf, &first);
        cg_strbuf_release(&kp);
        cg_error_at(L->err, &p, "duplicate key '%s'", text);
        if (known)
            cg_error_note(L->err, &(cg_pos){L->doc->file, first.key_line, first.key_col},
                          "'%s' was first defined here", text);
        return -1;
    }
    f->key = cg_xstrndup(text, len);
    f->key_is_merge = false;
    f->key_pos.key_line = p.line;
    f->key_pos.key_col = p.col;
    return 0;
}

static void set_key_pos(loader *L, cg_node_pos *np)
{
    if (!np || L->depth == 0)
        return;
    frame *f = &L->stack[L->depth - 1];
    if (f->is_map) {
        np->key_line = f->key_pos.key_line;
        np->key_col = f->key_pos.key_col;
    }
}

static int on_scalar(loader *L, const yaml_event_t *ev)
{
    bool tagged_str;
    if (check_tag(L, ev->data.scalar.tag, ev->start_mark, true, &tagged_str) != 0)
        return -1;
    if (L->depth > 0) {
        frame *f = &L->stack[L->depth - 1];
        if (f->is_map && !f->key)
            return begin_key(L, f, ev);
    }
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (memchr(text, '\0', len)) {
        cg_pos p = mk_pos(L, ev->start_mark);
        return cg_error_at(L->err, &p, "a value may not contain a NUL character");
    }
    json_t *v = json_stringn(text, len);
    if (!v) {
        cg_pos p = mk_pos(L, ev->start_mark);
        return cg_error_at(L->err, &p, "value is not valid UTF-8 text");
    }
    size_t base = L->path.len;
    push_child_path(L);
    uint8_t style = tagged_str ? CG_STYLE_DOUBLE : scalar_style(ev->data.scalar.style);
    cg_node_pos *np = record(L, L->path.buf ? L->path.buf : "", ev->start_mark, ev->end_mark, style);
    if (np && tagged_str)
        np->flags |= CG_NODE_TAGGED_STR;
    set_key_pos(L, np);
    const char *own = L->path.buf ? L->path.buf : "";
    const char *src = cg_pool_strndup(&L->doc->pool, own, strlen(own));
    if (ev->data.scalar.anchor) {
        const char *name = (const char *)ev->data.scalar.anchor;
        note_anchor(L->doc, name, ev->start_mark);
        define_anchor(L, name, v, src, 1);
    }
    int rc = attach(L, v, 1, src, ev->start_mark);
    cg_strbuf_truncate(&L->path, base);
    return rc;
}

static int on_alias(loader *L, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    cg_pos p = mk_pos(L, ev->start_mark);
    if (L->depth > 0) {
        frame *f = &L->stack[L->depth - 1];
        if (f->is_map && !f->key)
            return cg_error_at(L->err, &p, "an alias (*%s) cannot be used as a key", name);
    }
    for (size_t i = 0; i < L->depth; i++)
        if (L->stack[i].anchor && cg_streq(L->stack[i].anchor, name))
            return cg_error_at(L->err, &p, "alias '*%s' refers to a node that contains it", name);
    /* this document's anchors first, then those of the documents in scope,
     * the last one first */
    const cg_doc *source = L->doc;
    size_t idx = (size_t)cg_map_get(&L->doc->def_index, name);
    if (!idx && L->opts->scope_index) {
        const cg_doc *d = cg_map_get(L->opts->scope_index, name);
        if (d && (idx = (size_t)cg_map_get(&d->def_index, name)))
            source = d;
    }
    for (size_t s = L->opts->scope_index ? 0 : L->opts->nscope; !idx && s > 0; s--)
        if ((idx = (size_t)cg_map_get(&L->opts->scope[s - 1]->def_index, name)))
            source = L->opts->scope[s - 1];
    if (!idx && L->opts->scope)
        return cg_error_at(L->err, &p, "undefined alias '*%s' (a fragment sees its own anchors and those of the "
                           "fragments before it in the manifest)", name);
    if (!idx)
        return cg_error_at(L->err, &p, "undefined alias '*%s'", name);
    note_name(L->doc, &L->doc->aliases, name, ev->start_mark);
    if (source != L->doc)
        L->doc->aliases.v[L->doc->aliases.n - 1].source = source;
    const anchor *a = &source->defs[idx - 1];
    if (budget_add(L, a->count, ev->start_mark, "this alias") != 0)
        return -1;
    size_t base = L->path.len;
    push_child_path(L);
    const char *own = L->path.buf ? L->path.buf : "";
    cg_node_pos *np = record(L, own, ev->start_mark, ev->end_mark, CG_STYLE_NONE);
    /* positions below an alias are those below its anchor; below an anchor
     * of another document they are the alias's own (this file's line) */
    const char *src_path = a->path;
    if (source != L->doc)
        src_path = cg_pool_strndup(&L->doc->pool, own, strlen(own));
    if (np) {
        np->flags |= CG_NODE_ALIAS;
        np->redirect = source == L->doc ? a->path : NULL;
        cg_node_pos target;
        if (cg_doc_lookup(source, a->path, &target))
            np->style = target.style;
    }
    set_key_pos(L, np);
    json_incref(a->value);
    int rc = attach(L, a->value, a->count, src_path, ev->start_mark);
    cg_strbuf_truncate(&L->path, base);
    return rc;
}

static int on_start(loader *L, const yaml_event_t *ev, bool is_map)
{
    bool unused;
    const yaml_char_t *tag = is_map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    if (check_tag(L, tag, ev->start_mark, false, &unused) != 0)
        return -1;
    cg_pos p = mk_pos(L, ev->start_mark);
    if (is_map && ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE) {
        /* `key: {{ name }}` is a mapping in a mapping to YAML: the first
         * thing everyone writes with templates, so name it. */
        const char *t = L->doc->text;
        size_t off = mark_offset(L->doc, &L->flow_marks, ev->start_mark.line, ev->start_mark.column);
        if (off + 1 < L->doc->len && t[off] == '{' && t[off + 1] == '{') {
            size_t e = off + 2;
            while (e < L->doc->len && t[e] != '\n' && !(t[e] == '}' && e + 1 < L->doc->len && t[e + 1] == '}'))
                e++;
            int n = e < L->doc->len && t[e] == '}' ? (int)(e + 2 - off) : 2;
            return cg_error_at(L->err, &p, "'%.*s' must be quoted: unquoted, YAML reads '{' as the start of a "
                               "mapping; write \"%.*s\"", n, t + off, n, t + off);
        }
    }
    if (L->depth > 0) {
        frame *f = &L->stack[L->depth - 1];
        if (f->is_map && !f->key)
            return cg_error_at(L->err, &p, "a key must be a scalar, not a %s",
                               is_map ? "mapping" : "sequence");
    }
    if (L->depth >= L->max_depth)
        return cg_error_at(L->err, &p, "nesting is deeper than %zu levels", L->max_depth);
    push_child_path(L);
    bool flow = is_map ? ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                       : ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    cg_node_pos *np = record(L, L->path.buf ? L->path.buf : "", ev->start_mark, ev->end_mark,
                             flow ? CG_STYLE_FLOW : CG_STYLE_BLOCK);
    set_key_pos(L, np);
    cg_grow(&L->stack, &L->stack_cap, L->depth + 1, sizeof *L->stack);
    frame *f = &L->stack[L->depth++];
    memset(f, 0, sizeof *f);
    f->node = is_map ? json_object() : json_array();
    if (!f->node)
        cg_die_oom();
    f->is_map = is_map;
    f->flow = flow;
    f->path_len = L->path.len;
    f->count = 1;
    f->pos = np;
    const yaml_char_t *an = is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (an) {
        f->anchor = cg_xstrdup((const char *)an);
        note_anchor(L->doc, f->anchor, ev->start_mark);
    }
    return 0;
}

static void frame_release(frame *f)
{
    for (size_t i = 0; i < f->nmerges; i++)
        json_decref(f->merges[i].value);
    free(f->merges);
    free(f->key);
    free(f->anchor);
    if (f->node)
        json_decref(f->node);
}

static int apply_merges(loader *L, frame *f, yaml_mark_t m)
{
    for (size_t i = 0; i < f->nmerges; i++) {
        const char *k;
        json_t *v;
        json_object_foreach(f->merges[i].value, k, v) {
            if (json_object_get(f->node, k))
                continue;
            if (budget_add(L, 1, m, "this merge key") != 0)
                return -1;
            json_object_set(f->node, k, v);
            if (L->opts->no_positions)
                continue;
            cg_strbuf kp = CG_STRBUF_INIT, sp = CG_STRBUF_INIT;
            cg_strbuf_add(&kp, L->path.buf, f->path_len);
            cg_path_push_key(&kp, k);
            cg_strbuf_adds(&sp, f->merges[i].path);
            cg_path_push_key(&sp, k);
            cg_node_pos src;
            cg_node_pos *np = cg_pool_alloc(&L->doc->pool, sizeof *np);
            memset(np, 0, sizeof *np);
            bool below = cg_doc_lookup(L->doc, sp.buf, &src);
            /* an anchor of another document: its keys stand where the alias does */
            if (below || cg_doc_lookup(L->doc, f->merges[i].path, &src))
                *np = src;
            np->flags |= CG_NODE_MERGED;
            np->redirect = below ? cg_pool_strndup(&L->doc->pool, sp.buf, sp.len) : NULL;
            cg_map_put(&L->doc->positions, cg_pool_strndup(&L->doc->pool, kp.buf, kp.len), np);
            cg_strbuf_release(&kp);
            cg_strbuf_release(&sp);
        }
    }
    return 0;
}

static int on_end(loader *L, const yaml_event_t *ev)
{
    frame f = L->stack[--L->depth];
    if (f.pos)
        f.pos->end_line = (uint32_t)ev->end_mark.line + 1;
    if (f.is_map && apply_merges(L, &f, ev->start_mark) != 0) {
        frame_release(&f);
        return -1;
    }
    /* The path buffer goes back to this node's own path for attach(). */
    cg_strbuf_truncate(&L->path, f.path_len);
    const char *own = cg_pool_strndup(&L->doc->pool, L->path.buf ? L->path.buf : "", L->path.len);
    if (f.anchor)
        define_anchor(L, f.anchor, f.node, own, f.count);
    json_t *node = f.node;
    f.node = NULL;
    size_t count = f.count;
    frame_release(&f);
    /* Strip this node's last path component before attaching. */
    size_t parent_len = L->depth > 0 ? L->stack[L->depth - 1].path_len : 0;
    int rc = attach(L, node, count, own, ev->start_mark);
    cg_strbuf_truncate(&L->path, parent_len);
    return rc;
}

/* libyaml's "mapping values are not allowed in this context" at the ':' at
 * `off`: say what the usual causes are, in the words of the line. */
static int colon_error(loader *L, const cg_pos *pos, size_t off)
{
    const char *t = L->doc->text;
    size_t bol = off, eol = off;
    while (bol > 0 && t[bol - 1] != '\n')
        bol--;
    while (eol < L->doc->len && t[eol] != '\n' && t[eol] != '\r')
        eol++;
    /* the key that starts the line: after indentation and "- " */
    size_t k = bol;
    while (k < off && (t[k] == ' ' || t[k] == '-'))
        k++;
    size_t kend = k;
    while (kend < off && t[kend] != ':')
        kend++;
    size_t v = kend + 1;
    while (v < off && t[v] == ' ')
        v++;
    size_t prev = off;
    while (prev > bol && t[prev - 1] == ' ')
        prev--;
    if (kend >= off || v >= off || prev == bol)
        return cg_error_at(L->err, pos, "unexpected ':' here; is an indentation wrong or a ': ' inside a value "
                           "that needs quotes?");
    char c = t[prev - 1];
    if (c == ']' || c == '}' || c == '"' || c == '\'')
        return cg_error_at(L->err, pos, "unexpected ':' after the value of '%.*s'; a value cannot be followed by "
                           "another ': '", (int)(kend - k), t + k);
    size_t vend = eol;
    for (size_t i = v; i < eol; i++)
        if (t[i] == '#' && t[i - 1] == ' ') {
            vend = i;
            break;
        }
    while (vend > v && t[vend - 1] == ' ')
        vend--;
    return cg_error_at(L->err, pos, "': ' inside an unquoted value; quote the value (\"%.*s\") or remove the ':'",
                       (int)(vend - v), t + v);
}

static int parser_error(loader *L, yaml_parser_t *p)
{
    cg_doc *doc = L->doc;
    if (p->error == YAML_MEMORY_ERROR)
        cg_die_oom();
    if (p->error == YAML_READER_ERROR) {
        /* cg_yaml_check_text() normally catches these first; keep a fallback. */
        return cg_error_at(L->err, &(cg_pos){doc->file, 0, 0}, "%s at byte %zu",
                           p->problem ? p->problem : "cannot read", p->problem_offset);
    }
    yaml_mark_t m = p->problem_mark;
    cg_pos pos = mk_pos(L, m);
    size_t off = mark_offset(doc, NULL, m.line, m.column);
    const char *problem = p->problem ? p->problem : "syntax error";
    if (off < doc->len && doc->text[off] == '\t')
        return cg_error_at(L->err, &pos,
                           "tab character here; YAML indentation must use spaces");
    if (p->context && strcmp(p->context, "while scanning a quoted scalar") == 0 &&
        strstr(problem, "end of stream")) {
        pos = mk_pos(L, p->context_mark);
        return cg_error_at(L->err, &pos, "this quoted string is never closed (the file ends inside it)");
    }
    if (strcmp(problem, "mapping values are not allowed in this context") == 0)
        return colon_error(L, &pos, off);
    if (p->context)
        return cg_error_at(L->err, &pos, "%s (%s at line %zu, column %zu)", problem,
                           p->context, p->context_mark.line + 1, p->context_mark.column + 1);
    return cg_error_at(L->err, &pos, "%s", problem);
}

/* ---- the layout of the root mapping's entries (cg_doc_layout) ---- */

static bool mark_after(yaml_mark_t a, yaml_mark_t b)
{
    return a.line > b.line || (a.line == b.line && a.column > b.column);
}

/* The first %TAG directive above the document's "---" (directives start in
 * column 1 and come before it, so a line is one exactly when it starts so). */
static cg_pos find_tag_directive(const cg_doc *doc, size_t limit, yaml_mark_t fallback)
{
    uint32_t line = 1;
    for (size_t i = 0; i < limit && i < doc->len; line++) {
        if (doc->len - i >= 5 && memcmp(doc->text + i, "%TAG", 4) == 0 &&
            (doc->text[i + 4] == ' ' || doc->text[i + 4] == '\t'))
            return (cg_pos){doc->file, line, 1};
        const char *nl = memchr(doc->text + i, '\n', doc->len - i);
        if (!nl)
            break;
        i = (size_t)(nl - doc->text) + 1;
    }
    return (cg_pos){doc->file, (uint32_t)fallback.line + 1, (uint32_t)fallback.column + 1};
}

/* Sees every event before it is handled: the document's markers, where each
 * entry of a root mapping starts (its key) and where its last token ends
 * (the end of a block collection is not a token of its own: libyaml puts
 * it at the next key, past the comments between them). */
static void track_layout(loader *L, const yaml_event_t *ev)
{
    cg_doc *doc = L->doc;
    if (L->opts->no_positions)
        return;
    if (ev->type == YAML_DOCUMENT_START_EVENT) {
        if (!ev->data.document_start.implicit)
            doc->layout.body_start = mark_offset(doc, NULL, ev->end_mark.line, ev->end_mark.column);
        if (ev->data.document_start.tag_directives.start != ev->data.document_start.tag_directives.end)
            doc->layout.tag_directive = find_tag_directive(doc, mark_offset(doc, NULL, ev->end_mark.line,
                                                                            ev->end_mark.column), ev->start_mark);
        return;
    }
    if (ev->type == YAML_DOCUMENT_END_EVENT) {
        if (!ev->data.document_end.implicit)
            doc->layout.body_end = mark_offset(doc, NULL, ev->start_mark.line, ev->start_mark.column);
        return;
    }
    if (L->depth == 0 || !L->stack[0].is_map)
        return;
    const frame *top = &L->stack[L->depth - 1];
    bool is_end = ev->type == YAML_MAPPING_END_EVENT || ev->type == YAML_SEQUENCE_END_EVENT;
    if (is_end && (L->depth == 1 || !top->flow))
        return; /* the root's end, or a block collection's: no token */
    if (L->depth == 1 && !top->key) {
        /* a key of the root mapping: a new entry */
        cg_grow(&doc->entries, &L->entries_cap, L->nentries + 1, sizeof *doc->entries);
        size_t cap = L->entries_cap;
        L->ends = cg_xrealloc(L->ends, cap * sizeof *L->ends);
        L->block_starts = cg_xrealloc(L->block_starts, cap * sizeof *L->block_starts);
        L->block_last = cg_xrealloc(L->block_last, cap * sizeof *L->block_last);
        cg_doc_entry_text *e = &doc->entries[L->nentries];
        memset(e, 0, sizeof *e);
        e->key_line = (uint32_t)ev->start_mark.line + 1;
        e->key_col = (uint32_t)ev->start_mark.column + 1;
        e->merge = ev->type == YAML_SCALAR_EVENT && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                   !ev->data.scalar.tag && cg_streq((const char *)ev->data.scalar.value, "<<");
        L->ends[L->nentries] = ev->end_mark;
        L->block_last[L->nentries] = false;
        L->nentries++;
        return;
    }
    if (L->nentries == 0)
        return;
    size_t i = L->nentries - 1;
    if (!mark_after(ev->end_mark, L->ends[i]))
        return;
    L->ends[i] = ev->end_mark;
    L->block_last[i] = ev->type == YAML_SCALAR_EVENT && (ev->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                                                         ev->data.scalar.style == YAML_FOLDED_SCALAR_STYLE);
    if (L->block_last[i])
        L->block_starts[i] = ev->start_mark;
}

/* The entries' marks as byte offsets, and the chomping of a block scalar
 * that ends one (its header: anchor and tag, then '|' or '>' and its
 * indicators). */
static void finish_layout(loader *L)
{
    cg_doc *doc = L->doc;
    line_cursor ends = {0, 0}, starts = {0, 0};
    for (size_t i = 0; i < L->nentries; i++) {
        cg_doc_entry_text *e = &doc->entries[i];
        e->end = mark_offset(doc, &ends, L->ends[i].line, L->ends[i].column);
        if (!L->block_last[i])
            continue;
        yaml_mark_t m = L->block_starts[i];
        size_t o = mark_offset(doc, &starts, m.line, m.column);
        const char *t = doc->text;
        while (o < doc->len && (t[o] == '&' || t[o] == '!' || t[o] == ' ')) {
            if (t[o] == ' ') {
                o++;
                continue;
            }
            while (o < doc->len && t[o] != ' ' && t[o] != '\n')
                o++;
        }
        e->chomp = ' ';
        for (size_t k = 1; k <= 2 && o + k < doc->len && (t[o + k] == '+' || t[o + k] == '-' ||
                                                          cg_isdigit(t[o + k])); k++)
            if (!cg_isdigit(t[o + k]))
                e->chomp = t[o + k];
        e->chomp_pos = (cg_pos){doc->file, (uint32_t)m.line + 1, (uint32_t)m.column + 1};
    }
    doc->layout.entries = doc->entries;
    doc->layout.nentries = L->nentries;
}

static int run(loader *L)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        cg_die_oom();
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&parser, (const unsigned char *)L->doc->text, L->doc->len);
    int rc = 0;
    int documents = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser_error(L, &parser);
            break;
        }
        track_layout(L, &ev);
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
        case YAML_NO_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1) {
                cg_pos p = mk_pos(L, ev.start_mark);
                rc = cg_error_at(L->err, &p,
                                 "a second YAML document starts here; a file holds one document");
            }
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(L, &ev);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(L, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(L, &ev, false);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(L, &ev, true);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(L, &ev);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (rc == 0)
        finish_layout(L);
    return rc;
}

cg_doc *cg_doc_parse(const char *file, const char *text, size_t len,
                     const cg_load_opts *opts, cg_error *err)
{
    static const cg_load_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    cg_doc *doc = cg_xcalloc(1, sizeof *doc);
    doc->file = cg_xstrdup(file);
    cg_pool_init(&doc->pool);
    cg_map_init(&doc->positions);
    cg_map_init(&doc->def_index);
    cg_map_init(&doc->merge_keys);
    size_t max_bytes = opts->max_bytes ? opts->max_bytes : CG_DEFAULT_MAX_BYTES;
    if (len > max_bytes) {
        cg_error_at(err, &(cg_pos){doc->file, 0, 0},
                    "file is too large (%zu bytes; the limit is %zu)", len, max_bytes);
        cg_doc_free(doc);
        return NULL;
    }
    doc->text = cg_xmalloc(len + 1);
    if (len)
        memcpy(doc->text, text, len);
    doc->text[len] = '\0';
    doc->len = len;
    doc->layout.body_end = len;
    if (cg_yaml_check_text(doc->file, doc->text, len, err) != 0) {
        cg_doc_free(doc);
        return NULL;
    }
    loader L = {0};
    L.doc = doc;
    L.opts = opts;
    L.err = err;
    L.max_depth = opts->max_depth ? opts->max_depth : CG_DEFAULT_MAX_DEPTH;
    L.budget = opts->alias_budget ? opts->alias_budget : CG_DEFAULT_ALIAS_BUDGET;
    int rc = run(&L);
    if (rc == 0 && opts->copied)
        rc = cg_yaml_check_snake(doc->file, doc->text, len, err);
    while (L.depth > 0)
        frame_release(&L.stack[--L.depth]);
    free(L.stack);
    free(L.ends);
    free(L.block_starts);
    free(L.block_last);
    cg_strbuf_release(&L.path);
    if (rc != 0) {
        cg_doc_free(doc);
        return NULL;
    }
    return doc;
}

void cg_doc_free(cg_doc *doc)
{
    if (!doc)
        return;
    if (doc->root)
        json_decref(doc->root);
    cg_map_release(&doc->positions);
    for (size_t i = 0; i < doc->ndefs; i++)
        json_decref(doc->defs[i].value);
    free(doc->defs);
    cg_map_release(&doc->def_index);
    cg_map_release(&doc->merge_keys);
    free(doc->entries);
    free(doc->anchors.v);
    free(doc->aliases.v);
    cg_pool_release(&doc->pool);
    free(doc->text);
    free(doc->file);
    free(doc);
}

json_t *cg_doc_root(const cg_doc *doc) { return doc->root; }
const char *cg_doc_file(const cg_doc *doc) { return doc->file; }

const char *cg_doc_text(const cg_doc *doc, size_t *len)
{
    if (len)
        *len = doc->len;
    return doc->text;
}

bool cg_doc_lookup(const cg_doc *doc, const char *path, cg_node_pos *out)
{
    cg_strbuf cur = CG_STRBUF_INIT;
    cg_strbuf_adds(&cur, path);
    bool found = false;
    /* Each hop follows one alias; the bound stops pathological chains. */
    for (int hops = 0; hops < 64 && !found; hops++) {
        cg_node_pos *p = cg_map_get(&doc->positions, cg_strbuf_str(&cur));
        if (p) {
            *out = *p;
            found = true;
            break;
        }
        /* Find the longest prefix that is an alias or a merged key. */
        bool moved = false;
        for (size_t i = cur.len; i > 0; i--) {
            if (cur.buf[i - 1] != '/' || i - 1 == 0)
                continue;
            cur.buf[i - 1] = '\0';
            cg_node_pos *q = cg_map_get(&doc->positions, cur.buf);
            cur.buf[i - 1] = '/';
            if (q && q->redirect) {
                cg_strbuf next = CG_STRBUF_INIT;
                cg_strbuf_adds(&next, q->redirect);
                cg_strbuf_add(&next, cur.buf + i - 1, cur.len - (i - 1));
                cg_strbuf_release(&cur);
                cur = next;
                moved = true;
                break;
            }
            if (q)
                break; /* a plain ancestor exists: the path is simply unknown */
        }
        if (!moved)
            break;
    }
    cg_strbuf_release(&cur);
    return found;
}

static cg_pos where(const cg_doc *doc, const char *path, bool key)
{
    cg_strbuf cur = CG_STRBUF_INIT;
    cg_strbuf_adds(&cur, path);
    cg_pos r = {doc->file, 0, 0};
    for (;;) {
        cg_node_pos p;
        if (cg_doc_lookup(doc, cg_strbuf_str(&cur), &p)) {
            if (key && p.key_line)
                r = (cg_pos){doc->file, p.key_line, p.key_col};
            else
                r = (cg_pos){doc->file, p.line, p.col};
            break;
        }
        char *slash = cur.len ? strrchr(cur.buf, '/') : NULL;
        if (!slash)
            break;
        cg_strbuf_truncate(&cur, (size_t)(slash - cur.buf));
        key = false;
    }
    cg_strbuf_release(&cur);
    return r;
}

cg_pos cg_doc_where(const cg_doc *doc, const char *path) { return where(doc, path, false); }
cg_pos cg_doc_key_where(const cg_doc *doc, const char *path) { return where(doc, path, true); }

cg_style cg_doc_style(const cg_doc *doc, const char *path)
{
    cg_node_pos p;
    return cg_doc_lookup(doc, path, &p) ? (cg_style)p.style : CG_STYLE_NONE;
}

bool cg_doc_merge_key(const cg_doc *doc, const char *path, cg_pos *out)
{
    const cg_pos *p = cg_map_get(&doc->merge_keys, path);
    if (p)
        *out = *p;
    return p != NULL;
}

const cg_doc_layout *cg_doc_get_layout(const cg_doc *doc)
{
    return &doc->layout;
}

bool cg_doc_is_plain(const cg_doc *doc, const char *path)
{
    return cg_doc_style(doc, path) == CG_STYLE_PLAIN;
}

json_t *cg_doc_typed(const cg_doc *doc, const char *path, json_t *v)
{
    if (json_is_object(v)) {
        json_t *o = json_object();
        cg_strbuf p = CG_STRBUF_INIT;
        const char *k;
        json_t *c;
        json_object_foreach(v, k, c) {
            cg_path_join_key(&p, path, k);
            json_object_set_new(o, k, cg_doc_typed(doc, cg_strbuf_str(&p), c));
        }
        cg_strbuf_release(&p);
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        cg_strbuf p = CG_STRBUF_INIT;
        for (size_t i = 0; i < json_array_size(v); i++) {
            cg_path_join_index(&p, path, i);
            json_array_append_new(a, cg_doc_typed(doc, cg_strbuf_str(&p), json_array_get(v, i)));
        }
        cg_strbuf_release(&p);
        return a;
    }
    if (!json_is_string(v) || !cg_doc_is_plain(doc, path))
        return json_incref(v);
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    char *end = NULL;
    switch (cg_yaml_resolve(s, n)) {
    case CG_T_NULL:
        return json_null();
    case CG_T_BOOL:
        return json_boolean(strchr("tTyY", s[0]) || ((s[0] == 'o' || s[0] == 'O') && (s[1] == 'n' || s[1] == 'N')));
    case CG_T_INT: {
        long long i = strtoll(s, &end, 10);
        return end && !*end ? json_integer((json_int_t)i) : json_incref(v);
    }
    case CG_T_FLOAT: {
        double d = strtod(s, &end);
        return end && !*end ? json_real(d) : json_incref(v);
    }
    default:
        return json_incref(v);
    }
}
