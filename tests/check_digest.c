/* base/digest: SHA-256, portable and with the CPU's SHA instructions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "testutil.h"
#include "base/util.h"

/* _i = 0: the CPU's SHA instructions where present; 1: the portable code. */
START_TEST(sha256_vectors)
{
    cg_sha256_force_portable(_i == 1);
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
    cg_sha256_force_portable(false);
}
END_TEST

/* Both implementations agree on every length around the block boundaries,
 * and with a reference: the SHA-256 of all those digests (as hex, one after
 * the other) computed by Python's hashlib. Without SHA-NI only the portable
 * code runs: the reference still checks it, and the test says so. */
START_TEST(sha256_implementations_agree)
{
    unsigned char data[700];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof data; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (unsigned char)(x >> 16);
    }
    cg_sha256 probe;
    cg_sha256_force_portable(false);
    cg_sha256_init(&probe);
    bool shani = probe.shani;
    if (!shani)
        fprintf(stderr, "sha256_implementations_agree: no SHA-NI on this CPU: only the portable code is checked\n");
    cg_sha256_force_portable(true);
    cg_sha256_init(&probe);
    ck_assert_msg(!probe.shani, "cg_sha256_force_portable(true) still uses SHA-NI");
    cg_sha256 all;
    cg_sha256_init(&all);
    for (size_t n = 0; n <= sizeof data; n += n < 200 ? 1 : 37) {
        char a[65], b[65];
        cg_sha256_force_portable(false);
        cg_sha256_hex(data, n, a, 32);
        cg_sha256_force_portable(true);
        cg_sha256_hex(data, n, b, 32);
        ck_assert_msg(strcmp(a, b) == 0, "length %zu: %s vs %s", n, a, b);
        cg_sha256_update(&all, a, 64);
    }
    unsigned char d[32];
    char hex[65];
    cg_sha256_final(&all, d);
    cg_hex(d, 32, hex);
    ck_assert_str_eq(hex, "97a982a7b07323b1c0de467f70b391125a62ac670c2a1ab55cc01c63e57d2299");
    cg_sha256_force_portable(false);
}
END_TEST

Suite *make_digest_suite(void)
{
    Suite *s = suite_create("digest");
    TCase *tc = tcase_create("sha256");
    tcase_add_loop_test(tc, sha256_vectors, 0, 2);
    tcase_add_test(tc, sha256_implementations_agree);
    suite_add_tcase(s, tc);
    return s;
}
