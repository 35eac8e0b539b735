/* disk — the outputs as the sources produce them, against the files on
 * disk: which are the same, which differ (with the diff, and for config.yml
 * whether it was edited by hand or its sources changed), which are missing,
 * and which diagrams cigen made and no longer makes.  Shared by generate
 * and check.  Also one `-o FILE` written beside the project's files
 * (graph, select).
 */
#ifndef CIGEN_DISK_H
#define CIGEN_DISK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diff.h"
#include "audit/report.h"
#include "cmd/cli.h"

enum { CG_OUT_SAME, CG_OUT_DIFFERS, CG_OUT_MISSING };

typedef struct cg_disk_file {
    cg_output_file f;
    int status;
    char *old;
    size_t old_len;
    bool old_mapped;      /* old is a mapping of the file (io/fsio.h), not a copy */
    bool digest;          /* the file carries a cigen-digest header */
    bool hand_edited;     /* its body is not what cigen wrote */
    bool sources_changed; /* its sources are not the ones it was made from */
    size_t header_lines;  /* lines of its cigen header */
    cg_diff diff;         /* committed (a) -> generated (b) */
} cg_disk_file;

typedef struct cg_disk {
    cg_disk_file *v;
    size_t n;
    char **stale;         /* files in the diagrams folder cigen made and no longer makes */
    size_t nstale;
} cg_disk;

/* Frees what o holds (not o). */
void cg_disk_release(cg_disk *o);

/* Fills o with p's outputs against the disk.  `verb` says what the command
 * does with them ("write", "compare"). */
int cg_disk_collect(cg_project *p, cg_disk *o, const char *verb, cg_error *err);

/* "lines 120-134 (job x), 240": the committed lines a hand edit touched,
 * into out and/or ranges (JSON [from, to] pairs); *first_job the first job
 * they belong to, or NULL. */
void cg_disk_hand_edits(const cg_project *p, const cg_disk_file *s, cg_strbuf *out, json_t *ranges,
                        const char **first_job);

/* The unified diff of a file that differs (base/diff.h, cg_diff_unified). */
void cg_disk_unified(const cg_disk_file *s, const char *a_name, const char *b_name, size_t max_lines, cg_strbuf *out);
/* The job-level report of config.yml that differs (audit/report.h), for
 * the caller to release. */
void cg_disk_matrix(const cg_project *p, const cg_disk_file *s, cg_matrix *m);

/* "missing", "edited by hand", "its sources changed", ... */
const char *cg_disk_state_word(const cg_disk_file *s);

/* Writes data to FILE (a path from the current folder, as the user gave
 * `-o FILE`) through a temporary file renamed over it, never over a source
 * of project p nor its config (or setup config): that is refused with
 * "cigen: error: -o 'FILE' is the manifest; write WHAT elsewhere" (`what`:
 * "the diagram", "the selected config").  Errors are printed; returns 0 or
 * CG_EXIT_ERROR.  Shared by graph and select. */
int cg_disk_write_one(const cg_project *p, const char *file, const char *data, size_t len, const char *what);

/* Whether text holds the end of the leading '#' lines (a line that is not one). */
bool cg_header_ends_in(const char *text, size_t len);

#endif
