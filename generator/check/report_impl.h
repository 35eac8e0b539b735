/* What the parts of the report share (report.c compares, report_slice.c
 * reads a config without building it whole); not part of check/report.h.
 */
#ifndef CIGEN_REPORT_IMPL_H
#define CIGEN_REPORT_IMPL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diff.h"
#include "base/util.h"
#include "lang/yamlload.h"

#include "model/model.h"

typedef struct cg_job_change cg_job_change; /* check/report.h */
typedef struct cg_matrix cg_matrix;

/* One workflow entry of a job. */
typedef struct wf_args {
    const char *workflow;
    json_t *args;        /* borrowed; NULL for a bare "name" entry (or, sliced, not read yet) */
    /* sliced reading only: */
    const char *text;    /* the entry's lines, from its "- " line on (NULL: not held, see `at`) */
    size_t len;
    size_t at;           /* where they are in the config's source (config.src), when not held */
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
    bool sliced;         /* read by slicing the text (report_slice.c) */
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
    /* entries not held (cg_report_slice_known): read from src[t], into
     * held[t], by thread t (0: the caller's) of the comparison */
    const cg_diff_src *src[2];
    cg_strbuf held[2];
    /* read in parts (report_compact.c): the jobs both configs hold the
     * same, left out of both (NULL: none), and their names */
    const struct cg_report_shared *shared;
    const char **shared_names;
    size_t nshared;
} config;

void cg_report_config_release(config *c);
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

/* The bytes of a plain key ("KEY:": a letter, digit or '_' first, then
 * those and "-./") and of a plain value (a letter, digit or "_./" first,
 * then those and "-+=() "), a bit each, as slicing reads them. */
enum { CG_CH_KEY_FIRST = 1, CG_CH_KEY = 2, CG_CH_VALUE_FIRST = 4, CG_CH_VALUE = 8 };
extern const unsigned char cg_report_chars[256];

/* Reads text by slicing it into its top-level keys, its workflows and their
 * entries, each kept as text: 0, or -1 when the text is not laid out so
 * that slicing reads it as a YAML parser would (then it is read whole).
 * `jobs_hint` (0: none): about how many jobs it has, room made at once. */
int cg_report_slice(const char *text, size_t len, const char *what, size_t jobs_hint, config *c);
/* A plain workflow entry of a text as reading it a window at a time found
 * it (report_compact.c): where it was cut out of the text sliced, where it
 * is in the config's source (at) and its length, its workflow, and what
 * cg_report_entry_walk said of its bytes. */
typedef struct cg_report_known {
    size_t off, at, len;
    const char *workflow;
    const char *name;    /* its job's name */
    const char *invoke;  /* the job it invokes (inv_len bytes) */
    uint16_t inv_len, args_indent;
    uint8_t kind;        /* 1 or 2, as cg_report_entry_walk */
    bool named;          /* kind 2: its arguments have a `name:` */
} cg_report_known;
/* cg_report_slice of a config's text with its workflow entries cut out,
 * the entries known (in order; each must be where a `jobs:` list's
 * entries were cut, in its workflow), or -1: what is known of an entry is
 * taken, and its bytes are read from src[t] when a comparison on thread t
 * needs them (cg_report_text), not held. */
int cg_report_slice_known(const char *text, size_t len, const char *what, const cg_report_known *known, size_t nknown,
                          const cg_diff_src *src0, const cg_diff_src *src1, config *c);
/* Entry w's bytes (w->len of them), for thread t of a comparison (0: the
 * caller's): held, or read into c->held[t] (valid until the next entry
 * of c read there). */
const char *cg_report_text(config *c, const wf_args *w, int t);
/* A plain workflow entry as slicing reads it without YAML: the job it
 * invokes, the value of its `name:` (NULL: none; "- job" alone: the job),
 * and the indentation of its arguments' keys. */
typedef struct cg_report_plain {
    const char *invoke;
    size_t invoke_len;
    const char *name;
    size_t name_len;
    size_t args_indent;
} cg_report_plain;
/* The workflow entry that starts at t (its "- " at column E), read as
 * slicing reads it, its end found in the same walk over its lines (*end:
 * its first line after the first with content at column E or less, or n):
 * 1, "- job" alone; 2, "- job:" with its arguments one plain key a line
 * (*end and *out set for both); 0, not plain (read as YAML; the walk
 * stops at the line that says so); -1 when `more` (text follows
 * t[n - 1]) and the entry may not end within t[0, n). */
int cg_report_entry_walk(const char *t, size_t n, bool more, size_t E, size_t *end, cg_report_plain *out);
/* Whether the job named so is one left out of both configs. */
typedef struct cg_report_shared cg_report_shared;
bool cg_report_shared_has(const cg_report_shared *sh, const char *name);
/* Something like an anchor (&a) or an alias (*a) in t[0, len). */
bool cg_report_anchor_like(const char *t, size_t len);
/* The jobs of two read configs (report.c): 0, or -1 when a sliced
 * reading fell short (m then holds part of a result, for
 * cg_matrix_release).  `both` (NULL: one after the other) runs the two
 * halves of the comparison that need no YAML at once. */
typedef void (*cg_run_both_fn)(void (*f)(void *), void *a, void *b); /* cg_run_both of report.h */
int cg_report_compare_configs(config *a, config *b, const cg_model *p, cg_run_both_fn both, cg_matrix *m);
/* Reads an entry's arguments as YAML (w->args): 0, or -1 when it does not
 * read alone. */
int cg_report_entry_read(config *c, wf_args *w);
/* Compares two plain entries' arguments (their bytes xt and yt) without
 * reading them as YAML, adding the changes as compare_job would: 0, or 1
 * when a value that differs needs YAML to show (nothing added then). */
int cg_report_compare_plain(const wf_args *x, const char *xt, const wf_args *y, const char *yt, cg_job_change *jc);
/* Whether entry w, never compared, would read alone: 0, or -1. */
int cg_report_entry_check(config *c, wf_args *w);
/* Adds one change (taking before and after, either NULL), unless the job
 * has it already. */
void cg_report_add_change(cg_job_change *jc, const char *field, char *before, char *after);

#endif
