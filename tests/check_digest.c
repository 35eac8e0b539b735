/* base/digest: SHA-256 (nettle's), the same digests as every other SHA-256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "testutil.h"
#include "base/util.h"

START_TEST(sha256_vectors)
{
    char hex[65];
    cg_sha256_hex("", 0, hex, 32);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cg_sha256_hex("abc", 3, hex, 32);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    cg_sha256_hex(m, strlen(m), hex, 32);
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* streaming in odd pieces gives the same digest */
    cg_sha256 s;
    cg_sha256_init(&s);
    for (size_t i = 0; i < strlen(m); i += 7)
        cg_sha256_update(&s, m + i, strlen(m) - i < 7 ? strlen(m) - i : 7);
    unsigned char d[32];
    cg_sha256_final(&s, d);
    cg_hex(d, 32, hex);
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    cg_sha256_hex(million, 1000000, hex, 32);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
    /* a prefix: the header records the first 20 bytes */
    cg_sha256_hex("abc", 3, hex, 20);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a3");
}
END_TEST

/* Every length around the block boundaries, fed whole and in pieces of 1, 63,
 * 64 and 65 bytes, gives one digest; the whole 700 bytes give the digest
 * Python's hashlib computes for them. */
START_TEST(sha256_pieces_agree)
{
    unsigned char data[700];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof data; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (unsigned char)(x >> 16);
    }
    static const size_t piece[] = {1, 63, 64, 65};
    for (size_t n = 0; n <= sizeof data; n += n < 200 ? 1 : 37) {
        char whole[65], parts[65];
        cg_sha256_hex(data, n, whole, 32);
        for (size_t k = 0; k < sizeof piece / sizeof *piece; k++) {
            cg_sha256 s;
            unsigned char d[32];
            cg_sha256_init(&s);
            for (size_t i = 0; i < n; i += piece[k])
                cg_sha256_update(&s, data + i, n - i < piece[k] ? n - i : piece[k]);
            cg_sha256_final(&s, d);
            cg_hex(d, 32, parts);
            ck_assert_msg(strcmp(whole, parts) == 0, "length %zu, pieces of %zu: %s vs %s", n, piece[k], whole,
                          parts);
        }
    }
    char hex[65];
    cg_sha256_hex(data, sizeof data, hex, 32);
    ck_assert_str_eq(hex, "e62e3c2df516227d1ef0db5c462cc02ebb92eaf1edaa398a0e6d3f10d9eb3bfe");
}
END_TEST

Suite *make_digest_suite(void)
{
    Suite *s = suite_create("digest");
    TCase *tc = tcase_create("sha256");
    tcase_add_test(tc, sha256_vectors);
    tcase_add_test(tc, sha256_pieces_agree);
    suite_add_tcase(s, tc);
    return s;
}
