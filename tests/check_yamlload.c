/* The YAML loader: values, positions, and every rejection. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"
#include "lang/yamlload.h"

static cg_doc *load(const char *text, cg_error *err)
{
    cg_error_init(err);
    return cg_doc_parse("t.yml", text, strlen(text), NULL, err);
}

static void expect_error(const char *text, const char *message)
{
    cg_error err;
    cg_doc *d = load(text, &err);
    ck_assert_msg(d == NULL, "expected an error for: %s", text);
    ck_assert_str_eq(cg_strbuf_str(&err.text), message);
    cg_error_release(&err);
}

START_TEST(scalars_are_text)
{
    cg_error err;
    cg_doc *d = load("a: 3.10\nb: \"3.10\"\nc: true\nd:\n", &err);
    ck_assert_ptr_nonnull(d);
    json_t *r = cg_doc_root(d);
    ck_assert_str_eq(json_string_value(json_object_get(r, "a")), "3.10");
    ck_assert_str_eq(json_string_value(json_object_get(r, "c")), "true");
    ck_assert_str_eq(json_string_value(json_object_get(r, "d")), "");
    ck_assert(cg_doc_is_plain(d, "/a"));
    ck_assert(!cg_doc_is_plain(d, "/b"));
    ck_assert_int_eq(cg_doc_style(d, "/b"), CG_STYLE_DOUBLE);
    cg_doc_free(d);
    cg_error_release(&err);
}
END_TEST

START_TEST(positions_by_path)
{
    cg_error err;
    cg_doc *d = load("jobs:\n  build:\n    steps:\n      - checkout\n      - run: make\n\"a/b~\": x\n", &err);
    ck_assert_ptr_nonnull(d);
    cg_pos p = cg_doc_where(d, "/jobs/build/steps/1/run");
    ck_assert_uint_eq(p.line, 5);
    ck_assert_uint_eq(p.col, 14);
    p = cg_doc_key_where(d, "/jobs/build");
    ck_assert_uint_eq(p.line, 2);
    ck_assert_uint_eq(p.col, 3);
    p = cg_doc_key_where(d, "/a~1b~0");
    ck_assert_uint_eq(p.line, 6);
    ck_assert_uint_eq(p.col, 1);
    /* unknown paths fall back to the nearest ancestor */
    p = cg_doc_where(d, "/jobs/build/nope/deeper");
    ck_assert_uint_eq(p.line, 3);
    cg_doc_free(d);
    cg_error_release(&err);
}
END_TEST

START_TEST(aliases_and_merges)
{
    cg_error err;
    cg_doc *d = load("base: &b\n  image: x\n  n: 1\nextra: &e {z: 3}\n"
                     "job:\n  <<: [*b, *e]\n  n: 2\ncopy: *b\n",
                     &err);
    ck_assert_ptr_nonnull(d);
    json_t *job = json_object_get(cg_doc_root(d), "job");
    ck_assert_str_eq(json_string_value(json_object_get(job, "n")), "2");
    ck_assert_str_eq(json_string_value(json_object_get(job, "image")), "x");
    ck_assert_str_eq(json_string_value(json_object_get(job, "z")), "3");
    ck_assert_ptr_null(json_object_get(job, "<<"));
    /* a merged key's position is where it was written */
    cg_pos p = cg_doc_key_where(d, "/job/image");
    ck_assert_uint_eq(p.line, 2);
    p = cg_doc_where(d, "/copy/n");
    ck_assert_uint_eq(p.line, 3);
    ck_assert_uint_eq(cg_doc_anchor_count(d), 2);
    /* the aliases, in order, where they are written */
    ck_assert_uint_eq(cg_doc_alias_count(d), 3);
    ck_assert_str_eq(cg_doc_alias(d, 0, &p), "b");
    ck_assert_uint_eq(p.line, 6);
    ck_assert_uint_eq(p.col, 8);
    ck_assert_str_eq(cg_doc_alias(d, 1, NULL), "e");
    ck_assert_str_eq(cg_doc_alias(d, 2, &p), "b");
    ck_assert_uint_eq(p.line, 8);
    ck_assert_uint_eq(p.col, 7);
    cg_doc_free(d);
    cg_error_release(&err);
}
END_TEST

START_TEST(aliases_of_an_earlier_document)
{
    cg_error err;
    cg_doc *a = load("base: &b\n  image: x\nlist: &l [1, 2]\n", &err);
    ck_assert_ptr_nonnull(a);
    const char *text = "# uses a.yml's anchors\njob:\n  <<: *b\n  n: 2\ncopy: *l\nown: &b {image: y}\nmine: *b\n";
    const cg_doc *scope[] = {a};
    cg_load_opts o = {.scope = scope, .nscope = 1};
    cg_doc *d = cg_doc_parse("b.yml", text, strlen(text), &o, &err);
    ck_assert_msg(d != NULL, "%s", cg_strbuf_str(&err.text));
    cg_doc_free(a); /* the values are shared, not borrowed */
    json_t *r = cg_doc_root(d);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "job"), "image")), "x");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(r, "copy"), 1)), "2");
    /* a later anchor of its own wins */
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "mine"), "image")), "y");
    /* positions below a foreign anchor are the alias's own, in this file
     * (a merged key's is the '<<' line) */
    cg_pos p = cg_doc_key_where(d, "/job/image");
    ck_assert_str_eq(p.file, "b.yml");
    ck_assert_uint_eq(p.line, 3);
    ck_assert_uint_eq(p.col, 3);
    p = cg_doc_where(d, "/copy/1");
    ck_assert_uint_eq(p.line, 5);
    ck_assert_uint_eq(p.col, 7);
    ck_assert_uint_eq(cg_doc_alias_count(d), 3);
    ck_assert_ptr_eq(cg_doc_alias_source(d, 0), scope[0]);
    ck_assert_ptr_null(cg_doc_alias_source(d, 2));
    cg_doc_free(d);
    /* without the scope the alias is undefined; with an empty one it says why */
    expect_error("job: *b\n", "t.yml:1:6: error: undefined alias '*b'");
    cg_load_opts none = {.scope = scope, .nscope = 0};
    d = cg_doc_parse("c.yml", "job: *b\n", 8, &none, &err);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(cg_strbuf_str(&err.text), "c.yml:1:6: error: undefined alias '*b' (a fragment sees its own "
                     "anchors and those of the fragments before it in the manifest)");
    cg_error_release(&err);
}
END_TEST

START_TEST(empty_stream)
{
    cg_error err;
    cg_doc *d = load("# only a comment\n\n", &err);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_null(cg_doc_root(d));
    cg_doc_free(d);
    cg_error_release(&err);
}
END_TEST

START_TEST(rejections)
{
    expect_error("a: 1\nb: 2\na: 3\n", "t.yml:3:1: error: duplicate key 'a'\nt.yml:1:1: note: 'a' was first defined here");
    expect_error("a:\n\tb: 1\n", "t.yml:2:1: error: tab character here; YAML indentation must use spaces");
    expect_error("a: 1\n---\nb: 2\n", "t.yml:2:1: error: a second YAML document starts here; a file holds one document");
    expect_error("a: [1, 2\n", "t.yml:2:1: error: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 4)");
    expect_error("a: *nope\n", "t.yml:1:4: error: undefined alias '*nope'");
    expect_error("a: &x [1, *x]\n", "t.yml:1:11: error: alias '*x' refers to a node that contains it");
    expect_error("\xef\xbb\xbf" "a: 1\n", "t.yml:1:1: error: file starts with a byte-order mark (U+FEFF); save it as UTF-8 without a BOM");
    expect_error("a: \"\xff\"\n", "t.yml:1:5: error: invalid UTF-8 byte 0xFF; cigen reads UTF-8 text only");
    expect_error("a: 1\x01\n", "t.yml:1:5: error: control character U+0001 is not allowed in YAML");
    expect_error("!foo 1\n", "t.yml:1:1: error: unsupported tag '!foo'");
    expect_error("? [a]\n: 1\n", "t.yml:1:3: error: a key must be a scalar, not a sequence");
    expect_error("a: &x 1\n*x : 2\n", "t.yml:2:1: error: an alias (*x) cannot be used as a key");
    expect_error("a:\n  <<: 5\n", "t.yml:2:7: error: merge key '<<' needs a mapping or a list of mappings");
    /* an unquoted placeholder after other flow mappings (found from the
     * line the last one was on) and after multi-byte characters */
    expect_error("a: {x: 1}\nb: {y: \"\xc3\xa9\xc3\xa9\"}\n\nc: [\"\xe2\x82\xac\", {z: 2}]\nd: {{ v }}\n",
                 "t.yml:5:4: error: '{{ v }}' must be quoted: unquoted, YAML reads '{' as the start of a mapping; "
                 "write \"{{ v }}\"");
    expect_error("a: {x: 1}\nb: [\"\xc3\xa9\", {{ v }}]\n",
                 "t.yml:2:10: error: '{{ v }}' must be quoted: unquoted, YAML reads '{' as the start of a mapping; "
                 "write \"{{ v }}\"");
}
END_TEST

START_TEST(nul_in_text_is_reported)
{
    /* expect_error uses strlen; this input has an embedded NUL */
    cg_error err;
    cg_error_init(&err);
    cg_doc *d = cg_doc_parse("t.yml", "a\0b", 3, NULL, &err);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(cg_strbuf_str(&err.text), "t.yml:1:2: error: NUL byte in file; is it a binary file?");
    cg_error_release(&err);
}
END_TEST

START_TEST(deep_nesting_is_cut)
{
    size_t n = 10000;
    char *text = malloc(2 * n + 2);
    memset(text, '[', n);
    memset(text + n, ']', n);
    text[2 * n] = '\n';
    text[2 * n + 1] = '\0';
    cg_error err;
    cg_doc *d = load(text, &err);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(cg_strbuf_str(&err.text), "t.yml:1:101: error: nesting is deeper than 100 levels");
    cg_error_release(&err);
    free(text);
}
END_TEST

START_TEST(alias_bomb_is_cut)
{
    cg_strbuf s = CG_STRBUF_INIT;
    cg_strbuf_adds(&s, "a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    const char *prev = "a";
    static const char *const names[] = {"b", "c", "d", "e", "f", "g", "h", "i", "j"};
    for (size_t i = 0; i < 9; i++) {
        cg_strbuf_addf(&s, "%s: &%s [", names[i], names[i]);
        for (int k = 0; k < 10; k++)
            cg_strbuf_addf(&s, "%s*%s", k ? ", " : "", prev);
        cg_strbuf_adds(&s, "]\n");
        prev = names[i];
    }
    cg_error err;
    cg_doc *d = load(s.buf, &err);
    ck_assert_ptr_null(d);
    ck_assert(strstr(cg_strbuf_str(&err.text), "is it an alias bomb?") != NULL);
    cg_error_release(&err);
    cg_strbuf_release(&s);
}
END_TEST

START_TEST(size_limit)
{
    cg_load_opts o = {.max_bytes = 10};
    cg_error err;
    cg_error_init(&err);
    cg_doc *d = cg_doc_parse("t.yml", "a: 123456789\n", 13, &o, &err);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(cg_strbuf_str(&err.text), "t.yml: error: file is too large (13 bytes; the limit is 10)");
    cg_error_release(&err);
}
END_TEST

/* What SnakeYAML 1.33 (CircleCI's parser) refuses though libyaml reads it,
 * in the bytes cigen copies (a fragment): each refused where it is. */
START_TEST(snake_refusals_in_copied_text)
{
    static const char tail[] = "; CircleCI's YAML parser (SnakeYAML) refuses it, though libyaml reads it";
    static const struct {
        const char *text, *where, *what;
    } cases[] = {
        {"key:\tvalue\n", "1:5", "tab character where YAML expects the next item: use spaces"},
        {"key:\t# comment\n", "1:5", "tab character where YAML expects the next item: use spaces"},
        {"key:\t\n", "1:5", "tab character where YAML expects the next item: use spaces"},
        {"a: b\nkey:\t\nc: d\n", "2:5", "tab character where YAML expects the next item: use spaces"},
        {"k: [a,\n\tb]\n", "2:1", "tab character where YAML expects the next item: use spaces"},
        {"k: [a,\tb]\n", "1:7", "tab character where YAML expects the next item: use spaces"},
        {"k: {a:\tb}\n", "1:7", "tab character where YAML expects the next item: use spaces"},
        {"k: \"a\"\t\n", "1:7", "tab character where YAML expects the next item: use spaces"},
        {"k: 'a'\t# c\n", "1:7", "tab character where YAML expects the next item: use spaces"},
        {"k: &x\tv\n", "1:6", "tab character where YAML expects the next item: use spaces"},
        {"k: !!str\tv\n", "1:9", "tab character where YAML expects the next item: use spaces"},
        {"k:\n  - a\n  - b\n...\t\n", "4:4", "tab character where YAML expects the next item: use spaces"},
        {"%YAML\t1.1\n---\nk: v\n", "1:6", "tab character in a directive: use spaces"},
        {"k: \"\\/\"\n", "1:5", "escape \"\\/\": write '/' alone"},
        {"k: \"a \\\tb\"\n", "1:7", "escape of a tab character: write \"\\t\""},
        {"k: |#c\n  x\n", "1:5", "a comment right after a block scalar's indicator: put a space before '#'"},
        {"k: >-#c\n  x\n", "1:6", "a comment right after a block scalar's indicator: put a space before '#'"},
        {"k: |\t\n  x\n", "1:5", "tab character after a block scalar's indicator: use spaces"},
        {"k: |2-\t# c\n   x\n", "1:7", "tab character after a block scalar's indicator: use spaces"},
        {"k: | \t# c\n  x\n", "1:6", "tab character where YAML expects the next item: use spaces"},
        {"k: a\n \tb\n", "2:2", "tab character leading a line of a plain scalar: use spaces"},
        {"k: <<\n", "1:4", "'<<' is YAML 1.1's merge key, which may only be a mapping's key: quote it"},
        {"- [<<]\n", "1:4", "'<<' is YAML 1.1's merge key, which may only be a mapping's key: quote it"},
        {"k: ._\n", "1:4", "this plain scalar is a YAML 1.1 float without a digit: quote it"},
        {"k: -.__e+12\n", "1:4", "this plain scalar is a YAML 1.1 float without a digit: quote it"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cg_error err;
        cg_error_init(&err);
        cg_load_opts o = {.copied = true};
        cg_doc *d = cg_doc_parse("t.yml", cases[i].text, strlen(cases[i].text), &o, &err);
        cg_strbuf want = CG_STRBUF_INIT;
        cg_strbuf_addf(&want, "t.yml:%s: error: %s%s", cases[i].where, cases[i].what, tail);
        ck_assert_msg(d == NULL && cg_streq(cg_strbuf_str(&err.text), want.buf), "case %zu %s: %s", i,
                      cases[i].text, d ? "loaded" : cg_strbuf_str(&err.text));
        cg_strbuf_release(&want);
        cg_error_release(&err);
        /* a file cigen does not copy is read as libyaml reads it */
        d = load(cases[i].text, &err);
        ck_assert_msg(d != NULL || !strstr(cg_strbuf_str(&err.text), "SnakeYAML"), "case %zu", i);
        cg_doc_free(d);
        cg_error_release(&err);
    }
    /* what SnakeYAML reads stays: tabs after a plain scalar, in comments,
     * in quoted and block scalars, a merge key, floats with a digit */
    static const char *const fine[] = {
        "k: a\t\n", "k: a\t# c\n", "k: a # \tc\n", "k: [a\t, b]\n", "k: {a: b\t}\n", "k: \"a\tb\"\n",
        "k: 'a\n\tb'\n", "k: \"a\n\tb\"\n", "k: |\n  a\tb\n", "k: >\n  a\n  \tb\n", "a: &a {x: 1}\nb:\n  <<: *a\n",
        "k: ._5\n", "k: .e1\n", "k: '<<'\n", "k: <<x\n", "k: \"\\t\\n\\\\\\\"\\x41\\u00e9\"\n", "k: | # c\n  x\n",
        "k: a\tb\n", "k\t: v\n", "# \t\nk: v\n",
    };
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        cg_error err;
        cg_error_init(&err);
        cg_load_opts o = {.copied = true};
        cg_doc *d = cg_doc_parse("t.yml", fine[i], strlen(fine[i]), &o, &err);
        ck_assert_msg(d != NULL, "fine %zu %s: %s", i, fine[i], cg_strbuf_str(&err.text));
        cg_doc_free(d);
        cg_error_release(&err);
    }
}
END_TEST

Suite *make_yamlload_suite(void)
{
    Suite *s = suite_create("yamlload");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, scalars_are_text);
    tcase_add_test(tc, positions_by_path);
    tcase_add_test(tc, aliases_and_merges);
    tcase_add_test(tc, aliases_of_an_earlier_document);
    tcase_add_test(tc, empty_stream);
    tcase_add_test(tc, rejections);
    tcase_add_test(tc, nul_in_text_is_reported);
    tcase_add_test(tc, deep_nesting_is_cut);
    tcase_add_test(tc, alias_bomb_is_cut);
    tcase_add_test(tc, size_limit);
    tcase_add_test(tc, snake_refusals_in_copied_text);
    suite_add_tcase(s, tc);
    return s;
}
