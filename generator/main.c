/* cigen — the command line. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "cmd/cli.h"

static const char usage[] =
    "usage: cigen [-C DIR] [-m MANIFEST] [--strict] [-q | -v] COMMAND [ARGS]\n"
    "\n"
    "Generates a CircleCI config.yml from a declared CI matrix, and checks that the\n"
    "committed config.yml still matches its sources.\n"
    "\n"
    "commands:\n"
    "  generate         write config.yml (and the diagrams) from the sources\n"
    "  check            exit 1 when a committed output differs from its sources\n"
    "  list             list the generated jobs with their dimension values\n"
    "  explain JOB      show how a job came to be (tree path, variables, template)\n"
    "  graph            draw a diagram of a tree or a workflow (DOT, SVG, PNG)\n"
    "  lint             find what CircleCI would reject, at the source that caused it\n"
    "  coverage         check that a tier covers every pair of values (pairwise)\n"
    "  merge-driver     git merge driver: regenerate outputs from the merged sources\n"
    "  init             start a project here: manifest, tree, fragment, regenerate.sh\n"
    "  import FILE      a project that generates FILE, an existing config (proved EQUAL)\n"
    "  select           the jobs of one pipeline (branch, tag, commit message, changed files,\n"
    "                   schedule), written as a continuation config (dynamic configuration)\n"
    "\n"
    "options:\n"
    "  -C, --directory DIR   run as if started in DIR (the project folder; nothing\n"
    "                        outside it is read, written or shown)\n"
    "  -m, --manifest FILE   the manifest, relative to DIR (default: cigen.yml)\n"
    "      --strict          treat every warning as an error (about the sources and lint's;\n"
    "                        list jobs kept without a workflow under the manifest's idle_jobs)\n"
    "  -q, --quiet           print only errors and reports (no summary, no warnings)\n"
    "  -v, --verbose         also say, on stderr, what was read, skipped and written,\n"
    "                        with timings\n"
    "  -h, --help            show this help; `cigen COMMAND --help` for a command\n"
    "      --version         print the version\n"
    "--strict, -q and -v may also follow the command (`cigen check --strict`).\n"
    "Shell completion for bash and zsh: completion/ (installed by `make install`).\n"
    "\n"
    "exit status: 0 success, 1 outputs out of sync (check) or findings,\n"
    "             2 broken sources or bad usage.\n";

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"directory", required_argument, NULL, 'C'},
        {"manifest", required_argument, NULL, 'm'},
        {"strict", no_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {0},
    };
    cg_global g;
    memset(&g, 0, sizeof g);
    int c;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "+C:m:qvh", longopts, NULL)) != -1) {
        switch (c) {
        case 'C': g.opt.dir = optarg; break;
        case 'm': g.opt.manifest = optarg; break;
        case 'S': g.opt.strict = true; break;
        case 'q': g.quiet = true; break;
        case 'v': g.verbose = true; break;
        case 'h': fputs(usage, stdout); return 0;
        case 'V': printf("cigen %s\n", CIGEN_VERSION); return 0;
        default: fputs("Try 'cigen --help'.\n", stderr); return CG_EXIT_ERROR;
        }
    }
    if (optind >= argc) {
        fputs(usage, stderr);
        return CG_EXIT_ERROR;
    }
    const char *cmd = argv[optind];
    int cargc = argc - optind;
    char **cargv = argv + optind;
    /* getopt's messages then name the command: "cigen check: unrecognized ..." */
    char name[64];
    snprintf(name, sizeof name, "cigen %s", cmd);
    cargv[0] = name;
    if (strcmp(cmd, "generate") == 0)
        return cg_cmd_generate(&g, cargc, cargv);
    if (strcmp(cmd, "check") == 0)
        return cg_cmd_check(&g, cargc, cargv);
    if (strcmp(cmd, "list") == 0)
        return cg_cmd_list(&g, cargc, cargv);
    if (strcmp(cmd, "explain") == 0)
        return cg_cmd_explain(&g, cargc, cargv);
    if (strcmp(cmd, "graph") == 0) return cg_cmd_graph(&g, cargc, cargv);
    if (strcmp(cmd, "lint") == 0)
        return cg_cmd_lint(&g, cargc, cargv);
    if (strcmp(cmd, "coverage") == 0)
        return cg_cmd_coverage(&g, cargc, cargv);
    if (strcmp(cmd, "merge-driver") == 0)
        return cg_cmd_merge_driver(&g, cargc, cargv);
    if (strcmp(cmd, "init") == 0)
        return cg_cmd_init(&g, cargc, cargv);
    if (strcmp(cmd, "select") == 0)
        return cg_cmd_select(&g, cargc, cargv);
    if (strcmp(cmd, "import") == 0)
        return cg_cmd_import(&g, cargc, cargv);
    if (strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "cigen: error: unknown command '%s'\nTry 'cigen --help'.\n", cg_cli_shown(cmd));
    return CG_EXIT_ERROR;
}

/* A report that could not be written (a full disk, a closed pipe end) is a
 * failure, not a success with nothing said. */
int main(int argc, char **argv)
{
    /* past `ulimit -f` a write fails with EFBIG, said as an error (and the
     * temporary file removed), instead of the signal killing cigen mid-write */
    signal(SIGXFSZ, SIG_IGN);
    cg_alloc_init();
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cigen: error: cannot write to standard output: %s\n", strerror(errno));
        return CG_EXIT_ERROR;
    }
    return rc;
}
