/* The outputs against the files on disk (cmd/disk.h). */
#include "cmd/disk.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "io/fsio.h"
#include "io/paths.h"
#include "render/assemble.h"
#include "render/header.h"

void cg_disk_release(cg_disk *o)
{
    for (size_t i = 0; i < o->n; i++) {
        cg_unmap_output(o->v[i].old, o->v[i].old_len, o->v[i].old_mapped);
        cg_diff_release(&o->v[i].diff);
    }
    free(o->v);
    for (size_t i = 0; i < o->nstale; i++)
        free(o->stale[i]);
    free(o->stale);
}

static bool owned_stale_candidate(const cg_project *p, const char *rel)
{
    const char *root = p->m.root;
    char *data = NULL;
    size_t len = 0;
    cg_error err;
    cg_error_init(&err);
    bool owned = false;
    if (cg_read_output_head(root, rel, NULL, "read", 4096, &data, &len, &err) == 0)
        owned = cg_dot_is_generated_by(&p->m, data, len);
    free(data);
    cg_error_release(&err);
    return owned;
}

/* Files in the diagrams folder that cigen wrote but the sources no longer
 * produce. Only files starting with cigen's marker naming this manifest are
 * ever candidates. */
static void find_stale(cg_project *p, cg_disk *o)
{
    const char *dir = p->m.manifest.diagrams;
    if (!dir)
        return;
    char **names;
    size_t n;
    cg_list_names(p->m.root, dir, ".dot", &names, &n);
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

/* What is found of a file that differs: its diff (!header), or what its
 * digest header says (header). */
typedef struct differs_task {
    cg_disk_file *s;
    const cg_project *p;
    bool header;
} differs_task;

static void differs_run(void *v)
{
    differs_task *t = v;
    cg_disk_file *s = t->s;
    if (!t->header) {
        cg_diff_compute(s->old, s->old_len, s->f.data, s->f.len, &s->diff);
        return;
    }
    cg_header_info h;
    cg_header_parse(s->old, s->old_len, &h);
    s->digest = h.found;
    for (size_t k = 0; k < h.len; k++)
        s->header_lines += s->old[k] == '\n';
    if (h.found) {
        char body[41];
        cg_sha256_hex(s->old + h.len, s->old_len - h.len, body, 20);
        s->hand_edited = strcmp(body, h.body) != 0;
        s->sources_changed = strcmp(h.sources, t->p->m.sources_digest) != 0;
    } else {
        s->hand_edited = true;
    }
}

void cg_disk_unified(const cg_disk_file *s, const char *a_name, const char *b_name, size_t max_lines, cg_strbuf *out)
{
    cg_diff_unified(&s->diff, s->old, s->old_len, s->f.data, s->f.len, a_name, b_name, 3, max_lines, out);
}

void cg_disk_matrix(const cg_project *p, const cg_disk_file *s, cg_matrix *m)
{
    cg_matrix_compare(s->old, s->old_len, s->f.data, s->f.len, &p->m, m);
}

int cg_disk_collect(cg_project *p, cg_disk *o, const char *verb, cg_error *err)
{
    size_t max = cg_cli_output_count(p);
    cg_output_file *files = cg_xcalloc(max + 1, sizeof *files);
    size_t n = cg_cli_outputs(p, files, max);
    o->v = cg_xcalloc(n + 1, sizeof *o->v);
    for (size_t i = 0; i < n; i++) {
        /* never let an output replace a source, not even with --force */
        const char *kind = cg_model_source_kind(&p->m, files[i].rel);
        if (kind) {
            if (i == 0 || files[i].rel == p->m.manifest.pipeline.setup)
                cg_error_at(err, &files[i].ref, "'%s' '%s' is a source of the project (%s); choose another file",
                            i == 0 && p->m.manifest.pipeline.setup ? "continuation" : "output", files[i].rel, kind);
            else
                cg_error_at(err, &files[i].ref, "the diagram '%s' would replace a source of the project (%s); "
                            "choose another 'diagrams' folder", files[i].rel, kind);
            free(files);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        cg_disk_file *s = &o->v[o->n++];
        s->f = files[i];
        /* compare first without holding the old file: it is only read
         * whole when it differs, for the report */
        bool same;
        int r = cg_output_matches(p->m.root, files[i].rel, &files[i].ref, verb, s->f.data, s->f.len, &same, err);
        if (r == 0 && !same)
            r = cg_map_output(p->m.root, files[i].rel, &files[i].ref, verb, &s->old, &s->old_len, &s->old_mapped,
                              err);
        if (r < 0) {
            free(files);
            return -1;
        }
        if (r == 1) {
            s->status = CG_OUT_MISSING;
            continue;
        }
        if (same || (s->old_len == s->f.len && memcmp(s->old, s->f.data, s->f.len) == 0)) {
            s->status = CG_OUT_SAME;
            continue;
        }
        s->status = CG_OUT_DIFFERS;
        /* the configs carry a digest header (the continuation and the setup
         * config of a dynamic pipeline alike); diagrams do not: the diff
         * and the old body's digest, at once for a large file */
        differs_task diff = {s, p, false}, head = {s, p, true};
        if (i == 0 || files[i].rel == p->m.manifest.pipeline.setup) {
            if (s->old_len > ((size_t)1 << 20))
                cg_cli_run_both(differs_run, &diff, &head);
            else
                differs_run(&diff), differs_run(&head);
        } else {
            differs_run(&diff);
        }
    }
    free(files);
    find_stale(p, o);
    return 0;
}

/* The job whose generated lines are at `line` of the new config, or NULL. */
static const char *job_at(const cg_project *p, size_t line)
{
    const cg_linemap_entry *e = cg_linemap_find(&p->out.linemap, (uint32_t)line);
    return e && e->job >= 0 ? p->m.jobs.v[e->job].name : NULL;
}

/* "lines 120-134 (job x), 240" — the committed lines a hand edit touched. */
void cg_disk_hand_edits(const cg_project *p, const cg_disk_file *s, cg_strbuf *out, json_t *ranges,
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
        /* the line map is the main config's (not the setup config's) */
        bool mapped = s->f.rel == p->m.manifest.output;
        const char *job = mapped ? job_at(p, h->b_start + 1) : NULL;
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
        if (job) {
            cg_strbuf_addf(out, " (%s)", job);
        } else if (mapped) {
            /* a line copied from a fragment: where to make the edit instead */
            const cg_linemap_entry *e = cg_linemap_find(&p->out.linemap, (uint32_t)(h->b_start + 1));
            if (e && e->file && e->job < 0 && e->workflow < 0 && e->src_line)
                cg_strbuf_addf(out, " (from %s:%zu)", e->file, (size_t)e->src_line + (h->b_start + 1 - e->out_line));
        }
    }
    if (out && shown > 5)
        cg_strbuf_addf(out, " and %zu more places", shown - 5);
}

const char *cg_disk_state_word(const cg_disk_file *s)
{
    if (s->status == CG_OUT_MISSING)
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

bool cg_header_ends_in(const char *text, size_t len)
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


/* What FILE in folder dir is to project p (a source, its config), or NULL. */
static const char *project_file_kind(const cg_project *p, const char *dir, const char *base)
{
    char *real = realpath(dir, NULL);
    if (!real)
        return NULL;
    size_t rl = strlen(p->m.root);
    const char *kind = NULL;
    if (strncmp(real, p->m.root, rl) == 0 && (real[rl] == '/' || real[rl] == '\0')) {
        cg_strbuf rel = CG_STRBUF_INIT;
        if (real[rl] == '/')
            cg_strbuf_addf(&rel, "%s/", real + rl + 1);
        cg_strbuf_adds(&rel, base);
        const cg_manifest *m = &p->m.manifest;
        kind = cg_model_source_kind(&p->m, rel.buf);
        if (!kind && cg_path_same(rel.buf, m->output))
            kind = "the generated config";
        if (!kind && m->pipeline.setup && cg_path_same(rel.buf, m->pipeline.setup))
            kind = "the setup config";
        cg_strbuf_release(&rel);
    }
    free(real);
    return kind;
}

int cg_disk_write_one(const cg_project *p, const char *file, const char *data, size_t len, const char *what)
{
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    if (!*base) {
        fprintf(stderr, "cigen: error: -o wants a file name, not a folder ('%s')\n", cg_cli_shown(file));
        return CG_EXIT_ERROR;
    }
    char *dir = !slash ? cg_xstrdup(".") : slash == file ? cg_xstrdup("/") : cg_xstrndup(file, (size_t)(slash - file));
    const char *kind = project_file_kind(p, dir, base);
    if (kind) {
        fprintf(stderr, "cigen: error: -o '%s' is %s; write %s elsewhere\n", cg_cli_shown(file), kind, what);
        free(dir);
        return CG_EXIT_ERROR;
    }
    cg_outputs o;
    cg_outputs_init(&o, dir);
    cg_error err;
    cg_error_init(&err);
    cg_pos ref = {file, 0, 0};
    int rc = cg_outputs_stage(&o, base, data, len, &ref, &err) == 0 && cg_outputs_commit(&o, &err) == 0
                 ? 0 : CG_EXIT_ERROR;
    if (rc)
        cg_cli_print_error(&err);
    cg_outputs_release(&o);
    cg_error_release(&err);
    free(dir);
    return rc;
}
