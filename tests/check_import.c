/* cigen import on real configs: the embedded default's config.yml and every
 * example's (the dynamic example's setup config and continuation too) import
 * with a proof of EQUAL, the project imported generates a config in which
 * no job changed, the default's matrices are found as trees, and the
 * examples' shapes (shared lists, a fan-in) are found. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"

static tu_run import_into(const char *file, const char *tmp)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "rm -rf '%s' && $CIGEN import '%s' -o '%s'", tmp, file, tmp);
    tu_run r = tu_sh(NULL, cmd.buf);
    cg_strbuf_release(&cmd);
    return r;
}

START_TEST(import_default)
{
    char tmp[] = "/tmp/cigen-import-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    cg_strbuf file = CG_STRBUF_INIT, dir = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&file, "%s/config.yml", tu_srcdir());
    cg_strbuf_addf(&dir, "%s/p", tmp);
    tu_run r = import_into(file.buf, dir.buf);
    ck_assert_msg(r.status == 0 && strstr(r.out, "\nEQUAL: "), "import of the default:\n%s%s", r.out, r.err);
    /* its matrices are found: most of its entries are made by trees (today
     * 4 trees make 284 of its 292 entries: the builds, tests and uploads of
     * two workflows with tiers and on_request, and the smoke tests) */
    const char *inf = strstr(r.out, "inferred: ");
    size_t trees = 0, cells = 0, entries = 0, templates = 0, statics = 0;
    ck_assert_msg(inf && sscanf(inf, "inferred: %zu tree%*[s] (%zu cells, %zu entries), %zu template%*[s], %zu static",
                                &trees, &cells, &entries, &templates, &statics) == 5,
                  "%s", r.out);
    ck_assert_msg(trees >= 1 && entries > 4 * statics, "%s", r.out);
    tu_run_free(&r);
    /* the project makes the same jobs: generate over the original says so */
    cg_strbuf_addf(&cmd, "cp '%s' '%s/config.yml' && $CIGEN -C '%s' generate --force && $CIGEN -C '%s' lint",
                   file.buf, dir.buf, dir.buf, dir.buf);
    r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0 && strstr(r.out, "(no job added, removed or changed)") &&
                      strstr(r.out, "0 errors, 0 warnings"),
                  "%s%s", r.out, r.err);
    tu_run_free(&r);
    tu_rm_rf(tmp);
    cg_strbuf_release(&file);
    cg_strbuf_release(&dir);
    cg_strbuf_release(&cmd);
}
END_TEST

START_TEST(import_examples)
{
    static const char *const files[] = {
        "examples/pytorch-like/config.yml",   "examples/torchvision-like/config.yml",
        "examples/conda-forge-like/config.yml", "examples/dynamic/config.yml",
        "examples/dynamic/continuation.yml",
    };
    char tmp[] = "/tmp/cigen-import-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        cg_strbuf file = CG_STRBUF_INIT, dir = CG_STRBUF_INIT;
        cg_strbuf_addf(&file, "%s/%s", tu_srcdir(), files[i]);
        cg_strbuf_addf(&dir, "%s/p%zu", tmp, i);
        tu_run r = import_into(file.buf, dir.buf);
        ck_assert_msg(r.status == 0 && strstr(r.out, "\nEQUAL: "), "import of %s:\n%s%s", files[i], r.out, r.err);
        tu_run_free(&r);
        cg_strbuf_release(&file);
        cg_strbuf_release(&dir);
    }
    tu_rm_rf(tmp);
}
END_TEST

/* The shapes import infers on an example: torchvision-like's trees share
 * their Python and CUDA lists, pytorch-like's Android builds gather in a
 * fan-in; both still EQUAL, and the project generates the same jobs. */
START_TEST(import_shapes)
{
    static const struct {
        const char *file, *want;
    } cases[] = {
        {"examples/torchvision-like/config.yml", "from shared list python_version"},
        {"examples/pytorch-like/config.yml", "(a fan-in: per [])"},
    };
    char tmp[] = "/tmp/cigen-import-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cg_strbuf file = CG_STRBUF_INIT, dir = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT;
        cg_strbuf_addf(&file, "%s/%s", tu_srcdir(), cases[i].file);
        cg_strbuf_addf(&dir, "%s/p%zu", tmp, i);
        tu_run r = import_into(file.buf, dir.buf);
        ck_assert_msg(r.status == 0 && strstr(r.out, "\nEQUAL: ") && strstr(r.out, cases[i].want),
                      "import of %s:\n%s%s", cases[i].file, r.out, r.err);
        tu_run_free(&r);
        cg_strbuf_addf(&cmd, "cp '%s' '%s/config.yml' && $CIGEN -C '%s' generate --force && $CIGEN -C '%s' lint",
                       file.buf, dir.buf, dir.buf, dir.buf);
        r = tu_sh(NULL, cmd.buf);
        ck_assert_msg(r.status == 0 && strstr(r.out, "(no job added, removed or changed)") &&
                          strstr(r.out, "0 errors, 0 warnings"),
                      "%s: %s%s", cases[i].file, r.out, r.err);
        tu_run_free(&r);
        cg_strbuf_release(&file);
        cg_strbuf_release(&dir);
        cg_strbuf_release(&cmd);
    }
    tu_rm_rf(tmp);
}
END_TEST

/* An exclusion is widened to the dimensions it needs: a pair missing for
 * every Python is one pattern naming the pair, not one per cell. */
START_TEST(import_exclude_widened)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf cfg = CG_STRBUF_INIT, file = CG_STRBUF_INIT, dir = CG_STRBUF_INIT;
    cg_strbuf_adds(&cfg, "version: 2.1\njobs:\n  b:\n    parameters:\n      os: {type: string}\n"
                         "      py: {type: string}\n      cu: {type: string}\n"
                         "    docker: [{image: example/x:1}]\n    steps: [checkout]\n"
                         "workflows:\n  ci:\n    jobs:\n");
    static const char *const oses[] = {"linux", "windows"}, *const cus[] = {"cpu", "cu92", "cu101"},
                             *const pys[] = {"3.8", "3.9", "3.10"};
    for (size_t o = 0; o < 2; o++)
        for (size_t c = 0; c < 3; c++)
            for (size_t p = 0; p < 3; p++)
                if (!(o == 1 && c == 1))
                    cg_strbuf_addf(&cfg, "      - b:\n          name: b_%s_%s_py%s\n          os: %s\n"
                                   "          py: \"%s\"\n          cu: %s\n", oses[o], cus[c], pys[p], oses[o],
                                   pys[p], cus[c]);
    cg_strbuf_addf(&file, "%s/config.yml", tmp);
    cg_strbuf_addf(&dir, "%s/p", tmp);
    tu_writes(file.buf, cfg.buf);
    tu_run r = import_into(file.buf, dir.buf);
    ck_assert_msg(r.status == 0 && strstr(r.out, "\nEQUAL: ") && strstr(r.out, "3 cells excluded by 1 pattern"),
                  "%s%s", r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_addf(&dir, "/dimensions/b.yml");
    char *tree = tu_read(dir.buf, NULL);
    ck_assert_msg(tree && strstr(tree, "exclude:\n  - os: windows\n    cu: cu92\nphases:"), "%s", tree ? tree : "");
    free(tree);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&cfg);
    cg_strbuf_release(&file);
    cg_strbuf_release(&dir);
}
END_TEST

Suite *make_import_suite(void)
{
    Suite *s = suite_create("import");
    TCase *tc = tcase_create("import");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, import_default);
    tcase_add_test(tc, import_examples);
    tcase_add_test(tc, import_shapes);
    tcase_add_test(tc, import_exclude_widened);
    suite_add_tcase(s, tc);
    return s;
}
