/* What every command shares: options, building the project, printing
 * errors, the list of outputs (cmd/cli.h). */
#include "cmd/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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

void cg_cli_mark_text(const cg_model *m, const cg_mark *mk, cg_strbuf *out)
{
    const cg_selection *s = &m->selection;
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

bool cg_cli_selection_option(cg_global *g, cg_selection *sel, int c, const char *arg)
{
    if (c == CG_OPT_ONLY || c == CG_OPT_ALSO) {
        cg_selection_add(sel, c == CG_OPT_ONLY, arg, NULL);
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
    if (p->m.warnings.count)
        fputs(cg_strbuf_str(&p->m.warnings.text), stderr);
    if (rc != 0)
        cg_cli_print_error(&err);
    cg_error_release(&err);
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}

size_t cg_cli_outputs(cg_project *p, cg_output_file *out, size_t max)
{
    size_t n = 0;
    if (n < max)
        out[n++] = (cg_output_file){p->m.manifest.output, p->out.config.buf ? p->out.config.buf : "", p->out.config.len,
                                    p->m.manifest.output_pos};
    const cg_dot_output *d;
    size_t nd = cg_project_diagrams(p, &d);
    for (size_t i = 0; i < nd && n < max; i++)
        out[n++] = (cg_output_file){d[i].rel, d[i].data, d[i].len, p->m.manifest.diagrams_pos};
    return n;
}

size_t cg_cli_output_count(cg_project *p)
{
    const cg_dot_output *d;
    return 1 + cg_project_diagrams(p, &d);
}

