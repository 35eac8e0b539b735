/* cigen import FILE [-o DIR] — a cigen project from an existing config.
 *
 * model/infer.c infers the project (fragments, manifest, trees,
 * templates); this command proves it: it writes the files into a scratch
 * folder, loads and renders them as `generate` would, and compares the
 * result with FILE as data (audit/same.h).  When the proof fails, it steps
 * down: each candidate tree alone, the trees that pass together, then every
 * entry static, then the whole `workflows:` section as a fragment.  The
 * first project that proves EQUAL is written into DIR, never over an
 * existing file (as `init`), and proved once more from there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/same.h"
#include "cmd/cli.h"
#include "io/paths.h"
#include "model/infer.h"
#include "render/config.h"

#define MAX_SHOWN 30

/* The whole of `path` (any file: FILE is not part of a project). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cg_strbuf b = CG_STRBUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        cg_strbuf_add(&b, chunk, n);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        cg_strbuf_release(&b);
        return NULL;
    }
    if (!b.buf)
        cg_strbuf_adds(&b, "");
    return cg_strbuf_detach(&b, len);
}

/* Makes the folders leading to rel beneath rootfd; records those it made. */
static int make_parents(int rootfd, const char *rel, char ***made, size_t *nmade, size_t *cap)
{
    for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
        char *dir = cg_xstrndup(rel, (size_t)(s - rel));
        if (mkdirat(rootfd, dir, 0777) == 0) {
            cg_grow(made, cap, *nmade + 1, sizeof **made);
            (*made)[(*nmade)++] = dir;
            continue;
        }
        free(dir);
        if (errno != EEXIST)
            return -1;
    }
    return 0;
}

static int write_new(int rootfd, const char *rel, const cg_strbuf *text)
{
    int fd = cg_open_beneath(rootfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < text->len) {
        ssize_t w = write(fd, text->buf + off, text->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            unlinkat(rootfd, rel, 0);
            errno = e;
            return -1;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) {
        int e = errno;
        unlinkat(rootfd, rel, 0);
        errno = e;
        return -1;
    }
    return 0;
}

typedef struct written {
    char **made;           /* folders made, in order */
    size_t nmade, cap;
    size_t nfiles;         /* the first nfiles of the project's files */
} written;

/* Writes the project's files beneath rootfd; on failure takes back what it
 * wrote and returns -1 (errno set, *failed the file). */
static int write_project(int rootfd, const cg_infer *r, written *wr, const char **failed)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        if (make_parents(rootfd, r->files[i].rel, &wr->made, &wr->nmade, &wr->cap) != 0 ||
            write_new(rootfd, r->files[i].rel, &r->files[i].text) != 0) {
            *failed = r->files[i].rel;
            return -1;
        }
        wr->nfiles = i + 1;
    }
    return 0;
}

static void take_back(int rootfd, const cg_infer *r, written *wr)
{
    int e = errno;
    for (size_t i = 0; i < wr->nfiles; i++)
        unlinkat(rootfd, r->files[i].rel, 0);
    for (size_t i = wr->nmade; i-- > 0;)
        unlinkat(rootfd, wr->made[i], AT_REMOVEDIR);
    errno = e;
}

static void written_release(written *wr)
{
    for (size_t i = 0; i < wr->nmade; i++)
        free(wr->made[i]);
    free(wr->made);
    memset(wr, 0, sizeof *wr);
}

/* Generates from the project in dir and compares with the original:
 * 0 equal, 1 different (report filled), -1 the project does not generate
 * (err set). */
static int prove(const char *dir, const cg_doc *orig, const char *fname, cg_strbuf *report, size_t *ndiff,
                 cg_error *err)
{
    cg_options o;
    memset(&o, 0, sizeof o);
    o.dir = dir;
    o.manifest = "cigen.yml";
    o.no_overlay = true;
    cg_model m;
    cg_model_init(&m);
    int rc = cg_model_load(&m, &o, err);
    cg_config out;
    cg_config_init(&out);
    if (rc == 0)
        rc = cg_config_render(&m, NULL, &out, err);
    if (rc == 0) {
        cg_doc *gen = cg_doc_parse("the generated config", out.config.buf ? out.config.buf : "", out.config.len,
                                   &(cg_load_opts){0}, err);
        if (!gen) {
            rc = -1;
        } else {
            *ndiff = cg_yaml_same(orig, fname, gen, "the generated config", report, MAX_SHOWN);
            rc = *ndiff ? 1 : 0;
            cg_doc_free(gen);
        }
    }
    cg_config_release(&out);
    cg_model_release(&m);
    return rc;
}

/* Infers at `level` (with `enabled` trees) and proves it in a scratch
 * folder: 0 equal, 1 not, -1 not generated (err). */
static int attempt(const cg_global *g, const cg_doc *doc, const char *fname, int level, const unsigned char *enabled,
                   cg_infer *r, cg_strbuf *report, size_t *ndiff, cg_error *err)
{
    cg_infer_release(r);
    cg_infer_init(r);
    if (cg_infer_project(doc, fname, "config.yml", level, enabled, r, err) != 0)
        return -3; /* FILE is no config: err says where */
    const char *tmp = getenv("TMPDIR");
    cg_strbuf dir = CG_STRBUF_INIT;
    cg_strbuf_addf(&dir, "%s/cigen-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir.buf)) {
        cg_pos p = {0};
        cg_error_at(err, &p, "cannot make a scratch folder for the proof: %s", strerror(errno));
        cg_strbuf_release(&dir);
        return -2;
    }
    int rootfd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    written wr = {0};
    const char *failed = NULL;
    int rc;
    if (rootfd < 0 || write_project(rootfd, r, &wr, &failed) != 0) {
        cg_pos p = {0};
        cg_error_at(err, &p, "cannot write the scratch project for the proof: %s", strerror(errno));
        rc = -2;
    } else {
        cg_strbuf_reset(report);
        rc = prove(dir.buf, doc, fname, report, ndiff, err);
        if (g->verbose) {
            cg_strbuf what = CG_STRBUF_INIT;
            if (rc < 0)
                cg_strbuf_add(&what, err->text.buf ? err->text.buf : "", err->text.len);
            cg_cli_verbose(g, "import: level %d%s: %s%s", level, enabled ? " (some trees)" : "",
                           rc == 0 ? "EQUAL" : rc > 0 ? "different\n" : "does not generate: ",
                           rc > 0 ? (report->buf ? report->buf : "") : what.buf ? what.buf : "");
            cg_strbuf_release(&what);
        }
    }
    if (rootfd >= 0) {
        take_back(rootfd, r, &wr);
        close(rootfd);
    }
    written_release(&wr);
    rmdir(dir.buf);
    cg_strbuf_release(&dir);
    return rc;
}

static const char import_help[] =
    "usage: cigen import FILE [-o DIR]\n"
    "\n"
    "Writes a cigen project that generates FILE, an existing CircleCI config, into DIR\n"
    "(default: the current folder, or -C DIR): the manifest cigen.yml, fragments in\n"
    "verbatim-sources/ (every top-level section but workflows, byte for byte, comments\n"
    "and anchors kept), and for the workflows: dimension trees (dimensions/) and\n"
    "templates (templates/) for the entries that form a matrix (products, zipped\n"
    "dimensions, exclude, nested nodes, fan-ins with per: [], shared value lists),\n"
    "static entries of the manifest for the others.  It never overwrites a file: when\n"
    "one it would write exists, it writes nothing and names it.\n"
    "\n"
    "Then it proves the import: it generates from what it wrote and compares the result\n"
    "with FILE as data (aliases and merge keys expanded, mapping keys in any order,\n"
    "sequences in order, scalars by type and value), and prints EQUAL or the\n"
    "differences.  A candidate tree that would make the proof fail is tried without its\n"
    "shapes (zips, exclusions, nested nodes, fan-ins, shared lists), then left as\n"
    "static entries (and said so).  config.yml itself is not written: `cigen generate\n"
    "--force` replaces the old one with the generated one, header included.\n"
    "\n"
    "  -o, --output DIR  the project folder to write (made when missing)\n"
    "\n"
    "Exit status: 0 written and EQUAL, 1 written but not equal, 2 FILE cannot be read,\n"
    "a file exists, or nothing could be written.\n";

static size_t lines_of(const cg_strbuf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->buf[i] == '\n';
    return n + (b->len && b->buf[b->len - 1] != '\n');
}

int cg_cmd_import(const cg_global *g0, int argc, char **argv)
{
    cg_global gl = *g0;
    cg_global *g = &gl;
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        CG_GLOBAL_LONGOPTS,
        {0},
    };
    const char *outdir = g->opt.dir ? g->opt.dir : ".";
    int c;
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "o:hqv", longopts)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'h': fputs(import_help, stdout); return 0;
        default: return CG_EXIT_ERROR;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "cigen: error: import takes one FILE%s\nTry 'cigen import --help'.\n",
                optind < argc ? " (and -o DIR)" : "");
        return CG_EXIT_ERROR;
    }
    const char *fname = argv[optind];
    size_t len = 0;
    char *text = slurp(fname, &len);
    if (!text) {
        fprintf(stderr, "cigen: error: cannot read '%s': %s\n", cg_cli_shown(fname), strerror(errno));
        return CG_EXIT_ERROR;
    }
    cg_error err;
    cg_error_init(&err);
    cg_doc *doc = cg_doc_parse(fname, text, len, &(cg_load_opts){0}, &err);
    free(text);
    if (!doc) {
        cg_cli_print_error(&err);
        cg_error_release(&err);
        return CG_EXIT_ERROR;
    }
    /* the proof, stepping down until EQUAL */
    cg_infer r;
    cg_infer_init(&r);
    cg_strbuf report = CG_STRBUF_INIT, notes = CG_STRBUF_INIT;
    size_t ndiff = 0;
    int level = CG_INFER_SHAPES;
    int rc = attempt(g, doc, fname, level, NULL, &r, &report, &ndiff, &err);
    size_t ncand = r.ncandidates;
    if (rc != 0 && rc > -2 && ncand) {
        /* the trees one at a time, each kept at the highest level at which
         * the proof still passes with it (with its shapes, without them,
         * or left static: two trees making the same job names cannot both
         * be trees) */
        unsigned char *ok = cg_xcalloc(ncand, 1);
        size_t ntrees = 0, nplain = 0;
        for (size_t i = 0; i < ncand; i++) {
            for (int tl = CG_INFER_SHAPES; tl >= CG_INFER_TREES; tl--) {
                ok[i] = (unsigned char)tl;
                cg_error e2;
                cg_error_init(&e2);
                size_t nd = 0;
                cg_strbuf rep = CG_STRBUF_INIT;
                int arc = attempt(g, doc, fname, level, ok, &r, &rep, &nd, &e2);
                cg_strbuf_release(&rep);
                cg_error_release(&e2);
                if (arc == 0)
                    break;
                ok[i] = CG_INFER_STATIC;
            }
            ntrees += ok[i] >= CG_INFER_TREES;
            nplain += ok[i] == CG_INFER_TREES;
        }
        cg_error_release(&err);
        cg_error_init(&err);
        rc = ntrees ? attempt(g, doc, fname, level, ok, &r, &report, &ndiff, &err) : 1;
        if (rc == 0 && ntrees < ncand)
            cg_strbuf_addf(&notes, "cigen import: %zu of %zu candidate trees left as static entries: "
                           "the proof failed with them\n", ncand - ntrees, ncand);
        if (rc == 0 && nplain)
            cg_strbuf_addf(&notes, "cigen import: %zu candidate tree%s without their shapes (zips, exclusions, "
                           "nested nodes, fan-ins, shared lists): the proof failed with them\n", nplain,
                           nplain == 1 ? "" : "s");
        free(ok);
    }
    for (level = rc == 0 ? level : CG_INFER_STATIC; rc != 0 && rc > -2 && level >= CG_INFER_VERBATIM; level--) {
        cg_error_release(&err);
        cg_error_init(&err);
        rc = attempt(g, doc, fname, level, NULL, &r, &report, &ndiff, &err);
        if (rc == 0)
            cg_strbuf_addf(&notes, "cigen import: %s\n", level == CG_INFER_STATIC
                           ? "every workflow entry is a static entry of the manifest: no tree passed the proof"
                           : "the workflows section is a fragment, as written: the manifest could not say it");
    }
    int status = 0;
    if (rc == -3) {
        cg_cli_print_error(&err);
        status = CG_EXIT_ERROR;
        goto done;
    }
    if (rc == -2 || rc == -1) {
        /* not even the verbatim project generates */
        cg_cli_print_error(&err);
        fprintf(stderr, "cigen: error: the project imported from '%s' does not generate (nothing was written)\n",
                cg_cli_shown(fname));
        status = CG_EXIT_ERROR;
        goto done;
    }
    /* write it, never over anything */
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cigen: error: cannot make '%s': %s\n", cg_cli_shown(outdir), strerror(errno));
        status = CG_EXIT_ERROR;
        goto done;
    }
    int rootfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        fprintf(stderr, "cigen: error: '%s' is not a folder\n", cg_cli_shown(outdir));
        status = CG_EXIT_ERROR;
        goto done;
    }
    struct stat st;
    for (size_t i = 0; i < r.nfiles; i++) {
        if (fstatat(rootfd, r.files[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
            fprintf(stderr, "cigen: error: '%s' already exists; import never overwrites a file (nothing was "
                    "written)\n", cg_cli_shown(r.files[i].rel));
            close(rootfd);
            status = CG_EXIT_ERROR;
            goto done;
        }
    }
    written wr = {0};
    const char *failed = NULL;
    if (write_project(rootfd, &r, &wr, &failed) != 0) {
        fprintf(stderr, "cigen: error: cannot write '%s': %s (nothing was written)\n", cg_cli_shown(failed),
                errno == EXDEV ? "a symbolic link on its path leads out of the project folder" : strerror(errno));
        take_back(rootfd, &r, &wr);
        written_release(&wr);
        close(rootfd);
        status = CG_EXIT_ERROR;
        goto done;
    }
    written_release(&wr);
    close(rootfd);
    /* the proof, again, from what is on disk */
    cg_error_release(&err);
    cg_error_init(&err);
    cg_strbuf_reset(&report);
    ndiff = 0;
    int prc = prove(outdir, doc, fname, &report, &ndiff, &err);
    if (!g->quiet) {
        printf("cigen import: wrote %zu files into %s:\n", r.nfiles, outdir);
        for (size_t i = 0; i < r.nfiles; i++)
            printf("  %s (%zu lines)\n", r.files[i].rel, lines_of(&r.files[i].text));
        printf("inferred: %zu tree%s (%zu cells, %zu entries), %zu template%s, %zu static entr%s, "
               "%zu workflow%s kept as written, %zu fragment%s\n",
               r.ntrees, r.ntrees == 1 ? "" : "s", r.ncells, r.ngenerated, r.ntemplates,
               r.ntemplates == 1 ? "" : "s", r.nstatic, r.nstatic == 1 ? "y" : "ies", r.nverbatim_workflows,
               r.nverbatim_workflows == 1 ? "" : "s", r.nfragments, r.nfragments == 1 ? "" : "s");
        fputs(r.summary.buf ? r.summary.buf : "", stdout);
        size_t src_lines = 0;
        for (size_t i = 0; i < r.nfiles; i++)
            if (!cg_starts_with(r.files[i].rel, "verbatim-sources/"))
                src_lines += lines_of(&r.files[i].text);
        printf("sizes: %zu lines of manifest, trees and templates for the %zu lines of %s's workflows section\n",
               src_lines, r.workflows_lines, fname);
        fputs(notes.buf ? notes.buf : "", stdout);
    }
    if (prc < 0) {
        cg_cli_print_error(&err);
        status = CG_EXIT_ERROR;
    } else if (prc == 0) {
        printf("EQUAL: the config the sources generate means what %s means\n", fname);
        if (!g->quiet)
            printf("Next: `cigen -C %s generate --force` writes config.yml with its header (it replaces a config\n"
                   "cigen did not write); commit the sources with it.\n", outdir);
    } else {
        printf("DIFFERENT: %zu difference%s between %s and the generated config:\n%s", ndiff,
               ndiff == 1 ? "" : "s", fname, report.buf ? report.buf : "");
        if (ndiff > MAX_SHOWN)
            printf("  ... and %zu more\n", ndiff - MAX_SHOWN);
        status = CG_EXIT_DIFF;
    }
done:
    cg_strbuf_release(&report);
    cg_strbuf_release(&notes);
    cg_infer_release(&r);
    cg_error_release(&err);
    cg_doc_free(doc);
    return status;
}
