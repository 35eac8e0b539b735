/* base/util: the helpers the hot paths lean on; base/graph: the cycle finder;
 * base/fpset: the compact duplicate check; io/paths: resolving beneath the
 * project folder. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fpset.h"
#include "base/graph.h"
#include "io/paths.h"
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

/* What a comment line cannot hold is found, whatever its kind, and
 * escaped by the writer of comments (render/header.c, model/special.c). */
START_TEST(comment_text_refuses_and_escapes_unprintables)
{
    static const struct {
        const char *s;
        size_t at, len; /* at == SIZE_MAX: printable */
    } cases[] = {
        {"make gen\ttab ok", SIZE_MAX, 0},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82", SIZE_MAX, 0},
        {"a\nb", 1, 1},
        {"a\rb", 1, 1},
        {"a\x1b[31m", 1, 1},
        {"a\x7f", 1, 1},
        {"a\xc2\x9b", 1, 2},          /* C1 CSI */
        {"a\xc2\x85", 1, 2},          /* NEL */
        {"a\xc2\xa0" "b", SIZE_MAX, 0},  /* NBSP is printable */
        {"a\xe2\x80\xa8", 1, 3},     /* LS */
        {"a\xef\xbb\xbf", 1, 3},     /* BOM */
        {"a\xef\xbf\xbe", 1, 3},     /* U+FFFE */
        {"a\xff", 1, 1},               /* not UTF-8 */
        {"a\xc3", 1, 1},               /* cut short */
        {"a\xc0\xaf", 1, 1},          /* overlong */
        {"a\xed\xa0\x80", 1, 1},     /* a surrogate */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len = 0;
        const char *bad = cg_line_breaker(cases[i].s, &len);
        if (cases[i].at == SIZE_MAX) {
            ck_assert_msg(bad == NULL, "case %zu: found %zu", i, (size_t)(bad - cases[i].s));
            continue;
        }
        ck_assert_msg(bad == cases[i].s + cases[i].at && len == cases[i].len, "case %zu", i);
    }
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_add_comment_text(&sb, "a\xc2\x9b\x1b\xff\xe2\x80\xa9 z\t");
    ck_assert_str_eq(cg_strbuf_str(&sb), "a\\u009B\\x1B\\xFF\\u2029 z\t");
    ck_assert_ptr_null(cg_line_breaker(cg_strbuf_str(&sb), NULL));
    cg_strbuf_release(&sb);
}
END_TEST

/* What cannot be part of a job name: what a comment line cannot hold,
 * and a tab; the first such character is named, and a message shows a
 * tab as \t (the rest is escaped when the message is formatted). */
START_TEST(name_breaker_names_the_first_unprintable)
{
    static const struct {
        const char *s, *why; /* why == NULL: fine in a job name */
    } cases[] = {
        {"linux_3.8 build", NULL},
        {"caf\xc3\xa9 \xc2\xa0", NULL},
        {"a\tb", "a tab"},
        {"a\tb\nc", "a tab"},
        {"a\nb\tc", "a line break"},
        {"a\rb", "a line break"},
        {"a\xc2\x85", "a line break"},   /* NEL */
        {"a\xe2\x80\xa8", "a line break"}, /* LS */
        {"a\xe2\x80\xa9", "a line break"}, /* PS */
        {"a\x1b[31m", "a control character"},
        {"a\x7f", "a control character"},
        {"a\xc2\x9b", "a control character"}, /* C1 CSI */
        {"a\xff", "a byte that is not UTF-8"},
        {"a\xed\xa0\x80", "a byte that is not UTF-8"},
        {"a\xef\xbb\xbf", "a character YAML does not allow"}, /* BOM */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *why = cg_name_breaker(cases[i].s);
        ck_assert_msg(cases[i].why ? why && strcmp(why, cases[i].why) == 0 : why == NULL, "case %zu: %s", i,
                      why ? why : "(none)");
    }
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_add_tabs_shown(&sb, "\ta\tb\x1b\t");
    ck_assert_str_eq(cg_strbuf_str(&sb), "\\ta\\tb\x1b\\t");
    cg_strbuf_release(&sb);
}
END_TEST

/* Branch names as `git check-ref-format --branch` takes them, and the few
 * more cigen refuses. */
START_TEST(branch_names_as_git_takes_them)
{
    static const char *const ok[] = {"main", "try-conda", "feat/x.y", "release/1.2-rc", "a@b", "caf\xc3\xa9",
                                     "x.lockfile"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        ck_assert_msg(cg_branch_name_problem(ok[i]) == NULL, "'%s': %s", ok[i], cg_branch_name_problem(ok[i]));
    static const char *const bad[] = {"", "-x", "@", "HEAD", "/a", "a/", "a//b", "a.", "a..b", "a@{1}", "a b", "a\tb",
                                      "a\x7f", "a~1", "a^", "a:b", "a?", "a*", "a[b", "a\\b", "it's", "a\"b",
                                      ".hidden", "x/.y", "x.lock", "x.lock/y", "feat/\xe2\x80\xae" "abc",
                                      "a\xe2\x81\xa6" "b", "a\xd8\x9c" "b", "a\xe2\x80\x8f" "b", "a\xc2\x85" "b", "a\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(cg_branch_name_problem(bad[i]) != NULL, "case %zu is taken", i);
    ck_assert_str_eq(cg_branch_name_problem("-x"), "it starts with '-'");
    ck_assert_str_eq(cg_branch_name_problem("x.lock"), "a part of it ends with '.lock'");
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

/* ---- paths: resolving beneath the project folder ---- */

typedef int (*open_fn)(int, const char *, int, mode_t);

/* errno of opening rel beneath dir with fn (0: it opened). */
static int open_errno(open_fn fn, int dir, const char *rel, int flags)
{
    int fd = fn(dir, rel, flags, 0);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno;
}

static void check_beneath(open_fn fn)
{
    char *t = tu_mkdtemp();
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/proj", t);
    ck_assert_int_eq(mkdir(p.buf, 0777), 0);
    cg_strbuf_addf(&p, "/a");
    ck_assert_int_eq(mkdir(p.buf, 0777), 0);
    cg_strbuf_addf(&p, "/b.txt");
    tu_writes(p.buf, "b");
    cg_strbuf_reset(&p);
    cg_strbuf_addf(&p, "%s/secret", t);
    tu_writes(p.buf, "s");
    cg_strbuf_reset(&p);
    cg_strbuf_addf(&p, "%s/proj", t);
    int root = open(p.buf, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(root, 0);
    ck_assert_int_eq(symlinkat("/etc", root, "abs"), 0);
    ck_assert_int_eq(symlinkat("../secret", root, "up"), 0);
    ck_assert_int_eq(symlinkat("a", root, "in"), 0);
    ck_assert_int_eq(symlinkat("../a/b.txt", root, "a/viaup"), 0);
    ck_assert_int_eq(symlinkat("../../secret", root, "a/out"), 0);
    ck_assert_int_eq(symlinkat("loop", root, "loop"), 0);
    ck_assert_int_eq(symlinkat("/proc/self/root/etc/hostname", root, "magic"), 0);
    ck_assert_int_eq(open_errno(fn, root, "a/b.txt", O_RDONLY), 0);
    ck_assert_int_eq(open_errno(fn, root, "./a//b.txt", O_RDONLY), 0);
    ck_assert_int_eq(open_errno(fn, root, "a/../a/b.txt", O_RDONLY), 0);
    ck_assert_int_eq(open_errno(fn, root, "in/b.txt", O_RDONLY), 0);      /* a link inside */
    ck_assert_int_eq(open_errno(fn, root, "in/viaup", O_RDONLY), 0);      /* up, but inside */
    ck_assert_int_eq(open_errno(fn, root, "a", O_RDONLY | O_DIRECTORY), 0);
    ck_assert_int_eq(open_errno(fn, root, "", O_RDONLY | O_DIRECTORY), 0);
    ck_assert_int_eq(open_errno(fn, root, "../proj/a/b.txt", O_RDONLY), EXDEV);
    ck_assert_int_eq(open_errno(fn, root, "abs/hostname", O_RDONLY), EXDEV);
    ck_assert_int_eq(open_errno(fn, root, "abs", O_RDONLY), EXDEV);
    ck_assert_int_eq(open_errno(fn, root, "up", O_RDONLY), EXDEV);
    ck_assert_int_eq(open_errno(fn, root, "in/out", O_RDONLY), EXDEV);
    ck_assert_int_eq(open_errno(fn, root, "magic", O_RDONLY), EXDEV);
    ck_assert_int_eq(open_errno(fn, root, "loop", O_RDONLY), ELOOP);
    ck_assert_int_eq(open_errno(fn, root, "in", O_RDONLY | O_NOFOLLOW), ELOOP);
    ck_assert_int_eq(open_errno(fn, root, "a/none", O_RDONLY), ENOENT);
    ck_assert_int_eq(open_errno(fn, root, "a/b.txt/c", O_RDONLY), ENOTDIR);
    close(root);
    cg_strbuf_release(&p);
    tu_rm_rf(t);
    free(t);
}

/* The kernel's way (openat2) and the walk agree: links inside are
 * followed, every way out is EXDEV. */
START_TEST(open_beneath_stays_inside)
{
    check_beneath(cg_open_beneath);
    check_beneath(cg_open_beneath_walk);
}
END_TEST

/* git's folder, reached by name (any case), through a link, or as the git
 * dir a worktree's .git file names. */
START_TEST(dir_in_git_found_however_reached)
{
    char *t = tu_mkdtemp();
    int root = open(t, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(root, 0);
    ck_assert_int_eq(mkdirat(root, ".git", 0777), 0);
    ck_assert_int_eq(mkdirat(root, ".git/hooks", 0777), 0);
    ck_assert_int_eq(mkdirat(root, "sub", 0777), 0);
    ck_assert_int_eq(mkdirat(root, "sub/.GIT", 0777), 0);
    ck_assert_int_eq(mkdirat(root, "wt", 0777), 0);
    ck_assert_int_eq(symlinkat(".git/hooks", root, "h"), 0);
    static const struct { const char *dir; int in; const char *where; } cases[] = {
        {"", 0, NULL}, {"sub", 0, NULL}, {".git", 1, ".git"}, {"h", 1, ".git/hooks"},
        {"sub/.GIT", 1, "sub/.GIT"}, {"wt", 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int d = cg_open_beneath(root, cases[i].dir, O_RDONLY | O_DIRECTORY, 0);
        ck_assert_int_ge(d, 0);
        char *where = NULL;
        ck_assert_int_eq(cg_dir_in_git(root, d, &where), cases[i].in);
        if (cases[i].where)
            ck_assert_str_eq(where, cases[i].where);
        free(where);
        close(d);
    }
    /* a worktree: .git is a file naming the git dir */
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/wt/.git", t);
    tu_writes(p.buf, "gitdir: ../sub\n");
    int wt = cg_open_beneath(root, "wt", O_RDONLY | O_DIRECTORY, 0);
    int sub = cg_open_beneath(wt, "../sub", O_RDONLY | O_DIRECTORY, 0);
    ck_assert_int_eq(sub, -1); /* beneath wt: not reachable */
    sub = openat(wt, "../sub", O_RDONLY | O_DIRECTORY);
    char *where = NULL;
    ck_assert_int_eq(cg_dir_in_git(wt, sub, &where), -1); /* not beneath wt */
    close(sub);
    cg_strbuf_reset(&p);
    cg_strbuf_addf(&p, "%s/wt/gd", t);
    ck_assert_int_eq(mkdir(p.buf, 0777), 0);
    cg_strbuf_reset(&p);
    cg_strbuf_addf(&p, "%s/wt/.git", t);
    tu_writes(p.buf, "gitdir: gd\n");
    int gd = cg_open_beneath(wt, "gd", O_RDONLY | O_DIRECTORY, 0);
    ck_assert_int_eq(cg_dir_in_git(wt, gd, &where), 1);
    ck_assert_str_eq(where, "gd");
    free(where);
    close(gd);
    close(wt);
    close(root);
    cg_strbuf_release(&p);
    tu_rm_rf(t);
    free(t);
}
END_TEST

/* base/fpset: a twin (two hashes with the same top CG_FPSET_BITS bits) is
 * found wherever the two are (one run, two runs, a run and the buffer), and
 * never where all differ, however the fingerprints are spread. */
#define FP_LOW (CG_FPSET_BITS - CG_FPSET_RUN_LOG)
#define FP_RUN ((size_t)1 << CG_FPSET_RUN_LOG)
static uint64_t fp_of(uint64_t i, int spread)
{
    uint64_t f = spread == 0 ? i                                      /* all in one high bucket */
                 : spread == 1 ? i * 0x9E3779B97F4A7C15ULL           /* all over */
                               : (i << FP_LOW) | (i & 1);             /* one per high bucket */
    f &= ((uint64_t)1 << CG_FPSET_BITS) - 1;
    return f << (64 - CG_FPSET_BITS) | (i * 37 & 0x3ff);             /* the low bits: not kept */
}

START_TEST(fpset_finds_twins_only)
{
    static const size_t sizes[] = {0, 1, 2, FP_RUN - 1, FP_RUN, FP_RUN + 1, 3 * FP_RUN + 17, 70000};
    uint64_t tw[8];
    for (int spread = 0; spread < 3; spread++) {
        for (size_t si = 0; si < CG_ARRAY_LEN(sizes); si++) {
            size_t n = sizes[si];
            if (spread == 2 && n > FP_RUN)
                continue; /* one per high bucket: FP_RUN at most */
            cg_fpset s;
            cg_fpset_init(&s);
            for (size_t i = 0; i < n; i++)
                cg_fpset_add(&s, fp_of(i, spread));
            ck_assert_msg(cg_fpset_twins(&s, tw, 4) == 0, "spread %d, %zu fingerprints: no twin", spread, n);
            cg_fpset_release(&s);
            if (n < 2)
                continue;
            /* the twin of the first, the last, and one in the middle, added
             * at each place (the low bits differ: they are not kept) */
            size_t of[] = {0, n - 1, n / 2};
            size_t at[] = {1, n / 2, n - 1, n};
            for (size_t a = 0; a < CG_ARRAY_LEN(of); a++)
                for (size_t b = 0; b < CG_ARRAY_LEN(at); b++) {
                    if (at[b] <= of[a])
                        continue;
                    cg_fpset_init(&s);
                    for (size_t i = 0; i <= n; i++) {
                        if (i == at[b])
                            cg_fpset_add(&s, fp_of(of[a], spread) ^ 0x15);
                        if (i < n)
                            cg_fpset_add(&s, fp_of(i, spread));
                    }
                    ck_assert_msg(cg_fpset_twins(&s, tw, 4) == 1, "spread %d, %zu fingerprints: twin of %zu at %zu",
                                  spread, n, of[a], at[b]);
                    ck_assert_uint_eq(tw[0], cg_fpset_key(fp_of(of[a], spread)));
                    cg_fpset_release(&s);
                }
        }
    }
    /* hashes one apart in the last bit kept are not twins; three of one
     * fingerprint are one twin; more twins than asked for are counted to
     * max + 1, the smallest first */
    const int lo = 64 - CG_FPSET_BITS;
    cg_fpset s;
    cg_fpset_init(&s);
    for (uint64_t k = 1; k <= 5; k++)
        cg_fpset_add(&s, (k << lo) | k);
    cg_fpset_add(&s, (uint64_t)1 << 63);
    ck_assert_uint_eq(cg_fpset_twins(&s, tw, 4), 0);
    cg_fpset_add(&s, ((uint64_t)4 << lo) | (((uint64_t)1 << lo) - 1));
    cg_fpset_add(&s, (uint64_t)4 << lo);
    ck_assert_uint_eq(cg_fpset_twins(&s, tw, 4), 1);
    ck_assert_uint_eq(tw[0], 4);
    for (uint64_t k = 5; k >= 1; k--)
        cg_fpset_add(&s, k << lo);
    ck_assert_uint_eq(cg_fpset_twins(&s, tw, 4), 5);
    ck_assert_uint_eq(tw[0], 1);
    ck_assert_uint_eq(tw[3], 4);
    ck_assert_uint_eq(cg_fpset_twins(&s, tw, 5), 5);
    ck_assert_uint_eq(tw[4], 5);
    cg_fpset_release(&s);
}
END_TEST

/* The controls that reorder displayed text: found in any name, and written
 * \uXXXX in messages, never raw. */
START_TEST(bidi_controls)
{
    static const char *const bidi[] = {"\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa", "\xe2\x80\xab",
                                       "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x80\xae", "\xe2\x81\xa6",
                                       "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"};
    static const unsigned cps[] = {0x61c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066,
                                   0x2067, 0x2068, 0x2069};
    for (size_t i = 0; i < CG_ARRAY_LEN(bidi); i++) {
        cg_strbuf name = CG_STRBUF_INIT, shown = CG_STRBUF_INIT, want = CG_STRBUF_INIT;
        cg_strbuf_addf(&name, "ab%sc", bidi[i]);
        size_t len = 0;
        ck_assert_ptr_eq(cg_bidi_control(name.buf, &len), name.buf + 2);
        ck_assert_uint_eq(len, strlen(bidi[i]));
        ck_assert_ptr_nonnull(cg_name_breaker(name.buf));
        ck_assert_ptr_nonnull(cg_branch_name_problem(name.buf));
        cg_escape_line(&shown, name.buf, name.len);
        cg_strbuf_addf(&want, "ab\\u%04xc", cps[i]);
        ck_assert_str_eq(shown.buf, want.buf);
        cg_strbuf_release(&name);
        cg_strbuf_release(&shown);
        cg_strbuf_release(&want);
    }
    /* their neighbours are text */
    static const char *const fine[] = {"\xe2\x80\x8d", "\xe2\x80\xaf", "\xe2\x81\xa5", "\xe2\x81\xaa", "\xd8\x9b",
                                       "\xc3\xa9"};
    for (size_t i = 0; i < CG_ARRAY_LEN(fine); i++) {
        ck_assert_ptr_null(cg_bidi_control(fine[i], NULL));
        cg_strbuf shown = CG_STRBUF_INIT;
        cg_escape_line(&shown, fine[i], strlen(fine[i]));
        ck_assert_str_eq(shown.buf, fine[i]);
        cg_strbuf_release(&shown);
    }
}
END_TEST

/* A line ends where its length says: a UTF-8 sequence cut by the end (the
 * diff shows lines of a buffer that goes on, or a malloc'd copy that stops
 * there) is shown byte by byte and nothing past the end is read (make asan;
 * found by the diff fuzzer). */
START_TEST(escape_line_stops_at_its_end)
{
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"\xe2\x80", 2, "\\xe2\\x80"},
        {"ab\xf0\x9f\x98", 5, "ab\\xf0\\x9f\\x98"},
        {"\xc3", 1, "\\xc3"},
        {"x\xe2\x80\xae", 3, "x\\xe2\\x80"}, /* a bidi control cut in half */
        {"\xc3\xa9", 2, "\xc3\xa9"},
    };
    for (size_t i = 0; i < CG_ARRAY_LEN(cases); i++) {
        char *exact = malloc(cases[i].len); /* no NUL after it */
        memcpy(exact, cases[i].in, cases[i].len);
        cg_strbuf shown = CG_STRBUF_INIT;
        cg_escape_line(&shown, exact, cases[i].len);
        ck_assert_str_eq(shown.buf, cases[i].out);
        cg_strbuf_release(&shown);
        free(exact);
    }
}
END_TEST

Suite *make_util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, count_newlines_matches_a_loop);
    tcase_add_test(tc, escape_line_stops_at_its_end);
    tcase_add_test(tc, comment_text_refuses_and_escapes_unprintables);
    tcase_add_test(tc, name_breaker_names_the_first_unprintable);
    tcase_add_test(tc, branch_names_as_git_takes_them);
    tcase_add_test(tc, index_finds_what_it_holds);
    tcase_add_test(tc, graph_finds_the_first_cycle);
    tcase_add_test(tc, open_beneath_stays_inside);
    tcase_add_test(tc, dir_in_git_found_however_reached);
    tcase_add_test(tc, fpset_finds_twins_only);
    tcase_add_test(tc, bidi_controls);
    suite_add_tcase(s, tc);
    return s;
}
