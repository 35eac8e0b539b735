/* lang/placeholder: the {{ name }} parser of templates and patterns. */
#include <stdlib.h>
#include <string.h>

#include "lang/placeholder.h"
#include "testutil.h"
#include "base/util.h"

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

Suite *make_placeholder_suite(void)
{
    Suite *s = suite_create("placeholder");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, placeholder_segments);
    tcase_add_test(tc, placeholder_errors);
    suite_add_tcase(s, tc);
    return s;
}
