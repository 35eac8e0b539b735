#include "lang/fragment.h"

#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "lang/yaml_path.h"
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
 * of the block mapping at `path` (the loader knows where it is): such a
 * section cannot be combined line by line with the same section of another
 * fragment. */
static void find_merge_key(const cg_doc *doc, const char *path, cg_section *s)
{
    cg_pos mp;
    if (cg_doc_merge_key(doc, path, &mp))
        s->merge_pos = mp;
}

/* The first byte of the line after the one holding offset `at` (`at`
 * itself when it starts a line). */
static size_t next_line(const char *text, size_t len, size_t at)
{
    if (at == 0 || at >= len || text[at - 1] == '\n')
        return at;
    const char *nl = memchr(text + at, '\n', len - at);
    return nl ? (size_t)(nl - text) + 1 : len;
}

/* A name of the fragment (a key at `path`) that a control reordering
 * displayed text would make look like another. */
static int bidi_free(const cg_doc *doc, const char *path, const char *name, const char *what, cg_error *err)
{
    if (!cg_bidi_control(name, NULL))
        return 0;
    cg_pos p = cg_doc_key_where(doc, path);
    return cg_error_at(err, &p, "%s '%s' holds a Unicode control that reorders displayed text (U+061C, U+200E/F, "
                       "U+202A..U+202E, U+2066..U+2069): it would show as another name", what, name);
}

/* The names the fragment declares: its pipeline parameters' (`parameters:`
 * at the top), which CircleCI names in `<< pipeline.parameters.NAME >>`,
 * are names as cigen's are (letters, digits, '_' and '-'); those and the
 * names of its jobs, commands, executors and workflows and of their
 * parameters hold no control that reorders displayed text. */
static int check_names(const cg_doc *doc, json_t *root, cg_error *err)
{
    static const struct {
        const char *section, *what;
    } named[] = {{"parameters", "pipeline parameter"}, {"jobs", "job"}, {"commands", "command"},
                 {"executors", "executor"}, {"workflows", "workflow"}};
    cg_strbuf path = CG_STRBUF_INIT, sub = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < CG_ARRAY_LEN(named) && rc == 0; i++) {
        json_t *sec = json_object_get(root, named[i].section);
        const char *name;
        json_t *v;
        json_object_foreach(sec, name, v) {
            cg_strbuf_reset(&path);
            cg_path_push_key(&path, named[i].section);
            cg_path_push_key(&path, name);
            if (i == 0 && !cg_is_name(name)) {
                cg_pos p = cg_doc_key_where(doc, path.buf);
                cg_strbuf shown = CG_STRBUF_INIT;
                cg_add_tabs_shown(&shown, name);
                rc = cg_error_at(err, &p, "pipeline parameter name '%s' is not a valid name (letters, digits, '_' "
                                 "and '-', starting with a letter or '_'): CircleCI reads it in "
                                 "'<< pipeline.parameters.NAME >>'", shown.buf);
                cg_strbuf_release(&shown);
            }
            if (rc == 0)
                rc = bidi_free(doc, path.buf, name, named[i].what, err);
            json_t *params = i > 0 && i < 4 ? json_object_get(v, "parameters") : NULL;
            const char *pname;
            json_t *pv;
            json_object_foreach(params, pname, pv) {
                if (rc != 0)
                    break;
                cg_path_join_key(&sub, path.buf, "parameters");
                cg_path_push_key(&sub, pname);
                rc = bidi_free(doc, sub.buf, pname, "parameter", err);
            }
            if (rc != 0)
                break;
        }
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&sub);
    return rc;
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
    const cg_doc_layout *lay = cg_doc_get_layout(doc);
    if (lay->tag_directive.line)
        return cg_error_at(err, &lay->tag_directive, "a %%TAG directive cannot be kept in config.yml (cigen copies "
                           "the fragment's sections, not its directives, so its tags would lose their meaning); "
                           "remove it and write the tags out (!!str)");
    if (check_names(doc, root, err) != 0)
        return -1;
    f->missing_newline = f->len && f->text[f->len - 1] != '\n';
    lines L;
    index_lines(f->text, f->len, &L);
    size_t n = json_object_size(root);
    f->sections = cg_xcalloc(n + 1, sizeof *f->sections);
    cg_strbuf p = CG_STRBUF_INIT;
    const char *k;
    json_t *v;
    int rc = 0;
    if (lay->nentries != n) {
        /* a merge key at the top level adds no entry of its own */
        for (size_t i = 0; i < lay->nentries; i++)
            if (lay->entries[i].merge) {
                cg_pos mp = {f->file, lay->entries[i].key_line, lay->entries[i].key_col};
                free(L.start);
                return cg_error_at(err, &mp, "a merge key ('<<') at the top level of a fragment is not supported; "
                                   "write the sections out");
            }
        free(L.start);
        cg_pos where = cg_doc_where(doc, "");
        return cg_error_at(err, &where, "cannot tell where the fragment's sections start and end");
    }
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
            find_merge_key(doc, p.buf, s);
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
    /* Section extents, from the parser's events: a section is its key's line
     * through its value's last token (and the rest of that line); between
     * two sections there are only blank lines and comments, of which the
     * blank and column-1 comment lines just above a key go with it. */
    for (size_t i = 0; i < f->nsections; i++) {
        cg_section *s = &f->sections[i];
        const cg_doc_entry_text *e = &lay->entries[i];
        size_t key_idx = s->key_line - 1;
        size_t floor_off = i == 0 ? next_line(f->text, f->len, lay->body_start)
                                  : next_line(f->text, f->len, lay->entries[i - 1].end);
        size_t k2 = key_idx;
        while (i > 0 && k2 > 0 && L.start[k2 - 1] >= floor_off && line_is(f->text, &L, k2 - 1, leading_line))
            k2--;
        /* above the first key: what follows an explicit "---" (never the
         * marker, nor the directives before it) */
        s->start = i == 0 ? floor_off : L.start[k2];
        if (i > 0)
            f->sections[i - 1].end = s->start;
        s->content_end = next_line(f->text, f->len, e->end);
        s->keep_end = e->chomp == '+';
    }
    if (f->nsections) {
        cg_section *last = &f->sections[f->nsections - 1];
        /* what an explicit "..." ends is dropped, with what follows it */
        last->end = lay->body_end > last->content_end ? lay->body_end : last->content_end;
        const cg_doc_entry_text *e = &lay->entries[f->nsections - 1];
        if (f->missing_newline && e->chomp && e->chomp != '-' && e->end == f->len) {
            free(L.start);
            return cg_error_at(err, &e->chomp_pos, "this block scalar ends the file without a line break: cigen "
                               "adds one when it copies the fragment, which would change the value; end the file "
                               "with a line break");
        }
    }
    /* a section that ends exactly where a keep ('|+', '>+') block scalar
     * does: a blank line written after it would join the value */
    for (size_t i = 0; i < f->nsections; i++)
        f->sections[i].keep_end = f->sections[i].keep_end && f->sections[i].end == f->sections[i].content_end;
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
