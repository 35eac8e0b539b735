/* Small modules: placeholders, diff, digest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diff.h"
#include "base/digest.h"
#include "base/graph.h"
#include "lang/placeholder.h"
#include "testutil.h"
#include "base/util.h"

/* ---- placeholders ---- */

START_TEST(placeholder_segments)
{
    cg_pool pool;
    cg_pool_init(&pool);
    cg_pstr s;
    size_t off;
    const char *msg;
    const char *text = "pytorch/{{ os }}-{{cuda?}}{{ \"{{\" }}x";
    ck_assert_int_eq(cg_pstr_parse(text, strlen(text), &pool, &s, &off, &msg), 0);
    ck_assert_uint_eq(s.nsegs, 6);
    ck_assert_str_eq(s.segs[0].text, "pytorch/");
    ck_assert_int_eq(s.segs[1].kind, CG_SEG_NAME);
    ck_assert_str_eq(s.segs[1].text, "os");
    ck_assert(!s.segs[1].optional);
    ck_assert_str_eq(s.segs[3].text, "cuda");
    ck_assert(s.segs[3].optional);
    ck_assert_int_eq(s.segs[4].kind, CG_SEG_TEXT);
    ck_assert_str_eq(s.segs[4].text, "{{");
    ck_assert(!s.whole);
    ck_assert_int_eq(cg_pstr_parse("{{ x }}", 7, &pool, &s, &off, &msg), 0);
    ck_assert(s.whole);
    cg_pool_release(&pool);
}
END_TEST

START_TEST(placeholder_errors)
{
    static const struct {
        const char *text;
        size_t offset;
        const char *msg;
    } bad[] = {
        {"a {{ x", 2, "unterminated placeholder: '{{' without '}}'"},
        {"{{ }}", 0, "empty placeholder '{{ }}'"},
        {"{{ a b }}", 5, "expected '}}' to close the placeholder"},
        {"{{ 1x }}", 3, "a placeholder name starts with a letter or '_'"},
        {"{{ \"x }}", 0, "unterminated quoted text in placeholder"},
        {"{{ + }}", 0, "a placeholder holds a name, e.g. '{{ python }}'"},
    };
    cg_pool pool;
    cg_pool_init(&pool);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cg_pstr s;
        size_t off = 99;
        const char *msg = NULL;
        ck_assert_int_eq(cg_pstr_parse(bad[i].text, strlen(bad[i].text), &pool, &s, &off, &msg), -1);
        ck_assert_str_eq(msg, bad[i].msg);
        ck_assert_uint_eq(off, bad[i].offset);
    }
    cg_pool_release(&pool);
}
END_TEST

/* ---- diff ---- */

static char *unified(const char *a, const char *b, size_t max)
{
    cg_diff d;
    cg_diff_compute(a, strlen(a), b, strlen(b), &d);
    cg_strbuf out = CG_STRBUF_INIT;
    cg_diff_unified(&d, a, strlen(a), b, strlen(b), "a", "b", 1, max, &out);
    cg_diff_release(&d);
    return cg_strbuf_detach(&out, NULL);
}

START_TEST(diff_basic)
{
    char *u = unified("1\n2\n3\n4\n5\n", "1\n2\nthree\n4\n5\n", 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n");
    free(u);
    u = unified("a\nb\n", "a\nb\n", 0);
    ck_assert_str_eq(u, "");
    free(u);
    u = unified("", "x\n", 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n");
    free(u);
    u = unified("a\nb\nc\n", "a\nc\n", 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -1,3 +1,2 @@\n a\n-b\n c\n");
    free(u);
}
END_TEST

/* An added entry that repeats its neighbours is shown whole, from its least
 * indented line, wherever the shortest edit script happened to put it. */
START_TEST(diff_places_blocks)
{
    const char *a = "jobs:\n  - build:\n      name: x\n  - build:\n      name: z\n";
    const char *b = "jobs:\n  - build:\n      name: x\n  - build:\n      name: y\n  - build:\n      name: z\n";
    char *u = unified(a, b, 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -3,2 +3,4 @@\n       name: x\n+  - build:\n+      name: y\n   - build:\n");
    free(u);
    /* the same for removed lines */
    u = unified(b, a, 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -3,4 +3,2 @@\n       name: x\n-  - build:\n-      name: y\n   - build:\n");
    free(u);
}
END_TEST

/* A missing final newline is a difference, and says so. */
START_TEST(diff_final_newline)
{
    char *u = unified("a\nb", "a\nb\n", 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
    free(u);
    u = unified("a\x01\n", "a\n", 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-a\\x01\n+a\n");
    free(u);
}
END_TEST

START_TEST(diff_counts_and_bound)
{
    cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
    for (int i = 0; i < 100; i++) {
        cg_strbuf_addf(&a, "line %d\n", i);
        cg_strbuf_addf(&b, i % 10 == 0 ? "changed %d\n" : "line %d\n", i);
    }
    cg_diff d;
    cg_diff_compute(a.buf, a.len, b.buf, b.len, &d);
    ck_assert_uint_eq(d.n, 10);
    ck_assert_uint_eq(d.removed, 10);
    ck_assert_uint_eq(d.added, 10);
    cg_strbuf out = CG_STRBUF_INIT;
    cg_diff_unified(&d, a.buf, a.len, b.buf, b.len, "a", "b", 3, 4, &out);
    ck_assert(strstr(out.buf, "more changed lines not shown") != NULL);
    cg_strbuf_release(&out);
    cg_diff_release(&d);
    cg_strbuf_release(&a);
    cg_strbuf_release(&b);
}
END_TEST

START_TEST(diff_large_distance_falls_back)
{
    cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
    for (int i = 0; i < 6000; i++) {
        cg_strbuf_addf(&a, "a%d\n", i);
        cg_strbuf_addf(&b, "b%d\n", i);
    }
    cg_diff d;
    cg_diff_compute(a.buf, a.len, b.buf, b.len, &d);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_uint_eq(d.removed, 6000);
    ck_assert_uint_eq(d.added, 6000);
    cg_diff_release(&d);
    cg_strbuf_release(&a);
    cg_strbuf_release(&b);
}
END_TEST

/* ---- digest ---- */

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

/* Both implementations agree on every length around the block boundaries. */
START_TEST(sha256_implementations_agree)
{
    unsigned char data[700];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof data; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (unsigned char)(x >> 16);
    }
    for (size_t n = 0; n <= sizeof data; n += n < 200 ? 1 : 37) {
        char a[65], b[65];
        cg_sha256_force_portable(false);
        cg_sha256_hex(data, n, a, 32);
        cg_sha256_force_portable(true);
        cg_sha256_hex(data, n, b, 32);
        ck_assert_msg(strcmp(a, b) == 0, "length %zu: %s vs %s", n, a, b);
    }
    cg_sha256_force_portable(false);
}
END_TEST

/* ---- util: the helpers the hot paths lean on ---- */

static const char *name_at(const void *ctx, uint32_t id)
{
    return ((const char (*)[16])ctx)[id];
}

START_TEST(count_newlines_matches_a_loop)
{
    char buf[300];
    uint32_t x = 7;
    for (size_t n = 0; n <= sizeof buf; n++) {
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            /* newlines, their neighbours in value (0x0A +- 0x80), and anything */
            static const char pick[] = {'\n', '\n', (char)0x8A, 0x0B, 0x09, 'a', 0};
            buf[i] = (x >> 20) % 3 ? pick[(x >> 8) % 7] : (char)(x >> 12);
        }
        size_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += buf[i] == '\n';
        ck_assert_uint_eq(cg_count_newlines(buf, n), want);
    }
    /* every byte a newline: eight in a word, the most a word can add */
    memset(buf, '\n', sizeof buf);
    for (size_t n = 0; n <= sizeof buf; n++)
        ck_assert_uint_eq(cg_count_newlines(buf, n), n);
}
END_TEST

START_TEST(index_finds_what_it_holds)
{
    static char names[500][16];
    for (int i = 0; i < 500; i++)
        snprintf(names[i], sizeof names[i], "job_%d", i * 7);
    cg_index x;
    cg_index_init(&x, name_at, names);
    for (uint32_t i = 0; i < 500; i++)
        ck_assert_uint_eq(cg_index_add(&x, i), 0);
    ck_assert_uint_eq(cg_index_add(&x, 3), 4); /* a name already there: its entry + 1 */
    for (uint32_t i = 0; i < 500; i++)
        ck_assert_uint_eq(cg_index_get(&x, names[i], strlen(names[i])), i + 1);
    ck_assert_uint_eq(cg_index_get(&x, "job_1", 5), 0);
    ck_assert_uint_eq(cg_index_get(&x, "job_14x", 6), 3); /* a prefix: "job_14" */
    cg_index_release(&x);
}
END_TEST

/* A graph as edge lists, -1 for an edge to nowhere. */
typedef struct edge_lists {
    const int (*to)[3];
} edge_lists;

static size_t lists_degree(const void *ctx, size_t u)
{
    (void)ctx;
    (void)u;
    return 3;
}

static ptrdiff_t lists_target(const void *ctx, size_t u, size_t i)
{
    const edge_lists *e = ctx;
    return e->to[u][i];
}

static const char *letter(const void *ctx, size_t u)
{
    (void)ctx;
    static const char *const names[] = {"a", "b", "c", "d", "e"};
    return names[u];
}

START_TEST(graph_finds_the_first_cycle)
{
    /* a -> b -> c, c -> d -> b (the cycle), e -> e (met later); -1 skipped */
    static const int to[5][3] = {{1, -1, -1}, {2, -1, -1}, {-1, 3, -1}, {-1, -1, 1}, {4, -1, -1}};
    edge_lists e = {to};
    cg_cycle c;
    ck_assert(cg_graph_find_cycle(&(cg_graph){5, lists_degree, lists_target, &e}, &c));
    ck_assert_uint_eq(c.len, 3);
    ck_assert_uint_eq(c.nodes[0], 1);
    ck_assert_uint_eq(c.nodes[2], 3);
    ck_assert_uint_eq(c.edge, 2); /* d's third edge closes it */
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_cycle_describe(&c, letter, NULL, &sb);
    ck_assert_str_eq(sb.buf, "b -> c -> d -> b");
    cg_strbuf_release(&sb);
    cg_cycle_release(&c);
    /* without d -> b the only cycle left is e -> e */
    static const int to2[5][3] = {{1, -1, -1}, {2, -1, -1}, {-1, 3, -1}, {-1, -1, -1}, {4, -1, -1}};
    e.to = to2;
    ck_assert(cg_graph_find_cycle(&(cg_graph){5, lists_degree, lists_target, &e}, &c));
    ck_assert_uint_eq(c.len, 1);
    ck_assert_uint_eq(c.nodes[0], 4);
    cg_cycle_release(&c);
    static const int to3[5][3] = {{1, -1, -1}, {2, -1, -1}, {-1, 3, -1}, {-1, -1, -1}, {-1, -1, -1}};
    e.to = to3;
    ck_assert(!cg_graph_find_cycle(&(cg_graph){5, lists_degree, lists_target, &e}, &c));
    ck_assert_uint_eq(c.len, 0);
}
END_TEST

Suite *make_util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, count_newlines_matches_a_loop);
    tcase_add_test(tc, index_finds_what_it_holds);
    tcase_add_test(tc, graph_finds_the_first_cycle);
    suite_add_tcase(s, tc);
    return s;
}

Suite *make_placeholder_suite(void)
{
    Suite *s = suite_create("placeholder");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, placeholder_segments);
    tcase_add_test(tc, placeholder_errors);
    suite_add_tcase(s, tc);
    return s;
}

Suite *make_diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_add_test(tc, diff_basic);
    tcase_add_test(tc, diff_places_blocks);
    tcase_add_test(tc, diff_final_newline);
    tcase_add_test(tc, diff_counts_and_bound);
    tcase_add_test(tc, diff_large_distance_falls_back);
    suite_add_tcase(s, tc);
    return s;
}

Suite *make_digest_suite(void)
{
    Suite *s = suite_create("digest");
    TCase *tc = tcase_create("sha256");
    tcase_add_loop_test(tc, sha256_vectors, 0, 2);
    tcase_add_test(tc, sha256_implementations_agree);
    suite_add_tcase(s, tc);
    return s;
}
