/* base/util: the helpers the hot paths lean on; base/graph: the cycle finder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/graph.h"
#include "testutil.h"
#include "base/util.h"

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
