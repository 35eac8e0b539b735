/* stamp — what a run already verified, so that the next one can tell
 * "nothing changed" without rendering the whole config again.
 *
 * A check that finds every output in sync (and nothing to warn about), or a
 * generate that finds everything already up to date, records a stamp:
 * which cigen binary and libraries ran, the options, every source the run
 * read (its digest, or that it was missing, and which names were the same
 * file), every output and every diagram file (its MAC), the diagrams
 * folder's listing, and what check and generate print.  The run's result is
 * a function of exactly these, so a later check or generate that finds all
 * of them the same — reading each through the same safe reads as a full run
 * — knows the result without rendering.  Anything different, unreadable or
 * unusual (a special-PR selection, --json, --fresh-tiers, a warning) and the
 * run is a full one.
 *
 * Stamps live in $CIGEN_CACHE_DIR, else $XDG_CACHE_HOME/cigen, else
 * ~/.cache/cigen (absolute paths), one per project folder and options
 * (CIGEN_CACHE_DIR=off or `--no-cache`: none); a stamp or folder that
 * is not the user's own, or that others may write, is not read.  A fresh
 * clone in CI has none: its first check is always a full one.
 */
#ifndef CIGEN_STAMP_H
#define CIGEN_STAMP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

typedef struct cg_stamp {
    char *dir;        /* the cache folder; NULL: stamps are off */
    char *path;       /* this project's stamp file */
    cg_strbuf log;    /* the sources read, as stamp lines */
    size_t nread;     /* sources read */
    bool unusable;    /* a read failed or left the project: no stamp */
    bool watching;
    char *real;       /* the project folder, resolved (every read is beneath it) */
    struct cg_stamp_ids *ids; /* the identities of the files read */
    char **dirs;      /* a stamp that holds: the folders of its outputs and diagrams */
    size_t ndirs;
} cg_stamp;

/* Prepares a stamp for the project folder `dir` (-C), manifest and option
 * words (what else decides the result): s->dir NULL when stamps are off
 * (CIGEN_CACHE_DIR=off, no home, or the binary cannot be read).  why says
 * so, for -v. */
void cg_stamp_init(cg_stamp *s, const char *dir, const char *manifest, const char *options, cg_strbuf *why);
void cg_stamp_release(cg_stamp *s);

/* Whether the stamp on disk still holds: every file it names is as it was,
 * and it records what `verb` ("check" or "generate") prints.  Then *message
 * is that, what the full run printed, and s->dirs the folders of the
 * outputs.  why says why not (for -v). */
bool cg_stamp_holds(cg_stamp *s, const char *verb, cg_strbuf *message, cg_strbuf *why);

/* Watches the sources read from now on (until cg_stamp_stop). */
void cg_stamp_watch(cg_stamp *s);
void cg_stamp_stop(cg_stamp *s);

/* An output a check found in sync, and the bytes it was compared with:
 * `data` when held whole, else (a streamed config) its generated header
 * and the digest of its body the header records. */
typedef struct cg_stamp_output {
    const char *rel;
    const char *data;
    size_t len;
    const char *head;
    size_t head_len;
    const char *body_digest;  /* 40 hex */
} cg_stamp_output;

/* Writes the stamp of a run that found everything in sync: the sources
 * watched, the outputs (relative to root, the project folder the run
 * resolved), the diagrams folder (or NULL) and what check and generate
 * print (generate_line NULL: generate would print more, a warning).  What
 * it records of an output is what was compared: a file that is no longer
 * those bytes, or a .dot file in the diagrams folder that `owned` says
 * cigen made (a stale one), and no stamp is written.  Quietly does nothing
 * when it cannot. */
void cg_stamp_store(cg_stamp *s, const char *root, const cg_stamp_output *outputs, size_t noutputs,
                    const char *diagrams, bool (*owned)(void *ctx, const char *data, size_t len), void *ctx,
                    const char *check_line, const char *generate_line);

#endif
