/* lang/ref_regex against java.util.regex itself: random patterns and names
 * (seeded, so every run tests the same ones), each pattern compiled by
 * cigen (cg_ref_value_new) and by Java's Pattern.compile, each name matched
 * by both (Java: Pattern.compile(p).matcher(name).matches(), in
 * tests/java/RegexOracle.java, compiled into the build folder).  Where cigen
 * takes a pattern, Java must take it and say the same of every name; where
 * Java refuses one, cigen must refuse it.  cigen may refuse more (what PCRE2
 * would read otherwise): counted, not failed.
 *
 * Runs where a JDK is installed (javac, java; .ci/run installs it) and says
 * it is skipped otherwise.  CIGEN_REGEX_SEED and CIGEN_REGEX_PATTERNS
 * choose other patterns. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "lang/ref_regex.h"
#include "testutil.h"

#define NAMES 12

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)((rng >> 11) % n);
}

#define PICK(a) ((a)[rnd(sizeof(a) / sizeof *(a))])

/* What patterns are made of: mostly what the gate takes, some of what it
 * refuses or Java refuses (JUNK), and line terminators and non-ASCII
 * characters where Java's and PCRE2's defaults differ. */
static const char *const ATOMS[] = {
    "a", "a", "a", "b", "b", "\xC3\xA9", "\xF0\x9F\x98\x80", "-", "_", "0", " ", ".", ".", "\\d", "\\w", "\\s",
    "\\D", "\\W", "\\S", "\\h", "\\v", "\\H", "\\V", "\\R", "\\n", "\\r", "\\t", "\\f", "\\e", "\\x0B", "\\u0085",
    "\\u2028", "\\x{2029}", "\\x61", "\\0142", "\\cA", "\\ca", "\\.", "\\-", "\\\\", "\xC2\x85", "\\x{1F600}",
    "\\u00e9", "[ab]", "[^a]", "[a-c]", "[\\d-]", "[^\\n]", "[.\xC3\xA9]", "[\\w&]", "[]a]", "[^]a]", "[\\s\\S]",
    "[a-\xC3\xA9]", "[\\r\\n]", "[^\\r]", "[--a]", "[a-c-e]", "[\\d-z]", "[\\x{85}\\u2028]", "[\\v]", "[^\\h]",
    "[\\W]", "[\\0141-\\x63]", "[-]", "[a-]", "}", "]",
};
static const char *const ANCHORS[] = {"^", "$", "$", "$", "\\A", "\\z", "\\Z", "\\Z", "\\G"};
static const char *const QUANT[] = {"*", "+", "?", "{2}", "{0,2}", "{1,}", "{0}", "{1,3}"};
static const char *const JUNK[] = {
    "(", ")", "[", "{", "\\", "*", "+", "?", "{2,1}", "(?i)", "(?U)", "\\b", "\\B", "\\p{L}", "\\Q", "\\y", "&&",
    "(?<", "\\k", "\\x", "\\u12", "\\0", "{,2}", "\\E", "[[a]]", "[a&&b]", "\\X", "(?<n1>", "\\k<n1>", "\\3",
    "(?#", "\\N{LATIN SMALL LETTER A}", "\\x{D800}", "[\\b]", "[\\1]", "{2}", "^*", "(?=a)*", "\\12",
};
static const char *const OPEN[] = {"(", "(", "(?:", "(?:", "(?=", "(?!", "(?>", "(?<n1>", "(?<n2>"};
static const char *const BEHIND[] = {"(?<=", "(?<!"};
static const char *const BACKREF[] = {"\\1", "\\2", "\\k<n1>", "\\10", "\\1\\1"};

static void gen_seq(cg_strbuf *p, int depth, bool fixed);

/* One item; in a lookbehind (fixed) only what has a fixed length, mostly. */
static void gen_item(cg_strbuf *p, int depth, bool fixed)
{
    uint32_t r = rnd(100);
    if (r < 4) {
        cg_strbuf_adds(p, PICK(JUNK));
    } else if (r < 14) {
        cg_strbuf_adds(p, PICK(ANCHORS));
        return;
    } else if (r < 30 && depth < 3) {
        bool behind = rnd(4) == 0;
        cg_strbuf_adds(p, behind ? PICK(BEHIND) : PICK(OPEN));
        gen_seq(p, depth + 1, fixed || behind);
        cg_strbuf_addc(p, ')');
    } else if (r < 35) {
        cg_strbuf_adds(p, PICK(BACKREF));
    } else {
        cg_strbuf_adds(p, PICK(ATOMS));
    }
    if (rnd(fixed ? 8 : 3) == 0) {
        cg_strbuf_adds(p, fixed ? "{2}" : PICK(QUANT));
        uint32_t m = rnd(6);
        if (m < 2)
            cg_strbuf_addc(p, m ? '?' : '+');
    }
}

static void gen_seq(cg_strbuf *p, int depth, bool fixed)
{
    uint32_t n = 1 + rnd(depth ? 3 : 5);
    for (uint32_t i = 0; i < n; i++) {
        if (i && rnd(7) == 0)
            cg_strbuf_addc(p, '|');
        gen_item(p, depth, fixed);
    }
}

/* Names: mostly a and b, so that patterns match some, and the characters
 * where Java's line terminators and classes differ from PCRE2's defaults. */
static const char *const CHARS[] = {
    "a", "a", "a", "a", "a", "b", "b", "b", "\xC3\xA9", "\xF0\x9F\x98\x80", "\n", "\r", "\r\n", "\xC2\x85",
    "\xE2\x80\xA8", "\xE2\x80\xA9", "\x0B", "\x0C", " ", "0", "1", "_", "-", ".", "\t", "A", "\xC2\xA0", "&", "\x01",
    "c", "!",
};

static void gen_name(cg_strbuf *s)
{
    uint32_t n = rnd(7);
    for (uint32_t i = 0; i < n; i++)
        cg_strbuf_adds(s, PICK(CHARS));
}

static void hex(cg_strbuf *o, const char *s, size_t n)
{
    if (n == 0)
        cg_strbuf_addc(o, '-');
    for (size_t i = 0; i < n; i++)
        cg_strbuf_addf(o, "%02x", (unsigned char)s[i]);
}

/* The test's C string for a message: escapes what is not printable ASCII. */
static void show(cg_strbuf *o, const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7F)
            cg_strbuf_addf(o, "\\x%02x", (unsigned char)*s);
        else
            cg_strbuf_addc(o, *s);
}

static bool have(const char *tool)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

START_TEST(cigen_reads_filters_as_java_does)
{
    if (!have("javac") || !have("java")) {
        fprintf(stderr, "regex_java: skipped: no JDK (javac and java) to compare with\n");
        return;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *seed_env = getenv("CIGEN_REGEX_SEED"), *count_env = getenv("CIGEN_REGEX_PATTERNS");
    unsigned long long seed = seed_env ? strtoull(seed_env, NULL, 10) : 3435;
    size_t count = count_env ? strtoul(count_env, NULL, 10) : 6000;
    rng = seed * 0x9E3779B97F4A7C15ull + 1;

    /* the oracle, compiled into the build folder (beside the binary) */
    cg_strbuf dir = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT, in = CG_STRBUF_INIT;
    cg_strbuf_adds(&dir, tu_cigen());
    char *slash = strrchr(dir.buf, '/');
    dir.len = slash ? (size_t)(slash - dir.buf) : 0;
    cg_strbuf_adds(&dir, slash ? "/java" : "java");
    cg_strbuf_addf(&cmd, "mkdir -p '%s' && javac -d '%s' '%s/tests/java/RegexOracle.java'", dir.buf, dir.buf,
                   tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "javac: %s", r.err);
    tu_run_free(&r);

    char **pats = calloc(count, sizeof *pats);
    char *(*names)[NAMES] = calloc(count, sizeof *names);
    cg_strbuf s = CG_STRBUF_INIT;
    for (size_t i = 0; i < count; i++) {
        cg_strbuf_reset(&s);
        gen_seq(&s, 0, false);
        pats[i] = cg_xstrdup(s.buf);
        hex(&in, s.buf, s.len);
        for (size_t k = 0; k < NAMES; k++) {
            cg_strbuf_reset(&s);
            gen_name(&s);
            names[i][k] = cg_xstrdup(s.buf ? s.buf : "");
            cg_strbuf_addc(&in, ' ');
            hex(&in, names[i][k], s.len);
        }
        cg_strbuf_addc(&in, '\n');
    }
    char *tmp = tu_mkdtemp();
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "%s/in", tmp);
    tu_write(cmd.buf, in.buf, in.len);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "java -Xss64m -cp '%s' RegexOracle < '%s/in'", dir.buf, tmp);
    r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "java: %s", r.err);

    size_t both = 0, java_only = 0, neither = 0, agree = 0, matched = 0, skipped = 0, failures = 0;
    cg_strbuf msg = CG_STRBUF_INIT;
    char *line = r.out;
    for (size_t i = 0; i < count; i++) {
        ck_assert_msg(line && *line, "java answered %zu patterns of %zu", i, count);
        char *end = strchr(line, '\n');
        ck_assert(end);
        *end = '\0';
        cg_strbuf_reset(&s);
        cg_strbuf_addf(&s, "/%s/", pats[i]);
        cg_ref_value *v = cg_ref_value_new(s.buf, "branch", NULL, NULL);
        bool java_ok = strncmp(line, "ok", 2) == 0;
        if (v && !java_ok) {
            if (++failures <= 40) {
                cg_strbuf_adds(&msg, "\n  cigen takes what Java refuses: /");
                show(&msg, pats[i]);
                cg_strbuf_addc(&msg, '/');
            }
        } else if (v) {
            both++;
            for (size_t k = 0; k < NAMES; k++) {
                char j = line[3 + 2 * k];
                int c = cg_ref_value_match(v, names[i][k]);
                if (j == 'x' || c < 0) {
                    skipped++;
                } else if ((j == '1') == (c == 1)) {
                    agree++;
                    matched += c == 1;
                } else if (++failures <= 40) {
                    cg_strbuf_addf(&msg, "\n  /");
                    show(&msg, pats[i]);
                    cg_strbuf_adds(&msg, "/ on '");
                    show(&msg, names[i][k]);
                    cg_strbuf_addf(&msg, "': Java %s, cigen %s", j == '1' ? "matches" : "does not match",
                                   c ? "matches" : "does not");
                }
            }
        } else {
            java_ok ? java_only++ : neither++;
        }
        cg_ref_value_free(v);
        line = end + 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "regex_java: seed %llu, %zu patterns: %zu taken by both (%zu names agreed on, %zu of them "
            "matches; %zu not compared), %zu refused by both, %zu taken by Java and refused by cigen; %zu "
            "disagreements; %.1f s\n", seed, count, both, agree, matched, skipped, neither, java_only, failures,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    ck_assert_msg(failures == 0, "%zu disagreements with java.util.regex (seed %llu):%s", failures, seed, msg.buf);
    /* a test that compared nothing would pass too */
    ck_assert_msg(both * 3 >= count && matched * 10 >= agree / 10, "too few patterns taken (%zu) or names matched "
                  "(%zu)", both, matched);

    for (size_t i = 0; i < count; i++) {
        free(pats[i]);
        for (size_t k = 0; k < NAMES; k++)
            free(names[i][k]);
    }
    free(pats);
    free(names);
    tu_run_free(&r);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&s);
    cg_strbuf_release(&msg);
    cg_strbuf_release(&in);
    cg_strbuf_release(&cmd);
    cg_strbuf_release(&dir);
}
END_TEST

Suite *make_regex_java_suite(void)
{
    Suite *s = suite_create("regex_java");
    TCase *tc = tcase_create("regex_java");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, cigen_reads_filters_as_java_does);
    suite_add_tcase(s, tc);
    return s;
}
