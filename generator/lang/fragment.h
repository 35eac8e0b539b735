/* fragment — a verbatim YAML file split into its top-level sections.
 *
 * A fragment is a valid YAML document on its own: a mapping of top-level
 * sections (`version`, `executors`, `commands`, `jobs`, `workflows`, anchor
 * holders ...).  cigen copies each section into config.yml byte for byte,
 * comments included.  A section owns its key line, the lines of its value,
 * and the blank and column-1 comment lines just above its key (so a comment
 * travels with the section it describes).  Where a value ends is the
 * parser's word, not a guess from the look of a line (a line of a quoted
 * string may start with '#' or '%'), so a section always holds whole
 * tokens: any order of sections is the same data.
 *
 * Refused, because the copy would not mean what the fragment does: a %TAG
 * directive (directives are not copied), and a clip or keep block scalar
 * that ends a file without a final line break (the copy gains one).
 *
 * When several fragments have the same section (say `jobs:`), the first
 * copy keeps its key line and the others contribute only their entries; that
 * needs a block mapping indented by 2.
 */
#ifndef CIGEN_FRAGMENT_H
#define CIGEN_FRAGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "lang/yamlload.h"

typedef struct cg_section {
    const char *key;
    cg_pos key_pos;
    uint32_t key_line;       /* 1-based */
    size_t start;            /* first byte (leading comments included) */
    size_t key_start;        /* first byte of the key line */
    size_t body;             /* first byte after the key line */
    size_t end;              /* one past the last byte */
    size_t content_end;      /* past the line of its value's last token */
    bool keep_end;           /* it ends with a keep ('|+', '>+') block scalar: a
                              * blank line written after it would join the value */
    bool mergeable;          /* a block mapping whose entries can be combined */
    unsigned indent;         /* indentation of its entries (mergeable only) */
    const char *key_comment; /* a comment on the key line ("# ..."), or NULL */
    cg_pos merge_pos;        /* a merge key ('<<') among its entries, or line 0 */
} cg_section;

typedef struct cg_fragment {
    const char *file;
    cg_doc *doc;             /* owned */
    const char *text;        /* the doc's bytes */
    size_t len;
    cg_section *sections;
    size_t nsections;
    bool missing_newline;    /* the file does not end with '\n' */
} cg_fragment;

/* Splits a loaded fragment (takes ownership of doc, even on failure). */
int cg_fragment_init(cg_fragment *f, cg_doc *doc, cg_error *err);
void cg_fragment_release(cg_fragment *f);

#endif
