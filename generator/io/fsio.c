#define _GNU_SOURCE /* MAP_POPULATE, sync_file_range() */
#include "io/fsio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/text.h"
#include "base/util.h"
#include "io/paths.h"

static const char *reason(int e)
{
    switch (e) {
    case ENOENT: return "no such file";
    case EACCES: return "permission denied";
    case EISDIR: return "it is a folder, not a file";
    case EINVAL: return "it is not a regular file";
    case ENOTDIR: return "a part of the path is not a folder";
    case ELOOP: return "too many symbolic links";
    case ENAMETOOLONG: return "the path is too long";
    case ENOSPC: return "no space left on the device";
    case EROFS: return "the file system is read-only";
    case EFBIG: return "the file size limit (ulimit -f) is reached";
    case EXDEV: return "it leads outside the project folder (through a symbolic link)";
    default: return strerror(e);
    }
}

/* For ENOTDIR on root/rel: the first folder of rel that is not a folder
 * (malloc'd), or NULL. */
static char *file_in_path(const char *root, const char *rel)
{
    char *copy = cg_xstrdup(rel);
    for (char *slash = strchr(copy, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int fd = rootfd < 0 ? -1 : cg_open_beneath(rootfd, copy, O_RDONLY | O_NONBLOCK, 0);
        struct stat st;
        bool file = fd >= 0 && fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
        if (fd >= 0)
            close(fd);
        if (rootfd >= 0)
            close(rootfd);
        if (file)
            return copy;
        *slash = '/';
    }
    free(copy);
    return NULL;
}

/* "cannot VERB 'rel': why" for errno e, at ref (or without a position). */
static int open_error(const char *root, const char *rel, const cg_pos *ref, const char *verb, int e,
                      cg_error *err)
{
    char *file = e == ENOTDIR ? file_in_path(root, rel) : NULL;
    int rc;
    if (file && ref)
        rc = cg_error_at(err, ref, "cannot %s '%s': '%s' is a file, not a folder", verb, rel, file);
    else if (file)
        rc = cg_error_plain(err, "cannot %s '%s': '%s' is a file, not a folder", verb, rel, file);
    else if (ref)
        rc = cg_error_at(err, ref, "cannot %s '%s': %s", verb, rel, reason(e));
    else
        rc = cg_error_plain(err, "cannot %s '%s': %s", verb, rel, reason(e));
    free(file);
    return rc;
}

/* The project folder, open (the descriptor every path is resolved beneath),
 * or -1 and errno. */
static int open_root(const char *root)
{
    return open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Checks that fd (opened with O_NONBLOCK, so never blocking on a FIFO) is a
 * regular file and makes it blocking; fails with EISDIR for a folder and
 * EINVAL for anything but a regular file, closing fd. */
static int regular(int fd)
{
    if (fd < 0)
        return -1;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if (fcntl(fd, F_SETFL, 0) != 0)
        e = errno;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

char *cg_realdir(const char *dir, cg_error *err)
{
    char *r = realpath(dir, NULL);
    if (!r) {
        cg_error_plain(err, "cannot use folder '%s': %s", dir, reason(errno));
        return NULL;
    }
    struct stat st;
    if (stat(r, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cg_error_plain(err, "'%s' is not a folder", dir);
        free(r);
        return NULL;
    }
    return r;
}

static int read_fd(int fd, size_t max, char **data, size_t *len)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    /* a regular file is read into one allocation of its size (a large
     * config is not copied from buffer to growing buffer) */
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= max)
        cg_strbuf_grow(&sb, (size_t)st.st_size + 1);
    for (;;) {
        if (sb.cap < sb.len + 2)
            cg_strbuf_grow(&sb, 65536);
        size_t room = sb.cap - sb.len - 1;
        ssize_t r = read(fd, sb.buf + sb.len, room < ((size_t)1 << 30) ? room : (size_t)1 << 30);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            cg_strbuf_release(&sb);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        sb.len += (size_t)r;
        sb.buf[sb.len] = '\0';
        if (sb.len > max) {
            cg_strbuf_release(&sb);
            errno = EFBIG;
            return -1;
        }
    }
    *data = cg_strbuf_detach(&sb, len);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* For a missing rel: " (did you mean 'DIR/NAME'?)" when a file of rel's
 * folder has a name close to rel's, else "" (malloc'd). */
static char *missing_hint(int rootfd, const char *rel)
{
    const char *slash = strrchr(rel, '/');
    const char *base = slash ? slash + 1 : rel;
    char *dir = slash ? cg_xstrndup(rel, (size_t)(slash - rel)) : cg_xstrdup(".");
    int dfd = cg_open_beneath(rootfd, *dir ? dir : ".", O_RDONLY | O_DIRECTORY, 0);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    cg_strbuf hint = CG_STRBUF_INIT;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        free(dir);
        return cg_xstrdup("");
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (cg_streq(e->d_name, ".") || cg_streq(e->d_name, ".."))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            names = cg_xrealloc(names, cap * sizeof *names);
        }
        names[n++] = cg_xstrdup(e->d_name);
    }
    closedir(d);
    /* readdir's order is the file system's: sort, so that ties break the same everywhere */
    qsort(names, n, sizeof *names, cmp_names);
    /* the stems of the files with rel's extension are compared, so that
     * 'tree.yml' is not taken for a typo of 't.yml' */
    const char *dot = strrchr(base, '.');
    size_t ext = dot ? strlen(dot) : 0;
    char *stem = cg_xstrndup(base, strlen(base) - ext);
    char **stems = cg_xcalloc(n + 1, sizeof *stems);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (len > ext && (!ext || cg_streq(names[i] + len - ext, dot)))
            stems[i] = cg_xstrndup(names[i], len - ext);
    }
    const char *best = cg_suggest(stem, (const char *const *)stems, n);
    for (size_t i = 0; best && i < n; i++)
        if (stems[i] == best)
            cg_strbuf_addf(&hint, " (did you mean '%s%s%s'?)", slash ? dir : "", slash ? "/" : "", names[i]);
    for (size_t i = 0; i < n; i++) {
        free(names[i]);
        free(stems[i]);
    }
    free(stems);
    free(stem);
    free(names);
    free(dir);
    return cg_strbuf_detach(&hint, NULL);
}

int cg_read_source(const char *root, const char *rel, const cg_pos *ref, size_t max,
                   char **data, size_t *len, bool missing_ok, cg_error *err)
{
    return cg_read_source_id(root, rel, ref, max, data, len, missing_ok, NULL, err);
}

int cg_read_source_id(const char *root, const char *rel, const cg_pos *ref, size_t max, char **data,
                      size_t *len, bool missing_ok, cg_file_id *id, cg_error *err)
{
    cg_file_id own;
    if (!id)
        id = &own;
    int rootfd = open_root(root);
    if (rootfd < 0)
        return open_error(root, rel, ref, "read", errno, err);
    /* resolved once, beneath the project: what is checked is what is read */
    int fd = regular(cg_open_beneath(rootfd, rel, O_RDONLY | O_NONBLOCK, 0));
    int rc = 0;
    if (fd < 0) {
        int e = errno;
        int l = e == ENOENT ? cg_open_beneath(rootfd, rel, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0) : -1;
        bool dangling = l < 0 && e == ENOENT && errno == ELOOP;
        if (l >= 0)
            close(l);
        if (e == ENOENT && missing_ok)
            rc = 1;
        else if (dangling)
            rc = cg_error_at(err, ref, "cannot read '%s': it is a symbolic link to a missing file", rel);
        else if (e == EXDEV)
            rc = cg_error_at(err, ref, "'%s' leads outside the project folder (through a symbolic link)", rel);
        else if (e == ENOENT && ref) {
            char *hint = missing_hint(rootfd, rel);
            rc = cg_error_at(err, ref, "cannot read '%s': %s%s", rel, reason(e), hint);
            free(hint);
        } else
            rc = open_error(root, rel, ref, "read", e, err);
        close(rootfd);
        return rc;
    }
    close(rootfd);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = open_error(root, rel, ref, "read", errno, err);
        close(fd);
        return rc;
    }
    if (id)
        *id = (cg_file_id){st.st_dev, st.st_ino};
    if ((size_t)st.st_size > max) {
        close(fd);
        return cg_error_at(err, ref, "'%s' is too large (%lld bytes; the limit is %zu)", rel,
                           (long long)st.st_size, max);
    }
    if (read_fd(fd, max, data, len) != 0) {
        int e = errno;
        close(fd);
        if (e == EFBIG)
            return cg_error_at(err, ref, "'%s' is too large (the limit is %zu bytes)", rel, max);
        return cg_error_at(err, ref, "cannot read '%s': %s", rel, reason(e));
    }
    close(fd);
    size_t marker = cg_conflict_marker_line(*data, *len);
    if (marker) {
        free(*data);
        *data = NULL;
        *len = 0;
        return cg_error_at(err, &(cg_pos){rel, (uint32_t)marker, 1},
                           "this file holds git's conflict markers (<<<<<<<, ||||||| or >>>>>>>): resolve the "
                           "conflict, then run ./regenerate.sh");
    }
    return 0;
}

/* Opens the folder of output rel beneath the project (creating the missing
 * ones when `create`), refusing one inside git's folder: the descriptor,
 * *base (rel's last component, in rel), or -1 after an error ("cannot VERB
 * 'rel': ..."); with !create, -2 and no error when a folder is missing. */
static int output_dir(int rootfd, const char *root, const char *rel, const cg_pos *ref, const char *verb,
                      bool create, const char **base, cg_error *err)
{
    const char *slash = strrchr(rel, '/');
    *base = slash ? slash + 1 : rel;
    char *dir = cg_xstrndup(rel, slash ? (size_t)(slash - rel) : 0);
    int fd = cg_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY, 0);
    /* mkdir -p, one folder at a time, each resolved beneath the project */
    for (char *p = dir; fd < 0 && errno == ENOENT && create;) {
        char *s = strchr(p, '/');
        if (s)
            *s = '\0';
        int d = cg_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY, 0);
        if (d < 0 && errno == ENOENT) {
            const char *last = strrchr(dir, '/');
            char *up = cg_xstrndup(dir, last ? (size_t)(last - dir) : 0);
            int u = cg_open_beneath(rootfd, up, O_RDONLY | O_DIRECTORY, 0);
            free(up);
            if (u >= 0 && mkdirat(u, last ? last + 1 : dir, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                close(u);
                cg_error_at(err, ref, "cannot create folder '%s': %s", dir, reason(e));
                free(dir);
                return -1;
            }
            if (u >= 0)
                close(u);
            d = cg_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY, 0);
        }
        if (s)
            *s = '/';
        if (d < 0 || !s) {
            fd = d;
            break;
        }
        close(d);
        p = s + 1;
    }
    if (fd < 0) {
        int e = errno;
        free(dir);
        if (e == ENOENT && !create)
            return -2;
        if (e == EXDEV)
            cg_error_at(err, ref, "cannot %s '%s': a folder on its path leads outside the project (a symbolic "
                        "link)", verb, rel);
        else
            open_error(root, rel, ref, verb, e, err);
        return -1;
    }
    char *git = NULL;
    int in_git = cg_dir_in_git(rootfd, fd, &git);
    if (in_git != 0) {
        if (in_git > 0)
            cg_error_at(err, ref, "cannot %s '%s': its folder is git's folder '%s'; cigen never reads or writes "
                        "there", verb, rel, git);
        else
            cg_error_at(err, ref, "cannot %s '%s': its folder cannot be placed in the project", verb, rel);
        free(git);
        free(dir);
        close(fd);
        return -1;
    }
    free(dir);
    return fd;
}

/* Opens an output for reading (never blocking on a FIFO): 0 and *fd, 1
 * when it is missing, -1 (the error said at ref) when it is not a regular
 * file or cannot be opened. */
static int output_open(const char *root, const char *rel, const cg_pos *ref, const char *verb, int *fd,
                   cg_error *err)
{
    int rootfd = open_root(root);
    if (rootfd < 0)
        return open_error(root, rel, ref, verb, errno, err);
    const char *base;
    int dir = output_dir(rootfd, root, rel, ref, verb, false, &base, err);
    close(rootfd);
    if (dir < 0)
        return dir == -2 ? 1 : -1;
    /* never through a link: an output is a regular file cigen wrote */
    *fd = regular(openat(dir, base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
    int e = errno;
    close(dir);
    if (*fd >= 0)
        return 0;
    if (e == ELOOP)
        return cg_error_at(err, ref, "cannot %s '%s': it is a symbolic link; cigen writes outputs as regular "
                           "files", verb, rel);
    return e == ENOENT ? 1 : open_error(root, rel, ref, verb, e, err);
}

int cg_read_output(const char *root, const char *rel, const cg_pos *ref, const char *verb, char **data,
                   size_t *len, cg_error *err)
{
    return cg_read_output_head(root, rel, ref, verb, 0, data, len, err);
}

int cg_map_output(const char *root, const char *rel, const cg_pos *ref, const char *verb, char **data,
                  size_t *len, bool *mapped, cg_error *err)
{
    *mapped = false;
    int fd;
    int rc = output_open(root, rel, ref, verb, &fd, err);
    if (rc != 0)
        return rc;
    struct stat st;
    long page = sysconf(_SC_PAGESIZE);
    /* a mapping ends in zeros up to its page's end: only when the file
     * does not fill its last page does the byte after it read as the NUL
     * a buffer read has there */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && page > 0 &&
        (uint64_t)st.st_size < ((uint64_t)1 << 34) && st.st_size % page != 0) {
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE; /* one pass over the page cache, not a fault per page */
#endif
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, flags, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            *data = m;
            *len = (size_t)st.st_size;
            *mapped = true;
            return 0;
        }
    }
    if (read_fd(fd, (size_t)1 << 34, data, len) != 0)
        rc = open_error(root, rel, ref, "read", errno, err);
    close(fd);
    return rc;
}

void cg_unmap_output(char *data, size_t len, bool mapped)
{
    if (mapped)
        munmap(data, len);
    else
        free(data);
}

int cg_read_output_head(const char *root, const char *rel, const cg_pos *ref, const char *verb, size_t max,
                        char **data, size_t *len, cg_error *err)
{
    int fd;
    int rc = output_open(root, rel, ref, verb, &fd, err);
    if (rc != 0) {
        /* missing, or an error said */
    } else if (max) {
        char *buf = cg_xmalloc(max + 1);
        size_t n = 0;
        while (n < max) {
            ssize_t r = read(fd, buf + n, max - n);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                if (r < 0)
                    rc = open_error(root, rel, ref, "read", errno, err);
                break;
            }
            n += (size_t)r;
        }
        buf[n] = '\0';
        if (rc == 0) {
            *data = buf;
            *len = n;
        } else {
            free(buf);
        }
        close(fd);
    } else {
        if (read_fd(fd, (size_t)1 << 34, data, len) != 0)
            rc = open_error(root, rel, ref, "read", errno, err);
        close(fd);
    }
    return rc;
}

int cg_output_matches(const char *root, const char *rel, const cg_pos *ref, const char *verb, const char *data,
                      size_t len, bool *same, cg_error *err)
{
    *same = false;
    int fd;
    int rc = output_open(root, rel, ref, verb, &fd, err);
    if (rc != 0)
        return rc;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = open_error(root, rel, ref, "read", errno, err);
    } else if ((size_t)st.st_size == len) {
        /* chunk by chunk: a large output is never held twice */
        enum { CHUNK = 1 << 20 };
        char *buf = cg_xmalloc(CHUNK);
        size_t off = 0;
        bool equal = true;
        while (equal) {
            ssize_t r = read(fd, buf, CHUNK);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                rc = open_error(root, rel, ref, "read", errno, err);
                break;
            }
            if (r == 0)
                break;
            equal = (size_t)r <= len - off && memcmp(buf, data + off, (size_t)r) == 0;
            off += (size_t)r;
        }
        *same = rc == 0 && equal && off == len;
        free(buf);
    }
    close(fd);
    return rc;
}

void cg_outputs_init(cg_outputs *o, const char *root)
{
    memset(o, 0, sizeof *o);
    o->root = root;
}

void cg_test_pause(const char *point)
{
    const char *p = getenv("CIGEN_TEST_PAUSE");
    if (p && cg_streq(p, point))
        raise(SIGSTOP);
}

/* A temporary file named tname ("...XXXXXX") in the folder open as dir,
 * created, open and flock'ed: another cigen's cg_remove_stale_temps() leaves
 * it alone while this one lives.  That one may have removed it between the
 * creation and flock: then make another. */
static int locked_temp(int dir, char *tname, mode_t mode)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t len = strlen(tname);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = cg_hash(&now, sizeof now) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)(uintptr_t)tname;
    for (int tries = 0; tries < 1000; tries++) {
        for (size_t i = len - 6; i < len; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            tname[i] = digits[(x >> 33) % (sizeof digits - 1)];
        }
        int fd = openat(dir, tname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0600);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return -1;
        struct stat a, b;
        if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && fstatat(dir, tname, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
            a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            return fd;
        close(fd);
    }
    errno = EEXIST;
    return -1;
}

/* The temporary file of an output: its index in o, or -1. */
static int outputs_open(cg_outputs *o, const char *rel, const cg_pos *ref, cg_error *err)
{
    int rootfd = open_root(o->root);
    if (rootfd < 0)
        return open_error(o->root, rel, ref, "write", errno, err);
    const char *base;
    int dir = output_dir(rootfd, o->root, rel, ref, "write", true, &base, err);
    close(rootfd);
    if (dir < 0)
        return -1;
    struct stat st;
    mode_t mode = 0;
    if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        const char *bad = S_ISDIR(st.st_mode) ? "is a folder, not a file" :
                          S_ISLNK(st.st_mode) ? "is a symbolic link; cigen writes outputs as regular files" :
                          !S_ISREG(st.st_mode) ? "is not a regular file" :
                          !(st.st_mode & S_IWUSR) ? "is read-only" : NULL;
        if (bad) {
            close(dir);
            return cg_error_at(err, ref, "cannot write '%s': it %s", rel, bad);
        }
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    cg_strbuf tmp = CG_STRBUF_INIT;
    cg_strbuf_addf(&tmp, ".%s.cigen-XXXXXX", base);
    char *tname = cg_strbuf_detach(&tmp, NULL);
    int fd = locked_temp(dir, tname, mode);
    if (fd < 0 || fchmod(fd, mode) != 0) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlinkat(dir, tname, 0);
        }
        close(dir);
        free(tname);
        return cg_error_at(err, ref, "cannot write '%s': %s", rel, reason(e));
    }
    cg_grow(&o->v, &o->cap, o->n + 1, sizeof *o->v);
    o->v[o->n] = (cg_staged){dir, cg_xstrdup(base), tname, cg_xstrdup(rel), fd, ref ? *ref : (cg_pos){0}, 0};
    return (int)o->n++;
}

static int outputs_append(cg_outputs *o, int i, const void *data, size_t len, cg_error *err)
{
    cg_staged *s = &o->v[i];
    const char *p = data;
    size_t left = len, half = len / 2;
    /* the test hook stops the first output halfway through its first write */
    bool pause = i == 0 && s->written == 0 && len > 0;
    while (left) {
        size_t chunk = left;
        if (pause && len - left < half)
            chunk = half - (len - left);
        ssize_t w = write(s->fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return cg_error_at(err, &s->ref, "cannot write '%s': %s", s->rel, reason(errno));
        }
        p += w;
        left -= (size_t)w;
        s->written += (size_t)w;
        if (pause && len - left >= half) {
            pause = false;
            cg_test_pause("write"); /* half of the first output is in its temporary file */
        }
    }
    return 0;
}

/* The bytes are on disk; the file stays open, and so locked, until it is
 * renamed into place (or removed). */
static int outputs_close(cg_outputs *o, int i, cg_error *err)
{
    cg_staged *s = &o->v[i];
    if (fsync(s->fd) != 0)
        return cg_error_at(err, &s->ref, "cannot write '%s': %s", s->rel, reason(errno));
    return 0;
}

int cg_outputs_stage(cg_outputs *o, const char *rel, const void *data, size_t len,
                     const cg_pos *ref, cg_error *err)
{
    int i = outputs_open(o, rel, ref, err);
    if (i < 0)
        return -1;
    if (outputs_append(o, i, data, len, err) != 0)
        return -1;
    return outputs_close(o, i, err);
}

void cg_outputs_remove(cg_outputs *o, const char *rel)
{
    cg_grow(&o->removals, &o->removals_cap, o->nremovals + 1, sizeof *o->removals);
    o->removals[o->nremovals++] = cg_xstrdup(rel);
}

int cg_outputs_commit(cg_outputs *o, cg_error *err)
{
    for (size_t i = 0; i < o->n; i++) {
        cg_staged *s = &o->v[i];
        if (renameat(s->dir, s->tmp, s->dir, s->name) != 0)
            return cg_error_plain(err, "cannot replace '%s': %s", s->rel, reason(errno));
        free(s->tmp);
        s->tmp = NULL;
        close(s->fd); /* fsync'ed already: nothing left to report */
        s->fd = -1;
        if (i == 0)
            cg_test_pause("commit"); /* the first output is new, the others still old */
    }
    int rootfd = o->nremovals ? open_root(o->root) : -1;
    for (size_t i = 0; i < o->nremovals; i++) {
        const char *base;
        cg_error e2;
        cg_error_init(&e2);
        int dir = rootfd < 0 ? -1 : output_dir(rootfd, o->root, o->removals[i], NULL, "remove", false, &base, &e2);
        cg_error_release(&e2);
        int r = dir < 0 ? 0 : unlinkat(dir, base, 0);
        int e = errno;
        if (dir >= 0)
            close(dir);
        if (r != 0 && e != ENOENT) {
            if (rootfd >= 0)
                close(rootfd);
            return cg_error_plain(err, "cannot remove stale output '%s': %s", o->removals[i], reason(e));
        }
    }
    if (rootfd >= 0)
        close(rootfd);
    return 0;
}

void cg_outputs_release(cg_outputs *o)
{
    for (size_t i = 0; i < o->n; i++) {
        cg_staged *s = &o->v[i];
        if (s->fd >= 0)
            close(s->fd);
        if (s->tmp) {
            unlinkat(s->dir, s->tmp, 0);
            free(s->tmp);
        }
        close(s->dir);
        free(s->name);
        free(s->rel);
    }
    free(o->v);
    for (size_t i = 0; i < o->nremovals; i++)
        free(o->removals[i]);
    free(o->removals);
    memset(o, 0, sizeof *o);
}

static bool is_temp_name(const char *name)
{
    size_t n = strlen(name);
    const char *mark = strstr(name, ".cigen-");
    return name[0] == '.' && mark && n >= 14 && (size_t)(name + n - mark) == 13;
}

/* Folder root/dir, resolved beneath root, open for listing (NULL: missing
 * or not readable); *dfd its descriptor. */
static DIR *open_dir_beneath(const char *root, const char *dir, int *dfd)
{
    int rootfd = open_root(root);
    *dfd = rootfd < 0 ? -1 : cg_open_beneath(rootfd, dir && *dir ? dir : ".", O_RDONLY | O_DIRECTORY, 0);
    if (rootfd >= 0)
        close(rootfd);
    DIR *d = *dfd < 0 ? NULL : fdopendir(*dfd);
    if (!d && *dfd >= 0)
        close(*dfd);
    return d;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cg_list_names(const char *root, const char *dir, const char *suffix, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    int dfd;
    DIR *d = open_dir_beneath(root, dir, &dfd);
    if (!d)
        return 1;
    size_t cap = 0, slen = strlen(suffix);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= slen || strcmp(e->d_name + len - slen, suffix) != 0)
            continue;
        cg_grow(names, &cap, *n + 1, sizeof **names);
        (*names)[(*n)++] = cg_xstrdup(e->d_name);
    }
    closedir(d);
    /* sorted: nothing may depend on the folder's order */
    if (*n > 1)
        qsort(*names, *n, sizeof **names, by_name);
    return 0;
}

void cg_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void cg_remove_stale_temps(const char *root, const char *dir)
{
    int dfd;
    DIR *d = open_dir_beneath(root, dir, &dfd);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_temp_name(e->d_name))
            continue;
        /* a live cigen holds a lock on its temporary files */
        int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dfd, e->d_name, 0);
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
}
