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
/* What cg_diff_compute_margin does, with the knob the tests turn: the
 * lines (both sides) above which a region is searched a window at a time
 * (0: 200,000). */
typedef struct cg_diff_opts {
    size_t margin;
    size_t large_region;
} cg_diff_opts;
void cg_diff_compute_with(const char *a, size_t alen, const char *b, size_t blen, const cg_diff_opts *o, cg_diff *d);
void cg_diff_release(cg_diff *d);

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

#endif
