/* digest — SHA-256 (FIPS 180-4), for the source and body digests that
 * config.yml's header records. */
#ifndef CIGEN_DIGEST_H
#define CIGEN_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cg_sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t used;
    bool shani;   /* the CPU's SHA instructions are used (chosen by init) */
} cg_sha256;

void cg_sha256_init(cg_sha256 *s);
void cg_sha256_update(cg_sha256 *s, const void *data, size_t n);
void cg_sha256_final(cg_sha256 *s, unsigned char out[32]);
/* Lower-case hex of the first `nbytes` of the digest of data. */
void cg_sha256_hex(const void *data, size_t n, char *hex, size_t nbytes);
void cg_hex(const unsigned char *bytes, size_t n, char *hex);
/* Tests: use the portable code even where the CPU has SHA instructions. */
void cg_sha256_force_portable(bool on);

#endif
