/* What the parts of the report share (audit/report.h): a config read as
 * jobs (report_read.c), for the comparison (report_compare.c) and the
 * grouping (report_group.c); not part of audit/report.h.
 */
#ifndef CIGEN_REPORT_IMPL_H
#define CIGEN_REPORT_IMPL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "lang/yamlload.h"
#include "model/model.h"

typedef struct cg_matrix cg_matrix; /* audit/report.h */

/* One workflow entry of a job. */
typedef struct wf_args {
    const char *workflow;
    json_t *args;        /* borrowed; NULL for a bare "name" entry (or, sliced, not read yet) */
    /* sliced reading only: */
    const char *text;    /* the entry's lines, from its "- " line on */
    size_t len;
    size_t args_indent;  /* indentation of its arguments' keys (a plain entry) */
    bool read;           /* args is what the entry says (read as YAML) */
    bool plain;          /* "- job:" then one "key: value" per line, values plain or nested */
    bool covered;        /* its text equals the generated one's, or it was read */
    size_t next;         /* the job's next entry (index + 1 in config.ents), or 0 */
} wf_args;

typedef struct jobrec {
    const char *name;
    const char *invoke;
    size_t first, last;  /* its entries (index + 1 in config.ents) */
} jobrec;

typedef struct config {
    bool sliced;         /* read by slicing the text */
    cg_doc *doc;         /* whole: the config; sliced: its parts besides workflows, once read */
    jobrec *jobs;
    size_t n, cap;
    cg_map index;        /* name -> index + 1 */
    wf_args *ents;       /* the entries of every job */
    size_t nents, ecap;
    /* sliced reading only: */
    const char *what;    /* "config.yml (committed)" */
    cg_pool pool;        /* names */
    cg_doc **docs;       /* entries read alone */
    size_t ndocs, dcap;
    cg_strbuf rest;      /* the text besides `workflows:` */
    cg_strbuf skeleton;  /* `workflows:` without its jobs' entries */
    bool anchors;        /* `workflows:` holds something like an anchor or an alias */
} config;

/* ---- reading (report_read.c) ---- */

/* Reads text as a YAML document: NULL, or why it cannot (malloc'd); c is
 * to be released either way. */
char *cg_report_read_whole(const char *text, size_t len, const char *what, config *c);
/* Reads text by slicing it into its top-level keys, its workflows and their
 * entries, each kept as text: 0, or -1 when the text is not laid out so
 * that slicing reads it as a YAML parser would (then it is read whole).
 * `jobs_hint` (0: none): about how many jobs it has, room made at once. */
int cg_report_slice(const char *text, size_t len, const char *what, size_t jobs_hint, config *c);
void cg_report_config_release(config *c);
/* The job named so, or NULL. */
jobrec *cg_report_find(const config *c, const char *name);
/* The entry after e of its job (NULL after the last). */
static inline wf_args *cg_report_next(const config *c, const wf_args *e)
{
    return e->next ? &c->ents[e->next - 1] : NULL;
}
static inline wf_args *cg_report_first(const config *c, const jobrec *r)
{
    return r->first ? &c->ents[r->first - 1] : NULL;
}
/* Adds a job's entry to c (its name and invoke in c's pool or the doc);
 * the pointer lasts until the next one is added. */
wf_args *cg_report_add_entry(config *c, const char *name, const char *invoke, const char *workflow);
/* Reads an entry's arguments as YAML (w->args): 0, or -1 when it does not
 * read alone. */
int cg_report_entry_read(config *c, wf_args *w);
/* Whether entry w, never compared, would read alone: 0, or -1. */
int cg_report_entry_check(config *c, wf_args *w);

/* The bytes of a plain key ("KEY:": a letter, digit or '_' first, then
 * those and "-./") and of a plain value (a letter, digit or "_./" first,
 * then those and "-+=() "), a bit each, as slicing reads them. */
enum { CG_CH_KEY_FIRST = 1, CG_CH_KEY = 2, CG_CH_VALUE_FIRST = 4, CG_CH_VALUE = 8 };
extern const unsigned char cg_report_chars[256];
/* Something like an anchor (&a) or an alias (*a) in t[0, len). */
bool cg_report_anchor_like(const char *t, size_t len);

/* The arguments of a plain entry, as text: each key and its value. */
typedef struct span {
    const char *s;
    size_t n;
} span;
typedef struct kv {
    span key;
    span raw;     /* the value's text, the lines below its key included */
    span first;   /* the value's text on its key's line */
    bool deeper;  /* content on the lines below its key */
    int8_t simple; /* a one-line plain value (val): -1 until asked (cg_report_kv_simple) */
    span val;
} kv;
/* An entry's arguments: most entries have a few dozen, held here. */
enum { KV_HELD = 32 };
typedef struct kvs {
    kv *v;
    size_t n, cap;
    kv held[KV_HELD];
} kvs;
/* Its keys and values (t: its bytes; a->v valid until cg_report_kvs_release);
 * false when a key repeats. */
bool cg_report_scan_args(const wf_args *w, const char *t, kvs *a);
void cg_report_kvs_release(kvs *a);
/* Whether the value is a one-line plain value (then k->val is it). */
bool cg_report_kv_simple(kv *k);

/* ---- grouping (report_group.c) ---- */

/* The groups of m's added, removed and changed jobs (m->groups), explained
 * by p's jobs (p may be NULL). */
void cg_report_group(cg_matrix *m, const cg_model *p, const config *oldc, const config *newc);

#endif
