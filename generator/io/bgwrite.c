/* bgwrite — hashing and writing a streamed config on a second core.
 *
 * One thread for the whole config, started with the first chunk and handed
 * each next one under a mutex: starting a thread per chunk cost a few
 * hundred microseconds each on a virtual machine (60 chunks at 100k jobs,
 * 600 at 1M).  The chunk, its result and its error belong to the thread
 * from the handover until it says the chunk is done (both under the
 * mutex), so nothing else needs a lock. */
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
    int rc;           /* of the chunks done so far */
    cg_error err;     /* the first failure */
    bool reported;    /* err was handed to a caller */
    /* the thread, when one runs */
    bool started;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool busy;        /* `chunk` is the thread's until it clears this */
    bool quit;
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
    cg_bgwrite *b = arg;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->busy && !b->quit)
            pthread_cond_wait(&b->cond, &b->lock);
        if (!b->busy)
            break; /* quit, with nothing left */
        pthread_mutex_unlock(&b->lock);
        write_chunk(b);
        pthread_mutex_lock(&b->lock);
        b->busy = false;
        pthread_cond_broadcast(&b->cond);
    }
    pthread_mutex_unlock(&b->lock);
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

/* Starts the thread (once); false when there is none to be had. */
static bool start(cg_bgwrite *b)
{
    if (b->started)
        return true;
    if (!cg_threads_allowed() || pthread_mutex_init(&b->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&b->cond, NULL) != 0) {
        pthread_mutex_destroy(&b->lock);
        return false;
    }
    if (pthread_create(&b->thread, NULL, run, b) != 0) {
        pthread_cond_destroy(&b->cond);
        pthread_mutex_destroy(&b->lock);
        return false;
    }
    b->started = true;
    return true;
}

/* Waits until the chunk in flight (if any) is done. */
static void wait_chunk(cg_bgwrite *b)
{
    if (!b->started)
        return;
    pthread_mutex_lock(&b->lock);
    while (b->busy)
        pthread_cond_wait(&b->cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
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
    if (!start(b)) {
        write_chunk(b); /* no thread to be had: the same work, here */
        return 0;
    }
    pthread_mutex_lock(&b->lock);
    b->busy = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

int cg_bgwrite_finish(cg_bgwrite *b, cg_error *err)
{
    if (!b)
        return 0;
    wait_chunk(b);
    if (b->started) {
        pthread_mutex_lock(&b->lock);
        b->quit = true;
        pthread_cond_broadcast(&b->cond);
        pthread_mutex_unlock(&b->lock);
        pthread_join(b->thread, NULL);
        pthread_cond_destroy(&b->cond);
        pthread_mutex_destroy(&b->lock);
    }
    int rc = take_error(b, err);
    cg_strbuf_release(&b->chunk);
    cg_error_release(&b->err);
    free(b);
    return rc;
}
