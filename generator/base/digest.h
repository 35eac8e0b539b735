/* digest — SHA-256 (FIPS 180-4), for the source and body digests that
 * config.yml's header records.
 * The hashing is nettle's (nettle-dev), which picks the CPU's SHA
 * instructions at run time where they exist. */
#ifndef CIGEN_DIGEST_H
#define CIGEN_DIGEST_H

#include <nettle/sha2.h>
#include <stddef.h>

typedef struct cg_sha256 {
    struct sha256_ctx ctx;
} cg_sha256;

void cg_sha256_init(cg_sha256 *s);
void cg_sha256_update(cg_sha256 *s, const void *data, size_t n);
/* Writes the digest; `s` must be initialised again before it is reused. */
void cg_sha256_final(cg_sha256 *s, unsigned char out[32]);
/* Lower-case hex of the first `nbytes` of the digest of data. */
void cg_sha256_hex(const void *data, size_t n, char *hex, size_t nbytes);
void cg_hex(const unsigned char *bytes, size_t n, char *hex);

#endif
