/* fsio — the file system edge: reading sources, writing outputs.
 *
 * Sources are read relative to the project folder and must resolve inside
 * it (no "..", no absolute paths, no symbolic links leading out): every
 * path is resolved once, beneath the project folder's descriptor
 * (paths.h), and the file is read through the descriptor it gave.  An
 * output is never read or written through a symbolic link (an output is a
 * regular file cigen wrote), nor in git's folder.  Outputs
 * are written as a transaction: every file goes to a temporary file in its
 * own folder first ("." + name + ".cigen-XXXXXX"), and only when all of
 * them are written are they renamed into place.  On any error before that,
 * the temporary files are removed and no output has changed; a run killed
 * midway leaves only temporary files, which the next run removes.
 */
#ifndef CIGEN_FSIO_H
#define CIGEN_FSIO_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "io/paths.h"

/* The canonical absolute path of a folder (malloc'd), or NULL + error. */
char *cg_realdir(const char *dir, cg_error *err);

/* Reads root/rel.  `ref` is where the path was named (for messages).
 * Returns 0 and a malloc'd buffer, or -1 after recording an error (a file
 * holding git's conflict markers is one, at the first marker's line).
 * `missing_ok`: a missing file returns 1 without an error. */
int cg_read_source(const char *root, const char *rel, const cg_pos *ref, size_t max,
                   char **data, size_t *len, bool missing_ok, cg_error *err);

/* The same, also giving the file's identity (id may be NULL). */
int cg_read_source_id(const char *root, const char *rel, const cg_pos *ref, size_t max, char **data,
                      size_t *len, bool missing_ok, cg_file_id *id, cg_error *err);

/* Reads an output file for comparison: 0 read, 1 missing, -1 error.
 * Errors say "cannot VERB 'rel': ..." at ref (when not NULL). */
int cg_read_output(const char *root, const char *rel, const cg_pos *ref, const char *verb, char **data,
                   size_t *len, cg_error *err);
/* The same, mapped read-only instead of copied (a large config is not
 * copied into fresh memory): *mapped says which (a file that fills its last
 * page is read); either way data[len] is a NUL.  Release with
 * cg_unmap_output.  (A file truncated by another program while it is
 * mapped cannot be read: an output is mapped only once it differed, for the
 * report.) */
int cg_map_output(const char *root, const char *rel, const cg_pos *ref, const char *verb, char **data,
                  size_t *len, bool *mapped, cg_error *err);
void cg_unmap_output(char *data, size_t len, bool mapped);
/* The same for at most the first `max` bytes (0: all): for headers. */
int cg_read_output_head(const char *root, const char *rel, const cg_pos *ref, const char *verb, size_t max,
                        char **data, size_t *len, cg_error *err);
/* Whether the output file holds exactly data[0..len), read in chunks:
 * 0 compared (*same says), 1 missing, -1 error. */
int cg_output_matches(const char *root, const char *rel, const cg_pos *ref, const char *verb, const char *data,
                      size_t len, bool *same, cg_error *err);

typedef struct cg_staged {
    int dir;         /* the output's folder, resolved once beneath the project */
    char *name;      /* the output's name in dir */
    char *tmp;       /* the temporary file's name in dir */
    char *rel;
    int fd;          /* open (and flock'ed: the file is live) until committed */
    cg_pos ref;      /* where the output was named, for messages */
    size_t written;
} cg_staged;

typedef struct cg_outputs {
    const char *root;
    cg_staged *v;
    size_t n, cap;
    char **removals; /* stale outputs to delete on commit (rel) */
    size_t nremovals, removals_cap;
} cg_outputs;

void cg_outputs_init(cg_outputs *o, const char *root);
/* Writes data to a temporary file next to root/rel (creating folders). */
int cg_outputs_stage(cg_outputs *o, const char *rel, const void *data, size_t len,
                     const cg_pos *ref, cg_error *err);
/* Schedules the removal of root/rel on commit. */
void cg_outputs_remove(cg_outputs *o, const char *rel);
/* Renames every staged file into place and removes the scheduled ones. */
int cg_outputs_commit(cg_outputs *o, cg_error *err);
/* Removes the staged temporary files (when not committed). */
void cg_outputs_release(cg_outputs *o);

/* The names in folder root/dir (resolved beneath root) ending in suffix,
 * sorted (bytewise), as a malloc'd array of *n malloc'd strings: 0, or 1
 * when the folder is missing or cannot be read (*names NULL, *n 0). */
int cg_list_names(const char *root, const char *dir, const char *suffix, char ***names, size_t *n);
void cg_free_names(char **names, size_t n);

/* Removes leftover temporary files of killed runs in root/dir. */
void cg_remove_stale_temps(const char *root, const char *dir);

/* Stops this process (SIGSTOP) when CIGEN_TEST_PAUSE names `point`: a test
 * hook. */
void cg_test_pause(const char *point);

/* A test hook: CIGEN_TEST_PAUSE=write stops the writer (SIGSTOP) halfway
 * through writing the first temporary file, CIGEN_TEST_PAUSE=commit between
 * two renames, so a test can kill it mid-transaction. */

#endif
