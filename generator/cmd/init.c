/* cigen init — a minimal working project in the project folder.
 *
 * Writes a manifest, one tree (its phase uses the default template: no
 * template file), one fragment and a regenerate.sh, then generates
 * config.yml from them, so that `cigen check` and `cigen lint` pass right
 * after.  It never overwrites anything: when
 * any of the files it would write exists, it writes none and says which.
 * Every file is created with O_EXCL; if one cannot be written, the ones
 * already written are removed again.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "io/paths.h"

static const char manifest_text[] =
    "# cigen.yml: how config.yml is made.  Every path is relative to this file.\n"
    "# Nobody edits config.yml by hand: change a source below and run ./regenerate.sh.\n"
    "output: config.yml\n"
    "regenerate: ./regenerate.sh\n"
    "\n"
    "# Hand-written YAML, copied into config.yml: the version, executors, jobs.\n"
    "fragments:\n"
    "  - verbatim-sources/jobs.yml\n"
    "\n"
    "# The CI matrix: every cell of a tree invokes a job of the fragments, with\n"
    "# its dimensions as the job's parameters.\n"
    "trees:\n"
    "  - dimensions/matrix.yml\n"
    "\n"
    "workflows:\n"
    "  ci:\n"
    "    jobs: []\n";

static const char tree_text[] =
    "# The matrix: every combination of the values below is a cell, and every\n"
    "# cell runs each phase (here one job per cell).  Add a value, run\n"
    "# ./regenerate.sh, and config.yml gains the jobs.\n"
    "#\n"
    "# A phase without a template runs the job named like it (verbatim-sources/\n"
    "# jobs.yml) with the cell's dimensions and variables as parameters:\n"
    "# test: {os: linux, python: \"3.12\"}.  Name a template (a YAML file holding\n"
    "# the workflow entry) to run another job or pass other arguments.\n"
    "dimensions: [os, python]\n"
    "job_name:\n"
    "  pattern: \"{{ phase }}_{{ os }}_{{ python }}\"\n"
    "  replace: {\".\": \"_\"}\n"
    "workflows: [ci]\n"
    "tree:\n"
    "  - os: linux\n"
    "    python: [\"3.11\", \"3.12\", \"3.13\"]\n"
    "phases:\n"
    "  test:\n";

static const char fragment_text[] =
    "version: 2.1\n"
    "\n"
    "jobs:\n"
    "  test:\n"
    "    parameters:\n"
    "      os: {type: string}\n"
    "      python: {type: string}\n"
    "    # Every os runs here, in this Linux docker image.  Before adding a value\n"
    "    # such as os: macos, choose the executor per os: declare executors named\n"
    "    # like the values (executors: {linux: ..., macos: {macos: ...}}), make os\n"
    "    # {type: executor} and write 'executor: << parameters.os >>' instead.\n"
    "    docker:\n"
    "      - image: cimg/python:<< parameters.python >>\n"
    "    steps:\n"
    "      - checkout\n"
    "      - run: echo \"Python << parameters.python >> on << parameters.os >>\" && python --version\n";

static const char regenerate_text[] =
    "#!/usr/bin/env bash\n"
    "# Regenerate config.yml from its sources (cigen.yml names them).\n"
    "#\n"
    "#   ./regenerate.sh            write config.yml\n"
    "#   ./regenerate.sh --check    exit 1 with a report when config.yml differs from\n"
    "#                              what the sources produce\n"
    "#   ./regenerate.sh ARGS...    other arguments go to `cigen generate` (after\n"
    "#                              --check, to `cigen check`)\n"
    "#\n"
    "# Runs the cigen on the PATH, or $CIGEN.  Works from any folder.\n"
    "set -euo pipefail\n"
    "here=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n"
    "cigen=\"${CIGEN:-cigen}\"\n"
    "case \"${1:-}\" in\n"
    "  -h|--help) sed -n '2,8s/^# \\{0,1\\}//p' \"${BASH_SOURCE[0]}\"; exit 0 ;;\n"
    "esac\n"
    "if ! command -v \"$cigen\" >/dev/null 2>&1; then\n"
    "  echo \"regenerate.sh: error: cigen is not installed (make install in its repository, or set CIGEN)\" >&2\n"
    "  exit 2\n"
    "fi\n"
    "if [ \"${1:-}\" = \"--check\" ]; then\n"
    "  shift\n"
    "  exec \"$cigen\" -C \"$here\" check \"$@\"\n"
    "fi\n"
    "exec \"$cigen\" -C \"$here\" generate \"$@\"\n";

/* The merge driver's lines (README.md, "Merge conflicts"): git reads a
 * .gitattributes in any folder, for the files beneath it. */
static const char gitattributes_head[] =
    "# cigen's merge driver regenerates these files when a merge conflicts in them,\n"
    "# from the merged sources.  Enable it once per clone, from the repository's root:\n"
    "#   git config merge.cigen.name \"regenerate cigen outputs\"\n";
static const char gitattributes_tail[] = "config.yml merge=cigen\n";

typedef struct init_file {
    const char *rel;
    const char *text;
    mode_t mode;
} init_file;

/* Creates the folder leading to rel (one level, beneath the project open
 * as rootfd); records it when it made it.  A name that exists (a folder, or
 * a link) is left as it is: the file is then created through
 * cg_open_beneath, which refuses a link that leads out of the project. */
static int make_parents(int rootfd, const char *rel, char **made, size_t *nmade)
{
    const char *slash = strchr(rel, '/');
    if (!slash)
        return 0;
    char *dir = cg_xstrndup(rel, (size_t)(slash - rel));
    if (mkdirat(rootfd, dir, 0777) == 0) {
        made[(*nmade)++] = dir;
        return 0;
    }
    free(dir);
    return errno == EEXIST ? 0 : -1;
}

/* Removes rel (a file, or a folder with AT_REMOVEDIR) from its folder,
 * resolved beneath the project: never through a link leading out of it. */
static void unlink_beneath(int rootfd, const char *rel, int flags)
{
    const char *slash = strrchr(rel, '/');
    char *dir = slash ? cg_xstrndup(rel, (size_t)(slash - rel)) : cg_xstrdup(".");
    int dfd = cg_open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY, 0);
    free(dir);
    if (dfd >= 0) {
        unlinkat(dfd, slash ? slash + 1 : rel, flags);
        close(dfd);
    }
}

/* Creates rel beneath the project (never through a link out of it, never
 * over anything: O_EXCL, O_NOFOLLOW) and writes text; on failure nothing
 * of it is left. */
static int write_new(int rootfd, const char *rel, const char *text, mode_t mode)
{
    int fd = cg_open_beneath(rootfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    if (fd < 0)
        return -1;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            unlink_beneath(rootfd, rel, 0);
            errno = e;
            return -1;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink_beneath(rootfd, rel, 0);
        errno = e;
        return -1;
    }
    return 0;
}

int cg_cmd_init(const cg_global *g, int argc, char **argv)
{
    if (argc == 2 && (cg_streq(argv[1], "--help") || cg_streq(argv[1], "-h"))) {
        puts("usage: cigen [-C DIR] init\n\n"
             "Starts a project in the current folder (or DIR): a manifest (cigen.yml), one\n"
             "tree (dimensions/matrix.yml: os x python; its phase needs no template: it runs\n"
             "the job named like it with the cell's values), one fragment\n"
             "(verbatim-sources/jobs.yml) and regenerate.sh, then generates config.yml.\n"
             "`cigen check` and `cigen lint` pass right after.\n"
             "It never overwrites anything: when one of these files (or config.yml) exists,\n"
             "it writes nothing and names it.\n\n"
             "Exit status: 0 written, 2 a file exists or cannot be written.");
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "cigen: error: init takes no arguments ('%s')\nTry 'cigen init --help'.\n", cg_cli_shown(argv[1]));
        return CG_EXIT_ERROR;
    }
    const char *dir = g->opt.dir ? g->opt.dir : ".";
    const char *manifest = g->opt.manifest ? g->opt.manifest : "cigen.yml";
    /* in a repository's .circleci/, the commands run from the repository's
     * root: CI, pre-commit and the merge driver name the folder */
    bool in_circleci = false;
    {
        char *real = realpath(dir, NULL);
        if (real) {
            const char *base = strrchr(real, '/');
            in_circleci = cg_streq(base ? base + 1 : real, ".circleci");
            free(real);
        }
    }
    cg_strbuf mtext = CG_STRBUF_INIT, attrs = CG_STRBUF_INIT;
    cg_strbuf_adds(&mtext, manifest_text);
    if (in_circleci) {
        const char *from = strstr(mtext.buf, "regenerate: ./regenerate.sh\n");
        size_t at = (size_t)(from - mtext.buf);
        cg_strbuf rest = CG_STRBUF_INIT;
        cg_strbuf_adds(&rest, from + strlen("regenerate: ./regenerate.sh\n"));
        cg_strbuf_truncate(&mtext, at);
        cg_strbuf_adds(&mtext, "regenerate: .circleci/regenerate.sh   # from the repository's root\n");
        cg_strbuf_add(&mtext, rest.buf, rest.len);
        cg_strbuf_release(&rest);
    }
    cg_strbuf_adds(&attrs, gitattributes_head);
    cg_strbuf_addf(&attrs, "#   git config merge.cigen.driver \"cigen%s merge-driver %%O %%A %%B %%P\"\n",
                   in_circleci ? " -C .circleci" : "");
    cg_strbuf_adds(&attrs, gitattributes_tail);
    const init_file files[] = {
        {manifest, mtext.buf, 0666},
        {"dimensions/matrix.yml", tree_text, 0666},
        {"verbatim-sources/jobs.yml", fragment_text, 0666},
        {"regenerate.sh", regenerate_text, 0777},
        {"config.yml", NULL, 0},
    };
    size_t nfiles = CG_ARRAY_LEN(files);
    /* the manifest's name is a project path like any other: no "..", no
     * absolute path, nothing in git's folder */
    cg_error perr;
    cg_error_init(&perr);
    if (cg_check_project_path(manifest, &(cg_pos){0}, "the manifest ('-m')", &perr) != 0) {
        cg_cli_print_error(&perr);
        cg_error_release(&perr);
        cg_strbuf_release(&mtext);
        cg_strbuf_release(&attrs);
        return CG_EXIT_ERROR;
    }
    cg_error_release(&perr);
    /* never a project in git's own folder (.git/hooks: its files are run) */
    char *real = realpath(dir, NULL), *gitdir = NULL;
    if (real && cg_root_in_git(real, &gitdir)) {
        fprintf(stderr, "cigen: error: the project folder '%s' lies inside a repository's git folder ('%s'); cigen "
                "never reads or writes there (nothing was written)\n", cg_cli_shown(dir), cg_cli_shown(gitdir));
        free(gitdir);
        free(real);
        cg_strbuf_release(&mtext);
        cg_strbuf_release(&attrs);
        return CG_EXIT_ERROR;
    }
    free(real);
    int rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        fprintf(stderr, "cigen: error: '%s' is not a folder\n", cg_cli_shown(dir));
        cg_strbuf_release(&mtext);
        cg_strbuf_release(&attrs);
        return CG_EXIT_ERROR;
    }
    struct stat st;
    for (size_t i = 0; i < nfiles; i++) {
        if (fstatat(rootfd, files[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
            fprintf(stderr, "cigen: error: '%s' already exists; init starts a new project and never overwrites "
                    "a file (nothing was written)\n", files[i].rel);
            close(rootfd);
            cg_strbuf_release(&mtext);
            cg_strbuf_release(&attrs);
            return CG_EXIT_ERROR;
        }
    }
    char *made[8];
    size_t nmade = 0, written = 0;
    int rc = 0;
    for (size_t i = 0; i < nfiles && files[i].text; i++) {
        if (make_parents(rootfd, files[i].rel, made, &nmade) != 0 ||
            write_new(rootfd, files[i].rel, files[i].text, files[i].mode) != 0) {
            fprintf(stderr, "cigen: error: cannot write '%s': %s (nothing was written)\n", files[i].rel,
                    errno == EXDEV ? "a symbolic link on its path leads out of the project folder"
                    : errno == EEXIST ? "it exists now (made while init ran)" : strerror(errno));
            rc = CG_EXIT_ERROR;
            break;
        }
        written++;
    }
    if (rc != 0) {
        /* take back what was written: a half project helps nobody */
        for (size_t i = 0; i < written; i++)
            unlink_beneath(rootfd, files[i].rel, 0);
        for (size_t i = nmade; i-- > 0;)
            unlink_beneath(rootfd, made[i], AT_REMOVEDIR);
    }
    for (size_t i = 0; i < nmade; i++)
        free(made[i]);
    /* the merge driver's lines: in a .gitattributes of their own, or, when
     * the folder has one (a repository's root often does), said to add */
    bool attrs_written = false;
    if (rc == 0) {
        attrs_written = write_new(rootfd, ".gitattributes", attrs.buf, 0666) == 0;
        if (!attrs_written && !g->quiet)
            printf("cigen: .gitattributes %s; for the merge driver, add to it:\n%s",
                   errno == EEXIST ? "exists" : "cannot be written", attrs.buf);
    }
    close(rootfd);
    cg_strbuf_release(&mtext);
    cg_strbuf_release(&attrs);
    if (rc != 0)
        return rc;
    if (!g->quiet)
        printf("cigen: wrote %s, dimensions/matrix.yml, verbatim-sources/jobs.yml, regenerate.sh%s\n", manifest,
               attrs_written ? " and .gitattributes" : "");
    char name[] = "cigen generate";
    char *gargv[] = {name, NULL};
    rc = cg_cmd_generate(g, 1, gargv);
    if (rc == 0 && !g->quiet)
        printf("Next: change dimensions/matrix.yml (or the other sources), run %s, and commit\n"
               "the sources with config.yml.  To keep them in sync, give your CI a job that runs\n"
               "`%s --check` (it fails when config.yml has drifted from its sources).\n",
               in_circleci ? ".circleci/regenerate.sh" : "./regenerate.sh",
               in_circleci ? ".circleci/regenerate.sh" : "./regenerate.sh");
    return rc == 0 ? 0 : CG_EXIT_ERROR;
}
