/* Robustness: the fuzz targets on their regressions and seeds, a generate
 * killed at any point of its write, and the same bytes whatever the
 * environment.  (Bad inputs are golden cases: tests/bad/.)
 *
 *   fuzz      every file of tests/fuzz/regressions/TARGET/ and
 *             tests/fuzz/corpus/TARGET/ through cg_fuzz_TARGET (a crash or a
 *             broken promise aborts the test)
 *   kill      generate stopped by CIGEN_TEST_PAUSE=write|commit, then
 *             SIGKILL: every output is its old or its new version, byte for
 *             byte; the next generate removes the temporary files
 *   same      the embedded default under other locales, time zones, a
 *             scrubbed environment, other working folders and a copy made in
 *             another order: the same config.yml and diagrams
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "base/util.h"

/* The targets as plain functions: one file, shared with `make fuzz`. */
#include "fuzz/targets.c"

/* ---- helpers ---- */

static char *path_join(const char *a, const char *b)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_addf(&sb, "%s/%s", a, b);
    return cg_strbuf_detach(&sb, NULL);
}

static bool is_temp_name(const char *name)
{
    /* ".NAME.cigen-XXXXXX" (fsio.c) */
    const char *mark = strstr(name, ".cigen-");
    return name[0] == '.' && mark && strlen(mark) == 13;
}

/* Every regular file under dir, as paths relative to it (sorted). */
static void list_files(const char *dir, const char *rel, char ***out, size_t *n, size_t *cap)
{
    size_t k;
    char **names = tu_list_dir(dir, &k);
    for (size_t i = 0; i < k; i++) {
        char *p = path_join(dir, names[i]);
        char *r = *rel ? path_join(rel, names[i]) : cg_xstrdup(names[i]);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            list_files(p, r, out, n, cap);
            free(r);
        } else {
            cg_grow(out, cap, *n + 1, sizeof **out);
            (*out)[(*n)++] = r;
        }
        free(p);
    }
    tu_free_list(names, k);
}

/* ---- fuzz regressions and seeds ---- */

typedef struct replay {
    const char *target;
    char *path;
} replay;

static replay *replays;
static size_t nreplays, replays_cap;

static void forget_replays(void)
{
    for (size_t i = 0; i < nreplays; i++)
        free(replays[i].path);
    free(replays);
    replays = NULL;
    nreplays = replays_cap = 0;
}

static void discover_replays(void)
{
    atexit(forget_replays); /* valgrind counts what is still reachable at exit */
    static const char *const targets[] = {"yaml", "pipeline", "diff"};
    static const char *const kinds[] = {"regressions", "corpus"};
    for (size_t t = 0; t < CG_ARRAY_LEN(targets); t++) {
        for (size_t k = 0; k < CG_ARRAY_LEN(kinds); k++) {
            cg_strbuf dir = CG_STRBUF_INIT;
            cg_strbuf_addf(&dir, "%s/tests/fuzz/%s/%s", tu_srcdir(), kinds[k], targets[t]);
            size_t n;
            char **names = tu_list_dir(dir.buf, &n);
            for (size_t i = 0; i < n; i++) {
                size_t len = strlen(names[i]);
                if (names[i][0] == '.' || (len > 3 && !strcmp(names[i] + len - 3, ".md")))
                    continue;
                cg_grow(&replays, &replays_cap, nreplays + 1, sizeof *replays);
                replays[nreplays++] = (replay){targets[t], path_join(dir.buf, names[i])};
            }
            tu_free_list(names, n);
            cg_strbuf_release(&dir);
        }
    }
}

START_TEST(fuzz_replay)
{
    const replay *r = &replays[_i];
    size_t len;
    char *data = tu_read(r->path, &len);
    ck_assert_msg(data != NULL, "cannot read %s", r->path);
    cg_fuzz_fn fn = cg_fuzz_target(r->target);
    ck_assert_ptr_nonnull(fn);
    /* a broken promise aborts (the message names it); reaching here is a pass */
    ck_assert_int_eq(fn((const uint8_t *)data, len), 0);
    cg_fuzz_pipeline_cleanup();
    free(data);
}
END_TEST

START_TEST(fuzz_targets_sanity)
{
    /* the oracles themselves: empty input, and a few hand-made ones */
    static const char *const yaml[] = {"", "a: 1\n", "- [x, {y: z}]\n", "k: |\n  a\n  b\n", "!!str x",
                                       "a: &x [1]\nb: *x\n", "\"\\x01\": \"\\t\"\n"};
    for (size_t i = 0; i < CG_ARRAY_LEN(yaml); i++)
        ck_assert_int_eq(cg_fuzz_yaml((const uint8_t *)yaml[i], strlen(yaml[i])), 0);
    static const char *const diff[] = {"", "a\nb\n", "a\nb\nc\nd\n", "x\ny\nz\n12\n", "aaaa\nbbbbb\n"};
    for (size_t i = 0; i < CG_ARRAY_LEN(diff); i++)
        ck_assert_int_eq(cg_fuzz_diff((const uint8_t *)diff[i], strlen(diff[i])), 0);
    static const char *const pipeline[] = {
        "", "%% --strict\n", "output: config.yml\n",
        "%% cigen.yml\noutput: x.yml\ntrees: [t/tree.yml]\n%% t/tree.yml\ndimensions: [os]\n%% ../escape\n",
        "%% /abs\n%% a/b/c/d/e/f\n"};
    for (size_t i = 0; i < CG_ARRAY_LEN(pipeline); i++)
        ck_assert_int_eq(cg_fuzz_pipeline((const uint8_t *)pipeline[i], strlen(pipeline[i])), 0);
    cg_fuzz_pipeline_cleanup();
}
END_TEST

/* ---- a generate killed while it writes ---- */

typedef struct snapshot {
    char **rel;
    char **data;
    size_t *len;
    size_t n;
} snapshot;

/* The bytes of every file of a project folder. */
static snapshot take_snapshot(const char *dir)
{
    snapshot s = {0};
    size_t cap = 0;
    list_files(dir, "", &s.rel, &s.n, &cap);
    s.data = cg_xcalloc(s.n + 1, sizeof *s.data);
    s.len = cg_xcalloc(s.n + 1, sizeof *s.len);
    for (size_t i = 0; i < s.n; i++) {
        char *p = path_join(dir, s.rel[i]);
        s.data[i] = tu_read(p, &s.len[i]);
        free(p);
    }
    return s;
}

static void free_snapshot(snapshot *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->rel[i]);
        free(s->data[i]);
    }
    free(s->rel);
    free(s->data);
    free(s->len);
    memset(s, 0, sizeof *s);
}

static const char *snap_get(const snapshot *s, const char *rel, size_t *len)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->rel[i], rel)) {
            *len = s->len[i];
            return s->data[i] ? s->data[i] : "";
        }
    return NULL;
}

static void generate_ok(const char *dir)
{
    tu_run r = tu_sh(dir, "$CIGEN -q generate");
    ck_assert_msg(r.status == 0, "generate in %s: exit %d\n%s%s", dir, r.status, r.out, r.err);
    tu_run_free(&r);
}

/* Runs `cigen -q generate` in dir with CIGEN_TEST_PAUSE=point and waits for
 * it to stop itself; returns its pid. */
static pid_t generate_paused_at(const char *dir, const char *point)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        if (chdir(dir) != 0)
            _exit(126);
        setenv("CIGEN_TEST_PAUSE", point, 1);
        execl(tu_cigen(), "cigen", "-q", "generate", (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, WUNTRACED) < 0 && errno == EINTR)
        ;
    if (!WIFSTOPPED(st)) {
        ck_abort_msg("CIGEN_TEST_PAUSE=%s: cigen did not stop itself (%s %d); is the test hook gone?", point,
                     WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
    return pid;
}

/* As generate_paused_at, then kills it. */
static void generate_killed_at(const char *dir, const char *point)
{
    pid_t pid = generate_paused_at(dir, point);
    int st;
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "cigen was not killed");
}

/* After a kill: every file is a source, an output in its old or new
 * version (never a mix), or a temporary file next to an output. */
static size_t check_after_kill(const char *dir, const snapshot *old, const snapshot *new, const char *point)
{
    snapshot now = take_snapshot(dir);
    size_t temps = 0, changed = 0;
    for (size_t i = 0; i < now.n; i++) {
        const char *base = strrchr(now.rel[i], '/');
        base = base ? base + 1 : now.rel[i];
        if (is_temp_name(base)) {
            temps++;
            continue;
        }
        size_t ol = 0, nl = 0;
        const char *o = snap_get(old, now.rel[i], &ol), *n = snap_get(new, now.rel[i], &nl);
        bool is_old = o && ol == now.len[i] && memcmp(o, now.data[i], ol) == 0;
        bool is_new = n && nl == now.len[i] && memcmp(n, now.data[i], nl) == 0;
        ck_assert_msg(is_old || is_new, "killed at '%s': %s is neither its old nor its new version (%zu bytes)",
                      point, now.rel[i], now.len[i]);
        if (!is_old)
            changed++;
    }
    /* and nothing of the old state is missing */
    for (size_t i = 0; i < old->n; i++) {
        size_t l;
        ck_assert_msg(snap_get(&now, old->rel[i], &l) != NULL, "killed at '%s': %s disappeared", point,
                      old->rel[i]);
    }
    ck_assert_msg(temps > 0, "killed at '%s': no temporary file was left; did cigen stop mid-write?", point);
    free_snapshot(&now);
    return changed;
}

/* A copy of tests/bases/e2e-small with diagrams (several outputs), in its
 * generated state; `new_dir` gets the sources changed (one more cell) and
 * their outputs.  Returns the temporary folder. */
static char *kill_setup(snapshot *old, snapshot *new, char **work)
{
    char *tmp = tu_mkdtemp();
    char *src = path_join(tu_srcdir(), "tests/bases/e2e-small");
    char *p = path_join(tmp, "p"), *q = path_join(tmp, "q");
    tu_copy_tree(src, p);
    char *manifest = path_join(p, "cigen.yml"), *tree = path_join(p, "dimensions/builds.yml");
    size_t len;
    char *m = tu_read(manifest, &len);
    ck_assert_msg(m && !strstr(m, "diagrams:"), "tests/bases/e2e-small changed: update check_robust.c");
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_add(&sb, m, len);
    cg_strbuf_adds(&sb, "diagrams: diagrams\n");
    tu_write(manifest, sb.buf, sb.len);
    generate_ok(p);
    /* one more cell: config.yml and two diagrams change */
    char *t = tu_read(tree, &len);
    ck_assert_msg(t && !strstr(t, "\nextra:"), "tests/bases/e2e-small changed: update check_robust.c");
    cg_strbuf_reset(&sb);
    cg_strbuf_add(&sb, t, len);
    cg_strbuf_adds(&sb, "extra:\n  - {os: linux, python: \"3.8\", cuda: cpu}\n");
    tu_write(tree, sb.buf, sb.len);
    *old = take_snapshot(p); /* the old outputs, the new sources */
    ck_assert_msg(old->n >= 8, "expected the sources, config.yml and diagrams");
    tu_copy_tree(p, q);
    generate_ok(q);
    *new = take_snapshot(q);
    size_t changed = 0;
    for (size_t i = 0; i < new->n; i++) {
        size_t ol;
        const char *o = snap_get(old, new->rel[i], &ol);
        changed += !o || ol != new->len[i] || memcmp(o, new->data[i], ol) != 0;
    }
    ck_assert_msg(changed >= 3, "expected the change to rewrite several outputs, not %zu", changed);
    tu_rm_rf(q);
    *work = p;
    free(q);
    free(src);
    free(manifest);
    free(tree);
    free(m);
    free(t);
    cg_strbuf_release(&sb);
    return tmp;
}

/* The next generate finishes the job: the folder is the new version, and no
 * temporary file is left. */
static void check_recovery(const char *dir, const snapshot *new)
{
    generate_ok(dir);
    snapshot now = take_snapshot(dir);
    for (size_t i = 0; i < now.n; i++) {
        const char *base = strrchr(now.rel[i], '/');
        ck_assert_msg(!is_temp_name(base ? base + 1 : now.rel[i]), "generate left %s behind", now.rel[i]);
    }
    ck_assert_msg(now.n == new->n, "%zu files after recovery, expected %zu", now.n, new->n);
    for (size_t i = 0; i < now.n; i++) {
        size_t l;
        const char *n = snap_get(new, now.rel[i], &l);
        ck_assert_msg(n && l == now.len[i] && memcmp(n, now.data[i], l) == 0, "%s is not the new version",
                      now.rel[i]);
    }
    free_snapshot(&now);
}

/* Kills a generate at `point`, checks that `nnew` outputs (the first ones)
 * are new and the rest old, then that the next run recovers. */
static void killed_at(const char *point, size_t nnew)
{
    snapshot old, new;
    char *p;
    char *tmp = kill_setup(&old, &new, &p);
    generate_killed_at(p, point);
    ck_assert_uint_eq(check_after_kill(p, &old, &new, point), nnew);
    check_recovery(p, &new);
    free_snapshot(&old);
    free_snapshot(&new);
    tu_rm_rf(tmp);
    free(tmp);
    free(p);
}

/* A second generate while the first is writing: it clears stale temporary
 * files at its start, but not the live one of the first, which then finishes
 * as well (both write the same bytes). */
START_TEST(concurrent_generates)
{
    snapshot old, new;
    char *p;
    char *tmp = kill_setup(&old, &new, &p);
    pid_t pid = generate_paused_at(p, "write");
    generate_ok(p);
    ck_assert_int_eq(kill(pid, SIGCONT), 0);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the first generate failed (%s %d)",
                  WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    check_recovery(p, &new);
    free_snapshot(&old);
    free_snapshot(&new);
    tu_rm_rf(tmp);
    free(tmp);
    free(p);
}
END_TEST

START_TEST(killed_while_writing)
{
    /* half of the first output is in its temporary file: nothing changed yet */
    killed_at("write", 0);
}
END_TEST

START_TEST(killed_while_committing)
{
    /* the first output is new, the others old, their new versions staged */
    killed_at("commit", 1);
}
END_TEST

START_TEST(killed_twice)
{
    /* leftovers of two killed runs, then a clean one */
    snapshot old, new;
    char *p;
    char *tmp = kill_setup(&old, &new, &p);
    generate_killed_at(p, "write");
    check_after_kill(p, &old, &new, "write");
    generate_killed_at(p, "commit");
    check_after_kill(p, &old, &new, "commit (after a kill at 'write')");
    check_recovery(p, &new);
    free_snapshot(&old);
    free_snapshot(&new);
    tu_rm_rf(tmp);
    free(tmp);
    free(p);
}
END_TEST

/* ---- the same bytes everywhere ---- */

/* Copies a tree creating the entries of each folder in reverse order of
 * their names (so the folder lists them in another order than a plain
 * copy would), and files before folders. */
static void copy_reversed(const char *from, const char *to)
{
    struct stat st;
    ck_assert(lstat(from, &st) == 0);
    if (!S_ISDIR(st.st_mode)) {
        tu_copy_tree(from, to);
        return;
    }
    mkdir(to, 0755);
    size_t n;
    char **names = tu_list_dir(from, &n);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = n; i-- > 0;) {
            char *a = path_join(from, names[i]), *b = path_join(to, names[i]);
            bool dir = lstat(a, &st) == 0 && S_ISDIR(st.st_mode);
            if (dir == (pass == 1))
                copy_reversed(a, b);
            free(a);
            free(b);
        }
    }
    tu_free_list(names, n);
}

/* The embedded default's sources (cigen.yml and the folders it names) from
 * the repository (or a copy of them) into dir. */
static void copy_default(const char *from, const char *dir, bool reversed)
{
    static const char *const parts[] = {"cigen.yml", "dimensions", "templates", "verbatim-sources", "scripts"};
    mkdir(dir, 0755);
    for (size_t k = 0; k < CG_ARRAY_LEN(parts); k++) {
        size_t i = reversed ? CG_ARRAY_LEN(parts) - 1 - k : k;
        char *a = path_join(from, parts[i]), *b = path_join(dir, parts[i]);
        if (tu_exists(a))
            (reversed ? copy_reversed : tu_copy_tree)(a, b);
        free(a);
        free(b);
    }
}

/* "tr_TR.UTF-8" and "tr_TR.utf8" are the same locale. */
static void locale_key(const char *s, char *out, size_t size)
{
    size_t k = 0;
    for (; *s && k + 1 < size; s++)
        if (*s != '-')
            out[k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
    out[k] = '\0';
}

static bool have_locale(const char *name)
{
    char want[64], got[64];
    locale_key(name, want, sizeof want);
    tu_run r = tu_sh(NULL, "locale -a 2>/dev/null");
    bool found = false;
    for (char *line = r.out; line && *line && !found;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        locale_key(line, got, sizeof got);
        found = !strcmp(got, want);
        line = nl ? nl + 1 : NULL;
    }
    tu_run_free(&r);
    return found;
}

START_TEST(same_bytes_default)
{
    char *tmp = tu_mkdtemp();
    /* one frozen copy of the sources, which every run copies */
    char *src = path_join(tmp, "src"), *ref = path_join(tmp, "ref");
    copy_default(tu_srcdir(), src, false);
    copy_default(src, ref, false);
    tu_run r = tu_sh(ref, "LC_ALL=C TZ=UTC $CIGEN -q generate");
    ck_assert_msg(r.status == 0, "the default does not generate: %s", r.err);
    tu_run_free(&r);
    snapshot want = take_snapshot(ref);
    size_t cl;
    ck_assert_msg(snap_get(&want, "config.yml", &cl) && cl > 1000, "no config.yml");

    /* each variant: how to copy, where to run, and the command ({P}: the project folder) */
    static const struct {
        const char *name;
        bool reversed;
        const char *sub;   /* where the project lives, under the variant's folder */
        const char *cwd;   /* where cigen runs: "p" the project, "" the variant's folder, "/" */
        const char *cmd;
    } variants[] = {
        {"tr_TR", false, "p", "p", "LC_ALL=tr_TR.UTF-8 LANG=tr_TR.UTF-8 TZ=Europe/Istanbul $CIGEN -q generate"},
        {"de_DE", false, "p", "p", "LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 TZ=America/New_York $CIGEN -q generate"},
        {"C.UTF-8 + odd time zone", false, "p", "p", "LC_ALL=C.UTF-8 TZ=Asia/Kathmandu $CIGEN -q generate"},
        {"env -i", false, "p", "p", "env -i $CIGEN -q generate"},
        {"env -i, no PATH, no HOME", false, "p", "", "env -i PWD=/nowhere $CIGEN -q -C p generate"},
        {"-C from /", false, "p", "/", "$CIGEN -q -C {P} generate"},
        {"-C from a sub-folder", false, "p", "p/dimensions", "$CIGEN -q -C .. generate"},
        {"-C through a symbolic link", false, "p", "", "ln -s p link && $CIGEN -q -C link/. generate"},
        {"a deep folder", false, "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
         "$CIGEN -q generate"},
        {"copied in reverse order", true, "p", "p", "$CIGEN -q generate"},
        {"reverse order, tr_TR, env -i, -C", true, "p", "/",
         "env -i LC_ALL=tr_TR.UTF-8 TZ=Pacific/Chatham $CIGEN -q -C {P} generate"},
        {"twice in a row", false, "p", "p", "$CIGEN -q generate && $CIGEN -q generate"},
    };
    bool tr = have_locale("tr_TR.UTF-8"), de = have_locale("de_DE.UTF-8");
    if (!tr || !de)
        fprintf(stderr, "check_robust: locale%s%s%s missing (locale-gen): those variants run in C\n",
                tr ? "" : " tr_TR.UTF-8", !tr && !de ? " and" : "", de ? "" : " de_DE.UTF-8");
    for (size_t v = 0; v < CG_ARRAY_LEN(variants); v++) {
        char name[32];
        snprintf(name, sizeof name, "v%zu", v);
        char *vdir = path_join(tmp, name);
        mkdir(vdir, 0755);
        char *proj = path_join(vdir, variants[v].sub);
        cg_strbuf mk = CG_STRBUF_INIT;
        cg_strbuf_addf(&mk, "mkdir -p '%s'", proj);
        tu_run m = tu_sh(NULL, mk.buf);
        tu_run_free(&m);
        cg_strbuf_release(&mk);
        rmdir(proj);
        copy_default(src, proj, variants[v].reversed);
        const char *cwd = variants[v].cwd;
        char *run_in = !strcmp(cwd, "/") ? cg_xstrdup("/") : *cwd ? path_join(vdir, cwd) : cg_xstrdup(vdir);
        cg_strbuf cmd = CG_STRBUF_INIT;
        const char *at = strstr(variants[v].cmd, "{P}");
        if (at) {
            cg_strbuf_add(&cmd, variants[v].cmd, (size_t)(at - variants[v].cmd));
            cg_strbuf_addf(&cmd, "'%s'%s", proj, at + 3);
        } else {
            cg_strbuf_adds(&cmd, variants[v].cmd);
        }
        r = tu_sh(run_in, cmd.buf);
        ck_assert_msg(r.status == 0, "%s: exit %d\n%s%s", variants[v].name, r.status, r.out, r.err);
        tu_run_free(&r);
        snapshot got = take_snapshot(proj);
        for (size_t i = 0; i < want.n; i++) {
            size_t l;
            const char *g = snap_get(&got, want.rel[i], &l);
            ck_assert_msg(g && l == want.len[i] && memcmp(g, want.data[i], l) == 0,
                          "%s: %s differs from the reference run", variants[v].name, want.rel[i]);
        }
        ck_assert_msg(got.n == want.n, "%s: %zu files, the reference run has %zu", variants[v].name, got.n,
                      want.n);
        free_snapshot(&got);
        cg_strbuf_release(&cmd);
        free(run_in);
        free(proj);
        free(vdir);
    }
    free_snapshot(&want);
    tu_rm_rf(tmp);
    free(tmp);
    free(src);
    free(ref);
}
END_TEST

Suite *make_robust_suite(void)
{
    discover_replays();
    Suite *s = suite_create("robust");
    TCase *fz = tcase_create("fuzz");
    tcase_set_timeout(fz, 120);
    tcase_add_test(fz, fuzz_targets_sanity);
    tcase_add_loop_test(fz, fuzz_replay, 0, (int)nreplays);
    suite_add_tcase(s, fz);
    TCase *kill_tc = tcase_create("kill");
    tcase_set_timeout(kill_tc, 120);
    tcase_add_test(kill_tc, killed_while_writing);
    tcase_add_test(kill_tc, killed_while_committing);
    tcase_add_test(kill_tc, killed_twice);
    tcase_add_test(kill_tc, concurrent_generates);
    suite_add_tcase(s, kill_tc);
    TCase *same = tcase_create("same");
    tcase_set_timeout(same, 300);
    tcase_add_test(same, same_bytes_default);
    suite_add_tcase(s, same);
    return s;
}
