/* Streaming a large config.yml (cmd/stream.h). */
#include "cmd/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        } else if (!S->compare_only && (S->staged = cg_outputs_open(S->outs, m->output, &m->output_pos, err)) < 0) {
            return -1;
        }
    }
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
    if (S->compare_only && S->differs && !S->forget) {
        if (!S->keeping)
            S->keeping = true, S->kept_from = S->off;
        cg_strbuf_add(&S->kept, data, len);
    }
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
    if (S->old_fd >= 0 && !(S->compare_only && S->differs)) {
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

int cg_stream_text(cg_stream *S, cg_strbuf *out, cg_error *err)
{
    const cg_manifest *m = &S->p->m.manifest;
    const char *header = S->head.buf ? S->head.buf : "";
    size_t header_len = S->head.len;
    size_t from = S->keeping ? S->kept_from : S->off;
    cg_strbuf_init(out);
    cg_strbuf_grow(out, header_len + (from > header_len ? from - header_len : 0) + S->kept.len);
    cg_strbuf_add(out, header, header_len);
    /* the bytes before the first difference: the old file's (its header's
     * excepted) */
    for (size_t at = header_len; at < from;) {
        ssize_t r = pread(S->old_fd, out->buf + out->len, from - at, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            cg_strbuf_release(out);
            return cg_error_at(err, &m->output_pos, "cannot read '%s': %s", m->output,
                               r < 0 ? strerror(errno) : "it changed while cigen read it");
        }
        out->len += (size_t)r;
        at += (size_t)r;
    }
    size_t skip = from < header_len ? header_len - from : 0; /* kept from inside the header */
    if (skip < S->kept.len)
        cg_strbuf_add(out, S->kept.buf + skip, S->kept.len - skip);
    out->buf[out->len] = '\0';
    cg_strbuf_release(&S->kept); /* in *out now: never held twice while the report is made */
    return 0;
}

void cg_stream_release(cg_stream *S)
{
    cg_strbuf_release(&S->kept);
    cg_strbuf_release(&S->head);
    cg_bgwrite_finish(S->bg, &(cg_error){0});
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
