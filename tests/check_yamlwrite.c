/* The writer: its quoting table, layout, and a round trip through libyaml. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "lang/yamlload.h"
#include "lang/yamlwrite.h"

static const struct {
    const char *in;
    const char *out; /* the value as written after "k: " */
} table[] = {
    {"plain", "plain"},
    {"3.7m", "3.7m"},
    {"cu100", "cu100"},
    {"-O2", "-O2"},
    {"a:b", "a:b"},
    {"a#b", "a#b"},
    {"caf\xc3\xa9", "caf\xc3\xa9"},
    {"binary_linux_conda_3_7_cpu_build", "binary_linux_conda_3_7_cpu_build"},
    {"3.10", "\"3.10\""},
    {"3", "\"3\""},
    {"-1", "\"-1\""},
    {"+1", "\"+1\""},
    {"0x1F", "\"0x1F\""},
    {"0o17", "\"0o17\""},
    {"017", "\"017\""},
    {"089", "\"089\""},
    {"1_000", "\"1_000\""},
    /* floats without a digit to YAML 1.1, floats SnakeYAML cannot build */
    {"._", "\"._\""},
    {"+._", "\"+._\""},
    {"-.__e+12", "\"-.__e+12\""},
    {".e1", ".e1"},
    {"1:20", "\"1:20\""},
    {"1e3", "\"1e3\""},
    {"1.5e-3", "\"1.5e-3\""},
    {".5", "\".5\""},
    {".inf", "\".inf\""},
    {"-.Inf", "\"-.Inf\""},
    {".NaN", "\".NaN\""},
    {".", "."},
    {"_", "_"},
    {"2019-05-30", "\"2019-05-30\""},
    {"on", "\"on\""},
    {"Off", "\"Off\""},
    {"yes", "\"yes\""},
    {"NO", "\"NO\""},
    {"y", "\"y\""},
    {"n", "\"n\""},
    {"true", "\"true\""},
    {"False", "\"False\""},
    {"null", "\"null\""},
    {"Null", "\"Null\""},
    {"~", "\"~\""},
    {"", "\"\""},
    {"<<", "\"<<\""},
    {"=", "\"=\""},
    {" lead", "\" lead\""},
    {"trail ", "\"trail \""},
    {"a: b", "\"a: b\""},
    {"a #b", "\"a #b\""},
    {"key:", "\"key:\""},
    {"- x", "\"- x\""},
    {"-", "\"-\""},
    {"#x", "\"#x\""},
    {"&x", "\"&x\""},
    {"*x", "\"*x\""},
    {"!x", "\"!x\""},
    {"|x", "\"|x\""},
    {">x", "\">x\""},
    {"%x", "\"%x\""},
    {"@x", "\"@x\""},
    {"`x", "\"`x\""},
    {"'x'", "\"'x'\""},
    {"\"x\"", "\"\\\"x\\\"\""},
    {"[x]", "\"[x]\""},
    {"{x}", "\"{x}\""},
    {",x", "\",x\""},
    {"?x", "\"?x\""},
    {":x", "\":x\""},
    {"---", "\"---\""},
    {"...", "\"...\""},
    {"tab\there", "\"tab\\there\""},
    {"back\\slash", "back\\slash"},
    {"\x01", "\"\\x01\""},
    {"nel\xc2\x85", "\"nel\\N\""},
    {"multi\nline\n", "|\n  multi\n  line\n"},
    {"no\ntrail", "|-\n  no\n  trail\n"},
    {"keep\n\n", "|+\n  keep\n\n"},
    {" indented\nnext", "|2-\n   indented\n  next\n"},
    {"blank\n\nline\n", "|\n  blank\n\n  line\n"},
    {"trailing \nspace", "\"trailing \\nspace\""},
    {"cr\r\nlf", "\"cr\\r\\nlf\""},
};

static char *emit(const char *value)
{
    cg_strbuf out = CG_STRBUF_INIT;
    cg_yw w;
    cg_yw_init(&w, &out);
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "k");
    cg_yw_strs(&w, value);
    cg_yw_end(&w);
    cg_yw_release(&w);
    return cg_strbuf_detach(&out, NULL);
}

START_TEST(quoting_table)
{
    const char *in = table[_i].in;
    char *yaml = emit(in);
    cg_strbuf want = CG_STRBUF_INIT;
    cg_strbuf_addf(&want, "k: %s", table[_i].out);
    if (!strchr(table[_i].out, '\n'))
        cg_strbuf_addc(&want, '\n');
    ck_assert_msg(strcmp(yaml, want.buf) == 0, "writing %s:\nwant: %s\ngot:  %s", in, want.buf, yaml);
    /* it reads back as the same string */
    cg_error err;
    cg_error_init(&err);
    cg_doc *d = cg_doc_parse("w.yml", yaml, strlen(yaml), NULL, &err);
    ck_assert_msg(d != NULL, "%s does not parse: %s", yaml, cg_strbuf_str(&err.text));
    json_t *v = json_object_get(cg_doc_root(d), "k");
    ck_assert_msg(json_string_length(v) == strlen(in) && memcmp(json_string_value(v), in, strlen(in)) == 0,
                  "round trip of %s gave %s", in, json_string_value(v));
    if (cg_doc_is_plain(d, "/k"))
        ck_assert_msg(cg_yaml_resolve(in, strlen(in)) == CG_T_STR, "%s is plain but not a string", in);
    cg_doc_free(d);
    cg_error_release(&err);
    cg_strbuf_release(&want);
    free(yaml);
}
END_TEST

START_TEST(resolve)
{
    ck_assert_int_eq(cg_yaml_resolve("true", 4), CG_T_BOOL);
    ck_assert_int_eq(cg_yaml_resolve("42", 2), CG_T_INT);
    ck_assert_int_eq(cg_yaml_resolve("2.1", 3), CG_T_FLOAT);
    ck_assert_int_eq(cg_yaml_resolve("~", 1), CG_T_NULL);
    ck_assert_int_eq(cg_yaml_resolve("", 0), CG_T_NULL);
    ck_assert_int_eq(cg_yaml_resolve("3.7m", 4), CG_T_STR);
    ck_assert_int_eq(cg_yaml_resolve("cpu", 3), CG_T_STR);
    ck_assert_int_eq(cg_yaml_resolve("1.2.3", 5), CG_T_STR);
}
END_TEST

START_TEST(layout)
{
    cg_strbuf out = CG_STRBUF_INIT;
    cg_yw w;
    cg_yw_init(&w, &out);
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "jobs");
    cg_yw_seq_begin(&w);
    cg_yw_strs(&w, "setup");
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "build");
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "requires");
    cg_yw_seq_begin(&w);
    cg_yw_strs(&w, "setup");
    cg_yw_end(&w);
    cg_yw_keys(&w, "parallel");
    cg_yw_raw(&w, "4", 1);
    cg_yw_keys(&w, "none");
    cg_yw_map_begin(&w);
    cg_yw_end(&w);
    cg_yw_end(&w);
    cg_yw_end(&w);
    cg_yw_seq_begin(&w);
    cg_yw_strs(&w, "a");
    cg_yw_strs(&w, "b");
    cg_yw_end(&w);
    cg_yw_seq_begin(&w);
    cg_yw_end(&w);
    cg_yw_end(&w);
    cg_yw_end(&w);
    cg_yw_release(&w);
    ck_assert_str_eq(out.buf, "jobs:\n"
                              "  - setup\n"
                              "  - build:\n"
                              "      requires:\n"
                              "        - setup\n"
                              "      parallel: 4\n"
                              "      none: {}\n"
                              "  - - a\n"
                              "    - b\n"
                              "  - []\n");
    cg_strbuf_release(&out);
}
END_TEST

Suite *make_yamlwrite_suite(void)
{
    Suite *s = suite_create("yamlwrite");
    TCase *tc = tcase_create("write");
    tcase_add_loop_test(tc, quoting_table, 0, (int)(sizeof table / sizeof table[0]));
    tcase_add_test(tc, resolve);
    tcase_add_test(tc, layout);
    suite_add_tcase(s, tc);
    return s;
}
