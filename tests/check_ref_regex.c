/* lang/ref_regex: branch and tag filters' /regex/ values, Java's syntax
 * translated to POSIX ERE.  What each case expects is what
 * java.util.regex.Pattern.matches(pattern, name) gives. */
#include <string.h>

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
    bool m = cg_ref_value_match(v, name);
    cg_ref_value_free(v);
    cg_error_release(&err);
    return m;
}

static const struct {
    const char *re, *name;
    bool match;
} cases[] = {
    /* anchors outside repetitions, and optional copies within the limit */
    {"^(main|rel)$", "rel", true},
    {"(^main$|^rel-\\d+$)", "rel-12", true},
    {"(^main$|^rel-\\d+$)", "main-1", false},
    {"a{0,500}", "aaa", true},
    {"(a|){400}b", "aab", true},
    {"(a*)*b", "aab", true},
    {"((a{0,10}){0,10}){0,3}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true},
    /* a lazy quantifier matches the same whole names as the greedy one */
    {"rel-.*?-\\d+?", "rel-a-b-12", true},
    {"rel-.*?-\\d+?", "rel-a-b-", false},
    {"a??b{2}?c{1,2}?", "bbc", true},
    {"a??b{2}?c{1,2}?", "abbccc", false},
    /* the reviewer's case: \d is a digit, not the letter d */
    {"rel-\\d+", "rel-1", true},
    {"rel-\\d+", "rel-12", true},
    {"rel-\\d+", "rel-d", false},
    {"rel-\\d+", "rel-", false},
    {"rel-\\d+", "xrel-1", false},      /* the whole name */
    {"rel-\\d+", "rel-1x", false},
    {"main|release/.*", "main", true},  /* | at the top binds looser than the anchors */
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
    {"a\\sb", "a\tb", true},
    {"a\\sb", "a\x0b" "b", true},
    {"a\\sb", "axb", false},
    {"a\\Sb", "axb", true},
    {"a\\Sb", "a b", false},
    {"\\D+", "abc", true},
    {"\\D+", "a1", false},
    {"\\W", "-", true},
    {"\\W", "a", false},
    {"\\W", "\xC3\xA9", true},           /* Java's \w is ASCII: é is \W */
    {"\\w", "\xC3\xA9", false},
    /* a non-ASCII character is one character, as for Java */
    {".", "\xC3\xA9", true},
    {".", "\xE2\x82\xAC", true},
    {".", "\xF0\x9F\x98\x80", true},
    {".", "ab", false},
    {".{2}", "\xC3\xA9" "a", true},
    {".{2}", "\xC3\xA9", false},
    {"[^a]", "\xC3\xA9", true},
    {"[^a]", "a", false},
    {"[^a]", "b", true},
    {"\xC3\xA9+", "\xC3\xA9\xC3\xA9", true}, /* the quantifier repeats the whole character */
    {"\xC3\xA9+", "\xC3\xA9\xA9", false},
    {"\\\xC3\xA9", "\xC3\xA9", true},
    /* '.' skips Java's line terminators, [^a] does not */
    {".", "\n", false},
    {".", "\r", false},
    {".", "\xC2\x85", false},
    {".", "\xE2\x80\xA8", false},
    {".", "\xE2\x80\xA9", false},
    {"[^a]", "\xE2\x80\xA8", true},
    {".", "\xE2\x80\xAA", true},
    {".", "\xC2\x86", true},
    /* classes */
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
    {"[a-b-d]", "-", true},              /* a range, then '-' and 'd' */
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
    {"[\\t]", "\t", true},
    {"[*+?{}()|$]+", "*+?{}()|$", true},
    /* groups, quantifiers, anchors, escapes */
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
    {"a}", "a}", true},
    {"a]", "a]", true},
    {"\\$\\^\\(\\)\\{\\}\\*\\+\\?\\|\\.\\[\\]\\\\\\/\\-", "$^(){}*+?|.[]\\/-", true},
    {"\\@\\#\\ ", "@# ", true},
    {"a\\tb", "a\tb", true},
    {".*", "any/thing-at_all", true},
    {"", "", true},
    {"", "x", false},
};

START_TEST(translation_matches_as_java_does)
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

/* The ERE itself, for constructs whose spelling matters to POSIX. */
START_TEST(translation_spells_posix)
{
    static const struct {
        const char *re, *ere;
    } t[] = {
        {"rel-\\d+", "^(rel-[0-9]+)$"},
        {"(?:a|b)*", "^((a|b)*)$"},
        {"[\\w.-]", "^([.0-9A-Z_a-z-])$"},   /* ']' first, '-' last, runs as ranges */
        {"[]^-]", "^([]^-])$"},
        {"[\\^]", "^(\\^)$"},                 /* '^' alone cannot be a bracket */
        {"[-^]", "^([-^])$"},
        {"[ab]", "^([ab])$"},
        {"[a-c]", "^([a-c])$"},
        {"\\$a\\.b\\{", "^(\\$a\\.b\\{)$"},
        {"a}]", "^(a}])$"},
        {"x{2,5}y{3,}", "^(x{2,5}y{3,})$"},
        {"^a$", "^(^a$)$"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        cg_strbuf ere = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
        int rc = cg_regex_java_to_pcre2(t[i].re, strlen(t[i].re), &ere, &why);
        ck_assert_msg(rc == 0, "%s: %s", t[i].re, why.buf);
        ck_assert_str_eq(ere.buf, t[i].ere);
        cg_strbuf_release(&ere);
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
    {"*a", CG_REGEX_INVALID, "'*' at character 2 has nothing before it"},
    {"+", CG_REGEX_INVALID, "nothing before it"},
    {"?", CG_REGEX_INVALID, "nothing before it"},
    {"a|*b", CG_REGEX_INVALID, "nothing before it"},
    {"(*)", CG_REGEX_INVALID, "nothing before it"},
    {"a*??", CG_REGEX_INVALID, "'?' at character 5 repeats a repetition"},
    {"a*?+", CG_REGEX_INVALID, "'+' at character 5 repeats a repetition"},
    {"a**", CG_REGEX_INVALID, "repeats a repetition"},
    {"a\\", CG_REGEX_INVALID, "a '\\' at the end escapes nothing"},
    {"[a\\", CG_REGEX_INVALID, "escapes nothing"},
    {"\\y", CG_REGEX_INVALID, "'\\y' is not an escape Java knows"},
    {"\\i", CG_REGEX_INVALID, "not an escape"},
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
    /* Java has these; POSIX has not */
    {"(?=a)a", CG_REGEX_UNSUPPORTED, "'(?=' (a lookahead)"},
    {"(?!main).*x", CG_REGEX_UNSUPPORTED, "'(?!' (a negative lookahead)"},
    {"(?<=a)b", CG_REGEX_UNSUPPORTED, "'(?<=' (a lookbehind)"},
    {"(?<!a)b", CG_REGEX_UNSUPPORTED, "'(?<!' (a negative lookbehind)"},
    {"(?<n>a)", CG_REGEX_UNSUPPORTED, "a named group"},
    {"(?>a)", CG_REGEX_UNSUPPORTED, "an atomic group"},
    {"(?i)main", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"(?i:main)", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"(?-i)main", CG_REGEX_UNSUPPORTED, "inline flags"},
    {"(a)\\1", CG_REGEX_UNSUPPORTED, "'\\1' (a backreference)"},
    {"\\0101", CG_REGEX_UNSUPPORTED, "an octal escape"},
    {"\\k<n>", CG_REGEX_UNSUPPORTED, "a named backreference"},
    {"a*+", CG_REGEX_UNSUPPORTED, "'*+' (a possessive quantifier)"},
    {"a++", CG_REGEX_UNSUPPORTED, "possessive"},
    {"a{2,}+", CG_REGEX_UNSUPPORTED, "possessive"},
    {"\\bmain", CG_REGEX_UNSUPPORTED, "a word boundary"},
    {"\\Bx", CG_REGEX_UNSUPPORTED, "a non-word boundary"},
    {"\\Amain", CG_REGEX_UNSUPPORTED, "the start of input"},
    {"main\\z", CG_REGEX_UNSUPPORTED, "the end of input"},
    {"main\\Z", CG_REGEX_UNSUPPORTED, "the end of input"},
    {"\\Gx", CG_REGEX_UNSUPPORTED, "previous match"},
    {"\\Qa.b\\E", CG_REGEX_UNSUPPORTED, "\\Q...\\E"},
    {"\\p{L}+", CG_REGEX_UNSUPPORTED, "a Unicode property class"},
    {"\\P{L}", CG_REGEX_UNSUPPORTED, "Unicode property"},
    {"[\\p{L}]", CG_REGEX_UNSUPPORTED, "Unicode property"},
    {"\\x41", CG_REGEX_UNSUPPORTED, "by its code"},
    {"\\u0041", CG_REGEX_UNSUPPORTED, "by its code"},
    {"\\cA", CG_REGEX_UNSUPPORTED, "by its code"},
    {"\\h", CG_REGEX_UNSUPPORTED, "whitespace class"},
    {"\\R", CG_REGEX_UNSUPPORTED, "line break"},
    {"\\X", CG_REGEX_UNSUPPORTED, "grapheme"},
    {"[a[b]]", CG_REGEX_UNSUPPORTED, "a union of classes"},
    {"[a-z&&[^x]]", CG_REGEX_UNSUPPORTED, "an intersection"},
    {"[\xC3\xA9]", CG_REGEX_UNSUPPORTED, "the non-ASCII character '\xC3\xA9' in a class"},
    {"^*a", CG_REGEX_UNSUPPORTED, "a repetition of an anchor"},
    {"a{2}{3}", CG_REGEX_UNSUPPORTED, "'{' at character 6 (a repetition of nothing, right after another)"},
    {"{2}", CG_REGEX_UNSUPPORTED, "'{' at character 2 (a repetition of nothing)"}, /* Java: "" */
    {"a|{2}b", CG_REGEX_UNSUPPORTED, "a repetition of nothing"},
    {"(?:{1,2}x)", CG_REGEX_UNSUPPORTED, "a repetition of nothing"},
    /* glibc's matcher is wrong there ((^a){2} matches "aa"): refused */
    {"(a|^b)+", CG_REGEX_UNSUPPORTED, "'+' at character 8 (a repetition of a group holding '^' or '$')"},
    {"(^a){2}", CG_REGEX_UNSUPPORTED, "a repetition of a group holding"},
    {"a(|$b)+", CG_REGEX_UNSUPPORTED, "a repetition of a group holding"},
    {"((^a))*", CG_REGEX_UNSUPPORTED, "a repetition of a group holding"},
    {"(?c)a", CG_REGEX_UNSUPPORTED, "inline flags"},
    /* regcomp's cost of optional copies grows with their square */
    {"a{0,501}", CG_REGEX_UNSUPPORTED, "optional repetitions"},
    {".{0,239}", CG_REGEX_UNSUPPORTED, "optional repetitions"},
    {"(a?){501}", CG_REGEX_UNSUPPORTED, "optional repetitions"},
    {"((a{0,30}){0,30}){0,9}", CG_REGEX_UNSUPPORTED, "optional repetitions"},
    {"(a*){5000}", CG_REGEX_UNSUPPORTED, "optional repetitions"}, /* a group that can match nothing */
    {"(a|){8000}", CG_REGEX_UNSUPPORTED, "optional repetitions"},
    {"(()){9000}", CG_REGEX_UNSUPPORTED, "optional repetitions"},
    /* regcomp's cost, the multibyte alternatives of '.' and negated classes counted */
    {"((.{99}){99}){10}", CG_REGEX_UNSUPPORTED, "more than 100000"},
    {"((\\W{99}){99}){10}", CG_REGEX_UNSUPPORTED, "more than 100000"},
    {"a{40000}", CG_REGEX_UNSUPPORTED, "more than 32767"},
    {"a{1,99999999999999999999}", CG_REGEX_UNSUPPORTED, "more than 32767"},
    {"((a{1000}){1000}){1000}", CG_REGEX_UNSUPPORTED, "multiply out"},
    {"(.{400}){400}", CG_REGEX_UNSUPPORTED, "multiply out"},
};

START_TEST(translation_refuses_what_it_cannot_match)
{
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        cg_strbuf ere = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
        cg_strbuf_adds(&ere, "kept");
        int rc = cg_regex_java_to_pcre2(refused[i].re, strlen(refused[i].re), &ere, &why);
        ck_assert_msg(rc == refused[i].rc, "/%s/: %d, expected %d (%s)", refused[i].re, rc, refused[i].rc,
                      why.buf ? why.buf : "translated");
        ck_assert_msg(strstr(why.buf, refused[i].why), "/%s/: '%s' lacks '%s'", refused[i].re, why.buf,
                      refused[i].why);
        ck_assert_str_eq(ere.buf, "kept");   /* nothing half-written */
        cg_strbuf_release(&ere);
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
    cg_strbuf ere = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    ck_assert_int_eq(cg_regex_java_to_pcre2(re, strlen(re), &ere, &why), CG_REGEX_UNSUPPORTED);
    ck_assert(strstr(why.buf, "nested more than 100 deep"));
    cg_strbuf_release(&ere);
    cg_strbuf_release(&why);
    /* 100 deep is fine */
    char ok[1 + 100 + 1 + 100 + 2];
    ok[0] = '/';
    memset(ok + 1, '(', 100);
    ok[101] = 'a';
    memset(ok + 102, ')', 100);
    strcpy(ok + 202, "/");
    ck_assert(matches(ok, "a"));
}
END_TEST

/* The message at the filter's position: what is wrong, and for what cigen
 * cannot evaluate, why it must. */
START_TEST(refusal_is_an_error_at_the_value)
{
    cg_error err;
    cg_error_init(&err);
    cg_pos pos = {"cigen.yml", 7, 15};
    ck_assert_ptr_null(cg_ref_value_new("/(?!main).*/", "tag", &pos, &err));
    ck_assert_str_eq(err.text.buf, "cigen.yml:7:15: error: the tag filter /(?!main).*/ uses '(?!' (a negative "
                     "lookahead), which cigen cannot evaluate: CircleCI reads it as a Java regex, but cigen evaluates "
                     "branch and tag filters itself (list --branch, select, special-PR checks) and knows only the part "
                     "of Java's syntax with a POSIX equivalent: characters, . * + ? {m,n} | (...) (?:...) ^ $ "
                     "[classes] \\d \\w \\s \\D \\W \\S");
    cg_error_release(&err);
    cg_error_init(&err);
    ck_assert_ptr_null(cg_ref_value_new("/a{2,1}/", "branch", &pos, &err));
    ck_assert_str_eq(err.text.buf, "cigen.yml:7:15: error: the branch filter /a{2,1}/ is not a valid regular "
                     "expression: '{2,1}' repeats at least 2 and at most 1 times (CircleCI reads it as a Java regex, "
                     "and Java refuses it too)");
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
    ck_assert_int_eq(cg_ref_cache_match(&c, "/(?!x).*/", "main"), -1);
    ck_assert_int_eq(cg_ref_cache_match(&c, "/(?!x).*/", "x"), -1);
    ck_assert_uint_eq(c.n, 2);   /* the names are never compiled, each regex once */
    cg_ref_cache_release(&c);
}
END_TEST

Suite *make_ref_regex_suite(void)
{
    Suite *s = suite_create("ref_regex");
    TCase *tc = tcase_create("ref_regex");
    tcase_add_test(tc, translation_matches_as_java_does);
    tcase_add_test(tc, names_are_not_regexes);
    tcase_add_test(tc, translation_spells_posix);
    tcase_add_test(tc, translation_refuses_what_it_cannot_match);
    tcase_add_test(tc, groups_nested_too_deep_are_refused);
    tcase_add_test(tc, refusal_is_an_error_at_the_value);
    tcase_add_test(tc, cache_matches_and_knows_what_it_cannot);
    suite_add_tcase(s, tc);
    return s;
}
