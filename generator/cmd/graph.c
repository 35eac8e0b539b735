/* cigen graph — one diagram of the matrix: DOT, or SVG/PNG through Graphviz. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/disk.h"
#include "render/dot.h"
#include "io/fsio.h"
#include "lang/schema.h"

static const char graph_help[] =
    "usage: cigen graph [--tree NAME | --workflow NAME] [--collapse DIM]...\n"
    "                   [--format dot|svg|png] [--max-nodes N] [-o FILE]\n"
    "\n"
    "Draws one diagram of the job matrix as Graphviz DOT (SVG or PNG through Graphviz).\n"
    "\n"
    "  --tree NAME        the dimension tree of tree NAME: a root, one level per\n"
    "                     dimension (values as labels), the cells as leaves with their\n"
    "                     number of jobs; cells removed by 'exclude' or 'only' are grey\n"
    "                     and dashed, labelled with the filter's file:line\n"
    "  --workflow NAME    the job graph of workflow NAME: its jobs (the manifest's and\n"
    "                     the generated ones), requires as edges from the required job,\n"
    "                     the jobs of a cell boxed together, on-request jobs dashed,\n"
    "                     the triggers and tiers on the label\n"
    "                     With neither, the only tree (when the manifest has one).\n"
    "  --collapse DIM     draw dimension DIM as counts (\"python: 3 values\"); in a job\n"
    "                     graph, jobs that differ only in DIM are one node; repeatable.\n"
    "                     Without it, cigen collapses the dimensions that make the\n"
    "                     diagram fit about one screen (about 2000 px on its long side\n"
    "                     as 'dot -Tpng' draws it; estimated, Graphviz is not run) and\n"
    "                     names them on the diagram; --collapse none draws it whole\n"
    "  --max-nodes N      a diagram of more than N nodes (default 400) is drawn as one\n"
    "                     note naming the --collapse that brings it under N; 0: no limit\n"
    "  --format FORMAT    dot (the default); svg or png run Graphviz's 'dot' program\n"
    "                     (the CIGEN_DOT environment variable names another one)\n"
    "  -o, --output FILE  write FILE instead of standard output (a path relative to\n"
    "                     the current folder, not to -C; never a source or the config)\n"
    "\n"
    "`cigen generate` writes every diagram, with the default options (fitted to a\n"
    "screen), into the folder the manifest names under 'diagrams:' (tree-NAME.dot,\n"
    "workflow-NAME.dot).  The tree diagram draws a green border around the cells that\n"
    "run on every pull request (in the per-change workflow, not on request).\n"
    "Exit status: 0 drawn, 2 bad usage, broken sources, or Graphviz missing or failing.";

#define NOT_INSTALLED "cigen: error: 'dot' (Graphviz) is not installed; install it (apt-get install graphviz) " \
                      "or use --format dot\n"

/* Is `prog` (a path, or a name looked up on PATH) a program we can run? */
static bool find_program(const char *prog)
{
    struct stat st;
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 && stat(prog, &st) == 0 && S_ISREG(st.st_mode);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    bool found = false;
    cg_strbuf f = CG_STRBUF_INIT;
    for (const char *s = path; !found; s++) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        cg_strbuf_reset(&f);
        if (n)
            cg_strbuf_add(&f, s, n);
        else
            cg_strbuf_addc(&f, '.');
        cg_strbuf_addf(&f, "/%s", prog);
        found = access(f.buf, X_OK) == 0 && stat(f.buf, &st) == 0 && S_ISREG(st.st_mode);
        if (!e)
            break;
        s = e;
    }
    cg_strbuf_release(&f);
    return found;
}

static void not_found(const char *prog, bool custom)
{
    if (custom)
        fprintf(stderr, "cigen: error: CIGEN_DOT names '%s', which is not a program that can be run\n", cg_cli_shown(prog));
    else
        fputs(NOT_INSTALLED, stderr);
}

/* Pipes `in` through `dot -T<format>` into `out`.  Returns 0 or CG_EXIT_ERROR
 * (after saying why). */
static int run_dot(const char *format, const cg_strbuf *in, cg_strbuf *out)
{
    const char *prog = getenv("CIGEN_DOT");
    bool custom = prog && *prog;
    if (!custom)
        prog = "dot";
    if (!find_program(prog)) {
        not_found(prog, custom);
        return CG_EXIT_ERROR;
    }
    int to[2], from[2];
    if (pipe(to) != 0)
        goto fail;
    if (pipe(from) != 0) {
        close(to[0]);
        close(to[1]);
        goto fail;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        goto fail;
    }
    if (pid == 0) {
        char arg[32];
        snprintf(arg, sizeof arg, "-T%s", format);
        dup2(to[0], STDIN_FILENO);
        dup2(from[1], STDOUT_FILENO);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        char *const argv[] = {(char *)prog, arg, NULL};
        execvp(prog, argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    struct sigaction ignore, old;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old);
    fcntl(to[1], F_SETFL, fcntl(to[1], F_GETFL) | O_NONBLOCK);
    size_t sent = 0;
    int wfd = to[1];
    bool reading = true;
    char buf[65536];
    while (reading) {
        struct pollfd fds[2] = {{from[0], POLLIN, 0}, {wfd, POLLOUT, 0}};
        if (poll(fds, wfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (wfd >= 0 && fds[1].revents) {
            ssize_t w = sent < in->len ? write(wfd, in->buf + sent, in->len - sent) : 0;
            if (w > 0)
                sent += (size_t)w;
            if (sent == in->len || (w < 0 && errno != EAGAIN && errno != EINTR)) {
                close(wfd); /* all of it, or the reader is gone */
                wfd = -1;
            }
        }
        if (fds[0].revents) {
            ssize_t r = read(from[0], buf, sizeof buf);
            if (r > 0)
                cg_strbuf_add(out, buf, (size_t)r);
            else if (r == 0 || (errno != EINTR && errno != EAGAIN))
                reading = false;
        }
    }
    if (wfd >= 0)
        close(wfd);
    close(from[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGPIPE, &old, NULL);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        not_found(prog, custom);
    else if (WIFEXITED(status))
        fprintf(stderr, "cigen: error: '%s -T%s' failed (exit status %d)\n", cg_cli_shown(prog), cg_cli_shown(format), WEXITSTATUS(status));
    else
        fprintf(stderr, "cigen: error: '%s -T%s' was killed by signal %d\n", cg_cli_shown(prog), cg_cli_shown(format), WTERMSIG(status));
    return CG_EXIT_ERROR;
fail:
    fprintf(stderr, "cigen: error: cannot run '%s': %s\n", cg_cli_shown(prog), strerror(errno));
    return CG_EXIT_ERROR;
}

/* Standard output as a diagram's sink: the first write error is kept. */
typedef struct stdout_sink {
    int err; /* errno of the first failed write; 0: none */
} stdout_sink;

static void put_stdout(void *ctx, const char *data, size_t len)
{
    stdout_sink *s = ctx;
    errno = 0;
    if (!s->err && fwrite(data, 1, len, stdout) != len)
        s->err = errno ? errno : EIO;
}

static void list_names(cg_strbuf *out, const char *what, const char *const *names, size_t n)
{
    cg_strbuf_addf(out, "%s:", what);
    for (size_t i = 0; i < n; i++)
        cg_strbuf_addf(out, "%s %s", i ? "," : "", names[i]);
    if (!n)
        cg_strbuf_adds(out, " none");
}

/* The index of `name` among names, or -1 after an error naming the choices. */
static long pick(const char *kind, const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cg_streq(names[i], name))
            return (long)i;
    cg_strbuf msg = CG_STRBUF_INIT;
    cg_did_you_mean(&msg, name, names, n);
    if (!msg.len) {
        cg_strbuf_adds(&msg, " (");
        list_names(&msg, kind[0] == 't' ? "trees" : "workflows", names, n);
        cg_strbuf_addc(&msg, ')');
    }
    fprintf(stderr, "cigen: error: no %s is named '%s'%s\n", kind, cg_cli_shown(name), cg_cli_shown(msg.buf));
    cg_strbuf_release(&msg);
    return -1;
}

/* Every name in `collapse` must be a dimension of the tree (tree >= 0) or of
 * some tree. */
static int check_collapse(const cg_project *p, long tree, const char *const *collapse, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *cands[512];
        size_t nc = 0;
        bool found = false;
        for (size_t t = 0; t < p->m.ntrees && !found; t++) {
            if (tree >= 0 && (long)t != tree)
                continue;
            for (size_t d = 0; d < p->m.trees[t]->ndims && !found; d++) {
                found = cg_streq(p->m.trees[t]->dims[d], collapse[i]);
                if (nc < CG_ARRAY_LEN(cands))
                    cands[nc++] = p->m.trees[t]->dims[d];
            }
        }
        if (found)
            continue;
        cg_strbuf hint = CG_STRBUF_INIT;
        cg_did_you_mean(&hint, collapse[i], cands, nc);
        if (tree >= 0)
            fprintf(stderr, "cigen: error: --collapse: tree '%s' has no dimension '%s'%s\n", p->m.trees[tree]->name,
                    cg_cli_shown(collapse[i]), cg_cli_shown(cg_strbuf_str(&hint)));
        else
            fprintf(stderr, "cigen: error: --collapse: no tree has a dimension '%s'%s\n", cg_cli_shown(collapse[i]),
                    cg_cli_shown(cg_strbuf_str(&hint)));
        cg_strbuf_release(&hint);
        return CG_EXIT_ERROR;
    }
    return 0;
}

int cg_cmd_graph(const cg_global *g0, int argc, char **argv)
{
    cg_global local = *g0, *g = &local;
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},          {"tree", required_argument, NULL, 't'},
        {"workflow", required_argument, NULL, 'w'}, {"collapse", required_argument, NULL, 'c'},
        {"format", required_argument, NULL, 'f'},   {"max-nodes", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},   CG_GLOBAL_LONGOPTS, {0}};
    const char *tree_name = NULL, *workflow_name = NULL, *format = "dot", *output = NULL;
    const char **collapse = cg_xcalloc((size_t)argc + 1, sizeof *collapse);
    cg_dot_opts o;
    cg_dot_opts_init(&o);
    int c, rc = 0;
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while (rc == 0 && (c = cg_cli_getopt(g, argc, argv, "hqvo:", longopts)) != -1) {
        switch (c) {
        case 'h':
            puts(graph_help);
            free(collapse);
            return 0;
        case 't':
        case 'w':
            if (tree_name || workflow_name) {
                fputs("cigen: error: graph draws one diagram: give one --tree or one --workflow\n", stderr);
                rc = CG_EXIT_ERROR;
            }
            *(c == 't' ? &tree_name : &workflow_name) = optarg;
            break;
        case 'c':
            collapse[o.ncollapse++] = optarg;
            o.fit_px = 0; /* as asked */
            break;
        case 'f':
            format = optarg;
            if (!cg_streq(format, "dot") && !cg_streq(format, "svg") && !cg_streq(format, "png")) {
                fprintf(stderr, "cigen: error: --format must be dot, svg or png, not '%s'\n", cg_cli_shown(format));
                rc = CG_EXIT_ERROR;
            }
            break;
        case 'n': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!cg_isdigit(optarg[0]) || *end || errno) {
                fprintf(stderr, "cigen: error: --max-nodes wants a number, not '%s'\n", cg_cli_shown(optarg));
                rc = CG_EXIT_ERROR;
            }
            o.max_nodes = (size_t)v;
            break;
        }
        case 'o':
            output = optarg;
            break;
        default:
            rc = CG_EXIT_ERROR;
        }
    }
    if (rc == 0 && optind < argc) {
        fprintf(stderr, "cigen: error: graph takes no arguments ('%s'); use --tree or --workflow\n", cg_cli_shown(argv[optind]));
        rc = CG_EXIT_ERROR;
    }
    /* --collapse none (alone): every dimension drawn, nothing fitted */
    bool none = o.ncollapse == 1 && cg_streq(collapse[0], "none");
    if (none)
        o.ncollapse = 0;
    o.collapse = collapse;
    cg_project p;
    cg_project_init(&p);
    if (rc == 0)
        rc = cg_cli_build(g, &p, false);
    long tree = -1, workflow = -1;
    if (rc == 0) {
        const char **tnames = cg_xcalloc(p.m.ntrees + 1, sizeof *tnames);
        const char **wnames = cg_xcalloc(p.m.manifest.nworkflows + 1, sizeof *wnames);
        for (size_t i = 0; i < p.m.ntrees; i++)
            tnames[i] = p.m.trees[i]->name;
        for (size_t i = 0; i < p.m.manifest.nworkflows; i++)
            wnames[i] = p.m.manifest.workflows[i].name;
        if (tree_name) {
            tree = pick("tree", tree_name, tnames, p.m.ntrees);
        } else if (workflow_name) {
            workflow = pick("workflow", workflow_name, wnames, p.m.manifest.nworkflows);
        } else if (p.m.ntrees == 1) {
            tree = 0;
        } else {
            cg_strbuf msg = CG_STRBUF_INIT;
            list_names(&msg, "trees", tnames, p.m.ntrees);
            cg_strbuf_adds(&msg, "; ");
            list_names(&msg, "workflows", wnames, p.m.manifest.nworkflows);
            fprintf(stderr, "cigen: error: graph needs --tree NAME or --workflow NAME (%s)\n", msg.buf);
            cg_strbuf_release(&msg);
        }
        if (tree < 0 && workflow < 0)
            rc = CG_EXIT_ERROR;
        else if (!none)
            rc = check_collapse(&p, tree, collapse, o.ncollapse);
        free(tnames);
        free(wnames);
    }
    cg_strbuf dot = CG_STRBUF_INIT, rendered = CG_STRBUF_INIT;
    /* DOT on stdout is written as it is drawn, never held whole */
    stdout_sink ss = {0};
    cg_dot_sink sink = {put_stdout, &ss, 0};
    bool streamed = cg_streq(format, "dot") && !output;
    if (streamed)
        o.sink = &sink;
    if (rc == 0) {
        if (tree >= 0)
            cg_dot_tree(&p.m, (size_t)tree, &o, &dot);
        else
            cg_dot_workflow(&p.m, (size_t)workflow, &o, &dot);
        if (!cg_streq(format, "dot"))
            rc = run_dot(format, &dot, &rendered);
    }
    if (rc == 0) {
        const cg_strbuf *bytes = cg_streq(format, "dot") ? &dot : &rendered;
        if (output) {
            rc = cg_disk_write_one(&p, output, cg_strbuf_str(bytes), bytes->len, "the diagram");
        } else if (fwrite(cg_strbuf_str(bytes), 1, bytes->len, stdout) != bytes->len || fflush(stdout) != 0 ||
                   ss.err) {
            fprintf(stderr, "cigen: error: cannot write the diagram: %s\n", strerror(ss.err ? ss.err : errno));
            rc = CG_EXIT_ERROR;
        }
    }
    cg_strbuf_release(&dot);
    cg_strbuf_release(&rendered);
    cg_project_release(&p);
    free(collapse);
    return rc;
}
