/* base/diff: the unified diff of check's report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diff.h"
#include "testutil.h"
#include "base/util.h"

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
    /* escape sequences (C1's CSI too), line breaks and bytes that are not
     * UTF-8 are escaped as in messages: the report is valid UTF-8 */
    u = unified("a\x1b[31m\xc2\x9b\xff\xe2\x80\xa8\n", "b\n", 0);
    ck_assert_str_eq(u, "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-a\\x1b[31m\\u009b\\xff\\u2028\n+b\n");
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

/* One hunk of many changed lines stops at the budget, inside the hunk,
 * with a header that counts what it shows (issue 21: a 480,028-line hunk
 * was printed whole). */
START_TEST(diff_bound_inside_one_hunk)
{
    cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
    for (int i = 0; i < 1000; i++) {
        cg_strbuf_addf(&a, "line %d\n", i);
        cg_strbuf_addf(&b, i % 2 ? "changed %d\n" : "line %d\n", i);
    }
    cg_diff d;
    cg_diff_compute(a.buf, a.len, b.buf, b.len, &d);
    ck_assert_uint_eq(d.removed, 500);
    cg_strbuf out = CG_STRBUF_INIT;
    cg_diff_unified(&d, a.buf, a.len, b.buf, b.len, "a", "b", 3, 200, &out);
    size_t changed = 0, lines = 0;
    for (const char *p = out.buf; *p; p = strchr(p, '\n') + 1, lines++)
        changed += (*p == '-' || *p == '+') && strncmp(p, "--- ", 4) != 0 && strncmp(p, "+++ ", 4) != 0;
    ck_assert_uint_eq(changed, 200);
    ck_assert_uint_lt(lines, 320);
    /* lines 1-200 of a (100 changed) and of b: the header counts what is shown */
    ck_assert(strstr(out.buf, "@@ -1,200 +1,200 @@\n") != NULL);
    ck_assert(strstr(out.buf, "\n... (800 more changed lines not shown; use --full-diff)\n") != NULL);
    cg_strbuf_reset(&out);
    cg_diff_unified(&d, a.buf, a.len, b.buf, b.len, "a", "b", 3, 0, &out);
    ck_assert(strstr(out.buf, "not shown") == NULL);
    cg_strbuf_release(&out);
    cg_diff_release(&d);
    cg_strbuf_release(&a);
    cg_strbuf_release(&b);
}
END_TEST

/* A cut diff cuts a long line too, and says how much it left out; never
 * inside a UTF-8 character.  --full-diff (no budget) shows it whole. */
START_TEST(diff_bound_long_line)
{
    cg_strbuf a = CG_STRBUF_INIT;
    cg_strbuf_adds(&a, "#");
    for (int i = 0; i < 1000; i++)
        cg_strbuf_adds(&a, "\xc3\xa9"); /* e-acute, 2 bytes */
    cg_strbuf_adds(&a, "\n");
    cg_diff d;
    cg_diff_compute(a.buf, a.len, "x\n", 2, &d);
    cg_strbuf out = CG_STRBUF_INIT;
    cg_diff_unified(&d, a.buf, a.len, "x\n", 2, "a", "b", 3, 200, &out);
    const char *minus = strstr(out.buf, "\n-#") + 1;
    const char *more = strstr(minus, " ... (");
    ck_assert_ptr_nonnull(more);
    ck_assert_uint_le((size_t)(more - minus), CG_DIFF_MAX_WIDTH + 1);
    ck_assert_uint_eq((size_t)(more - minus - 2) % 2, 0); /* whole characters only */
    char want[100];
    snprintf(want, sizeof want, " ... (%zu more bytes of this line not shown; use --full-diff)\n",
             (size_t)2001 - (size_t)(more - minus - 1));
    ck_assert(strncmp(more, want, strlen(want)) == 0);
    cg_strbuf_reset(&out);
    cg_diff_unified(&d, a.buf, a.len, "x\n", 2, "a", "b", 3, 0, &out);
    ck_assert(strstr(out.buf, "not shown") == NULL);
    ck_assert(out.len > 2000);
    cg_strbuf_release(&out);
    cg_diff_release(&d);
    cg_strbuf_release(&a);
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

/* Two diffs of the same texts: the same hunks and counts (`what` and
 * `run` say which, when they differ). */
static void same_diff(const cg_diff *x, const cg_diff *y, const char *what, int run)
{
    ck_assert_msg(x->n == y->n && x->a_lines == y->a_lines && x->b_lines == y->b_lines && x->removed == y->removed &&
                      x->added == y->added,
                  "%s, run %d: %zu/%zu hunks, %zu/%zu and %zu/%zu lines, -%zu/%zu +%zu/%zu", what, run, x->n, y->n,
                  x->a_lines, y->a_lines, x->b_lines, y->b_lines, x->removed, y->removed, x->added, y->added);
    for (size_t i = 0; i < x->n; i++)
        ck_assert_msg(memcmp(&x->hunks[i], &y->hunks[i], sizeof *x->hunks) == 0, "%s, run %d: hunk %zu", what, run, i);
}

/* Splitting only the lines around the changes gives the hunks splitting
 * every line gives, blocks of repeated lines slid to the edge of the lines
 * split included (margins of 0 to 3 lines, random texts of few distinct
 * lines). */
START_TEST(diff_margin_same_as_whole)
{
    static const char *const pool[] = {"      - build:\n", "          name: x\n", "  - a\n", "\n", "b\n"};
    unsigned long r = 12345;
    for (int run = 0; run < 3000; run++) {
        cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
        size_t n = 1 + (r = r * 6364136223846793005ul + 1442695040888963407ul) % 40;
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ul + 1442695040888963407ul;
            const char *l = pool[(r >> 33) % 5];
            cg_strbuf_adds(&a, l);
            switch ((r >> 40) % 8) {
            case 0: break;                                    /* dropped from b */
            case 1: cg_strbuf_adds(&b, l); cg_strbuf_adds(&b, pool[(r >> 20) % 5]); break; /* one added */
            case 2: cg_strbuf_adds(&b, pool[(r >> 20) % 5]); break; /* replaced */
            default: cg_strbuf_adds(&b, l); break;
            }
        }
        if ((r >> 50) % 3 == 0 && a.len) /* no final newline */
            a.len--, a.buf[a.len] = '\0';
        cg_diff whole, part;
        cg_diff_compute_margin(a.buf ? a.buf : "", a.len, b.buf ? b.buf : "", b.len, SIZE_MAX, &whole);
        cg_diff_compute_margin(a.buf ? a.buf : "", a.len, b.buf ? b.buf : "", b.len, (size_t)run % 4, &part);
        same_diff(&whole, &part, "every line against a margin", run);
        cg_diff_release(&whole);
        cg_diff_release(&part);
        cg_strbuf_release(&a);
        cg_strbuf_release(&b);
    }
}
END_TEST

/* The lines of t, each "line\n" (the last one perhaps without). */
static size_t lines_of(const char *t, size_t len, const char ***v)
{
    size_t n = 0, cap = 0;
    *v = NULL;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(t + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - t) + 1 : len;
        cg_grow(v, &cap, n + 1, sizeof **v);
        (*v)[n++] = t + i;
        i = e;
    }
    return n;
}

static bool same_line(const char *x, const char *y)
{
    size_t i = 0;
    while (x[i] == y[i] && x[i] != '\n' && x[i])
        i++;
    return x[i] == y[i];
}

/* A region searched a window at a time (windowed above 2 to 60 lines,
 * margins of 0 to 3 lines and every line) is still a diff: the lines
 * outside its hunks are the same on both sides, in order, and the counts
 * add up (random texts of few distinct lines). */
START_TEST(diff_windowed_is_a_diff)
{
    static const char *const pool[] = {"      - build:\n", "          name: x\n", "  - a\n", "\n", "b\n", "c"};
    unsigned long r = 987654321;
    for (int run = 0; run < 1200; run++) {
        cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
        size_t n = 1 + (r = r * 6364136223846793005ul + 1442695040888963407ul) % 120;
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ul + 1442695040888963407ul;
            const char *l = pool[(r >> 33) % 5];
            cg_strbuf_adds(&a, l);
            switch ((r >> 40) % 12) {
            case 0: break;                                    /* dropped from b */
            case 1: cg_strbuf_adds(&b, l); cg_strbuf_adds(&b, pool[(r >> 20) % 5]); break; /* one added */
            case 2: cg_strbuf_adds(&b, pool[(r >> 20) % 5]); break; /* replaced */
            default: cg_strbuf_adds(&b, l); break;
            }
        }
        if ((r >> 50) % 3 == 0) /* no final newline */
            cg_strbuf_adds(&a, pool[5]);
        if ((r >> 52) % 3 == 0)
            cg_strbuf_adds(&b, pool[5]);
        size_t margin = (r >> 54) % 5 == 4 ? SIZE_MAX : (r >> 54) % 5;
        cg_diff_opts o = {margin, 2 + (size_t)run % 59};
        const char *ta = a.buf ? a.buf : "", *tb = b.buf ? b.buf : "";
        cg_diff d;
        cg_diff_compute_with(ta, a.len, tb, b.len, &o, &d);
        const char **la, **lb;
        size_t na = lines_of(ta, a.len, &la), nb = lines_of(tb, b.len, &lb);
        ck_assert_uint_eq(d.a_lines, na);
        ck_assert_uint_eq(d.b_lines, nb);
        size_t x = 0, y = 0, removed = 0, added = 0;
        for (size_t h = 0; h <= d.n; h++) {
            size_t as = h < d.n ? d.hunks[h].a_start : na, bs = h < d.n ? d.hunks[h].b_start : nb;
            ck_assert_msg(as - x == bs - y, "run %d: hunk %zu leaves %zu and %zu lines before it", run, h, as - x,
                          bs - y);
            for (; x < as; x++, y++)
                ck_assert_msg(same_line(la[x], lb[y]), "run %d: lines %zu and %zu differ outside a hunk", run, x, y);
            if (h < d.n) {
                x += d.hunks[h].a_len, removed += d.hunks[h].a_len;
                y += d.hunks[h].b_len, added += d.hunks[h].b_len;
            }
        }
        ck_assert_uint_eq(d.removed, removed);
        ck_assert_uint_eq(d.added, added);
        free(la);
        free(lb);
        cg_diff_release(&d);
        cg_strbuf_release(&a);
        cg_strbuf_release(&b);
    }
}
END_TEST

/* A large file with a change every tenth line (a template edit) is one
 * hunk per change, found in time, not one replaced block. */
START_TEST(diff_large_scattered_changes)
{
    cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
    for (int i = 0; i < 300000; i++) {
        cg_strbuf_addf(&a, "line %d\n", i);
        cg_strbuf_addf(&b, i % 10 == 5 ? "changed %d\n" : "line %d\n", i);
    }
    cg_diff d;
    cg_diff_compute(a.buf, a.len, b.buf, b.len, &d);
    ck_assert_uint_eq(d.n, 30000);
    ck_assert_uint_eq(d.removed, 30000);
    ck_assert_uint_eq(d.added, 30000);
    ck_assert_uint_eq(d.hunks[7].a_start, 75);
    ck_assert_uint_eq(d.hunks[7].a_len, 1);
    ck_assert_uint_eq(d.a_lines, 300000); /* counted 4 KB at a time, and past it */
    ck_assert_uint_eq(d.b_lines, 300000);
    cg_strbuf out = CG_STRBUF_INIT;
    cg_diff_unified(&d, a.buf, a.len, b.buf, b.len, "a", "b", 3, 200, &out);
    ck_assert(strstr(out.buf, "@@ -3,7 +3,7 @@\n line 2\n line 3\n line 4\n-line 5\n+changed 5\n") != NULL);
    ck_assert(strstr(out.buf, "(59800 more changed lines not shown") != NULL);
    cg_strbuf_release(&out);
    cg_diff_release(&d);
    cg_strbuf_release(&a);
    cg_strbuf_release(&b);
}
END_TEST

/* Line counts of texts of every length around the 16-byte blocks and the
 * 4080-byte runs they are counted in, '\n' anywhere (a blank line, the
 * last byte or not): a_lines and b_lines as a byte-by-byte count says. */
START_TEST(diff_line_counts)
{
    unsigned long r = 13579;
    for (size_t len = 0; len < 8200; len += 1 + len / 64) {
        char *a = cg_xmalloc(len + 1);
        size_t want = 0;
        for (size_t i = 0; i < len; i++) {
            r = r * 6364136223846793005ul + 1442695040888963407ul;
            a[i] = (r >> 60) < 3 || len % 5 == 0 ? '\n' : 'x'; /* (every fifth length all '\n') */
            want += a[i] == '\n';
        }
        want += len && a[len - 1] != '\n';
        cg_diff d;
        cg_diff_compute_with(a, len, "", 0, &(cg_diff_opts){.margin = 0, .large_region = 2}, &d);
        ck_assert_msg(d.a_lines == want, "length %zu: %zu lines, counted %zu", len, want, d.a_lines);
        cg_diff_release(&d);
        free(a);
    }
}
END_TEST

Suite *make_diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_add_test(tc, diff_basic);
    tcase_add_test(tc, diff_places_blocks);
    tcase_add_test(tc, diff_final_newline);
    tcase_add_test(tc, diff_counts_and_bound);
    tcase_add_test(tc, diff_bound_inside_one_hunk);
    tcase_add_test(tc, diff_bound_long_line);
    tcase_add_test(tc, diff_large_distance_falls_back);
    tcase_add_test(tc, diff_margin_same_as_whole);
    tcase_add_test(tc, diff_large_scattered_changes);
    tcase_add_test(tc, diff_windowed_is_a_diff);
    tcase_add_test(tc, diff_line_counts);
    /* (a 300,000-line diff under ThreadSanitizer takes several seconds: the
     * default 4 s is a hang guard for a plain build) */
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
