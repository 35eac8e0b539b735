#include "lang/fragment.h"

#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "base/util.h"

typedef struct lines {
    size_t *start;   /* start[i]: first byte of line i (0-based); start[n] = len */
    size_t n;
} lines;

static void index_lines(const char *text, size_t len, lines *L)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n' && i + 1 < len)
            n++;
    if (len == 0)
        n = 0;
    L->start = cg_xmalloc((n + 1) * sizeof *L->start);
    L->n = 0;
    if (len)
        L->start[L->n++] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n' && i + 1 < len)
            L->start[L->n++] = i + 1;
    L->start[L->n] = len;
}

static bool line_is(const char *text, const lines *L, size_t i, bool (*pred)(const char *, size_t))
{
    return pred(text + L->start[i], L->start[i + 1] - L->start[i]);
}

/* blank, or a comment starting in column 1 */
static bool leading_line(const char *s, size_t n)
{
    if (n && s[0] == '#')
        return true;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\n' && s[i] != '\r')
            return false;
    return true;
}

/* "---", "...", or a "%" directive: document markers that must not be copied */
static bool marker_line(const char *s, size_t n)
{
    if (n && s[0] == '%')
        return true;
    if (n >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))
        return n == 3 || s[3] == ' ' || s[3] == '\n' || s[3] == '\r';
    return false;
}

/* What follows the key on its line: "" , "# comment", or something else. */
static const char *after_key(const char *s, size_t n)
{
    size_t i = 0;
    if (n && (s[0] == '"' || s[0] == '\'')) {
        char q = s[0];
        for (i = 1; i < n; i++) {
            if (q == '"' && s[i] == '\\') {
                i++;
                continue;
            }
            if (s[i] == q)
                break;
        }
    }
    for (; i < n; i++)
        if (s[i] == ':' && (i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\n'))
            break;
    i++;
    while (i < n && s[i] == ' ')
        i++;
    return i < n ? s + i : s + n;
}

/* Records in s->merge_pos where a merge key ('<<') stands among the entries
 * of the block mapping `v` at `path`: such a section cannot be combined
 * line by line with the same section of another fragment. */
static void find_merge_key(const cg_fragment *f, const cg_doc *doc, const lines *L, const char *path, json_t *v,
                           cg_section *s)
{
    bool merged = false;
    cg_strbuf cp = CG_STRBUF_INIT;
    const char *k;
    json_t *x;
    json_object_foreach(v, k, x) {
        cg_node_pos np;
        cg_path_join_key(&cp, path, k);
        if (cg_doc_lookup(doc, cp.buf, &np) && (np.flags & CG_NODE_MERGED))
            merged = true;
    }
    cg_strbuf_release(&cp);
    if (!merged)
        return;
    /* the entries' indentation is that of the first content line */
    size_t indent = 0;
    for (size_t i = s->key_line; i < L->n; i++) {
        const char *t = f->text + L->start[i], *e = f->text + L->start[i + 1];
        size_t sp = 0;
        while (t + sp < e && t[sp] == ' ')
            sp++;
        if (t + sp == e || t[sp] == '\n' || t[sp] == '\r' || t[sp] == '#')
            continue;
        if (sp == 0)
            break; /* the next top-level key */
        if (!indent)
            indent = sp;
        if (sp == indent && e - (t + sp) >= 2 && t[sp] == '<' && t[sp + 1] == '<') {
            s->merge_pos = (cg_pos){f->file, (uint32_t)i + 1, (uint32_t)sp + 1};
            return;
        }
    }
    s->merge_pos = s->key_pos; /* not found in the text: point at the section */
}

int cg_fragment_init(cg_fragment *f, cg_doc *doc, cg_error *err)
{
    memset(f, 0, sizeof *f);
    f->doc = doc;
    f->file = cg_doc_file(doc);
    f->text = cg_doc_text(doc, &f->len);
    json_t *root = cg_doc_root(doc);
    cg_pos top = {f->file, 0, 0};
    if (!root)
        return cg_error_at(err, &top, "the fragment is empty; it must be a mapping of top-level sections "
                           "(version, commands, jobs, ...)");
    if (!json_is_object(root) || cg_doc_style(doc, "") != CG_STYLE_BLOCK) {
        top = cg_doc_where(doc, "");
        return cg_error_at(err, &top, "a fragment must be a block mapping of top-level sections "
                           "(version, commands, jobs, ...), not %s",
                           json_is_object(root) ? "a flow mapping" : cg_kind_name(doc, "", root));
    }
    f->missing_newline = f->len && f->text[f->len - 1] != '\n';
    lines L;
    index_lines(f->text, f->len, &L);
    size_t n = json_object_size(root);
    f->sections = cg_xcalloc(n + 1, sizeof *f->sections);
    cg_strbuf p = CG_STRBUF_INIT;
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach(root, k, v) {
        cg_path_join_key(&p, "", k);
        cg_node_pos np;
        cg_doc_lookup(doc, p.buf, &np);
        cg_pos kp = {f->file, np.key_line, np.key_col};
        if (np.flags & CG_NODE_MERGED) {
            rc = cg_error_at(err, &kp, "a merge key ('<<') at the top level of a fragment is not supported; "
                             "write the sections out");
            break;
        }
        if (np.key_col != 1) {
            rc = cg_error_at(err, &kp, "top-level keys of a fragment must start in column 1");
            break;
        }
        cg_section *s = &f->sections[f->nsections++];
        s->key = k;
        s->key_pos = kp;
        s->key_line = np.key_line;
        size_t key_idx = np.key_line - 1;
        s->key_start = L.start[key_idx];
        s->body = L.start[key_idx + 1 <= L.n ? key_idx + 1 : L.n];
        /* the value is a block mapping (its first key on a later line) */
        const char *rest = after_key(f->text + s->key_start, s->body - s->key_start);
        size_t rest_len = (size_t)(f->text + s->body - rest);
        while (rest_len && (rest[rest_len - 1] == '\n' || rest[rest_len - 1] == '\r' || rest[rest_len - 1] == ' '))
            rest_len--;
        bool block = json_is_object(v) && json_object_size(v) > 0 &&
                     cg_doc_style(doc, p.buf) == CG_STYLE_BLOCK;
        if (rest_len && rest[0] == '#')
            s->key_comment = cg_xstrndup(rest, rest_len);
        s->mergeable = block && (rest_len == 0 || rest[0] == '#');
        if (block)
            find_merge_key(f, doc, &L, p.buf, v, s);
        if (s->mergeable) {
            const char *first = NULL;
            json_t *x;
            json_object_foreach(v, first, x) break;
            cg_strbuf cp = CG_STRBUF_INIT;
            cg_path_join_key(&cp, p.buf, first);
            cg_pos fp = cg_doc_key_where(doc, cp.buf);
            cg_strbuf_release(&cp);
            s->indent = fp.col ? fp.col - 1 : 0;
        }
    }
    cg_strbuf_release(&p);
    if (rc != 0) {
        free(L.start);
        return rc;
    }
    /* section extents: leading blank and column-1 comment lines go with the next key */
    for (size_t i = 0; i < f->nsections; i++) {
        cg_section *s = &f->sections[i];
        size_t key_idx = s->key_line - 1;
        size_t floor = i == 0 ? 0 : f->sections[i - 1].key_line; /* first line after the previous key line */
        size_t k2 = key_idx;
        while (k2 > floor && line_is(f->text, &L, k2 - 1, leading_line))
            k2--;
        if (i == 0) {
            /* never copy "---" or directives from above the first key */
            for (size_t j = 0; j < key_idx; j++)
                if (line_is(f->text, &L, j, marker_line))
                    k2 = j + 1;
        }
        s->start = i == 0 && k2 == 0 ? 0 : L.start[k2];
        if (i > 0)
            f->sections[i - 1].end = s->start;
    }
    if (f->nsections) {
        size_t end = f->len;
        /* drop a trailing "..." document end (and what follows it) */
        for (size_t j = f->sections[f->nsections - 1].key_line; j < L.n; j++)
            if (line_is(f->text, &L, j, marker_line)) {
                end = L.start[j];
                break;
            }
        f->sections[f->nsections - 1].end = end;
    }
    free(L.start);
    return 0;
}

void cg_fragment_release(cg_fragment *f)
{
    for (size_t i = 0; i < f->nsections; i++)
        free((char *)f->sections[i].key_comment);
    free(f->sections);
    cg_doc_free(f->doc);
    memset(f, 0, sizeof *f);
}
