/* diff — line differences between two texts, as unified-diff hunks.
 *
 * Myers' O((N+M)D) algorithm in linear space (the middle-snake refinement)
 * after removing the common head and tail; when a work budget runs out the
 * region left is reported as one replaced block (still a correct diff, just
 * not a minimal one).  A region of over 200,000 lines is searched a window
 * at a time from each difference on, so that scattered changes in a large
 * file each cost their own size.
 */
#ifndef CIGEN_DIFF_H
#define CIGEN_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

typedef struct cg_hunk {
    size_t a_start, a_len;   /* 0-based line range in a */
    size_t b_start, b_len;   /* in b */
} cg_hunk;

typedef struct cg_diff {
    cg_hunk *hunks;          /* changed ranges, no context */
    size_t n, cap;
    size_t a_lines, b_lines;
    size_t removed, added;   /* changed line counts */
} cg_diff;

void cg_diff_compute(const char *a, size_t alen, const char *b, size_t blen, cg_diff *d);
/* The same, splitting into lines only what lies between the common head
 * and tail (found on the bytes) and `margin` lines around it (SIZE_MAX:
 * every line; the result is the same, which the tests check). */
void cg_diff_compute_margin(const char *a, size_t alen, const char *b, size_t blen, size_t margin, cg_diff *d);
/* What cg_diff_compute_margin does, with the knobs the tests turn: the
 * lines (both sides) above which a region is searched a window at a time
 * (0: 200,000), and `tables` to split such a region into a table of lines
 * first, as it once was (the hunks are the same; the tests hold the two to
 * that). */
typedef struct cg_diff_opts {
    size_t margin;
    size_t large_region;
    bool tables;
    size_t window;           /* a text read through a callback: bytes read at a time (0: 256 KB) */
} cg_diff_opts;
void cg_diff_compute_with(const char *a, size_t alen, const char *b, size_t blen, const cg_diff_opts *o, cg_diff *d);
void cg_diff_release(cg_diff *d);

/* A text never held whole: `read` copies its bytes [off, off + n) into buf
 * (0 < n, off + n <= len).  It cannot fail: a reader that meets an error
 * fills buf with something and remembers the error for its caller. */
typedef struct cg_diff_src {
    size_t len;
    void (*read)(void *ctx, size_t off, char *buf, size_t n);
    void *ctx;
    /* Optional, on the second text (b) of cg_diff_compute_src: how many of
     * its bytes from `off` on are known to be the first text's bytes from
     * `a_off` on (0: none known), so that lines the same are passed
     * without reading them (a streamed config knows where it is the
     * committed file's bytes).  Only what is known: the hunks are the
     * same either way. */
    size_t (*same)(void *ctx, size_t off, size_t a_off);
} cg_diff_src;
/* cg_diff_compute_with over two texts read a window at a time: the same
 * hunks, in memory of the lines around the changes (a region searched a
 * window at a time is read where it is; a smaller one is read whole, as
 * the lines it splits).  o NULL: as cg_diff_compute. */
void cg_diff_compute_src(const cg_diff_src *a, const cg_diff_src *b, const cg_diff_opts *o, cg_diff *d);

/* A line of a cut diff shows at most this many bytes (then says how many
 * more it has). */
#define CG_DIFF_MAX_WIDTH ((size_t)500)

/* Writes a unified diff ("--- a_name", "+++ b_name", @@ hunks) with
 * `context` lines around changes, each line escaped as messages are
 * (cg_escape_line: the text is valid UTF-8 without control characters).
 * With `max_lines` (0: no limit) it stops after that many changed lines,
 * inside a hunk if need be (whose header then counts what it shows), cuts
 * each line at CG_DIFF_MAX_WIDTH bytes, and says what it left out. */
void cg_diff_unified(const cg_diff *d, const char *a, size_t alen, const char *b, size_t blen,
                     const char *a_name, const char *b_name, unsigned context, size_t max_lines,
                     cg_strbuf *out);
/* The same, of two texts read through callbacks (window: as cg_diff_opts'). */
void cg_diff_unified_src(const cg_diff *d, const cg_diff_src *a, const cg_diff_src *b, size_t window,
                         const char *a_name, const char *b_name, unsigned context, size_t max_lines,
                         cg_strbuf *out);

#endif
