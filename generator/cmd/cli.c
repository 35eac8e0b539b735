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

