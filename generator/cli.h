/* cli — the commands.  Each takes the arguments after its name and returns
 * the exit status: 0 success, 1 drift or findings, 2 broken sources or bad
 * usage. */
#ifndef CIGEN_CLI_H
#define CIGEN_CLI_H

#include <stdio.h>

#include "project.h"

enum { CG_EXIT_OK = 0, CG_EXIT_DIFF = 1, CG_EXIT_ERROR = 2 };

typedef struct cg_global {
    cg_options opt;
    bool quiet;
    bool color;  /* reserved */
} cg_global;

int cg_cmd_generate(const cg_global *g, int argc, char **argv);
int cg_cmd_check(const cg_global *g, int argc, char **argv);
int cg_cmd_list(const cg_global *g, int argc, char **argv);
int cg_cmd_explain(const cg_global *g, int argc, char **argv);
int cg_cmd_graph(const cg_global *g, int argc, char **argv);
int cg_cmd_merge_driver(const cg_global *g, int argc, char **argv);

/* Loads and renders the project; prints the error (and warnings) itself.
 * Returns 0, or CG_EXIT_ERROR. */
int cg_cli_build(const cg_global *g, cg_project *p, bool render);

/* Prints an error record to stderr. */
void cg_cli_print_error(const cg_error *err);

/* One output of the project: where it goes and its bytes. */
typedef struct cg_output_file {
    const char *rel;
    const char *data;
    size_t len;
    cg_pos ref;
} cg_output_file;

/* The files the manifest owns, as the sources produce them now. */
size_t cg_cli_outputs(cg_project *p, cg_output_file *out, size_t max);

#endif
