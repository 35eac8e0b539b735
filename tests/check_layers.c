/* The layering rule of generator/ (build-aux/check-layers.sh): the tree
 * passes, its includes and the calls between its objects, and a copy with
 * one deliberate violation of each kind fails with the file and line (or
 * the modules) named. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"

/* Runs the checker on a copy of generator/ after `edit` (a shell command
 * run in the copy). */
static tu_run check_copy(const char *edit)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf gen = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&gen, "%s/generator", tmp);
    cg_strbuf_addf(&cmd, "%s/generator", tu_srcdir());
    tu_copy_tree(cmd.buf, gen.buf);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "cd generator && %s && cd .. && sh '%s/build-aux/check-layers.sh' generator", edit,
                   tu_srcdir());
    tu_run r = tu_sh(tmp, cmd.buf);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&gen);
    cg_strbuf_release(&cmd);
    return r;
}

/* The objects of the binary under test (build/obj beside build/cigen). */
static void obj_dir(cg_strbuf *out)
{
    const char *exe = tu_cigen();
    const char *slash = strrchr(exe, '/');
    cg_strbuf_add(out, exe, slash ? (size_t)(slash - exe) : 0);
    cg_strbuf_adds(out, slash ? "/obj" : "obj");
}

START_TEST(tree_follows_the_rule)
{
    cg_strbuf cmd = CG_STRBUF_INIT, obj = CG_STRBUF_INIT;
    obj_dir(&obj);
    cg_strbuf_addf(&cmd, "test -d '%s' && sh '%s/build-aux/check-layers.sh' '%s/generator' '%s'", obj.buf,
                   tu_srcdir(), tu_srcdir(), obj.buf);
    cg_strbuf_release(&obj);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "generator/ breaks its layering rule:\n%s%s", r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
}
END_TEST

START_TEST(upward_include_fails)
{
    /* base/ is the lowest layer: it may not include the commands */
    tu_run r = check_copy("printf '#include \"cmd/cli.h\"\\n' >> base/strbuf.c");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "generator/base/strbuf.c:") && strstr(r.out, "cmd/ is above base/"), "%s", r.out);
    tu_run_free(&r);
}
END_TEST

START_TEST(include_cycle_fails)
{
    /* two modules of one layer that include each other */
    tu_run r = check_copy("printf '#include \"lang/tree.h\"\\n' >> lang/yamlload.h");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "include cycle") && strstr(r.out, "lang/yamlload") && strstr(r.out, "lang/tree"),
                  "%s", r.out);
    tu_run_free(&r);
}
END_TEST

/* An _impl.h is part of its module: a header that includes another
 * module's makes a cycle with that module, named by its own name. */
START_TEST(impl_header_is_its_module)
{
    tu_run r = check_copy("printf '#include \"lang/tree_impl.h\"\\n' >> lang/yamlload.h");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "include cycle") && strstr(r.out, "  lang/tree\n") &&
                      !strstr(r.out, "tree_impl"), "%s", r.out);
    tu_run_free(&r);
}
END_TEST

/* Two modules whose objects call each other (no include shows it) fail;
 * parts of one module (name_*.c beside name_impl.h) may. */
START_TEST(call_cycle_fails)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "mkdir -p obj/lang obj/audit && "
                         "printf 'void cg_fake_b(void);\\nvoid cg_fake_a(void);\\nvoid cg_fake_a(void) { cg_fake_b(); }\\n' > a.c && "
                         "printf 'void cg_fake_a(void);\\nvoid cg_fake_b(void);\\nvoid cg_fake_b(void) { cg_fake_a(); }\\n' > b.c && "
                         "cc -c a.c -o obj/lang/yamlload.o && cc -c b.c -o obj/lang/placeholder.o && "
                         "cc -c a.c -o obj/audit/lint.o && cc -c b.c -o obj/audit/lint_defs.o && "
                         "sh '%s/build-aux/check-layers.sh' '%s/generator' obj",
                   tu_srcdir(), tu_srcdir());
    tu_run r = tu_sh(tmp, cmd.buf);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "call cycle") && strstr(r.out, "lang/yamlload") && strstr(r.out, "lang/placeholder") &&
                      !strstr(r.out, "audit/lint"), "%s", r.out);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
    tu_rm_rf(tmp);
    free(tmp);
}
END_TEST

START_TEST(io_in_a_pure_layer_fails)
{
    tu_run r = check_copy("printf 'void f(void);\\nvoid f(void) { fopen(\"x\", \"r\"); }\\n' >> render/header.c");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "generator/render/header.c:") && strstr(r.out, "outside io/ and cmd/"), "%s", r.out);
    tu_run_free(&r);
}
END_TEST

START_TEST(include_without_folder_fails)
{
    tu_run r = check_copy("printf '#include \"strbuf.h\"\\n' >> base/diag.c");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.out, "generator/base/diag.c:") && strstr(r.out, "without its folder"), "%s", r.out);
    tu_run_free(&r);
}
END_TEST

Suite *make_layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("rule");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tree_follows_the_rule);
    tcase_add_test(tc, upward_include_fails);
    tcase_add_test(tc, include_cycle_fails);
    tcase_add_test(tc, impl_header_is_its_module);
    tcase_add_test(tc, call_cycle_fails);
    tcase_add_test(tc, io_in_a_pure_layer_fails);
    tcase_add_test(tc, include_without_folder_fails);
    suite_add_tcase(s, tc);
    return s;
}
