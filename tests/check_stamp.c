/* check's stamps (generator/cmd/stamp.h): a check answered by the stamp of
 * an earlier one says what the full check says, and any change to what the
 * full check read — a source, an output, a diagram, a file appearing where
 * one was looked for, a link, another cigen — makes it check in full. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/util.h"

/* Runs script in a fresh, generated copy of tests/bases/graph (a project
 * with diagrams), as p/, with stamps kept in ../stamps. */
static tu_run in_project(const char *script)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf from = CG_STRBUF_INIT, dir = CG_STRBUF_INIT, cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&from, "%s/tests/bases/graph", tu_srcdir());
    cg_strbuf_addf(&dir, "%s/p", tmp);
    tu_copy_tree(from.buf, dir.buf);
    cg_strbuf_addf(&cmd, "export CIGEN_CACHE_DIR=\"$PWD/../stamps\"; $CIGEN -q generate || exit 99; %s", script);
    tu_run r = tu_sh(dir.buf, cmd.buf);
    tu_rm_rf(tmp);
    free(tmp);
    cg_strbuf_release(&from);
    cg_strbuf_release(&dir);
    cg_strbuf_release(&cmd);
    return r;
}

#define STAMPED "in sync by the stamp"
#define IN_FULL "checking in full"
#define GEN_STAMPED "up to date by the stamp"
#define GEN_IN_FULL "generating in full"
/* the base's one value with a blank (a lint warning) without it: then
 * generate prints nothing but its summary, and a stamp can answer it */
#define NO_WARNING "sed -i \"s/'say \\\"hi\\\"'/sayhi/\" matrix.yml && $CIGEN -q generate && "

/* The second check is answered by the stamp the first wrote, and prints
 * the same line. */
START_TEST(second_check_uses_the_stamp)
{
    tu_run r = in_project("$CIGEN -v check 2>&1 && ls ../stamps | wc -l && $CIGEN -v check 2>&1");
    ck_assert_msg(r.status == 0, "%d: %s", r.status, r.out);
    const char *first = strstr(r.out, IN_FULL), *second = strstr(r.out, STAMPED);
    ck_assert_msg(first && second && first < second, "%s", r.out);
    ck_assert_msg(strstr(r.out, "\n1\n"), "one stamp: %s", r.out);
    /* the same in-sync line both times */
    const char *line = "cigen: in sync: config.yml and ";
    const char *a = strstr(r.out, line), *b = a ? strstr(a + 1, line) : NULL;
    ck_assert_msg(a && b && strncmp(a, b, strcspn(a, "\n") + 1) == 0, "%s", r.out);
    tu_run_free(&r);
    /* -q prints nothing, either way */
    r = in_project("$CIGEN -q check && $CIGEN -q check");
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.out_len, 0);
    tu_run_free(&r);
}
END_TEST

/* Each change to what the check read: the next check is a full one, and
 * finds what a check without stamps finds. */
START_TEST(any_change_checks_in_full)
{
    static const char *const changes[] = {
        "printf '# an edit\\n' >> t.yml",                                      /* a source */
        "sed -i 's/^jobs:/jobs: # by hand/' config.yml",                       /* the config */
        "sed -i 's/^jobs:/jobz:/' config.yml",                                 /* the same size */
        "f=$(ls diagrams/*.dot | head -n 1); printf '// x\\n' >> \"$f\"",       /* a diagram */
        "f=$(ls diagrams/*.dot | head -n 1); cp \"$f\" diagrams/old.dot",      /* a stale diagram */
        "rm \"$(ls diagrams/*.dot | head -n 1)\"",                             /* a missing diagram */
        "printf 'only: [\"*\"]\\n' > special-pr.yml",                          /* a file looked for */
        "mv t.yml ../t.yml && ln -s ../t.yml t.yml",                           /* a link out */
        "sed -i 's/^binary .*/binary build-id:00 yaml=0 jansson=0 nettle=0/' ../stamps/*.stamp", /* another cigen */
        "sed -i '/^end$/d' ../stamps/*.stamp",                                 /* a cut stamp */
        "sed -i 's/^mac .*/mac 000102030405060708090a0b0c0d0e0f/' ../stamps/*.stamp", /* another MAC key */
        "sed -i '/^mac /d' ../stamps/*.stamp",                                 /* no MAC key */
        "sed -i 's/^message .*/message forged/' ../stamps/*.stamp && sed -i 's/^key .*/key 00/' ../stamps/*.stamp",
    };
    for (size_t i = 0; i < sizeof changes / sizeof *changes; i++) {
        cg_strbuf script = CG_STRBUF_INIT;
        /* the expected outcome: a check with no stamp, after the change
         * (kept aside), then the stamped project changed the same way */
        cg_strbuf_addf(&script,
                       "$CIGEN check >/dev/null || exit 98; %s; "
                       "CIGEN_CACHE_DIR=off $CIGEN check >../want 2>&1; echo $? >>../want; "
                       "$CIGEN -v check >../got.v 2>&1; echo $? >>../got.v; "
                       "grep -q '" IN_FULL "' ../got.v || { echo NOT-IN-FULL; cat ../got.v; exit 97; }; "
                       "grep -v '^cigen: verbose:' ../got.v | cmp -s - ../want || "
                       "{ echo DIFFER; cat ../want; echo ---; cat ../got.v; exit 96; }",
                       changes[i]);
        tu_run r = in_project(script.buf);
        ck_assert_msg(r.status == 0, "change %zu (%s): status %d\n%s%s", i, changes[i], r.status, r.out, r.err);
        tu_run_free(&r);
        cg_strbuf_release(&script);
    }
}
END_TEST

/* A file changed after the check compared it, before the stamp was
 * written (CIGEN_TEST_PAUSE=stamp stops it there): the stamp records what
 * was compared, or nothing, never the changed file as verified. */
START_TEST(a_change_while_stamping_is_not_verified)
{
    static const char *const changes[] = {
        "sed -i 's/^jobs:/jobs: # by hand/' config.yml",
        "f=$(ls diagrams/*.dot | head -n 1); cp \"$f\" diagrams/old.dot",
    };
    for (int stream = 0; stream < 2; stream++)
        for (size_t i = 0; i < sizeof changes / sizeof *changes; i++) {
            cg_strbuf script = CG_STRBUF_INIT;
            cg_strbuf_addf(&script,
                           "%s"
                           "CIGEN_TEST_PAUSE=stamp $CIGEN check >/dev/null 2>&1 & pid=$!; n=0; "
                           "until [ \"$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)\" = T ]; do "
                           "n=$((n + 1)); [ $n -lt 1000 ] || { echo NOT-STOPPED; exit 95; }; sleep 0.01; done; "
                           "%s; kill -CONT $pid; wait $pid || exit 94; "
                           "$CIGEN -v check >../got.v 2>&1; echo \"exit $?\" >>../got.v; "
                           "grep -q '" IN_FULL "' ../got.v && grep -q 'exit 1' ../got.v || { cat ../got.v; exit 93; }",
                           stream ? "export CIGEN_TEST_STREAM_BYTES=1; " : "", changes[i]);
            tu_run r = in_project(script.buf);
            ck_assert_msg(r.status == 0, "change %zu (%s), streamed %d: status %d\n%s%s", i, changes[i], stream,
                          r.status, r.out, r.err);
            tu_run_free(&r);
            cg_strbuf_release(&script);
        }
}
END_TEST

/* A config too large to hold is compared as it is rendered (streamed): its
 * stamp holds, and a hand edit still checks in full. */
START_TEST(streamed_config)
{
    tu_run r = in_project("export CIGEN_TEST_STREAM_BYTES=1; $CIGEN check >/dev/null && $CIGEN -v check 2>&1 | "
                          "grep -c '" STAMPED "' && sed -i 's/^jobs:/jobs: # by hand/' config.yml && "
                          "{ $CIGEN -v check 2>&1; echo \"exit $?\"; }");
    ck_assert_msg(strncmp(r.out, "1\n", 2) == 0 && strstr(r.out, IN_FULL) && strstr(r.out, "edited by hand") &&
                      strstr(r.out, "exit 1"), "%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* A stamp others may write is not read; CIGEN_CACHE_DIR must be absolute. */
START_TEST(only_private_stamps)
{
    tu_run r = in_project("$CIGEN check >/dev/null && chmod g+w ../stamps/*.stamp && $CIGEN -v check 2>&1 | "
                          "grep -c 'not a private file'; chmod g-w ../stamps/*.stamp; chmod 777 ../stamps; "
                          "$CIGEN -v check 2>&1 | grep -c 'not a private file'; "
                          "CIGEN_CACHE_DIR=stamps $CIGEN -v check 2>&1 | grep -c 'not an absolute path'");
    ck_assert_msg(strcmp(r.out, "1\n1\n1\n") == 0, "%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* The stamps' folder planted as a link (to a private folder of the same
 * user), or a stamp planted as a link: nothing is written through it, and
 * the check is a full one. */
START_TEST(no_stamp_through_a_link)
{
    tu_run r = in_project("mkdir -m 700 ../real && rm -rf ../stamps && ln -s real ../stamps && "
                          "$CIGEN check >/dev/null && $CIGEN -v check 2>&1 | grep -c '" IN_FULL "'; "
                          "ls -A ../real | wc -l; rm ../stamps && mkdir -m 700 ../stamps && $CIGEN check >/dev/null && "
                          "for f in ../stamps/*.stamp; do mv \"$f\" ../real/x && ln -s ../real/x \"$f\"; done && "
                          "sum=$(cksum <../real/x) && $CIGEN -v check 2>&1 | grep -c '" IN_FULL "'; "
                          "[ \"$sum\" = \"$(cksum <../real/x)\" ] || echo changed");
    ck_assert_msg(strcmp(r.out, "1\n0\n1\n") == 0, "%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* No stamp is written or read with --no-cache or CIGEN_CACHE_DIR=off, nor
 * for a check that is not in sync, has a special-PR selection, prints JSON
 * or warns about the sources. */
START_TEST(when_no_stamp_is_kept)
{
    tu_run r = in_project("$CIGEN check --no-cache >/dev/null && CIGEN_CACHE_DIR=off $CIGEN check >/dev/null && "
                          "$CIGEN check --json >/dev/null && $CIGEN check --only 'linux*' >/dev/null; "
                          "ls ../stamps 2>/dev/null | wc -l");
    ck_assert_msg(r.status == 0 && strcmp(r.out, "0\n") == 0, "%d: %s%s", r.status, r.out, r.err);
    tu_run_free(&r);
    /* a stamp there, but --no-cache and --json check in full */
    r = in_project("$CIGEN check >/dev/null && $CIGEN -v check --no-cache 2>&1 | grep -c '" STAMPED "'; "
                   "$CIGEN -v check --json 2>&1 >/dev/null | grep -c '" STAMPED "'");
    ck_assert_msg(strcmp(r.out, "0\n0\n") == 0, "%s%s", r.out, r.err);
    tu_run_free(&r);
    /* out of sync: none */
    r = in_project("printf '# x\\n' >> t.yml; $CIGEN check >/dev/null; ls ../stamps 2>/dev/null | wc -l");
    ck_assert_msg(strcmp(r.out, "0\n") == 0, "%s%s", r.out, r.err);
    tu_run_free(&r);
    /* a warning about the sources (a filter matching no cell): none,
     * so that every check prints it */
    r = in_project("sed -i 's/^exclude:/exclude:\\n  - {os: nosuch}/' matrix.yml && $CIGEN -q generate && "
                   "$CIGEN check 2>&1 | grep -c warning; ls ../stamps 2>/dev/null | wc -l");
    ck_assert_msg(strcmp(r.out, "1\n0\n") == 0, "%s%s", r.out, r.err);
    tu_run_free(&r);
}
END_TEST

/* generate finds everything up to date: it records a stamp, and the next
 * generate (or check) is answered by it, printing what the full run
 * printed; a source changed and generate runs in full and writes. */
START_TEST(generate_uses_the_stamp)
{
    tu_run r = in_project(NO_WARNING "$CIGEN -v generate >../first 2>&1 && $CIGEN -v generate >../second 2>&1 && "
                          "$CIGEN -v check 2>&1 | grep -c '" STAMPED "' && ls ../stamps | wc -l && "
                          "grep -c '" GEN_IN_FULL "' ../first && grep -c '" GEN_STAMPED "' ../second && "
                          "grep -v '^cigen: verbose:' ../first >../a && grep -v '^cigen: verbose:' ../second >../b && "
                          "cat ../a && cmp ../a ../b && "
                          "printf '# x\\n' >> t.yml && $CIGEN -v generate 2>&1 | grep -v '^cigen: verbose: read'");
    ck_assert_msg(r.status == 0, "%d: %s%s", r.status, r.out, r.err);
    const char *want = "1\n1\n1\n1\ncigen: config.yml: 31 jobs in 2 workflows, ";
    ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0 &&
                      strstr(r.out, "bytes; already up to date\n"), "%s", r.out);
    const char *after = strstr(r.out, GEN_IN_FULL);
    ck_assert_msg(after && strstr(after, "; written"), "%s", r.out);
    tu_run_free(&r);
    /* -q: nothing printed either way */
    r = in_project(NO_WARNING "$CIGEN -q generate && $CIGEN -q generate");
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.out_len, 0);
    tu_run_free(&r);
}
END_TEST

/* A stamp cannot say lint's warnings, which generate prints: a check's
 * stamp answers the next check, never generate, which prints them. */
START_TEST(generate_with_warnings_runs_in_full)
{
    tu_run r = in_project("$CIGEN check >/dev/null && $CIGEN -v generate 2>&1; $CIGEN -v check 2>&1 | "
                          "grep -c '" STAMPED "'");
    ck_assert_msg(r.status == 0, "%d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, GEN_IN_FULL ": the stamp holds, but generate would print more") &&
                      strstr(r.out, "warning: value 'say \"hi\"'") && strstr(r.out, "already up to date\n1\n"),
                  "%s", r.out);
    tu_run_free(&r);
}
END_TEST

/* The runs the stamp does not answer: a selection, --fresh-tiers, and
 * CIGEN_CACHE_DIR=off; a stamped generate still clears what a killed run
 * left in the output folders. */
START_TEST(generate_stamp_limits)
{
    tu_run r = in_project(NO_WARNING "$CIGEN -q generate && "
                          "$CIGEN -v generate --only 'linux*' 2>&1 | grep -c '" GEN_STAMPED "'; "
                          "$CIGEN -q generate --force && "
                          "$CIGEN -v generate --fresh-tiers 2>&1 | grep -c '" GEN_STAMPED "'; "
                          "CIGEN_CACHE_DIR=off $CIGEN -v generate 2>&1 | grep -c '" GEN_STAMPED "'; "
                          "$CIGEN -q check && echo x > diagrams/.tree-matrix.dot.cigen-abcdef && "
                          "echo y > .config.yml.cigen-ghijkl && "
                          "$CIGEN -v generate 2>&1 | grep -c '" GEN_STAMPED "'; ls -A . diagrams | grep -c cigen-");
    ck_assert_msg(strcmp(r.out, "0\n0\n0\n1\n0\n") == 0, "%d: %s%s", r.status, r.out, r.err);
    tu_run_free(&r);
}
END_TEST

Suite *make_stamp_suite(void)
{
    Suite *s = suite_create("stamp");
    TCase *tc = tcase_create("stamp");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, second_check_uses_the_stamp);
    tcase_add_test(tc, any_change_checks_in_full);
    tcase_add_test(tc, when_no_stamp_is_kept);
    tcase_add_test(tc, a_change_while_stamping_is_not_verified);
    tcase_add_test(tc, streamed_config);
    tcase_add_test(tc, only_private_stamps);
    tcase_add_test(tc, generate_uses_the_stamp);
    tcase_add_test(tc, generate_with_warnings_runs_in_full);
    tcase_add_test(tc, generate_stamp_limits);
    tcase_add_test(tc, no_stamp_through_a_link);
    suite_add_tcase(s, tc);
    return s;
}
