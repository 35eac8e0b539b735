/* Streaming a large config.yml (cmd/stream.h). */
#include "cmd/stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/threads.h"
#include "check/report.h"
#include "cmd/cli.h"
#include "io/bgwrite.h"


enum { STREAM_BUF = 1 << 20 };

/* Reads the old file up to `upto` (or its end), hashing its body and, when
 * `chunk` (the new bytes from offset `base` on) is given, comparing the
 * old bytes at and after offset `lo` with it. */
static int stream_old(cg_stream *S, size_t upto, const char *chunk, size_t base, size_t lo, cg_error *err)
{
    while (S->old_off < upto) {
        size_t want = upto - S->old_off < STREAM_BUF ? upto - S->old_off : STREAM_BUF;
        ssize_t r = read(S->old_fd, S->buf, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cg_error_at(err, &S->p->m.manifest.output_pos, "cannot read '%s': %s", S->p->m.manifest.output,
                               strerror(errno));
        if (r == 0) {
            S->differs |= chunk != NULL; /* the old file is shorter */
            break;
        }
        size_t n = (size_t)r, at = S->old_off;
        if (at + n > S->old_h.len) {
            size_t from = at < S->old_h.len ? S->old_h.len - at : 0;
            cg_sha256_update(&S->old_body, S->buf + from, n - from);
        }
        if (chunk && !S->differs) {
            size_t from = at < lo ? lo - at : 0;
            if (from < n && memcmp(S->buf + from, chunk + (at + from - base), n - from) != 0)
                S->differs = true;
        }
        S->old_off += n;
    }
    return 0;
}

/* Starts the temporary file: with the first `upto` bytes, equal so far to
 * the old file's (its header region is patched at the end), copied from it. */
static int stream_materialize(cg_stream *S, size_t upto, cg_error *err)
{
    const cg_manifest *m = &S->p->m.manifest;
    if ((S->staged = cg_outputs_open(S->outs, m->output, &m->output_pos, err)) < 0)
        return -1;
    char *buf = cg_xmalloc(STREAM_BUF);
    int rc = 0;
    for (size_t at = 0; at < upto && rc == 0;) {
        size_t want = upto - at < STREAM_BUF ? upto - at : STREAM_BUF;
        ssize_t r = pread(S->old_fd, buf, want, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = cg_error_at(err, &m->output_pos, "cannot read '%s': %s", m->output,
                             r < 0 ? strerror(errno) : "it changed while cigen read it");
            break;
        }
        rc = cg_outputs_append(S->outs, S->staged, buf, (size_t)r, err);
        at += (size_t)r;
    }
    free(buf);
    return rc;
}

/* stream_old(), where (lint) a file that cannot be read is merely not the
 * config. */
static int read_old(cg_stream *S, size_t upto, const char *chunk, size_t base, size_t lo, cg_error *err)
{
    if (!S->forget)
        return stream_old(S, upto, chunk, base, lo, err);
    cg_error ignored;
    cg_error_init(&ignored);
    if (stream_old(S, upto, chunk, base, lo, &ignored) != 0)
        S->differs = true;
    cg_error_release(&ignored);
    return 0;
}

/* ---- check: where the rendered bytes differ from the file on disk ----
 *
 * The rendered bytes are compared with the file's as they come.  At a
 * difference (from the start of its line) they are kept, and each whole
 * line after it is looked for among the file's lines from where the
 * difference started (an index of a window that grows with the bytes kept):
 * where one is found, the two meet again and the comparison goes on from
 * there.  The rendered config is then pieces: runs of the file's bytes and
 * the bytes kept.  Any meeting point gives the same config (the pieces are
 * the rendered bytes); a good one keeps few. */

enum {
    SYNC_LOOK = 512,                /* file bytes indexed beyond twice the bytes kept */
    SYNC_MAX_LOOK = 16 << 20,       /* at most, from the difference's start */
    SYNC_BACK = 1 << 16,            /* file bytes kept behind the comparison (to find a line's start) */
    SYNC_DROP = 1 << 20,            /* dropped from the window that many at a time */
    SYNC_LINES = 3,                 /* lines found together where the two meet again */
    SYNC_CACHE = 1 << 18            /* the file read again a block at a time */
};

typedef struct sync_slot {
    uint64_t h;
    size_t off;
    uint32_t gen;
} sync_slot;

struct cg_stream_sync {
    char *ow;                       /* the file's bytes [ow_start, ow_start + ow_len) */
    size_t ow_start, ow_len, ow_cap;
    bool eof;
    bool diverged;
    size_t run_new, run_old;        /* the same: rendered bytes from run_new are the file's from run_old */
    size_t sub_new, sub_old, sub_kept; /* diverged: the difference starts there, its bytes kept from sub_kept */
    size_t scan;                    /* diverged: the next rendered line to look for */
    size_t idx_at;                  /* the next file line to index */
    sync_slot *tab;                 /* file lines by hash, the first of each (gen: this difference's) */
    size_t tcap, tn;
    uint32_t gen;
    size_t diag;                    /* diverged: the file's line as far from sub_old as scan from sub_new */
};

static void push_piece(cg_stream *S, size_t at, size_t off, size_t len, bool kept)
{
    if (!len)
        return;
    cg_grow(&S->pieces, &S->pcap, S->npieces + 1, sizeof *S->pieces);
    S->pieces[S->npieces++] = (cg_stream_piece){at, off, len, kept};
}

/* Reads the file into the window up to `upto` (or its end), hashing its body. */
static int old_fill(cg_stream *S, size_t upto, cg_error *err)
{
    struct cg_stream_sync *y = S->sync;
    while (!y->eof && y->ow_start + y->ow_len < upto) {
        size_t want = upto - (y->ow_start + y->ow_len);
        if (want < STREAM_BUF)
            want = STREAM_BUF;
        cg_grow(&y->ow, &y->ow_cap, y->ow_len + want, 1);
        ssize_t r = read(S->old_fd, y->ow + y->ow_len, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cg_error_at(err, &S->p->m.manifest.output_pos, "cannot read '%s': %s", S->p->m.manifest.output,
                               strerror(errno));
        if (r == 0) {
            y->eof = true;
            break;
        }
        size_t n = (size_t)r, at = S->old_off;
        if (at + n > S->old_h.len) {
            size_t from = at < S->old_h.len ? S->old_h.len - at : 0;
            cg_sha256_update(&S->old_body, y->ow + y->ow_len + from, n - from);
        }
        y->ow_len += n;
        S->old_off += n;
    }
    return 0;
}

/* Forgets the window's bytes before `keep`, a few megabytes at a time. */
static void old_drop(struct cg_stream_sync *y, size_t keep)
{
    if (keep < y->ow_start + SYNC_DROP)
        return;
    size_t d = keep - y->ow_start;
    if (d > y->ow_len)
        d = y->ow_len;
    memmove(y->ow, y->ow + d, y->ow_len - d);
    y->ow_start += d;
    y->ow_len -= d;
}

static void index_put(struct cg_stream_sync *y, uint64_t h, size_t off)
{
    if (2 * (y->tn + 1) > y->tcap) {
        size_t ncap = y->tcap ? 2 * y->tcap : 1024;
        sync_slot *t = cg_xcalloc(ncap, sizeof *t);
        for (size_t i = 0; i < y->tcap; i++) {
            if (y->tab[i].gen != y->gen)
                continue;
            size_t k = (size_t)y->tab[i].h & (ncap - 1);
            while (t[k].gen == y->gen)
                k = (k + 1) & (ncap - 1);
            t[k] = y->tab[i];
        }
        free(y->tab);
        y->tab = t, y->tcap = ncap;
    }
    size_t k = (size_t)h & (y->tcap - 1);
    for (; y->tab[k].gen == y->gen; k = (k + 1) & (y->tcap - 1))
        if (y->tab[k].h == h)
            return; /* the first such line is kept */
    y->tab[k] = (sync_slot){h, off, y->gen};
    y->tn++;
}

/* The end of the SYNC_LINES lines of the window from `at` (which it reads
 * further as needed), or SIZE_MAX when the file has fewer. */
static int block_end(cg_stream *S, size_t at, size_t *end, cg_error *err)
{
    struct cg_stream_sync *y = S->sync;
    size_t e = at;
    for (int k = 0; k < SYNC_LINES;) {
        size_t have = y->ow_start + y->ow_len;
        const char *nl = e < have ? memchr(y->ow + (e - y->ow_start), '\n', have - e) : NULL;
        if (nl) {
            e = (size_t)(nl - y->ow) + y->ow_start + 1;
            k++;
            continue;
        }
        if (y->eof) {
            *end = SIZE_MAX;
            return 0;
        }
        if (old_fill(S, have + 1, err) != 0)
            return -1;
    }
    *end = e;
    return 0;
}

/* Where the file holds block[0, bl) (SYNC_LINES lines) from the start of a
 * line, from the difference's start on, among the places indexed once
 * `pending` rendered bytes differ (the first such place): *found, or
 * SIZE_MAX. */
static int sync_find(cg_stream *S, const char *block, size_t bl, size_t pending, size_t *found, cg_error *err)
{
    struct cg_stream_sync *y = S->sync;
    size_t lim = y->sub_old + (pending < SYNC_MAX_LOOK / 2 ? 2 * pending + SYNC_LOOK : SYNC_MAX_LOOK);
    *found = SIZE_MAX;
    while (y->idx_at < lim) {
        size_t e;
        if (block_end(S, y->idx_at, &e, err) != 0)
            return -1;
        if (e == SIZE_MAX)
            break;
        index_put(y, cg_hash(y->ow + (y->idx_at - y->ow_start), e - y->idx_at), y->idx_at);
        const char *nl = memchr(y->ow + (y->idx_at - y->ow_start), '\n', e - y->idx_at);
        y->idx_at = (size_t)(nl - y->ow) + y->ow_start + 1;
    }
    if (!y->tcap)
        return 0;
    uint64_t h = cg_hash(block, bl);
    for (size_t k = (size_t)h & (y->tcap - 1); y->tab[k].gen == y->gen; k = (k + 1) & (y->tcap - 1)) {
        if (y->tab[k].h != h)
            continue;
        size_t off = y->tab[k].off;
        if (off + bl <= y->ow_start + y->ow_len && memcmp(y->ow + (off - y->ow_start), block, bl) == 0)
            *found = off;
        break;
    }
    return 0;
}

static size_t same_prefix(const char *a, const char *b, size_t n)
{
    size_t k = 0;
    while (k < n) {
        size_t c = n - k < 4096 ? n - k : 4096;
        if (memcmp(a + k, b + k, c) != 0) {
            while (a[k] == b[k])
                k++;
            return k;
        }
        k += c;
    }
    return k;
}

static void prescan_start(cg_stream *S);

/* check: the rendered bytes [S->off, S->off + len), against the file. */
static int check_write(cg_stream *S, const char *data, size_t len, cg_error *err)
{
    struct cg_stream_sync *y = S->sync;
    size_t at = S->off, end = S->off + len, hl = S->p->out.header_len;
    int rc = 0;
    if (at < hl) { /* the header: compared at the end */
        size_t k = hl - at < len ? hl - at : len;
        data += k, at += k;
    }
    while (at < end && rc == 0) {
        if (!y->diverged) {
            size_t q = at - y->run_new + y->run_old;
            if ((rc = old_fill(S, q + (end - at), err)) != 0)
                break;
            size_t have = y->ow_start + y->ow_len, avail = have > q ? have - q : 0;
            size_t k = avail ? same_prefix(data, y->ow + (q - y->ow_start), end - at < avail ? end - at : avail) : 0;
            data += k, at += k;
            if (at == end) {
                old_drop(y, q + k > SYNC_BACK ? q + k - SYNC_BACK : 0);
                break;
            }
            /* a difference, from the start of its line (or of what is held) */
            size_t qo = q + k, lo = y->run_old > y->ow_start ? y->run_old : y->ow_start, ls = qo;
            while (ls > lo && y->ow[ls - 1 - y->ow_start] != '\n')
                ls--;
            size_t back = qo - ls;
            push_piece(S, y->run_new, y->run_old, at - back - y->run_new, false);
            if (!S->differs)
                prescan_start(S); /* (a hand edit: from its first difference on) */
            S->differs = true;
            y->diverged = true;
            y->sub_new = at - back, y->sub_old = ls, y->sub_kept = S->kept.len;
            if (back)
                cg_strbuf_add(&S->kept, y->ow + (ls - y->ow_start), back);
            y->scan = y->sub_new, y->idx_at = ls, y->tn = 0, y->diag = ls;
            if (++y->gen == 0) { /* the slots of every earlier difference are stale */
                memset(y->tab, 0, y->tcap * sizeof *y->tab);
                y->gen = 1;
            }
            continue;
        }
        /* kept, a line at a time; each line, with those after it, looked
         * for in the file */
        const char *nl = memchr(data, '\n', end - at);
        size_t take = nl ? (size_t)(nl - data) + 1 : end - at;
        cg_strbuf_add(&S->kept, data, take);
        data += take, at += take;
        while (nl && rc == 0) {
            size_t i = y->scan - y->sub_new + y->sub_kept, e = i, ll = 0;
            int k = 0;
            for (const char *q; k < SYNC_LINES && (q = memchr(S->kept.buf + e, '\n', S->kept.len - e)); k++) {
                e = (size_t)(q - S->kept.buf) + 1;
                ll = ll ? ll : e - i;
            }
            if (k < SYNC_LINES)
                break; /* more lines first */
            /* first where as many lines follow in the file (lines replaced
             * one for one), then anywhere near */
            size_t found = SIZE_MAX, de;
            if ((rc = block_end(S, y->diag, &de, err)) != 0)
                break;
            if (de != SIZE_MAX && de - y->diag == e - i &&
                memcmp(y->ow + (y->diag - y->ow_start), S->kept.buf + i, e - i) == 0)
                found = y->diag;
            if (found == SIZE_MAX && de != SIZE_MAX) {
                /* the lines after this one (all kept after it) where the
                 * file's next line starts: this line replaced that one (a
                 * template edit: one per job), found without looking
                 * anywhere near (which hashes every line around it: most of
                 * a drifted check's writer); the bytes after them are
                 * compared as those of any meeting are */
                size_t i2 = i + ll, de2;
                const char *q = memchr(y->ow + (y->diag - y->ow_start), '\n', de - y->diag);
                size_t d2 = (size_t)(q - y->ow) + y->ow_start + 1;
                if ((rc = block_end(S, d2, &de2, err)) != 0)
                    break;
                if (de2 != SIZE_MAX && de2 - d2 >= e - i2 &&
                    memcmp(y->ow + (d2 - y->ow_start), S->kept.buf + i2, e - i2) == 0) {
                    y->scan += ll;
                    y->diag = d2;
                    i = i2;
                    found = d2;
                }
            }
            if (found == SIZE_MAX && (rc = sync_find(S, S->kept.buf + i, e - i, at - y->sub_new, &found, err)) != 0)
                break;
            if (found == SIZE_MAX) {
                y->scan += ll;
                if (de != SIZE_MAX) { /* the next line of the file */
                    const char *q = memchr(y->ow + (y->diag - y->ow_start), '\n', de - y->diag);
                    y->diag = (size_t)(q - y->ow) + y->ow_start + 1;
                }
                continue;
            }
            /* they meet again: rendered [sub_new, scan) stands for the file's
             * [sub_old, found), and the lines found are the same (the last
             * ones kept): the comparison goes on after them */
            push_piece(S, y->sub_new, y->sub_kept, y->scan - y->sub_new, true);
            S->kept.len = i;
            S->kept.buf[i] = '\0';
            y->diverged = false;
            y->run_new = y->scan, y->run_old = found;
            old_drop(y, found > SYNC_BACK ? found - SYNC_BACK : 0);
            break;
        }
    }
    S->off += len;
    return rc;
}

/* check, at the end: the last piece, and the rest of the file hashed. */
static int check_end(cg_stream *S, cg_error *err)
{
    struct cg_stream_sync *y = S->sync;
    if (y->diverged) {
        push_piece(S, y->sub_new, y->sub_kept, S->off - y->sub_new, true);
    } else {
        size_t q = S->off - y->run_new + y->run_old;
        push_piece(S, y->run_new, y->run_old, S->off - y->run_new, false);
        if (old_fill(S, q + 1, err) != 0)
            return -1;
        S->differs |= y->ow_start + y->ow_len > q; /* the file goes on */
    }
    free(y->ow);
    y->ow = NULL;
    y->ow_len = y->ow_cap = 0;
    free(y->tab);
    y->tab = NULL;
    y->tcap = y->tn = 0;
    return stream_old(S, SIZE_MAX, NULL, 0, 0, err);
}

/* The bytes [off, off + n) of the file on disk, again: small reads from
 * a block read at once (the report reads both configs in small pieces,
 * mostly in order, and a system call costs more than the copy). */
static void pread_direct(cg_stream_reader *r, size_t off, char *buf, size_t n);

static void pread_all(cg_stream_reader *r, size_t off, char *buf, size_t n)
{
    if (n >= SYNC_CACHE / 4) {
        pread_direct(r, off, buf, n);
        return;
    }
    /* a block that holds it, else the one read from longest ago, read
     * again from here */
    size_t k = CG_READER_BLOCKS, old = 0;
    for (size_t i = 0; i < CG_READER_BLOCKS && k == CG_READER_BLOCKS; i++) {
        if (r->block[i].buf && off >= r->block[i].off && off + n <= r->block[i].off + r->block[i].len)
            k = i;
        else if (r->block[i].used < r->block[old].used)
            old = i;
    }
    if (k == CG_READER_BLOCKS) {
        k = old;
        if (!r->block[k].buf)
            r->block[k].buf = cg_xmalloc(SYNC_CACHE);
        r->block[k].off = off & ~(size_t)4095, r->block[k].len = 0;
        while (r->block[k].len < SYNC_CACHE) {
            ssize_t got = pread(r->S->old_fd, r->block[k].buf + r->block[k].len, SYNC_CACHE - r->block[k].len,
                                (off_t)(r->block[k].off + r->block[k].len));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            r->block[k].len += (size_t)got;
        }
        if (off + n > r->block[k].off + r->block[k].len) { /* past the end, or an error: said once */
            pread_direct(r, off, buf, n);
            return;
        }
    }
    r->block[k].used = ++r->clock;
    memcpy(buf, r->block[k].buf + (off - r->block[k].off), n);
}

static void pread_direct(cg_stream_reader *r, size_t off, char *buf, size_t n)
{
    while (n) {
        ssize_t got = pread(r->S->old_fd, buf, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (!r->err)
                r->err = got < 0 ? errno : -1;
            memset(buf, 0, n);
            return;
        }
        buf += got, off += (size_t)got, n -= (size_t)got;
    }
}

static void read_disk(void *ctx, size_t off, char *buf, size_t n)
{
    pread_all(ctx, off, buf, n);
}

/* The piece of the rendered config that holds its byte `off` (past the
 * head), or NULL; `hint`: the one found last (reads go forward), looked
 * at first with the one after it. */
static const cg_stream_piece *piece_at(const cg_stream *S, size_t off, size_t *hint)
{
    for (size_t h = *hint; h < S->npieces && h <= *hint + 1; h++)
        if (off >= S->pieces[h].at && off < S->pieces[h].at + S->pieces[h].len)
            return &S->pieces[*hint = h];
    size_t lo = 0, hi = S->npieces;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (S->pieces[mid].at <= off)
            lo = mid;
        else
            hi = mid;
    }
    const cg_stream_piece *pc = S->npieces ? &S->pieces[lo] : NULL;
    *hint = lo;
    return pc && off >= pc->at && off < pc->at + pc->len ? pc : NULL;
}

static void read_rendered(void *ctx, size_t off, char *buf, size_t n)
{
    cg_stream_reader *r = ctx;
    const cg_stream *S = r->S;
    while (n) {
        size_t c;
        if (off < S->head.len) {
            c = S->head.len - off < n ? S->head.len - off : n;
            memcpy(buf, S->head.buf + off, c);
        } else {
            const cg_stream_piece *pc = piece_at(S, off, &r->piece);
            if (!pc) { /* never: the pieces cover it */
                memset(buf, 0, n);
                r->err = r->err ? r->err : -1;
                return;
            }
            c = pc->at + pc->len - off < n ? pc->at + pc->len - off : n;
            if (pc->kept)
                memcpy(buf, S->kept.buf + pc->off + (off - pc->at), c);
            else
                pread_all(r, pc->off + (off - pc->at), buf, c);
        }
        buf += c, off += c, n -= c;
    }
}

/* The bytes from `off` on of the rendered config that are the committed
 * file's from `old_off` on (cg_diff_src.same): a piece not kept is read
 * from the file, so it is the file's bytes where it maps to. */
static size_t same_rendered(void *ctx, size_t off, size_t old_off)
{
    cg_stream_reader *r = ctx;
    const cg_stream *S = r->S;
    const cg_stream_piece *pc = off < S->head.len ? NULL : piece_at(S, off, &r->piece);
    if (!pc || pc->kept || pc->off + (off - pc->at) != old_off)
        return 0;
    size_t n = pc->at + pc->len - off;
    /* the pieces after it that go on in the file where it stops */
    for (const cg_stream_piece *q = pc + 1; q < S->pieces + S->npieces; q++) {
        if (q->kept || q->at != q[-1].at + q[-1].len || q->off != q[-1].off + q[-1].len)
            break;
        n += q->len;
    }
    return n;
}

/* ---- check: the committed config's part of the job-level report ----
 *
 * It needs nothing of the rendered config.  It is read on a thread of its
 * own, at the lowest priority (the render, the diagrams and the writer
 * come first, and it takes the time they leave a core idle), from the
 * first chunk on when the committed config's header says its sources
 * changed (a template edited: most of the config will differ), else from
 * the first difference on (a hand edit).  The report joins it; the time it
 * still needs then is on the core the report's other half does not use.
 * Not started for an output in sync: nothing is read for nothing. */
/* the pace it must keep once joined: the whole config in PRESCAN_POLLS
 * spans of PRESCAN_POLL_MS (0.64 s: an idle core reads 100k jobs' in 0.3 s) */
enum { PRESCAN_POLL_MS = 20, PRESCAN_POLLS = 32 };

struct cg_stream_prescan {
    pthread_t th;
    bool joined;
    cg_stream_reader r;
    cg_diff_src src;
    cg_report_scan_ctl ctl;
    bool test_stop;         /* CIGEN_TEST_PRESCAN_STOP: stopped before it reads (as if busy) */
    cg_report_old *o;
};

static void *prescan_run(void *v)
{
    struct cg_stream_prescan *ps = v;
    cg_thread_yield_priority();
    while (ps->test_stop && !atomic_load(&ps->ctl.stop))
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    ps->o = cg_report_old_scan_ctl(&ps->src, &ps->ctl);
    return NULL;
}

static void prescan_start(cg_stream *S)
{
    struct stat st;
    if (S->prescan || !cg_threads_allowed() || fstat(S->old_fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (uintmax_t)st.st_size > CG_REPORT_MAX_BYTES) /* (no job-level report past that) */
        return;
    struct cg_stream_prescan *ps = cg_xcalloc(1, sizeof *ps);
    cg_stream_reader_init(&ps->r, S);
    ps->src = (cg_diff_src){(size_t)st.st_size, read_disk, &ps->r, NULL};
    ps->test_stop = getenv("CIGEN_TEST_PRESCAN_STOP") != NULL;
    if (pthread_create(&ps->th, NULL, prescan_run, ps) != 0) {
        free(ps);
        return;
    }
    S->prescan = ps;
}

cg_report_old *cg_stream_prescan_join(const cg_stream *S)
{
    struct cg_stream_prescan *ps = S->prescan;
    if (!ps || ps->joined)
        return NULL;
    /* Not done by the time the config is rendered (the render, the
     * diagrams and the writer may leave it little): it finishes on the core
     * the diff leaves, as long as it moves on at the pace of an idle core.
     * Slower (the machine is busy, and at its priority the rest could take
     * seconds): stopped, and read again at the report's priority. */
    size_t at = atomic_load(&ps->ctl.at);
    if (ps->test_stop)
        atomic_store(&ps->ctl.stop, true);
    /* looked at every millisecond (done?), its pace every PRESCAN_POLL_MS */
    for (unsigned ms = 1; !atomic_load(&ps->ctl.stop) && atomic_load(&ps->ctl.at) != SIZE_MAX; ms++) {
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        if (ms % PRESCAN_POLL_MS)
            continue;
        size_t now = atomic_load(&ps->ctl.at);
        if (now != SIZE_MAX && now - at < ps->src.len / PRESCAN_POLLS)
            atomic_store(&ps->ctl.stop, true);
        at = now;
    }
    pthread_join(ps->th, NULL);
    ps->joined = true;
    cg_stream_reader_release(&ps->r);
    cg_report_old *o = ps->o;
    ps->o = NULL;
    if (ps->r.err) { /* read again by the report, which says so */
        cg_report_old_free(o);
        o = NULL;
    }
    return o;
}

static int stream_write(void *ctx, const char *data, size_t len, cg_error *err)
{
    cg_stream *S = ctx;
    const cg_manifest *m = &S->p->m.manifest;
    if (!S->buf) {
        S->buf = cg_xmalloc(STREAM_BUF);
        /* a FIFO, a folder, ...: refused as the in-memory path refuses them
         * (lint: not the config, as cg_output_matches says) */
        cg_error ignored;
        cg_error_init(&ignored);
        int orc = cg_output_open(S->p->m.root, m->output, &m->output_pos, S->compare_only ? "compare" : "write",
                                 &S->old_fd, S->forget ? &ignored : err);
        cg_error_release(&ignored);
        if (orc < 0 && S->forget) {
            S->old_fd = -1;
            S->differs = true;
        } else if (orc < 0) {
            return -1;
        }
        cg_sha256_init(&S->old_body);
        if (S->old_fd >= 0) {
            /* its header, for the digests it records */
            ssize_t r = pread(S->old_fd, S->buf, STREAM_BUF, 0);
            cg_header_parse(S->buf, r > 0 ? (size_t)r : 0, &S->old_h);
            if (S->compare_only && !S->forget) {
                S->sync = cg_xcalloc(1, sizeof *S->sync);
                S->sync->run_new = S->sync->run_old = S->p->out.header_len;
                if (S->old_h.found && strcmp(S->old_h.sources, S->p->m.sources_digest) != 0)
                    prescan_start(S);
            }
        } else if (!S->compare_only && (S->staged = cg_outputs_open(S->outs, m->output, &m->output_pos, err)) < 0) {
            return -1;
        }
    }
    if (S->sync)
        return check_write(S, data, len, err);
    if (S->old_fd >= 0 && !(S->compare_only && S->differs)) {
        /* compared with the old file (its header at the end, when its digests
         * are known); nothing is written while they are the same */
        size_t hl = S->p->out.header_len;
        bool was_same = !S->differs;
        if (read_old(S, S->off + len, data, S->off, S->off > hl ? S->off : hl, err) != 0)
            return -1;
        if (was_same && S->differs && !S->compare_only && stream_materialize(S, S->off, err) != 0)
            return -1;
    }
    if (S->staged >= 0 && cg_outputs_append(S->outs, S->staged, data, len, err) != 0)
        return -1;
    S->off += len;
    return 0;
}

/* The chunks go to the background writer, which hashes them into the
 * config's body digest and hands them to stream_write on a second core. */
static int stream_put(void *ctx, cg_strbuf *chunk, size_t skip, cg_error *err)
{
    cg_stream *S = ctx;
    if (!S->bg)
        S->bg = cg_bgwrite_new(stream_write, S, &S->p->out.body_sha);
    return cg_bgwrite_put(S->bg, chunk, skip, err);
}

static int stream_finish(void *ctx, cg_error *err)
{
    cg_stream *S = ctx;
    int rc = cg_bgwrite_finish(S->bg, err);
    S->bg = NULL;
    return rc;
}

static int stream_header(void *ctx, const char *data, size_t len, cg_error *err)
{
    cg_stream *S = ctx;
    if (S->compare_only && !S->forget)
        cg_strbuf_add(&S->head, data, len);
    if (S->sync) {
        /* check: every byte of the file compared (or not: kept), its body hashed */
        if (check_end(S, err) != 0)
            return -1;
    }
    if (S->old_fd >= 0 && (S->sync || !(S->compare_only && S->differs))) {
        char *head = cg_xmalloc(len + 1);
        ssize_t r = pread(S->old_fd, head, len, 0);
        bool was_same = !S->differs;
        S->differs |= r != (ssize_t)len || memcmp(head, data, len) != 0;
        free(head);
        if (read_old(S, SIZE_MAX, NULL, 0, 0, err) != 0) /* the rest of the old body, hashed */
            return -1;
        S->differs |= S->old_off != S->off;
        if (was_same && S->differs && !S->compare_only && stream_materialize(S, S->off, err) != 0)
            return -1;
        unsigned char d[32];
        char body[41];
        cg_sha256_final(&S->old_body, d);
        cg_hex(d, 20, body);
        S->hand_edited = !S->old_h.found || strcmp(body, S->old_h.body) != 0;
        S->sources_changed = S->old_h.found && strcmp(S->old_h.sources, S->p->m.sources_digest) != 0;
    }
    if (S->staged >= 0 && (cg_outputs_patch(S->outs, S->staged, data, len, err) != 0 ||
                           cg_outputs_close(S->outs, S->staged, err) != 0))
        return -1;
    S->done = true;
    return 0;
}

void cg_stream_reader_init(cg_stream_reader *r, const cg_stream *S)
{
    memset(r, 0, sizeof *r);
    r->S = S;
}

void cg_stream_reader_release(cg_stream_reader *r)
{
    for (size_t i = 0; i < CG_READER_BLOCKS; i++) {
        free(r->block[i].buf);
        r->block[i].buf = NULL;
        r->block[i].len = 0;
    }
}

void cg_stream_src(cg_stream_reader *r, bool rendered, cg_diff_src *src)
{
    *src = rendered ? (cg_diff_src){r->S->off, read_rendered, r, same_rendered}
                    : (cg_diff_src){r->S->old_off, read_disk, r, NULL};
}

int cg_stream_read_error(const cg_stream_reader *r, cg_error *err)
{
    if (!r->err)
        return 0;
    const cg_manifest *m = &r->S->p->m.manifest;
    return cg_error_at(err, &m->output_pos, "cannot read '%s': %s", m->output,
                       r->err > 0 ? strerror(r->err) : "it changed while cigen read it");
}

void cg_stream_release(cg_stream *S)
{
    /* the writer first: a chunk in flight may start a reading */
    cg_bgwrite_finish(S->bg, &(cg_error){0});
    S->bg = NULL;
    if (S->prescan) { /* not wanted (no report, or joined): stopped at its next entry */
        struct cg_stream_prescan *ps = S->prescan;
        if (!ps->joined) {
            atomic_store(&ps->ctl.stop, true);
            pthread_join(ps->th, NULL);
        }
        cg_report_old_free(ps->o);
        cg_stream_reader_release(&ps->r);
        free(ps);
        S->prescan = NULL;
    }
    cg_strbuf_release(&S->kept);
    free(S->pieces);
    if (S->sync) {
        free(S->sync->ow);
        free(S->sync->tab);
        free(S->sync);
    }
    cg_strbuf_release(&S->head);
    if (S->old_fd >= 0)
        close(S->old_fd);
    free(S->buf);
}

void cg_stream_start(cg_project *p, cg_stream *S, cg_config_stream *sink, cg_outputs *outs)
{
    *S = (cg_stream){.p = p, .outs = outs, .staged = -1, .old_fd = -1, .compare_only = outs == NULL,
                     .kept = CG_STRBUF_INIT, .head = CG_STRBUF_INIT};
    /* configs larger than this are streamed while they are rendered (a
     * test lowers it to stream small ones too): check's report is the same
     * bytes either way (it keeps what it renders from a difference on), and
     * a generate with no config on disk has nothing to report, so both
     * stream any config past a chunk, never holding it whole; a generate
     * that replaces a config keeps it in memory up to the report's limit,
     * for the jobs its summary names */
    size_t threshold = CG_REPORT_MAX_BYTES;
    if (S->compare_only) {
        threshold = STREAM_BUF;
    } else {
        const cg_manifest *m = &p->m.manifest;
        cg_error ignored;
        cg_error_init(&ignored);
        int fd = -1;
        if (cg_output_open(p->m.root, m->output, &m->output_pos, "write", &fd, &ignored) == 1)
            threshold = STREAM_BUF; /* missing (an error is said again when the first chunk opens it) */
        if (fd >= 0)
            close(fd);
        cg_error_release(&ignored);
    }
    const char *keep = getenv("CIGEN_TEST_STREAM_BYTES");
    *sink = (cg_config_stream){keep ? (size_t)strtoull(keep, NULL, 10) : threshold, stream_put, stream_finish,
                               stream_write, stream_header, S};
    p->stream = sink;
}
