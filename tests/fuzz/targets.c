/* The fuzz targets (see targets.h).  Plain C against the generator's
 * headers, no libFuzzer and no check: libfuzzer.c wraps one of them for
 * `make fuzz`, tests/check_robust.c includes this file for `make check`.
 */
#include "targets.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/diff.h"
#include "cmd/project.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "audit/roundtrip.h"
#include "lang/yamlload.h"
#include "lang/yamlwrite.h"

/* A broken promise: say which, then abort (libFuzzer saves the input). */
static _Noreturn void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cigen fuzz: broken promise: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* ---- error messages ---- */

/* The number of lines of a text (a last line without '\n' counts). */
static size_t fz_count_lines(const char *s, size_t n)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    return lines + (n && s[n - 1] != '\n');
}

/* The lines libyaml counts (YAML 1.1): a lone CR, NEL (U+0085), LS (U+2028)
 * and PS (U+2029) break lines too.  Positions are checked against this
 * larger count, an upper bound whichever way a line is counted. */
static size_t fz_count_yaml_lines(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t lines = fz_count_lines(text, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r' && (i + 1 == n || s[i + 1] != '\n'))
            lines++;
        else if (s[i] == 0xC2 && i + 1 < n && s[i + 1] == 0x85)
            lines++;
        else if (s[i] == 0xE2 && i + 2 < n && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9))
            lines++;
    }
    return lines;
}

static bool fz_number(const char **p, unsigned long *out)
{
    const char *s = *p;
    if (!cg_isdigit((unsigned char)*s))
        return false;
    char *end;
    *out = strtoul(s, &end, 10);
    *p = end;
    return true;
}

typedef struct fz_file {
    const char *name;    /* as the error names it */
    const char *text;
    size_t len;
} fz_file;

/* An error is "cigen: error: ..." or "FILE[:LINE[:COL]]: error: ...", and
 * a LINE names a line of FILE (or the one after the last, for "unexpected
 * end of file").  `files` lists the texts that may be named; a file not
 * listed is accepted without the line check. */
static void fz_check_error(const cg_error *err, const fz_file *files, size_t nfiles, const char *what)
{
    if (!err->set)
        fz_fail("%s failed without an error message", what);
    const char *msg = cg_strbuf_str(&err->text);
    if (cg_starts_with(msg, "cigen: error: "))
        return;
    const char *mark = strstr(msg, ": error: ");
    const char *nl = strchr(msg, '\n');
    if (!mark || (nl && nl < mark))
        fz_fail("%s: the error is not 'file:line:col: error: ...': %s", what, msg);
    /* FILE is everything before the first ':' followed by a number or " error" */
    const char *colon = msg;
    const fz_file *f = NULL;
    for (size_t i = 0; i < nfiles && !f; i++) {
        size_t n = strlen(files[i].name);
        if (strncmp(msg, files[i].name, n) == 0 && msg[n] == ':') {
            f = &files[i];
            colon = msg + n;
        }
    }
    if (!f)
        return;
    const char *p = colon;
    unsigned long line = 0, col = 0;
    if (cg_isdigit((unsigned char)p[1]) && (p++, fz_number(&p, &line))) {
        bool has_col = false;
        if (*p == ':' && cg_isdigit((unsigned char)p[1])) {
            p++;
            has_col = fz_number(&p, &col);
        }
        size_t lines = fz_count_yaml_lines(f->text, f->len);
        if (line < 1 || line > lines + 1)
            fz_fail("%s: the error names line %lu of %s, which has %zu lines: %s", what, line, f->name,
                    lines, msg);
        if (has_col && col == 0)
            fz_fail("%s: the error names column 0: %s", what, msg);
    }
    if (strncmp(p, ": error: ", 9) != 0)
        fz_fail("%s: the error is not 'file:line:col: error: ...': %s", what, msg);
    if (p[9] == '\0' || p[9] == '\n')
        fz_fail("%s: the error has no text: %s", what, msg);
}

/* Known bugs the targets skip while they stand, so that fuzzing can go on
 * (none today; see tests/fuzz/README.md).  Build with -DFZ_KNOWN_BUGS=0 to
 * run without the skips. */
#ifndef FZ_KNOWN_BUGS
#define FZ_KNOWN_BUGS 1
#endif

/* ---- yaml ---- */

typedef struct fz_walk {
    const cg_doc *doc;
    size_t nodes, max_nodes;
    size_t lines;
    cg_strbuf path;
} fz_walk;

static void fz_walk_value(fz_walk *W, json_t *v)
{
    if (++W->nodes > W->max_nodes)
        return;
    const char *path = cg_strbuf_str(&W->path);
    cg_node_pos np;
    if (!cg_doc_lookup(W->doc, path, &np))
        fz_fail("yaml: no position for '%s', a path of the loaded tree", path);
    if (np.line < 1 || np.line > W->lines + 1 || np.key_line > W->lines + 1)
        fz_fail("yaml: position %u:%u (key %u:%u) of '%s' is outside the %zu lines of the text", np.line,
                np.col, np.key_line, np.key_col, path, W->lines);
    cg_pos a = cg_doc_where(W->doc, path), b = cg_doc_key_where(W->doc, path);
    if (a.line != np.line || a.col != np.col || b.line < 1)
        fz_fail("yaml: cg_doc_where('%s') disagrees with cg_doc_lookup", path);
    (void)cg_doc_style(W->doc, path);
    (void)cg_doc_is_plain(W->doc, path);
    size_t len = W->path.len;
    if (json_is_object(v)) {
        const char *k;
        json_t *child;
        json_object_foreach(v, k, child) {
            cg_path_push_key(&W->path, k);
            fz_walk_value(W, child);
            cg_strbuf_truncate(&W->path, len);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            cg_path_push_index(&W->path, i);
            fz_walk_value(W, json_array_get(v, i));
            cg_strbuf_truncate(&W->path, len);
        }
    } else if (!json_is_string(v)) {
        fz_fail("yaml: '%s' is neither a mapping, a list nor a string", path);
    }
}

static void fz_write(const cg_doc *doc, json_t *root, cg_strbuf *out)
{
    cg_yw w;
    cg_yw_init(&w, out);
    cg_yw_value(&w, doc, "", root);
    cg_yw_release(&w);
}

int cg_fuzz_yaml(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    cg_error err;
    cg_error_init(&err);
    cg_doc *doc = cg_doc_parse("fuzz.yml", text, size, NULL, &err);
    fz_file self = {"fuzz.yml", text, size};
    if (!doc) {
        fz_check_error(&err, &self, 1, "yaml");
        cg_error_release(&err);
        return 0;
    }
    if (err.set)
        fz_fail("yaml: the text loaded, but an error was recorded: %s", cg_strbuf_str(&err.text));
    size_t len;
    const char *kept = cg_doc_text(doc, &len);
    if (len != size || (size && memcmp(kept, text, size) != 0))
        fz_fail("yaml: cg_doc_text is not the text that was parsed");
    for (size_t i = 0; i < cg_doc_anchor_count(doc); i++) {
        cg_pos p;
        const char *name = cg_doc_anchor(doc, i, &p);
        if (!name || p.line < 1)
            fz_fail("yaml: anchor %zu has no name or position", i);
    }
    json_t *root = cg_doc_root(doc);
    fz_walk W = {doc, 0, 20000, fz_count_yaml_lines(text, size), CG_STRBUF_INIT};
    if (root)
        fz_walk_value(&W, root);
    cg_strbuf_release(&W.path);
    if ((json_is_object(root) || json_is_array(root)) && W.nodes <= W.max_nodes) {
        /* written out and loaded again, the tree is the same; written
         * again, the text is the same */
        cg_strbuf once = CG_STRBUF_INIT, twice = CG_STRBUF_INIT;
        fz_write(doc, root, &once);
        cg_doc *again = cg_doc_parse("written.yml", once.buf ? once.buf : "", once.len, NULL, &err);
        if (!again)
            fz_fail("yaml: the writer's output does not load: %s\n--- written\n%s", cg_strbuf_str(&err.text),
                    cg_strbuf_str(&once));
        json_t *root2 = cg_doc_root(again);
        if (!root2 || !json_equal(root, root2)) {
            char *a = json_dumps(root, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
            char *b = root2 ? json_dumps(root2, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER) : NULL;
            fz_fail("yaml: the writer's output loads as another tree\n--- loaded\n%s\n--- written\n%s--- "
                    "reloaded\n%s", a ? a : "?", cg_strbuf_str(&once), b ? b : "(empty)");
        }
        fz_write(again, root2, &twice);
        if (once.len != twice.len || memcmp(cg_strbuf_str(&once), cg_strbuf_str(&twice), once.len) != 0)
            fz_fail("yaml: writing the reloaded tree gives other text\n--- first\n%s--- second\n%s",
                    cg_strbuf_str(&once), cg_strbuf_str(&twice));
        cg_doc_free(again);
        cg_strbuf_release(&once);
        cg_strbuf_release(&twice);
    }
    cg_doc_free(doc);
    cg_error_release(&err);
    return 0;
}

/* ---- pipeline ---- */

/* The input is a list of files:
 *
 *   %% cigen.yml
 *   output: config.yml
 *   ...
 *   %% tree.yml
 *   dimensions: [os]
 *   ...
 *
 * Text before the first "%% " line belongs to cigen.yml.  A line "%% --strict"
 * turns on --strict.  Paths are kept to [A-Za-z0-9._-] components (no "."
 * or "..", at most 4 levels); a part with another path is dropped. */

#define FZ_MAX_FILES 16
#define FZ_MAX_CELLS 20000.0  /* an upper bound on cells x phases, see fz_bound */

static char *fz_scratch;

static void fz_rm_children(const char *dir);

void cg_fuzz_pipeline_cleanup(void)
{
    if (!fz_scratch)
        return;
    fz_rm_children(fz_scratch);
    rmdir(fz_scratch);
    free(fz_scratch);
    fz_scratch = NULL;
}

static void fz_rm_children(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        cg_strbuf p = CG_STRBUF_INIT;
        cg_strbuf_addf(&p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p.buf, &st) == 0 && S_ISDIR(st.st_mode)) {
            fz_rm_children(p.buf);
            rmdir(p.buf);
        } else {
            unlink(p.buf);
        }
        cg_strbuf_release(&p);
    }
    closedir(d);
}

static const char *fz_scratch_dir(void)
{
    if (fz_scratch) {
        fz_rm_children(fz_scratch);
        return fz_scratch;
    }
    const char *base = getenv("TMPDIR");
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_addf(&sb, "%s/cigen-fuzz-XXXXXX", base && *base ? base : "/tmp");
    fz_scratch = cg_strbuf_detach(&sb, NULL);
    if (!mkdtemp(fz_scratch)) {
        fprintf(stderr, "cigen fuzz: mkdtemp %s: %s\n", fz_scratch, strerror(errno));
        abort();
    }
    static bool registered;
    if (!registered)
        atexit(cg_fuzz_pipeline_cleanup);
    registered = true;
    return fz_scratch;
}

static bool fz_path_ok(const char *p, size_t n)
{
    if (n == 0 || n > 100)
        return false;
    size_t levels = 1, comp = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '/') {
            if (comp == 0 || (comp == 1 && p[i - 1] == '.') ||
                (comp == 2 && p[i - 1] == '.' && p[i - 2] == '.'))
                return false;
            comp = 0;
            if (i < n && ++levels > 4)
                return false;
            continue;
        }
        if (!(cg_isalnum((unsigned char)p[i]) || p[i] == '.' || p[i] == '_' || p[i] == '-'))
            return false;
        comp++;
    }
    return true;
}

static bool fz_write_file(const char *root, const char *rel, const char *data, size_t len)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_strbuf_addf(&p, "%s/%s", root, rel);
    for (char *s = p.buf + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        struct stat st;
        if (lstat(p.buf, &st) != 0)
            mkdir(p.buf, 0755);
        *s = '/';
    }
    FILE *f = fopen(p.buf, "wb");
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    cg_strbuf_release(&p);
    return ok; /* a path that is already a folder: the part is dropped */
}

/* An upper bound on the cells of a tree file, following the language: a
 * node gives the product of its value lists, times the longest `zip`
 * column, times the cells of its `children` and `extra` (when it has some);
 * a list of nodes gives the sum of its nodes.  cigen refuses trees over its
 * own limit ('limits: max_cells'), but reaching it takes long: inputs above
 * FZ_MAX_CELLS are skipped to keep the fuzzer fast. */
static double fz_nodes_bound(json_t *list, size_t *budget);

static double fz_node_bound(json_t *node, size_t *budget)
{
    if (!json_is_object(node) || *budget == 0)
        return *budget ? 1 : 1e300;
    (*budget)--;
    static const char *const keywords[] = {"vars", "exclude", "only", "tiers"};
    double r = 1, below = 0;
    bool has_below = false;
    const char *k;
    json_t *v;
    json_object_foreach(node, k, v) {
        bool kw = false;
        for (size_t i = 0; i < CG_ARRAY_LEN(keywords); i++)
            kw = kw || cg_streq(k, keywords[i]);
        if (kw)
            continue;
        if (cg_streq(k, "children") || cg_streq(k, "extra")) {
            has_below = true;
            below += fz_nodes_bound(v, budget);
        } else if (cg_streq(k, "zip")) {
            size_t longest = 1;
            const char *zk;
            json_t *col;
            json_object_foreach(v, zk, col)
                if (json_array_size(col) > longest)
                    longest = json_array_size(col);
            r *= (double)longest;
        } else if (json_array_size(v) > 1) {
            r *= (double)json_array_size(v);
        }
    }
    return has_below && below > 1 ? r * below : r;
}

static double fz_nodes_bound(json_t *list, size_t *budget)
{
    double r = 0;
    for (size_t i = 0; i < json_array_size(list) && r < 1e300; i++)
        r += fz_node_bound(json_array_get(list, i), budget);
    return r;
}

/* The jobs a file can make: cells times phases (0 for a file that is no tree). */
static double fz_bound(json_t *root)
{
    if (!json_is_object(root) || !(json_object_get(root, "tree") || json_object_get(root, "extra")))
        return 0;
    size_t budget = 100000;
    double cells = fz_nodes_bound(json_object_get(root, "tree"), &budget) +
                   fz_nodes_bound(json_object_get(root, "extra"), &budget);
    size_t phases = json_object_size(json_object_get(root, "phases"));
    return cells * (double)(phases > 1 ? phases : 1);
}

typedef struct fz_part {
    char path[128];
    const char *data;
    size_t len;
} fz_part;

static size_t fz_split(const char *s, size_t n, fz_part *parts, bool *strict)
{
    size_t np = 0, start = 0;
    const char *path = "cigen.yml"; /* the text before the first marker */
    size_t path_len = strlen(path);
    bool implicit = true;
    *strict = false;
    for (size_t i = 0;;) {
        bool marker = i < n && n - i >= 3 && memcmp(s + i, "%% ", 3) == 0;
        if (i == n || marker) {
            bool empty_implicit = implicit && i == start;
            if (path && !empty_implicit && np < FZ_MAX_FILES && path_len < sizeof parts[0].path &&
                fz_path_ok(path, path_len)) {
                memcpy(parts[np].path, path, path_len);
                parts[np].path[path_len] = '\0';
                parts[np].data = s + start;
                parts[np].len = i - start;
                np++;
            }
            if (i == n)
                return np;
            const char *eol = memchr(s + i, '\n', n - i);
            size_t end = eol ? (size_t)(eol - s) : n;
            path = s + i + 3;
            path_len = end - (i + 3);
            implicit = false;
            if (path_len == 8 && memcmp(path, "--strict", 8) == 0) {
                *strict = true;
                path = NULL; /* the text up to the next marker is dropped */
            }
            i = start = eol ? end + 1 : n;
            continue;
        }
        const char *eol = memchr(s + i, '\n', n - i);
        i = eol ? (size_t)(eol - s) + 1 : n;
    }
}

int cg_fuzz_pipeline(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_FILES];
    bool strict;
    size_t np = fz_split((const char *)data, size, parts, &strict);
    /* skip inputs that ask for more cells than we can afford */
    double bound = 0;
    for (size_t i = 0; i < np; i++) {
        cg_error e;
        cg_error_init(&e);
        cg_load_opts lo = {.no_positions = true};
        cg_doc *d = cg_doc_parse(parts[i].path, parts[i].data, parts[i].len, &lo, &e);
        if (d)
            bound += fz_bound(cg_doc_root(d));
        cg_doc_free(d);
        cg_error_release(&e);
        if (bound > FZ_MAX_CELLS)
            return 0;
    }
    const char *root = fz_scratch_dir();
    fz_file files[FZ_MAX_FILES];
    size_t nfiles = 0;
    for (size_t i = 0; i < np; i++) {
        if (!fz_write_file(root, parts[i].path, parts[i].data, parts[i].len))
            continue;
        /* a later part with the same path replaces the earlier one */
        size_t k = 0;
        while (k < nfiles && strcmp(files[k].name, parts[i].path) != 0)
            k++;
        files[k] = (fz_file){parts[i].path, parts[i].data, parts[i].len};
        if (k == nfiles)
            nfiles++;
    }
    cg_options o = {.dir = root, .manifest = "cigen.yml", .strict = strict};
    cg_project p;
    cg_project_init(&p);
    cg_error err;
    cg_error_init(&err);
    int rc = cg_project_load(&p, &o, &err);
    if (rc == 0)
        rc = cg_project_render(&p, &err);
    if (rc != 0) {
        fz_check_error(&err, files, nfiles, "pipeline");
    } else {
        if (err.set)
            fz_fail("pipeline: generated, but an error was recorded: %s", cg_strbuf_str(&err.text));
        /* what cigen writes is one YAML document that loads */
        if (p.out.config.len <= ((size_t)4 << 20)) {
            cg_error e2;
            cg_error_init(&e2);
            cg_doc *out = cg_doc_parse("config.yml", p.out.config.buf ? p.out.config.buf : "", p.out.config.len, NULL, &e2);
            if (!out)
                fz_fail("pipeline: the generated config.yml does not load: %s\n--- config.yml\n%s",
                        cg_strbuf_str(&e2.text), cg_strbuf_str(&p.out.config));
            if (cg_doc_root(out) && !json_is_object(cg_doc_root(out)))
                fz_fail("pipeline: the generated config.yml is not a mapping\n--- config.yml\n%s",
                        cg_strbuf_str(&p.out.config));
            cg_doc_free(out);
            cg_error_release(&e2);
            /* and loads to what cigen meant: the fragments' sections, the
             * generated entries as they were rendered */
            cg_error e4;
            cg_error_init(&e4);
            if (cg_roundtrip_check(&p.m, &e4) != 0)
                fz_fail("pipeline: %s\n--- config.yml\n%s", cg_strbuf_str(&e4.text), cg_strbuf_str(&p.out.config));
            cg_error_release(&e4);
        }
        /* and the same sources give the same bytes */
        if (p.out.config.len <= ((size_t)256 << 10)) {
            cg_project q;
            cg_project_init(&q);
            cg_error e3;
            cg_error_init(&e3);
            if (cg_project_load(&q, &o, &e3) != 0 || cg_project_render(&q, &e3) != 0)
                fz_fail("pipeline: the second run fails: %s", cg_strbuf_str(&e3.text));
            if (q.out.config.len != p.out.config.len || memcmp(q.out.config.buf, p.out.config.buf, p.out.config.len) != 0)
                fz_fail("pipeline: two runs on the same sources give different bytes");
            cg_project_release(&q);
            cg_error_release(&e3);
        }
    }
    cg_error_release(&err);
    cg_project_release(&p);
    return 0;
}

/* ---- diff ---- */

typedef struct fz_line {
    const char *s;
    size_t n;
} fz_line;

/* Lines as diff.c sees them: split at '\n', a last line without one counts. */
static fz_line *fz_lines(const char *t, size_t len, size_t *count)
{
    size_t n = fz_count_lines(t, len);
    fz_line *v = cg_xmalloc((n + 1) * sizeof *v);
    size_t k = 0, start = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '\n') {
            v[k++] = (fz_line){t + start, i - start};
            start = i + 1;
        }
    }
    if (start < len)
        v[k++] = (fz_line){t + start, len - start};
    *count = k;
    return v;
}

static bool fz_line_eq(fz_line a, const char *s, size_t n)
{
    return a.n == n && memcmp(a.s, s, n) == 0;
}

#define FZ_NO_NEWLINE "\\ No newline at end of file"

/* A diff line is escaped as messages are (cg_escape_line). */
static bool fz_line_eq_shown(fz_line a, const char *s, size_t n)
{
    cg_strbuf e = CG_STRBUF_INIT;
    cg_escape_line(&e, a.s, a.n);
    bool same = e.len == n && (n == 0 || memcmp(e.buf, s, n) == 0);
    cg_strbuf_release(&e);
    return same;
}

/* Applies a unified diff (the text cg_diff_unified wrote) to a's lines and
 * checks that it gives b's lines. */
static void fz_apply_unified(const char *diff, size_t dlen, const fz_line *a, size_t na, const fz_line *b,
                             size_t nb, bool a_open, bool b_open)
{
    size_t nd;
    fz_line *d = fz_lines(diff, dlen, &nd);
    if (nd < 2 || !fz_line_eq(d[0], "--- a", 5) || !fz_line_eq(d[1], "+++ b", 5))
        fz_fail("diff: the unified diff does not start with its two names");
    size_t ai = 0, bi = 0, i = 2;
    while (i < nd) {
        unsigned long as, al, bs, bl;
        char tail;
        char head[96];
        size_t hn = d[i].n < sizeof head - 1 ? d[i].n : sizeof head - 1;
        memcpy(head, d[i].s, hn);
        head[hn] = '\0';
        if (sscanf(head, "@@ -%lu,%lu +%lu,%lu @%c", &as, &al, &bs, &bl, &tail) != 5)
            fz_fail("diff: expected a hunk header, found '%s'", head);
        i++;
        size_t astart = al ? as - 1 : as, bstart = bl ? bs - 1 : bs;
        if ((al && as == 0) || (bl && bs == 0) || astart < ai || astart > na)
            fz_fail("diff: hunk '%s' starts before the previous one ends or outside the text", head);
        while (ai < astart) { /* lines between hunks are the same in a and b */
            if (bi >= nb || a[ai].n != b[bi].n || memcmp(a[ai].s, b[bi].s, a[ai].n) != 0)
                fz_fail("diff: lines the diff leaves out differ (a %zu, b %zu)", ai + 1, bi + 1);
            ai++, bi++;
        }
        if (bi != bstart)
            fz_fail("diff: hunk '%s' starts at b line %lu, expected %zu", head, bs, bi + 1);
        unsigned long seen_a = 0, seen_b = 0;
        while (i < nd && !(d[i].n >= 2 && d[i].s[0] == '@' && d[i].s[1] == '@')) {
            char tag = d[i].n ? d[i].s[0] : '?';
            const char *s = d[i].s + 1;
            size_t n = d[i].n ? d[i].n - 1 : 0;
            if (tag == ' ' || tag == '-') {
                if (ai >= na || !fz_line_eq_shown(a[ai], s, n))
                    fz_fail("diff: a '%c' line does not match line %zu of a", tag, ai + 1);
                ai++;
                seen_a++;
            }
            if (tag == ' ' || tag == '+') {
                if (bi >= nb || !fz_line_eq_shown(b[bi], s, n))
                    fz_fail("diff: a '%c' line does not match line %zu of b", tag, bi + 1);
                bi++;
                seen_b++;
            }
            /* the marker follows a last line without its newline */
            if (tag == '\\' && !(fz_line_eq(d[i], FZ_NO_NEWLINE, strlen(FZ_NO_NEWLINE)) && i > 0 &&
                                  ((ai == na && a_open) || (bi == nb && b_open))))
                fz_fail("diff: a misplaced '\\' line");
            if (tag != ' ' && tag != '-' && tag != '+' && tag != '\\')
                fz_fail("diff: a line of a hunk starts with '%c'", tag);
            i++;
        }
        if (seen_a != al || seen_b != bl)
            fz_fail("diff: hunk '%s' holds %lu/%lu lines", head, seen_a, seen_b);
    }
    while (ai < na && bi < nb && a[ai].n == b[bi].n && memcmp(a[ai].s, b[bi].s, a[ai].n) == 0)
        ai++, bi++;
    if (ai != na || bi != nb)
        fz_fail("diff: after the last hunk, a line %zu/%zu and b line %zu/%zu remain", ai, na, bi, nb);
    free(d);
}

int cg_fuzz_diff(const uint8_t *data, size_t size)
{
    const char *a = (const char *)data, *b = a + size / 2;
    size_t alen = size / 2, blen = size - size / 2;
    cg_diff d;
    cg_diff_compute(a, alen, b, blen, &d);
    size_t na, nb;
    fz_line *la = fz_lines(a, alen, &na), *lb = fz_lines(b, blen, &nb);
    if (d.a_lines != na || d.b_lines != nb)
        fz_fail("diff: %zu/%zu lines counted, expected %zu/%zu", d.a_lines, d.b_lines, na, nb);
    /* the hunks, in order, turn a into b */
    size_t ai = 0, bi = 0, removed = 0, added = 0;
    for (size_t h = 0; h < d.n; h++) {
        const cg_hunk *k = &d.hunks[h];
        if (k->a_start < ai || k->b_start < bi || k->a_start + k->a_len > na || k->b_start + k->b_len > nb ||
            (k->a_len == 0 && k->b_len == 0))
            fz_fail("diff: hunk %zu (-%zu,%zu +%zu,%zu) is out of order, out of range or empty", h,
                    k->a_start, k->a_len, k->b_start, k->b_len);
        if (k->a_start - ai != k->b_start - bi)
            fz_fail("diff: hunk %zu leaves %zu lines of a but %zu of b before it", h, k->a_start - ai,
                    k->b_start - bi);
        for (; ai < k->a_start; ai++, bi++)
            if (!fz_line_eq(la[ai], lb[bi].s, lb[bi].n))
                fz_fail("diff: line %zu of a and %zu of b are outside every hunk but differ", ai + 1, bi + 1);
        ai += k->a_len;
        bi += k->b_len;
        removed += k->a_len;
        added += k->b_len;
    }
    if (na - ai != nb - bi)
        fz_fail("diff: after the hunks, %zu lines of a and %zu of b remain", na - ai, nb - bi);
    for (; ai < na; ai++, bi++)
        if (!fz_line_eq(la[ai], lb[bi].s, lb[bi].n))
            fz_fail("diff: line %zu of a and %zu of b are outside every hunk but differ", ai + 1, bi + 1);
    if (removed != d.removed || added != d.added)
        fz_fail("diff: counts -%zu +%zu, the hunks hold -%zu +%zu", d.removed, d.added, removed, added);
    /* the unified text: complete, it applies; cut, it says so */
    for (unsigned context = 0; context <= 3; context += 3) {
        cg_strbuf out = CG_STRBUF_INIT;
        cg_diff_unified(&d, a, alen, b, blen, "a", "b", context, 0, &out);
        if (d.n == 0 && out.len)
            fz_fail("diff: no hunks, but a unified diff was written");
        if (d.n)
            fz_apply_unified(out.buf, out.len, la, na, lb, nb, alen && a[alen - 1] != '\n',
                             blen && b[blen - 1] != '\n');
        cg_strbuf_release(&out);
        cg_strbuf cut = CG_STRBUF_INIT;
        cg_diff_unified(&d, a, alen, b, blen, "a", "b", context, 3, &cut);
        if (d.removed + d.added > 3 && d.n > 1 && !strstr(cg_strbuf_str(&cut), "more changed lines not shown") &&
            cut.len == 0)
            fz_fail("diff: a cut diff is empty");
        cg_strbuf_release(&cut);
    }
    free(la);
    free(lb);
    cg_diff_release(&d);
    return 0;
}

cg_fuzz_fn cg_fuzz_target(const char *name)
{
    if (cg_streq(name, "yaml"))
        return cg_fuzz_yaml;
    if (cg_streq(name, "pipeline"))
        return cg_fuzz_pipeline;
    if (cg_streq(name, "diff"))
        return cg_fuzz_diff;
    return NULL;
}
