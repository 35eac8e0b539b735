/* stream — a large config.yml, compared and written as it is rendered.
 *
 * The stream generate, check and lint give the renderer: chunks are hashed
 * and handed on by a background writer (io/bgwrite.h), compared with the
 * file on disk, and (generate) written to the staged temporary file, so a
 * config of hundreds of megabytes is never held in memory.  lint only asks
 * whether the file on disk is the config (`forget`).
 */
#ifndef CIGEN_STREAM_H
#define CIGEN_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diff.h"
#include "base/digest.h"
#include "cmd/project.h"
#include "io/fsio.h"
#include "render/header.h"

/* The stream generate and check give the renderer (render/config.h): the config goes to a staged
 * temporary file as it is made, and is compared on the way with the file
 * on disk (whose body digest is computed for the hand-edit check), so a
 * config of hundreds of megabytes is never held in memory. */
/* check: a piece of the rendered config (past its header), as the bytes of
 * the file on disk at `off` (`kept` false) or of the bytes kept at `off`. */
typedef struct cg_stream_piece {
    size_t at, off, len;    /* at: its offset in the rendered config */
    bool kept;
} cg_stream_piece;

typedef struct cg_stream {
    cg_project *p;
    cg_outputs *outs;
    int staged;             /* index in outs, or -1 before the first bytes */
    int old_fd;             /* the config on disk; -1 when missing */
    size_t off;             /* bytes written */
    size_t old_off;         /* bytes of the old file read */
    bool differs;
    cg_header_info old_h;   /* the old file's header */
    cg_sha256 old_body;
    char *buf;
    bool compare_only;      /* check: nothing is written; once the bytes
                             * differ, the rest is not even read */
    /* check: the rendered config as pieces of the file on disk and of
     * rendered bytes kept where they differ from it (found line by line as
     * they come: where the two meet again after a difference), so that the
     * report needs no second rendering and neither text is held whole */
    cg_strbuf kept;
    cg_strbuf head;         /* the rendered header */
    cg_stream_piece *pieces;
    size_t npieces, pcap;
    struct cg_stream_sync *sync;
    bool forget;            /* lint: only whether the file on disk is the
                             * config (`differs`, `old_fd`): nothing kept, and
                             * a file that cannot be read merely differs */
    struct cg_stream_prescan *prescan; /* check: the committed config's part of
                             * the job-level report, read while the config
                             * is rendered (from the first chunk when the
                             * sources changed, else from the first
                             * difference; cg_stream_prescan_join) */
    /* the results, once header() ran */
    bool done, hand_edited, sources_changed;
    struct cg_bgwrite *bg;  /* hashes and writes the chunks on a second core */
} cg_stream;

/* Streams p's config, when larger than the threshold, to S (which writes
 * it to outs, or with outs NULL only compares it with the file on disk):
 * sets up *sink and p->stream. */
void cg_stream_start(cg_project *p, cg_stream *S, cg_config_stream *sink, cg_outputs *outs);
void cg_stream_release(cg_stream *S);
/* check, once a streamed config differed: a reader of it, for one thread
 * (its own block of the file on disk, read again). */
/* A few blocks of the file held at once: a job's entries lie in a block
 * of each workflow, read in turn. */
enum { CG_READER_BLOCKS = 4 };
typedef struct cg_stream_reader {
    const cg_stream *S;
    struct {
        char *buf;        /* the file's bytes [off, off + len) */
        size_t off, len;
        unsigned long used; /* when it was last read from */
    } block[CG_READER_BLOCKS];
    unsigned long clock;
    size_t piece;         /* the rendered config's piece read last */
    int err;              /* a read failed: its errno, or -1 (the file changed) */
} cg_stream_reader;
void cg_stream_reader_init(cg_stream_reader *r, const cg_stream *S);
void cg_stream_reader_release(cg_stream_reader *r);
/* The file on disk (`rendered` false) or the rendered config, read through
 * r, never held whole (base/diff.h). */
void cg_stream_src(cg_stream_reader *r, bool rendered, cg_diff_src *src);
/* check, once a streamed config differed: the committed config's part of
 * the job-level report (check/report.h, cg_report_old_scan), read on
 * another thread while the config was rendered, once it is done; NULL
 * when it was not read (or a read failed: then it is read again).  Once. */
struct cg_report_old *cg_stream_prescan_join(const cg_stream *S);
/* 0, or -1 with err set when a read through r failed. */
int cg_stream_read_error(const cg_stream_reader *r, cg_error *err);

#endif
