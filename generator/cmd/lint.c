/* cigen lint — what CircleCI would reject, at the source that caused it. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "io/fsio.h"

int cg_cmd_lint(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"werror", no_argument, NULL, 'W'},
                                             CG_SPECIAL_LONGOPTS, CG_GLOBAL_LONGOPTS,
                                             {0}};
    bool json = false, werror = false;
    cg_global local = *g0, *g = &local;
    cg_special sel;
    cg_special_init(&sel);
    int c;
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqv", longopts)) != -1) {
        if (cg_cli_special_option(g, &sel, c, optarg))
            continue;
        switch (c) {
        case 'h':
            puts("usage: cigen lint [--json] [--werror] [--only PATTERN]... [--also PATTERN]...\n"
                 "                  [--overlay FILE] [--allow-protected] [--pr-branch NAME]\n\n"
                 "Checks the config the sources produce for what CircleCI would reject, and reports\n"
                 "each finding at the source that caused it (the template line, tree node or fragment\n"
                 "line), then at the generated line (config.yml:N when the file on disk is that\n"
                 "config; else \"line N of the config.yml these sources make (not written ...)\"):\n"
                 "  - workflows invoke defined jobs (or approvals, or jobs of declared orbs); requires\n"
                 "    name jobs of the same workflow (\"job\" or {job: status}); no cycles; no duplicate\n"
                 "    names; written entries of the shape CircleCI's schema wants;\n"
                 "  - parameters: only declared ones, of the declared type (string, boolean, integer,\n"
                 "    enum, executor, steps), and every one without a default; for jobs, commands\n"
                 "    and executors;\n"
                 "  - referenced commands and executors exist; unused jobs, commands and executors\n"
                 "    (warnings);\n"
                 "  - limits: the size with aliases expanded (limits.max_config_bytes, CircleCI's\n"
                 "    8 MB; a warning from 90%), jobs per workflow (max_jobs), nesting depth.\n"
                 "  - a dimension value holding whitespace that reaches a job name (a warning,\n"
                 "    at the value: map it in job_name's 'replace').\n"
                 "`cigen generate` runs the same checks and refuses to write a config with errors.\n\n"
                 "options:\n"
                 "  --json            the findings as a JSON array\n"
                 "  --werror          warnings count as errors (as with the global --strict)\n"
                 CG_SPECIAL_HELP
                 "\nExit status: 0 no errors, 1 errors (or warnings with --werror), 2 broken sources.");
            cg_special_release(&sel);
            return 0;
        case 'j': json = true; break;
        case 'W': werror = true; break;
        default: cg_special_release(&sel); return CG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: lint takes no arguments ('%s')\n", cg_cli_shown(argv[optind]));
        cg_special_release(&sel);
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    int rc = cg_cli_build(g, &p, true);
    cg_special_release(&sel);
    if (rc != 0) {
        cg_project_release(&p);
        return rc;
    }
    /* point at config.yml's lines only when the file holds this config */
    bool same = false;
    cg_error e;
    cg_error_init(&e);
    if (cg_output_matches(p.m.root, p.m.manifest.output, &p.m.manifest.output_pos, "lint",
                          p.out.config.buf ? p.out.config.buf : "", p.out.config.len, &same, &e) == 0)
        p.lint.output_on_disk = same;
    cg_error_release(&e);
    const cg_lint *l = &p.lint;
    if (json) {
        json_t *a = cg_lint_json(l);
        char *s = json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        puts(s);
        free(s);
        json_decref(a);
    } else {
        cg_strbuf out = CG_STRBUF_INIT;
        cg_lint_print(l, &out);
        fputs(cg_strbuf_str(&out), stdout);
        cg_strbuf_release(&out);
        if (!g->quiet || l->n)
            printf("cigen lint: %s: %zu error%s, %zu warning%s\n", p.m.manifest.output, l->nerrors,
                   l->nerrors == 1 ? "" : "s", l->nwarnings, l->nwarnings == 1 ? "" : "s");
    }
    rc = l->nerrors || ((werror || g->opt.strict) && l->nwarnings) ? CG_EXIT_DIFF : 0;
    cg_project_release(&p);
    return rc;
}
