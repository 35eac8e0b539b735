/* What every command shares: options, building the project, printing
 * errors, the list of outputs (cmd/cli.h). */
#include "cmd/cli.h"

#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lang/yamlload.h"
#include "render/setup.h"

int cg_cli_getopt(cg_global *g, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == CG_OPT_STRICT)
            g->opt.strict = true;
        else if (c == 'q')
            g->quiet = true;
        else if (c == 'v')
            g->verbose = true;
        else {
            if (c == '?' || c == ':') /* getopt said what was wrong */
                fprintf(stderr, "Try '%s --help'.\n", argv[0]);
            return c;
        }
    }
}

void cg_cli_mark_text(const cg_model *m, const cg_mark *mk, cg_strbuf *out)
{
    const cg_special *s = &m->selection;
    switch (mk->kind) {
    case CG_MARK_SELECTED: {
        bool only = (size_t)mk->pattern < s->nonly;
        size_t i = only ? (size_t)mk->pattern : (size_t)mk->pattern - s->nonly;
        const cg_pos *pos = only ? &s->only_pos[i] : &s->also_pos[i];
        cg_strbuf_addf(out, "selected by %s '%s'", only ? "--only" : "--also", only ? s->only[i] : s->also[i]);
        if (pos->file)
            cg_strbuf_addf(out, " (%s:%u)", pos->file, pos->line);
        break;
    }
    case CG_MARK_PULLED:
        cg_strbuf_addf(out, "pulled in: '%s' requires it", mk->by);
        break;
    case CG_MARK_KEPT:
        cg_strbuf_adds(out, "kept: its workflow's 'keep' names it");
        break;
    case CG_MARK_CULLED:
        if (mk->by)
            cg_strbuf_addf(out, "culled: it requires '%s', which the selection culled", mk->by);
        else
            cg_strbuf_adds(out, "culled: no --only pattern selects it");
        break;
    default:
        cg_strbuf_adds(out, "untouched: not selected, where it was");
    }
}

void cg_cli_mark_word(const cg_mark *mk, cg_strbuf *out)
{
    static const char *const w[] = {"-", "selected", "pulled:", "kept", "culled"};
    cg_strbuf_adds(out, w[mk->kind]);
    if (mk->kind == CG_MARK_PULLED)
        cg_strbuf_adds(out, mk->by);
}

bool cg_cli_special_option(cg_global *g, cg_special *sel, int c, const char *arg)
{
    if (c == CG_OPT_ONLY || c == CG_OPT_ALSO) {
        cg_special_add(sel, c == CG_OPT_ONLY, arg, NULL);
        g->opt.selection = sel;
        return true;
    }
    if (c == CG_OPT_ALLOW_PROTECTED) {
        sel->allow_protected = true;
        g->opt.selection = sel;
        return true;
    }
    if (c == CG_OPT_PR_BRANCH) {
        free(sel->branch);
        sel->branch = cg_xstrdup(arg);
        g->opt.selection = sel;
        return true;
    }
    if (c == CG_OPT_OVERLAY) {
        g->opt.overlay = arg;
        return true;
    }
    return false;
}

void cg_cli_verbose(const cg_global *g, const char *fmt, ...)
{
    if (!g->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("cigen: verbose: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

typedef struct both_arg {
    void (*f)(void *);
    void *arg;
} both_arg;

static void *run_second(void *v)
{
    both_arg *q = v;
    q->f(q->arg);
    return NULL;
}

void cg_cli_run_both(void (*f)(void *), void *a, void *b)
{
    both_arg q = {f, b};
    pthread_t th;
    if (!cg_threads_allowed() || pthread_create(&th, NULL, run_second, &q) != 0) {
        f(a);
        f(b);
        return;
    }
    f(a);
    pthread_join(th, NULL);
}

double cg_cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* -v: the sources the model read, and what it did with them */
static void verbose_model(const cg_global *g, const cg_project *p, double load)
{
    const cg_model *m = &p->m;
    for (size_t i = 0; i < m->ndocs; i++) {
        size_t len;
        cg_doc_text(m->docs[i], &len);
        const char *kind = cg_model_source_kind(m, cg_doc_file(m->docs[i]));
        cg_cli_verbose(g, "read %s (%s, %zu bytes)", cg_doc_file(m->docs[i]), kind ? kind : "a source", len);
    }
    for (size_t i = 0; i < m->nfragments; i++) {
        size_t len;
        cg_doc_text(m->fragments[i].doc, &len);
        cg_cli_verbose(g, "read %s (a fragment, %zu bytes)", cg_doc_file(m->fragments[i].doc), len);
    }
    if (cg_special_empty(&m->selection))
        cg_cli_verbose(g, "no special-PR selection (no --only/--also, no %s)",
                       m->opt.overlay ? m->opt.overlay : CG_DEFAULT_OVERLAY);
    else
        cg_cli_verbose(g, "special-PR selection from %s", m->selection.source ? m->selection.source : "the flags");
    size_t ncells = 0;
    for (size_t t = 0; t < m->ntrees; t++)
        ncells += m->cells[t].n;
    cg_cli_verbose(g, "loaded in %.3f s: %zu tree%s, %zu cell%s, %zu job%s", load, m->ntrees,
                   m->ntrees == 1 ? "" : "s", ncells, ncells == 1 ? "" : "s", m->jobs.n, m->jobs.n == 1 ? "" : "s");
}

void cg_cli_print_error(const cg_error *err)
{
    if (err->set)
        fprintf(stderr, "%s\n", cg_strbuf_str(&err->text));
}

int cg_cli_render(const cg_global *g, cg_project *p)
{
    cg_error err;
    cg_error_init(&err);
    double t0 = cg_cli_now();
    int rc = cg_project_render(p, &err);
    if (rc == 0)
        cg_cli_verbose(g, "rendered %s in %.3f s: %zu bytes, %zu lint finding%s", p->m.manifest.output,
                       cg_cli_now() - t0, p->out.config.len, p->lint.n, p->lint.n == 1 ? "" : "s");
    if (rc != 0)
        cg_cli_print_error(&err);
    cg_error_release(&err);
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}

int cg_cli_build(const cg_global *g, cg_project *p, bool render)
{
    cg_error err;
    cg_error_init(&err);
    double t0 = cg_cli_now();
    int rc = cg_project_load(p, &g->opt, &err);
    if (rc == 0 && g->verbose)
        verbose_model(g, p, cg_cli_now() - t0);
    if (rc == 0 && render) {
        t0 = cg_cli_now();
        rc = cg_project_render(p, &err);
        if (rc == 0)
            cg_cli_verbose(g, "rendered %s in %.3f s: %zu bytes, %zu lint finding%s", p->m.manifest.output,
                           cg_cli_now() - t0, p->out.config.len, p->lint.n, p->lint.n == 1 ? "" : "s");
    }
    /* -q silences warnings, unless --strict made them errors */
    if (p->m.warnings.count && (!g->quiet || g->opt.strict || rc != 0))
        fputs(cg_strbuf_str(&p->m.warnings.text), stderr);
    if (rc != 0)
        cg_cli_print_error(&err);
    cg_error_release(&err);
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}

int cg_cli_build_walk(const cg_global *g, cg_project *p, const cg_walker *w)
{
    if (g->verbose || g->opt.selection || g->opt.overlay)
        return 1;
    cg_options o = g->opt;
    o.walker = w;
    cg_error err;
    cg_error_init(&err);
    int rc = cg_project_load(p, &o, &err);
    cg_error_release(&err);
    p->m.opt.walker = NULL; /* w is the caller's */
    if (rc != 0) {
        cg_project_release(p);
        cg_project_init(p);
        return 1;
    }
    return 0;
}

void cg_cli_warnings(const cg_global *g, const cg_project *p)
{
    if (p->m.warnings.count && (!g->quiet || g->opt.strict))
        fputs(cg_strbuf_str(&p->m.warnings.text), stderr);
}

size_t cg_cli_outputs(cg_project *p, cg_output_file *out, size_t max)
{
    size_t n = 0;
    if (n < max)
        out[n++] = (cg_output_file){p->m.manifest.output, p->out.config.buf ? p->out.config.buf : "", p->out.config.len,
                                    p->m.manifest.output_pos};
    const cg_manifest *m = &p->m.manifest;
    if (m->pipeline.setup && n < max) {
        /* dynamic mode: the setup config beside the continuation */
        if (!p->setup.len)
            cg_setup_render(m, p->m.fragments, p->m.nfragments, p->m.opt.manifest ? p->m.opt.manifest : "cigen.yml",
                            p->m.sources_digest, &p->setup);
        out[n++] = (cg_output_file){m->pipeline.setup, p->setup.buf, p->setup.len, m->pipeline.setup_pos};
    }
    const cg_dot_output *d;
    size_t nd = cg_project_diagrams(p, &d);
    for (size_t i = 0; i < nd && n < max; i++)
        out[n++] = (cg_output_file){d[i].rel, d[i].data, d[i].len, p->m.manifest.diagrams_pos};
    return n;
}

size_t cg_cli_output_count(cg_project *p)
{
    const cg_dot_output *d;
    return 1 + (p->m.manifest.pipeline.setup != NULL) + cg_project_diagrams(p, &d);
}


const char *cg_cli_shown(const char *s)
{
    static char *ring[8];
    static unsigned next;
    unsigned i = next++ % 8;
    free(ring[i]);
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_escape_line(&sb, s ? s : "", s ? strlen(s) : 0);
    ring[i] = cg_strbuf_detach(&sb, NULL);
    return ring[i];
}
