#define _GNU_SOURCE /* syscall(), strcasecmp() */
#include "io/paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include "base/util.h"

static bool is_git_name(const char *p, size_t len)
{
    return len == 4 && strncasecmp(p, ".git", 4) == 0;
}

int cg_check_project_path(const char *path, const cg_pos *pos, const char *what, cg_error *err)
{
    if (!*path)
        return cg_error_at(err, pos, "%s must not be empty", what);
    if (path[0] == '/')
        return cg_error_at(err, pos, "%s '%s' is an absolute path; paths are relative to the project",
                           what, path);
    if (cg_line_breaker(path, NULL)) /* it is written into comment lines */
        return cg_error_at(err, pos, "%s holds a control character or a line break", what);
    const char *p = path;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return cg_error_at(err, pos, "%s '%s' leaves the project folder ('..' is not allowed)",
                               what, path);
        if (len == 0 && slash && slash[1] != '\0')
            return cg_error_at(err, pos, "%s '%s' has an empty path component", what, path);
        if (memchr(p, '\\', len))
            return cg_error_at(err, pos, "%s '%s' contains a backslash; use '/'", what, path);
        if (is_git_name(p, len))
            return cg_error_at(err, pos, "%s '%s' lies inside git's folder '.git'; cigen never reads or "
                               "writes there", what, path);
        p += len;
        if (*p == '/')
            p++;
    }
    return 0;
}

/* Next component of a project path, skipping "." and empty ones. */
static const char *next_part(const char *p, size_t *len)
{
    for (;;) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        *len = e ? (size_t)(e - p) : strlen(p);
        if (!(*len == 1 && p[0] == '.'))
            return p;
        p += 1;
    }
}

bool cg_path_same(const char *a, const char *b)
{
    for (;;) {
        size_t la, lb;
        a = next_part(a, &la);
        b = next_part(b, &lb);
        if (la != lb || memcmp(a, b, la) != 0)
            return false;
        if (la == 0)
            return true;
        a += la;
        b += lb;
    }
}

void cg_path_normalize(const char *path, cg_strbuf *out)
{
    size_t len, start = out->len;
    while ((path = next_part(path, &len)), len) {
        if (out->len > start)
            cg_strbuf_addc(out, '/');
        cg_strbuf_add(out, path, len);
        path += len;
    }
}

bool cg_path_within(const char *path, const char *dir)
{
    for (;;) {
        size_t lp, ld;
        path = next_part(path, &lp);
        dir = next_part(dir, &ld);
        if (ld == 0)
            return true;
        if (lp != ld || memcmp(path, dir, lp) != 0)
            return false;
        path += lp;
        dir += ld;
    }
}

/* --- resolving beneath a folder ------------------------------------------ */

enum { MAX_LINKS = 40, MAX_DEPTH = 4096 };

/* The walk: one component at a time, never following a link the kernel
 * sees; a link's (relative) target is spliced into the rest of the path and
 * its ".." pop the folders walked so far, never past dirfd. */
int cg_open_beneath_walk(int dirfd, const char *rel, int flags, mode_t mode)
{
    int *stack = NULL;
    size_t depth = 0, cap = 0;
    cg_strbuf rest = CG_STRBUF_INIT;
    cg_strbuf_adds(&rest, rel);
    int links = 0, fd = -1, e = 0;
    size_t at = 0; /* where the unwalked rest starts in rest.buf */
    for (;;) {
        while (rest.buf[at] == '/')
            at++;
        const char *name = rest.buf + at;
        const char *slash = strchr(name, '/');
        size_t len = slash ? (size_t)(slash - name) : strlen(name);
        const char *after = name + len;
        while (*after == '/')
            after++;
        bool last = *after == '\0';
        int cur = depth ? stack[depth - 1] : dirfd;
        char comp[256];
        if (len >= sizeof comp) {
            e = ENAMETOOLONG;
            break;
        }
        memcpy(comp, name, len);
        comp[len] = '\0';
        at = (size_t)(after - rest.buf);
        if (len == 0 || (len == 1 && comp[0] == '.')) {
            if (!last)
                continue;
            comp[0] = '.', comp[1] = '\0'; /* "a/." or "": the folder itself */
        }
        if (len == 2 && comp[0] == '.' && comp[1] == '.') {
            if (depth == 0) {
                e = EXDEV;
                break;
            }
            close(stack[--depth]);
            if (!last)
                continue;
            comp[0] = '.', comp[1] = '\0';
        }
        cur = depth ? stack[depth - 1] : dirfd;
        int f = last ? (flags | O_NOFOLLOW | O_CLOEXEC) : (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = openat(cur, comp, f, mode);
        if (r >= 0 && last) {
            fd = r;
            break;
        }
        if (r >= 0) {
            if (depth >= MAX_DEPTH) {
                close(r);
                e = ENAMETOOLONG;
                break;
            }
            cg_grow(&stack, &cap, depth + 1, sizeof *stack);
            stack[depth++] = r;
            continue;
        }
        e = errno;
        struct stat st;
        bool link = (e == ELOOP || e == ENOTDIR) && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode);
        if (!link || (last && (flags & O_NOFOLLOW)))
            break;
        if (++links > MAX_LINKS) {
            e = ELOOP;
            break;
        }
        char target[4096];
        ssize_t n = readlinkat(cur, comp, target, sizeof target - 1);
        if (n < 0) {
            e = errno;
            break;
        }
        target[n] = '\0';
        if (target[0] == '/') {
            e = EXDEV;
            break;
        }
        cg_strbuf next = CG_STRBUF_INIT;
        cg_strbuf_adds(&next, target);
        if (!last) {
            cg_strbuf_addc(&next, '/');
            cg_strbuf_adds(&next, rest.buf + at);
        }
        cg_strbuf_release(&rest);
        rest = next;
        at = 0;
        e = 0;
    }
    while (depth)
        close(stack[--depth]);
    free(stack);
    cg_strbuf_release(&rest);
    if (fd < 0)
        errno = e ? e : ENOENT;
    return fd;
}

int cg_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
#if defined(__linux__) && defined(SYS_openat2)
    static int no_openat2 = -1; /* -1: not known yet */
    if (no_openat2 < 0)
        no_openat2 = getenv("CIGEN_TEST_NO_OPENAT2") != NULL; /* a test hook: the walk */
    if (!no_openat2) {
        struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                               .mode = (flags & O_CREAT) ? mode : 0,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
        for (int tries = 0; tries < 16; tries++) {
            long fd = syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof how);
            if (fd >= 0)
                return (int)fd;
            if (errno == EAGAIN || errno == EINTR) /* a rename raced the lookup */
                continue;
            if (errno != ENOSYS && errno != EPERM)
                return -1;
            break;
        }
        if (errno == ENOSYS || errno == EPERM)
            no_openat2 = 1;
        else
            return -1;
    }
#endif
    return cg_open_beneath_walk(dirfd, rel, flags, mode);
}

int cg_file_id_of(const char *root, const char *rel, cg_file_id *id)
{
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return 1;
    int fd = cg_open_beneath(rootfd, rel, O_RDONLY | O_NONBLOCK, 0);
    close(rootfd);
    struct stat st;
    int rc = 1;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        *id = (cg_file_id){st.st_dev, st.st_ino};
        rc = 0;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The identity of the git dir a ".git" file in the project names (a
 * worktree's or a submodule's "gitdir: PATH"): 0, or 1 when there is none. */
static int worktree_git_dir(int rootfd, cg_file_id *id)
{
    int fd = openat(rootfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 1;
    char buf[4097];
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof buf - 1) : -1;
    close(fd);
    if (n <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
        return 1;
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    const char *dir = buf + 8;
    int d = dir[0] == '/' ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                          : openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        return 1;
    int rc = fstat(d, &st) == 0 ? 0 : 1;
    if (rc == 0)
        *id = (cg_file_id){st.st_dev, st.st_ino};
    close(d);
    return rc;
}

/* The name of the folder `child` (identity) in the folder open as parent. */
static char *name_in(int parent, const struct stat *child)
{
    int d = dup(parent);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (!dir) {
        if (d >= 0)
            close(d);
        return NULL;
    }
    char *name = NULL;
    struct dirent *ent;
    while (!name && (ent = readdir(dir))) {
        if (ent->d_ino != child->st_ino || strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(parent, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == child->st_dev &&
            st.st_ino == child->st_ino)
            name = cg_xstrdup(ent->d_name);
    }
    closedir(dir);
    return name;
}

int cg_dir_in_git(int rootfd, int dirfd, char **where)
{
    struct stat root, st;
    if (fstat(rootfd, &root) != 0)
        return -1;
    cg_file_id wt;
    bool has_wt = worktree_git_dir(rootfd, &wt) == 0;
    int cur = dup(dirfd);
    if (cur < 0)
        return -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = -1, e = EXDEV;
    bool git = false;
    for (size_t depth = 0; depth < MAX_DEPTH; depth++) {
        if (fstat(cur, &st) != 0) {
            e = errno;
            break;
        }
        if (st.st_dev == root.st_dev && st.st_ino == root.st_ino) {
            rc = 0;
            break;
        }
        if (has_wt && st.st_dev == wt.dev && st.st_ino == wt.ino)
            git = true;
        int parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat pst;
        if (parent < 0 || fstat(parent, &pst) != 0 || (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino)) {
            if (parent >= 0)
                close(parent);
            break; /* the file system's root: the folder is not beneath */
        }
        char *name = name_in(parent, &st);
        close(cur);
        cur = parent;
        if (!name)
            break;
        if (is_git_name(name, strlen(name)))
            git = true;
        cg_grow(&names, &cap, n + 1, sizeof *names);
        names[n++] = name;
    }
    close(cur);
    if (rc == 0 && git && where) {
        cg_strbuf sb = CG_STRBUF_INIT;
        for (size_t i = n; i-- > 0;) {
            cg_strbuf_adds(&sb, names[i]);
            if (i)
                cg_strbuf_addc(&sb, '/');
        }
        *where = cg_strbuf_detach(&sb, NULL);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc < 0) {
        errno = e;
        return -1;
    }
    return git ? 1 : 0;
}

/* Whether the folder open as fd is a git folder as git's discovery tells
 * one (setup.c is_git_directory): HEAD, and objects/ and refs/ (or a
 * commondir file naming where they are). */
static bool looks_like_git_dir(int fd)
{
    struct stat st;
    if (fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
        return false;
    if (fstatat(fd, "commondir", &st, 0) == 0 && S_ISREG(st.st_mode))
        return true;
    return fstatat(fd, "objects", &st, 0) == 0 && S_ISDIR(st.st_mode) && fstatat(fd, "refs", &st, 0) == 0 &&
           S_ISDIR(st.st_mode);
}

int cg_root_in_git(const char *root, char **where)
{
    char *path = cg_xstrdup(root);
    int rc = 0;
    for (size_t len = strlen(path); len > 0 && rc == 0;) {
        path[len] = '\0';
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        bool git = is_git_name(name, strlen(name));
        if (!git && *name) {
            int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            git = fd >= 0 && looks_like_git_dir(fd);
            if (fd >= 0)
                close(fd);
        }
        if (git) {
            *where = cg_xstrdup(name);
            rc = 1;
        }
        if (!slash)
            break;
        len = (size_t)(slash - path);
    }
    free(path);
    return rc;
}
