/* lang/ref_regex: branch and tag filters' /regex/ values, read by the gate
 * and evaluated by PCRE2.  What each case expects is what
 * java.util.regex.Pattern.matches(pattern, name) gives (OpenJDK 17);
 * check_regex_java.c compares with Java itself on random patterns. */
#include <string.h>
#include <time.h>

#include "lang/ref_regex.h"
#include "testutil.h"

/* Whether filter value `value` lets `name` through. */
static bool matches(const char *value, const char *name)
{
    cg_error err;
    cg_error_init(&err);
    cg_pos pos = {"t.yml", 1, 1};
    cg_ref_value *v = cg_ref_value_new(value, "branch", &pos, &err);
    ck_assert_msg(v, "%s refused: %s", value, err.text.buf);
    int m = cg_ref_value_match(v, name);
    ck_assert_msg(m >= 0, "%s on '%s': past a match limit", value, name);
    cg_ref_value_free(v);
    cg_error_release(&err);
    return m == 1;
}

static const struct {
    const char *re, *name;
    bool match;
} cases[] = {
    {"^(main|rel)$", "rel", true},
    {"(^main$|^rel-\\d+$)", "rel-12", true},
    {"(^main$|^rel-\\d+$)", "main-1", false},
    {"a{0,500}", "aaa", true},
    {"(a|b){400}", "abababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababab", true},
    {"(a|b){400}", "ab", false},
    {"(?:a{0,10}b){0,10}", "aabab", true},
    {"rel-.*?-\\d+?", "rel-a-b-12", true},
    {"rel-.*?-\\d+?", "rel-a-b-", false},
    {"a??b{2}?c{1,2}?", "bbc", true},
    {"a??b{2}?c{1,2}?", "abbccc", false},
    {"rel-.*+", "rel-1", true},
    {"a*+a", "aaa", false},
    {"[ab]++b", "aab", false},
    {"(?>a|ab)c", "abc", false},
    {"(?>ab|a)c", "abc", true},
    {"(?>a+)b", "aab", true},
    {"rel-\\d+", "rel-1", true},
    {"rel-\\d+", "rel-12", true},
    {"rel-\\d+", "rel-d", false},
    {"rel-\\d+", "rel-", false},
    {"rel-\\d+", "xrel-1", false},
    {"rel-\\d+", "rel-1x", false},
    {"main|release/.*", "main", true},
    {"main|release/.*", "release/2.1", true},
    {"main|release/.*", "mainx", false},
    {"main|release/.*", "xmain", false},
    {"ci-all\\/.*", "ci-all/pr-1", true},
    {"ci-all\\/.*", "ci-all", false},
    {"v\\d+\\.\\d+\\.\\d+", "v1.22.3", true},
    {"v\\d+\\.\\d+\\.\\d+", "v1x2x3", false},
    {"a.b", "a.b", true},
    {"a.b", "axb", true},
    {"a\\.b", "axb", false},
    {"feature-\\w{3}", "feature-a_9", true},
    {"feature-\\w{3}", "feature-ab-", false},
    {"a\\sb", "a b", true},
    {"a\\sb", "a\x09" "b", true},
    {"a\\sb", "a\x0B" "b", true},
    {"a\\sb", "axb", false},
    {"a\\sb", "a\xC2\xA0" "b", false},
    {"a\\Sb", "axb", true},
    {"a\\Sb", "a b", false},
    {"\\D+", "abc", true},
    {"\\D+", "a1", false},
    {"\\W", "-", true},
    {"\\W", "a", false},
    {"\\W", "\xC3\xA9", true},
    {"\\w", "\xC3\xA9", false},
    {"\\d", "\xD9\xA3", false},
    {"\\h", "\xC2\xA0", true},
    {"\\h", "\xE3\x80\x80", true},
    {"\\h", "\x0A", false},
    {"\\v", "\xE2\x80\xA8", true},
    {"\\v", "\x0B", true},
    {"\\v", " ", false},
    {"\\H\\V", "ab", true},
    {"\\S+\\v", "a\xE2\x80\xA9", true},
    {"\\S+\\h", "a\xC2\xA0", true},
    {"\\R", "\x0D\x0A", true},
    {"\\R", "\xC2\x85", true},
    {"\\R\\n", "\x0D\x0A", true},
    {"a\\R?b", "a\x0D" "b", true},
    {".", "\xC3\xA9", true},
    {".", "\xE2\x82\xAC", true},
    {".", "\xF0\x9F\x98\x80", true},
    {".", "ab", false},
    {".{2}", "\xC3\xA9" "a", true},
    {".{2}", "\xC3\xA9", false},
    {"[^a]", "\xC3\xA9", true},
    {"[^a]", "a", false},
    {"[^a]", "b", true},
    {"\xC3\xA9+", "\xC3\xA9\xC3\xA9", true},
    {"\\\xC3\xA9", "\xC3\xA9", true},
    {"[\xC3\xA9\xF0\x9F\x98\x80]+", "\xF0\x9F\x98\x80\xC3\xA9", true},
    {"[a-\xC3\xBF]", "\xC3\xA9", true},
    {"[a-\xC3\xBF]", "\xC4\x80", false},
    {".", "\x0A", false},
    {".", "\x0D", false},
    {".", "\xC2\x85", false},
    {".", "\xE2\x80\xA8", false},
    {".", "\xE2\x80\xA9", false},
    {".", "\x0B", true},
    {".", "\x0C", true},
    {"[^a]", "\xE2\x80\xA8", true},
    {".", "\xE2\x80\xAA", true},
    {".", "\xC2\x86", true},
    {"main$\\W?", "main\xC2\x85", true},
    {"main$\\W?", "main\xE2\x80\xA8", true},
    {"main$\\W?", "main\xE2\x80\xA9", true},
    {"main$\\W?", "main\x0A", true},
    {"main$\\W?", "main\x0D", true},
    {"main$\\W?", "main\x0B", false},
    {"main$\\W?", "main\x0C", false},
    {"main$\\W{2}", "main\x0D\x0A", true},
    {"main\\r$\\n", "main\x0D\x0A", false},
    {"main$\\s*", "main\x0A\x0A", false},
    {"main$.", "main\xC2\x85", false},
    {"main\\Z\\W?", "main\xE2\x80\xA9", true},
    {"main\\z\\W?", "main\xE2\x80\xA9", false},
    {"main$", "main", true},
    {"(?:main$|x)\\n", "main\x0A", true},
    {"^$", "", true},
    {"a$|b", "a", true},
    {"\\Amain", "main", true},
    {"\\Gmain", "main", true},
    {"a^b", "ab", false},
    {"(?:^a|b)+", "ab", true},
    {"(?:^a|b)+", "ba", false},
    {"(^a){2}", "aa", false},
    {"(?!main$).*", "main", false},
    {"(?!main$).*", "mainx", true},
    {"(?=.*-)\\w+-\\d+", "rel-1", true},
    {"(?=.*-)\\w+-\\d+", "rel1", false},
    {"rel-(?<!rel-0)\\d+", "rel-01", true},
    {"rel-(?<!rel-0)\\d+", "rel-10", true},
    {".*(?<=-\\d)", "v-1", true},
    {"(?<=a|bc)d", "d", false},
    {"(v\\d)-\\1", "v1-v1", true},
    {"(v\\d)-\\1", "v1-v2", false},
    {"(a)\\10", "aa0", true},
    {"(?<n>x|y)\\k<n>", "yy", true},
    {"(?<n>x|y)\\k<n>", "xy", false},
    {"(a)?b\\1", "b", false},
    {"(?:(a)|b)+\\1", "ba", false},
    {"(?:(a)|b)+\\1", "aba", true},
    {"\\x61\\x{62}\\u0063\\0144\\cA", "abcd\x01", true},
    {"\\ca", "!", true},
    {"\\0101", "A", true},
    {"\\0400", " 0", true},
    {"\\x{1F600}", "\xF0\x9F\x98\x80", true},
    {"\\t\\n\\r\\f\\a\\e", "\x09\x0A\x0D\x0C\x07\x1B", true},
    {"[a-c]+", "abcab", true},
    {"[a-c]+", "abd", false},
    {"[\\d\\-_]+", "1-_2", true},
    {"[\\d\\-_]+", "a", false},
    {"[]a]", "]", true},
    {"[]a]", "a", true},
    {"[^]a]", "]", false},
    {"[^]a]", "b", true},
    {"[a-c-]", "-", true},
    {"[-a]", "-", true},
    {"[a-c-]", "d", false},
    {"[a-b-d]", "-", true},
    {"[a-b-d]", "c", false},
    {"[\\^]", "^", true},
    {"[x^]", "^", true},
    {"[x^]", "x", true},
    {"[\\^-]", "-", true},
    {"[\\^-]", "^", true},
    {"[\\]\\[\\\\]+", "][\\", true},
    {"[.]", ".", true},
    {"[.]", "a", false},
    {"[\\D]", "a", true},
    {"[\\D]", "1", false},
    {"[^\\D]", "1", true},
    {"[^\\D]", "a", false},
    {"[\\s\\S]", "\xC3\xA9", true},
    {"[\\s\\S]", "x", true},
    {"[\\w.]+", "a.b_c", true},
    {"[\\w.]+", "a-b", false},
    {"[\\t]", "\x09", true},
    {"[*+?{}()|$]+", "*+?{}()|$", true},
    {"[\\d-z]", "-", true},
    {"[\\d-z]", "z", true},
    {"[--a]", "0", true},
    {"[a-c-e]", "d", false},
    {"[a-c-e]", "-", true},
    {"[\\x41-\\u0043\\0104]+", "ABCD", true},
    {"[\\v]", "\xC2\x85", true},
    {"[^\\h]", "\xC2\xA0", false},
    {"(?:ab)+", "abab", true},
    {"(?:ab)+", "aba", false},
    {"(a|b)c", "bc", true},
    {"a{2}", "aa", true},
    {"a{2}", "a", false},
    {"a{2,}", "aaaa", true},
    {"a{2,}", "a", false},
    {"a{1,2}", "aaa", false},
    {"a{0}b", "b", true},
    {"colou?r", "color", true},
    {"^main$", "main", true},
    {"a|", "", true},
    {"(|a)b", "b", true},
    {"(a|)?b", "ab", true},
    {"a}", "a}", true},
    {"a]", "a]", true},
    {"\\$\\^\\(\\)\\{\\}\\*\\+\\?\\|\\.\\[\\]\\\\\\/\\-", "$^(){}*+?|.[]\\/-", true},
    {"\\@\\#\\ ", "@# ", true},
    {"a\\tb", "a\x09" "b", true},
    {".*", "any/thing-at_all", true},
    {"", "", true},
    {"", "x", false},
    {"(a+)+b", "aab", true},
    {"(a|aa)+b", "aaab", true},
};

START_TEST(gate_and_pcre2_match_as_java_does)
{
    cg_strbuf v = CG_STRBUF_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cg_strbuf_reset(&v);
        cg_strbuf_addf(&v, "/%s/", cases[i].re);
        ck_assert_msg(matches(v.buf, cases[i].name) == cases[i].match, "%s on '%s': expected %s", v.buf,
                      cases[i].name, cases[i].match ? "a match" : "no match");
    }
    cg_strbuf_release(&v);
}
END_TEST

/* Issue 35, 5: Java's '$' also matches before a final line terminator,
 * U+0085, U+2028, U+2029 among them (git allows them in branch names). */
START_TEST(dollar_matches_before_a_final_line_terminator_as_java)
{
    ck_assert(matches("/main$\\W?/", "main\xC2\x85"));
    ck_assert(matches("/main$\\W?/", "main\xE2\x80\xA8"));
    ck_assert(matches("/main$\\W?/", "main\xE2\x80\xA9"));
    ck_assert(matches("/main$\\W{2}/", "main\r\n"));
    ck_assert(!matches("/main\\r$\\n/", "main\r\n"));   /* never between \r and \n */
    ck_assert(!matches("/main$\\W?/", "main\x0B"));     /* \x0B and \f end no line for Java */
    ck_assert(!matches("/main$\\W*/", "main\n\n"));     /* one terminator, at the end */
    ck_assert(matches("/main\\Z\\W?/", "main\xC2\x85"));
    ck_assert(!matches("/main\\z\\W?/", "main\xC2\x85"));
    ck_assert(matches("/./", "\x0B"));                  /* nor for '.' */
    ck_assert(!matches("/./", "\xC2\x85"));
}
END_TEST

/* Java repeats \R as one atom (\R{2} does not take \r\n), and counts a
 * lookbehind's length in UTF-16 units (unless a character past U+FFFF is
 * written from it on): on a name holding such a character cigen cannot tell
 * what Java says, and says so (-1). */
START_TEST(java_quirks_are_followed_or_not_evaluated)
{
    ck_assert(!matches("/\\R{2}/", "\r\n"));
    ck_assert(matches("/\\R{2}/", "\n\n"));
    ck_assert(matches("/\\R\\n/", "\r\n"));
    ck_assert(!matches("/\\R+?\\D{2}+/", "\xE2\x80\xA8\r\n\r\nA"));
    cg_ref_value *v = cg_ref_value_new("/.*(?<!a..)/", "branch", NULL, NULL);
    ck_assert_int_eq(cg_ref_value_match(v, "aa\xF0\x9F\x98\x80"), -1); /* Java: 1, PCRE2 0 */
    ck_assert_int_eq(cg_ref_value_match(v, "abc"), 0);
    ck_assert_int_eq(cg_ref_value_match(v, "xbc"), 1);
    cg_ref_value_free(v);
    ck_assert(!matches("/.*(?<!a..)|\xF0\x9F\x98\x80/", "aa\xF0\x9F\x98\x80"));
    ck_assert(matches("/.*(?<!a..)|\xF0\x9F\x98\x80/", "xbc"));
}
END_TEST

START_TEST(names_are_not_regexes)
{
    ck_assert(matches("main", "main"));
    ck_assert(!matches("main", "mainx"));
    ck_assert(matches("rel-.*", "rel-.*"));   /* no slashes: a name */
    ck_assert(!matches("rel-.*", "rel-1"));
    ck_assert(matches("/", "/"));
    ck_assert(matches("/main", "/main"));
    ck_assert(!cg_ref_is_regex("/"));
    ck_assert(!cg_ref_is_regex("main/"));
    ck_assert(cg_ref_is_regex("//"));
}
END_TEST

/* A name that is not UTF-8 (git allows it) is matched as Java decodes it. */
START_TEST(a_name_that_is_not_utf8_is_read_as_java_decodes_it)
{
    ck_assert(matches("/rel-./", "rel-\xFF"));
    ck_assert(matches("/rel-\\x{FFFD}{2}/", "rel-\xC3\xFF"));
    ck_assert(!matches("/rel-\\d/", "rel-\xFF"));
}
END_TEST

/* The pattern PCRE2 gets, for what the gate spells out. */
START_TEST(gate_spells_pcre2)
{
    static const struct {
        const char *re, *pcre2;
    } t[] = {
        {"rel-\\d+", "rel\\-\\d+"},
        {"(?:a|b)*", "(?:a|b)*"},
        {"[\\w.-]", "[\\w\\.\\-]"},
        {"[]^-]", "[\\]\\^\\-]"},
        {"\xC3\xA9\\u00e9\\x{1F600}\\cA\\0101", "\\x{e9}\\x{e9}\\x{1f600}\\x{1}A"},
        {".", "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]"},
        {"a$", "a(?=(?:\\r\\n|[\\n\\r\\x{85}\\x{2028}\\x{2029}])?\\z)(?!(?<=\\r)\\n)"},
        {"(a)\\10\\1", "(a)\\g{1}0\\g{1}"},   /* Java: \10 is \1 then 0 with one group */
        {"(?<n>a)\\k<n>", "(?<n>a)\\k<n>"},
        {"x{2,5}+y{3,}?", "x{2,5}+y{3,}?"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        cg_strbuf out = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
        int rc = cg_regex_java_to_pcre2(t[i].re, strlen(t[i].re), &out, &why, NULL);
        ck_assert_msg(rc == 0, "%s: %s", t[i].re, why.buf);
        ck_assert_str_eq(out.buf, t[i].pcre2);
        cg_strbuf_release(&out);
        cg_strbuf_release(&why);
    }
}
END_TEST

static const struct {
    const char *re;
    int rc;
    const char *why;   /* a part of the reason */
} refused[] = {
    /* Java refuses these too */
    {"[", CG_REGEX_INVALID, "'[' at character 2 is never closed"},
    {"[abc", CG_REGEX_INVALID, "never closed by ']'"},
    {"[]", CG_REGEX_INVALID, "never closed"},
    {"[^]", CG_REGEX_INVALID, "never closed"},
    {"(", CG_REGEX_INVALID, "'(' at character 2 is never closed"},
    {"a(b(c)", CG_REGEX_INVALID, "'(' at character 3 is never closed"},
    {")", CG_REGEX_INVALID, "')' at character 2 closes no group"},
    {"a)b", CG_REGEX_INVALID, "')' at character 3"},
    {"a{2,1}", CG_REGEX_INVALID, "'{2,1}' repeats at least 2 and at most 1 times"},
    {"a{99999999999}", CG_REGEX_INVALID, "counts past 2147483647"},
    {"*a", CG_REGEX_INVALID, "'*' at character 2 has nothing before it"},
    {"+", CG_REGEX_INVALID, "nothing before it"},
    {"?", CG_REGEX_INVALID, "nothing before it"},
    {"a|*b", CG_REGEX_INVALID, "nothing before it"},
    {"(*)", CG_REGEX_INVALID, "nothing before it"},
    {"a*??", CG_REGEX_INVALID, "'?' at character 5 repeats a repetition"},
    {"a*?+", CG_REGEX_INVALID, "'+' at character 5 repeats a repetition"},
    {"a**", CG_REGEX_INVALID, "repeats a repetition"},
    {"a*++", CG_REGEX_INVALID, "repeats a repetition"},
    {"a\\", CG_REGEX_INVALID, "a '\\' at the end escapes nothing"},
    {"[a\\", CG_REGEX_INVALID, "escapes nothing"},
    {"\\y", CG_REGEX_INVALID, "'\\y' is not an escape Java knows"},
    {"\\i", CG_REGEX_INVALID, "not an escape"},
    {"\\E", CG_REGEX_INVALID, "not an escape"},
    {"[\\b]", CG_REGEX_INVALID, "'\\b' is not an escape Java knows in a class"},
    {"[\\1]", CG_REGEX_INVALID, "in a class"},
    {"[\\R]", CG_REGEX_INVALID, "in a class"},
    {"\\0", CG_REGEX_INVALID, "'\\0' at character 2 is not followed by an octal digit"},
    {"\\08", CG_REGEX_INVALID, "octal digit"},
    {"\\xZ", CG_REGEX_INVALID, "'\\x' at character 2 is not followed by two hex digits"},
    {"\\x{110000}", CG_REGEX_INVALID, "hex"},
    {"\\u12", CG_REGEX_INVALID, "four hex digits"},
    {"\\c", CG_REGEX_INVALID, "names no control character"},
    {"\\k<n>", CG_REGEX_INVALID, "'\\k<n>' names no group before it"},
    {"\\k<n>(?<n>a)", CG_REGEX_INVALID, "names no group before it"},
    {"\\kn", CG_REGEX_INVALID, "a group's <name>"},
    {"(?<n>a)(?<n>b)", CG_REGEX_INVALID, "the group name 'n' is given twice"},
    {"(?<a_b>x)", CG_REGEX_INVALID, "not letters and digits"},
    {"{", CG_REGEX_INVALID, "'{' at character 2 does not start a repetition"},
    {"a{", CG_REGEX_INVALID, "'{' at character 3 does not start a repetition"},
    {"a{x}", CG_REGEX_INVALID, "does not start a repetition"},
    {"a{,2}", CG_REGEX_INVALID, "does not start a repetition"},
    {"a{2", CG_REGEX_INVALID, "not closed by '}'"},
    {"a{2,3", CG_REGEX_INVALID, "not closed by '}'"},
    {"a{2, 3}", CG_REGEX_INVALID, "not closed by '}'"},
    {"[z-a]", CG_REGEX_INVALID, "the range 'z-a' in a class is backwards"},
    {"[a-\\d]", CG_REGEX_INVALID, "ends with a class"},
    {"(?", CG_REGEX_INVALID, "starts no group"},
    {"(?Z)", CG_REGEX_INVALID, "starts no group"},
    {"(?<)", CG_REGEX_INVALID, "starts no group"},
    {"(?#c)", CG_REGEX_INVALID, "starts no group"},
    {"(?<=(?:ab|c){2})d", CG_REGEX_INVALID, "'{2}' at character 14 repeats a group holding '|'"},
    {"(?<!([ab]|c){2})d", CG_REGEX_INVALID, "in a lookbehind"},
    {"(?<=(a(?=b)?){2})d", CG_REGEX_INVALID, "in a lookbehind"},
    /* Java takes these; PCRE2 reads them otherwise, or Java's versions differ */
    {"(?i)main", CG_REGEX_UNSUPPORTED, "'(?i' (inline flags)"},
    {"(?i:main)", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"(?-i)main", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"(?U)\\w", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"(?c)a", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"\\bmain", CG_REGEX_UNSUPPORTED, "a word boundary"},
    {"\\Bx", CG_REGEX_UNSUPPORTED, "a non-word boundary"},
    {"\\Qa.b\\E", CG_REGEX_UNSUPPORTED, "\\Q...\\E"},
    {"[\\Q]\\E]", CG_REGEX_UNSUPPORTED, "\\Q...\\E"},
    {"\\p{L}+", CG_REGEX_UNSUPPORTED, "a Unicode property class"},
    {"\\P{L}", CG_REGEX_UNSUPPORTED, "Unicode property"},
    {"[\\p{L}]", CG_REGEX_UNSUPPORTED, "Unicode property"},
    {"\\X", CG_REGEX_UNSUPPORTED, "grapheme"},
    {"\\N{LATIN SMALL LETTER A}", CG_REGEX_UNSUPPORTED, "by its name"},
    {"\\uD83D\\uDE00", CG_REGEX_UNSUPPORTED, "a UTF-16 surrogate"},
    {"\\x{DFFF}", CG_REGEX_UNSUPPORTED, "surrogate"},
    {"[a[b]]", CG_REGEX_UNSUPPORTED, "a union of classes"},
    {"[a-z&&[^x]]", CG_REGEX_UNSUPPORTED, "an intersection"},
    {"^*a", CG_REGEX_UNSUPPORTED, "a repetition of an anchor"},
    {"$?", CG_REGEX_UNSUPPORTED, "a repetition of an anchor"},
    {"\\A{2}", CG_REGEX_UNSUPPORTED, "a repetition of an anchor"},
    {"a{2}{3}", CG_REGEX_UNSUPPORTED, "'{' at character 6 (a repetition of nothing, right after another)"},
    {"{2}", CG_REGEX_UNSUPPORTED, "'{' at character 2 (a repetition of nothing)"}, /* Java: "" */
    {"a|{2}b", CG_REGEX_UNSUPPORTED, "a repetition of nothing"},
    {"(?:{1,2}x)", CG_REGEX_UNSUPPORTED, "a repetition of nothing"},
    {"(a*)*b", CG_REGEX_UNSUPPORTED, "'*' at character 6 (a repetition of what can match nothing"},
    {"(a|){2}", CG_REGEX_UNSUPPORTED, "what can match nothing"},
    {"(?:\\A|a){2}b", CG_REGEX_UNSUPPORTED, "what can match nothing"},
    {"((a?)+){0,23}", CG_REGEX_UNSUPPORTED, "what can match nothing"},   /* issue 35, 4 */
    {"(?=a)+a", CG_REGEX_UNSUPPORTED, "what can match nothing"},
    {"(a)\\1{2}", CG_REGEX_UNSUPPORTED, "what can match nothing"},
    {"(?:a+){2}+", CG_REGEX_UNSUPPORTED, "a possessive repetition of a group"},
    {"(a)(?<=\\1)", CG_REGEX_UNSUPPORTED, "a backreference in a lookbehind"},
    {"a{65536}", CG_REGEX_UNSUPPORTED, "more than 65535 times"},
    {"a{1,2147483647}", CG_REGEX_UNSUPPORTED, "more than 65535 times"},
    {"\xFF", CG_REGEX_UNSUPPORTED, "not UTF-8"},
};

START_TEST(gate_refuses_what_java_or_pcre2_would_read_otherwise)
{
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        cg_strbuf out = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
        cg_strbuf_adds(&out, "kept");
        int rc = cg_regex_java_to_pcre2(refused[i].re, strlen(refused[i].re), &out, &why, NULL);
        ck_assert_msg(rc == refused[i].rc, "/%s/: %d, expected %d (%s)", refused[i].re, rc, refused[i].rc,
                      why.buf ? why.buf : "taken");
        ck_assert_msg(strstr(why.buf, refused[i].why), "/%s/: '%s' lacks '%s'", refused[i].re, why.buf,
                      refused[i].why);
        ck_assert_str_eq(out.buf, "kept");   /* nothing half-written */
        cg_strbuf_release(&out);
        cg_strbuf_release(&why);
    }
}
END_TEST

START_TEST(groups_nested_too_deep_are_refused)
{
    char re[2 * 101 + 2];
    memset(re, '(', 101);
    re[101] = 'a';
    memset(re + 102, ')', 101);
    re[203] = '\0';
    cg_strbuf out = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    ck_assert_int_eq(cg_regex_java_to_pcre2(re, strlen(re), &out, &why, NULL), CG_REGEX_UNSUPPORTED);
    ck_assert(strstr(why.buf, "nested more than 100 deep"));
    cg_strbuf_release(&out);
    cg_strbuf_release(&why);
    /* 100 deep is fine, with a '$' (which PCRE2 reads two groups deeper) */
    char ok[1 + 100 + 2 + 100 + 2];
    ok[0] = '/';
    memset(ok + 1, '(', 100);
    ok[101] = 'a';
    ok[102] = '$';
    memset(ok + 103, ')', 100);
    strcpy(ok + 203, "/");
    ck_assert(matches(ok, "a"));
}
END_TEST

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Issue 35, 4: /((a?)+){0,23}/ (17 bytes) took 2.5 minutes to compile, and
 * twice as long with each step.  Any regex costs bounded time and memory:
 * refused by the gate, or compiled within PCRE2's limits, or matched
 * within them (-1 past them).  The bound here is generous (sanitizers);
 * each takes about a millisecond to compile and at most 0.05 s to match. */
START_TEST(any_regex_costs_bounded_time)
{
    static const char *const hostile[] = {
        "/((a?)+){0,23}/", "/((a?)+){0,30}/", "/((a{1000}){1000}){1000}/", "/(a{0,65535}){0,65535}/",
        "/((.{0,99}){0,99}){0,99}/", "/(?:(?:(?:a{0,50}b){0,50}c){0,50}d){0,50}/", "/((?:a|b)(?:a|b)){0,6553}/",
        "/.{0,65535}/", "/[^b]{0,65535}!/", "/(a|aa)+b/", "/(a+)+b/", "/(.*a){20}/", "/(\\w+\\d+)+!/",
        "/(a{5}){5000}/", "/(x+x+)+y/", "/(?:a|a)*b/", "/(a|b|ab)*c/",
    };
    char name[302];
    memset(name, 'a', 300);
    strcpy(name + 300, "!");
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        cg_error err;
        cg_error_init(&err);
        cg_pos pos = {"t.yml", 1, 1};
        double t0 = seconds();
        cg_ref_value *v = cg_ref_value_new(hostile[i], "branch", &pos, &err);
        double t1 = seconds();
        ck_assert_msg(v || strstr(err.text.buf, "t.yml:1:1: error: the branch filter"), "%s", err.text.buf);
        int m = v ? cg_ref_value_match(v, name) : 0;
        double t2 = seconds();
        ck_assert_msg(t1 - t0 < 2 && t2 - t1 < 5, "%s: compiled in %.3f s, matched (%d) in %.3f s", hostile[i],
                      t1 - t0, m, t2 - t1);
        cg_ref_value_free(v);
        cg_error_release(&err);
    }
}
END_TEST

/* The message at the filter's position: what is wrong, and for what cigen
 * cannot evaluate, why it must. */
START_TEST(refusal_is_an_error_at_the_value)
{
    cg_error err;
    cg_error_init(&err);
    cg_pos pos = {"cigen.yml", 7, 15};
    ck_assert_ptr_null(cg_ref_value_new("/(?i)main.*/", "tag", &pos, &err));
    ck_assert_str_eq(err.text.buf, "cigen.yml:7:15: error: the tag filter /(?i)main.*/ uses '(?i' (inline flags), "
                     "which cigen cannot evaluate: CircleCI reads it as a Java regex, but cigen evaluates branch and "
                     "tag filters itself (list --branch, select, special-PR checks) with PCRE2, and refuses what PCRE2 "
                     "would read otherwise than Java: inline flags, \\b \\B, \\p{..}, \\X, \\N{..}, \\Q...\\E, a class "
                     "inside a class or &&, a repetition of an anchor, of nothing or of what can match nothing, a "
                     "possessive group");
    cg_error_release(&err);
    cg_error_init(&err);
    ck_assert_ptr_null(cg_ref_value_new("/a{2,1}/", "branch", &pos, &err));
    ck_assert_str_eq(err.text.buf, "cigen.yml:7:15: error: the branch filter /a{2,1}/ is not a valid regular "
                     "expression: '{2,1}' repeats at least 2 and at most 1 times (CircleCI reads it as a Java regex, "
                     "and Java refuses it too)");
    cg_error_release(&err);
    cg_error_init(&err);
    ck_assert_ptr_null(cg_ref_value_new("/(a)\\2/", "branch", &pos, &err)); /* Java: never matches */
    ck_assert_msg(strstr(err.text.buf, "PCRE2 says \"reference to non-existent subpattern\""), "%s", err.text.buf);
    cg_error_release(&err);
    cg_error_init(&err);
    ck_assert_ptr_null(cg_ref_value_new("/(?<=a{1,2})b/", "branch", &pos, &err));
    ck_assert_str_eq(err.text.buf, "cigen.yml:7:15: error: the branch filter /(?<=a{1,2})b/ cannot be evaluated by "
                     "cigen's regex engine: PCRE2 says \"lookbehind assertion is not fixed length\" (CircleCI reads it "
                     "as a Java regex, but cigen evaluates branch and tag filters itself (list --branch, select, "
                     "special-PR checks) with PCRE2, within limits that keep any regex's cost bounded)");
    cg_error_release(&err);
}
END_TEST

/* list --branch: each value compiled once; one that cannot be evaluated says so. */
START_TEST(cache_matches_and_knows_what_it_cannot)
{
    cg_ref_cache c;
    cg_ref_cache_init(&c);
    ck_assert_int_eq(cg_ref_cache_match(&c, "/rel-\\d+/", "rel-1"), 1);
    ck_assert_int_eq(cg_ref_cache_match(&c, "/rel-\\d+/", "rel-d"), 0);
    ck_assert_int_eq(cg_ref_cache_match(&c, "main", "main"), 1);
    ck_assert_int_eq(cg_ref_cache_match(&c, "/(?i)x/", "main"), -1);
    ck_assert_int_eq(cg_ref_cache_match(&c, "/(?i)x/", "x"), -1);
    /* past the match limit: not evaluated on that name */
    ck_assert_int_eq(cg_ref_cache_match(&c, "/(a|aa)+b/", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), -1);
    ck_assert_int_eq(cg_ref_cache_match(&c, "/(a|aa)+b/", "aab"), 1);
    ck_assert_uint_eq(c.n, 3);   /* the names are never compiled, each regex once */
    cg_ref_cache_release(&c);
}
END_TEST

Suite *make_ref_regex_suite(void)
{
    Suite *s = suite_create("ref_regex");
    TCase *tc = tcase_create("ref_regex");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gate_and_pcre2_match_as_java_does);
    tcase_add_test(tc, dollar_matches_before_a_final_line_terminator_as_java);
    tcase_add_test(tc, java_quirks_are_followed_or_not_evaluated);
    tcase_add_test(tc, names_are_not_regexes);
    tcase_add_test(tc, a_name_that_is_not_utf8_is_read_as_java_decodes_it);
    tcase_add_test(tc, gate_spells_pcre2);
    tcase_add_test(tc, gate_refuses_what_java_or_pcre2_would_read_otherwise);
    tcase_add_test(tc, groups_nested_too_deep_are_refused);
    tcase_add_test(tc, any_regex_costs_bounded_time);
    tcase_add_test(tc, refusal_is_an_error_at_the_value);
    tcase_add_test(tc, cache_matches_and_knows_what_it_cannot);
    suite_add_tcase(s, tc);
    return s;
}
