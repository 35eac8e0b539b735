#include "lang/yamlwrite.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* A literal block keeps the string exactly when every line is free of
 * special characters and trailing blanks. */
static bool literal_ok(const char *s, size_t n)
{
    if (n == 0 || !memchr(s, '\n', n))
        return false;
    /* "\n" alone would be `|` and an empty line, which reads back as "" */
    if (strspn(s, "\n") >= n)
        return false;
    size_t line_start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '\n') {
            if (i > line_start && (s[i - 1] == ' ' || s[i - 1] == '\t'))
                return false;
            line_start = i + 1;
            continue;
        }
        if (s[i] != '\t' && cg_yaml_special_char((const unsigned char *)s + i, n - i))
            return false;
    }
    return true;
}

/* ---- the emitter ---- */

void cg_yw_init(cg_yw *w, cg_strbuf *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

void cg_yw_init_in_map(cg_yw *w, cg_strbuf *out, unsigned indent)
{
    cg_yw_init(w, out);
    cg_grow(&w->frames, &w->cap, 1, sizeof *w->frames);
    w->frames[w->depth++] = (cg_yw_frame){'m', 'r', indent, 0};
}

void cg_yw_release(cg_yw *w)
{
    free(w->frames);
    w->frames = NULL;
    w->depth = w->cap = 0;
}

static void put(cg_yw *w, const char *s, size_t n)
{
    cg_strbuf_add(w->out, s, n);
    /* only "at the start of a line or not" matters (pad_to) */
    if (n)
        w->col = s[n - 1] == '\n' ? 0 : w->col + 1;
}

static void pad_to(cg_yw *w, unsigned indent)
{
    if (w->col == 0 && indent) {
        cg_strbuf_addspaces(w->out, indent);
        w->col = indent;
    }
}

static cg_yw_frame *top(cg_yw *w)
{
    return w->depth ? &w->frames[w->depth - 1] : NULL;
}

/* Called before a child node is written into the top collection. */
static void first_child(cg_yw *w, cg_yw_frame *f)
{
    if (f->count == 0 && f->opened == 'k')
        put(w, "\n", 1);
}

/* Positions the writer for a value; returns the indent of block content
 * that belongs to the value (literal blocks, nested collections). */
static unsigned before_value(cg_yw *w)
{
    cg_yw_frame *f = top(w);
    if (!f)
        return 0;
    if (f->kind == 'm') {
        /* after "key:" */
        return f->indent + 2;
    }
    first_child(w, f);
    pad_to(w, f->indent);
    put(w, "- ", 2);
    return f->indent + 2;
}

static void after_value(cg_yw *w)
{
    cg_yw_frame *f = top(w);
    if (f) {
        f->count++;
        w->key_pending = false;
    }
}

static void push(cg_yw *w, char kind)
{
    cg_yw_frame *parent = top(w);
    unsigned indent;
    char opened;
    if (!parent) {
        indent = 0;
        opened = 'r';
    } else if (parent->kind == 'm') {
        indent = parent->indent + 2;
        opened = 'k';
    } else {
        indent = before_value(w);
        opened = 's';
    }
    cg_grow(&w->frames, &w->cap, w->depth + 1, sizeof *w->frames);
    w->frames[w->depth++] = (cg_yw_frame){kind, opened, indent, 0};
    w->key_pending = false;
}

void cg_yw_map_begin(cg_yw *w) { push(w, 'm'); }
void cg_yw_seq_begin(cg_yw *w) { push(w, 's'); }

void cg_yw_end(cg_yw *w)
{
    cg_yw_frame f = w->frames[--w->depth];
    if (f.count == 0) {
        const char *empty = f.kind == 'm' ? "{}" : "[]";
        if (f.opened == 'k')
            put(w, " ", 1);
        put(w, empty, 2);
        put(w, "\n", 1);
    }
    after_value(w);
}

/* Keys longer than this (in bytes, so at most as many characters) are
 * written as explicit "? key" keys; YAML's limit is 1024 characters. */
#define CG_YAML_MAX_IMPLICIT_KEY 1000

static void scalar_text(cg_strbuf *out, const char *s, size_t n)
{
    if (cg_yaml_plain_safe(s, n))
        cg_strbuf_add(out, s, n);
    else
        cg_yaml_quote(out, s, n);
}

void cg_yaml_scalar_text(cg_strbuf *out, const char *s, size_t n)
{
    scalar_text(out, s, n);
}

bool cg_yaml_wants_literal(const char *s, size_t n)
{
    return literal_ok(s, n);
}

/* Where a key's text goes: the line and indentation of the top frame. */
static cg_yw_frame *begin_key(cg_yw *w)
{
    cg_yw_frame *f = top(w);
    if (f) {
        first_child(w, f);
        pad_to(w, f->indent);
    }
    return f;
}

/* Ends the key whose text was just written at out[at..], straight into the
 * output (no copy): its colon, or for a long key "? key" and the colon on
 * the next line. */
static void end_key(cg_yw *w, cg_yw_frame *f, size_t at)
{
    size_t n = w->out->len - at;
    if (n > CG_YAML_MAX_IMPLICIT_KEY) {
        /* YAML limits implicit keys to 1024 characters: use "? key" */
        char *text = cg_xstrndup(w->out->buf + at, n);
        cg_strbuf_truncate(w->out, at);
        put(w, "? ", 2);
        put(w, text, n);
        put(w, "\n", 1);
        if (f)
            pad_to(w, f->indent);
        put(w, ":", 1);
        free(text);
    } else {
        if (n) /* as put() would have counted it */
            w->col = w->out->buf[w->out->len - 1] == '\n' ? 0 : w->col + 1;
        put(w, ":", 1);
    }
    w->key_pending = true;
}

void cg_yw_key_text(cg_yw *w, const char *text, size_t n)
{
    cg_yw_frame *f = begin_key(w);
    size_t at = w->out->len;
    cg_strbuf_add(w->out, text, n);
    end_key(w, f, at);
}

void cg_yw_key(cg_yw *w, const char *k, size_t n)
{
    cg_yw_frame *f = begin_key(w);
    size_t at = w->out->len;
    scalar_text(w->out, k, n);
    end_key(w, f, at);
}

void cg_yw_keys(cg_yw *w, const char *k) { cg_yw_key(w, k, strlen(k)); }

static void write_literal(cg_yw *w, const char *s, size_t n, unsigned indent)
{
    size_t trailing = 0;
    while (trailing < n && s[n - 1 - trailing] == '\n')
        trailing++;
    size_t first = 0;
    while (first < n && s[first] == '\n')
        first++;
    cg_strbuf_addc(w->out, '|');
    if (first < n && (s[first] == ' ' || s[first] == '\t'))
        cg_strbuf_addc(w->out, '2'); /* else the indentation would be read from that line */
    if (trailing == 0)
        cg_strbuf_addc(w->out, '-');
    else if (trailing > 1)
        cg_strbuf_addc(w->out, '+');
    cg_strbuf_addc(w->out, '\n');
    size_t body = trailing ? n - trailing + 1 : n; /* keep one newline per line */
    size_t start = 0;
    for (size_t i = 0; i <= body; i++) {
        if (i < body && s[i] != '\n')
            continue;
        if (i > start) {
            cg_strbuf_addspaces(w->out, indent);
            cg_strbuf_add(w->out, s + start, i - start);
        }
        if (i < body || trailing == 0)
            cg_strbuf_addc(w->out, '\n');
        start = i + 1;
    }
    for (size_t t = 1; t < trailing; t++)
        cg_strbuf_addc(w->out, '\n');
    w->col = 0;
}

static void scalar(cg_yw *w, const char *s, size_t n, bool raw)
{
    unsigned indent = before_value(w);
    cg_yw_frame *f = top(w);
    if (f && f->kind == 'm')
        put(w, " ", 1);
    if (!raw && literal_ok(s, n)) {
        write_literal(w, s, n, indent);
    } else {
        /* straight into the output, not through a copy */
        if (raw)
            cg_strbuf_add(w->out, s, n);
        else
            scalar_text(w->out, s, n);
        put(w, "\n", 1);
    }
    after_value(w);
}

void cg_yw_str(cg_yw *w, const char *s, size_t n) { scalar(w, s, n, false); }
void cg_yw_strs(cg_yw *w, const char *s) { scalar(w, s, strlen(s), false); }
void cg_yw_raw(cg_yw *w, const char *s, size_t n) { scalar(w, s, n, true); }

void cg_yw_scalar(cg_yw *w, const char *s, size_t n, bool was_plain)
{
    bool typed = was_plain && cg_yaml_resolve(s, n) != CG_T_STR;
    scalar(w, s, n, typed);
}

void cg_yw_value(cg_yw *w, const cg_doc *doc, const char *path, json_t *v)
{
    cg_strbuf p = CG_STRBUF_INIT;
    if (json_is_object(v)) {
        cg_yw_map_begin(w);
        const char *k;
        json_t *child;
        json_object_foreach(v, k, child) {
            cg_strbuf_reset(&p);
            cg_strbuf_adds(&p, path);
            cg_path_push_key(&p, k);
            cg_yw_keys(w, k);
            cg_yw_value(w, doc, cg_strbuf_str(&p), child);
        }
        cg_yw_end(w);
    } else if (json_is_array(v)) {
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < json_array_size(v); i++) {
            cg_strbuf_reset(&p);
            cg_strbuf_adds(&p, path);
            cg_path_push_index(&p, i);
            cg_yw_value(w, doc, cg_strbuf_str(&p), json_array_get(v, i));
        }
        cg_yw_end(w);
    } else {
        const char *s = json_string_value(v);
        cg_yw_scalar(w, s, json_string_length(v), doc && cg_doc_is_plain(doc, path));
    }
    cg_strbuf_release(&p);
}
