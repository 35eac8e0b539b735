/* cigen generate — writes the outputs the sources make. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/diff.h"
#include "audit/simulate.h"
#include "audit/report.h"
#include "cmd/cli.h"
#include "cmd/disk.h"
#include "cmd/summary.h"
#include "io/fsio.h"
#include "render/header.h"

/* What the selection did: counts, the static entries it culled (and
 * why), the workflows it left without jobs. */
static void print_selection_summary(const cg_model *m)
{
    size_t n[5] = {0};
    for (size_t k = 0; m->marks && k < m->jobs.n; k++)
        n[m->marks[k].kind]++;
    for (size_t e = 0; e < m->nstatics; e++)
        n[m->statics[e].mark.kind]++;
    printf("cigen: selection: %zu selected, %zu pulled in by a requirement, %zu culled\n", n[CG_MARK_SELECTED],
           n[CG_MARK_PULLED], n[CG_MARK_CULLED]);
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (sj->mark.kind != CG_MARK_CULLED)
            continue;
        if (sj->mark.by)
            printf("cigen: culled '%s' in workflow '%s': it requires '%s', which the selection culled\n", sj->name,
                   m->manifest.workflows[sj->workflow].name, sj->mark.by);
        else
            printf("cigen: culled '%s' in workflow '%s': no --only pattern selects it\n", sj->name,
                   m->manifest.workflows[sj->workflow].name);
    }
    for (size_t w = 0; w < m->manifest.nworkflows; w++)
        if ((m->omitted >> w) & 1)
            printf("cigen: workflow '%s' is not written: the selection left it without jobs\n",
                   m->manifest.workflows[w].name);
    /* a job-name glob selects a static entry by the job it runs too: say so
     * where its own name does not match (a release build running the job a
     * pull request asked for, with its tag filters lifted) */
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (sj->mark.kind != CG_MARK_SELECTED || sj->origin != sj->workflow || !sj->by_its_job)
            continue;
        int k = sj->mark.pattern;
        const char *pat = k < 0 ? NULL : (size_t)k < m->selection.nonly ? m->selection.only[k]
                                      : (size_t)k - m->selection.nonly < m->selection.nalso
                                            ? m->selection.also[k - (int)m->selection.nonly] : NULL;
        if (pat)
            printf("cigen: selected '%s' of workflow '%s' because it runs job '%s', which '%s' names; name the "
                   "entries you want if not this one\n", cg_cli_shown(sj->name),
                   m->manifest.workflows[sj->origin].name, cg_cli_shown(sj->invokes), cg_cli_shown(pat));
    }
}

/* The selected jobs a push to the pull request's branch also runs in
 * another workflow (one that is not scheduled, whose filters let them
 * through), simulated on the written config as `list --branch` does: each
 * runs twice there.  Said, not refused: that workflow may be wanted as it
 * is.  Without the branch ('branch:', --pr-branch), a branch no filter
 * names stands for it. */
static void print_selection_twice(const cg_model *m, const cg_disk_file *cfg)
{
    if (m->per_change < 0)
        return;
    const char *branch = m->selection.branch ? m->selection.branch : "cigen-special-pr";
    const char *pc = m->manifest.workflows[m->per_change].name;
    cg_strbuf where = CG_STRBUF_INIT; /* "'try-mac'", or what stands for it */
    if (m->selection.branch)
        cg_strbuf_addf(&where, "'%s'", cg_cli_shown(branch));
    else
        cg_strbuf_adds(&where, "a branch no filter names");
    cg_sim_result run = {0};
    cg_error err;
    cg_error_init(&err);
    if (cg_sim_branch(m->manifest.output, cfg->f.data, cfg->f.len, branch, NULL, &run, &err) == 0) {
        cg_map in_pc;
        cg_map_init(&in_pc);
        for (size_t i = 0; i < run.n; i++)
            if (run.v[i].state == CG_RUNS && cg_streq(run.v[i].workflow, pc))
                cg_map_put(&in_pc, run.v[i].job, (void *)1);
        /* per other workflow (its jobs follow each other): how many, and the first */
        for (size_t i = 0; i < run.n; i++) {
            const char *w = run.v[i].workflow;
            if (cg_streq(w, pc) || (i > 0 && cg_streq(run.v[i - 1].workflow, w)))
                continue;
            size_t n = 0;
            const char *first = NULL;
            for (size_t k = i; k < run.n && cg_streq(run.v[k].workflow, w); k++)
                if (run.v[k].state == CG_RUNS && cg_map_has(&in_pc, run.v[k].job) && n++ == 0)
                    first = run.v[k].job;
            if (n == 1)
                printf("cigen: 1 job of the selection also runs in workflow '%s' on a push to %s, so it runs twice "
                       "('%s'); `cigen list --branch %s` shows what runs\n", cg_cli_shown(w), where.buf,
                       cg_cli_shown(first), m->selection.branch ? cg_cli_shown(branch) : "BRANCH");
            else if (n)
                printf("cigen: %zu jobs of the selection also run in workflow '%s' on a push to %s, so each runs "
                       "twice (e.g. '%s'); `cigen list --branch %s` shows what runs\n", n, cg_cli_shown(w),
                       where.buf, cg_cli_shown(first), m->selection.branch ? cg_cli_shown(branch) : "BRANCH");
        }
        cg_map_release(&in_pc);
    }
    cg_sim_result_release(&run);
    cg_error_release(&err);
    cg_strbuf_release(&where);
}

/* Removes what killed runs left in the folders cigen writes to. */
static void remove_stale_temps(const cg_project *p)
{
    const char *out = p->m.manifest.output;
    const char *slash = strrchr(out, '/');
    char *dir = slash ? cg_xstrndup(out, (size_t)(slash - out)) : cg_xstrdup(".");
    cg_remove_stale_temps(p->m.root, dir);
    free(dir);
    if (p->m.manifest.diagrams)
        cg_remove_stale_temps(p->m.root, p->m.manifest.diagrams);
}

/* lint's findings (stderr); -q drops the warnings unless they count as errors */
static void print_lint(const cg_global *g, const cg_project *p, bool werror)
{
    if (!p->lint.n)
        return;
    cg_strbuf out = CG_STRBUF_INIT;
    cg_lint_print_some(&p->lint, !g->quiet || werror, &out);
    fputs(cg_strbuf_str(&out), stderr);
    cg_strbuf_release(&out);
}

/* The cells that entered or left a pairwise tier since the committed config. */
static void print_tier_changes(const cg_model *m)
{
    for (size_t i = 0; i < m->tier_changes.n; i++) {
        const cg_tier_change *ch = &m->tier_changes.v[i];
        cg_strbuf raw = CG_STRBUF_INIT, line = CG_STRBUF_INIT;
        cg_strbuf_addf(&raw, "  tier %s of %s: %c%s (%s)", ch->tier, ch->tree, ch->entered ? '+' : '-', ch->cell,
                       ch->why);
        cg_escape_line(&line, raw.buf, raw.len); /* a value cannot forge a line */
        printf("%s\n", line.buf);
        cg_strbuf_release(&raw);
        cg_strbuf_release(&line);
    }
}

/* The run: renders, compares with the disk, writes what changed. */
static int run(const cg_global *g, bool force, bool werror)
{
    cg_project p;
    cg_project_init(&p);
    p.draw_diagrams = true;
    int rc = cg_cli_build(g, &p, false);
    if (rc != 0) {
        cg_project_release(&p);
        return rc;
    }
    /* leftovers of a killed run go first: never after staging, which would
     * remove this run's own temporary files */
    remove_stale_temps(&p);
    cg_outputs outs;
    cg_outputs_init(&outs, p.m.root);
    rc = cg_cli_render(g, &p);
    werror = werror || g->opt.strict;
    size_t nbad = rc == 0 ? p.lint.nerrors + (werror ? p.lint.nwarnings : 0) : 0;
    if (nbad)
        print_lint(g, &p, werror);
    if (nbad)
        fprintf(stderr, "cigen: error: not writing %s: %zu lint error%s%s\n", p.m.manifest.output, nbad,
                nbad == 1 ? "" : "s", werror && p.lint.nwarnings ? " (warnings count as errors with --werror or --strict)" : "");
    if (rc != 0 || nbad) {
        cg_outputs_release(&outs);
        cg_project_release(&p);
        return CG_EXIT_ERROR;
    }
    cg_error err;
    cg_error_init(&err);
    cg_disk o;
    memset(&o, 0, sizeof o);
    rc = cg_disk_collect(&p, &o, "write", &err);
    if (rc != 0) {
        cg_cli_print_error(&err);
        cg_outputs_release(&outs);
        cg_disk_release(&o);
        cg_error_release(&err);
        cg_project_release(&p);
        return CG_EXIT_ERROR;
    }
    const cg_disk_file *cfg = &o.v[0];
    /* a hand-edited setup config (dynamic mode) is refused like config.yml */
    const cg_disk_file *refused = cfg;
    for (size_t i = 1; i < o.n && !(cfg->status == CG_OUT_DIFFERS && cfg->hand_edited); i++)
        if (o.v[i].f.rel == p.m.manifest.pipeline.setup)
            refused = &o.v[i];
    if (refused->status == CG_OUT_DIFFERS && refused->hand_edited && !force) {
        cfg = refused;
        print_lint(g, &p, werror); /* config.yml is not written: no line of it named */
        cg_strbuf out = CG_STRBUF_INIT;
        const char *job;
        size_t marker = cfg->old ? cg_conflict_marker_line(cfg->old, cfg->old_len) : 0;
        if (marker) {
            /* a merge left git's markers in it: a diff of them helps nobody */
            printf("cigen: %s holds merge-conflict markers (line %zu); resolve the sources, then run %s --force\n",
                   cfg->f.rel, marker, p.m.manifest.regenerate);
        } else {
            if (cfg->digest) {
                cg_disk_hand_edits(&p, cfg, &out, NULL, &job);
                if (cfg->sources_changed) /* (the places are not all hand edits: check.c) */
                    printf("cigen: %s was edited by hand, and its sources changed since it was generated; refusing "
                           "to overwrite it. It differs from what they make at %s, hand edits and the sources' "
                           "changes together\n", cfg->f.rel, out.len ? out.buf : "its header");
                else
                    printf("cigen: %s was edited by hand at %s; refusing to overwrite it\n", cfg->f.rel,
                           out.len ? out.buf : "its header");
            } else {
                printf("cigen: %s was not written by cigen (it has no cigen-digest header); refusing to overwrite "
                       "it\n", cfg->f.rel);
            }
            cg_strbuf_reset(&out);
            char a[600], b[600];
            snprintf(a, sizeof a, "%s (on disk)", cfg->f.rel);
            snprintf(b, sizeof b, "%s (from its sources)", cfg->f.rel);
            cg_diff_unified(&cfg->diff, cfg->old, cfg->old_len, cfg->f.data, cfg->f.len, a, b, 3, 200, &out);
            fwrite(cg_strbuf_str(&out), 1, out.len, stdout);
            if (cfg->digest && cfg->sources_changed)
                printf("Carry the hand edit into the sources, if it is still wanted (a diff against %s's last "
                       "generated version, such as `git diff HEAD -- %s`, shows it alone), or run with --force to "
                       "overwrite %s.\n", cfg->f.rel, cfg->f.rel, cfg->f.rel);
            else
                printf("Make the change in the sources instead, or run with --force to overwrite %s.\n", cfg->f.rel);
        }
        cg_strbuf_release(&out);
        cg_outputs_release(&outs);
        cg_disk_release(&o);
        cg_error_release(&err);
        cg_project_release(&p);
        return CG_EXIT_DIFF;
    }
    size_t written = 0;
    double t_write = cg_cli_now();
    for (size_t i = 0; i < o.n && rc == 0; i++) {
        const cg_disk_file *s = &o.v[i];
        cg_cli_verbose(g, "%s %s", s->status == CG_OUT_SAME ? "skipped (unchanged, not touched)" :
                       s->status == CG_OUT_MISSING ? "writing (new)" : "writing (changed)", s->f.rel);
        if (s->status == CG_OUT_SAME)
            continue;
        if (cg_outputs_stage(&outs, s->f.rel, s->f.data, s->f.len, &s->f.ref, &err) != 0)
            rc = CG_EXIT_ERROR;
        written++;
    }
    for (size_t i = 0; i < o.nstale && rc == 0; i++)
        cg_outputs_remove(&outs, o.stale[i]);
    if (rc == 0 && cg_outputs_commit(&outs, &err) != 0)
        rc = CG_EXIT_ERROR;
    if (rc == 0)
        cg_cli_verbose(g, "%zu file%s written, %zu removed, in %.3f s", written, written == 1 ? "" : "s", o.nstale,
                       cg_cli_now() - t_write);
    cg_outputs_release(&outs);
    p.lint.output_on_disk = rc == 0; /* written: a finding may name its line */
    print_lint(g, &p, werror);
    if (rc != 0) {
        cg_cli_print_error(&err);
    } else if (!g->quiet) {
        cg_strbuf what = CG_STRBUF_INIT;
        cg_strbuf named = CG_STRBUF_INIT; /* the jobs, named as check names them */
        size_t marker;
        if (cfg->status == CG_OUT_MISSING)
            cg_strbuf_adds(&what, "written");
        else if (cfg->status == CG_OUT_SAME)
            cg_strbuf_adds(&what, written ? "unchanged" : "already up to date");
        else if (cfg->old_len > CG_REPORT_MAX_BYTES || cfg->f.len > CG_REPORT_MAX_BYTES)
            cg_strbuf_adds(&what, "written");
        else if ((marker = cg_conflict_marker_line(cfg->old, cfg->old_len)) != 0)
            /* a resolved merge: the old file was never a config, so no jobs to compare */
            cg_strbuf_addf(&what, "written (the old %s held git's conflict markers, from line %zu: jobs not "
                           "compared)", cfg->f.rel, marker);
        else {
            cg_matrix m;
            cg_matrix_compare(cfg->old, cfg->old_len, cfg->f.data, cfg->f.len, &p.m, &m);
            cg_strbuf_adds(&what, "written (");
            if (m.valid) {
                cg_matrix_summary(&m, &what);
                cg_matrix_print_groups(&m, 0, &named);
            }
            else
                cg_strbuf_addf(&what, "jobs not compared: %s", m.problem ? m.problem : "unreadable");
            cg_strbuf_adds(&what, ")");
            cg_matrix_release(&m);
        }
        cg_strbuf line = CG_STRBUF_INIT;
        cg_summary_generate(&p, what.buf, &line);
        fputs(line.buf, stdout);
        cg_strbuf_release(&line);
        fputs(cg_strbuf_str(&named), stdout);
        print_tier_changes(&p.m);
        cg_strbuf_release(&what);
        cg_strbuf_release(&named);
        size_t ndiag = 0, first_diagram = 1;
        if (p.m.manifest.pipeline.setup && o.n > 1) {
            /* dynamic mode: the setup config comes second */
            first_diagram = 2;
            if (o.v[1].status != CG_OUT_SAME)
                printf("cigen: %s: the setup config; written\n", o.v[1].f.rel);
        }
        for (size_t i = first_diagram; i < o.n; i++)
            ndiag += o.v[i].status != CG_OUT_SAME;
        if (ndiag)
            printf("cigen: %zu diagram%s written to %s/\n", ndiag, ndiag == 1 ? "" : "s", p.m.manifest.diagrams);
        for (size_t i = 0; i < o.nstale; i++)
            printf("cigen: removed stale %s\n", o.stale[i]);
        if (!cg_special_empty(&p.m.selection)) {
            cg_strbuf args = CG_STRBUF_INIT;
            cg_special_args(&p.m.selection, &args);
            printf("cigen: this is a special-PR config (%s, from %s): do not land it; `cigen check` refuses "
                   "it without --allow-special\n", args.buf, p.m.selection.source);
            cg_strbuf_release(&args);
            print_selection_summary(&p.m);
            print_selection_twice(&p.m, cfg);
        }
    }
    cg_disk_release(&o);
    cg_error_release(&err);
    cg_project_release(&p);
    return rc;
}

int cg_cmd_generate(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"force", no_argument, NULL, 'f'},
                                             {"werror", no_argument, NULL, 'W'},
                                             {"fresh-tiers", no_argument, NULL, 'T'},
                                             CG_SPECIAL_LONGOPTS, CG_GLOBAL_LONGOPTS,
                                             {0}};
    int c;
    bool force = false, werror = false;
    cg_global local = *g0, *g = &local;
    cg_special sel;
    cg_special_init(&sel);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hfqv", longopts)) != -1) {
        if (cg_cli_special_option(g, &sel, c, optarg))
            continue;
        if (c == 'h') {
            puts("usage: cigen generate [--force] [--werror] [--fresh-tiers] [--only PATTERN]...\n"
                 "                      [--also PATTERN]... [--overlay FILE] [--allow-protected]\n"
                 "                      [--pr-branch NAME]\n\n"
                 "Writes config.yml and the diagrams from the sources the manifest names.  Every\n"
                 "output is written to a temporary file first and renamed into place only when\n"
                 "all of them are ready; on any error no output changes.  Unchanged files are not\n"
                 "touched; diagrams cigen made that the sources no longer produce are removed.\n"
                 "Prints one line: jobs, workflows, bytes, and what changed (+added, -removed,\n"
                 "changed jobs; only the parts that are not zero, e.g. \"written (1 changed)\"),\n"
                 "then the jobs added, removed and changed by name, grouped as `cigen check` groups them,\n"
                 "and the cells that entered or left a pairwise tier, with the reason.\n\n"
                 "A pairwise tier (the PR subset) starts from the cells the committed config.yml\n"
                 "records in its header (# cigen-tier: lines): a cell stays while it is live and\n"
                 "needed, so adding a value adds only the cells its new pairs need.\n\n"
                 "A config.yml that was edited by hand (its body no longer matches the digest in its\n"
                 "header; in dynamic mode the setup config and the continuation alike) is not overwritten: cigen shows the edits and exits 1.  --force\n"
                 "overwrites it anyway (the edits are lost: make them in the sources); when the old\n"
                 "file held git's conflict markers the summary says so instead of comparing jobs.\n\n"
                 "options:\n"
                 "  --force           overwrite a hand-edited config.yml\n"
                 "  --werror          lint warnings are errors too (see `cigen lint`)\n"
                 "  --fresh-tiers     choose the pairwise tiers afresh, ignoring the committed ones\n"
                 CG_SPECIAL_HELP
                 "\nA config with lint errors is never written.\n"
                 "\nExit status: 0 written or up to date, 1 refused (hand edits), 2 broken sources\n"
                 "(including lint errors).");
            cg_special_release(&sel);
            return 0;
        }
        if (c == 'f') {
            force = true;
            continue;
        }
        if (c == 'W') {
            werror = true;
            continue;
        }
        if (c == 'T') {
            g->opt.fresh_tiers = true;
            continue;
        }
        cg_special_release(&sel);
        return CG_EXIT_ERROR;
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: generate takes no arguments ('%s')\n", cg_cli_shown(argv[optind]));
        cg_special_release(&sel);
        return CG_EXIT_ERROR;
    }
    int rc = run(g, force, werror);
    cg_special_release(&sel);
    return rc;
}
