#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

const char *tu_srcdir(void)
{
    const char *s = getenv("CIGEN_SRCDIR");
    return s ? s : ".";
}

const char *tu_cigen(void)
{
    const char *s = getenv("CIGEN");
    return s ? s : "build/cigen";
}

char *tu_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cg_strbuf sb = CG_STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        cg_strbuf_add(&sb, buf, n);
    fclose(f);
    return cg_strbuf_detach(&sb, len);
}

bool tu_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

void tu_write(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

void tu_writes(const char *path, const char *text)
{
    tu_write(path, text, strlen(text));
}

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_addf(&sb, "%s/cigen-test-XXXXXX", base ? base : "/tmp");
    char *p = cg_strbuf_detach(&sb, NULL);
    ck_assert_msg(mkdtemp(p) != NULL, "mkdtemp failed");
    return p;
}

void tu_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                cg_strbuf sb = CG_STRBUF_INIT;
                cg_strbuf_addf(&sb, "%s/%s", path, e->d_name);
                tu_rm_rf(sb.buf);
                cg_strbuf_release(&sb);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_list_dir(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **v = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        cg_grow(&v, &cap, *n + 1, sizeof *v);
        v[(*n)++] = cg_xstrdup(e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

void tu_free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void tu_copy_tree(const char *from, const char *to)
{
    struct stat st;
    ck_assert_msg(lstat(from, &st) == 0, "missing %s", from);
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(from, target, sizeof target - 1);
        ck_assert(n >= 0);
        target[n] = '\0';
        ck_assert_msg(symlink(target, to) == 0, "symlink %s", to);
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        mkdir(to, 0755);
        size_t n;
        char **names = tu_list_dir(from, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
            cg_strbuf_addf(&a, "%s/%s", from, names[i]);
            cg_strbuf_addf(&b, "%s/%s", to, names[i]);
            tu_copy_tree(a.buf, b.buf);
            cg_strbuf_release(&a);
            cg_strbuf_release(&b);
        }
        tu_free_list(names, n);
        return;
    }
    size_t len;
    char *data = tu_read(from, &len);
    ck_assert_msg(data != NULL, "cannot read %s", from);
    tu_write(to, data, len);
    chmod(to, st.st_mode & 0777);
    free(data);
}

void tu_overlay_tree(const char *from, const char *to)
{
    struct stat sf, st;
    if (lstat(from, &sf) == 0 && S_ISDIR(sf.st_mode) && lstat(to, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n;
        char **names = tu_list_dir(from, &n);
        for (size_t i = 0; i < n; i++) {
            cg_strbuf a = CG_STRBUF_INIT, b = CG_STRBUF_INIT;
            cg_strbuf_addf(&a, "%s/%s", from, names[i]);
            cg_strbuf_addf(&b, "%s/%s", to, names[i]);
            tu_overlay_tree(a.buf, b.buf);
            cg_strbuf_release(&a);
            cg_strbuf_release(&b);
        }
        tu_free_list(names, n);
        return;
    }
    tu_rm_rf(to);
    tu_copy_tree(from, to);
}

void tu_case_input(const char *case_dir, const char *to)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/base", case_dir);
    char *base = tu_read(p.buf, NULL);
    bool has_base = base != NULL;
    if (has_base) {
        char *save = NULL;
        char *name = strtok_r(base, "\n", &save);
        ck_assert_msg(name != NULL, "%s: empty, expected the name of a folder of tests/bases", p.buf);
        cg_strbuf from = CG_STRBUF_INIT;
        cg_strbuf_addf(&from, "%s/tests/bases/%s", tu_srcdir(), name);
        ck_assert_msg(!strchr(name, '/') && tu_exists(from.buf), "%s: no base project '%s' (tests/bases/%s)", p.buf,
                      name, name);
        tu_copy_tree(from.buf, to);
        for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            ck_assert_msg(strncmp(line, "without ", 8) == 0, "%s: '%s': expected 'without PATH'", p.buf, line);
            cg_strbuf drop = CG_STRBUF_INIT;
            cg_strbuf_addf(&drop, "%s/%s", to, line + 8);
            ck_assert_msg(tu_exists(drop.buf), "%s: '%s': base '%s' has no such file", p.buf, line, name);
            tu_rm_rf(drop.buf);
            cg_strbuf_release(&drop);
        }
        cg_strbuf_release(&from);
        free(base);
    }
    cg_strbuf_reset(&p);
    cg_strbuf_addf(&p, "%s/in", case_dir);
    if (!has_base)
        tu_copy_tree(p.buf, to);
    else if (tu_exists(p.buf))
        tu_overlay_tree(p.buf, to);
    cg_strbuf_release(&p);
}

static void diff_into(cg_strbuf *msg, const char *exp, const char *act, const char *rel)
{
    struct stat se, sa;
    bool he = lstat(exp, &se) == 0, ha = lstat(act, &sa) == 0;
    if (he && !ha) {
        cg_strbuf_addf(msg, "missing: %s\n", rel);
        return;
    }
    if (!he && ha) {
        cg_strbuf_addf(msg, "unexpected: %s\n", rel);
        return;
    }
    if (S_ISDIR(se.st_mode) != S_ISDIR(sa.st_mode)) {
        cg_strbuf_addf(msg, "kind differs: %s\n", rel);
        return;
    }
    if (S_ISDIR(se.st_mode)) {
        size_t ne, na;
        char **le = tu_list_dir(exp, &ne), **la = tu_list_dir(act, &na);
        size_t i = 0, j = 0;
        while (i < ne || j < na) {
            int c = i == ne ? 1 : j == na ? -1 : strcmp(le[i], la[j]);
            const char *name = c <= 0 ? le[i] : la[j];
            cg_strbuf e2 = CG_STRBUF_INIT, a2 = CG_STRBUF_INIT, r2 = CG_STRBUF_INIT;
            cg_strbuf_addf(&e2, "%s/%s", exp, name);
            cg_strbuf_addf(&a2, "%s/%s", act, name);
            cg_strbuf_addf(&r2, "%s%s%s", rel, *rel ? "/" : "", name);
            diff_into(msg, e2.buf, a2.buf, r2.buf);
            cg_strbuf_release(&e2);
            cg_strbuf_release(&a2);
            cg_strbuf_release(&r2);
            if (c <= 0)
                i++;
            if (c >= 0)
                j++;
        }
        tu_free_list(le, ne);
        tu_free_list(la, na);
        return;
    }
    size_t le, la;
    char *de = tu_read(exp, &le), *da = tu_read(act, &la);
    if (!de || !da || le != la || memcmp(de, da, le) != 0) {
        cg_strbuf_addf(msg, "content differs: %s\n", rel);
        if (de && da && le < 20000 && la < 20000)
            cg_strbuf_addf(msg, "--- expected\n%.*s\n--- actual\n%.*s\n", (int)le, de, (int)la, da);
    }
    free(de);
    free(da);
}

char *tu_diff_trees(const char *expected, const char *actual)
{
    cg_strbuf msg = CG_STRBUF_INIT;
    diff_into(&msg, expected, actual, "");
    if (msg.len == 0) {
        cg_strbuf_release(&msg);
        return NULL;
    }
    return cg_strbuf_detach(&msg, NULL);
}

tu_run tu_sh(const char *cwd, const char *cmd)
{
    tu_run r = {0};
    char out_tpl[] = "/tmp/cigen-out-XXXXXX", err_tpl[] = "/tmp/cigen-err-XXXXXX";
    int fo = mkstemp(out_tpl), fe = mkstemp(err_tpl);
    ck_assert(fo >= 0 && fe >= 0);
    cg_strbuf exe = CG_STRBUF_INIT;
    const char *wrap = getenv("CIGEN_WRAPPER");
    if (wrap && *wrap)
        cg_strbuf_addf(&exe, "%s ", wrap);
    cg_strbuf_adds(&exe, tu_cigen());
    fflush(NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        if (cwd && chdir(cwd) != 0)
            _exit(126);
        setenv("CIGEN", exe.buf, 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    close(fo);
    close(fe);
    r.out = tu_read(out_tpl, &r.out_len);
    r.err = tu_read(err_tpl, &r.err_len);
    unlink(out_tpl);
    unlink(err_tpl);
    cg_strbuf_release(&exe);
    return r;
}

void tu_run_free(tu_run *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

char *tu_big_project(void)
{
    char *tmp = tu_mkdtemp();
    cg_strbuf cmd = CG_STRBUF_INIT;
    cg_strbuf_addf(&cmd, "sh '%s/tests/big-project.sh' p", tu_srcdir());
    tu_run r = tu_sh(tmp, cmd.buf);
    ck_assert_msg(r.status == 0, "making the big project: %s", r.err);
    tu_run_free(&r);
    cg_strbuf_release(&cmd);
    return tmp;
}
