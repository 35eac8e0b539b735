#include "lang/placeholder.h"

#include <string.h>

static void add_seg(cg_pool *pool, cg_seg **segs, size_t *n, size_t *cap, cg_seg seg)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        cg_seg *fresh = cg_pool_alloc(pool, ncap * sizeof *fresh);
        if (*n)
            memcpy(fresh, *segs, *n * sizeof *fresh);
        *segs = fresh;
        *cap = ncap;
    }
    (*segs)[(*n)++] = seg;
}

int cg_pstr_parse(const char *s, size_t n, cg_pool *pool, cg_pstr *out,
                  size_t *bad_offset, const char **message)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0, i = 0, text_start = 0;
    int names = 0;
    while (i < n) {
        if (!(s[i] == '{' && i + 1 < n && s[i + 1] == '{')) {
            i++;
            continue;
        }
        if (i > text_start)
            add_seg(pool, &out->segs, &out->nsegs, &cap,
                    (cg_seg){CG_SEG_TEXT, false, cg_pool_strndup(pool, s + text_start, i - text_start),
                             i - text_start, (uint32_t)text_start, -1});
        size_t open = i;
        i += 2;
        while (i < n && s[i] == ' ')
            i++;
        cg_seg seg = {CG_SEG_NAME, false, NULL, 0, (uint32_t)open, -1};
        if (i < n && (s[i] == '"' || s[i] == '\'')) {
            char q = s[i++];
            size_t start = i;
            while (i < n && s[i] != q)
                i++;
            if (i >= n) {
                *bad_offset = open;
                *message = "unterminated quoted text in placeholder";
                return -1;
            }
            seg.kind = CG_SEG_TEXT;
            seg.text = cg_pool_strndup(pool, s + start, i - start);
            seg.len = i - start;
            i++;
        } else {
            size_t start = i;
            while (i < n && cg_isnamechar((unsigned char)s[i]))
                i++;
            if (i == start) {
                *bad_offset = open;
                *message = i >= n ? "unterminated placeholder: '{{' without '}}'"
                           : (i + 1 < n && s[i] == '}' && s[i + 1] == '}')
                               ? "empty placeholder '{{ }}'"
                               : "a placeholder holds a name, e.g. '{{ python }}'";
                return -1;
            }
            if (!(cg_isalpha((unsigned char)s[start]) || s[start] == '_')) {
                *bad_offset = start;
                *message = "a placeholder name starts with a letter or '_'";
                return -1;
            }
            seg.text = cg_pool_strndup(pool, s + start, i - start);
            seg.len = i - start;
            if (i < n && s[i] == '?') {
                seg.optional = true;
                i++;
            }
            names++;
        }
        while (i < n && s[i] == ' ')
            i++;
        if (!(i + 1 < n && s[i] == '}' && s[i + 1] == '}')) {
            *bad_offset = i < n ? i : open;
            *message = i < n ? "expected '}}' to close the placeholder"
                             : "unterminated placeholder: '{{' without '}}'";
            return -1;
        }
        i += 2;
        add_seg(pool, &out->segs, &out->nsegs, &cap, seg);
        text_start = i;
    }
    if (i > text_start)
        add_seg(pool, &out->segs, &out->nsegs, &cap,
                (cg_seg){CG_SEG_TEXT, false, cg_pool_strndup(pool, s + text_start, i - text_start),
                         i - text_start, (uint32_t)text_start, -1});
    out->has_names = names > 0;
    out->whole = out->nsegs == 1 && out->segs[0].kind == CG_SEG_NAME;
    return 0;
}

/* Byte offset of a 1-based line and column (in characters). */
static size_t byte_at(const char *text, size_t len, uint32_t line, uint32_t col)
{
    size_t i = 0;
    for (uint32_t l = 1; l < line && i < len; i++)
        if (text[i] == '\n')
            l++;
    for (uint32_t c = 1; c < col && i < len; c++) {
        i++;
        while (i < len && ((unsigned char)text[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

/* The column `offset` bytes after byte i at column col, on one line. */
static uint32_t col_after(const char *text, size_t len, size_t i, uint32_t col, size_t offset)
{
    for (size_t k = 0; k < offset && i < len; k++, i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80)
            col++;
    return col;
}

cg_pos cg_scalar_offset_pos(const cg_doc *doc, const char *path, size_t offset)
{
    cg_node_pos np;
    if (!cg_doc_lookup(doc, path, &np))
        return cg_doc_where(doc, path);
    size_t len;
    const char *text = cg_doc_text(doc, &len);
    size_t i = byte_at(text, len, np.line, np.col);
    uint32_t line = np.line, col = np.col;
    if (np.style == CG_STYLE_LITERAL || np.style == CG_STYLE_FOLDED) {
        /* content starts on the next line, after the indentation */
        while (i < len && text[i] != '\n')
            i++;
        i++;
        line++;
        size_t indent = 0;
        while (i + indent < len && text[i + indent] == ' ')
            indent++;
        i += indent;
        col = 1 + (uint32_t)indent;
        /* the offset counts content bytes: indentation is not content */
        for (size_t k = 0; k < offset && i < len; k++) {
            if (text[i] == '\n') {
                line++;
                i++;
                size_t sp = 0;
                while (sp < indent && i < len && text[i] == ' ')
                    sp++, i++;
                col = 1 + (uint32_t)sp;
                continue;
            }
            if (((unsigned char)text[i] & 0xC0) != 0x80)
                col++;
            i++;
        }
        return (cg_pos){cg_doc_file(doc), line, col};
    }
    if (np.style == CG_STYLE_SINGLE || np.style == CG_STYLE_DOUBLE)
        col++, i++;
    return (cg_pos){cg_doc_file(doc), line, col_after(text, len, i, col, offset)};
}

cg_pos cg_key_offset_pos(const cg_doc *doc, const char *path, size_t offset)
{
    cg_node_pos np;
    if (!cg_doc_lookup(doc, path, &np) || np.key_line == 0)
        return cg_doc_key_where(doc, path);
    size_t len;
    const char *text = cg_doc_text(doc, &len);
    size_t i = byte_at(text, len, np.key_line, np.key_col);
    uint32_t col = np.key_col;
    if (i < len && (text[i] == '"' || text[i] == '\''))
        col++, i++;
    return (cg_pos){cg_doc_file(doc), np.key_line, col_after(text, len, i, col, offset)};
}

int cg_pstr_parse_at(const cg_doc *doc, const char *path, const char *s, size_t n,
                     cg_pool *pool, cg_pstr *out, cg_error *err)
{
    size_t off = 0;
    const char *msg = NULL;
    if (cg_pstr_parse(s, n, pool, out, &off, &msg) == 0)
        return 0;
    cg_pos p = cg_scalar_offset_pos(doc, path, off);
    return cg_error_at(err, &p, "%s", msg);
}

cg_pos cg_src_pos(const cg_src *src, size_t offset)
{
    if (src->doc && src->path)
        return cg_scalar_offset_pos(src->doc, src->path, offset);
    return src->pos;
}
