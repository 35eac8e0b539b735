/* cigen select: the jobs of one pipeline, picked when it starts (CircleCI
 * dynamic configuration), written as the continuation config
 * (model/pick.h has the rules). */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/disk.h"
#include "audit/simulate.h"
#include "io/fsio.h"
#include "model/pick.h"

static const char usage[] =
    "usage: cigen select [--branch NAME | --tag NAME | --schedule WORKFLOW]\n"
    "                    [--message TEXT | --message-file FILE] [--changed FILE]...\n"
    "                    [--changed-files - [--null]] [--parameter NAME=VALUE]...\n"
    "                    [--only PATTERN]... [--also PATTERN]... [--overlay FILE]\n"
    "                    [--allow-protected] [-o FILE] [--explain] [--json]\n"
    "\n"
    "Picks the jobs one pipeline runs, from what the pipeline knows, and writes the\n"
    "continuation config holding exactly those (CircleCI dynamic configuration: the\n"
    "setup config's job runs this).  Without -o, prints the jobs, one a line.\n"
    "\n"
    "  --branch NAME       the branch pushed to (a 'run_all' branch runs every job)\n"
    "  --tag NAME          the tag pushed\n"
    "  --schedule WORKFLOW a scheduled pipeline (named after the workflow it runs):\n"
    "                      that workflow, whole; \"\" means none\n"
    "  --message TEXT      the commit message: [ci all], [WORD ci] (on-request jobs\n"
    "                      with WORD in their name), [ci only: PATTERN] (exactly\n"
    "                      those: a special PR with nothing committed),\n"
    "                      [ci also: PATTERN]\n"
    "  --message-file FILE the commit message, read from FILE\n"
    "  --changed FILE      a file changed against the base branch (repeatable);\n"
    "  --changed-files -   read them from stdin, one a line; matched against the\n"
    "                      manifest's 'pipeline: paths' rules\n"
    "  --null              the list on stdin is NUL-separated (git diff -z)\n"
    "  --parameter NAME=VALUE  a pipeline parameter's value (repeatable; declared\n"
    "                      by a fragment's top-level 'parameters:', checked\n"
    "                      against its type): the workflow's 'when' is evaluated\n"
    "                      with them (and the defaults); what cannot be known\n"
    "                      when the pipeline starts is left to CircleCI\n"
    "  -o, --output FILE   write the continuation config there (nothing is written\n"
    "                      when nothing runs: the setup job then ends the pipeline;\n"
    "                      never over a source or an output of the project)\n"
    "  --explain           say why each job is in or out\n"
    "  --json              the same as one JSON object on stdout\n"
    "\n"
    "  --only/--also/--overlay/--allow-protected  a special PR, as for generate\n"
    "                      (special-pr.yml is read when it exists)\n"
    "\n"
    "select only narrows: it picks among the jobs CircleCI itself would run on\n"
    "the full config for this pipeline (its triggers, 'when', filters and\n"
    "requires, as `cigen list --branch/--tag/--schedule` shows them), and the\n"
    "picked jobs keep their filters.  A special PR's named jobs (and what they\n"
    "require) run on the branch with their branch filters lifted; a job with\n"
    "credentials only when named (or --allow-protected), never pulled in by a\n"
    "requirement.  The per-change workflow's 'keep' entries stay.  The written\n"
    "config's header names the pipeline and its commit message (escaped to one\n"
    "comment line).  Exit 0 chosen (and written), 2 a bad token, pattern or\n"
    "source.\n";

enum {
    OPT_BRANCH = 2000,
    OPT_TAG,
    OPT_SCHEDULE,
    OPT_MESSAGE,
    OPT_CHANGED,
    OPT_CHANGED_FILES,
    OPT_PARAMETER,
    OPT_MESSAGE_FILE,
    OPT_NULL,
    OPT_EXPLAIN,
    OPT_JSON
};

typedef struct entry {
    const char *name;
    bool in;
    const char *why;
    char *owned;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->in != y->in)
        return x->in ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* What CircleCI runs on the full config, "workflow\x1fentry" -> state + 1. */
typedef struct sim_set {
    cg_map map;
    cg_map why;              /* entry name -> why it does not run, for one that runs nowhere */
    cg_strbuf key;
    cg_sim_result run;
} sim_set;

/* "the commit message says [ci also: P]", "selected by --only 'P'", ... */
static char *selected_by(const cg_model *m, int32_t i)
{
    const cg_special *s = &m->selection;
    cg_strbuf sb = CG_STRBUF_INIT;
    if (i < 0 || (size_t)i >= s->nonly + s->nalso) /* one of the rules' picks, under another entry's name */
        return cg_xstrdup("picked by the pipeline's rules (an entry of the same name)");
    bool only = (size_t)i < s->nonly;
    const char *pat = only ? s->only[i] : s->also[(size_t)i - s->nonly];
    if (s->source && cg_streq(s->source, "the commit message")) {
        cg_strbuf_addf(&sb, "the commit message says [ci %s: %s]", only ? "only" : "also", pat);
    } else {
        cg_mark mk = {CG_MARK_SELECTED, i, NULL};
        cg_cli_mark_text(m, &mk, &sb);
    }
    return cg_strbuf_detach(&sb, NULL);
}

/* Every job and static entry, in or out, with why. */
static size_t entries(const cg_project *p, const sim_set *S, entry **out)
{
    const cg_model *m = &p->m;
    const cg_pick_run *run = m->run;
    size_t n = 0, cap = m->jobs.n + m->nstatics + 1;
    entry *v = cg_xcalloc(cap, sizeof *v);
    for (size_t k = 0; k < m->jobs.n; k++) {
        const cg_job *j = &m->jobs.v[k];
        entry *e = &v[n++];
        e->name = j->name;
        e->in = j->workflows != 0 && run->workflow >= 0;
        e->why = run->job_in[k] && e->in ? run->job_why[k] : NULL;
        const cg_mark *mk = m->marks ? &m->marks[k] : NULL;
        if (!e->why && e->in && mk && mk->kind == CG_MARK_PULLED) {
            cg_strbuf sb = CG_STRBUF_INIT;
            cg_strbuf_addf(&sb, "required by '%s'", mk->by);
            e->why = e->owned = cg_strbuf_detach(&sb, NULL);
        } else if (!e->why && e->in && mk && mk->kind == CG_MARK_SELECTED) {
            e->why = e->owned = selected_by(m, mk->pattern);
        } else if (!e->why && e->in && mk && mk->kind == CG_MARK_KEPT) {
            e->why = "kept: the workflow's 'keep' names it";
        }
        if (!e->why && !run->job_in[k] && cg_map_get(&S->why, j->name))
            e->why = cg_map_get(&S->why, j->name); /* CircleCI would not run it: the simulation's words */
        if (!e->why)
            e->why = run->job_why[k] ? run->job_why[k] : "not in a workflow this pipeline runs";
    }
    /* static entries by name (a copy in the per-change workflow is the same entry) */
    cg_map seen;
    cg_map_init(&seen);
    for (size_t i = 0; i < m->nstatics; i++) {
        const cg_static_job *sj = &m->statics[i];
        size_t at = (size_t)cg_map_get(&seen, sj->name);
        bool in = !sj->culled && run->workflow >= 0;
        const char *rule = i < run->nstatics ? run->statics[i].why : NULL;
        if (at && (v[at - 1].in || !in))
            continue;
        entry *e = at ? &v[at - 1] : &v[n++];
        if (!at)
            cg_map_put(&seen, sj->name, (void *)(uintptr_t)n);
        free(e->owned);
        *e = (entry){sj->name, in, rule, NULL};
        if (in && !rule && sj->mark.kind == CG_MARK_PULLED) {
            cg_strbuf sb = CG_STRBUF_INIT;
            cg_strbuf_addf(&sb, "required by '%s'", sj->mark.by);
            e->why = e->owned = cg_strbuf_detach(&sb, NULL);
        } else if (in && !rule && sj->mark.kind == CG_MARK_KEPT) {
            e->why = "kept: the workflow's 'keep' names it";
        } else if (in && !rule && sj->mark.kind == CG_MARK_SELECTED) {
            e->why = e->owned = selected_by(m, sj->mark.pattern);
        } else if (!e->why && !in && cg_map_get(&S->why, sj->name)) {
            e->why = cg_map_get(&S->why, sj->name);
        } else if (!e->why) {
            e->why = "the rules did not choose it";
        }
    }
    cg_map_release(&seen);
    qsort(v, n, sizeof *v, cmp_entry);
    *out = v;
    return n;
}

static bool sim_runs(const void *ctx, const char *workflow, const char *name)
{
    sim_set *S = (sim_set *)ctx;
    cg_strbuf_reset(&S->key);
    cg_strbuf_adds(&S->key, workflow);
    cg_strbuf_addc(&S->key, '\x1f');
    cg_strbuf_adds(&S->key, name);
    uintptr_t st = (uintptr_t)cg_map_get(&S->map, S->key.buf);
    return st == CG_RUNS + 1 || st == CG_UNKNOWN + 1;
}

/* Simulates the pipeline on the full config (no selection): the upper
 * bound of what select may pick. */
static int simulate_full(const cg_global *g0, const cg_pick_input *in, sim_set *S)
{
    cg_global g = *g0;
    g.opt.pipeline = NULL;
    g.opt.no_overlay = true;
    g.opt.selection = NULL;
    g.quiet = true;
    cg_project full;
    cg_project_init(&full);
    int rc = cg_cli_build(&g, &full, true);
    if (rc == 0) {
        cg_sim_input si = {in->branch, in->tag, in->schedule, in->param_names, in->param_values, in->nparams};
        cg_error err;
        cg_error_init(&err);
        if (cg_sim_run(full.m.manifest.output, full.out.config.buf, full.out.config.len, &si, NULL,
                                 &S->run, &err) != 0) {
            cg_cli_print_error(&err);
            rc = CG_EXIT_ERROR;
        }
        cg_error_release(&err);
    }
    cg_project_release(&full);
    for (size_t i = 0; rc == 0 && i < S->run.n; i++) {
        cg_strbuf_reset(&S->key);
        cg_strbuf_adds(&S->key, S->run.v[i].workflow);
        cg_strbuf_addc(&S->key, '\x1f');
        cg_strbuf_adds(&S->key, S->run.v[i].job);
        char *k = cg_xstrdup(S->key.buf);
        if (cg_map_put_new(&S->map, k, (void *)(uintptr_t)(S->run.v[i].state + 1)))
            free(k);
        if (S->run.v[i].why && !cg_map_has(&S->why, S->run.v[i].job))
            cg_map_put(&S->why, S->run.v[i].job, S->run.v[i].why);
    }
    for (size_t i = 0; rc == 0 && i < S->run.n; i++) {
        if (S->run.v[i].state != CG_SKIPPED)
            cg_map_put(&S->why, S->run.v[i].job, NULL); /* it may run somewhere: the rules say why not */
    }
    return rc;
}

static void sim_set_release(sim_set *S)
{
    for (size_t i = 0; i < S->map.cap; i++)
        free((char *)cg_map_key_at(&S->map, i));
    cg_map_release(&S->map);
    cg_map_release(&S->why);
    cg_strbuf_release(&S->key);
    cg_sim_result_release(&S->run);
}

/* A string for --json: a name git allows may be any bytes; escaped, never dropped. */
static json_t *json_text(const char *s)
{
    json_t *j = json_string(s);
    return j ? j : json_string(cg_cli_shown(s));
}

/* stdin, one file a line (blank lines skipped, a trailing '\r' dropped),
 * or NUL-separated (as git diff -z writes them: any byte but NUL is the
 * file's) */
static int read_changed(char ***files, size_t *n, bool nul)
{
    cg_strbuf all = CG_STRBUF_INIT;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, stdin)) > 0) {
        cg_strbuf_add(&all, buf, got);
        if (all.len > ((size_t)64 << 20)) {
            fprintf(stderr, "cigen: error: --changed-files: more than 64 MiB on stdin\n");
            cg_strbuf_release(&all);
            return -1;
        }
    }
    if (ferror(stdin)) {
        fprintf(stderr, "cigen: error: --changed-files: cannot read stdin: %s\n", strerror(errno));
        cg_strbuf_release(&all);
        return -1;
    }
    for (const char *s = all.buf ? all.buf : "", *end = s + all.len; s < end;) {
        const char *e = memchr(s, nul ? '\0' : '\n', (size_t)(end - s));
        size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
        size_t l = len;
        if (!nul && memchr(s, '\0', l)) {
            fprintf(stderr, "cigen: error: --changed-files: a NUL byte in a line (git diff -z writes them: add --null)\n");
            cg_strbuf_release(&all);
            return -1;
        }
        if (!nul && l && s[l - 1] == '\r')
            l--;
        if (l) {
            *files = cg_xrealloc(*files, (*n + 1) * sizeof **files);
            (*files)[(*n)++] = cg_xstrndup(s, l);
        }
        s += len + (e != NULL);
    }
    cg_strbuf_release(&all);
    return 0;
}

/* The commit message from a file (at most 64 MiB). */
static char *read_message(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "cigen: error: --message-file '%s': %s\n", cg_cli_shown(file), strerror(errno));
        return NULL;
    }
    cg_strbuf all = CG_STRBUF_INIT;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0 && all.len <= ((size_t)64 << 20))
        cg_strbuf_add(&all, buf, got);
    bool bad = ferror(f) || all.len > ((size_t)64 << 20);
    fclose(f);
    if (bad) {
        fprintf(stderr, "cigen: error: --message-file '%s': %s\n", cg_cli_shown(file),
                all.len > ((size_t)64 << 20) ? "more than 64 MiB" : "cannot read it");
        cg_strbuf_release(&all);
        return NULL;
    }
    return cg_strbuf_detach(&all, NULL);
}

int cg_cmd_select(const cg_global *g0, int argc, char **argv)
{
    cg_global local = *g0, *g = &local;
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"branch", required_argument, NULL, OPT_BRANCH},
        {"tag", required_argument, NULL, OPT_TAG},
        {"schedule", required_argument, NULL, OPT_SCHEDULE},
        {"message", required_argument, NULL, OPT_MESSAGE},
        {"changed", required_argument, NULL, OPT_CHANGED},
        {"changed-files", required_argument, NULL, OPT_CHANGED_FILES},
        {"parameter", required_argument, NULL, OPT_PARAMETER},
        {"message-file", required_argument, NULL, OPT_MESSAGE_FILE},
        {"null", no_argument, NULL, OPT_NULL},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"json", no_argument, NULL, OPT_JSON},
        {"output", required_argument, NULL, 'o'},
        CG_SPECIAL_LONGOPTS,
        CG_GLOBAL_LONGOPTS,
        {0}};
    cg_pick_input in = {0};
    char **changed = NULL, **pnames = NULL;
    const char **pvalues = NULL;
    size_t nchanged = 0, nparams = 0;
    const char *output = NULL;
    bool explain = false, json = false, from_stdin = false, nul = false;
    char *message = NULL;
    int c, rc = 0;
    cg_special sel;
    cg_special_init(&sel);
    sim_set S = {0};
    cg_map_init(&S.map);
    cg_map_init(&S.why);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while (rc == 0 && (c = cg_cli_getopt(g, argc, argv, "ho:qv", longopts)) != -1) {
        if (cg_cli_special_option(g, &sel, c, optarg))
            continue;
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            goto done;
        case OPT_BRANCH: in.branch = optarg; break;
        case OPT_TAG: in.tag = optarg; break;
        case OPT_SCHEDULE: in.schedule = optarg; break;
        case OPT_MESSAGE: in.message = optarg; break;
        case OPT_CHANGED:
            changed = cg_xrealloc(changed, (nchanged + 1) * sizeof *changed);
            changed[nchanged++] = cg_xstrdup(optarg);
            in.changed_known = true;
            break;
        case OPT_CHANGED_FILES:
            if (!cg_streq(optarg, "-")) {
                fprintf(stderr, "cigen: error: --changed-files takes '-' (the list on stdin), not '%s'\n", optarg);
                rc = CG_EXIT_ERROR;
            }
            from_stdin = in.changed_known = true;
            break;
        case OPT_PARAMETER: {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                fprintf(stderr, "cigen: error: --parameter takes NAME=VALUE, not '%s'\n", cg_cli_shown(optarg));
                rc = CG_EXIT_ERROR;
                break;
            }
            pnames = cg_xrealloc(pnames, (nparams + 1) * sizeof *pnames);
            pvalues = cg_xrealloc(pvalues, (nparams + 1) * sizeof *pvalues);
            pnames[nparams] = cg_xstrndup(optarg, (size_t)(eq - optarg));
            pvalues[nparams++] = eq + 1;
            break;
        }
        case OPT_MESSAGE_FILE:
            free(message);
            if (!(message = read_message(optarg)))
                rc = CG_EXIT_ERROR;
            in.message = message;
            break;
        case OPT_NULL: nul = true; break;
        case OPT_EXPLAIN: explain = true; break;
        case OPT_JSON: json = true; break;
        case 'o': output = optarg; break;
        default: rc = CG_EXIT_ERROR;
        }
    }
    if (rc == 0 && optind < argc) {
        fprintf(stderr, "cigen: error: select takes no arguments ('%s'); see cigen select --help\n", argv[optind]);
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0 && in.branch && *in.branch && in.tag && *in.tag) {
        fprintf(stderr, "cigen: error: a pipeline has a branch or a tag, not both\n");
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0 && nul && !from_stdin) {
        fprintf(stderr, "cigen: error: --null is about the list --changed-files - reads\n");
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0 && from_stdin && read_changed(&changed, &nchanged, nul) != 0)
        rc = CG_EXIT_ERROR;
    if (rc != 0)
        goto done;
    in.changed = (const char **)changed;
    in.nchanged = nchanged;
    in.param_names = (const char **)pnames;
    in.param_values = pvalues;
    in.nparams = nparams;
    if (simulate_full(g, &in, &S) != 0) {
        rc = CG_EXIT_ERROR;
        goto done;
    }
    in.runs = sim_runs;
    in.runs_ctx = &S;
    g->opt.pipeline = &in;
    cg_project p;
    cg_project_init(&p);
    rc = cg_cli_build(g, &p, true);
    if (rc == 0 && p.lint.nerrors) {
        cg_strbuf out = CG_STRBUF_INIT;
        cg_lint_print_some(&p.lint, !g->quiet, &out);
        fputs(cg_strbuf_str(&out), stderr);
        cg_strbuf_release(&out);
        fprintf(stderr, "cigen: error: not writing the selected config: %zu lint error%s\n", p.lint.nerrors,
                p.lint.nerrors == 1 ? "" : "s");
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0) {
        const cg_pick_run *run = p.m.run;
        const char *wname = run->workflow >= 0 ? p.m.manifest.workflows[run->workflow].name : NULL;
        cg_strbuf wnames = CG_STRBUF_INIT;
        size_t nwf = 0;
        for (size_t w = 0; wname && w < p.m.manifest.nworkflows; w++)
            if (!(p.m.omitted & ((uint64_t)1 << w)))
                cg_strbuf_addf(&wnames, "%s'%s'", nwf++ ? ", " : "", p.m.manifest.workflows[w].name);
        entry *v = NULL;
        size_t n = entries(&p, &S, &v), nin = 0;
        for (size_t i = 0; i < n; i++)
            nin += v[i].in;
        if (json) {
            json_t *o = json_object(), *jobs = json_array(), *notes = json_array();
            json_object_set_new(o, "pipeline", json_text(run->what));
            json_t *wl = json_array();
            for (size_t w = 0; wname && w < p.m.manifest.nworkflows; w++)
                if (!(p.m.omitted & ((uint64_t)1 << w)))
                    json_array_append_new(wl, json_text(p.m.manifest.workflows[w].name));
            json_object_set_new(o, "workflows", wl);
            for (size_t i = 0; i < run->nnotes; i++)
                json_array_append_new(notes, json_text(run->notes[i]));
            json_object_set_new(o, "notes", notes);
            json_object_set(o, "parameters", run->parameters);
            json_object_set_new(o, "jobs_in", json_integer((json_int_t)nin));
            for (size_t i = 0; i < n; i++) {
                json_t *e = json_object();
                json_object_set_new(e, "name", json_text(v[i].name));
                json_object_set_new(e, "in", json_boolean(v[i].in));
                json_object_set_new(e, "why", json_text(v[i].why));
                json_array_append_new(jobs, e);
            }
            json_object_set_new(o, "jobs", jobs);
            char *s = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
            printf("%s\n", s);
            free(s);
            json_decref(o);
        } else if (explain) {
            for (size_t i = 0; i < n; i++)
                printf("%-3s %s: %s\n", v[i].in ? "in" : "out", v[i].name, cg_cli_shown(v[i].why));
        } else if (!output) {
            for (size_t i = 0; i < n && v[i].in; i++)
                printf("%s\n", v[i].name);
        }
        /* written first: the summary says "written" only when it was */
        if (output && wname)
            rc = cg_disk_write_one(&p, output, p.out.config.buf, p.out.config.len, "the selected config");
        if (!g->quiet && rc == 0) {
            /* a branch name or a message may hold control characters: escaped */
            for (size_t i = 0; i < run->nnotes; i++)
                fprintf(stderr, "cigen: %s\n", cg_cli_shown(run->notes[i]));
            if (wname)
                fprintf(stderr, "cigen: %s: %zu job%s in workflow%s %s%s%s\n", cg_cli_shown(run->what), nin,
                        nin == 1 ? "" : "s", nwf == 1 ? "" : "s", cg_cli_shown(wnames.buf),
                        output ? ", written to " : "", output ? cg_cli_shown(output) : "");
            else
                fprintf(stderr, "cigen: %s: nothing runs%s\n", cg_cli_shown(run->what),
                        output ? " (nothing written: the setup job ends the pipeline)" : "");
        }
        for (size_t i = 0; i < n; i++)
            free(v[i].owned);
        free(v);
        cg_strbuf_release(&wnames);
    }
    cg_project_release(&p);
done:
    sim_set_release(&S);
    cg_special_release(&sel);
    for (size_t i = 0; i < nchanged; i++)
        free(changed[i]);
    free(changed);
    for (size_t i = 0; i < nparams; i++)
        free(pnames[i]);
    free(pnames);
    free(pvalues);
    free(message);
    return rc;
}
