/* cigen merge-driver — resolve a conflict in a generated output by
 * regenerating it from the merged sources.
 *
 * Git runs a merge driver before it writes the merged files, so the work
 * tree still holds "our" sources.  The driver therefore merges the sources
 * itself: `git merge-tree --write-tree` (git >= 2.38) computes the merged
 * tree without touching the work tree or the index; cigen checks out the
 * project folder's YAML files of that tree (never the rest of the
 * repository) into a scratch folder, regenerates every output once, and
 * writes the one git asked for where git wants it.
 *
 * Git runs the driver once per conflicted output (config.yml and each
 * diagram).  The first run keeps all the outputs it rendered in one file
 * under the git folder (`git rev-parse --git-path cigen-merge`), named by a
 * digest of what they were made from (our commit, theirs, the base, the
 * project folder, the options and the cigen binary); the runs for the other
 * outputs of the same merge copy theirs from there.  Each new entry replaces
 * the previous one, so the folder holds the last merge's outputs at most.
 *
 * The other side is the merge head (git merge sets GITHEAD_<sha>) or the
 * commit a rebase is applying.  When the sources themselves conflict, or the
 * other side cannot be found, the driver falls back to git's textual merge
 * (conflict markers) and says what to do, once per merge.
 *
 *   .gitattributes:  config.yml merge=cigen
 *                    diagrams/[a-z]*.dot merge=cigen
 *   git config merge.cigen.name "regenerate cigen outputs"
 *   git config merge.cigen.driver "build/cigen merge-driver %O %A %B %P"
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "base/digest.h"
#include "io/fsio.h"

extern char **environ;

#define NESTED "CIGEN_MERGE_DRIVER_NESTED"

/* Runs git with `args`, its stdin read from the file `in` (NULL: nothing);
 * stdout into out (may be NULL).  Returns the exit status, or -1 when git
 * cannot run. */
static int git_in(const char *const args[], const char *const *env, const char *in, cg_strbuf *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0)
            dup2(null, 2);
        int input = in ? open(in, O_RDONLY) : null;
        if (input < 0)
            _exit(127);
        dup2(input, 0);
        for (size_t i = 0; env && env[i]; i += 2)
            setenv(env[i], env[i + 1], 1);
        execvp("git", (char *const *)args);
        _exit(127);
    }
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0 && out)
            cg_strbuf_add(out, buf, (size_t)n);
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int git(const char *const args[], const char *const *env, cg_strbuf *out)
{
    return git_in(args, env, NULL, out);
}

static void chomp(cg_strbuf *sb)
{
    while (sb->len && (sb->buf[sb->len - 1] == '\n' || sb->buf[sb->len - 1] == '\r'))
        cg_strbuf_truncate(sb, sb->len - 1);
}

static bool is_hex40(const char *s)
{
    for (int i = 0; i < 40; i++)
        if (!cg_isxdigit((unsigned char)s[i]))
            return false;
    return s[40] == '=' || s[40] == '\0';
}

/* The commit being merged in, and (for a rebase) the base to merge from. */
static bool other_side(char theirs[64], char base[64])
{
    base[0] = '\0';
    int found = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "GITHEAD_", 8) == 0 && is_hex40(*e + 8)) {
            memcpy(theirs, *e + 8, 40);
            theirs[40] = '\0';
            found++;
        }
    }
    if (found == 1)
        return true;
    /* a rebase: the last line of rebase-merge/done is the pick in progress */
    cg_strbuf path = CG_STRBUF_INIT;
    const char *args[] = {"git", "rev-parse", "--git-path", "rebase-merge/done", NULL};
    if (git(args, NULL, &path) != 0) {
        cg_strbuf_release(&path);
        return false;
    }
    chomp(&path);
    FILE *f = fopen(path.buf, "r");
    cg_strbuf_release(&path);
    if (!f)
        return false;
    char line[1024], last[1024] = "";
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && line[0] != '\n')
            memcpy(last, line, sizeof line);
    fclose(f);
    char cmd[64], sha[128];
    if (sscanf(last, "%63s %127s", cmd, sha) != 2)
        return false;
    cg_strbuf full = CG_STRBUF_INIT, parent = CG_STRBUF_INIT;
    cg_strbuf_addf(&parent, "%s^{commit}", sha);
    const char *a1[] = {"git", "rev-parse", "--verify", "-q", parent.buf, NULL};
    bool ok = git(a1, NULL, &full) == 0;
    chomp(&full);
    if (ok) {
        snprintf(theirs, 64, "%s", full.buf);
        cg_strbuf_reset(&parent);
        cg_strbuf_addf(&parent, "%s^", full.buf);
        cg_strbuf_reset(&full);
        const char *a2[] = {"git", "rev-parse", "--verify", "-q", parent.buf, NULL};
        if (git(a2, NULL, &full) == 0) {
            chomp(&full);
            snprintf(base, 64, "%s", full.buf);
        }
    }
    cg_strbuf_release(&full);
    cg_strbuf_release(&parent);
    return ok;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The first source of p among git merge-tree's conflicted-file lines (paths
 * from the top of the work tree, where the project is in folder `folder`,
 * "" or "sub/"), or NULL. */
static const char *conflicted_source(const cg_project *p, const char *folder, const char *lines)
{
    size_t fl = strlen(folder);
    while (*lines && *lines != '\n') {
        const char *end = strchr(lines, '\n');
        size_t len = end ? (size_t)(end - lines) : strlen(lines);
        const char *tab = memchr(lines, '\t', len);
        const char *name = tab ? tab + 1 : NULL;
        size_t nlen = tab ? len - (size_t)(name - lines) : 0;
        for (size_t i = 0; name && i < p->m.ndocs + p->m.nfragments; i++) {
            const char *f = cg_doc_file(i < p->m.ndocs ? p->m.docs[i] : p->m.fragments[i - p->m.ndocs].doc);
            if (nlen == fl + strlen(f) && memcmp(name, folder, fl) == 0 && memcmp(name + fl, f, nlen - fl) == 0)
                return f;
        }
        lines += len + (end != NULL);
    }
    return NULL;
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Checks out the files of the project folder (`folder`: "" or "sub/") of
 * `tree` under `work` ("/tmp/.../work/"): its YAML files only, unless `all`.
 * The scratch index (`index`) holds the project folder's tree alone, never
 * the whole repository.  *skipped says whether files were left out.
 * Returns 0, or -1. */
static int checkout_project(const char *tree, const char *folder, bool all, const char *index, const char *work,
                            bool *skipped)
{
    const char *env[] = {"GIT_INDEX_FILE", index, NESTED, "1", NULL};
    cg_strbuf ish = CG_STRBUF_INIT, names = CG_STRBUF_INIT, pick = CG_STRBUF_INIT, list = CG_STRBUF_INIT;
    size_t fl = strlen(folder);
    cg_strbuf_addf(&ish, "%s:%.*s", tree, (int)(fl ? fl - 1 : 0), folder);
    cg_strbuf_addf(&list, "%s.paths", index);
    const char *rt[] = {"git", "read-tree", ish.buf, NULL};
    const char *ls[] = {"git", "ls-files", "-z", NULL};
    const char *co[] = {"git", "checkout-index", "-f", "-z", "--stdin", "--prefix", work, NULL};
    int rc = -1;
    *skipped = false;
    if (git(rt, env, NULL) == 0 && git(ls, env, &names) == 0) {
        for (size_t i = 0; i < names.len;) {
            const char *name = names.buf + i;
            size_t n = strlen(name);
            if (all || has_suffix(name, n, ".yml") || has_suffix(name, n, ".yaml"))
                cg_strbuf_add(&pick, name, n + 1);
            else
                *skipped = true;
            i += n + 1;
        }
        FILE *f = fopen(list.buf, "wb");
        bool wrote = f && fwrite(cg_strbuf_str(&pick), 1, pick.len, f) == pick.len;
        if (f && fclose(f) != 0)
            wrote = false;
        if (wrote && git_in(co, env, list.buf, NULL) == 0)
            rc = 0;
    }
    cg_strbuf_release(&ish);
    cg_strbuf_release(&names);
    cg_strbuf_release(&pick);
    cg_strbuf_release(&list);
    return rc;
}

/* Computes the merged tree of HEAD and theirs: 0 (*tree set; *conflicts
 * points into it at git's conflicted-file lines, "" when none, *clean says
 * whether there were none), or -1 with a reason. */
static int merged_tree(const char *theirs, const char *base, cg_strbuf *tree, const char **conflicts, bool *clean,
                       cg_strbuf *why)
{
    static const char *const nested[] = {NESTED, "1", NULL};
    cg_strbuf mb = CG_STRBUF_INIT;
    cg_strbuf_addf(&mb, "--merge-base=%s", base);
    const char *mt[] = {"git", "merge-tree", "--write-tree", base[0] ? mb.buf : "--no-messages", "HEAD",
                        theirs, NULL};
    int rc = git(mt, nested, tree);
    if (rc != 0 && rc != 1 && base[0]) {
        /* --merge-base needs git 2.40; the merge base git finds itself (the
         * fork point) gives the same merged sources for a rebase */
        const char *plain[] = {"git", "merge-tree", "--write-tree", "HEAD", theirs, NULL};
        cg_strbuf_reset(tree);
        rc = git(plain, nested, tree);
    }
    cg_strbuf_release(&mb);
    if (rc != 0 && rc != 1) {
        cg_strbuf_adds(why, "`git merge-tree --write-tree` failed (cigen needs git 2.38 or later)");
        return -1;
    }
    /* the tree, then (when git left conflicts) "MODE OID STAGE\tPATH" lines
     * up to an empty line */
    char *nl = strchr(cg_strbuf_str(tree), '\n');
    *conflicts = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    *clean = rc == 0;
    return 0;
}

/* Renders every output of the project (in folder `folder` of the work tree)
 * from the merged sources into `blob`, in the cache's format:
 *   "ok\n", then per output "LEN REL\0", then "\n" and the outputs' bytes
 *   one after the other; or "fail\n" and the reason. */
static void render_merged(const cg_global *g, const char *theirs, const char *base, const char *folder,
                          cg_strbuf *blob)
{
    cg_strbuf tree = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    const char *conflicts = "";
    bool clean = true;
    char tmpl[] = "/tmp/cigen-merge-XXXXXX";
    if (merged_tree(theirs, base, &tree, &conflicts, &clean, &why) != 0) {
        /* said */
    } else if (!mkdtemp(tmpl)) {
        cg_strbuf_adds(&why, "cannot create a scratch folder");
    } else {
        cg_strbuf index = CG_STRBUF_INIT, work = CG_STRBUF_INIT;
        cg_strbuf_addf(&index, "%s/index", tmpl);
        cg_strbuf_addf(&work, "%s/work/", tmpl);
        cg_global sub = *g;
        sub.opt.dir = work.buf;
        /* the YAML files first; everything in the project folder only when
         * the project does not load or render without the others */
        for (int all = 0; all < 2; all++) {
            bool skipped = false;
            cg_strbuf_reset(&why);
            if (mkdir(work.buf, 0700) != 0 && errno != EEXIST) {
                cg_strbuf_adds(&why, "cannot create a scratch folder");
                break;
            }
            if (checkout_project(tree.buf, folder, all, index.buf, work.buf, &skipped) != 0) {
                cg_strbuf_addf(&why, "cannot check out %s of the merged tree",
                               *folder ? folder : "the top folder");
                break;
            }
            cg_project p;
            cg_project_init(&p);
            p.draw_diagrams = true;
            cg_error err;
            cg_error_init(&err);
            const char *conflicted = NULL;
            if (cg_project_load(&p, &sub.opt, &err) == 0 && !clean)
                conflicted = conflicted_source(&p, folder, conflicts);
            bool done = true;
            if (conflicted) {
                /* a conflict git left without markers, or markers in a
                 * source that still parses: never a config */
                cg_strbuf_addf(&why, "the sources conflict: %s%s", folder, conflicted);
            } else if (err.set || cg_project_render(&p, &err) != 0) {
                cg_strbuf_addf(&why, "the merged sources do not generate: %s", cg_strbuf_str(&err.text));
                done = !skipped;
            } else {
                size_t max = cg_cli_output_count(&p);
                cg_output_file *files = cg_xcalloc(max + 1, sizeof *files);
                size_t n = cg_cli_outputs(&p, files, max);
                cg_strbuf_adds(blob, "ok\n");
                for (size_t i = 0; i < n; i++) {
                    cg_strbuf_addf(blob, "%zu %s", files[i].len, files[i].rel);
                    cg_strbuf_add(blob, "", 1);
                }
                cg_strbuf_adds(blob, "\n");
                for (size_t i = 0; i < n; i++)
                    cg_strbuf_add(blob, files[i].data, files[i].len);
                free(files);
            }
            cg_error_release(&err);
            cg_project_release(&p);
            if (done)
                break;
        }
        nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        cg_strbuf_release(&index);
        cg_strbuf_release(&work);
    }
    if (!blob->len) {
        cg_strbuf_adds(blob, "fail\n");
        cg_strbuf_add(blob, cg_strbuf_str(&why), why.len);
    }
    cg_strbuf_release(&tree);
    cg_strbuf_release(&why);
}

/* Writes the output `target` (a path from the top of the work tree) from a
 * rendered blob into dest.  Returns 0, or -1 with a reason. */
static int serve(const cg_strbuf *blob, const char *folder, const char *target, const char *dest,
                 const cg_global *g, cg_strbuf *why)
{
    const char *s = cg_strbuf_str(blob), *end = s + blob->len;
    if (strncmp(s, "fail\n", 5) == 0) {
        cg_strbuf_add(why, s + 5, blob->len - 5);
        return -1;
    }
    if (strncmp(s, "ok\n", 3) != 0) {
        cg_strbuf_adds(why, "the cached outputs are damaged");
        return -1;
    }
    size_t fl = strlen(folder);
    bool inside = strncmp(target, folder, fl) == 0;
    const char *at = s + 3;
    const char *hit = NULL;
    size_t hit_len = 0, offset = 0;
    while (at < end && *at != '\n') {
        char *rel;
        unsigned long long len = strtoull(at, &rel, 10);
        if (*rel != ' ' || !memchr(rel, '\0', (size_t)(end - rel))) {
            cg_strbuf_adds(why, "the cached outputs are damaged");
            return -1;
        }
        rel++;
        if (!hit && inside && cg_streq(rel, target + fl)) {
            hit = rel;
            hit_len = (size_t)len;
        } else if (!hit) {
            offset += (size_t)len;
        }
        at = rel + strlen(rel) + 1;
    }
    if (at >= end || (hit && offset + hit_len > (size_t)(end - at - 1))) {
        cg_strbuf_adds(why, "the cached outputs are damaged");
        return -1;
    }
    if (!hit) {
        cg_strbuf_addf(why, "'%s' is not an output of %s%s", target, folder,
                       g->opt.manifest ? g->opt.manifest : "cigen.yml");
        return -1;
    }
    const char *data = at + 1 + offset;
    /* git's file for our side: written in place, never through a link */
    int fd = open(dest, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    for (size_t off = 0; ok && off < hit_len;) {
        ssize_t w = write(fd, data + off, hit_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (!ok) {
        cg_strbuf_addf(why, "cannot write %s", dest);
        return -1;
    }
    return 0;
}

/* The name of the cache entry for this merge: what the outputs are made
 * from (the commits, the project folder and the options) and which cigen
 * makes them (a rebuilt binary never reuses an older one's outputs). */
static void cache_key(const cg_global *g, const char *head, const char *theirs, const char *base,
                      const char *folder, char hex[65])
{
    cg_strbuf k = CG_STRBUF_INIT;
    struct stat st;
    if (stat("/proc/self/exe", &st) == 0)
        cg_strbuf_addf(&k, "%llu:%llu:%lld:%lld", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                       (long long)st.st_size, (long long)st.st_mtime);
    const cg_options *o = &g->opt;
    cg_strbuf_addf(&k, "|" CIGEN_VERSION "|%s|%s|%s|%s|%s|%s|%d|%d|%d", head, theirs, base, folder,
                   o->manifest ? o->manifest : "", o->overlay ? o->overlay : "", o->no_overlay, o->strict,
                   o->selection != NULL);
    cg_sha256_hex(k.buf, k.len, hex, 32);
    cg_strbuf_release(&k);
}

/* The cache folder `dir` (git's path for cigen-merge), open: the folder
 * itself, never a link to one (O_NOFOLLOW, resolved from its parent's
 * descriptor), owned by this user and writable by nobody else; created
 * (0700) when missing and `create`.  Anything else (a link planted there,
 * a file, another user's folder) is not used: -1.  A cache that cannot be
 * used only costs the next run a render. */
static int cache_open(const char *dir, bool create)
{
    /* only ever the folder git names for it (never a folder of the user's) */
    const char *slash = strrchr(dir, '/');
    if (!cg_streq(slash ? slash + 1 : dir, "cigen-merge"))
        return -1;
    char *parent = slash ? cg_xstrndup(dir, slash == dir ? 1 : (size_t)(slash - dir)) : cg_xstrdup(".");
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(parent);
    if (pfd < 0)
        return -1;
    if (create && mkdirat(pfd, "cigen-merge", 0700) != 0 && errno != EEXIST) {
        close(pfd);
        return -1;
    }
    int fd = openat(pfd, "cigen-merge", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(pfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
                    (st.st_mode & (S_IWGRP | S_IWOTH)))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Reads the cache entry `name` of the cache folder `dir` into blob: true
 * when there is one (a regular file of this user's, not a link). */
static bool cache_read(const char *dir, const char *name, cg_strbuf *blob)
{
    int dfd = cache_open(dir, false);
    if (dfd < 0)
        return false;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return false;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            cg_strbuf_add(blob, buf, (size_t)n);
    close(fd);
    if (n < 0)
        cg_strbuf_reset(blob);
    return n == 0 && blob->len;
}

/* Replaces every entry of the cache folder with `name` holding blob: each
 * removed and written through the folder's descriptor (unlinkat removes a
 * link, never what it points to). */
static void cache_write(const char *dir, const char *name, const cg_strbuf *blob)
{
    int dfd = cache_open(dir, true);
    if (dfd < 0)
        return;
    int lfd = dup(dfd);
    DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' || (!cg_streq(e->d_name, ".") && !cg_streq(e->d_name, "..")))
            unlinkat(dfd, e->d_name, 0);
    closedir(d);
    cg_strbuf tmp = CG_STRBUF_INIT;
    char hex[17];
    struct stat self;
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&self;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)x);
        cg_strbuf_reset(&tmp);
        cg_strbuf_addf(&tmp, ".%s.%s", name, hex);
        fd = openat(dfd, tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd >= 0) {
        size_t off = 0;
        while (off < blob->len) {
            ssize_t w = write(fd, blob->buf + off, blob->len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        bool ok = close(fd) == 0 && off == blob->len;
        if (!ok || renameat(dfd, tmp.buf, dfd, name) != 0)
            unlinkat(dfd, tmp.buf, 0);
    }
    cg_strbuf_release(&tmp);
    close(dfd);
}

/* Regenerates `target` (a path from the top of the work tree) from the
 * merged sources into `dest`, rendering once per merge.  Returns 0, or -1
 * with a reason; *repeat says the reason was given by an earlier run for
 * this merge. */
static int regenerate_merged(const cg_global *g, const char *theirs, const char *base, const char *target,
                             const char *dest, cg_strbuf *why, bool *repeat)
{
    *repeat = false;
    const char *dir = g->opt.dir ? g->opt.dir : ".";
    cg_strbuf facts = CG_STRBUF_INIT, blob = CG_STRBUF_INIT;
    /* one git for the project's folder from the top ("" or "sub/"), the
     * cache folder (from dir) and our commit */
    const char *rp[] = {"git", "-C", dir, "rev-parse", "--show-prefix", "--git-path", "cigen-merge", "HEAD", NULL};
    int result = -1;
    char *lines[3] = {NULL, NULL, NULL};
    if (git(rp, NULL, &facts) == 0) {
        char *s = facts.buf;
        for (int i = 0; s && i < 3; i++) {
            char *nl = strchr(s, '\n');
            if (!nl)
                break;
            *nl = '\0';
            lines[i] = s;
            s = nl + 1;
        }
    }
    if (!lines[2]) {
        cg_strbuf_addf(why, "cannot find the git folder and HEAD of '%s'", dir);
        goto out;
    }
    /* one line each: a line break in a path would shift them (and make a
     * folder of the user's the cache that cache_write empties) */
    if (lines[2] + strlen(lines[2]) + 1 != facts.buf + facts.len) {
        cg_strbuf_addf(why, "the path of the project or of its git folder holds a line break");
        goto out;
    }
    const char *folder = lines[0], *head = lines[2];
    cg_strbuf cache = CG_STRBUF_INIT;
    if (lines[1][0] != '/')
        cg_strbuf_addf(&cache, "%s/", dir);
    cg_strbuf_adds(&cache, lines[1]);
    char key[65];
    cache_key(g, head, theirs, base, folder, key);
    if (cache_read(cache.buf, key, &blob)) {
        *repeat = true;
    } else {
        cg_strbuf_reset(&blob);
        render_merged(g, theirs, base, folder, &blob);
        cache_write(cache.buf, key, &blob);
    }
    cg_strbuf_release(&cache);
    result = serve(&blob, folder, target, dest, g, why);
out:
    cg_strbuf_release(&facts);
    cg_strbuf_release(&blob);
    return result;
}

int cg_cmd_merge_driver(const cg_global *g, int argc, char **argv)
{
    if (argc == 2 && (cg_streq(argv[1], "--help") || cg_streq(argv[1], "-h"))) {
        puts("usage: cigen [-C DIR] merge-driver BASE OURS THEIRS PATH\n\n"
             "A git merge driver for the files cigen generates: it regenerates PATH from the\n"
             "merged sources instead of merging its text.  Set it up once per clone:\n\n"
             "  git config merge.cigen.name \"regenerate cigen outputs\"\n"
             "  git config merge.cigen.driver \"build/cigen merge-driver %O %A %B %P\"\n\n"
             "and in .gitattributes:  config.yml merge=cigen  and  diagrams/*.dot merge=cigen\n"
             "(with -C DIR when the project is a subfolder of the repository, e.g.\n"
             "\".circleci/build/cigen -C .circleci merge-driver %O %A %B %P\").\n"
             "It checks out only the project folder's YAML files of the merged tree and\n"
             "renders once per merge: the runs for the other conflicted outputs copy theirs\n"
             "from the first run's (kept in the git folder under cigen-merge/).\n"
             "When the sources conflict too, it says so once and leaves git's usual conflict\n"
             "markers: resolve the sources, run ./regenerate.sh --force, and add the result.\n\n"
             "Exit status: 0 resolved, 1 conflict left, 2 bad usage.");
        return 0;
    }
    if (argc != 5) {
        fputs("cigen: error: merge-driver wants BASE OURS THEIRS PATH (git's %O %A %B %P)\n", stderr);
        return CG_EXIT_ERROR;
    }
    const char *base_file = argv[1], *ours = argv[2], *theirs_file = argv[3], *path = argv[4];
    /* run by our own `git merge-tree`, which only needs the sources
     * merged: the outputs are regenerated from them, so leave ours */
    if (getenv(NESTED))
        return 1;
    cg_strbuf why = CG_STRBUF_INIT;
    bool repeat = false;
    char theirs[64], base[64];
    if (!other_side(theirs, base)) {
        cg_strbuf_adds(&why, "cannot tell which commit is being merged in");
    } else if (regenerate_merged(g, theirs, base, path, ours, &why, &repeat) == 0) {
        if (!g->quiet)
            fprintf(stderr, "cigen: regenerated %s from the merged sources\n", path);
        cg_strbuf_release(&why);
        return 0;
    }
    /* fall back to git's own textual merge, with its conflict markers */
    const char *mf[] = {"git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours,
                        base_file, theirs_file, NULL};
    int rc = git(mf, NULL, NULL);
    if (why.len && !repeat)
        fprintf(stderr, "cigen: could not regenerate %s (%s); left git's merge of its text: resolve "
                "the sources, then run ./regenerate.sh --force\n", cg_cli_shown(path), cg_cli_shown(why.buf));
    cg_strbuf_release(&why);
    return rc == 0 ? 0 : 1;
}
