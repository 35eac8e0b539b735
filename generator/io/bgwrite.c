/* bgwrite — hashing and writing a streamed config on a second core.
 *
 * One thread per chunk, joined before the next one starts: a chunk is a
 * megabyte, so the few microseconds of pthread_create are lost in the
 * noise, and nothing needs a lock or a condition variable — pthread_join
 * orders everything the thread did before what the caller does next. */
#include <pthread.h>
#include <stdlib.h>

#include "io/bgwrite.h"
#include "base/util.h"

struct cg_bgwrite {
    cg_bgwrite_fn *write;
    void *ctx;
    cg_sha256 *sha;
    cg_strbuf chunk;  /* the chunk in flight */
    size_t skip;
    pthread_t thread;
    bool running;     /* a thread was started for `chunk` and not joined */
    int rc;           /* of the chunks done so far */
    cg_error err;     /* the first failure */
    bool reported;    /* err was handed to a caller */
};

static void write_chunk(cg_bgwrite *b)
{
    if (b->rc != 0)
        return;
    if (b->chunk.len > b->skip)
        cg_sha256_update(b->sha, b->chunk.buf + b->skip, b->chunk.len - b->skip);
    b->rc = b->write(b->ctx, b->chunk.buf, b->chunk.len, &b->err);
}

static void *run(void *arg)
{
    write_chunk(arg);
    return NULL;
}

cg_bgwrite *cg_bgwrite_new(cg_bgwrite_fn *write, void *ctx, cg_sha256 *sha)
{
    cg_bgwrite *b = cg_xcalloc(1, sizeof *b);
    b->write = write;
    b->ctx = ctx;
    b->sha = sha;
    cg_error_init(&b->err);
    return b;
}

static void wait_chunk(cg_bgwrite *b)
{
    if (b->running)
        pthread_join(b->thread, NULL);
    b->running = false;
}

/* Gives the first error to err (replacing what it held), once. */
static int take_error(cg_bgwrite *b, cg_error *err)
{
    if (b->rc == 0)
        return 0;
    if (!b->reported) {
        cg_error_release(err);
        *err = b->err;
        cg_error_init(&b->err);
        b->reported = true;
    }
    return -1;
}

int cg_bgwrite_put(cg_bgwrite *b, cg_strbuf *chunk, size_t skip, cg_error *err)
{
    wait_chunk(b);
    if (take_error(b, err) != 0)
        return -1;
    /* the caller's buffer goes to the writer; the finished one comes back */
    cg_strbuf done = b->chunk;
    b->chunk = *chunk;
    b->skip = skip;
    cg_strbuf_reset(&done);
    *chunk = done;
    if (cg_threads_allowed() && pthread_create(&b->thread, NULL, run, b) == 0)
        b->running = true;
    else
        write_chunk(b); /* no thread to be had: the same work, here */
    return 0;
}

int cg_bgwrite_finish(cg_bgwrite *b, cg_error *err)
{
    if (!b)
        return 0;
    wait_chunk(b);
    int rc = take_error(b, err);
    cg_strbuf_release(&b->chunk);
    cg_error_release(&b->err);
    free(b);
    return rc;
}
