#include "base/digest.h"

#include <stdbool.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void block(cg_sha256 *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void blocks_portable(cg_sha256 *s, const unsigned char *p, size_t n)
{
    for (; n; n--, p += 64)
        block(s, p);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* The SHA extensions (SHA-NI) do a 64 MB config in a fraction of the time
 * of the portable code; same digest, checked against it by the tests. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_shani(cg_sha256 *s, const unsigned char *p,
                                                                     size_t n)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&s->h[0]), 0xB1); /* CDAB */
    __m128i st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)&s->h[4]), 0x1B); /* HGFE */
    __m128i st0 = _mm_alignr_epi8(t, st1, 8);   /* ABEF */
    st1 = _mm_blend_epi16(st1, t, 0xF0);        /* CDGH */
    for (; n; n--, p += 64) {
        __m128i abef = st0, cdgh = st1, w[16];
        for (int i = 0; i < 16; i++) {
            if (i < 4)
                w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)), bswap);
            else
                w[i] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]),
                                                          _mm_alignr_epi8(w[i - 1], w[i - 2], 4)),
                                            w[i - 1]);
            __m128i m = _mm_add_epi32(w[i], _mm_loadu_si128((const __m128i *)(const void *)&K[4 * i]));
            st1 = _mm_sha256rnds2_epu32(st1, st0, m);
            st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(m, 0x0E));
        }
        st0 = _mm_add_epi32(st0, abef);
        st1 = _mm_add_epi32(st1, cdgh);
    }
    t = _mm_shuffle_epi32(st0, 0x1B);           /* FEBA */
    st1 = _mm_shuffle_epi32(st1, 0xB1);         /* DCHG */
    st0 = _mm_blend_epi16(t, st1, 0xF0);        /* DCBA */
    st1 = _mm_alignr_epi8(st1, t, 8);           /* HGFE */
    _mm_storeu_si128((__m128i *)(void *)&s->h[0], st0);
    _mm_storeu_si128((__m128i *)(void *)&s->h[4], st1);
}

static bool have_shani(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
#endif

static bool force_portable;

void cg_sha256_force_portable(bool on)
{
    force_portable = on;
}

static void blocks(cg_sha256 *s, const unsigned char *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (s->shani) {
        blocks_shani(s, p, n);
        return;
    }
#endif
    blocks_portable(s, p, n);
}

void cg_sha256_init(cg_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->len = 0;
    s->used = 0;
    /* chosen here, not in a static, so threads never race on it */
#if defined(__x86_64__) && defined(__GNUC__)
    s->shani = !force_portable && have_shani();
#else
    s->shani = false;
#endif
}

void cg_sha256_update(cg_sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->len += n;
    if (s->used) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->buf + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used < 64)
            return;
        blocks(s, s->buf, 1);
        s->used = 0;
    }
    blocks(s, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
    memcpy(s->buf, p, n);
    s->used = n;
}

void cg_sha256_final(cg_sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->len * 8;
    unsigned char pad = 0x80;
    cg_sha256_update(s, &pad, 1);
    unsigned char zero = 0;
    while (s->used != 56)
        cg_sha256_update(s, &zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    cg_sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
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
