#include "base/digest.h"

void cg_sha256_init(cg_sha256 *s)
{
    sha256_init(&s->ctx);
}

void cg_sha256_update(cg_sha256 *s, const void *data, size_t n)
{
    if (n)
        sha256_update(&s->ctx, n, data);
}

void cg_sha256_final(cg_sha256 *s, unsigned char out[32])
{
    sha256_digest(&s->ctx, SHA256_DIGEST_SIZE, out);
}

void cg_hex(const unsigned char *bytes, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[bytes[i] >> 4];
        hex[2 * i + 1] = digits[bytes[i] & 15];
    }
    hex[2 * n] = '\0';
}

void cg_sha256_hex(const void *data, size_t n, char *hex, size_t nbytes)
{
    cg_sha256 s;
    unsigned char d[32];
    cg_sha256_init(&s);
    cg_sha256_update(&s, data, n);
    cg_sha256_final(&s, d);
    cg_hex(d, nbytes > 32 ? 32 : nbytes, hex);
}
