/* cigen explain JOB | --cell NAME=VALUE,... — how a job came to be.  This
 * file: the command, a generated job, and the pipeline (--branch, --tag);
 * --cell is explain_cell.c, any other name explain_lookup.c. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "audit/simulate.h"
#include "cmd/cli.h"
#include "cmd/explain_impl.h"

void cg_explain_pos(cg_strbuf *sb, const cg_pos *p)
{
    cg_strbuf_addf(sb, "%s:%u:%u", p->file ? p->file : "?", (unsigned)p->line, (unsigned)p->col);
}

/* "os: linux, python: 3.7m" — what this node bound for the cell. */
static void node_bindings(const cg_tree *t, const cg_tnode *n, const cg_cell *c, cg_strbuf *out)
{
    bool first = true;
    for (size_t f = 0; f < n->nfans; f++) {
        if (!c->values[n->fans[f].dim])
            continue; /* a group's: a dimension its cells do not share */
        cg_strbuf_addf(out, "%s%s: %s", first ? "" : ", ", t->dims[n->fans[f].dim], c->values[n->fans[f].dim]);
        first = false;
    }
    if (n->zip) {
        for (size_t k = 0; k < n->zip->nnames; k++) {
            int id = n->zip->ids[k];
            if (cg_tree_is_dim(t, id) && c->values[id])
                cg_strbuf_addf(out, "%s%s: %s (zip)", first ? "" : ", ", t->names[id], c->values[id]);
            first = false;
        }
    }
    if (first)
        cg_strbuf_adds(out, n->extra ? "(extra cell)" : "(no dimension)");
    else if (n->extra && (!n->parent || !n->parent->extra))
        cg_strbuf_adds(out, "  [extra: filters do not apply]");
}

static void explain_filters(const cg_tree *t, const cg_cell *c, cg_env *env, cg_strbuf *out)
{
    bool any = false;
    for (const cg_tnode *n = c->leaf; n; n = n->parent) {
        for (size_t i = 0; i < n->nexclude + n->nonly; i++) {
            const cg_pattern *p = i < n->nexclude ? n->exclude[i] : n->only[i - n->nexclude];
            bool m = cg_pattern_matches(p, env);
            if (!any)
                cg_strbuf_adds(out, "filters in scope:\n");
            any = true;
            cg_strbuf_adds(out, "  ");
            cg_explain_pos(out, &p->pos);
            cg_strbuf_addf(out, "  %s %s: %s\n", p->kind, p->text,
                           c->extra ? "not applied (extra cell)"
                           : cg_streq(p->kind, "exclude") ? (m ? "matches: removes it" : "does not match")
                           : (m ? "matches: keeps it" : "does not match: removes it"));
        }
    }
    (void)t;
}

static void explain_vars(const cg_tree *t, cg_env *env, cg_strbuf *out)
{
    bool header = false;
    for (size_t id = t->ndims + CG_NBUILTINS; id < t->nnames; id++) {
        const char *v;
        size_t n;
        bool typed;
        int got = cg_env_get(env, (int)id, &v, &n, &typed);
        bool unset = got == 0 && env->win[id] && env->win[id]->unset; /* `~` */
        if (got != 1 && !unset)
            continue;
        if (!header)
            cg_strbuf_adds(out, "variables:\n");
        header = true;
        cg_var_step steps[32];
        size_t ns = cg_env_history(env, (int)id, steps, 32);
        cg_strbuf_addf(out, "  %s = ", t->names[id]);
        if (unset)
            cg_strbuf_adds(out, "~ (unset: an optional key using it is left out)");
        else if (env->is_list[id])
            cg_strbuf_add(out, v, n); /* a list, in YAML's flow style */
        else {
            cg_strbuf_add(out, "\"", 1);
            cg_strbuf_add(out, v, n);
            cg_strbuf_adds(out, "\"");
        }
        if (!unset && typed)
            cg_strbuf_adds(out, " (typed)");
        if (ns) {
            const cg_var_step *win = &steps[ns - 1];
            cg_strbuf_adds(out, "\n      set at ");
            cg_explain_pos(out, &win->decl->pos);
            if (win->override)
                cg_strbuf_addf(out, " by the override when %s", win->override->when->text);
            else if (win->phase)
                cg_strbuf_addf(out, " by phase '%s'", win->phase->name);
            if (win->decl->nreplace)
                cg_strbuf_addf(out, " (from \"%s\", its 'replace' applied)", win->decl->raw);
            for (size_t i = ns - 1; i-- > 0;) {
                cg_strbuf_addf(out, "\n      overrides \"%s\" from ", steps[i].decl->raw);
                cg_explain_pos(out, &steps[i].decl->pos);
            }
        }
        cg_strbuf_addc(out, '\n');
    }
}

static int explain_job(cg_project *p, const cg_job *j, cg_strbuf *out, cg_error *err)
{
    const cg_tree *t = j->tree;
    const cg_cell *c = j->cell;
    cg_env env;
    cg_env_init(&env, t, err);
    int rc = cg_model_bind_job(&p->m, &env, j, -1);
    if (rc != 0) {
        cg_env_release(&env);
        return -1;
    }
    cg_strbuf_addf(out, "job %s\n", j->name);
    cg_strbuf_addf(out, "tree: %s (%s)\n", t->name, t->file);
    cg_strbuf_addf(out, "phase: %s (", t->phases[j->phase].name);
    cg_explain_pos(out, &t->phases[j->phase].pos);
    const cg_phase *ph = &t->phases[j->phase];
    if (j->nmembers) {
        /* one job for a group of cells */
        cg_strbuf_adds(out, ")\ngroup: ");
        size_t at = out->len;
        cg_cell_describe(t, c, out);
        if (out->len == at)
            cg_strbuf_adds(out, "every cell");
        cg_strbuf_adds(out, " (per [");
        for (size_t d = 0; d < ph->nper; d++)
            cg_strbuf_addf(out, "%s%s", d ? ", " : "", t->dims[ph->per[d]]);
        cg_strbuf_adds(out, "] at ");
        cg_explain_pos(out, &ph->per_pos);
        cg_strbuf_addf(out, "), %u cell%s:\n", j->nmembers, j->nmembers == 1 ? "" : "s");
        for (uint32_t m = 0; m < j->nmembers; m++) {
            cg_strbuf_adds(out, "  ");
            cg_cell_describe(t, j->members[m], out);
            cg_strbuf_addc(out, '\n');
        }
        cg_strbuf_adds(out, "tree path (shared by the group):\n");
        if (!c->leaf->parent)
            cg_strbuf_adds(out, "  (the top of the tree)\n");
    } else {
        cg_strbuf_adds(out, ")\ncell: ");
        cg_cell_describe(t, c, out);
        cg_strbuf_adds(out, "\ntree path:\n");
    }
    const cg_tnode *chain[256];
    size_t depth = 0;
    for (const cg_tnode *n = c->leaf; n && n->parent && depth < 256; n = n->parent)
        chain[depth++] = n;
    while (depth > 0) {
        const cg_tnode *n = chain[--depth];
        cg_strbuf_adds(out, "  ");
        cg_explain_pos(out, &n->pos);
        cg_strbuf_adds(out, "  ");
        node_bindings(t, n, c, out);
        cg_strbuf_addc(out, '\n');
    }
    explain_vars(t, &env, out);
    if (t->has_paths) { /* the tree's `paths`: the changed files that call for the job (a group: those its
                         * cells share; each cell's own count too) */
        const char *globs[64];
        size_t np = cg_tree_cell_paths(c->leaf, globs, 64);
        cg_strbuf_adds(out, "paths:");
        for (size_t i = 0; i < np && i < 64; i++)
            cg_strbuf_addf(out, "%s %s", i ? "," : "", globs[i]);
        cg_strbuf_adds(out, np ? "\n" : " (none: the manifest's path rules decide)\n");
    }
    if (env.napplied) {
        cg_strbuf_adds(out, "overrides applied:\n");
        for (size_t i = 0; i < env.napplied; i++) {
            cg_strbuf_adds(out, "  ");
            cg_explain_pos(out, &env.applied[i]->pos);
            cg_strbuf_addf(out, "  when %s\n", env.applied[i]->when->text);
        }
    }
    if (!j->nmembers)
        explain_filters(t, c, &env, out);
    cg_strbuf tpl = CG_STRBUF_INIT;
    if (!t->phases[j->phase].template_raw) {
        cg_strbuf_addf(out, "template: the default (job '%s' given every dimension and variable the cell sets; "
                       "phase at ", t->phases[j->phase].name);
        cg_explain_pos(out, &t->phases[j->phase].template_pos);
        cg_strbuf_adds(out, ")\nworkflows:");
    } else if (cg_model_template_path(&p->m, j, &env, &tpl, err) != 0) {
        cg_strbuf_release(&tpl);
        cg_env_release(&env);
        return -1;
    } else {
        cg_strbuf_addf(out, "template: %s (named at ", tpl.buf);
        cg_explain_pos(out, &t->phases[j->phase].template_pos);
        cg_strbuf_adds(out, ")\nworkflows:");
    }
    cg_strbuf_release(&tpl);
    for (size_t w = 0; w < p->m.manifest.nworkflows; w++) {
        uint64_t bit = (uint64_t)1 << w;
        if (j->workflows & bit)
            cg_strbuf_addf(out, " %s%s", p->m.manifest.workflows[w].name, (j->gated & bit) ? " (on request)" :
                           (j->special & bit) ? " (special-PR selection)" : "");
    }
    if (!j->workflows)
        cg_strbuf_adds(out, " (none: culled)");
    if (p->m.marks) {
        cg_strbuf_adds(out, "\nspecial-PR (from ");
        cg_strbuf_adds(out, p->m.selection.source);
        cg_strbuf_adds(out, "): ");
        cg_cli_mark_text(&p->m, &p->m.marks[j->index], out);
        if (j->special)
            cg_strbuf_adds(out, "; ungated, branch filters lifted");
    }
    cg_strbuf_adds(out, "\ntiers:");
    size_t ntiers = 0;
    for (size_t k = 0; k < t->ntiers; k++)
        if (c->tiers & ((uint64_t)1 << k)) {
            cg_strbuf_addf(out, " %s", t->tiers[k].name);
            ntiers++;
        }
    if (!ntiers)
        cg_strbuf_adds(out, " (none)");
    cg_strbuf_adds(out, "\nrequires:");
    cg_model_requires_text(&p->m, j->requires, j->requires_optional, j->requires_job, j->nrequires, j->workflows, out);
    if (!j->nrequires)
        cg_strbuf_adds(out, " (nothing)");
    cg_strbuf_addc(out, '\n');
    cg_env_release(&env);
    return 0;
}

/* "removed by the exclude {...} at f:l:c", or the whole `only` list */

/* explain JOB --branch/--tag/--schedule: whether CircleCI runs the job on
 * that pipeline, each workflow's entry of that name, and why not (the
 * simulation of audit/simulate.h on the config the sources make). */
static int explain_pipeline(const cg_global *g, const cg_sim_input *in, const char *job, cg_strbuf *out)
{
    cg_project p;
    cg_project_init(&p);
    int rc = cg_cli_build(g, &p, true);
    cg_sim_result run = {0};
    cg_error err;
    cg_error_init(&err);
    if (rc == 0 && cg_sim_run(p.m.manifest.output, p.out.config.buf, p.out.config.len, in, NULL, &run,
                                        &err) != 0) {
        cg_cli_print_error(&err);
        rc = CG_EXIT_ERROR;
    }
    if (rc == 0) {
        cg_strbuf what = CG_STRBUF_INIT;
        cg_sim_describe(in, &what);
        size_t n = 0;
        for (size_t i = 0; i < run.n; i++) {
            if (!cg_streq(run.v[i].job, job))
                continue;
            if (!n++)
                cg_strbuf_addf(out, "on %s (as CircleCI runs %s):\n", what.buf, p.m.manifest.output);
            cg_strbuf_addf(out, "  workflow '%s': %s%s%s\n", run.v[i].workflow,
                           run.v[i].state == CG_RUNS ? "runs" : run.v[i].state == CG_SKIPPED ? "does not run"
                                                                                            : "not simulated",
                           run.v[i].why ? ": " : "", run.v[i].why ? run.v[i].why : "");
        }
        if (!n)
            cg_strbuf_addf(out, "on %s: no workflow of %s runs it\n", what.buf, p.m.manifest.output);
        cg_strbuf_release(&what);
    }
    cg_sim_result_release(&run);
    cg_error_release(&err);
    cg_project_release(&p);
    return rc;
}

static const char explain_usage[] =
    "usage: cigen explain JOB [--branch NAME | --tag NAME] [--schedule NAME]\n"
    "                 [--parameter NAME=VALUE]...\n"
    "       cigen explain --cell NAME=VALUE[,NAME=VALUE...]\n"
    "       (either with [--only PATTERN]... [--also PATTERN]... [--overlay FILE]\n"
    "        [--allow-protected] [--pr-branch NAME])\n\n"
    "Shows how a job came to be: its tree path with the file:line of every node, each\n"
    "variable with where its value was set (and what it overrode), the overrides and\n"
    "filters that touched it, its template, workflows, tiers and requires; for a job\n"
    "of a phase with 'per', its group and the group's cells.  A static entry of the\n"
    "manifest (and where its job is defined), a job a fragment defines (where, and\n"
    "which entries and workflows run it), and a job that a phase's 'skip' or 'only'\n"
    "removed from its cell (which pattern; exit 1) are explained too.\n"
    "--cell looks a combination up, live or removed: for a removed one it names the\n"
    "filter that removed it; for one no branch produces, the values that exist.\n"
    "With a special-PR selection it says when a job is there because of it.\n"
    "--branch, --tag, --schedule and --parameter add whether CircleCI runs the job\n"
    "on that pipeline, in each workflow, and why not (as `cigen list --branch ...`;\n"
    "docs/pipeline.md).\n\n" CG_SPECIAL_HELP "\nExit status: 0 found, 1 no such job or combination, 2 error.";

/* What the options say: the job or the cell asked for, and the pipeline. */
typedef struct explain_opts {
    const char *job;           /* NULL with --cell */
    cg_query q;                /* --cell's terms */
    bool simulate;
    cg_sim_input sim;
    const char *pnames[64], *pvalues[64];
    char *pown[64];
} explain_opts;

static void explain_opts_release(explain_opts *o)
{
    for (size_t i = 0; i < o->sim.nparams; i++)
        free(o->pown[i]);
    cg_query_release(&o->q);
}

/* Reads the options into o: 0, 1 for --help (printed), or CG_EXIT_ERROR
 * (said). */
static int explain_parse(cg_global *g, cg_special *sel, int argc, char **argv, explain_opts *o)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"cell", required_argument, NULL, 'c'},
        {"branch", required_argument, NULL, 'b'}, {"tag", required_argument, NULL, 'T'},
        {"schedule", required_argument, NULL, 'S'}, {"parameter", required_argument, NULL, 'P'},
        CG_SPECIAL_LONGOPTS, CG_GLOBAL_LONGOPTS, {0}};
    int c;
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqv", longopts)) != -1) {
        if (cg_cli_special_option(g, sel, c, optarg))
            continue;
        if (c == 'h') {
            puts(explain_usage);
            return 1;
        }
        if (c == 'b' || c == 'T' || c == 'S') {
            o->simulate = true;
            *(c == 'b' ? &o->sim.branch : c == 'T' ? &o->sim.tag : &o->sim.schedule) = optarg;
        } else if (c == 'P') {
            o->simulate = true;
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || o->sim.nparams == 64) {
                fprintf(stderr, "cigen: error: --parameter takes NAME=VALUE (at most 64), not '%s'\n",
                        cg_cli_shown(optarg));
                return CG_EXIT_ERROR;
            }
            o->pnames[o->sim.nparams] = o->pown[o->sim.nparams] = cg_xstrndup(optarg, (size_t)(eq - optarg));
            o->pvalues[o->sim.nparams++] = eq + 1;
        } else if (c == 'c') {
            if (o->q.n || cg_query_add(&o->q, optarg) != 0) {
                fprintf(stderr, "cigen: error: --cell wants NAME=VALUE[,NAME=VALUE...] once, not '%s'\n",
                        cg_cli_shown(optarg));
                return CG_EXIT_ERROR;
            }
        } else
            return CG_EXIT_ERROR;
    }
    bool cell_mode = o->q.n > 0;
    o->sim.param_names = o->pnames;
    o->sim.param_values = o->pvalues;
    if (o->simulate && (cell_mode || (o->sim.branch && o->sim.tag))) {
        fputs(cell_mode ? "cigen: error: --branch/--tag/--schedule go with a job name, not --cell\n"
                        : "cigen: error: a pipeline has a branch or a tag, not both\n", stderr);
        return CG_EXIT_ERROR;
    }
    if (cell_mode ? optind != argc : optind + 1 != argc) {
        fputs(cell_mode ? "cigen: error: explain --cell takes no job name\n"
                        : "cigen: error: explain needs one job name (or --cell)\n", stderr);
        return CG_EXIT_ERROR;
    }
    for (size_t k = 0; cell_mode && k < o->q.groups[0].n; k++)
        if (!o->q.groups[0].terms[k].name) {
            fprintf(stderr, "cigen: error: --cell wants NAME=VALUE terms ('%s')\n",
                    cg_cli_shown(o->q.groups[0].terms[k].glob));
            return CG_EXIT_ERROR;
        }
    o->job = cell_mode ? NULL : argv[optind];
    return 0;
}

/* explain JOB once the project is built: the generated job (j, NULL when
 * there is none), else a static entry, a fragment's job, a removed job, or
 * no such job (with a suggestion). */
static int explain_name(cg_project *p, const char *name, const cg_job *j, cg_explain_find *F, bool walked,
                        cg_strbuf *out, cg_error *err)
{
    int sk;
    if (j)
        return explain_job(p, j, out, err) != 0 ? CG_EXIT_ERROR : 0;
    if (cg_explain_static(&p->m, name, out))
        return 0;
    if ((sk = cg_explain_fragment_job(&p->m, name, walked ? &F->fc : NULL, out, err)) != 0)
        return sk < 0 ? CG_EXIT_ERROR : 0;
    if (walked && F->skipped) {
        cg_strbuf_add(out, F->skip_text.buf, F->skip_text.len); /* cg_explain_skipped's, from the walk */
        return CG_EXIT_DIFF;
    }
    if (!walked && (sk = cg_explain_skipped(&p->m, name, out, err)) != 0)
        return sk < 0 ? CG_EXIT_ERROR : CG_EXIT_DIFF;
    const char **names = walked ? NULL : cg_xmalloc((p->m.jobs.n + 1) * sizeof *names);
    for (size_t k = 0; names && k < p->m.jobs.n; k++)
        names[k] = p->m.jobs.v[k].name;
    const char *s = walked ? F->suggest : cg_suggest(name, names, p->m.jobs.n);
    fprintf(stderr, "cigen: no job is named '%s'%s%s%s\n", cg_cli_shown(name), s ? " (did you mean '" : "",
            s ? s : "", s ? "'?)" : "");
    free(names);
    return CG_EXIT_DIFF;
}

int cg_cmd_explain(const cg_global *g0, int argc, char **argv)
{
    cg_global local = *g0, *g = &local;
    explain_opts o = {0};
    cg_query_init(&o.q);
    cg_special sel;
    cg_special_init(&sel);
    int rc = explain_parse(g, &sel, argc, argv, &o);
    if (rc != 0) {
        cg_special_release(&sel);
        explain_opts_release(&o);
        return rc == 1 ? 0 : rc;
    }
    cg_project p;
    cg_project_init(&p);
    cg_error err;
    cg_error_init(&err);
    cg_strbuf out = CG_STRBUF_INIT, cell_out = CG_STRBUF_INIT;
    /* a job's name or --cell: walk the cells and jobs, keeping none (what
     * is said is made on the way); the whole model for a fragment's job, or
     * when the walk cannot give the same answer (model/walk.h) */
    cg_explain_find F;
    cg_explain_find_init(&F, o.job, &p.m);
    cg_explain_cells E;
    if (!o.job)
        cg_explain_cells_init(&E, &o.q, &cell_out); /* the cells as they are walked, said into cell_out */
    cg_walker walker = o.job ? cg_explain_find_walker(&F) : cg_explain_cells_walker(&E);
    bool walked = cg_cli_build_walk(g, &p, &walker) == 0;
    /* walked and no generated job found: a static entry needs none; a
     * fragment's job, a skipped job and a suggestion were found on the way */
    if (walked)
        cg_cli_warnings(g, &p);
    rc = walked ? 0 : cg_cli_build(g, &p, false);
    cg_special_release(&sel);
    if (rc != 0)
        goto done;
    if (!o.job) {
        if (cg_query_check_names(&o.q, &p.m, NULL, &err) != 0)
            rc = CG_EXIT_ERROR;
        else if (walked) {
            rc = cg_explain_cells_done(&E) == 0 ? 0 : CG_EXIT_DIFF;
            cg_strbuf_add(&out, cell_out.buf, cell_out.len);
        } else
            rc = cg_explain_cells_of_model(&p.m, &o.q, &out) == 0 ? 0 : CG_EXIT_DIFF;
    } else {
        const cg_job *j = walked ? (F.found ? &F.job : NULL) : cg_jobs_find(&p.m.jobs, o.job);
        rc = explain_name(&p, o.job, j, &F, walked, &out, &err);
    }
    if (rc != CG_EXIT_ERROR && o.simulate && explain_pipeline(g, &o.sim, o.job, &out) != 0)
        rc = CG_EXIT_ERROR; /* printed */
    else if (rc == CG_EXIT_ERROR)
        cg_cli_print_error(&err);
    if (rc != CG_EXIT_ERROR)
        fputs(cg_strbuf_str(&out), stdout);
done:
    cg_strbuf_release(&out);
    cg_strbuf_release(&cell_out);
    cg_error_release(&err);
    if (!o.job)
        cg_explain_cells_release(&E);
    cg_explain_find_release(&F);
    cg_project_release(&p);
    explain_opts_release(&o);
    return rc;
}
