/* yamlload — YAML text to an in-memory tree with source positions.
 *
 * The tree is made of jansson values: mappings are json objects (insertion
 * order kept), sequences json arrays, and EVERY scalar a json string holding
 * the text exactly as written (`3.10` stays "3.10"; whether a plain `true` is a
 * boolean is decided by the consumer with cg_yaml_resolve(), lang/yaml_scalar.h).
 * jansson shares some values, so positions are not attached to values: they
 * live beside the tree in a table keyed by path, a JSON pointer such as
 * "/jobs/build/steps/0" ("~" and "/" in keys written "~0" and "~1").
 *
 * Rejected, each with `file:line:col: error: ...`: YAML syntax errors, tabs
 * used for indentation, duplicate keys (both positions named), a second
 * document, bytes that are not UTF-8 or are control characters, a byte-order
 * mark, nesting deeper than `max_depth`, undefined or recursive aliases, two
 * merge keys in one mapping, and
 * aliases or merge keys (`<<`) that would expand beyond `alias_budget` nodes
 * (an "alias bomb").  Aliases share the anchored value (json_incref); paths
 * below an alias resolve to positions below its anchor.
 *
 * An alias the file does not define may name an anchor of a document in
 * `cg_load_opts.scope` (the fragments before it in the manifest): the value
 * is shared with that document, which must outlive the use of this one's
 * positions only (values are reference-counted); positions below such an
 * alias, and keys merged from it, are the alias's own, so that errors stay
 * in the file that uses the anchor.
 */
#ifndef CIGEN_YAMLLOAD_H
#define CIGEN_YAMLLOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/map.h"
#include "base/strbuf.h"
#include "lang/yaml_path.h"

typedef enum cg_style {
    CG_STYLE_NONE = 0,
    CG_STYLE_PLAIN,
    CG_STYLE_SINGLE,
    CG_STYLE_DOUBLE,
    CG_STYLE_LITERAL,
    CG_STYLE_FOLDED,
    CG_STYLE_BLOCK, /* block mapping or sequence */
    CG_STYLE_FLOW   /* flow mapping or sequence */
} cg_style;

enum {
    CG_NODE_ALIAS = 1,   /* the value is an alias (*name) */
    CG_NODE_MERGED = 2,  /* the key came in through a merge key (<<) */
    CG_NODE_TAGGED_STR = 4 /* explicitly tagged !!str */
};

typedef struct cg_node_pos {
    uint32_t line, col;         /* where the value starts */
    uint32_t key_line, key_col; /* where its key starts (0 when not a mapping value) */
    uint32_t end_line;          /* where the value ends */
    uint8_t style;              /* cg_style */
    uint8_t flags;              /* CG_NODE_* */
    const char *redirect;       /* for aliases/merged keys: the source path */
} cg_node_pos;

typedef struct cg_doc cg_doc;

typedef struct cg_load_opts {
    size_t max_bytes;    /* 0: CG_DEFAULT_MAX_BYTES */
    unsigned max_depth;  /* 0: CG_DEFAULT_MAX_DEPTH */
    size_t alias_budget; /* 0: CG_DEFAULT_ALIAS_BUDGET (nodes added by aliases and merges) */
    bool no_positions;   /* skip the position table (large files read only for data) */
    /* bytes cigen copies into config.yml (a fragment): also refused what
     * CircleCI's parser refuses though libyaml reads it (lang/yaml_snake.h) */
    bool copied;
    /* documents whose anchors an alias may name when this file does not
     * define it; the last one holding the name wins (borrowed; non-NULL,
     * even with nscope 0, for a fragment: an undefined alias says so) */
    const cg_doc *const *scope;
    size_t nscope;
    /* optional: anchor name -> the last document of scope defining it (the
     * caller keeps it up to date), so an alias costs one lookup however
     * many documents are in scope; NULL: the scope is searched */
    const cg_map *scope_index;
} cg_load_opts;

#define CG_DEFAULT_MAX_BYTES ((size_t)32 << 20)
#define CG_DEFAULT_MAX_DEPTH 100u
#define CG_DEFAULT_ALIAS_BUDGET ((size_t)1000000)

/* Parses `len` bytes of `text` (copied).  `file` is the display name used in
 * messages (copied).  Returns NULL and fills err on failure.  An empty stream
 * (nothing but comments or blanks) loads with a NULL root. */
cg_doc *cg_doc_parse(const char *file, const char *text, size_t len,
                     const cg_load_opts *opts, cg_error *err);
void cg_doc_free(cg_doc *doc);

json_t *cg_doc_root(const cg_doc *doc);          /* borrowed; NULL when empty */
const char *cg_doc_file(const cg_doc *doc);
const char *cg_doc_text(const cg_doc *doc, size_t *len); /* the raw bytes */

/* Position of the value at `path` ("" is the root).  Returns false when the
 * path is unknown (or positions were not recorded). */
bool cg_doc_lookup(const cg_doc *doc, const char *path, cg_node_pos *out);
/* The position of the value (or, for cg_doc_key_where, of its key) as a
 * cg_pos; falls back to the nearest known ancestor, then to the file. */
cg_pos cg_doc_where(const cg_doc *doc, const char *path);
cg_pos cg_doc_key_where(const cg_doc *doc, const char *path);
cg_style cg_doc_style(const cg_doc *doc, const char *path);
/* True when the scalar at path was plain (unquoted, untagged). */
bool cg_doc_is_plain(const cg_doc *doc, const char *path);
/* A copy of the value at `path` (v) with each plain scalar read as a YAML
 * 1.1 parser reads it: `true`/`no` booleans, decimal integers, numbers,
 * null; quoted scalars (and other plain ones) stay strings.  New reference. */
json_t *cg_doc_typed(const cg_doc *doc, const char *path, json_t *v);

/* Where the merge key ('<<') of the mapping at `path` stands; false when
 * that mapping has none (a mapping holds one at most: a second is an error,
 * since YAML readers disagree on which one wins). */
bool cg_doc_merge_key(const cg_doc *doc, const char *path, cg_pos *out);

/* The text of each entry of a root mapping, as libyaml's events delimit it
 * (never guessed from the look of a line): where its key starts and where
 * its value's last token ends.  Between one entry's end and the next key
 * there are only blank lines and comments.  Recorded unless no_positions. */
typedef struct cg_doc_entry_text {
    uint32_t key_line, key_col; /* 1-based */
    bool merge;                 /* the key is a merge key ('<<') */
    size_t end;                 /* byte offset just past the value's last token;
                                 * a block scalar's trailing blank lines included */
    char chomp;                 /* the value ends in a block scalar: its chomping
                                 * ('+' keep, '-' strip, ' ' clip); 0 otherwise */
    cg_pos chomp_pos;           /* that block scalar */
} cg_doc_entry_text;

typedef struct cg_doc_layout {
    const cg_doc_entry_text *entries; /* of the root mapping, in order */
    size_t nentries;
    size_t body_start;  /* just past an explicit "---" (0 without one) */
    size_t body_end;    /* where an explicit "..." starts (the length without one) */
    cg_pos tag_directive; /* the first %TAG directive, or line 0 */
} cg_doc_layout;

/* The layout of the document (borrowed; valid while doc lives). */
const cg_doc_layout *cg_doc_get_layout(const cg_doc *doc);

/* The anchors defined in the file (&name), in order of appearance. */
size_t cg_doc_anchor_count(const cg_doc *doc);
const char *cg_doc_anchor(const cg_doc *doc, size_t i, cg_pos *pos);
/* The aliases used in the file (*name), in order of appearance. */
size_t cg_doc_alias_count(const cg_doc *doc);
const char *cg_doc_alias(const cg_doc *doc, size_t i, cg_pos *pos);
/* The document of the scope whose anchor alias i names, or NULL when the
 * file defines it itself. */
const cg_doc *cg_doc_alias_source(const cg_doc *doc, size_t i);

#endif
