#include "lang/yamlwrite.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- scalar resolution ---- */

static bool all_of(const char *s, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!memchr(set, s[i], strlen(set)))
            return false;
    return true;
}

static bool has_digit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cg_isdigit((unsigned char)s[i]))
            return true;
    return false;
}

static bool is_one_of(const char *s, size_t n, const char *const *words, size_t nwords)
{
    char first = n ? s[0] : '\0'; /* most scalars are ruled out here, before strlen */
    for (size_t i = 0; i < nwords; i++)
        if (words[i][0] == first && strlen(words[i]) == n && memcmp(words[i], s, n) == 0)
            return true;
    return false;
}

/* [0-9][0-9_]*(:[0-5]?[0-9])+ — YAML 1.1 base-60 numbers; returns the length
 * matched from the start (0 when no match). */
static size_t sexagesimal_prefix(const char *s, size_t n)
{
    size_t i = 0;
    if (i >= n || !cg_isdigit((unsigned char)s[i]))
        return 0;
    while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
        i++;
    size_t groups = 0;
    while (i < n && s[i] == ':') {
        size_t j = i + 1, d = 0;
        while (j < n && cg_isdigit((unsigned char)s[j]) && d < 2)
            j++, d++;
        if (d == 0 || (d == 2 && s[i + 1] > '5'))
            return 0;
        i = j;
        groups++;
    }
    return groups ? i : 0;
}

static bool is_int(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    if (n == 0)
        return false;
    if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        return all_of(s + 2, n - 2, "01_");
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return all_of(s + 2, n - 2, "0123456789abcdefABCDEF_");
    if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        return all_of(s + 2, n - 2, "01234567_");
    if (cg_isdigit((unsigned char)s[0]) && all_of(s, n, "0123456789_"))
        return true;
    return sexagesimal_prefix(s, n) == n;
}

static bool is_float(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    if (n == 0)
        return false;
    static const char *const special[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
    if (is_one_of(s, n, special, CG_ARRAY_LEN(special)))
        return true;
    size_t sx = sexagesimal_prefix(s, n);
    if (sx && sx < n && s[sx] == '.')
        return sx + 1 == n || all_of(s + sx + 1, n - sx - 1, "0123456789_");
    /* mantissa [0-9_]*(.[0-9_]*)? with a digit, then an optional exponent */
    size_t i = 0;
    bool dot = false, exp = false;
    while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
        i++;
    if (i < n && s[i] == '.') {
        dot = true;
        i++;
        while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
            i++;
    }
    if (!has_digit(s, i))
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '-' || s[j] == '+'))
            j++;
        if (j >= n || !all_of(s + j, n - j, "0123456789"))
            return false;
        exp = true;
        i = n;
    }
    return i == n && (dot || exp);
}

/* YAML 1.1 timestamps start with a date: [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}. */
static bool is_timestamp(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && i < 4 && cg_isdigit((unsigned char)s[i]))
        i++;
    if (i != 4 || i >= n || s[i] != '-')
        return false;
    size_t j = ++i;
    while (i < n && i - j < 2 && cg_isdigit((unsigned char)s[i]))
        i++;
    if (i == j || i >= n || s[i] != '-')
        return false;
    j = ++i;
    while (i < n && i - j < 2 && cg_isdigit((unsigned char)s[i]))
        i++;
    return i > j;
}

cg_scalar_type cg_yaml_resolve(const char *s, size_t n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    static const char *const bools[] = {
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF"};
    static const char *const others[] = {"<<", "="};
    bool numeric_start = n && (cg_isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.');
    if (n > 5 && !numeric_start)
        return CG_T_STR; /* longer than any null or bool word, and not a number */
    if (is_one_of(s, n, nulls, CG_ARRAY_LEN(nulls)))
        return CG_T_NULL;
    if (is_one_of(s, n, bools, CG_ARRAY_LEN(bools)))
        return CG_T_BOOL;
    if (is_one_of(s, n, others, CG_ARRAY_LEN(others)))
        return CG_T_OTHER;
    if (n == 0 || !(cg_isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
        return CG_T_STR;
    if (is_int(s, n))
        return CG_T_INT;
    if (is_float(s, n))
        return CG_T_FLOAT;
    if (is_timestamp(s, n))
        return CG_T_OTHER;
    return CG_T_STR;
}

/* Bytes that a plain scalar cannot carry and a double-quoted one must escape:
 * C0 controls, DEL, C1 controls (NEL, U+0085, among them), U+2028, U+2029,
 * the BOM and the non-characters U+FFFE and U+FFFF. */
static size_t special_char(const unsigned char *s, size_t n)
{
    if (s[0] < 0x20 || s[0] == 0x7F)
        return 1;
    if (n >= 2 && s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
        return 2;
    if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9))
        return 3;
    if (n >= 3 && s[0] == 0xEF && ((s[1] == 0xBB && s[2] == 0xBF) || (s[1] == 0xBF && s[2] >= 0xBE)))
        return 3;
    return 0;
}

bool cg_yaml_plain_safe(const char *s, size_t n)
{
    if (n == 0 || s[0] == ' ' || s[n - 1] == ' ' || s[n - 1] == ':')
        return false;
    static const char indicators[] = ",[]{}#&*!|>'\"%@`?:";
    if (memchr(indicators, s[0], sizeof indicators - 1))
        return false;
    if (s[0] == '-' && (n == 1 || s[1] == ' '))
        return false;
    if (n >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F) { /* printable ASCII: only ": " and " #" matter */
            if ((c == ':' && i + 1 < n && s[i + 1] == ' ') || (c == '#' && i > 0 && s[i - 1] == ' '))
                return false;
            continue;
        }
        if (c == '\t' || special_char((const unsigned char *)s + i, n - i))
            return false;
    }
    return cg_yaml_resolve(s, n) == CG_T_STR;
}

void cg_yaml_quote(cg_strbuf *out, const char *s, size_t n)
{
    cg_strbuf_addc(out, '"');
    for (size_t i = 0; i < n; i++) {
        const unsigned char *u = (const unsigned char *)s + i;
        size_t sp = special_char(u, n - i);
        if (s[i] == '"' || s[i] == '\\') {
            cg_strbuf_addc(out, '\\');
            cg_strbuf_addc(out, s[i]);
        } else if (sp == 0) {
            cg_strbuf_addc(out, s[i]);
        } else if (sp == 1) {
            switch (s[i]) {
            case '\n': cg_strbuf_adds(out, "\\n"); break;
            case '\t': cg_strbuf_adds(out, "\\t"); break;
            case '\r': cg_strbuf_adds(out, "\\r"); break;
            default: cg_strbuf_addf(out, "\\x%02X", *u); break;
            }
        } else {
            if (sp == 2 && u[1] == 0x85)
                cg_strbuf_adds(out, "\\N");
            else if (sp == 2)
                cg_strbuf_addf(out, "\\x%02X", u[1]);
            else if (u[0] == 0xEF)
                cg_strbuf_addf(out, "\\u%s", u[1] == 0xBB ? "FEFF" : u[2] == 0xBE ? "FFFE" : "FFFF");
            else
                cg_strbuf_adds(out, u[2] == 0xA8 ? "\\L" : "\\P");
            i += sp - 1;
        }
    }
    cg_strbuf_addc(out, '"');
}

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
        if (s[i] != '\t' && special_char((const unsigned char *)s + i, n - i))
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

void cg_yw_key_text(cg_yw *w, const char *text, size_t n)
{
    cg_yw_frame *f = top(w);
    if (f) {
        first_child(w, f);
        pad_to(w, f->indent);
    }
    if (n > CG_YAML_MAX_IMPLICIT_KEY) {
        /* YAML limits implicit keys to 1024 characters: use "? key" */
        put(w, "? ", 2);
        put(w, text, n);
        put(w, "\n", 1);
        if (f)
            pad_to(w, f->indent);
        put(w, ":", 1);
    } else {
        put(w, text, n);
        put(w, ":", 1);
    }
    w->key_pending = true;
}

void cg_yw_key(cg_yw *w, const char *k, size_t n)
{
    cg_strbuf tmp = CG_STRBUF_INIT;
    scalar_text(&tmp, k, n);
    cg_yw_key_text(w, tmp.buf ? tmp.buf : "", tmp.len);
    cg_strbuf_release(&tmp);
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
        cg_strbuf tmp = CG_STRBUF_INIT;
        if (raw)
            cg_strbuf_add(&tmp, s, n);
        else
            scalar_text(&tmp, s, n);
        cg_strbuf_addc(&tmp, '\n');
        put(w, tmp.buf, tmp.len);
        cg_strbuf_release(&tmp);
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
