/* cigen list — the generated jobs with their dimension values, then the
 * static entries and the jobs of fragments no entry runs. */
#include <fnmatch.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "audit/simulate.h"
#include "cmd/cli.h"
#include "model/query.h"

static void add_column(const char ***cols, size_t *n, size_t *cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (cg_streq((*cols)[i], name))
            return;
    cg_grow(cols, cap, *n + 1, sizeof **cols);
    (*cols)[(*n)++] = name;
}

static json_t *job_json(cg_project *p, const cg_job *j, cg_env *env)
{
    const cg_tree *t = j->tree;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(j->name));
    json_object_set_new(o, "tree", json_string(t->name));
    json_object_set_new(o, "phase", json_string(t->phases[j->phase].name));
    json_t *dims = json_object();
    for (size_t d = 0; d < t->ndims; d++)
        if (j->cell->values[d])
            json_object_set_new(dims, t->dims[d], json_string(j->cell->values[d]));
    json_object_set_new(o, "dimensions", dims);
    json_t *vars = json_object();
    for (size_t id = t->ndims + CG_NBUILTINS; id < t->nnames; id++) {
        const char *v;
        size_t n;
        bool typed;
        if (cg_env_get(env, (int)id, &v, &n, &typed) == 1)
            json_object_set_new(vars, t->names[id], json_stringn(v, n));
    }
    json_object_set_new(o, "variables", vars);
    json_t *wfs = json_array(), *gated = json_array();
    for (size_t w = 0; w < p->m.manifest.nworkflows; w++) {
        if (j->workflows & ((uint64_t)1 << w))
            json_array_append_new(wfs, json_string(p->m.manifest.workflows[w].name));
        if (j->gated & ((uint64_t)1 << w))
            json_array_append_new(gated, json_string(p->m.manifest.workflows[w].name));
    }
    json_object_set_new(o, "workflows", wfs);
    json_object_set_new(o, "on_request_in", gated);
    json_t *special = json_array();
    for (size_t w = 0; w < p->m.manifest.nworkflows; w++)
        if (j->special & ((uint64_t)1 << w))
            json_array_append_new(special, json_string(p->m.manifest.workflows[w].name));
    json_object_set_new(o, "special_in", special);
    if (p->m.marks) {
        cg_strbuf mt = CG_STRBUF_INIT;
        cg_cli_mark_text(&p->m, &p->m.marks[j->index], &mt);
        json_object_set_new(o, "selection", json_string(mt.buf));
        cg_strbuf_release(&mt);
    }
    json_t *tiers = json_array();
    for (size_t k = 0; k < t->ntiers; k++)
        if (j->cell->tiers & ((uint64_t)1 << k))
            json_array_append_new(tiers, json_string(t->tiers[k].name));
    json_object_set_new(o, "tiers", tiers);
    json_t *req = json_array();
    for (uint32_t r = 0; r < j->nrequires; r++) /* an optional one as written: `name?` */
        json_array_append_new(req, cg_job_require_optional(j, r) ? json_sprintf("%s?", j->requires[r])
                                                                  : json_string(j->requires[r]));
    json_object_set_new(o, "requires", req);
    /* a group's job: where its `per` is, and how many cells it gathers */
    const cg_phase *ph = &t->phases[j->phase];
    const cg_pos *at = j->nmembers ? &ph->per_pos : &j->cell->leaf->pos;
    if (j->nmembers) {
        json_t *per = json_array();
        for (size_t d = 0; d < ph->nper; d++)
            json_array_append_new(per, json_string(t->dims[ph->per[d]]));
        json_object_set_new(o, "per", per);
        json_object_set_new(o, "cells", json_integer(j->nmembers));
    }
    char src[600];
    snprintf(src, sizeof src, "%s:%u", at->file, (unsigned)at->line);
    json_object_set_new(o, "source", json_string(src));
    return o;
}

/* list --branch/--tag/--schedule: what CircleCI would run on that pipeline. */
static int list_branch(cg_project *p, const cg_sim_input *in, const char *workflow, bool json)
{
    const char *branch = in->branch ? in->branch : "";
    cg_sim_result run = {0};
    cg_error err;
    cg_error_init(&err);
    if (cg_sim_run(p->m.manifest.output, p->out.config.buf, p->out.config.len, in, workflow, &run,
                             &err) != 0) {
        cg_cli_print_error(&err);
        cg_error_release(&err);
        return CG_EXIT_ERROR;
    }
    static const char *const state[] = {"yes", "no", "?"};
    if (json) {
        json_t *a = json_array();
        for (size_t i = 0; i < run.n; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "workflow", json_string(run.v[i].workflow));
            json_object_set_new(o, "job", json_string(run.v[i].job));
            json_object_set_new(o, "runs", run.v[i].state == CG_UNKNOWN ? json_null()
                                                                        : json_boolean(run.v[i].state == CG_RUNS));
            json_object_set_new(o, "why", run.v[i].why ? json_string(run.v[i].why) : json_null());
            json_array_append_new(a, o);
        }
        char *s = json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        puts(s);
        free(s);
        json_decref(a);
    } else {
        size_t ww = strlen("WORKFLOW"), jw = strlen("JOB");
        for (size_t i = 0; i < run.n; i++) {
            if (strlen(run.v[i].workflow) > ww)
                ww = strlen(run.v[i].workflow);
            if (strlen(run.v[i].job) > jw)
                jw = strlen(run.v[i].job);
        }
        printf("%-*s  %-*s  RUNS\n", (int)ww, "WORKFLOW", (int)jw, "JOB");
        for (size_t i = 0; i < run.n; i++) {
            if (run.v[i].why)
                printf("%-*s  %-*s  %-4s  %s\n", (int)ww, cg_cli_shown(run.v[i].workflow), (int)jw,
                       cg_cli_shown(run.v[i].job), state[run.v[i].state], cg_cli_shown(run.v[i].why));
            else
                printf("%-*s  %-*s  %s\n", (int)ww, cg_cli_shown(run.v[i].workflow), (int)jw,
                       cg_cli_shown(run.v[i].job), state[run.v[i].state]);
        }
        size_t nrun = 0;
        for (size_t i = 0; i < run.n; i++)
            nrun += run.v[i].state == CG_RUNS;
        cg_strbuf what = CG_STRBUF_INIT;
        cg_sim_describe(in, &what);
        printf("%zu of %zu workflow entr%s run on %s\n", nrun, run.n, run.n == 1 ? "y" : "ies",
               cg_cli_shown(what.buf));
        cg_strbuf_release(&what);
    }
    if (p->m.manifest.pipeline.dynamic && *branch && !(in->tag && *in->tag)) {
        /* the setup job picks among these: what it picks is select's to say */
        cg_strbuf sh = CG_STRBUF_INIT;
        cg_strbuf_add_shell_quoted(&sh, branch);
        fprintf(json ? stderr : stdout, "%sdynamic mode: this simulates %s as a classic config (every job CircleCI "
                "could start); the jobs a pipeline on this branch runs are what `cigen select --branch %s "
                "--explain` picks\n", json ? "cigen: note: " : "", p->m.manifest.output, cg_cli_shown(sh.buf));
        cg_strbuf_release(&sh);
    }
    cg_sim_result_release(&run);
    cg_error_release(&err);
    return 0;
}

/* A row that is no generated job: a static entry of the manifest's
 * workflows, or a job of a fragment that no entry runs. */
typedef struct other_row {
    const char *name;
    const char *kind;        /* "static" or "fragment" */
    const char *runs;        /* the job it runs (static), or NULL */
    uint64_t workflows;      /* manifest workflows (static) */
    const char **verbatim;   /* workflows of fragments that run it (fragment) */
    size_t nverbatim;
    const char *const *requires;
    const bool *requires_optional; /* `name?` (static), or NULL */
    uint32_t nrequires;
    cg_pos pos;
    const cg_mark *mark;     /* what a special-PR selection did (static), or NULL */
    json_t *entry;           /* the static entry as written (its arguments), or NULL */
} other_row;

/* The job a generated entry runs: its template's key. */
static int invoked_job(const cg_model *m, const cg_job *j, cg_env *env, cg_strbuf *out, cg_error *err)
{
    const cg_template *tpl = cg_model_template(m, j, env, err);
    if (!tpl)
        return -1;
    cg_strbuf_reset(out);
    if (tpl->invoke.ctext) {
        cg_strbuf_add(out, tpl->invoke.ctext, tpl->invoke.ctext_len);
        return 0;
    }
    cg_src src = {tpl->doc, tpl->invoke.path, {0}, false};
    return cg_env_expand(env, &tpl->invoke.text, CG_EXPAND_PLAIN, NULL, out, &src, "the template");
}

/* Whether the workflow entry e (a name or {job: {...}}) runs job `name`. */
static bool entry_runs(json_t *e, const char *name)
{
    if (json_is_string(e))
        return cg_streq(json_string_value(e), name);
    const char *k;
    json_t *v;
    json_object_foreach(e, k, v)
        return cg_streq(k, name);
    return false;
}

/* The static entries (one row per name) and the jobs of fragments that no
 * entry runs, in manifest order. */
static int other_rows(cg_project *p, cg_env *envs, other_row **out, size_t *n, cg_error *err)
{
    const cg_model *m = &p->m;
    size_t cap = 0;
    cg_map seen, runs;  /* row names; jobs some entry runs */
    cg_map_init(&seen);
    cg_map_init(&runs);
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        cg_map_put(&runs, sj->invokes, (void *)1); /* culled by a selection: still not a fragment's own */
        if (sj->culled)
            continue;
        size_t at = (size_t)cg_map_get(&seen, sj->name);
        if (at) {
            (*out)[at - 1].workflows |= (uint64_t)1 << sj->workflow;
            continue;
        }
        cg_grow(out, &cap, *n + 1, sizeof **out);
        (*out)[*n] = (other_row){sj->name, "static", sj->invokes, (uint64_t)1 << sj->workflow, NULL, 0,
                                 sj->requires, sj->requires_optional, sj->nrequires, sj->pos, &sj->mark, sj->entry};
        cg_map_put(&seen, sj->name, (void *)(++*n));
    }
    cg_strbuf inv = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t k = 0; k < m->jobs.n && rc == 0; k++) {
        const cg_job *j = &m->jobs.v[k]; /* culled ones too: their templates were loaded */
        cg_env *env = &envs[j->tree->index];
        if ((rc = cg_model_bind_job(m, env, j, -1)) == 0 && (rc = invoked_job(m, j, env, &inv, err)) == 0 &&
            !cg_map_has(&runs, cg_strbuf_str(&inv)))
            cg_map_put(&runs, cg_pool_strndup(&p->m.pool, inv.buf, inv.len), (void *)1);
    }
    cg_strbuf_release(&inv);
    for (size_t f = 0; f < m->nfragments && rc == 0; f++) {
        const cg_doc *doc = m->fragments[f].doc;
        json_t *root = cg_doc_root(doc), *defs = json_object_get(root, "jobs");
        json_t *wfs = json_object_get(root, "workflows");
        const char *name;
        json_t *def;
        json_object_foreach(defs, name, def) {
            if (cg_map_has(&runs, name) || cg_map_has(&seen, name))
                continue;
            cg_grow(out, &cap, *n + 1, sizeof **out);
            other_row *r = &(*out)[*n];
            cg_strbuf path = CG_STRBUF_INIT;
            cg_strbuf_adds(&path, "/jobs");
            cg_path_push_key(&path, name);
            *r = (other_row){name, "fragment", NULL, 0, NULL, 0, NULL, NULL, 0, cg_doc_key_where(doc, path.buf), NULL,
                             NULL};
            cg_strbuf_release(&path);
            /* a verbatim workflow of a fragment may run it */
            for (size_t g = 0; g < m->nfragments; g++) {
                json_t *w = g == f ? wfs : json_object_get(cg_doc_root(m->fragments[g].doc), "workflows");
                const char *wn;
                json_t *wd;
                json_object_foreach(w, wn, wd) {
                    json_t *jl = json_is_object(wd) ? json_object_get(wd, "jobs") : NULL;
                    bool hit = false;
                    for (size_t i = 0; i < json_array_size(jl) && !hit; i++)
                        hit = entry_runs(json_array_get(jl, i), name);
                    if (hit) {
                        r->verbatim = cg_xrealloc(r->verbatim, (r->nverbatim + 1) * sizeof *r->verbatim);
                        r->verbatim[r->nverbatim++] = wn;
                    }
                }
            }
            cg_map_put(&seen, name, (void *)(++*n));
        }
    }
    cg_map_release(&seen);
    cg_map_release(&runs);
    return rc;
}

/* Whether every --where group matches an other row (through one of its
 * workflows, or none). */
static bool other_matches(const cg_query *q, const cg_model *m, const other_row *r)
{
    for (size_t i = 0; i < q->n; i++) {
        bool hit = false;
        size_t nw = 0;
        for (size_t w = 0; w < m->manifest.nworkflows && !hit; w++)
            if (r->workflows & ((uint64_t)1 << w)) {
                nw++;
                hit = cg_qgroup_match_static(&q->groups[i], r->name, r->runs, m->manifest.workflows[w].name,
                                             r->entry);
            }
        for (size_t w = 0; w < r->nverbatim && !hit; w++, nw++)
            hit = cg_qgroup_match_static(&q->groups[i], r->name, r->runs, r->verbatim[w], r->entry);
        if (!hit && !nw)
            hit = cg_qgroup_match_static(&q->groups[i], r->name, r->runs, "", r->entry);
        if (!hit)
            return false;
    }
    return true;
}

static json_t *other_json(const cg_model *m, const other_row *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "kind", json_string(r->kind));
    if (r->runs)
        json_object_set_new(o, "runs", json_string(r->runs));
    json_t *wfs = json_array();
    for (size_t w = 0; w < m->manifest.nworkflows; w++)
        if (r->workflows & ((uint64_t)1 << w))
            json_array_append_new(wfs, json_string(m->manifest.workflows[w].name));
    for (size_t w = 0; w < r->nverbatim; w++)
        json_array_append_new(wfs, json_string(r->verbatim[w]));
    json_object_set_new(o, "workflows", wfs);
    json_t *req = json_array();
    for (uint32_t i = 0; i < r->nrequires; i++)
        json_array_append_new(req, r->requires_optional && r->requires_optional[i] ? json_sprintf("%s?", r->requires[i])
                                                                                   : json_string(r->requires[i]));
    json_object_set_new(o, "requires", req);
    if (m->marks && r->mark) {
        cg_strbuf mt = CG_STRBUF_INIT;
        cg_cli_mark_text(m, r->mark, &mt);
        json_object_set_new(o, "selection", json_string(mt.buf));
        cg_strbuf_release(&mt);
    }
    char src[600];
    snprintf(src, sizeof src, "%s:%u", r->pos.file ? r->pos.file : "?", (unsigned)r->pos.line);
    json_object_set_new(o, "source", json_string(src));
    return o;
}

/* Whether `name` is a variable (in some tree) and no tree's dimension:
 * --where on it adds a column. */
static bool variable_column(const cg_model *m, const char *name)
{
    static const char *const pseudo[] = {"phase", "tree", "workflow", "tier", "job"};
    for (size_t k = 0; k < CG_ARRAY_LEN(pseudo); k++)
        if (cg_streq(name, pseudo[k]))
            return false;
    bool var = false;
    for (size_t t = 0; t < m->ntrees; t++) {
        int id = cg_tree_name_id(m->trees[t], name);
        if (cg_tree_is_dim(m->trees[t], id))
            return false;
        var = var || id >= (int)(m->trees[t]->ndims + CG_NBUILTINS);
    }
    return var;
}

/* The value of column `col` for job j (env bound to it), or "-". */
static const char *cell_value(const cg_job *j, cg_env *env, const char *col, bool is_var)
{
    int id = cg_tree_name_id(j->tree, col);
    if (!is_var)
        return cg_tree_is_dim(j->tree, id) && j->cell->values[id] ? j->cell->values[id] : "-";
    const char *v;
    size_t n;
    bool typed;
    if (id < (int)(j->tree->ndims + CG_NBUILTINS) || cg_env_get(env, id, &v, &n, &typed) != 1)
        return "-";
    return v;
}

/* A name or value of the table as shown: it comes from the sources, so a
 * tab (which would break the columns), a control character or an escape
 * sequence in it is written escaped, as in messages.  Into *buf, which it
 * returns the text of. */
static const char *shown(cg_strbuf *buf, const char *s)
{
    const unsigned char *c = (const unsigned char *)s;
    while (*c >= 0x20 && *c < 0x7f)
        c++;
    if (!*c)
        return s; /* printable ASCII, as nearly every value is */
    cg_strbuf tabs = CG_STRBUF_INIT;
    cg_add_tabs_shown(&tabs, s);
    cg_strbuf_reset(buf);
    cg_escape_line(buf, tabs.buf ? tabs.buf : "", tabs.len);
    cg_strbuf_release(&tabs);
    return cg_strbuf_str(buf);
}

/* The columns a shown text takes: one per character (UTF-8 continuation
 * bytes take none), so that a value with accents stays aligned. */
static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Appends text shown, padded to width columns. */
static void add_cell(cg_strbuf *line, cg_strbuf *buf, const char *text, size_t width, bool pad)
{
    const char *t = shown(buf, text);
    cg_strbuf_adds(line, t);
    if (pad)
        cg_strbuf_addspaces(line, width - columns(t));
}

static void widen(size_t *width, cg_strbuf *buf, const char *text)
{
    size_t n = columns(shown(buf, text));
    if (n > *width)
        *width = n;
}

static void put_row(const cg_strbuf *line)
{
    puts(cg_strbuf_str(line));
}

int cg_cmd_list(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"where", required_argument, NULL, 'w'},
                                             {"branch", required_argument, NULL, 'b'},
                                             {"tag", required_argument, NULL, 'T'},
                                             {"schedule", required_argument, NULL, 'S'},
                                             {"parameter", required_argument, NULL, 'P'},
                                             {"workflow", required_argument, NULL, 'W'},
                                             CG_SPECIAL_LONGOPTS, CG_GLOBAL_LONGOPTS,
                                             {0}};
    cg_query q;
    cg_query_init(&q);
    bool json = false;
    const char *branch = NULL, *workflow = NULL;
    cg_sim_input sim = {0};
    const char **pnames = NULL, **pvalues = NULL;
    bool simulate = false;
    int c, rc = 0;
    cg_global local = *g0, *g = &local;
    cg_special sel;
    cg_special_init(&sel);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqvw:", longopts)) != -1) {
        if (cg_cli_special_option(g, &sel, c, optarg))
            continue;
        if (c == 'h') {
            puts("usage: cigen list [--where NAME=GLOB[,NAME=GLOB...]]... [--json]\n"
                 "                  [--only PATTERN]... [--also PATTERN]... [--overlay FILE]\n"
                 "                  [--allow-protected] [--pr-branch NAME]\n"
                 "       cigen list [--branch NAME] [--tag NAME] [--schedule NAME]\n"
                 "                  [--parameter NAME=VALUE]... [--workflow NAME] [--json]\n\n"
                 "Lists the generated jobs, one a line, with their dimension values, then the\n"
                 "static entries of the manifest's workflows and the jobs of fragments that no\n"
                 "entry runs ('-' in every column).\n"
                 "--where keeps jobs whose dimension, variable, 'phase', 'tree', 'workflow'\n"
                 "or 'tier' matches the glob ('!' negates: os=!macos or !os=macos); several\n"
                 "--where all apply; one on a variable adds a column with its value.  Static\n"
                 "entries and fragment jobs match only job names and 'workflow'.  A backslash\n"
                 "escapes the next character, so a value holding a comma is selected with\n"
                 "os=linux\\,arm (also \\* \\? \\[ \\\\).  A tab or control character in a name\n"
                 "or value is shown escaped (\\t, \\n, \\x1b), so the columns stay aligned.\n"
                 "Exit status: 0, or 2 for bad sources or usage.\n"
                 "--json prints an array of objects (name, tree, phase, dimensions, variables,\n"
                 "workflows, tiers, requires, source; for a phase with 'per' also per, cells;\n"
                 "for the others name, kind (static or fragment), runs, workflows, requires,\n"
                 "source); an optional requirement is listed as written, NAME?.\n"
                 "With a special-PR selection, lists the jobs of that config, and a SELECTION\n"
                 "column (\"selection\" in --json): selected (by which pattern), pulled in (by\n"
                 "which job), or kept; culled jobs are not listed (`cigen explain` has them).\n\n"
                 "--branch NAME simulates CircleCI on a push to branch NAME with the config the\n"
                 "sources (and the selection) make: every workflow entry (static ones too), with\n"
                 "whether it runs and why not.  A workflow with triggers (a schedule) does not\n"
                 "run on a push; a job runs when its filters' branches 'only' (a name, a /regex/\n"
                 "matching the whole name, or a list) matches and 'ignore' does not, and all the\n"
                 "jobs it requires run; 'when:' is evaluated on the branch, the tag, the\n"
                 "schedule's name, the pipeline parameters (given, else their defaults) and\n"
                 "pipeline.trigger_source (scheduled_pipeline on a scheduled pipeline, not it\n"
                 "on a push), and reported as not simulated when it needs other values.  A\n"
                 "/regex/ is Java's syntax, as CircleCI reads it: PCRE2 matches it, and what\n"
                 "Java refuses or PCRE2 would read otherwise is refused where the sources are\n"
                 "loaded.\n"
                 "--tag NAME simulates a push of tag NAME: a job runs only when its filters'\n"
                 "tags let the tag through (no tags filter: it does not run), and what it\n"
                 "requires runs too.  --schedule NAME simulates a scheduled run: the workflow\n"
                 "NAME's schedule (triggers) firing, on --branch (then no other workflow runs),\n"
                 "or a scheduled pipeline named NAME (pipeline.schedule.name) that runs every\n"
                 "workflow without triggers its 'when' allows.  --parameter NAME=VALUE gives a\n"
                 "pipeline parameter (checked against its declaration) for 'when:'.\n"
                 "docs/pipeline.md cites CircleCI's documentation for each rule.\n"
                 "--workflow keeps one workflow.  In dynamic mode it simulates the continuation\n"
                 "as a classic config and says so: `cigen select --branch NAME --explain` shows\n"
                 "the jobs the setup job picks.\n\n"
                 CG_SPECIAL_HELP);
            cg_query_release(&q);
            cg_special_release(&sel);
            return 0;
        }
        if (c == 'j') {
            json = true;
        } else if (c == 'b') {
            branch = sim.branch = optarg;
            simulate = true;
        } else if (c == 'T') {
            sim.tag = optarg;
            simulate = true;
        } else if (c == 'S') {
            sim.schedule = optarg;
            simulate = true;
        } else if (c == 'P') {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                fprintf(stderr, "cigen: error: --parameter takes NAME=VALUE, not '%s'\n", cg_cli_shown(optarg));
                rc = CG_EXIT_ERROR;
                break;
            }
            pnames = cg_xrealloc(pnames, (sim.nparams + 1) * sizeof *pnames);
            pvalues = cg_xrealloc(pvalues, (sim.nparams + 1) * sizeof *pvalues);
            pnames[sim.nparams] = cg_xstrndup(optarg, (size_t)(eq - optarg));
            pvalues[sim.nparams++] = eq + 1;
            simulate = true;
        } else if (c == 'W') {
            workflow = optarg;
        } else if (c == 'w') {
            if (cg_query_add(&q, optarg) != 0) {
                fprintf(stderr, "cigen: error: --where wants NAME=GLOB[,NAME=GLOB...], not '%s'\n", cg_cli_shown(optarg));
                cg_query_release(&q);
                return CG_EXIT_ERROR;
            }
        } else {
            cg_query_release(&q);
            cg_special_release(&sel);
            return CG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: list takes no arguments ('%s')\n", cg_cli_shown(argv[optind]));
        cg_query_release(&q);
        cg_special_release(&sel);
        return CG_EXIT_ERROR;
    }
    if (rc == 0 && workflow && !simulate) {
        fprintf(stderr, "cigen: error: list --workflow goes with --branch, --tag or --schedule\n");
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0 && branch && sim.tag) {
        fprintf(stderr, "cigen: error: a pipeline has a branch or a tag, not both\n");
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0 && simulate && !branch && !sim.tag && !sim.schedule) {
        fprintf(stderr, "cigen: error: --parameter goes with --branch, --tag or --schedule\n");
        rc = CG_EXIT_ERROR;
    }
    sim.param_names = pnames;
    sim.param_values = pvalues;
    cg_project p;
    cg_project_init(&p);
    if (rc == 0)
        rc = cg_cli_build(g, &p, simulate);
    cg_special_release(&sel);
    if (rc == 0 && simulate)
        rc = list_branch(&p, &sim, workflow, json);
    for (size_t i = 0; i < sim.nparams; i++)
        free((char *)pnames[i]);
    free(pnames);
    free(pvalues);
    if (simulate || rc != 0) {
        cg_project_release(&p);
        cg_query_release(&q);
        return rc;
    }
    cg_error err;
    cg_error_init(&err);
    if (cg_query_check_names(&q, &p.m, NULL, &err) != 0) {
        cg_cli_print_error(&err);
        cg_error_release(&err);
        cg_project_release(&p);
        cg_query_release(&q);
        return CG_EXIT_ERROR;
    }
    cg_env *envs = cg_xcalloc(p.m.ntrees + 1, sizeof *envs);
    for (size_t i = 0; i < p.m.ntrees; i++)
        cg_env_init(&envs[i], p.m.trees[i], &err);
    /* columns: the dimensions of every tree, in order of appearance */
    const char **cols = NULL;
    size_t ncols = 0, cap = 0;
    for (size_t i = 0; i < p.m.ntrees; i++)
        for (size_t d = 0; d < p.m.trees[i]->ndims; d++)
            add_column(&cols, &ncols, &cap, p.m.trees[i]->dims[d]);
    size_t ndimcols = ncols; /* then the variables --where names */
    for (size_t i = 0; i < q.n; i++)
        for (size_t k = 0; k < q.groups[i].n; k++)
            if (q.groups[i].terms[k].name && variable_column(&p.m, q.groups[i].terms[k].name))
                add_column(&cols, &ncols, &cap, q.groups[i].terms[k].name);
    size_t *width = cg_xcalloc(ncols + 2, sizeof *width);
    bool *keep = cg_xcalloc(p.m.jobs.n + 1, sizeof *keep);
    cg_strbuf buf = CG_STRBUF_INIT;
    width[0] = 3; /* "JOB" */
    for (size_t c2 = 0; c2 < ncols; c2++)
        widen(&width[c2 + 1], &buf, cols[c2]);
    for (size_t k = 0; k < p.m.jobs.n && rc == 0; k++) {
        const cg_job *j = &p.m.jobs.v[k];
        if (!j->workflows)
            continue; /* culled by a special-PR selection */
        cg_env *env = &envs[j->tree->index];
        if (cg_model_bind_job(&p.m, env, j, -1) != 0) {
            rc = CG_EXIT_ERROR;
            break;
        }
        int m = cg_query_match(&q, &p.m, j, env);
        if (m < 0) {
            rc = CG_EXIT_ERROR;
            break;
        }
        keep[k] = m;
        if (!keep[k])
            continue;
        widen(&width[0], &buf, j->name);
        for (size_t c2 = 0; c2 < ncols; c2++)
            widen(&width[c2 + 1], &buf, cell_value(j, env, cols[c2], c2 >= ndimcols));
    }
    /* static entries and jobs of fragments no entry runs */
    other_row *others = NULL;
    size_t nothers = 0;
    bool *keep_other = NULL;
    if (rc == 0 && other_rows(&p, envs, &others, &nothers, &err) != 0)
        rc = CG_EXIT_ERROR;
    keep_other = cg_xcalloc(nothers + 1, sizeof *keep_other);
    for (size_t k = 0; k < nothers && rc == 0; k++) {
        keep_other[k] = other_matches(&q, &p.m, &others[k]);
        if (keep_other[k])
            widen(&width[0], &buf, others[k].name);
    }
    if (rc == 0 && json) {
        /* one object at a time: the array never has to be held in memory */
        fputs("[", stdout);
        bool first = true;
        for (size_t k = 0; k < p.m.jobs.n && rc == 0; k++) {
            if (!keep[k])
                continue;
            const cg_job *j = &p.m.jobs.v[k];
            cg_env *env = &envs[j->tree->index];
            cg_model_bind_job(&p.m, env, j, -1);
            json_t *o = job_json(&p, j, env);
            char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
            printf("%s\n  %s", first ? "" : ",", s);
            free(s);
            json_decref(o);
            first = false;
        }
        for (size_t k = 0; k < nothers; k++) {
            if (!keep_other[k])
                continue;
            json_t *o = other_json(&p.m, &others[k]);
            char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
            printf("%s\n  %s", first ? "" : ",", s);
            free(s);
            json_decref(o);
            first = false;
        }
        puts(first ? "]" : "\n]");
    } else if (rc == 0) {
        cg_strbuf line = CG_STRBUF_INIT;
        cg_strbuf_adds(&line, "JOB");
        cg_strbuf_addspaces(&line, width[0] - 3);
        for (size_t c2 = 0; c2 < ncols; c2++) {
            cg_strbuf_adds(&line, "  ");
            add_cell(&line, &buf, cols[c2], width[c2 + 1], c2 + 1 < ncols || p.m.marks);
        }
        if (p.m.marks)
            cg_strbuf_adds(&line, "  SELECTION");
        put_row(&line);
        for (size_t k = 0; k < p.m.jobs.n; k++) {
            if (!keep[k])
                continue;
            const cg_job *j = &p.m.jobs.v[k];
            cg_strbuf_reset(&line);
            add_cell(&line, &buf, j->name, width[0], true);
            cg_env *env = &envs[j->tree->index];
            if (ncols > ndimcols)
                cg_model_bind_job(&p.m, env, j, -1);
            for (size_t c2 = 0; c2 < ncols; c2++) {
                cg_strbuf_adds(&line, "  ");
                add_cell(&line, &buf, cell_value(j, env, cols[c2], c2 >= ndimcols), width[c2 + 1],
                         c2 + 1 < ncols || p.m.marks);
            }
            if (p.m.marks) {
                cg_strbuf_adds(&line, "  ");
                cg_cli_mark_word(&p.m.marks[k], &line);
            }
            /* no trailing blanks */
            while (line.len && line.buf[line.len - 1] == ' ')
                cg_strbuf_truncate(&line, line.len - 1);
            put_row(&line);
        }
        /* the other rows have no dimension or variable: "-" in every column */
        for (size_t k = 0; k < nothers; k++) {
            if (!keep_other[k])
                continue;
            cg_strbuf_reset(&line);
            add_cell(&line, &buf, others[k].name, width[0], true);
            for (size_t c2 = 0; c2 < ncols; c2++) {
                cg_strbuf_adds(&line, "  -");
                if (c2 + 1 < ncols || p.m.marks)
                    cg_strbuf_addspaces(&line, width[c2 + 1] - 1);
            }
            if (p.m.marks && others[k].mark) {
                cg_strbuf_adds(&line, "  ");
                cg_cli_mark_word(others[k].mark, &line);
            }
            while (line.len && line.buf[line.len - 1] == ' ')
                cg_strbuf_truncate(&line, line.len - 1);
            put_row(&line);
        }
        cg_strbuf_release(&line);
    }
    if (rc != 0)
        cg_cli_print_error(&err);
    for (size_t i = 0; i < p.m.ntrees; i++)
        cg_env_release(&envs[i]);
    free(envs);
    for (size_t k = 0; k < nothers; k++)
        free(others[k].verbatim);
    free(others);
    free(keep_other);
    free(cols);
    free(width);
    free(keep);
    cg_strbuf_release(&buf);
    cg_error_release(&err);
    cg_project_release(&p);
    cg_query_release(&q);
    return rc;
}
