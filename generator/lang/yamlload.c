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
#include "lang/yamlload_impl.h"

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
    int rc = cg_doc_load_events(doc, opts, err);
    if (rc == 0 && opts->copied)
        rc = cg_yaml_check_snake(doc->file, doc->text, len, err);
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
