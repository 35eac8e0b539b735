/* What the parts of the YAML loader share (lang/yamlload.h): the document
 * (yamlload.c keeps it and answers for it), filled by the event loop
 * (yamlload_events.c); not part of lang/yamlload.h. */
#ifndef CIGEN_YAMLLOAD_IMPL_H
#define CIGEN_YAMLLOAD_IMPL_H

#include "base/util.h"
#include "lang/yamlload.h"

typedef struct doc_name {
    const char *name; /* interned in the doc's pool */
    cg_pos pos;
    const cg_doc *source; /* aliases: the document defining the anchor, NULL for this one */
} doc_name;

/* An anchor's value, kept after loading so that later documents may name it
 * (cg_load_opts.scope). */
typedef struct anchor {
    const char *name;
    json_t *value; /* a reference owned by the document (merges may drop theirs) */
    const char *path;
    size_t count;
} anchor;

typedef struct doc_names {
    doc_name *v;
    size_t n, cap;
} doc_names;

struct cg_doc {
    char *file;
    char *text;
    size_t len;
    json_t *root;
    cg_pool pool;    /* path strings and position records */
    cg_map positions; /* path -> cg_node_pos* */
    doc_names anchors;  /* &name, in order */
    doc_names aliases;  /* *name, in order */
    anchor *defs;       /* the anchors' values, in order */
    size_t ndefs;
    cg_map def_index;   /* name -> index in defs + 1 (the last of that name) */
    cg_map merge_keys;  /* mapping path -> cg_pos* of its '<<' */
    cg_doc_layout layout;
    cg_doc_entry_text *entries; /* layout.entries, owned */
};

/* Fills doc (its text read, checked) from libyaml's events: its root, the
 * positions, anchors, aliases, merge keys and layout.  0, or -1 + err. */
int cg_doc_load_events(cg_doc *doc, const cg_load_opts *opts, cg_error *err);

#endif
