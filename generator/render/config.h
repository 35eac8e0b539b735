/* config — the whole config.yml, rendered from the model.
 *
 *   header (render/header.h) + the fragments, verbatim, with the generated
 *   workflows written in their place (render/assemble.h, render/entry.h)
 *
 * A pure function of the model: bytes and the line map out, no file read,
 * no thread started.  A config too large to keep in memory is handed on in
 * chunks to a cg_config_stream as it is rendered (the command decides where
 * they go: compared with the file on disk, written to a temporary file, on
 * a second thread); only its tail stays in `config`.
 */
#ifndef CIGEN_CONFIG_H
#define CIGEN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/digest.h"
#include "model/model.h"
#include "render/assemble.h"
#include "render/entry.h"

typedef struct cg_config {
    cg_strbuf config;         /* config.yml (only its tail when streamed) */
    size_t config_size;       /* bytes of config.yml, streamed ones included */
    size_t header_len;        /* bytes of the generated header */
    size_t streamed;          /* bytes of config.yml given to the stream */
    cg_sha256 body_sha;       /* of the body, as it is rendered */
    cg_linemap linemap;       /* config.yml's lines -> sources */
    char body_digest[41];
} cg_config;

/* Where the chunks of a large config go.  Once the config is longer than
 * `keep` bytes, put() gets its bytes in order, a chunk at a time (the first
 * `skip` bytes of a chunk are header, not body), and must hash the body
 * bytes into `body_sha` of the config being rendered by the time finish()
 * returns; it gives *chunk back empty (its buffer may be reused).  Then
 * write() gets the tail (already hashed), and header() the final header, of
 * the same length as the first one. */
typedef struct cg_config_stream {
    size_t keep;
    int (*put)(void *ctx, cg_strbuf *chunk, size_t skip, cg_error *err);
    int (*finish)(void *ctx, cg_error *err);
    int (*write)(void *ctx, const char *data, size_t len, cg_error *err);
    int (*header)(void *ctx, const char *data, size_t len, cg_error *err);
    void *ctx;
} cg_config_stream;

void cg_config_init(cg_config *c);
void cg_config_release(cg_config *c);

/* Renders the model into *out (stream and observer may be NULL). */
int cg_config_render(const cg_model *m, const cg_config_stream *stream, const cg_entry_observer *observer,
                     cg_config *out, cg_error *err);

#endif
