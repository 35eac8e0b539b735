#include "io/fsio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

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
    default: return strerror(e);
    }
}

static char *join(const char *root, const char *rel);

/* For ENOTDIR on root/rel: the first folder of rel that is not a folder
 * (malloc'd), or NULL. */
static char *file_in_path(const char *root, const char *rel)
{
    char *copy = cg_xstrdup(rel);
    for (char *slash = strchr(copy, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        char *dir = join(root, copy);
        struct stat st;
        bool file = stat(dir, &st) == 0 && !S_ISDIR(st.st_mode);
        free(dir);
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

/* Opens a file for reading without blocking on a FIFO; fails with EISDIR
 * for a folder and EINVAL for anything but a regular file. */
static int open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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

static char *join(const char *root, const char *rel)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_adds(&sb, root);
    if (sb.len && sb.buf[sb.len - 1] != '/')
        cg_strbuf_addc(&sb, '/');
    cg_strbuf_adds(&sb, rel);
    return cg_strbuf_detach(&sb, NULL);
}

static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return true;
    return strncmp(root, path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static int read_fd(int fd, size_t max, char **data, size_t *len)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    for (;;) {
        cg_strbuf_grow(&sb, 65536);
        ssize_t r = read(fd, sb.buf + sb.len, 65536);
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

/* Whether the line at s (n bytes to the end of the text) is one of git's
 * conflict markers: seven '<', '|' or '>' at its start, then a space or
 * its end. */
static bool is_marker(const char *s, size_t n)
{
    if (n < 7 || (s[0] != '<' && s[0] != '>' && s[0] != '|'))
        return false;
    for (int i = 1; i < 7; i++)
        if (s[i] != s[0])
            return false;
    return n == 7 || s[7] == ' ' || s[7] == '\n' || s[7] == '\r';
}

/* The line (1-based) of the first of git's conflict markers in text, or 0. */
static size_t marker_line(const char *text, size_t len)
{
    size_t line = 1;
    for (size_t i = 0; i < len; line++) {
        if (is_marker(text + i, len - i))
            return line;
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break;
        i = (size_t)(nl - text) + 1;
    }
    return 0;
}

int cg_read_source(const char *root, const char *rel, const cg_pos *ref, size_t max,
                   char **data, size_t *len, bool missing_ok, cg_error *err)
{
    char *path = join(root, rel);
    char *real = realpath(path, NULL);
    int rc = 0;
    if (!real) {
        int e = errno;
        struct stat st;
        if (e == ENOENT && missing_ok)
            rc = 1;
        else if (e == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            rc = cg_error_at(err, ref, "cannot read '%s': it is a symbolic link to a missing file", rel);
        else
            rc = open_error(root, rel, ref, "read", e, err);
        goto out;
    }
    if (!inside(root, real)) {
        rc = cg_error_at(err, ref, "'%s' leads outside the project folder (through a symbolic link)", rel);
        goto out;
    }
    int fd = open_regular(real);
    if (fd < 0) {
        rc = open_error(root, rel, ref, "read", errno, err);
        goto out;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = open_error(root, rel, ref, "read", errno, err);
        close(fd);
        goto out;
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        rc = cg_error_at(err, ref, "'%s' is too large (%lld bytes; the limit is %zu)", rel,
                         (long long)st.st_size, max);
        goto out;
    }
    if (read_fd(fd, max, data, len) != 0) {
        int e = errno;
        close(fd);
        if (e == EFBIG)
            rc = cg_error_at(err, ref, "'%s' is too large (the limit is %zu bytes)", rel, max);
        else
            rc = cg_error_at(err, ref, "cannot read '%s': %s", rel, reason(e));
        goto out;
    }
    close(fd);
    size_t marker = marker_line(*data, *len);
    if (marker) {
        free(*data);
        *data = NULL;
        *len = 0;
        rc = cg_error_at(err, &(cg_pos){rel, (uint32_t)marker, 1},
                         "this file holds git's conflict markers (<<<<<<<, =======, >>>>>>>): resolve the "
                         "conflict, then run ./regenerate.sh");
    }
out:
    free(path);
    free(real);
    return rc;
}

int cg_output_open(const char *root, const char *rel, const cg_pos *ref, const char *verb, int *fd,
                   cg_error *err)
{
    char *path = join(root, rel);
    *fd = open_regular(path);
    int e = errno;
    free(path);
    if (*fd >= 0)
        return 0;
    return e == ENOENT ? 1 : open_error(root, rel, ref, verb, e, err);
}

int cg_read_output(const char *root, const char *rel, const cg_pos *ref, const char *verb, char **data,
                   size_t *len, cg_error *err)
{
    return cg_read_output_head(root, rel, ref, verb, 0, data, len, err);
}

int cg_read_output_head(const char *root, const char *rel, const cg_pos *ref, const char *verb, size_t max,
                        char **data, size_t *len, cg_error *err)
{
    int fd;
    int rc = cg_output_open(root, rel, ref, verb, &fd, err);
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
    int rc = cg_output_open(root, rel, ref, verb, &fd, err);
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

/* mkdir -p for the folders of rel, refusing to leave the project. */
static int make_dirs(const char *root, const char *rel, const cg_pos *ref, cg_error *err)
{
    char *copy = cg_xstrdup(rel);
    int rc = 0;
    for (char *slash = strchr(copy, '/'); slash && rc == 0; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        char *dir = join(root, copy);
        struct stat st;
        if (lstat(dir, &st) != 0) {
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                rc = cg_error_at(err, ref, "cannot create folder '%s': %s", copy, reason(errno));
        } else if (S_ISLNK(st.st_mode)) {
            char *real = realpath(dir, NULL);
            if (!real || !inside(root, real))
                rc = cg_error_at(err, ref, "folder '%s' leads outside the project (a symbolic link)", copy);
            free(real);
        } else if (!S_ISDIR(st.st_mode)) {
            rc = cg_error_at(err, ref, "cannot write '%s': '%s' is a file, not a folder", rel, copy);
        }
        free(dir);
        *slash = '/';
    }
    free(copy);
    return rc;
}

static void test_pause(const char *point)
{
    const char *p = getenv("CIGEN_TEST_PAUSE");
    if (p && cg_streq(p, point))
        raise(SIGSTOP);
}

/* A temporary file from template tname (mkstemp), open and flock'ed: another
 * cigen's cg_remove_stale_temps() leaves it alone while this one lives.  That
 * one may have removed it between mkstemp and flock: then make another. */
static int locked_temp(char *tname)
{
    size_t len = strlen(tname);
    for (int tries = 0; tries < 100; tries++) {
        memcpy(tname + len - 6, "XXXXXX", 6);
        int fd = mkstemp(tname);
        if (fd < 0)
            return -1;
        struct stat a, b;
        if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && lstat(tname, &b) == 0 && a.st_ino == b.st_ino &&
            a.st_dev == b.st_dev)
            return fd;
        close(fd);
    }
    errno = EEXIST;
    return -1;
}

int cg_outputs_open(cg_outputs *o, const char *rel, const cg_pos *ref, cg_error *err)
{
    if (make_dirs(o->root, rel, ref, err) != 0)
        return -1;
    char *path = join(o->root, rel);
    struct stat st;
    mode_t mode = 0;
    if (lstat(path, &st) == 0) {
        const char *bad = S_ISDIR(st.st_mode) ? "is a folder, not a file" :
                          S_ISLNK(st.st_mode) ? "is a symbolic link; cigen writes outputs as regular files" :
                          !S_ISREG(st.st_mode) ? "is not a regular file" :
                          !(st.st_mode & S_IWUSR) ? "is read-only" : NULL;
        if (bad) {
            free(path);
            return cg_error_at(err, ref, "cannot write '%s': it %s", rel, bad);
        }
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    const char *slash = strrchr(path, '/');
    cg_strbuf tmp = CG_STRBUF_INIT;
    cg_strbuf_add(&tmp, path, (size_t)(slash - path) + 1);
    cg_strbuf_addf(&tmp, ".%s.cigen-XXXXXX", slash + 1);
    char *tname = cg_strbuf_detach(&tmp, NULL);
    int fd = locked_temp(tname);
    if (fd < 0) {
        int e = errno;
        free(path);
        free(tname);
        return cg_error_at(err, ref, "cannot write '%s': %s", rel, reason(e));
    }
    if (fchmod(fd, mode) != 0) {
        int e = errno;
        close(fd);
        unlink(tname);
        free(path);
        free(tname);
        return cg_error_at(err, ref, "cannot write '%s': %s", rel, reason(e));
    }
    cg_grow(&o->v, &o->cap, o->n + 1, sizeof *o->v);
    o->v[o->n] = (cg_staged){path, tname, cg_xstrdup(rel), fd, ref ? *ref : (cg_pos){0}, 0};
    return (int)o->n++;
}

int cg_outputs_append(cg_outputs *o, int i, const void *data, size_t len, cg_error *err)
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
            test_pause("write"); /* half of the first output is in its temporary file */
        }
    }
    return 0;
}

int cg_outputs_patch(cg_outputs *o, int i, const void *data, size_t len, cg_error *err)
{
    cg_staged *s = &o->v[i];
    const char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t w = pwrite(s->fd, p + done, len - done, (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return cg_error_at(err, &s->ref, "cannot write '%s': %s", s->rel, reason(errno));
        done += (size_t)w;
    }
    return 0;
}

/* The bytes are on disk; the file stays open, and so locked, until it is
 * renamed into place (or removed). */
int cg_outputs_close(cg_outputs *o, int i, cg_error *err)
{
    cg_staged *s = &o->v[i];
    if (fsync(s->fd) != 0)
        return cg_error_at(err, &s->ref, "cannot write '%s': %s", s->rel, reason(errno));
    return 0;
}

int cg_outputs_stage(cg_outputs *o, const char *rel, const void *data, size_t len,
                     const cg_pos *ref, cg_error *err)
{
    int i = cg_outputs_open(o, rel, ref, err);
    if (i < 0)
        return -1;
    if (cg_outputs_append(o, i, data, len, err) != 0)
        return -1;
    return cg_outputs_close(o, i, err);
}

void cg_outputs_remove(cg_outputs *o, const char *rel)
{
    cg_grow(&o->removals, &o->removals_cap, o->nremovals + 1, sizeof *o->removals);
    o->removals[o->nremovals++] = join(o->root, rel);
}

int cg_outputs_commit(cg_outputs *o, cg_error *err)
{
    for (size_t i = 0; i < o->n; i++) {
        if (rename(o->v[i].tmp, o->v[i].path) != 0)
            return cg_error_plain(err, "cannot replace '%s': %s", o->v[i].rel, reason(errno));
        free(o->v[i].tmp);
        o->v[i].tmp = NULL;
        close(o->v[i].fd); /* fsync'ed already: nothing left to report */
        o->v[i].fd = -1;
        if (i == 0)
            test_pause("commit"); /* the first output is new, the others still old */
    }
    for (size_t i = 0; i < o->nremovals; i++)
        if (unlink(o->removals[i]) != 0 && errno != ENOENT)
            return cg_error_plain(err, "cannot remove stale output '%s': %s", o->removals[i], reason(errno));
    return 0;
}

void cg_outputs_release(cg_outputs *o)
{
    for (size_t i = 0; i < o->n; i++) {
        if (o->v[i].fd >= 0)
            close(o->v[i].fd);
        if (o->v[i].tmp) {
            unlink(o->v[i].tmp);
            free(o->v[i].tmp);
        }
        free(o->v[i].path);
        free(o->v[i].rel);
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

void cg_remove_stale_temps(const char *root, const char *dir)
{
    char *path = join(root, dir && *dir ? dir : ".");
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!is_temp_name(e->d_name))
                continue;
            char *f = join(path, e->d_name);
            /* a live cigen holds a lock on its temporary files */
            int fd = open(f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
                unlink(f);
            if (fd >= 0)
                close(fd);
            free(f);
        }
        closedir(d);
    }
    free(path);
}
