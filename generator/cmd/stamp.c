/* stamp — what a check already verified (stamp.h).
 *
 * The stamp file, one line each (words %XX-escaped: no blank, no control
 * byte, no '%'):
 *
 *   cigen-stamp 3
 *   binary HEX yaml=V jansson=V nettle=V   the cigen that checked, and its libraries
 *   key HEX                                the folder, manifest and options
 *   mac HEX                                this stamp's random key for the outputs' MACs
 *   source STATUS MAX ALIAS DIGEST REL     each source read, in order
 *   output STATUS ALIAS MAC REL            each output and diagram file
 *   listing DIGEST DIR                     the diagrams folder's .dot names
 *   message check TEXT                     what the check printed
 *   message generate TEXT                  what generate prints (when it
 *                                          would print nothing else)
 *   end
 *
 * STATUS 0 read, 1 missing; ALIAS the index of the first file read that is
 * the same file (a link), or its own; DIGEST "-" for a missing file.
 * A source's DIGEST is its SHA-256.  An output's MAC is a UMAC-128 under
 * the stamp's key, with a nonce drawn from its name: a config of hundreds
 * of megabytes is verified at close to the cost of reading it (SHA-256 took
 * ten times as long), and no one without the (private) stamp can make a
 * change that keeps it.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "cmd/stamp.h"

#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <nettle/version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "base/alloc.h"
#include "base/diag.h"
#include "base/digest.h"
#include "io/fsio.h"

typedef struct cg_stamp_ids {
    cg_file_id *v;
    size_t n, cap;
} cg_stamp_ids;

/* the index of the first identity equal to id, after adding it */
static size_t alias_of(cg_stamp_ids *ids, const cg_file_id *id)
{
    size_t k = 0;
    while (k < ids->n && !(ids->v[k].dev == id->dev && ids->v[k].ino == id->ino))
        k++;
    cg_grow(&ids->v, &ids->cap, ids->n + 1, sizeof *ids->v);
    ids->v[ids->n++] = *id;
    return k;
}

/* a word of a stamp line: %XX for blanks, controls, '%' and DEL */
static void put_word(cg_strbuf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == '%' || c == 0x7f)
            cg_strbuf_addf(out, "%%%02X", c);
        else
            cg_strbuf_addc(out, (char)c);
    }
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes the next word of *p (up to a blank or the end) into out. */
static bool get_word(char **p, cg_strbuf *out)
{
    cg_strbuf_reset(out);
    char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s)
        return false;
    for (; *s && *s != ' '; s++) {
        if (*s != '%') {
            cg_strbuf_addc(out, *s);
            continue;
        }
        int h = hexval(s[1]), l = h < 0 ? -1 : hexval(s[2]);
        if (l < 0)
            return false;
        cg_strbuf_addc(out, (char)(h * 16 + l));
        s += 2;
    }
    *p = s;
    return true;
}

static void digest_hex(const void *data, size_t n, char hex[65])
{
    cg_sha256_hex(data, n, hex, 32);
}

/* The build IDs of the program and of every library loaded (the linker's
 * digest of each linked file, `-Wl,--build-id`), read from their notes:
 * nothing to read from disk.  `missing` counts the objects without one. */
typedef struct build_ids {
    cg_strbuf ids;
    int missing;
    bool first;
} build_ids;

static int add_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    build_ids *b = ctx;
    bool program = !b->first;
    b->first = true;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
            const char *name = p + sizeof *nh;
            const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                (const char *)desc + nh->n_descsz <= end && nh->n_descsz >= 16) {
                char hex[2 * 64 + 1];
                cg_hex(desc, nh->n_descsz > 64 ? 64 : nh->n_descsz, hex);
                cg_strbuf_addf(&b->ids, "%s%s", b->ids.len ? "," : "build-id:", hex);
                return 0;
            }
            p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    /* the program may lack one (then its file is hashed); a library may
     * not (the kernel's vDSO, unnamed, aside) */
    if (program)
        cg_strbuf_addf(&b->ids, "%s", b->ids.len ? ",-" : "build-id:-");
    else if (info->dlpi_name && *info->dlpi_name && !strstr(info->dlpi_name, "vdso"))
        b->missing++;
    return 0;
}

/* Which cigen runs, exactly: the build IDs of the program and its loaded
 * libraries (the program's file hashed when it has none), and the
 * versions of the libraries that parse and print (computed once).  NULL:
 * it cannot be told (a library without a build ID). */
static const char *binary_line(void)
{
    static char *line;
    static bool tried;
    if (tried)
        return line;
    tried = true;
    build_ids b = {CG_STRBUF_INIT, 0, false};
    dl_iterate_phdr(add_build_id, &b);
    if (b.missing || !b.ids.len) {
        cg_strbuf_release(&b.ids);
        return NULL;
    }
    if (strncmp(b.ids.buf, "build-id:-", 10) == 0) {
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cg_strbuf_release(&b.ids);
            return NULL;
        }
        cg_sha256 s;
        cg_sha256_init(&s);
        char buf[1 << 16];
        ssize_t r;
        while ((r = read(fd, buf, sizeof buf)) > 0)
            cg_sha256_update(&s, buf, (size_t)r);
        close(fd);
        if (r < 0) {
            cg_strbuf_release(&b.ids);
            return NULL;
        }
        unsigned char d[32];
        char hex[65];
        cg_sha256_final(&s, d);
        cg_hex(d, 32, hex);
        cg_strbuf_addf(&b.ids, " sha256:%s", hex);
    }
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_adds(&sb, "binary ");
    put_word(&sb, b.ids.buf, b.ids.len);
    cg_strbuf_release(&b.ids);
    cg_strbuf_adds(&sb, " yaml=");
    const char *yv = yaml_get_version_string();
    put_word(&sb, yv, strlen(yv));
    cg_strbuf_adds(&sb, " jansson=");
    const char *jv = jansson_version_str();
    put_word(&sb, jv, strlen(jv));
    cg_strbuf_addf(&sb, " nettle=%d.%d", nettle_version_major(), nettle_version_minor());
    line = cg_strbuf_detach(&sb, NULL);
    return line;
}

/* $CIGEN_CACHE_DIR, else $XDG_CACHE_HOME/cigen, else ~/.cache/cigen. */
static char *cache_dir(cg_strbuf *why)
{
    const char *env = getenv("CIGEN_CACHE_DIR");
    if (env) {
        if (!*env || strcmp(env, "off") == 0 || env[0] != '/') {
            cg_strbuf_adds(why, env[0] && env[0] != '/' && strcmp(env, "off") != 0
                                    ? "CIGEN_CACHE_DIR is not an absolute path: stamps are off"
                                    : "CIGEN_CACHE_DIR is off");
            return NULL;
        }
        return cg_xstrdup(env);
    }
    cg_strbuf sb = CG_STRBUF_INIT;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        cg_strbuf_addf(&sb, "%s/cigen", xdg);
    else if (home && home[0] == '/')
        cg_strbuf_addf(&sb, "%s/.cache/cigen", home);
    else {
        cg_strbuf_adds(why, "no $HOME or $XDG_CACHE_HOME for the stamps");
        return NULL;
    }
    return cg_strbuf_detach(&sb, NULL);
}

void cg_stamp_init(cg_stamp *s, const char *dir, const char *manifest, const char *options, cg_strbuf *why)
{
    memset(s, 0, sizeof *s);
    s->ids = cg_xcalloc(1, sizeof *s->ids);
    if (!(s->dir = cache_dir(why)))
        return;
    if (!binary_line()) {
        cg_strbuf_adds(why, "which cigen runs cannot be told (a library without a build ID, or no /proc/self/exe)");
        free(s->dir);
        s->dir = NULL;
        return;
    }
    cg_error err;
    cg_error_init(&err);
    char *root = cg_realdir(dir ? dir : ".", &err);
    cg_error_release(&err);
    if (!root) {
        free(s->dir);
        s->dir = NULL;
        return;
    }
    /* the key: where the project is, which manifest, which options */
    cg_strbuf key = CG_STRBUF_INIT;
    cg_strbuf_addf(&key, "%s", root);
    cg_strbuf_addc(&key, '\0');
    cg_strbuf_adds(&key, manifest ? manifest : "cigen.yml");
    cg_strbuf_addc(&key, '\0');
    cg_strbuf_adds(&key, options);
    char hex[65];
    digest_hex(key.buf, key.len, hex);
    cg_strbuf_release(&key);
    s->real = root;
    cg_strbuf path = CG_STRBUF_INIT;
    cg_strbuf_addf(&path, "%s/%.40s.stamp", s->dir, hex);
    s->path = cg_strbuf_detach(&path, NULL);
}

void cg_stamp_release(cg_stamp *s)
{
    cg_stamp_stop(s);
    free(s->dir);
    free(s->path);
    free(s->real);
    cg_strbuf_release(&s->log);
    for (size_t i = 0; i < s->ndirs; i++)
        free(s->dirs[i]);
    free(s->dirs);
    if (s->ids)
        free(s->ids->v);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

static void key_line(const cg_stamp *s, cg_strbuf *out)
{
    /* the file's name is the key's digest: the line guards against a
     * stamp copied under another name */
    const char *slash = strrchr(s->path, '/');
    cg_strbuf_addf(out, "key %.40s", slash ? slash + 1 : s->path);
}

static void on_source(void *ctx, const char *root, const char *rel, size_t max, int status, const char *data,
                      size_t len, const cg_file_id *id)
{
    cg_stamp *s = ctx;
    if (status < 0 || strcmp(root, s->real) != 0) {
        s->unusable = true;
        return;
    }
    char hex[65] = "-";
    if (status == 0)
        digest_hex(data, len, hex);
    size_t alias = status == 0 ? alias_of(s->ids, id) : (size_t)-1;
    cg_strbuf_addf(&s->log, "source %d %zu %zd %s ", status, max, status == 0 ? (ssize_t)alias : (ssize_t)-1, hex);
    put_word(&s->log, rel, strlen(rel));
    cg_strbuf_addc(&s->log, '\n');
    s->nread++;
}

void cg_stamp_watch(cg_stamp *s)
{
    if (!s->dir)
        return;
    s->watching = true;
    cg_watch_sources(on_source, s);
}

void cg_stamp_stop(cg_stamp *s)
{
    if (s->watching)
        cg_watch_sources(NULL, NULL);
    s->watching = false;
}

/* What an output's bytes must be, checked as they are hashed (NULL: any). */
typedef struct expectation {
    const cg_stamp_output *out;      /* produced: its bytes or its header and body digest */
    bool (*owned)(void *ctx, const char *data, size_t len); /* not produced: stale if owned */
    void *ctx;
    size_t at;                       /* bytes seen */
    bool same;
    cg_sha256 body;                  /* a streamed config's body */
    char head[4096];                 /* a file not produced: its first bytes */
    size_t head_len;
} expectation;

static void expect_bytes(expectation *x, const char *buf, size_t n)
{
    const cg_stamp_output *o = x->out;
    size_t at = x->at;
    x->at += n;
    if (!o) {
        size_t k = n < sizeof x->head - x->head_len ? n : sizeof x->head - x->head_len;
        memcpy(x->head + x->head_len, buf, k);
        x->head_len += k;
        return;
    }
    if (!x->same)
        return;
    if (o->data) {
        x->same = at + n <= o->len && memcmp(o->data + at, buf, n) == 0;
        return;
    }
    /* a streamed config: its header byte for byte, then its body hashed */
    size_t h = at < o->head_len ? (o->head_len - at < n ? o->head_len - at : n) : 0;
    if (h && memcmp(o->head + at, buf, h) != 0)
        x->same = false;
    cg_sha256_update(&x->body, buf + h, n - h);
}

static bool expect_met(expectation *x)
{
    const cg_stamp_output *o = x->out;
    if (!o)
        return !x->owned || !x->owned(x->ctx, x->head, x->head_len);
    if (!x->same)
        return false;
    if (o->data)
        return x->at == o->len;
    unsigned char d[32];
    char hex[65];
    cg_sha256_final(&x->body, d);
    cg_hex(d, 32, hex);
    return x->at >= o->head_len && strncmp(hex, o->body_digest, 40) == 0;
}

/* An output's state: 0 and its digest and identity, 1 missing, -1 it
 * cannot be read as an output (a link, a folder, an error) or is not what
 * x expects. */
enum { MAC_KEY = 16 };

/* An output's MAC: its nonce is its name's digest, as one key signs them all */
static void mac_start(cg_fastmac *m, const unsigned char key[MAC_KEY], const char *rel)
{
    cg_sha256 sh;
    unsigned char d[32];
    cg_sha256_init(&sh);
    cg_sha256_update(&sh, rel, strlen(rel));
    cg_sha256_final(&sh, d);
    cg_fastmac_init(m, key, d);
}

static int output_state(const char *root, const char *rel, const unsigned char key[MAC_KEY], char hex[65],
                        cg_file_id *id, expectation *x)
{
    cg_error err;
    cg_error_init(&err);
    int fd;
    int rc = cg_output_open(root, rel, NULL, "read", &fd, &err);
    cg_error_release(&err);
    strcpy(hex, "-");
    if (rc != 0)
        return rc == 1 && x && x->out ? -1 : rc; /* a produced output is there */
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    *id = (cg_file_id){st.st_dev, st.st_ino};
    cg_fastmac mac;
    mac_start(&mac, key, rel);
    /* read a core's cache at a time: the bytes copied are hashed before
     * they leave it (1 MiB at a time took twice as long at 100k jobs) */
    size_t cap = 128 << 10;
    char *buf = cg_xmalloc(cap);
    ssize_t r;
    while ((r = read(fd, buf, cap)) > 0) {
        cg_fastmac_update(&mac, buf, (size_t)r);
        if (x)
            expect_bytes(x, buf, (size_t)r);
    }
    free(buf);
    close(fd);
    if (r < 0 || (x && !expect_met(x)))
        return -1;
    unsigned char d[16];
    cg_fastmac_final(&mac, d);
    cg_hex(d, 16, hex);
    return 0;
}

/* The .dot names in root/dir, sorted, one a line: their digest ("-" when
 * the folder is missing); the names themselves in *names if asked. */
static void listing(const char *root, const char *dir, char hex[65], char ***names, size_t *n)
{
    char **v;
    size_t nv;
    int rc = cg_list_names(root, dir, ".dot", &v, &nv);
    cg_strbuf all = CG_STRBUF_INIT;
    for (size_t i = 0; i < nv; i++) {
        cg_strbuf_adds(&all, v[i]);
        cg_strbuf_addc(&all, '\n');
    }
    if (rc == 0)
        digest_hex(all.buf ? all.buf : "", all.len, hex);
    else
        strcpy(hex, "-");
    cg_strbuf_release(&all);
    if (names) {
        *names = v;
        *n = nv;
    } else {
        cg_free_names(v, nv);
    }
}

static void output_line(cg_strbuf *out, cg_stamp_ids *ids, const char *root, const char *rel,
                        const unsigned char key[MAC_KEY], expectation *x, bool *ok)
{
    char hex[65];
    cg_file_id id;
    int st = output_state(root, rel, key, hex, &id, x);
    if (st < 0) {
        *ok = false;
        return;
    }
    cg_strbuf_addf(out, "output %d %zd %s ", st, st == 0 ? (ssize_t)alias_of(ids, &id) : (ssize_t)-1, hex);
    put_word(out, rel, strlen(rel));
    cg_strbuf_addc(out, '\n');
}

enum { STAMP_MAX_BYTES = 64 << 20 };

static bool private_to_me(const struct stat *st)
{
    return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The stamps' folder, open: the folder itself (its last component never a
 * link), the user's own and writable by no one else; or -1. */
static int stamp_dir(const cg_stamp *s)
{
    const char *slash = strrchr(s->dir, '/');
    char *parent = cg_xstrndup(s->dir, slash && slash != s->dir ? (size_t)(slash - s->dir) : 1);
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(parent);
    int fd = pfd < 0 ? -1 : openat(pfd, slash ? slash + 1 : s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (pfd >= 0)
        close(pfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !private_to_me(&st))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* mkdir -p, private: the stamps say what this user's checks verified */
static bool make_dirs(const char *dir)
{
    char *p = cg_xstrdup(dir);
    for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            free(p);
            return false;
        }
        *slash = '/';
    }
    bool ok = mkdir(p, 0700) == 0 || errno == EEXIST;
    free(p);
    return ok;
}

void cg_stamp_store(cg_stamp *s, const char *root, const cg_stamp_output *outputs, size_t noutputs,
                    const char *diagrams, bool (*owned)(void *ctx, const char *data, size_t len), void *ctx,
                    const char *check_line, const char *generate_line)
{
    bool watched = s->watching;
    cg_stamp_stop(s);
    if (!s->dir || !watched || s->unusable || strcmp(root, s->real) != 0)
        return;
    unsigned char key[MAC_KEY];
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
        return; /* no key, no stamp */
    cg_test_pause("stamp"); /* the outputs were compared; a test may change them now */
    cg_strbuf text = CG_STRBUF_INIT;
    cg_strbuf_addf(&text, "cigen-stamp 3\n%s\n", binary_line());
    key_line(s, &text);
    char hexkey[2 * MAC_KEY + 1];
    cg_hex(key, sizeof key, hexkey);
    cg_strbuf_addf(&text, "\nmac %s\n", hexkey);
    cg_strbuf_add(&text, s->log.buf ? s->log.buf : "", s->log.len);
    bool ok = true;
    /* each output still the bytes the check compared: what is recorded is
     * what was verified, whatever changed on disk since */
    for (size_t i = 0; i < noutputs && ok; i++) {
        expectation x = {.out = &outputs[i], .same = true};
        cg_sha256_init(&x.body);
        output_line(&text, s->ids, root, outputs[i].rel, key, &x, &ok);
    }
    if (diagrams && ok) {
        char hex[65];
        char **names;
        size_t n;
        listing(root, diagrams, hex, &names, &n);
        /* every .dot there: one cigen made and no longer produces is stale */
        for (size_t i = 0; i < n && ok; i++) {
            cg_strbuf rel = CG_STRBUF_INIT;
            cg_strbuf_addf(&rel, "%s/%s", diagrams, names[i]);
            bool produced = false;
            for (size_t k = 0; k < noutputs && !produced; k++)
                produced = strcmp(outputs[k].rel, rel.buf) == 0;
            expectation x = {.owned = owned, .ctx = ctx};
            if (!produced)
                output_line(&text, s->ids, root, rel.buf, key, &x, &ok);
            cg_strbuf_release(&rel);
        }
        cg_free_names(names, n);
        cg_strbuf_adds(&text, "listing ");
        cg_strbuf_adds(&text, hex);
        cg_strbuf_addc(&text, ' ');
        put_word(&text, diagrams, strlen(diagrams));
        cg_strbuf_addc(&text, '\n');
    }
    cg_strbuf_adds(&text, "message check ");
    put_word(&text, check_line, strlen(check_line));
    if (generate_line) {
        cg_strbuf_adds(&text, "\nmessage generate ");
        put_word(&text, generate_line, strlen(generate_line));
    }
    cg_strbuf_adds(&text, "\nend\n");
    /* written aside, then renamed: a reader sees a whole stamp or none;
     * both through the folder's descriptor, never through a link */
    int dfd = ok && make_dirs(s->dir) ? stamp_dir(s) : -1;
    if (dfd >= 0) {
        const char *name = strrchr(s->path, '/') + 1;
        cg_strbuf tmp = CG_STRBUF_INIT;
        int fd = -1;
        for (int tries = 0; fd < 0 && tries < 100; tries++) {
            unsigned char r[8];
            char hex[17];
            if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
                break;
            cg_hex(r, sizeof r, hex);
            cg_strbuf_reset(&tmp);
            cg_strbuf_addf(&tmp, "%s.%.6s", name, hex);
            fd = openat(dfd, tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd < 0 && errno != EEXIST)
                break;
        }
        if (fd >= 0) {
            bool written = (size_t)write(fd, text.buf, text.len) == text.len;
            written = close(fd) == 0 && written;
            if (!written || renameat(dfd, tmp.buf, dfd, name) != 0)
                unlinkat(dfd, tmp.buf, 0);
        }
        cg_strbuf_release(&tmp);
        close(dfd);
    }
    cg_strbuf_release(&text);
}

/* The words of a "source" or "output" line after its kind. */
typedef struct entry {
    int status;
    size_t max;     /* sources only */
    long alias;
    char digest[65];
} entry;

static bool parse_entry(char *p, bool with_max, entry *e, cg_strbuf *rel)
{
    cg_strbuf w = CG_STRBUF_INIT;
    bool ok = get_word(&p, &w);
    e->status = ok ? atoi(w.buf) : -1;
    if (ok && with_max && (ok = get_word(&p, &w)))
        e->max = strtoull(w.buf, NULL, 10);
    if (ok && (ok = get_word(&p, &w)))
        e->alias = atol(w.buf);
    if (ok && (ok = get_word(&p, &w)))
        snprintf(e->digest, sizeof e->digest, "%s", w.buf);
    ok = ok && get_word(&p, rel);
    cg_strbuf_release(&w);
    return ok;
}

/* Whether a file found now (status, digest, identity) is the one an entry
 * recorded, and names the same file as the same earlier ones. */
static bool entry_matches(const entry *e, cg_stamp_ids *ids, int status, const char *hex, const cg_file_id *id)
{
    if (status != e->status || strcmp(hex, e->digest) != 0)
        return false;
    return status != 0 ? e->alias == -1 : (long)alias_of(ids, id) == e->alias;
}

/* Replays one "source" line: the same read, the same answer. */
static bool source_holds(cg_stamp_ids *ids, const char *root, char *p, cg_strbuf *rel)
{
    entry e;
    if (!parse_entry(p, true, &e, rel))
        return false;
    char *data = NULL;
    size_t len = 0;
    cg_file_id id;
    cg_error err;
    cg_error_init(&err);
    int rc = cg_read_source_id(root, rel->buf, NULL, e.max, &data, &len, true, &id, &err);
    cg_error_release(&err);
    char hex[65] = "-";
    if (rc == 0)
        digest_hex(data, len, hex);
    free(data);
    return entry_matches(&e, ids, rc, hex, &id);
}

static bool output_holds(cg_stamp_ids *ids, const char *root, const unsigned char key[MAC_KEY], char *p,
                         cg_strbuf *rel)
{
    entry e;
    if (!parse_entry(p, false, &e, rel))
        return false;
    char hex[65];
    cg_file_id id;
    int st = output_state(root, rel->buf, key, hex, &id, NULL);
    return entry_matches(&e, ids, st, hex, &id);
}

/* A folder an output or the diagrams are in, once (generate clears the
 * temporary files a killed run left there). */
static void add_dir(cg_stamp *s, const char *rel, bool is_dir)
{
    const char *slash = strrchr(rel, '/');
    char *dir = is_dir ? cg_xstrdup(rel) : slash ? cg_xstrndup(rel, (size_t)(slash - rel)) : cg_xstrdup(".");
    for (size_t i = 0; i < s->ndirs; i++)
        if (strcmp(s->dirs[i], dir) == 0) {
            free(dir);
            return;
        }
    s->dirs = cg_xrealloc(s->dirs, (s->ndirs + 1) * sizeof *s->dirs);
    s->dirs[s->ndirs++] = dir;
}

bool cg_stamp_holds(cg_stamp *s, const char *verb, cg_strbuf *message, cg_strbuf *why)
{
    if (!s->dir)
        return false;
    /* a regular file only (a FIFO there would block), of a stamp's size,
     * in a folder and a file that are the user's and no one else may write:
     * a stamp is trusted */
    int dfd = stamp_dir(s);
    int fd = dfd < 0 ? -1 : openat(dfd, strrchr(s->path, '/') + 1, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (dfd >= 0)
        close(dfd);
    else if (lstat(s->dir, &st) == 0)
        fd = -2; /* a folder of another's, or a link: not read */
    FILE *f = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= STAMP_MAX_BYTES &&
        private_to_me(&st))
        f = fdopen(fd, "r");
    if (!f) {
        cg_strbuf_adds(why, fd == -1 ? "no stamp of an earlier run"
                                   : "the stamp is not a private file of this user (or is too large): not read");
        if (fd >= 0)
            close(fd);
        return false;
    }
    cg_strbuf w = CG_STRBUF_INIT, expect = CG_STRBUF_INIT;
    size_t nsources = 0, noutputs = 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    int state = 0; /* 0 header, 1 binary, 2 key, 3 body, 4 end seen */
    bool ok = true, have_message = false, have_key = false;
    unsigned char key[MAC_KEY];
    cg_stamp_ids ids = {0};
    while (ok && (n = getline(&buf, &cap, f)) > 0) {
        if (buf[n - 1] != '\n') {
            ok = false;
            break;
        }
        buf[n - 1] = '\0';
        char *p = buf;
        if (state == 0)
            ok = strcmp(buf, "cigen-stamp 3") == 0, state = 1;
        else if (state == 1) {
            ok = strcmp(buf, binary_line()) == 0, state = 2;
            if (!ok)
                cg_strbuf_adds(why, "the stamp is from another cigen binary or library");
        } else if (state == 2) {
            cg_strbuf_reset(&expect);
            key_line(s, &expect);
            ok = strcmp(buf, expect.buf) == 0, state = 3;
        } else if (state == 4) {
            ok = false;
        } else if (strcmp(buf, "end") == 0) {
            state = 4;
        } else {
            if (!get_word(&p, &w)) {
                ok = false;
                break;
            }
            if (strcmp(w.buf, "source") == 0)
                ok = source_holds(&ids, s->real, p, &w), nsources++;
            else if (strcmp(w.buf, "mac") == 0) {
                ok = !have_key && get_word(&p, &w) && w.len == 2 * MAC_KEY;
                for (size_t i = 0; ok && i < MAC_KEY; i++) {
                    int h = hexval(w.buf[2 * i]), l = hexval(w.buf[2 * i + 1]);
                    ok = h >= 0 && l >= 0;
                    key[i] = (unsigned char)(h * 16 + l);
                }
                have_key = ok;
            } else if (strcmp(w.buf, "output") == 0) {
                ok = have_key && output_holds(&ids, s->real, key, p, &w), noutputs++;
                if (ok)
                    add_dir(s, w.buf, false);
            }
            else if (strcmp(w.buf, "listing") == 0) {
                char digest[65], hex[65];
                ok = get_word(&p, &w);
                snprintf(digest, sizeof digest, "%s", ok ? w.buf : "");
                ok = ok && get_word(&p, &w);
                if (ok) {
                    listing(s->real, w.buf, hex, NULL, NULL);
                    ok = strcmp(hex, digest) == 0;
                    add_dir(s, w.buf, true);
                }
            } else if (strcmp(w.buf, "message") == 0) {
                /* the line of the verb asked for; the others are skipped */
                ok = get_word(&p, &w);
                bool mine = ok && strcmp(w.buf, verb) == 0;
                ok = ok && get_word(&p, &w) && !(mine && have_message);
                if (ok && mine) {
                    cg_strbuf_reset(message);
                    cg_strbuf_add(message, w.buf, w.len);
                    have_message = true;
                }
            } else
                ok = false;
            if (!ok && !why->len)
                cg_strbuf_adds(why, "a file it names changed");
        }
    }
    /* a check reads its manifest and compares its config, at least */
    ok = ok && state == 4 && nsources && noutputs && !ferror(f);
    if (!ok && !why->len)
        cg_strbuf_adds(why, "the stamp is unreadable");
    if (ok && !have_message)
        cg_strbuf_addf(why, "the stamp holds, but %s would print more than it records (a lint warning, a tier "
                       "change)", verb);
    ok = ok && have_message;
    fclose(f);
    free(buf);
    free(ids.v);
    cg_strbuf_release(&w);
    cg_strbuf_release(&expect);
    return ok;
}
