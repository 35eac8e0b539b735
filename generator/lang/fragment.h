/* fragment — a verbatim YAML file split into its top-level sections.
 *
 * A fragment is a valid YAML document on its own: a mapping of top-level
 * sections (`version`, `executors`, `commands`, `jobs`, `workflows`, anchor
 * holders ...).  cigen copies each section into config.yml byte for byte,
 * comments included.  A section owns its key line, the lines of its value,
 * and the blank and column-1 comment lines just above its key (so a comment
 * travels with the section it describes).
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
