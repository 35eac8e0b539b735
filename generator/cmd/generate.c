/* cigen generate / cigen check — and what they share: comparing the outputs
 * the sources produce with the files on disk. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "base/diff.h"
#include "base/digest.h"
#include "render/dot.h"
#include "io/fsio.h"
#include "check/report.h"

/* Texts larger than this get a diff but no job-level report. */
#define REPORT_MAX_BYTES ((size_t)64 << 20)

int cg_cli_getopt(cg_global *g, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == CG_OPT_STRICT)
            g->opt.strict = true;
        else if (c == 'q')
            g->quiet = true;
        else {
            if (c == '?' || c == ':') /* getopt said what was wrong */
                fprintf(stderr, "Try '%s --help'.\n", argv[0]);
            return c;
        }
    }
}

bool cg_cli_selection_option(cg_global *g, cg_selection *sel, int c, const char *arg)
{
    if (c == CG_OPT_ONLY || c == CG_OPT_ALSO) {
        cg_selection_add(sel, c == CG_OPT_ONLY, arg, NULL);
        g->opt.selection = sel;
        return true;
    }
    if (c == CG_OPT_OVERLAY) {
        g->opt.overlay = arg;
        return true;
    }
    return false;
}

void cg_cli_print_error(const cg_error *err)
{
    if (err->set)
        fprintf(stderr, "%s\n", cg_strbuf_str(&err->text));
}

int cg_cli_render(cg_project *p)
{
    cg_error err;
    cg_error_init(&err);
    int rc = cg_project_render(p, &err);
    if (rc != 0)
        cg_cli_print_error(&err);
    cg_error_release(&err);
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}

int cg_cli_build(const cg_global *g, cg_project *p, bool render)
{
    cg_error err;
    cg_error_init(&err);
    int rc = cg_project_load(p, &g->opt, &err);
    if (rc == 0 && render)
        rc = cg_project_render(p, &err);
    if (p->warnings.count)
        fputs(cg_strbuf_str(&p->warnings.text), stderr);
    if (rc != 0)
        cg_cli_print_error(&err);
    cg_error_release(&err);
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}

/* ---- the outputs and their state on disk ---- */

enum { OUT_SAME, OUT_DIFFERS, OUT_MISSING };

typedef struct out_state {
    cg_output_file f;     /* f.data is NULL for a config streamed to its temporary file */
    int status;
    char *old;
    size_t old_len;
    bool digest;          /* the file carries a cigen-digest header */
    bool hand_edited;     /* its body is not what cigen wrote */
    bool sources_changed; /* its sources are not the ones it was made from */
    size_t header_lines;  /* lines of its cigen header */
    cg_diff diff;         /* committed (a) -> generated (b) */
} out_state;

typedef struct outputs {
    out_state *v;
    size_t n;
    char **stale;         /* files in the diagrams folder cigen made and no longer makes */
    size_t nstale;
} outputs;

static void outputs_release(outputs *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].old);
        cg_diff_release(&o->v[i].diff);
    }
    free(o->v);
    for (size_t i = 0; i < o->nstale; i++)
        free(o->stale[i]);
    free(o->stale);
}

size_t cg_cli_outputs(cg_project *p, cg_output_file *out, size_t max)
{
    size_t n = 0;
    if (n < max)
        out[n++] = (cg_output_file){p->manifest.output, p->config.buf ? p->config.buf : "", p->config.len,
                                    p->manifest.output_pos};
    const cg_dot_output *d;
    size_t nd = cg_project_diagrams(p, &d);
    for (size_t i = 0; i < nd && n < max; i++)
        out[n++] = (cg_output_file){d[i].rel, d[i].data, d[i].len, p->manifest.diagrams_pos};
    return n;
}

size_t cg_cli_output_count(cg_project *p)
{
    const cg_dot_output *d;
    return 1 + cg_project_diagrams(p, &d);
}

static bool owned_stale_candidate(const cg_project *p, const char *rel)
{
    const char *root = p->root;
    char *data = NULL;
    size_t len = 0;
    cg_error err;
    cg_error_init(&err);
    bool owned = false;
    if (cg_read_output_head(root, rel, NULL, "read", 4096, &data, &len, &err) == 0)
        owned = cg_dot_is_generated_by(p, data, len);
    free(data);
    cg_error_release(&err);
    return owned;
}

/* Files in the diagrams folder that cigen wrote but the sources no longer
 * produce. Only files starting with cigen's marker naming this manifest are
 * ever candidates. */
static void find_stale(cg_project *p, outputs *o)
{
    const char *dir = p->manifest.diagrams;
    if (!dir)
        return;
    cg_strbuf path = CG_STRBUF_INIT;
    cg_strbuf_addf(&path, "%s/%s", p->root, dir);
    DIR *d = opendir(path.buf);
    cg_strbuf_release(&path);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".dot") != 0)
            continue;
        cg_grow(&names, &cap, n + 1, sizeof *names);
        names[n++] = cg_xstrdup(e->d_name);
    }
    closedir(d);
    /* sorted: the report must not depend on the directory order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        cg_strbuf rel = CG_STRBUF_INIT;
        cg_strbuf_addf(&rel, "%s/%s", dir, names[i]);
        bool produced = false;
        for (size_t k = 0; k < o->n && !produced; k++)
            produced = cg_streq(o->v[k].f.rel, rel.buf);
        if (!produced && owned_stale_candidate(p, rel.buf)) {
            o->stale = cg_xrealloc(o->stale, (o->nstale + 1) * sizeof *o->stale);
            o->stale[o->nstale++] = cg_strbuf_detach(&rel, NULL);
        }
        cg_strbuf_release(&rel);
        free(names[i]);
    }
    free(names);
}

/* ---- a large config.yml, streamed to its temporary file ---- */

/* The sink generate gives the renderer: the config goes to a staged
 * temporary file as it is made, and is compared on the way with the file
 * on disk (whose body digest is computed for the hand-edit check), so a
 * config of hundreds of megabytes is never held in memory. */
typedef struct stream_out {
    cg_project *p;
    cg_outputs *outs;
    int staged;             /* index in outs, or -1 before the first bytes */
    int old_fd;             /* the config on disk; -1 when missing */
    size_t off;             /* bytes written */
    size_t old_off;         /* bytes of the old file read */
    bool differs;
    cg_header_info old_h;   /* the old file's header */
    cg_sha256 old_body;
    char *buf;
    bool compare_only;      /* check: nothing is written; once the bytes
                             * differ, the rest is not even read */
    /* the results, once header() ran */
    bool done, hand_edited, sources_changed;
} stream_out;

enum { STREAM_BUF = 1 << 20 };

/* Reads the old file up to `upto` (or its end), hashing its body and, when
 * `chunk` (the new bytes from offset `base` on) is given, comparing the
 * old bytes at and after offset `lo` with it. */
static int stream_old(stream_out *S, size_t upto, const char *chunk, size_t base, size_t lo, cg_error *err)
{
    while (S->old_off < upto) {
        size_t want = upto - S->old_off < STREAM_BUF ? upto - S->old_off : STREAM_BUF;
        ssize_t r = read(S->old_fd, S->buf, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cg_error_at(err, &S->p->manifest.output_pos, "cannot read '%s': %s", S->p->manifest.output,
                               strerror(errno));
        if (r == 0) {
            S->differs |= chunk != NULL; /* the old file is shorter */
            break;
        }
        size_t n = (size_t)r, at = S->old_off;
        if (at + n > S->old_h.len) {
            size_t from = at < S->old_h.len ? S->old_h.len - at : 0;
            cg_sha256_update(&S->old_body, S->buf + from, n - from);
        }
        if (chunk && !S->differs) {
            size_t from = at < lo ? lo - at : 0;
            if (from < n && memcmp(S->buf + from, chunk + (at + from - base), n - from) != 0)
                S->differs = true;
        }
        S->old_off += n;
    }
    return 0;
}

/* Starts the temporary file: with the first `upto` bytes, equal so far to
 * the old file's (its header region is patched at the end), copied from it. */
static int stream_materialize(stream_out *S, size_t upto, cg_error *err)
{
    const cg_manifest *m = &S->p->manifest;
    if ((S->staged = cg_outputs_open(S->outs, m->output, &m->output_pos, err)) < 0)
        return -1;
    char *buf = cg_xmalloc(STREAM_BUF);
    int rc = 0;
    for (size_t at = 0; at < upto && rc == 0;) {
        size_t want = upto - at < STREAM_BUF ? upto - at : STREAM_BUF;
        ssize_t r = pread(S->old_fd, buf, want, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = cg_error_at(err, &m->output_pos, "cannot read '%s': %s", m->output,
                             r < 0 ? strerror(errno) : "it changed while cigen read it");
            break;
        }
        rc = cg_outputs_append(S->outs, S->staged, buf, (size_t)r, err);
        at += (size_t)r;
    }
    free(buf);
    return rc;
}

static int stream_write(void *ctx, const char *data, size_t len, cg_error *err)
{
    stream_out *S = ctx;
    const cg_manifest *m = &S->p->manifest;
    if (!S->buf) {
        S->buf = cg_xmalloc(STREAM_BUF);
        /* a FIFO, a folder, ...: refused as the in-memory path refuses them */
        if (cg_output_open(S->p->root, m->output, &m->output_pos, S->compare_only ? "compare" : "write",
                           &S->old_fd, err) < 0)
            return -1;
        cg_sha256_init(&S->old_body);
        if (S->old_fd >= 0) {
            /* its header, for the digests it records */
            ssize_t r = pread(S->old_fd, S->buf, STREAM_BUF, 0);
            cg_header_parse(S->buf, r > 0 ? (size_t)r : 0, &S->old_h);
        } else if (!S->compare_only && (S->staged = cg_outputs_open(S->outs, m->output, &m->output_pos, err)) < 0) {
            return -1;
        }
    }
    if (S->old_fd >= 0 && !(S->compare_only && S->differs)) {
        /* compared with the old file (its header at the end, when its digests
         * are known); nothing is written while they are the same */
        size_t hl = S->p->header_len;
        bool was_same = !S->differs;
        if (stream_old(S, S->off + len, data, S->off, S->off > hl ? S->off : hl, err) != 0)
            return -1;
        if (was_same && S->differs && !S->compare_only && stream_materialize(S, S->off, err) != 0)
            return -1;
    }
    if (S->staged >= 0 && cg_outputs_append(S->outs, S->staged, data, len, err) != 0)
        return -1;
    S->off += len;
    return 0;
}

static int stream_header(void *ctx, const char *data, size_t len, cg_error *err)
{
    stream_out *S = ctx;
    if (S->old_fd >= 0 && !(S->compare_only && S->differs)) {
        char *head = cg_xmalloc(len + 1);
        ssize_t r = pread(S->old_fd, head, len, 0);
        bool was_same = !S->differs;
        S->differs |= r != (ssize_t)len || memcmp(head, data, len) != 0;
        free(head);
        if (stream_old(S, SIZE_MAX, NULL, 0, 0, err) != 0) /* the rest of the old body, hashed */
            return -1;
        S->differs |= S->old_off != S->off;
        if (was_same && S->differs && !S->compare_only && stream_materialize(S, S->off, err) != 0)
            return -1;
        unsigned char d[32];
        char body[41];
        cg_sha256_final(&S->old_body, d);
        cg_hex(d, 20, body);
        S->hand_edited = !S->old_h.found || strcmp(body, S->old_h.body) != 0;
        S->sources_changed = S->old_h.found && strcmp(S->old_h.sources, S->p->sources_digest) != 0;
    }
    if (S->staged >= 0 && (cg_outputs_patch(S->outs, S->staged, data, len, err) != 0 ||
                           cg_outputs_close(S->outs, S->staged, err) != 0))
        return -1;
    S->done = true;
    return 0;
}

static void stream_release(stream_out *S)
{
    if (S->old_fd >= 0)
        close(S->old_fd);
    free(S->buf);
}

/* Streams p's config, when larger than the threshold, to S (which writes
 * it to outs, or with outs NULL only compares it with the file on disk). */
static void stream_start(cg_project *p, stream_out *S, cg_config_sink *sink, cg_outputs *outs)
{
    *S = (stream_out){.p = p, .outs = outs, .staged = -1, .old_fd = -1, .compare_only = outs == NULL};
    /* configs larger than this are streamed while they are rendered (a
     * test lowers it to stream small ones too) */
    const char *keep = getenv("CIGEN_TEST_STREAM_BYTES");
    *sink = (cg_config_sink){keep ? (size_t)strtoull(keep, NULL, 10) : REPORT_MAX_BYTES, stream_write, stream_header,
                             S};
    p->sink = sink;
}

/* `verb` says what the command does with the outputs: "write", "compare".
 * `streamed`: config.yml went to its temporary file, already compared. */
static int collect(cg_project *p, outputs *o, const char *verb, const stream_out *streamed, cg_error *err)
{
    size_t max = cg_cli_output_count(p);
    cg_output_file *files = cg_xcalloc(max + 1, sizeof *files);
    size_t n = cg_cli_outputs(p, files, max);
    o->v = cg_xcalloc(n + 1, sizeof *o->v);
    for (size_t i = 0; i < n; i++) {
        /* never let an output replace a source, not even with --force */
        const char *kind = cg_project_source_kind(p, files[i].rel);
        if (kind) {
            if (i == 0)
                cg_error_at(err, &files[i].ref, "'output' '%s' is a source of the project (%s); choose another file",
                            files[i].rel, kind);
            else
                cg_error_at(err, &files[i].ref, "the diagram '%s' would replace a source of the project (%s); "
                            "choose another 'diagrams' folder", files[i].rel, kind);
            free(files);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        out_state *s = &o->v[o->n++];
        s->f = files[i];
        if (i == 0 && streamed) {
            s->f.data = NULL;
            s->f.len = p->config_size;
            s->status = streamed->old_fd < 0 ? OUT_MISSING : streamed->differs ? OUT_DIFFERS : OUT_SAME;
            s->digest = streamed->old_h.found;
            s->hand_edited = streamed->hand_edited;
            s->sources_changed = streamed->sources_changed;
            continue;
        }
        /* compare first without holding the old file: it is only read
         * whole when it differs, for the report */
        bool same;
        int r = cg_output_matches(p->root, files[i].rel, &files[i].ref, verb, s->f.data, s->f.len, &same, err);
        if (r == 0 && !same)
            r = cg_read_output(p->root, files[i].rel, &files[i].ref, verb, &s->old, &s->old_len, err);
        if (r < 0) {
            free(files);
            return -1;
        }
        if (r == 1) {
            s->status = OUT_MISSING;
            continue;
        }
        if (same || (s->old_len == s->f.len && memcmp(s->old, s->f.data, s->f.len) == 0)) {
            s->status = OUT_SAME;
            continue;
        }
        s->status = OUT_DIFFERS;
        cg_diff_compute(s->old, s->old_len, s->f.data, s->f.len, &s->diff);
        if (i == 0) {
            cg_header_info h;
            cg_header_parse(s->old, s->old_len, &h);
            s->digest = h.found;
            for (size_t k = 0; k < h.len; k++)
                s->header_lines += s->old[k] == '\n';
            if (h.found) {
                char body[41];
                cg_sha256_hex(s->old + h.len, s->old_len - h.len, body, 20);
                s->hand_edited = strcmp(body, h.body) != 0;
                s->sources_changed = strcmp(h.sources, p->sources_digest) != 0;
            } else {
                s->hand_edited = true;
            }
        }
    }
    free(files);
    find_stale(p, o);
    return 0;
}

/* The job whose generated lines are at `line` of the new config, or NULL. */
static const char *job_at(const cg_project *p, size_t line)
{
    const cg_linemap_entry *e = cg_linemap_find(&p->linemap, (uint32_t)line);
    return e && e->job >= 0 ? p->jobs.v[e->job].name : NULL;
}

/* "lines 120-134 (job x), 240" — the committed lines a hand edit touched. */
static void hand_edit_lines(const cg_project *p, const out_state *s, cg_strbuf *out, json_t *ranges,
                            const char **first_job)
{
    *first_job = NULL;
    size_t shown = 0;
    for (size_t i = 0; i < s->diff.n; i++) {
        const cg_hunk *h = &s->diff.hunks[i];
        /* the digest line changes with the sources: not a hand edit */
        if (h->a_start + h->a_len <= s->header_lines && h->a_len)
            continue;
        size_t from = h->a_start + 1, to = h->a_start + h->a_len;
        const char *job = job_at(p, h->b_start + 1);
        if (job && !*first_job)
            *first_job = job;
        if (ranges) {
            json_t *r = json_array();
            json_array_append_new(r, json_integer((json_int_t)from));
            json_array_append_new(r, json_integer((json_int_t)(h->a_len ? to : from)));
            json_array_append_new(ranges, r);
        }
        if (!out || shown++ >= 5)
            continue;
        if (shown > 1)
            cg_strbuf_adds(out, ", ");
        if (h->a_len == 0)
            cg_strbuf_addf(out, "before line %zu (lines deleted)", from);
        else if (h->a_len == 1)
            cg_strbuf_addf(out, "line %zu", from);
        else
            cg_strbuf_addf(out, "lines %zu-%zu", from, to);
        if (job)
            cg_strbuf_addf(out, " (%s)", job);
    }
    if (out && shown > 5)
        cg_strbuf_addf(out, " and %zu more places", shown - 5);
}

static const char *state_word(const out_state *s)
{
    if (s->status == OUT_MISSING)
        return "missing";
    if (!s->digest)
        return s->f.rel == NULL ? "differs" : "differs";
    if (s->hand_edited && s->sources_changed)
        return "edited by hand, and its sources changed";
    if (s->hand_edited)
        return "edited by hand";
    if (s->sources_changed)
        return "its sources changed";
    return "differs";
}

/* ---- cigen check ---- */

static void check_text(cg_project *p, outputs *o, bool full, cg_strbuf *out)
{
    size_t ndiff = 0;
    for (size_t i = 0; i < o->n; i++)
        ndiff += o->v[i].status != OUT_SAME;
    if (ndiff + o->nstale == 0) {
        cg_strbuf_addf(out, "cigen: in sync: %s", p->manifest.output);
        if (o->n > 1)
            cg_strbuf_addf(out, " and %zu diagram%s", o->n - 1, o->n == 2 ? "" : "s");
        cg_strbuf_adds(out, o->n > 1 ? " match their sources\n" : " matches its sources\n");
        return;
    }
    /* 1. one summary line */
    cg_strbuf_adds(out, "cigen: out of sync:");
    bool first = true;
    for (size_t i = 0; i < o->n; i++) {
        const out_state *s = &o->v[i];
        if (s->status == OUT_SAME)
            continue;
        cg_strbuf_addf(out, "%s %s (%s)", first ? "" : ",", s->f.rel, i == 0 ? state_word(s) :
                       s->status == OUT_MISSING ? "missing" : "differs");
        first = false;
    }
    for (size_t i = 0; i < o->nstale; i++) {
        cg_strbuf_addf(out, "%s %s (stale: no longer produced)", first ? "" : ",", o->stale[i]);
        first = false;
    }
    cg_strbuf_addc(out, '\n');
    const out_state *cfg = &o->v[0];
    const char *explain_job = NULL;
    if (cfg->status == OUT_DIFFERS && !cfg->digest)
        cg_strbuf_addf(out, "%s has no cigen-digest header: it was not generated by cigen, or its header was edited\n",
                       cfg->f.rel);
    if (cfg->status == OUT_DIFFERS && cfg->digest && cfg->hand_edited) {
        cg_strbuf where = CG_STRBUF_INIT;
        hand_edit_lines(p, cfg, &where, NULL, &explain_job);
        if (cfg->sources_changed)
            cg_strbuf_addf(out, "%s was edited by hand, and its sources changed since it was generated; the "
                           "differences below mix both: %s\n", cfg->f.rel, cg_strbuf_str(&where));
        else
            cg_strbuf_addf(out, "%s was edited by hand at %s; edit the sources instead (see `cigen explain %s`)\n",
                           cfg->f.rel, where.len ? where.buf : "its header", explain_job ? explain_job : "JOB");
        cg_strbuf_release(&where);
    }
    /* 2. the jobs */
    if (cfg->status == OUT_DIFFERS) {
        if (cfg->old_len > REPORT_MAX_BYTES || cfg->f.len > REPORT_MAX_BYTES) {
            cg_strbuf_adds(out, "jobs: not compared (over 64 MB); see the differences below\n");
        } else {
            cg_matrix m;
            cg_matrix_compare(cfg->old, cfg->old_len, cfg->f.data, cfg->f.len, p, &m);
            cg_matrix_print(&m, out);
            cg_matrix_release(&m);
        }
    }
    /* 3. the differences, bounded */
    size_t budget = full ? 0 : 200;
    for (size_t i = 0; i < o->n; i++) {
        const out_state *s = &o->v[i];
        if (s->status == OUT_MISSING)
            cg_strbuf_addf(out, "%s is missing\n", s->f.rel);
        if (s->status != OUT_DIFFERS)
            continue;
        char a[600], b[600];
        snprintf(a, sizeof a, "%s (committed)", s->f.rel);
        snprintf(b, sizeof b, "%s (from its sources)", s->f.rel);
        cg_diff_unified(&s->diff, s->old, s->old_len, s->f.data, s->f.len, a, b, 3, budget, out);
    }
    /* 4. the fix */
    if (cfg->hand_edited && cfg->status == OUT_DIFFERS)
        cg_strbuf_addf(out, "To fix it: make the change in the sources (`cigen explain %s` shows where a job "
                       "comes from), then run: %s --force\n",
                       explain_job ? explain_job : "JOB", p->manifest.regenerate);
    else
        cg_strbuf_addf(out, "To fix it, run: %s\n", p->manifest.regenerate);
}

static json_t *check_json(cg_project *p, outputs *o, bool full)
{
    json_t *root = json_object();
    json_t *files = json_array();
    bool drift = o->nstale > 0;
    for (size_t i = 0; i < o->n; i++) {
        const out_state *s = &o->v[i];
        json_t *f = json_object();
        json_object_set_new(f, "path", json_string(s->f.rel));
        json_object_set_new(f, "status", json_string(s->status == OUT_SAME ? "in_sync" :
                                                     s->status == OUT_MISSING ? "missing" : "differs"));
        drift = drift || s->status != OUT_SAME;
        if (i == 0) {
            json_object_set_new(f, "generated_by_cigen", json_boolean(s->status != OUT_DIFFERS || s->digest));
            json_object_set_new(f, "hand_edited", json_boolean(s->status == OUT_DIFFERS && s->hand_edited));
            json_object_set_new(f, "sources_changed", json_boolean(s->status == OUT_DIFFERS && s->sources_changed));
            json_t *ranges = json_array();
            const char *job;
            if (s->status == OUT_DIFFERS && s->hand_edited)
                hand_edit_lines(p, s, NULL, ranges, &job);
            json_object_set_new(f, "hand_edited_lines", ranges);
        }
        if (s->status == OUT_DIFFERS) {
            json_object_set_new(f, "lines_removed", json_integer((json_int_t)s->diff.removed));
            json_object_set_new(f, "lines_added", json_integer((json_int_t)s->diff.added));
            cg_strbuf d = CG_STRBUF_INIT;
            char a[600], b[600];
            snprintf(a, sizeof a, "%s (committed)", s->f.rel);
            snprintf(b, sizeof b, "%s (from its sources)", s->f.rel);
            cg_diff_unified(&s->diff, s->old, s->old_len, s->f.data, s->f.len, a, b, 3, full ? 0 : 200, &d);
            json_object_set_new(f, "diff", json_string(cg_strbuf_str(&d)));
            cg_strbuf_release(&d);
        }
        json_array_append_new(files, f);
    }
    json_object_set_new(root, "status", json_string(drift ? "out_of_sync" : "in_sync"));
    json_object_set_new(root, "files", files);
    json_t *stale = json_array();
    for (size_t i = 0; i < o->nstale; i++)
        json_array_append_new(stale, json_string(o->stale[i]));
    json_object_set_new(root, "stale", stale);
    const out_state *cfg = &o->v[0];
    if (cfg->status == OUT_DIFFERS && cfg->old_len <= REPORT_MAX_BYTES && cfg->f.len <= REPORT_MAX_BYTES) {
        cg_matrix m;
        cg_matrix_compare(cfg->old, cfg->old_len, cfg->f.data, cfg->f.len, p, &m);
        json_object_set_new(root, "jobs", cg_matrix_json(&m));
        cg_matrix_release(&m);
    } else {
        json_object_set_new(root, "jobs", json_null());
    }
    json_object_set_new(root, "fix", drift ? json_string(p->manifest.regenerate) : json_null());
    return root;
}

/* The line (1-based) of the first "<<<<<<< " git left in text, or 0. */
static size_t conflict_marker_line(const char *text, size_t len)
{
    size_t line = 1;
    for (size_t i = 0; i < len; line++) {
        if (len - i >= 8 && memcmp(text + i, "<<<<<<< ", 8) == 0)
            return line;
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break;
        i = (size_t)(nl - text) + 1;
    }
    return 0;
}

/* Whether text holds the end of the leading '#' lines (a line that is not one). */
static bool header_ends_in(const char *text, size_t len)
{
    for (size_t i = 0; i < len;) {
        if (text[i] != '#')
            return true;
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            return false;
        i = (size_t)(nl - text) + 1;
    }
    return false;
}

int cg_cmd_check(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"full-diff", no_argument, NULL, 'F'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"allow-special", no_argument, NULL, 'S'},
                                             CG_SELECTION_LONGOPTS, CG_GLOBAL_LONGOPTS,
                                             {0}};
    int c;
    bool full = false, json = false, allow_special = false;
    cg_global local = *g0, *g = &local;
    cg_selection sel, fallback;
    cg_selection_init(&sel);
    cg_selection_init(&fallback);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hq", longopts)) != -1) {
        if (cg_cli_selection_option(g, &sel, c, optarg))
            continue;
        if (c == 'S') {
            allow_special = true;
            continue;
        }
        if (c == 'h') {
            puts("usage: cigen check [--full-diff] [--json] [--allow-special] [--only PATTERN]...\n"
                 "                   [--also PATTERN]... [--overlay FILE]\n\n"
                 "Regenerates every output in memory and compares it with the file on disk.\n"
                 "When they differ it prints, in this order: one summary line (which files differ,\n"
                 "and whether config.yml was edited by hand or its sources changed since it was\n"
                 "generated); the jobs added, removed and changed, grouped by the dimension value\n"
                 "that explains them; a unified diff (200 changed lines at most unless --full-diff);\n"
                 "and the command that fixes it.  Stale diagrams (made by cigen, no longer\n"
                 "produced) count as differences.  --json prints the same report as one object.\n\n"
                 "A special-PR config (one made with --only/--also or special-pr.yml) is refused:\n"
                 "it must not land.  --allow-special accepts it when it matches its sources and\n"
                 "the selection recorded in its header, read again from the overlay file the\n"
                 "header names (a config whose overlay file is gone is out of sync); for the\n"
                 "pull request's own CI.\n\n"
                 "options:\n"
                 "  --full-diff       show the whole diff\n"
                 "  --json            the report as one JSON object\n"
                 "  --allow-special   accept a special-PR config\n"
                 CG_SELECTION_HELP
                 "\nExit status: 0 in sync, 1 out of sync, 2 broken sources or bad usage.");
            cg_selection_release(&sel);
            return 0;
        }
        if (c == 'F')
            full = true;
        else if (c == 'j')
            json = true;
        else {
            cg_selection_release(&sel);
            return CG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: check takes no arguments ('%s')\n", argv[optind]);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    p.draw_diagrams = true;
    /* a large config is compared with the file on disk as it is rendered,
     * never held whole; only a difference renders it again, for the report */
    stream_out S;
    cg_config_sink sink;
    stream_start(&p, &S, &sink, NULL);
    int rc = cg_cli_build(g, &p, true);
    /* the committed config may be a special-PR config: with --allow-special,
     * check it against the selection its header records */
    bool committed_special = false;
    char *overlay_gone = NULL;
    if (rc == 0) {
        char *old = NULL;
        size_t old_len = 0;
        cg_error e2;
        cg_error_init(&e2);
        /* only the header matters: never hold a large config twice (the
         * whole file only when its header is longer than the head read) */
        size_t head = 1 << 16;
        int r = cg_read_output_head(p.root, p.manifest.output, NULL, "read", head, &old, &old_len, &e2);
        if (r == 0 && old_len == head && !header_ends_in(old, old_len)) {
            free(old);
            old = NULL;
            r = cg_read_output(p.root, p.manifest.output, NULL, "read", &old, &old_len, &e2);
        }
        if (r == 0)
            committed_special = cg_selection_from_header(&fallback, old, old_len);
        free(old);
        if (committed_special && allow_special && cg_selection_empty(&p.selection)) {
            /* a selection read from an overlay file is read from it again
             * (a path leaving the project is refused then); when the file is
             * gone, the config must be regenerated */
            char *data = NULL;
            size_t len;
            if (fallback.overlay &&
                cg_check_project_path(fallback.overlay, &(cg_pos){0}, "the overlay path", &e2) == 0 &&
                cg_read_source(p.root, fallback.overlay, NULL, CG_DEFAULT_MAX_BYTES, &data, &len, true, &e2) == 1)
                overlay_gone = cg_xstrdup(fallback.overlay);
            free(data);
            if (!overlay_gone) {
                if (fallback.overlay)
                    local.opt.overlay = fallback.overlay, local.opt.no_overlay = false;
                else
                    local.opt.fallback = &fallback;
                cg_project_free(&p);
                stream_release(&S);
                cg_project_init(&p);
                p.draw_diagrams = true;
                stream_start(&p, &S, &sink, NULL);
                rc = cg_cli_build(g, &p, true);
            }
        }
        cg_error_release(&e2);
    }
    if (rc != 0) {
        cg_project_free(&p);
        stream_release(&S);
        cg_selection_release(&sel);
        cg_selection_release(&fallback);
        free(overlay_gone);
        return rc;
    }
    size_t nbad = p.lint.nerrors + (g->opt.strict ? p.lint.nwarnings : 0);
    if (nbad) {
        cg_strbuf out = CG_STRBUF_INIT;
        cg_lint_print(&p.lint, &out);
        fputs(cg_strbuf_str(&out), stderr);
        fprintf(stderr, "cigen: error: the sources make a config with %zu lint error%s%s\n", nbad,
                nbad == 1 ? "" : "s", p.lint.nwarnings && g->opt.strict ? " (warnings count as errors with --strict)" : "");
        cg_strbuf_release(&out);
        cg_project_free(&p);
        stream_release(&S);
        cg_selection_release(&sel);
        cg_selection_release(&fallback);
        free(overlay_gone);
        return CG_EXIT_ERROR;
    }
    bool special_active = !cg_selection_empty(&p.selection);
    cg_strbuf special_note = CG_STRBUF_INIT;
    if (!allow_special && (special_active || committed_special)) {
        cg_strbuf args = CG_STRBUF_INIT;
        cg_selection_args(special_active ? &p.selection : &fallback, &args);
        if (special_active)
            cg_strbuf_addf(&special_note, "cigen: a special-PR selection is in force (%s, from %s): the config "
                           "it makes is for one pull request; remove the selection and run %s before landing "
                           "(a pull request's own CI may pass --allow-special)\n",
                           args.buf, p.selection.source, p.manifest.regenerate);
        else
            cg_strbuf_addf(&special_note, "cigen: %s is a special-PR config (%s); regenerate without it before "
                           "landing: %s\n", p.manifest.output, args.buf, p.manifest.regenerate);
        cg_strbuf_release(&args);
    } else if (overlay_gone) {
        cg_strbuf_addf(&special_note, "cigen: %s was made from %s, which is gone: run %s\n", p.manifest.output,
                       overlay_gone, p.manifest.regenerate);
    }
    /* a committed special config refused: the fix is to regenerate, and a
     * diff against the whole matrix would only bury it */
    bool report = !special_note.len || special_active || overlay_gone;
    cg_error err;
    cg_error_init(&err);
    outputs o;
    memset(&o, 0, sizeof o);
    const stream_out *streamed = S.done ? &S : NULL;
    if (streamed && S.differs) {
        p.sink = NULL;
        streamed = NULL;
        rc = cg_project_render(&p, &err);
    }
    if (rc != 0 || collect(&p, &o, "compare", streamed, &err) != 0) {
        cg_cli_print_error(&err);
        rc = CG_EXIT_ERROR;
    } else {
        size_t ndiff = o.nstale;
        for (size_t i = 0; i < o.n; i++)
            ndiff += o.v[i].status != OUT_SAME;
        rc = ndiff || special_note.len ? CG_EXIT_DIFF : 0;
        if (json) {
            json_t *j = check_json(&p, &o, full);
            json_t *sp = json_object();
            cg_strbuf args = CG_STRBUF_INIT;
            cg_selection_args(special_active ? &p.selection : &fallback, &args);
            json_object_set_new(sp, "in_force", json_boolean(special_active));
            json_object_set_new(sp, "committed", json_boolean(committed_special));
            json_object_set_new(sp, "allowed", json_boolean(allow_special));
            json_object_set_new(sp, "selection", args.len ? json_string(args.buf) : json_null());
            json_object_set_new(sp, "overlay_gone", overlay_gone ? json_string(overlay_gone) : json_null());
            json_object_set_new(j, "special", sp);
            if (special_note.len)
                json_object_set_new(j, "status", json_string("out_of_sync"));
            cg_strbuf_release(&args);
            char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            puts(s);
            free(s);
            json_decref(j);
        } else if (rc != 0 || !g->quiet) {
            cg_strbuf out = CG_STRBUF_INIT;
            fputs(cg_strbuf_str(&special_note), stdout);
            if (report && (ndiff || !special_note.len))
                check_text(&p, &o, full, &out);
            fwrite(cg_strbuf_str(&out), 1, out.len, stdout); /* whatever bytes it holds */
            cg_strbuf_release(&out);
        }
    }
    outputs_release(&o);
    cg_error_release(&err);
    cg_project_free(&p);
    stream_release(&S);
    cg_strbuf_release(&special_note);
    cg_selection_release(&sel);
    cg_selection_release(&fallback);
    free(overlay_gone);
    return rc;
}

/* ---- cigen generate ---- */

/* Generated workflows plus the ones fragments hold verbatim. */
static size_t count_workflows(const cg_project *p)
{
    size_t n = p->manifest.nworkflows;
    for (size_t i = 0; i < p->nfragments; i++) {
        json_t *w = json_object_get(cg_doc_root(p->fragments[i].doc), "workflows");
        if (json_is_object(w))
            n += json_object_size(w) - (json_object_get(w, "version") ? 1 : 0);
    }
    return n;
}

/* Removes what killed runs left in the folders cigen writes to. */
static void remove_stale_temps(const cg_project *p)
{
    const char *out = p->manifest.output;
    const char *slash = strrchr(out, '/');
    char *dir = slash ? cg_xstrndup(out, (size_t)(slash - out)) : cg_xstrdup(".");
    cg_remove_stale_temps(p->root, dir);
    free(dir);
    if (p->manifest.diagrams)
        cg_remove_stale_temps(p->root, p->manifest.diagrams);
}

int cg_cmd_generate(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"force", no_argument, NULL, 'f'},
                                             {"werror", no_argument, NULL, 'W'},
                                             CG_SELECTION_LONGOPTS, CG_GLOBAL_LONGOPTS,
                                             {0}};
    int c;
    bool force = false, werror = false;
    cg_global local = *g0, *g = &local;
    cg_selection sel;
    cg_selection_init(&sel);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hfq", longopts)) != -1) {
        if (cg_cli_selection_option(g, &sel, c, optarg))
            continue;
        if (c == 'h') {
            puts("usage: cigen generate [--force] [--werror] [--only PATTERN]... [--also PATTERN]...\n"
                 "                      [--overlay FILE]\n\n"
                 "Writes config.yml and the diagrams from the sources the manifest names.  Every\n"
                 "output is written to a temporary file first and renamed into place only when\n"
                 "all of them are ready; on any error no output changes.  Unchanged files are not\n"
                 "touched; diagrams cigen made that the sources no longer produce are removed.\n"
                 "Prints one line: jobs, workflows, bytes, and what changed (+added, -removed jobs).\n\n"
                 "A config.yml that was edited by hand (its body no longer matches the digest in its\n"
                 "header) is not overwritten: cigen shows the edits and exits 1.  --force\n"
                 "overwrites it anyway (the edits are lost: make them in the sources).\n\n"
                 "options:\n"
                 "  --force           overwrite a hand-edited config.yml\n"
                 "  --werror          lint warnings are errors too (see `cigen lint`)\n"
                 CG_SELECTION_HELP
                 "\nA config with lint errors is never written.\n"
                 "\nExit status: 0 written or up to date, 1 refused (hand edits), 2 broken sources\n"
                 "(including lint errors).");
            cg_selection_release(&sel);
            return 0;
        }
        if (c == 'f') {
            force = true;
            continue;
        }
        if (c == 'W') {
            werror = true;
            continue;
        }
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: generate takes no arguments ('%s')\n", argv[optind]);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    p.draw_diagrams = true;
    int rc = cg_cli_build(g, &p, false);
    cg_selection_release(&sel);
    if (rc != 0) {
        cg_project_free(&p);
        return rc;
    }
    /* leftovers of a killed run go first: never after staging, which would
     * remove this run's own temporary files (a large config is staged while
     * it is rendered) */
    remove_stale_temps(&p);
    cg_outputs outs;
    cg_outputs_init(&outs, p.root);
    stream_out S;
    cg_config_sink sink;
    stream_start(&p, &S, &sink, &outs);
    rc = cg_cli_render(&p);
    if (rc == 0 && p.lint.n) {
        cg_strbuf out = CG_STRBUF_INIT;
        cg_lint_print(&p.lint, &out);
        fputs(cg_strbuf_str(&out), stderr);
        cg_strbuf_release(&out);
    }
    werror = werror || g->opt.strict;
    size_t nbad = rc == 0 ? p.lint.nerrors + (werror ? p.lint.nwarnings : 0) : 0;
    if (nbad)
        fprintf(stderr, "cigen: error: not writing %s: %zu lint error%s%s\n", p.manifest.output, nbad,
                nbad == 1 ? "" : "s", werror && p.lint.nwarnings ? " (warnings count as errors with --werror or --strict)" : "");
    if (rc != 0 || nbad) {
        cg_outputs_release(&outs);
        stream_release(&S);
        cg_project_free(&p);
        return CG_EXIT_ERROR;
    }
    cg_error err;
    cg_error_init(&err);
    outputs o;
    memset(&o, 0, sizeof o);
    rc = collect(&p, &o, "write", S.done ? &S : NULL, &err);
    if (rc == 0 && S.done && o.v[0].status == OUT_DIFFERS && o.v[0].hand_edited && !force) {
        /* the refusal shows the edits: render again, in memory, for the diff */
        cg_outputs_release(&outs);
        cg_outputs_init(&outs, p.root);
        outputs_release(&o);
        memset(&o, 0, sizeof o);
        p.sink = NULL;
        rc = cg_project_render(&p, &err);
        if (rc == 0)
            rc = collect(&p, &o, "write", NULL, &err);
    }
    if (rc != 0) {
        cg_cli_print_error(&err);
        cg_outputs_release(&outs);
        stream_release(&S);
        outputs_release(&o);
        cg_error_release(&err);
        cg_project_free(&p);
        return CG_EXIT_ERROR;
    }
    const out_state *cfg = &o.v[0];
    if (cfg->status == OUT_DIFFERS && cfg->hand_edited && !force) {
        cg_strbuf out = CG_STRBUF_INIT;
        const char *job;
        size_t marker = cfg->old ? conflict_marker_line(cfg->old, cfg->old_len) : 0;
        if (marker) {
            /* a merge left git's markers in it: a diff of them helps nobody */
            printf("cigen: %s holds merge-conflict markers (line %zu); resolve the sources, then run %s --force\n",
                   cfg->f.rel, marker, p.manifest.regenerate);
        } else {
            if (cfg->digest) {
                hand_edit_lines(&p, cfg, &out, NULL, &job);
                printf("cigen: %s was edited by hand at %s; refusing to overwrite it\n", cfg->f.rel,
                       out.len ? out.buf : "its header");
            } else {
                printf("cigen: %s was not written by cigen (it has no cigen-digest header); refusing to overwrite "
                       "it\n", cfg->f.rel);
            }
            cg_strbuf_reset(&out);
            char a[600], b[600];
            snprintf(a, sizeof a, "%s (on disk)", cfg->f.rel);
            snprintf(b, sizeof b, "%s (from its sources)", cfg->f.rel);
            cg_diff_unified(&cfg->diff, cfg->old, cfg->old_len, cfg->f.data, cfg->f.len, a, b, 3, 200, &out);
            fwrite(cg_strbuf_str(&out), 1, out.len, stdout);
            printf("Make the change in the sources instead, or run with --force to overwrite %s.\n", cfg->f.rel);
        }
        cg_strbuf_release(&out);
        cg_outputs_release(&outs);
        stream_release(&S);
        outputs_release(&o);
        cg_error_release(&err);
        cg_project_free(&p);
        return CG_EXIT_DIFF;
    }
    size_t written = 0;
    for (size_t i = 0; i < o.n && rc == 0; i++) {
        const out_state *s = &o.v[i];
        if (i == 0 && !s->f.data) {
            /* streamed: staged already when it changed */
            written += s->status != OUT_SAME;
            continue;
        }
        if (s->status == OUT_SAME)
            continue;
        if (cg_outputs_stage(&outs, s->f.rel, s->f.data, s->f.len, &s->f.ref, &err) != 0)
            rc = CG_EXIT_ERROR;
        written++;
    }
    for (size_t i = 0; i < o.nstale && rc == 0; i++)
        cg_outputs_remove(&outs, o.stale[i]);
    if (rc == 0 && cg_outputs_commit(&outs, &err) != 0)
        rc = CG_EXIT_ERROR;
    cg_outputs_release(&outs);
    if (rc != 0) {
        cg_cli_print_error(&err);
    } else if (!g->quiet) {
        size_t nw = count_workflows(&p);
        cg_strbuf what = CG_STRBUF_INIT;
        if (cfg->status == OUT_MISSING)
            cg_strbuf_adds(&what, "written");
        else if (cfg->status == OUT_SAME)
            cg_strbuf_adds(&what, written ? "unchanged" : "already up to date");
        else if (!cfg->f.data || cfg->old_len > REPORT_MAX_BYTES || cfg->f.len > REPORT_MAX_BYTES)
            cg_strbuf_adds(&what, "written");
        else {
            cg_matrix m;
            cg_matrix_compare(cfg->old, cfg->old_len, cfg->f.data, cfg->f.len, &p, &m);
            cg_strbuf_adds(&what, "written (");
            if (m.valid)
                cg_matrix_summary(&m, &what);
            else
                cg_strbuf_addf(&what, "jobs not compared: %s", m.problem ? m.problem : "unreadable");
            cg_strbuf_adds(&what, ")");
            cg_matrix_release(&m);
        }
        size_t njobs = 0; /* a special-PR selection may cull some */
        for (size_t k = 0; k < p.jobs.n; k++)
            njobs += p.jobs.v[k].workflows != 0;
        printf("cigen: %s: %zu job%s in %zu workflow%s, %zu bytes; %s\n", p.manifest.output, njobs,
               njobs == 1 ? "" : "s", nw, nw == 1 ? "" : "s", p.config_size, what.buf);
        cg_strbuf_release(&what);
        size_t ndiag = 0;
        for (size_t i = 1; i < o.n; i++)
            ndiag += o.v[i].status != OUT_SAME;
        if (ndiag)
            printf("cigen: %zu diagram%s written to %s/\n", ndiag, ndiag == 1 ? "" : "s", p.manifest.diagrams);
        for (size_t i = 0; i < o.nstale; i++)
            printf("cigen: removed stale %s\n", o.stale[i]);
        if (!cg_selection_empty(&p.selection)) {
            cg_strbuf args = CG_STRBUF_INIT;
            cg_selection_args(&p.selection, &args);
            printf("cigen: this is a special-PR config (%s, from %s): do not land it; `cigen check` refuses "
                   "it without --allow-special\n", args.buf, p.selection.source);
            cg_strbuf_release(&args);
        }
    }
    stream_release(&S);
    outputs_release(&o);
    cg_error_release(&err);
    cg_project_free(&p);
    return rc;
}
