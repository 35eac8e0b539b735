/* yamlwrite — the YAML writer for the parts of config.yml that cigen generates.
 *
 * Style, matching hand-written fragments: block mappings and sequences,
 * 2-space indentation, sequences indented under their key, keys in the order
 * the caller writes them, no line folding.  Strings are written plain when
 * that reads back as the same string in YAML 1.1 and 1.2 (CircleCI reads with
 * SnakeYAML, a YAML 1.1 parser); otherwise double-quoted ("3.10", "on",
 * "null", "0x1F", "1e3", "", " padded ", "a: b", "a #b"), and multi-line
 * strings as literal blocks (`|`, `|-`, `|+`).  Typed scalars (booleans,
 * numbers, null) are written as given with cg_yw_raw().
 *
 * The writer is a pure function of the calls made: bytes go to a cg_strbuf.
 */
#ifndef CIGEN_YAMLWRITE_H
#define CIGEN_YAMLWRITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlload.h"

typedef struct cg_yw_frame {
    char kind;      /* 'm' mapping, 's' sequence */
    char opened;    /* 'r' root, 'k' after a key, 's' as a sequence item */
    unsigned indent;
    unsigned count;
} cg_yw_frame;

typedef struct cg_yw {
    cg_strbuf *out;
    cg_yw_frame *frames;
    size_t depth, cap;
    unsigned col;      /* 0 at the start of a line, else not 0 */
    bool key_pending;  /* a key was written, its value not yet */
} cg_yw;

void cg_yw_init(cg_yw *w, cg_strbuf *out);
/* A writer that continues a block mapping whose entries are indented by
 * `indent` (its key line already written): for appending entries in place. */
void cg_yw_init_in_map(cg_yw *w, cg_strbuf *out, unsigned indent);
void cg_yw_release(cg_yw *w);
void cg_yw_map_begin(cg_yw *w);
void cg_yw_seq_begin(cg_yw *w);
void cg_yw_end(cg_yw *w);
void cg_yw_key(cg_yw *w, const char *k, size_t n);
void cg_yw_keys(cg_yw *w, const char *k);
/* A string: plain, double-quoted or a literal block, whichever keeps it. */
void cg_yw_str(cg_yw *w, const char *s, size_t n);
void cg_yw_strs(cg_yw *w, const char *s);
/* A typed scalar written verbatim (`true`, `2`, `2.1`, `null`). */
void cg_yw_raw(cg_yw *w, const char *s, size_t n);
/* A scalar from a loaded file: typed when it was plain and resolves to a
 * non-string, a string otherwise. */
void cg_yw_scalar(cg_yw *w, const char *s, size_t n, bool was_plain);
/* A loaded value (doc/path give each scalar's style). */
void cg_yw_value(cg_yw *w, const cg_doc *doc, const char *path, json_t *v);

/* Preformatting, for text written many times (a template's constants):
 * the one-line form of a string (plain or double-quoted), which cg_yw_str
 * would write unless cg_yaml_wants_literal() says it takes a literal block. */
void cg_yaml_scalar_text(cg_strbuf *out, const char *s, size_t n);
bool cg_yaml_wants_literal(const char *s, size_t n);
/* A key already formatted by cg_yaml_scalar_text(). */
void cg_yw_key_text(cg_yw *w, const char *text, size_t n);

#endif
