/* cigen explain JOB | --cell NAME=VALUE,... — how a job came to be. */
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "model/query.h"

static void pos_str(cg_strbuf *sb, const cg_pos *p)
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
            pos_str(out, &p->pos);
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
        if (cg_env_get(env, (int)id, &v, &n, &typed) != 1)
            continue;
        if (!header)
            cg_strbuf_adds(out, "variables:\n");
        header = true;
        cg_var_step steps[32];
        size_t ns = cg_env_history(env, (int)id, steps, 32);
        cg_strbuf_addf(out, "  %s = ", t->names[id]);
        cg_strbuf_add(out, "\"", 1);
        cg_strbuf_add(out, v, n);
        cg_strbuf_adds(out, "\"");
        if (typed)
            cg_strbuf_adds(out, " (typed)");
        if (ns) {
            const cg_var_step *win = &steps[ns - 1];
            cg_strbuf_adds(out, "\n      set at ");
            pos_str(out, &win->decl->pos);
            if (win->override)
                cg_strbuf_addf(out, " by the override when %s", win->override->when->text);
            for (size_t i = ns - 1; i-- > 0;) {
                cg_strbuf_addf(out, "\n      overrides \"%s\" from ", steps[i].decl->raw);
                pos_str(out, &steps[i].decl->pos);
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
    pos_str(out, &t->phases[j->phase].pos);
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
        pos_str(out, &ph->per_pos);
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
        pos_str(out, &n->pos);
        cg_strbuf_adds(out, "  ");
        node_bindings(t, n, c, out);
        cg_strbuf_addc(out, '\n');
    }
    explain_vars(t, &env, out);
    if (env.napplied) {
        cg_strbuf_adds(out, "overrides applied:\n");
        for (size_t i = 0; i < env.napplied; i++) {
            cg_strbuf_adds(out, "  ");
            pos_str(out, &env.applied[i]->pos);
            cg_strbuf_addf(out, "  when %s\n", env.applied[i]->when->text);
        }
    }
    if (!j->nmembers)
        explain_filters(t, c, &env, out);
    cg_strbuf tpl = CG_STRBUF_INIT;
    if (!t->phases[j->phase].template_raw) {
        cg_strbuf_addf(out, "template: the default (job '%s' given every dimension and variable the cell sets; "
                       "phase at ", t->phases[j->phase].name);
        pos_str(out, &t->phases[j->phase].template_pos);
        cg_strbuf_adds(out, ")\nworkflows:");
    } else if (cg_model_template_path(&p->m, j, &env, &tpl, err) != 0) {
        cg_strbuf_release(&tpl);
        cg_env_release(&env);
        return -1;
    } else {
        cg_strbuf_addf(out, "template: %s (named at ", tpl.buf);
        pos_str(out, &t->phases[j->phase].template_pos);
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
    for (uint32_t r = 0; r < j->nrequires; r++)
        cg_strbuf_addf(out, " %s", j->requires[r]);
    if (!j->nrequires)
        cg_strbuf_adds(out, " (nothing)");
    cg_strbuf_addc(out, '\n');
    cg_env_release(&env);
    return 0;
}

/* "removed by the exclude {...} at f:l:c", or the whole `only` list */
static void describe_removal(const cg_cell *cell, cg_strbuf *out)
{
    const cg_pattern *p = cell->removed_by;
    if (cell->status == CG_CELL_EXCLUDED || !cell->removed_at || cell->removed_at->nonly < 2) {
        cg_strbuf_addf(out, "  removed by the %s %s at ", p->kind, p->text);
        pos_str(out, &p->pos);
        cg_strbuf_addc(out, '\n');
        return;
    }
    cg_strbuf_adds(out, "  removed: it matches none of the 'only' patterns");
    for (size_t i = 0; i < cell->removed_at->nonly; i++) {
        cg_strbuf_addf(out, "%s %s at ", i ? "," : "", cell->removed_at->only[i]->text);
        pos_str(out, &cell->removed_at->only[i]->pos);
    }
    cg_strbuf_addc(out, '\n');
}

/* --cell: the cells (live or removed) that match a dimension spec. */
static int explain_cell(cg_project *p, const cg_query *q, cg_strbuf *out, cg_error *err)
{
    const cg_qgroup *g = &q->groups[0];
    size_t shown = 0;
    for (size_t ti = 0; ti < p->m.ntrees; ti++) {
        const cg_tree *t = p->m.trees[ti];
        const cg_cells *cells = &p->m.cells[ti];
        /* the spec must name only this tree's dimensions */
        bool applies = true;
        for (size_t k = 0; k < g->n && applies; k++)
            applies = g->terms[k].name && cg_tree_is_dim(t, cg_tree_name_id(t, g->terms[k].name));
        if (!applies)
            continue;
        for (size_t c = 0; c < cells->n; c++) {
            const cg_cell *cell = &cells->v[c];
            bool m = true;
            for (size_t k = 0; k < g->n && m; k++) {
                const char *v = cell->values[cg_tree_name_id(t, g->terms[k].name)];
                bool hit = v && fnmatch(g->terms[k].glob, v, 0) == 0;
                m = g->terms[k].negate ? !hit : hit;
            }
            if (!m)
                continue;
            shown++;
            cg_strbuf_addf(out, "cell ");
            cg_cell_describe(t, cell, out);
            cg_strbuf_addf(out, " (tree %s, ", t->name);
            pos_str(out, &cell->leaf->pos);
            cg_strbuf_adds(out, ")\n");
            if (cell->status == CG_CELL_LIVE) {
                cg_strbuf_adds(out, "  live; its jobs:");
                size_t nj = 0;
                for (size_t k = 0; k < p->m.jobs.n; k++)
                    if (p->m.jobs.v[k].cell == cell) {
                        cg_strbuf_addf(out, " %s", p->m.jobs.v[k].name);
                        nj++;
                    }
                cg_strbuf_adds(out, nj ? "\n" : " none (every phase is skipped or lands in no workflow)\n");
            } else {
                describe_removal(cell, out);
            }
        }
        if (shown)
            continue;
        /* nothing: say which values the tree does produce next to the others */
        for (size_t k = 0; k < g->n; k++) {
            int id = cg_tree_name_id(t, g->terms[k].name);
            cg_strbuf vals = CG_STRBUF_INIT;
            size_t nv = 0;
            for (size_t c = 0; c < cells->n; c++) {
                const cg_cell *cell = &cells->v[c];
                bool others = true;
                for (size_t o = 0; o < g->n && others; o++) {
                    if (o == k)
                        continue;
                    const char *v = cell->values[cg_tree_name_id(t, g->terms[o].name)];
                    bool hit = v && fnmatch(g->terms[o].glob, v, 0) == 0;
                    others = g->terms[o].negate ? !hit : hit;
                }
                const char *v = cell->values[id];
                if (!others || !v)
                    continue;
                char needle[512];
                snprintf(needle, sizeof needle, " %s,", v);
                cg_strbuf probe = CG_STRBUF_INIT;
                cg_strbuf_addf(&probe, " %s,", cg_strbuf_str(&vals));
                bool dup = strstr(probe.buf, needle) != NULL;
                cg_strbuf_release(&probe);
                if (dup)
                    continue;
                cg_strbuf_addf(&vals, "%s%s", nv ? ", " : "", v);
                nv++;
            }
            if (g->n > 1 || nv)
                cg_strbuf_addf(out, "  where the rest matches, tree %s has %s: %s\n", t->name, g->terms[k].name,
                               nv ? vals.buf : "(no value)");
            cg_strbuf_release(&vals);
        }
    }
    if (!shown) {
        cg_strbuf tmp = CG_STRBUF_INIT;
        cg_strbuf_addf(&tmp, "no branch of any tree produces %s\n", g->text);
        cg_strbuf_add(&tmp, out->buf ? out->buf : "", out->len);
        cg_strbuf_reset(out);
        cg_strbuf_add(out, tmp.buf, tmp.len);
        cg_strbuf_release(&tmp);
    }
    (void)err;
    return shown ? 0 : 1;
}

/* Where a fragment defines job `name` (its key), or false. */
static bool fragment_def(const cg_model *m, const char *name, cg_pos *at)
{
    for (size_t f = 0; f < m->nfragments; f++) {
        const cg_doc *doc = m->fragments[f].doc;
        if (!json_object_get(json_object_get(cg_doc_root(doc), "jobs"), name))
            continue;
        cg_strbuf path = CG_STRBUF_INIT;
        cg_strbuf_adds(&path, "/jobs");
        cg_path_push_key(&path, name);
        *at = cg_doc_key_where(doc, path.buf);
        cg_strbuf_release(&path);
        return true;
    }
    return false;
}

/* A job a fragment defines: where, and what runs it (static entries,
 * generated entries by tree and phase, verbatim workflows of fragments). */
static int explain_fragment_job(const cg_model *m, const char *name, cg_strbuf *out, cg_error *err)
{
    cg_pos at;
    if (!fragment_def(m, name, &at))
        return 0;
    cg_strbuf_addf(out, "job %s: defined in a fragment at ", name);
    pos_str(out, &at);
    cg_strbuf_adds(out, "\nrun by:");
    size_t before = out->len;
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (sj->culled || !cg_streq(sj->invokes, name))
            continue;
        cg_strbuf_addf(out, "\n  entry '%s' of workflow '%s' (", sj->name, m->manifest.workflows[sj->workflow].name);
        pos_str(out, &sj->pos);
        cg_strbuf_adds(out, ")");
    }
    /* generated entries, counted per tree and phase */
    cg_strbuf inv = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t ti = 0; ti < m->ntrees && rc == 0; ti++) {
        const cg_tree *t = m->trees[ti];
        size_t *count = cg_xcalloc(t->nphases + 1, sizeof *count);
        uint64_t *wf = cg_xcalloc(t->nphases + 1, sizeof *wf);
        cg_env env;
        cg_env_init(&env, t, err);
        for (size_t k = 0; k < m->jobs.n && rc == 0; k++) {
            const cg_job *j = &m->jobs.v[k];
            if (j->tree != t || !j->workflows)
                continue;
            const cg_template *tpl = NULL;
            if ((rc = cg_model_bind_job(m, &env, j, -1)) != 0 || !(tpl = cg_model_template(m, j, &env, err))) {
                rc = -1;
                break;
            }
            cg_strbuf_reset(&inv);
            if (tpl->invoke.ctext)
                cg_strbuf_add(&inv, tpl->invoke.ctext, tpl->invoke.ctext_len);
            else {
                cg_src src = {tpl->doc, tpl->invoke.path, {0}};
                if ((rc = cg_env_expand(&env, &tpl->invoke.text, CG_EXPAND_PLAIN, NULL, &inv, &src,
                                        "the template")) != 0)
                    break;
            }
            if (cg_streq(cg_strbuf_str(&inv), name)) {
                count[j->phase]++;
                wf[j->phase] |= j->workflows;
            }
        }
        for (size_t ph = 0; ph < t->nphases && rc == 0; ph++) {
            if (!count[ph])
                continue;
            cg_strbuf_addf(out, "\n  %zu generated entr%s of phase '%s', tree %s, in workflow%s", count[ph],
                           count[ph] == 1 ? "y" : "ies", t->phases[ph].name, t->name,
                           (wf[ph] & (wf[ph] - 1)) ? "s" : "");
            for (size_t w = 0; w < m->manifest.nworkflows; w++)
                if (wf[ph] & ((uint64_t)1 << w))
                    cg_strbuf_addf(out, " %s", m->manifest.workflows[w].name);
        }
        cg_env_release(&env);
        free(count);
        free(wf);
    }
    cg_strbuf_release(&inv);
    if (rc != 0)
        return -1;
    for (size_t f = 0; f < m->nfragments; f++) {
        json_t *wfs = json_object_get(cg_doc_root(m->fragments[f].doc), "workflows");
        const char *wn;
        json_t *wd;
        json_object_foreach(wfs, wn, wd) {
            json_t *jl = json_is_object(wd) ? json_object_get(wd, "jobs") : NULL;
            for (size_t i = 0; i < json_array_size(jl); i++) {
                json_t *e = json_array_get(jl, i);
                const char *k = json_is_string(e) ? json_string_value(e) : NULL;
                json_t *v;
                if (!k)
                    json_object_foreach(e, k, v)
                        break;
                if (k && cg_streq(k, name)) {
                    cg_strbuf_addf(out, "\n  workflow '%s', written as it is in fragment %s", wn,
                                   m->fragments[f].file);
                    break;
                }
            }
        }
    }
    if (out->len == before) {
        bool idle = false;
        for (size_t i = 0; i < m->manifest.nidle && !idle; i++)
            idle = cg_streq(m->manifest.idle_jobs[i], name);
        cg_strbuf_adds(out, idle ? " no workflow (kept for manual runs: listed in the manifest's idle_jobs)"
                                 : " no workflow (lint warns about it)");
    }
    cg_strbuf_addc(out, '\n');
    return 1;
}

/* A static entry (a job listed in a workflow of the manifest): where, what
 * it runs, and what a special-PR selection did to it. */
static bool explain_static(const cg_model *m, const char *name, cg_strbuf *out)
{
    bool any = false;
    for (size_t e = 0; e < m->nstatics; e++) {
        const cg_static_job *sj = &m->statics[e];
        if (!cg_streq(sj->name, name))
            continue;
        any = true;
        cg_strbuf_addf(out, "%s: listed in workflow '%s' of the manifest at ", sj->name,
                       m->manifest.workflows[sj->origin].name);
        pos_str(out, &sj->pos);
        if (sj->workflow != sj->origin)
            cg_strbuf_addf(out, ", copied into workflow '%s'", m->manifest.workflows[sj->workflow].name);
        cg_strbuf_addf(out, "\nruns: %s", sj->invokes);
        if (sj->context)
            cg_strbuf_addf(out, " (context '%s')", sj->context);
        cg_pos def;
        if (fragment_def(m, sj->invokes, &def)) {
            cg_strbuf_adds(out, ", defined in a fragment at ");
            pos_str(out, &def);
        }
        if (sj->nrequires) {
            cg_strbuf_adds(out, "\nrequires:");
            for (uint32_t r = 0; r < sj->nrequires; r++)
                cg_strbuf_addf(out, " %s", sj->requires[r]);
        }
        if (m->marks) {
            cg_strbuf_addf(out, "\nspecial-PR (from %s): ", m->selection.source);
            cg_cli_mark_text(m, &sj->mark, out);
            if (sj->lift)
                cg_strbuf_adds(out, "; branch filters lifted");
        }
        if (m->omitted & ((uint64_t)1 << sj->workflow))
            cg_strbuf_addf(out, "\nworkflow '%s' is not written: the selection left it without jobs",
                           m->manifest.workflows[sj->workflow].name);
        cg_strbuf_addc(out, '\n');
    }
    return any;
}

/* A name no job has: the job a phase's `skip` or `only` removed from a
 * live cell, if one would have had that name.  1 found (said in out), 0 not,
 * -1 on error. */
static int explain_skipped(const cg_model *m, const char *name, cg_strbuf *out, cg_error *err)
{
    int found = 0;
    cg_strbuf jn = CG_STRBUF_INIT;
    for (size_t ti = 0; ti < m->ntrees && !found; ti++) {
        const cg_tree *t = m->trees[ti];
        const cg_cells *cells = &m->cells[ti];
        cg_env env;
        cg_env_init(&env, t, err);
        for (size_t c = 0; c < cells->n && !found; c++) {
            const cg_cell *cell = &cells->v[c];
            if (cell->status != CG_CELL_LIVE)
                continue;
            if (cg_env_bind(&env, cell) != 0) {
                found = -1;
                break;
            }
            for (size_t k = 0; k < t->nphases && !found; k++) {
                const cg_phase *ph = &t->phases[k];
                if (ph->aggregate)
                    continue;
                const cg_pattern *by = NULL;
                for (size_t s = 0; s < ph->nskip && !by; s++)
                    if (cg_pattern_matches(ph->skip[s], &env))
                        by = ph->skip[s];
                bool kept = ph->nonly == 0;
                for (size_t s = 0; s < ph->nonly && !kept; s++)
                    kept = cg_pattern_matches(ph->only[s], &env);
                if (!by && kept)
                    continue;
                cg_strbuf_reset(&jn);
                cg_env_set_builtin(&env, CG_B_PHASE, ph->name, false);
                bool own = ph->job_name.nsegs > 0;
                if (cg_env_expand(&env, own ? &ph->job_name : &t->job_name, CG_EXPAND_NAME, t, &jn,
                                  own ? &ph->job_name_src : &t->job_name_src, "the job name pattern") != 0) {
                    found = -1;
                    break;
                }
                if (!cg_streq(cg_strbuf_str(&jn), name))
                    continue;
                found = 1;
                cg_strbuf_addf(out, "no job %s: phase '%s' (", name, ph->name);
                pos_str(out, &ph->pos);
                cg_strbuf_adds(out, ") does not run for cell ");
                cg_cell_describe(t, cell, out);
                cg_strbuf_addf(out, " (tree %s, ", t->name);
                pos_str(out, &cell->leaf->pos);
                cg_strbuf_adds(out, ")\n");
                if (by) {
                    cg_strbuf_addf(out, "  removed by the phase's skip %s at ", by->text);
                    pos_str(out, &by->pos);
                    cg_strbuf_addc(out, '\n');
                } else {
                    cg_strbuf_adds(out, "  removed: it matches none of the phase's 'only' patterns");
                    for (size_t s = 0; s < ph->nonly; s++) {
                        cg_strbuf_addf(out, "%s %s at ", s ? "," : "", ph->only[s]->text);
                        pos_str(out, &ph->only[s]->pos);
                    }
                    cg_strbuf_addc(out, '\n');
                }
            }
        }
        cg_env_release(&env);
    }
    cg_strbuf_release(&jn);
    return found;
}

/* explain JOB from a walk of the jobs (model/walk.h): the job asked for,
 * copied out of the walk (its cell's arrays, its requires' names). */
typedef struct find_job {
    const char *name;
    cg_pool *pool;
    bool found;
    cg_job job;
    cg_cell cell;
} find_job;

static int find_job_fn(void *ctx, const cg_job *j)
{
    find_job *F = ctx;
    if (F->found || !cg_streq(j->name, F->name))
        return 0;
    const cg_tree *t = j->tree;
    F->found = true;
    F->cell = *j->cell;
    const char **values = cg_pool_alloc(F->pool, (t->ndims + 1) * sizeof *values);
    memcpy(values, j->cell->values, t->ndims * sizeof *values);
    F->cell.values = values;
    if (j->cell->nzvars) {
        const cg_vardecl **zv = cg_pool_alloc(F->pool, j->cell->nzvars * sizeof *zv);
        memcpy(zv, j->cell->zvars, j->cell->nzvars * sizeof *zv);
        F->cell.zvars = zv;
    }
    F->job = *j;
    F->job.name = cg_intern(F->pool, j->name);
    F->job.cell = &F->cell;
    const char **names = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *names);
    const cg_pos **pos = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *pos);
    int32_t *idx = cg_pool_alloc(F->pool, (j->nrequires + 1) * sizeof *idx);
    for (uint32_t r = 0; r < j->nrequires; r++) {
        names[r] = cg_intern(F->pool, j->requires[r]);
        pos[r] = j->requires_pos[r];
        idx[r] = j->requires_job[r];
    }
    F->job.requires = names;
    F->job.requires_pos = pos;
    F->job.requires_job = idx;
    return 0;
}

int cg_cmd_explain(const cg_global *g0, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"cell", required_argument, NULL, 'c'}, CG_SELECTION_LONGOPTS, CG_GLOBAL_LONGOPTS, {0}};
    cg_query q;
    cg_query_init(&q);
    int c;
    cg_global local = *g0, *g = &local;
    cg_selection sel;
    cg_selection_init(&sel);
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqv", longopts)) != -1) {
        if (cg_cli_selection_option(g, &sel, c, optarg))
            continue;
        if (c == 'h') {
            puts("usage: cigen explain JOB\n       cigen explain --cell NAME=VALUE[,NAME=VALUE...]\n"
                 "       (either with [--only PATTERN]... [--also PATTERN]... [--overlay FILE])\n\n"
                 "Shows how a job came to be: its tree path with the file:line of every node, each\n"
                 "variable with where its value was set (and what it overrode), the overrides and\n"
                 "filters that touched it, its template, workflows, tiers and requires; for a job\n"
                 "of a phase with 'per', its group and the group's cells.  A static entry of the\n"
                 "manifest (and where its job is defined), a job a fragment defines (where, and\n"
                 "which entries and workflows run it), and a job that a phase's 'skip' or 'only'\n"
                 "removed from its cell (which pattern; exit 1) are explained too.\n"
                 "--cell looks a combination up, live or removed: for a removed one it names the\n"
                 "filter that removed it; for one no branch produces, the values that exist.\n"
                 "With a special-PR selection it says when a job is there because of it.\n\n"
                 CG_SELECTION_HELP
                 "\nExit status: 0 found, 1 no such job or combination, 2 error.");
            cg_query_release(&q);
            cg_selection_release(&sel);
            return 0;
        }
        if (c == 'c') {
            if (q.n || cg_query_add(&q, optarg) != 0) {
                fprintf(stderr, "cigen: error: --cell wants NAME=VALUE[,NAME=VALUE...] once, not '%s'\n", cg_cli_shown(optarg));
                cg_query_release(&q);
                cg_selection_release(&sel);
                return CG_EXIT_ERROR;
            }
            continue;
        }
        cg_query_release(&q);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    bool cell_mode = q.n > 0;
    if (cell_mode ? optind != argc : optind + 1 != argc) {
        fputs(cell_mode ? "cigen: error: explain --cell takes no job name\n"
                        : "cigen: error: explain needs one job name (or --cell)\n", stderr);
        cg_query_release(&q);
        cg_selection_release(&sel);
        return CG_EXIT_ERROR;
    }
    for (size_t k = 0; cell_mode && k < q.groups[0].n; k++)
        if (!q.groups[0].terms[k].name) {
            fprintf(stderr, "cigen: error: --cell wants NAME=VALUE terms ('%s')\n", cg_cli_shown(q.groups[0].terms[k].glob));
            cg_query_release(&q);
            cg_selection_release(&sel);
            return CG_EXIT_ERROR;
        }
    cg_project p;
    cg_project_init(&p);
    /* a job's name: walk the jobs for it, keeping none; the whole model for
     * anything else (another kind of name, none, --cell) or when the walk
     * cannot give the same answer (model/walk.h) */
    find_job F = {.name = cell_mode ? NULL : argv[optind], .pool = &p.m.pool};
    cg_walker walker = {.job = find_job_fn, .ctx = &F};
    bool walked = !cell_mode && cg_cli_build_walk(g, &p, &walker) == 0;
    if (walked && !F.found) {
        /* no generated job: a static entry needs none; a fragment's job, a
         * skipped one or a suggestion reads them all */
        cg_strbuf probe = CG_STRBUF_INIT;
        walked = explain_static(&p.m, argv[optind], &probe);
        cg_strbuf_release(&probe);
        if (!walked) {
            cg_project_release(&p);
            cg_project_init(&p);
        }
    }
    if (walked)
        cg_cli_warnings(g, &p);
    int rc = walked ? 0 : cg_cli_build(g, &p, false);
    cg_selection_release(&sel);
    if (rc != 0) {
        cg_project_release(&p);
        cg_query_release(&q);
        return rc;
    }
    cg_error err;
    cg_error_init(&err);
    cg_strbuf out = CG_STRBUF_INIT;
    if (cell_mode) {
        if (cg_query_check_names(&q, &p.m, NULL, &err) != 0)
            rc = CG_EXIT_ERROR;
        else
            rc = explain_cell(&p, &q, &out, &err) == 0 ? 0 : CG_EXIT_DIFF;
    } else {
        const cg_job *j = walked ? (F.found ? &F.job : NULL) : cg_jobs_find(&p.m.jobs, argv[optind]);
        int sk = 0;
        if (!j && explain_static(&p.m, argv[optind], &out)) {
            /* a static entry of the manifest's workflows */
        } else if (!j && (sk = explain_fragment_job(&p.m, argv[optind], &out, &err)) != 0) {
            rc = sk < 0 ? CG_EXIT_ERROR : 0; /* a job of a fragment */
        } else if (!j && (sk = explain_skipped(&p.m, argv[optind], &out, &err)) != 0) {
            rc = sk < 0 ? CG_EXIT_ERROR : CG_EXIT_DIFF; /* a job a phase's skip or only removed */
        } else if (!j) {
            const char **names = cg_xmalloc((p.m.jobs.n + 1) * sizeof *names);
            for (size_t k = 0; k < p.m.jobs.n; k++)
                names[k] = p.m.jobs.v[k].name;
            const char *s = cg_suggest(argv[optind], names, p.m.jobs.n);
            fprintf(stderr, "cigen: no job is named '%s'%s%s%s\n", argv[optind], s ? " (did you mean '" : "",
                    s ? s : "", s ? "'?)" : "");
            free(names);
            rc = CG_EXIT_DIFF;
        } else if (explain_job(&p, j, &out, &err) != 0) {
            rc = CG_EXIT_ERROR;
        }
    }
    if (rc == CG_EXIT_ERROR)
        cg_cli_print_error(&err);
    else
        fputs(cg_strbuf_str(&out), stdout);
    cg_strbuf_release(&out);
    cg_error_release(&err);
    cg_project_release(&p);
    cg_query_release(&q);
    return rc;
}
