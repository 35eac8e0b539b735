/* What CircleCI's YAML parser reads: SnakeYAML 1.33 (Debian's
 * libyaml-snake-java), run by tests/snake/SnakeRead.java, one JVM per test.
 *
 * - every config the suite writes (the files of tests/golden/<NAME>/expect,
 *   which check_golden.c proves are the bytes cigen wrote, and configs
 *   generated here from every base project, example and `cigen init`) is
 *   read by SnakeYAML;
 * - a random-YAML differential: documents made of the pieces where libyaml
 *   and SnakeYAML part (tabs, escapes, block scalar headers, flow lines,
 *   directives, merge keys, floats) that cigen accepts as a fragment
 *   (lang/yaml_snake.h) must be read by SnakeYAML too.
 *
 * Where no JDK or no snakeyaml.jar is installed (SNAKEYAML_JAR names another
 * jar), both say so on stderr and pass: .ci/run installs them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "testutil.h"
#include "base/util.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlload.h"

static const char *jar(void)
{
    const char *j = getenv("SNAKEYAML_JAR");
    return j && *j ? j : "/usr/share/java/snakeyaml.jar";
}

/* Compiles SnakeRead into a fresh folder (returned; NULL and a message on
 * stderr when there is no JDK or jar). */
static char *snake_classes(const char *test)
{
    char *dir = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd,
                   "command -v java >/dev/null && command -v javac >/dev/null && [ -f '%s' ] || exit 3; "
                   "javac -nowarn -cp '%s' -d '%s' '%s/tests/snake/SnakeRead.java'",
                   jar(), jar(), dir, tu_srcdir());
    tu_run r = tu_sh(NULL, cmd.buf);
    cg_strbuf_release(&cmd);
    if (r.status == 3) {
        fprintf(stderr, "snake: %s skipped: no JDK (java, javac) or no %s (apt-get install default-jdk-headless "
                "libyaml-snake-java)\n", test, jar());
        tu_run_free(&r);
        tu_rm_rf(dir);
        free(dir);
        return NULL;
    }
    ck_assert_msg(r.status == 0, "javac SnakeRead.java failed: %s%s", r.out, r.err);
    tu_run_free(&r);
    return dir;
}

/* SnakeYAML's verdict on each file listed (one a line) in `list`: its
 * output, "ok PATH" or "refused PATH LINE:COL MESSAGE" lines. */
static tu_run snake_read_as(const char *classes, const char *list, bool json)
{
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "java -Xss4m -cp '%s:%s' SnakeRead%s < '%s'", jar(), classes, json ? " --json" : "", list);
    tu_run r = tu_sh(NULL, cmd.buf);
    cg_strbuf_release(&cmd);
    ck_assert_msg(r.status == 0, "SnakeRead failed: %.2000s", r.err);
    return r;
}

static tu_run snake_read(const char *classes, const char *list)
{
    return snake_read_as(classes, list, false);
}

/* --- every config the suite writes ---------------------------------------- */

START_TEST(snake_reads_every_config)
{
    char *classes = snake_classes("snake_reads_every_config");
    if (!classes)
        return;
    char *tmp = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT;
    /* the golden cases' written files (not import's: project sources, whose
     * fragments may alias each other's anchors); then each base project, example and
     * init's project generated afresh, every YAML file it wrote listed */
    cg_strbuf_addf(&cmd,
                   "set -e; S='%s'; T='%s'\n"
                   "find \"$S/tests/golden\" -path '*/expect/*' ! -path '*/golden/import-*' -type f "
                   "\\( -name '*.yml' -o -name '*.yaml' \\) "
                   "> \"$T/list\"\n"
                   "echo \"$S/config.yml\" >> \"$T/list\"\n"
                   "n=0\n"
                   "for p in \"$S\"/tests/bases/*/ \"$S\"/examples/*/; do\n"
                   "  [ -f \"$p/cigen.yml\" ] || continue\n"
                   "  n=$((n+1)); mkdir \"$T/p$n\"; cp -r \"$p/.\" \"$T/p$n/\"\n"
                   "  touch \"$T/stamp\"; sleep 0.01\n"
                   "  if $CIGEN -q -C \"$T/p$n\" generate --force >/dev/null 2>&1; then\n"
                   "    find \"$T/p$n\" -type f \\( -name '*.yml' -o -name '*.yaml' \\) -newer \"$T/stamp\" >> \"$T/list\"\n"
                   "  fi\n"
                   "done\n"
                   "mkdir \"$T/init\" && $CIGEN -q -C \"$T/init\" init >/dev/null && echo \"$T/init/config.yml\" >> "
                   "\"$T/list\"\n"
                   "wc -l < \"$T/list\"",
                   tu_srcdir(), tmp);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    long n = atol(r.out);
    /* the golden cases alone write some 60 configs */
    ck_assert_msg(n >= 60, "only %ld configs found", n);
    tu_run_free(&r);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "%s/list", tmp);
    r = snake_read(classes, cmd.buf);
    size_t ok = 0;
    cg_strbuf bad = CG_STRBUF_INIT;
    for (const char *line = r.out; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= 3 && strncmp(line, "ok ", 3) == 0)
            ok++;
        else
            cg_strbuf_addf(&bad, "%.*s\n", (int)len, line);
        line += len + (nl != NULL);
    }
    ck_assert_msg(bad.len == 0, "SnakeYAML refuses configs cigen wrote:\n%.3000s", cg_strbuf_str(&bad));
    ck_assert_msg((long)ok == n, "%zu of %ld read", ok, n);
    cg_strbuf_release(&bad);
    cg_strbuf_release(&cmd);
    tu_run_free(&r);
    tu_rm_rf(tmp);
    free(tmp);
    tu_rm_rf(classes);
    free(classes);
}
END_TEST

/* Values cigen writes (a dimension's values passed on as a parameter):
 * SnakeYAML reads each back as the same string, whatever YAML 1.1 would
 * make of it plain ("._" is a float to SnakeYAML, which it cannot build). */
START_TEST(snake_reads_written_values)
{
    char *classes = snake_classes("snake_reads_written_values");
    if (!classes)
        return;
    static const char *const values[] = {
        "._", "+._", "-.__e+12", "._5", ".e1", ".5", "5.", "0x_", "0x1F", "0b_", "0b1", "0o7", "0o", "017", "089",
        "1_000", "1:_", "1:20", "190:20:30.15", "=", "<x", "~x", "~", "y", "n", "yes", "No", "on", "OFF", "true",
        "null", "NULL", ".inf", "-.Inf", ".NaN", "2001-12-14", "2001-1-1", "2001-12-14t21:59:43.10-05:00",
        "1e5", "1e+5", "1E-5", "-0", "+0", "0.", "-", "a:b", "a#b", "@x", "%x", "`x", "!x", "&x", "*x", "|x",
        ">x", "?x", "x?", "[x", "{x", "'x", "\"x", "x'", "caf\xc3\xa9", "-x", "--x", "...x", "x:",
    };
    char *tmp = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT, tree = CG_STRBUF_INIT;
    cg_strbuf_adds(&tree, "dimensions: [os, v]\nworkflows: [main]\njob_name: \"{{ phase }}_{{ v }}\"\ntree:\n"
                          "  - os: linux\n    v: [");
    for (size_t i = 0; i < CG_ARRAY_LEN(values); i++) {
        cg_strbuf_adds(&tree, i ? ", " : "");
        cg_yaml_quote(&tree, values[i], strlen(values[i]));
    }
    cg_strbuf_adds(&tree, "]\nphases:\n  build: {template: t.yml, requires: [setup]}\n");
    cg_strbuf_addf(&cmd, "set -e; cp -r '%s/tests/bases/small/.' '%s/p/' 2>/dev/null || { mkdir '%s/p' && "
                   "cp -r '%s/tests/bases/small/.' '%s/p/'; }", tu_srcdir(), tmp, tmp, tu_srcdir(), tmp);
    tu_run r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "%s/p/tree.yml", tmp);
    tu_writes(cmd.buf, tree.buf);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "%s/p/t.yml", tmp);
    tu_writes(cmd.buf, "run:\n  cell: \"{{ v }}\"\n");
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "$CIGEN -q -C '%s/p' generate --force && echo '%s/p/config.yml' > '%s/list'", tmp, tmp, tmp);
    r = tu_sh(NULL, cmd.buf);
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    tu_run_free(&r);
    cg_strbuf_reset(&cmd);
    cg_strbuf_addf(&cmd, "%s/list", tmp);
    r = snake_read_as(classes, cmd.buf, true);
    const char *tab = strchr(r.out, '\t');
    ck_assert_msg(strncmp(r.out, "ok ", 3) == 0 && tab, "SnakeYAML refuses the config: %.2000s", r.out);
    json_error_t je;
    json_t *doc = json_loads(tab + 1, 0, &je);
    ck_assert_msg(doc != NULL, "SnakeRead's JSON: %s", je.text);
    json_t *jobs = json_object_get(json_object_get(json_object_get(doc, "workflows"), "main"), "jobs");
    size_t seen = 0;
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *run = json_object_get(json_array_get(jobs, i), "run");
        if (!run)
            continue;
        json_t *cell = json_object_get(run, "cell");
        const char *name = json_string_value(json_object_get(run, "name"));
        ck_assert_msg(name && json_is_string(cell), "job %zu: cell is not a string to SnakeYAML: %s", i,
                      json_dumps(cell, JSON_ENCODE_ANY));
        /* the job is named build_VALUE: both must read back as VALUE */
        ck_assert_msg(strncmp(name, "build_", 6) == 0 && cg_streq(json_string_value(cell), name + 6),
                      "job '%s': its value reads back as '%s'", name, json_string_value(cell));
        bool known = false;
        for (size_t k = 0; k < CG_ARRAY_LEN(values) && !known; k++)
            known = cg_streq(values[k], name + 6);
        ck_assert_msg(known, "job '%s' names no value", name);
        seen++;
    }
    ck_assert_uint_eq(seen, CG_ARRAY_LEN(values));
    json_decref(doc);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
    cg_strbuf_release(&tree);
    tu_rm_rf(tmp);
    free(tmp);
    tu_rm_rf(classes);
    free(classes);
}
END_TEST

/* --- the differential ----------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static unsigned pick(rng *r, unsigned n)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((r->s >> 33) % n);
}

#define ONE(r, a) ((a)[pick((r), (unsigned)CG_ARRAY_LEN(a))])

static const char *const ws[] = {" ", " ", " ", "\t", "  ", " \t", "\t ", ""};
static const char *const escapes[] = {"\\n", "\\t", "\\/", "\\\\", "\\\"", "\\x41", "\\u00e9", "\\U0001F600",
                                      "\\a", "\\b", "\\e", "\\f", "\\r", "\\v", "\\N", "\\_", "\\L", "\\P",
                                      "\\ ", "\\\t", "a", " ", "\t"};
static const char *const plains[] = {"._", "-.__e+1", "._5", "<<", "a\n\tb", "a\n  \tb", "a\n  b\t", "a\t\n  b",
                                     ".e1", "0x_", "a", "b c", "a\tb", "x#y", "-x", "1", "true", "~", "a b\t",
                                     "&x", "*x", "&a x", "!!str x", "&a\tx", "!!str\tx", "v", "w1", "a-b"};
static const char *const commas[] = {",", ",\n", ",\n\t", ",\n  ", " ,\t", ", "};
static const char *const comments[] = {"", "", " # c", "\t# c", "\t#c", " #\tc", "#c"};
static const char *const headers[] = {"|", ">", "|-", ">+", "|2", "|#c", "| #c", "|\t#c", ">-\t", "|\t", "|1-",
                                      ">#", "| \t# c"};
static const char *const lines[] = {"x", "y\tz", "\tx", " x", ""};
static const char *const seps[] = {" ", "\t", " \t", "\t ", ""};

static void scalar(rng *r, cg_strbuf *out)
{
    unsigned k = pick(r, 6);
    if (k == 0) {
        cg_strbuf_addc(out, '"');
        for (unsigned i = pick(r, 4); i > 0; i--)
            cg_strbuf_adds(out, ONE(r, escapes));
        cg_strbuf_addc(out, '"');
    } else if (k == 1) {
        cg_strbuf_adds(out, pick(r, 2) ? "'a\tb'" : "'x\n\ty'");
    } else {
        cg_strbuf_adds(out, ONE(r, plains));
    }
}

static void flow(rng *r, int depth, cg_strbuf *out)
{
    if (depth > 2 || pick(r, 10) < 4) {
        scalar(r, out);
        return;
    }
    bool seq = pick(r, 2);
    cg_strbuf_adds(out, seq ? "[" : "{");
    cg_strbuf_adds(out, ONE(r, ws));
    for (unsigned i = 0, n = pick(r, 3); i < n; i++) {
        if (i) {
            cg_strbuf_adds(out, ONE(r, ws));
            cg_strbuf_adds(out, ONE(r, commas));
            cg_strbuf_adds(out, ONE(r, ws));
        }
        if (!seq) {
            cg_strbuf_addf(out, "k%u", pick(r, 100));
            const char *sep = ONE(r, seps);
            cg_strbuf_adds(out, ":");
            cg_strbuf_adds(out, *sep ? sep : " ");
        }
        flow(r, depth + 1, out);
    }
    cg_strbuf_adds(out, ONE(r, ws));
    cg_strbuf_adds(out, seq ? "]" : "}");
}

static void value(rng *r, int indent, cg_strbuf *out)
{
    unsigned k = pick(r, 4);
    if (k == 0) {
        flow(r, 0, out);
    } else if (k == 1) {
        cg_strbuf_adds(out, ONE(r, headers));
        for (unsigned i = 1 + pick(r, 2); i > 0; i--)
            cg_strbuf_addf(out, "\n%*s%s", indent + 2, "", ONE(r, lines));
    } else {
        scalar(r, out);
    }
}

static void block(rng *r, int indent, int depth, cg_strbuf *out);

static void mapping(rng *r, int indent, int depth, cg_strbuf *out)
{
    for (unsigned i = 1 + pick(r, 3); i > 0; i--) {
        cg_strbuf_addf(out, "%*s", indent, "");
        if (pick(r, 8) == 0) {
            cg_strbuf_addf(out, "?%sk%u\n%*s:%sv%s\n", ONE(r, seps), pick(r, 1000), indent, "", ONE(r, seps),
                           ONE(r, comments));
            continue;
        }
        cg_strbuf_addf(out, "%s%u%s:", pick(r, 4) ? "k" : "\"q\"", pick(r, 1000), pick(r, 6) ? "" : ONE(r, seps));
        if (depth < 3 && pick(r, 3) == 0) {
            cg_strbuf_adds(out, ONE(r, seps));
            cg_strbuf_adds(out, ONE(r, comments));
            cg_strbuf_addc(out, '\n');
            block(r, indent + 2 * (int)pick(r, 2), depth + 1, out);
        } else {
            const char *sep = ONE(r, seps);
            cg_strbuf_adds(out, *sep ? sep : " ");
            value(r, indent, out);
            cg_strbuf_adds(out, ONE(r, comments));
            cg_strbuf_addc(out, '\n');
        }
    }
}

static void block(rng *r, int indent, int depth, cg_strbuf *out)
{
    if (pick(r, 2)) {
        mapping(r, indent + 2, depth, out);
        return;
    }
    for (unsigned i = 1 + pick(r, 3); i > 0; i--) {
        const char *sep = ONE(r, seps);
        cg_strbuf_addf(out, "%*s-%s", indent, "", *sep ? sep : " ");
        value(r, indent, out);
        cg_strbuf_adds(out, ONE(r, comments));
        cg_strbuf_addc(out, '\n');
    }
}

static void document(rng *r, cg_strbuf *out)
{
    static const char *const directives[] = {"%YAML 1.1\n", "%YAML\t1.1\n", "%TAG ! tag:x,2000:\n",
                                             "%YAML 1.1\t# c\n"};
    static const char *const starts[] = {"---\n", "--- # c\n", "---\t# c\n", "---\t\n"};
    static const char *const ends[] = {"...\n", "...\t\n", "... # c\n", "\t\n", " \t\n", "\t# c\n", "#\t\n"};
    bool dir = pick(r, 8) == 0;
    if (dir)
        cg_strbuf_adds(out, ONE(r, directives));
    if (dir || pick(r, 6) == 0)
        cg_strbuf_adds(out, ONE(r, starts));
    if (pick(r, 7) == 0) {
        cg_strbuf_adds(out, pick(r, 2) ? "" : "\t");
        flow(r, 0, out);
        cg_strbuf_addc(out, '\n');
    } else {
        mapping(r, 0, 0, out);
    }
    if (pick(r, 10) == 0)
        cg_strbuf_adds(out, ONE(r, ends));
}

START_TEST(snake_differential)
{
    char *classes = snake_classes("snake_differential");
    if (!classes)
        return;
    enum { DOCS = 4000 };
    char *tmp = tu_mkdtemp();
    cg_strbuf list = CG_STRBUF_INIT, path = CG_STRBUF_INIT, text = CG_STRBUF_INIT;
    char **docs = cg_xcalloc(DOCS, sizeof *docs);
    rng r = {20261129};
    for (size_t i = 0; i < DOCS; i++) {
        cg_strbuf_reset(&text);
        document(&r, &text);
        docs[i] = cg_xstrdup(text.buf);
        cg_strbuf_reset(&path);
        cg_strbuf_addf(&path, "%s/%05zu.yml", tmp, i);
        tu_writes(path.buf, text.buf);
        cg_strbuf_addf(&list, "%s\n", path.buf);
    }
    cg_strbuf_reset(&path);
    cg_strbuf_addf(&path, "%s/list", tmp);
    tu_writes(path.buf, list.buf);
    tu_run out = snake_read(classes, path.buf);
    size_t refused_by_snake = 0, caught = 0, i = 0;
    for (const char *line = out.out; *line && i < DOCS; i++) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        bool snake_ok = len >= 3 && strncmp(line, "ok ", 3) == 0;
        cg_error err;
        cg_error_init(&err);
        cg_load_opts o = {.copied = true};
        cg_doc *d = cg_doc_parse("f.yml", docs[i], strlen(docs[i]), &o, &err);
        ck_assert_msg(d == NULL || snake_ok, "cigen reads document %zu as a fragment, SnakeYAML refuses it "
                      "(%.*s):\n%s", i, (int)len, line, docs[i]);
        refused_by_snake += !snake_ok;
        caught += !snake_ok && strstr(cg_strbuf_str(&err.text), "SnakeYAML") != NULL;
        cg_doc_free(d);
        cg_error_release(&err);
        line += len + (nl != NULL);
    }
    ck_assert_uint_eq(i, DOCS);
    /* the documents reach the differences: many are refused for them */
    ck_assert_msg(caught >= DOCS / 20, "only %zu of %zu documents SnakeYAML refuses were refused for what it "
                  "refuses", caught, refused_by_snake);
    for (size_t k = 0; k < DOCS; k++)
        free(docs[k]);
    free(docs);
    tu_run_free(&out);
    cg_strbuf_release(&list);
    cg_strbuf_release(&path);
    cg_strbuf_release(&text);
    tu_rm_rf(tmp);
    free(tmp);
    tu_rm_rf(classes);
    free(classes);
}
END_TEST

Suite *make_snake_suite(void)
{
    Suite *s = suite_create("snake");
    TCase *tc = tcase_create("snakeyaml");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, snake_differential);
    tcase_add_test(tc, snake_reads_every_config);
    tcase_add_test(tc, snake_reads_written_values);
    suite_add_tcase(s, tc);
    return s;
}
