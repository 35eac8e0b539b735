/* bgwrite — hashing and writing a streamed config on a second core.
 *
 * A config of hundreds of megabytes is rendered in chunks; each chunk is
 * hashed (the body digest) and given to the sink (compared with the file on
 * disk, written to the temporary file).  The background writer does that
 * for chunk k on its own thread while the renderer makes chunk k+1, so the
 * hashing and the write() system calls leave the rendering thread.
 *
 * The order of the bytes, of the sink's calls and of the hash is the order
 * of the chunks: the output is the same bytes as without the thread.  When
 * a thread cannot be started the chunk is handled in the caller's thread.
 */
#ifndef CIGEN_BGWRITE_H
#define CIGEN_BGWRITE_H

#include <stdbool.h>

#include "base/digest.h"
#include "base/diag.h"
#include "base/strbuf.h"

typedef struct cg_bgwrite cg_bgwrite;

/* Where a chunk's bytes go, in order; 0, or -1 with *err. */
typedef int cg_bgwrite_fn(void *ctx, const char *data, size_t len, cg_error *err);

/* The writer hands chunks to `write(ctx, ...)` and hashes them into `sha`;
 * neither may be touched by the caller until cg_bgwrite_finish(). */
cg_bgwrite *cg_bgwrite_new(cg_bgwrite_fn *write, void *ctx, cg_sha256 *sha);

/* Hands over chunk's bytes, of which the first `skip` are not hashed (the
 * header), after the previous chunk is done.  *chunk comes back empty, with
 * the buffer of that previous chunk for reuse.  Returns -1, with the error
 * of an earlier chunk's write in *err, when that one failed. */
int cg_bgwrite_put(cg_bgwrite *b, cg_strbuf *chunk, size_t skip, cg_error *err);

/* Waits for the last chunk and frees the writer.  Returns -1 when a chunk
 * failed, with its error in *err unless a put already gave it (that error
 * replaces any in *err: it came first in the output's order).  b may be
 * NULL. */
int cg_bgwrite_finish(cg_bgwrite *b, cg_error *err);

#endif
