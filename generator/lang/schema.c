#include "lang/schema.h"

#include <string.h>

#include "base/util.h"

const char *cg_kind_name(const cg_doc *doc, const char *path, const json_t *v)
{
    if (json_is_string(v) && json_string_length(v) == 0 && cg_doc_is_plain(doc, path))
        return "an empty value";
    if (json_is_object(v))
        return "a mapping";
    if (json_is_array(v))
        return "a list";
    return "a string";
}

int cg_expect_object(const cg_doc *doc, const char *path, const json_t *v,
                     const char *what, cg_error *err)
{
    if (json_is_object(v))
        return 0;
    cg_pos p = cg_doc_where(doc, path);
    return cg_error_at(err, &p, "%s must be a mapping, not %s", what, cg_kind_name(doc, path, v));
}

int cg_expect_array(const cg_doc *doc, const char *path, const json_t *v,
                    const char *what, cg_error *err)
{
    if (json_is_array(v))
        return 0;
    cg_pos p = cg_doc_where(doc, path);
    return cg_error_at(err, &p, "%s must be a list, not %s", what, cg_kind_name(doc, path, v));
}

int cg_expect_string(const cg_doc *doc, const char *path, const json_t *v,
                     const char *what, cg_error *err)
{
    if (json_is_string(v))
        return 0;
    cg_pos p = cg_doc_where(doc, path);
    return cg_error_at(err, &p, "%s must be a string, not %s", what, cg_kind_name(doc, path, v));
}

int cg_expect_nonempty(const cg_doc *doc, const char *path, const json_t *v,
                       const char *what, cg_error *err)
{
    if (cg_expect_string(doc, path, v, what, err) != 0)
        return -1;
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0 || (cg_isspace((unsigned char)s[0]) || cg_isspace((unsigned char)s[n - 1]))) {
        cg_pos p = cg_doc_where(doc, path);
        return cg_error_at(err, &p, n ? "%s must not start or end with blanks"
                                      : "%s must not be empty", what);
    }
    return 0;
}

int cg_expect_name(const cg_doc *doc, const char *path, const json_t *v,
                   const char *what, cg_error *err)
{
    if (cg_expect_string(doc, path, v, what, err) != 0)
        return -1;
    const char *s = json_string_value(v);
    if (cg_is_name(s))
        return 0;
    cg_pos p = cg_doc_where(doc, path);
    return cg_error_at(err, &p,
                       "%s '%s' is not a valid name (letters, digits, '_' and '-', "
                       "starting with a letter or '_')", what, s);
}

void cg_did_you_mean(cg_strbuf *sb, const char *word, const char *const *candidates, size_t n)
{
    const char *s = cg_suggest(word, candidates, n);
    if (s)
        cg_strbuf_addf(sb, " (did you mean '%s'?)", s);
}

int cg_check_keys(const cg_doc *doc, const char *path, const json_t *obj,
                  const char *const *allowed, size_t nallowed, const char *where,
                  cg_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (size_t i = 0; i < nallowed && !ok; i++)
            ok = cg_streq(key, allowed[i]);
        if (ok)
            continue;
        cg_strbuf hint = CG_STRBUF_INIT;
        cg_did_you_mean(&hint, key, allowed, nallowed);
        cg_pos p = cg_key_pos(doc, path, key);
        cg_error_at(err, &p, "unknown key '%s' %s%s", key, where, cg_strbuf_str(&hint));
        cg_strbuf_release(&hint);
        return -1;
    }
    return 0;
}

cg_pos cg_key_pos(const cg_doc *doc, const char *path, const char *key)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, path, key);
    cg_pos r = cg_doc_key_where(doc, cg_strbuf_str(&p));
    cg_strbuf_release(&p);
    return r;
}

cg_pos cg_val_pos(const cg_doc *doc, const char *path, const char *key)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, path, key);
    cg_pos r = cg_doc_where(doc, cg_strbuf_str(&p));
    cg_strbuf_release(&p);
    return r;
}

cg_pos cg_item_pos(const cg_doc *doc, const char *path, size_t index)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_index(&p, path, index);
    cg_pos r = cg_doc_where(doc, cg_strbuf_str(&p));
    cg_strbuf_release(&p);
    return r;
}
