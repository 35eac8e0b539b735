#include "base/hash.h"

/* Eight bytes as a little-endian number, whatever the machine, so hashes
 * (and anything that might ever depend on them) are the same everywhere. */
static uint64_t load64le(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* A word-at-a-time multiplicative hash with a murmur3 finaliser: fast on
 * the long job names and paths cigen keys its maps by. */
uint64_t cg_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (len * 0x100000001B3ULL);
    for (; len >= 8; p += 8, len -= 8) {
        h ^= load64le(p, 8);
        h = (h << 29 | h >> 35) * 0x9FB21C651E98DF25ULL;
    }
    h ^= load64le(p, len);
    return mix64(h);
}
