/* cigen merge-driver — resolve a conflict in a generated output by
 * regenerating it from the merged sources.
 *
 * Git runs a merge driver before it writes the merged files, so the work
 * tree still holds "our" sources.  The driver therefore merges the sources
 * itself: `git merge-tree --write-tree` (git >= 2.38) computes the merged
 * tree without touching the work tree or the index; cigen regenerates from
 * that tree in a scratch folder and writes the result where git wants it.
 * The other side is the merge head (git merge sets GITHEAD_<sha>) or the
 * commit a rebase is applying.  When the sources themselves conflict, or the
 * other side cannot be found, the driver falls back to git's textual merge
 * (conflict markers) and says what to do.
 *
 *   .gitattributes:  config.yml merge=cigen
 *                    diagrams/[a-z]*.dot merge=cigen
 *   git config merge.cigen.name "regenerate cigen outputs"
 *   git config merge.cigen.driver "build/cigen merge-driver %O %A %B %P"
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "io/fsio.h"

extern char **environ;

#define NESTED "CIGEN_MERGE_DRIVER_NESTED"

/* Runs git with `args`; stdout into out (may be NULL).  Returns the exit
 * status, or -1 when git cannot run. */
static int git(const char *const args[], const char *const *env, cg_strbuf *out)
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
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2);
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

/* Regenerates `target` (a path from the top of the work tree) from the
 * merged sources into `dest`.  Returns 0, or -1 with a reason. */
static int regenerate_merged(const cg_global *g, const char *theirs, const char *base, const char *target,
                             const char *dest, cg_strbuf *why)
{
    static const char *const nested[] = {NESTED, "1", NULL};
    cg_strbuf tree = CG_STRBUF_INIT, mb = CG_STRBUF_INIT;
    cg_strbuf_addf(&mb, "--merge-base=%s", base);
    const char *mt[] = {"git", "merge-tree", "--write-tree", base[0] ? mb.buf : "--no-messages", "HEAD",
                  theirs, NULL};
    int rc = git(mt, nested, &tree);
    if (rc != 0 && rc != 1 && base[0]) {
        /* --merge-base needs git 2.40; the merge base git finds itself (the
         * fork point) gives the same merged sources for a rebase */
        const char *plain[] = {"git", "merge-tree", "--write-tree", "HEAD", theirs, NULL};
        cg_strbuf_reset(&tree);
        rc = git(plain, nested, &tree);
    }
    cg_strbuf_release(&mb);
    if (rc != 0 && rc != 1) {
        cg_strbuf_adds(why, "`git merge-tree --write-tree` failed (cigen needs git 2.38 or later)");
        cg_strbuf_release(&tree);
        return -1;
    }
    /* the tree, then (when git left conflicts) "MODE OID STAGE\tPATH" lines
     * up to an empty line */
    char *nl = strchr(cg_strbuf_str(&tree), '\n');
    const char *conflicts = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    char tmpl[] = "/tmp/cigen-merge-XXXXXX";
    if (!mkdtemp(tmpl)) {
        cg_strbuf_adds(why, "cannot create a scratch folder");
        cg_strbuf_release(&tree);
        return -1;
    }
    cg_strbuf index = CG_STRBUF_INIT, prefix = CG_STRBUF_INIT, dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&index, "%s/index", tmpl);
    cg_strbuf_addf(&prefix, "%s/work/", tmpl);
    const char *idx_env[] = {"GIT_INDEX_FILE", index.buf, NESTED, "1", NULL};
    const char *rt[] = {"git", "read-tree", tree.buf, NULL};
    const char *co[] = {"git", "checkout-index", "-a", "-f", "--prefix", prefix.buf, NULL};
    int result = -1;
    if (git(rt, idx_env, NULL) != 0 || git(co, idx_env, NULL) != 0) {
        cg_strbuf_adds(why, "cannot check out the merged tree");
        goto out;
    }
    cg_strbuf_addf(&dir, "%s%s", prefix.buf, g->opt.dir ? g->opt.dir : ".");
    cg_global sub = *g;
    sub.opt.dir = dir.buf;
    cg_project p;
    cg_project_init(&p);
    p.draw_diagrams = true;
    cg_error err;
    cg_error_init(&err);
    /* the project's folder from the top of the work tree: "" or "sub/" */
    const char *d = g->opt.dir ? g->opt.dir : ".";
    while (d[0] == '.' && d[1] == '/')
        d += 2;
    cg_strbuf want = CG_STRBUF_INIT, folder = CG_STRBUF_INIT;
    if (!cg_streq(d, ".") && *d)
        cg_strbuf_addf(&folder, "%s/", d);
    const char *conflicted = NULL;
    if (cg_project_load(&p, &sub.opt, &err) == 0 && rc == 1)
        conflicted = conflicted_source(&p, cg_strbuf_str(&folder), conflicts);
    if (conflicted) {
        /* markers in a source that still parses must not become a config */
        cg_strbuf_addf(why, "the sources conflict: %s", conflicted);
    } else if (err.set || cg_project_render(&p, &err) != 0) {
        cg_strbuf_addf(why, "the merged sources do not generate: %s", cg_strbuf_str(&err.text));
    } else {
        /* which output is the conflicted file? */
        size_t max = cg_cli_output_count(&p);
        cg_output_file *files = cg_xcalloc(max + 1, sizeof *files);
        size_t n = cg_cli_outputs(&p, files, max);
        for (size_t i = 0; i < n && result != 0; i++) {
            cg_strbuf_reset(&want);
            cg_strbuf_addf(&want, "%s%s", cg_strbuf_str(&folder), files[i].rel);
            if (!cg_streq(want.buf, target))
                continue;
            FILE *f = fopen(dest, "wb");
            if (f && fwrite(files[i].data, 1, files[i].len, f) == files[i].len && fclose(f) == 0)
                result = 0;
            else
                cg_strbuf_addf(why, "cannot write %s", dest);
        }
        if (result != 0 && !why->len)
            cg_strbuf_addf(why, "'%s' is not an output of %s", target, sub.opt.manifest ? sub.opt.manifest : "cigen.yml");
        free(files);
    }
    cg_strbuf_release(&want);
    cg_strbuf_release(&folder);
    cg_error_release(&err);
    cg_project_release(&p);
out:
    nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    cg_strbuf_release(&tree);
    cg_strbuf_release(&index);
    cg_strbuf_release(&prefix);
    cg_strbuf_release(&dir);
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
             "When the sources conflict too, it leaves git's usual conflict markers: resolve\n"
             "the sources, run ./regenerate.sh --force, and add the result.\n\n"
             "Exit status: 0 resolved, 1 conflict left, 2 bad usage.");
        return 0;
    }
    if (argc != 5) {
        fputs("cigen: error: merge-driver wants BASE OURS THEIRS PATH (git's %O %A %B %P)\n", stderr);
        return CG_EXIT_ERROR;
    }
    const char *base_file = argv[1], *ours = argv[2], *theirs_file = argv[3], *path = argv[4];
    cg_strbuf why = CG_STRBUF_INIT;
    if (!getenv(NESTED)) {
        char theirs[64], base[64];
        if (!other_side(theirs, base)) {
            cg_strbuf_adds(&why, "cannot tell which commit is being merged in");
        } else if (regenerate_merged(g, theirs, base, path, ours, &why) == 0) {
            if (!g->quiet)
                fprintf(stderr, "cigen: regenerated %s from the merged sources\n", path);
            cg_strbuf_release(&why);
            return 0;
        }
    }
    /* fall back to git's own textual merge, with its conflict markers */
    const char *mf[] = {"git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours,
                        base_file, theirs_file, NULL};
    int rc = git(mf, NULL, NULL);
    if (why.len)
        fprintf(stderr, "cigen: could not regenerate %s (%s); left git's merge of its text: resolve "
                "the sources, then run ./regenerate.sh --force\n", path, why.buf);
    cg_strbuf_release(&why);
    return rc == 0 ? 0 : 1;
}
