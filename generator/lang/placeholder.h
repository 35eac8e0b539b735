/* placeholder — strings with {{ }} placeholders.
 *
 *   {{ name }}      the value of a dimension or variable (an error when unset)
 *   {{ name? }}     the same, or nothing when unset
 *   {{ "text" }}    literal text (how to write "{{" itself: {{ "{{" }})
 *
 * Names are letters, digits, '_' and '-'.  A string is parsed once into
 * segments; expansion is the caller's (it knows what names mean).
 */
#ifndef CIGEN_PLACEHOLDER_H
#define CIGEN_PLACEHOLDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/util.h"
#include "lang/yamlload.h"

enum { CG_SEG_TEXT, CG_SEG_NAME };

typedef struct cg_seg {
    uint8_t kind;       /* CG_SEG_TEXT or CG_SEG_NAME */
    bool optional;      /* {{ name? }} */
    const char *text;   /* the literal text, or the name (pooled) */
    size_t len;
    uint32_t offset;    /* where the segment starts in the source string */
    int id;             /* the caller's resolution of a name (-1: none yet) */
} cg_seg;

typedef struct cg_pstr {
    cg_seg *segs;       /* pooled */
    size_t nsegs;
    bool has_names;
    bool whole;         /* exactly one {{ name }} and nothing else */
} cg_pstr;

/* Where a parsed string came from: a scalar of a loaded doc (exact positions
 * of placeholders), or just a position. */
typedef struct cg_src {
    const cg_doc *doc;    /* NULL: use pos */
    const char *path;
    cg_pos pos;
    bool arg_value;       /* a template argument's value (an unset one may be left out by `key?:`) */
} cg_src;

/* The position of byte `offset` of the string. */
cg_pos cg_src_pos(const cg_src *src, size_t offset);

/* Parses s[0..n).  On a syntax error returns -1 and sets *bad_offset and
 * *message (a static string). */
int cg_pstr_parse(const char *s, size_t n, cg_pool *pool, cg_pstr *out,
                  size_t *bad_offset, const char **message);

/* Parses the scalar at `path` of `doc`, reporting syntax errors at the exact
 * position inside the scalar. */
int cg_pstr_parse_at(const cg_doc *doc, const char *path, const char *s, size_t n,
                     cg_pool *pool, cg_pstr *out, cg_error *err);

/* The source position of byte `offset` of the scalar at `path` (exact for
 * single-line scalars, close for block scalars). */
cg_pos cg_scalar_offset_pos(const cg_doc *doc, const char *path, size_t offset);
/* The same for the key of the mapping value at `path`. */
cg_pos cg_key_offset_pos(const cg_doc *doc, const char *path, size_t offset);

#endif
