/* cli — the commands.  Each takes the arguments after its name and returns
 * the exit status: 0 success, 1 drift or findings, 2 broken sources or bad
 * usage. */
#ifndef CIGEN_CLI_H
#define CIGEN_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "cmd/project.h"
#include "model/walk.h"

enum { CG_EXIT_OK = 0, CG_EXIT_DIFF = 1, CG_EXIT_ERROR = 2 };

/* Texts larger than this get a diff but no job-level report. */
#define CG_REPORT_MAX_BYTES ((size_t)64 << 20)

typedef struct cg_global {
    cg_options opt;
    bool quiet;   /* -q: no summary lines, no warnings */
    bool verbose; /* -v: what was read, skipped and written, with timings (stderr) */
    bool color;  /* reserved */
} cg_global;

int cg_cmd_generate(const cg_global *g, int argc, char **argv);
int cg_cmd_check(const cg_global *g, int argc, char **argv);
int cg_cmd_list(const cg_global *g, int argc, char **argv);
int cg_cmd_explain(const cg_global *g, int argc, char **argv);
int cg_cmd_graph(const cg_global *g, int argc, char **argv);
int cg_cmd_merge_driver(const cg_global *g, int argc, char **argv);
int cg_cmd_coverage(const cg_global *g, int argc, char **argv);
int cg_cmd_lint(const cg_global *g, int argc, char **argv);
int cg_cmd_init(const cg_global *g, int argc, char **argv);
int cg_cmd_select(const cg_global *g, int argc, char **argv);
int cg_cmd_import(const cg_global *g, int argc, char **argv);

/* The global options (--strict, -q) are taken after the command too. */
#define CG_OPT_STRICT 1000
#define CG_GLOBAL_LONGOPTS                                      \
    {"strict", no_argument, NULL, CG_OPT_STRICT},               \
    {"quiet", no_argument, NULL, 'q'},                          \
    {"verbose", no_argument, NULL, 'v'}

/* getopt_long for a command (whose argv[0] is "cigen COMMAND"): handles the
 * global options itself (shortopts must hold 'q' and 'v'), and after a bad option
 * points to the command's help. */
int cg_cli_getopt(cg_global *g, int argc, char **argv, const char *shortopts, const struct option *longopts);

/* The selection options of every command that builds the model. */
#define CG_OPT_ONLY 1001
#define CG_OPT_ALSO 1002
#define CG_OPT_OVERLAY 1003
#define CG_OPT_ALLOW_PROTECTED 1004
#define CG_OPT_PR_BRANCH 1005
#define CG_SPECIAL_LONGOPTS                                   \
    {"only", required_argument, NULL, CG_OPT_ONLY},             \
    {"also", required_argument, NULL, CG_OPT_ALSO},             \
    {"overlay", required_argument, NULL, CG_OPT_OVERLAY},       \
    {"allow-protected", no_argument, NULL, CG_OPT_ALLOW_PROTECTED}, \
    {"pr-branch", required_argument, NULL, CG_OPT_PR_BRANCH}
#define CG_SPECIAL_HELP                                                                   \
    "  --only PATTERN    a special-PR config: only the matching jobs (and what they\n"       \
    "                    require), in the per-change workflow, ungated (repeatable)\n"      \
    "  --also PATTERN    the matching jobs run in the per-change workflow too\n"            \
    "  --overlay FILE    read --only/--also from FILE (default: special-pr.yml if present)\n" \
    "  --allow-protected a job with a context (or listed in the manifest's 'protected')\n" \
    "                    may come along as a requirement (else: an error naming it)\n" \
    "  --pr-branch NAME  the pull request's branch the selection is for (the header\n"     \
    "                    records it; check --allow-special passes on that branch only)\n" \
    "  PATTERN is a job-name glob, or NAME=GLOB,... over dimensions, variables,\n"       \
    "  phase, tree, workflow and tier.\n"

/* What a special-PR selection did to a job, in words: "selected by --only
 * 'x'", "pulled in: 'y' requires it", "kept (workflow 'ci' keeps it)",
 * "culled: ...", or "untouched" (--also leaves the rest as it was). */
void cg_cli_mark_text(const cg_model *m, const cg_mark *mk, cg_strbuf *out);
/* The short form for a column: selected, pulled:NAME, kept, culled, - */
void cg_cli_mark_word(const cg_mark *mk, cg_strbuf *out);

/* Handles a selection option into g/sel; true when `c` was one. */
bool cg_cli_special_option(cg_global *g, cg_special *sel, int c, const char *arg);

/* Loads and renders the project; prints the error (and warnings) itself.
 * Returns 0, or CG_EXIT_ERROR. */
int cg_cli_build(const cg_global *g, cg_project *p, bool render);
/* Loads the project walking its cells and jobs through `w` and keeping none
 * (model/walk.h): 0 when the walk gave what the whole load gives (then
 * cg_cli_warnings prints the warnings as cg_cli_build would have); 1 when it
 * could not (or -v, a selection on the command line: their output names
 * what the whole load read), with p released and initialized again, for
 * cg_cli_build.  Prints nothing. */
int cg_cli_build_walk(const cg_global *g, cg_project *p, const cg_walker *w);
/* The warnings of a loaded project, as cg_cli_build prints them. */
void cg_cli_warnings(const cg_global *g, const cg_project *p);
/* Renders a loaded project, printing an error (CG_EXIT_ERROR) on failure. */
int cg_cli_render(const cg_global *g, cg_project *p);

/* -v: one line "cigen: verbose: ..." to stderr (nothing without -v). */
void cg_cli_verbose(const cg_global *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Seconds on a monotonic clock, for -v's timings. */
double cg_cli_now(void);
/* Runs f(a) and f(b) at once, b on a second thread (one after the other
 * when no thread can start). */
void cg_cli_run_both(void (*f)(void *), void *a, void *b);

/* Prints an error record to stderr. */
void cg_cli_print_error(const cg_error *err);
/* `s` as a message shows it (cg_escape_line: no control character, line
 * break or escape sequence of an argument reaches the terminal), for the
 * messages cmd/ prints itself ("cigen: error: unknown command '%s'").  The
 * text lives until the eighth call after this one (single-threaded use). */
const char *cg_cli_shown(const char *s);

/* One output of the project: where it goes and its bytes. */
typedef struct cg_output_file {
    const char *rel;
    const char *data;
    size_t len;
    cg_pos ref;
} cg_output_file;

/* The files the manifest owns, as the sources produce them now:
 * config.yml, then the diagrams.  cg_cli_output_count() says how many. */
size_t cg_cli_outputs(cg_project *p, cg_output_file *out, size_t max);
size_t cg_cli_output_count(cg_project *p);

#endif
