#include "model/project.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/bgwrite.h"
#include "base/digest.h"
#include "render/dot.h"
#include "io/fsio.h"
#include "model/query.h"
#include "lang/schema.h"

void cg_project_init(cg_project *p)
{
    memset(p, 0, sizeof *p);
    cg_pool_init(&p->pool);
    cg_pool_init(&p->diagrams_pool);
    cg_map_init(&p->doc_by_path);
    cg_map_init(&p->templates);
    cg_warnings_init(&p->warnings);
    cg_selection_init(&p->selection);
    p->per_change = -1;
}

void cg_project_free(cg_project *p)
{
    for (size_t i = 0; i < p->ntrees; i++) {
        cg_tree_free(p->trees[i]);
        if (p->cells)
            cg_cells_release(&p->cells[i]);
    }
    free(p->trees);
    free(p->cells);
    for (size_t i = 0; i < p->nfragments; i++)
        cg_fragment_release(&p->fragments[i]);
    free(p->fragments);
    cg_jobs_release(&p->jobs);
    cg_manifest_release(&p->manifest);
    for (size_t i = 0; i < p->ndocs; i++)
        cg_doc_free(p->docs[i]);
    free(p->docs);
    cg_map_release(&p->doc_by_path);
    cg_map_release(&p->templates);
    for (size_t i = 0; p->phase_templates && i < p->ntrees; i++)
        free(p->phase_templates[i]);
    free(p->phase_templates);
    cg_warnings_release(&p->warnings);
    cg_selection_release(&p->selection);
    cg_strbuf_release(&p->config);
    cg_linemap_release(&p->linemap);
    if (p->linted)
        cg_lint_release(&p->lint);
    free(p->root);
    cg_pool_release(&p->pool);
    free(p->diagrams);
    cg_pool_release(&p->diagrams_pool);
    memset(p, 0, sizeof *p);
}

static cg_doc *load_doc(cg_project *p, const char *rel, const cg_pos *ref, cg_error *err)
{
    char *data = NULL;
    size_t len = 0;
    if (cg_read_source(p->root, rel, ref, CG_DEFAULT_MAX_BYTES, &data, &len, false, err) != 0)
        return NULL;
    cg_doc *doc = cg_doc_parse(rel, data, len, NULL, err);
    free(data);
    return doc;
}

const cg_doc *cg_project_doc(cg_project *p, const char *rel, const cg_pos *ref, cg_error *err)
{
    cg_doc *doc = cg_map_get(&p->doc_by_path, rel);
    if (doc)
        return doc;
    if (!(doc = load_doc(p, rel, ref, err)))
        return NULL;
    cg_grow(&p->docs, &p->docs_cap, p->ndocs + 1, sizeof *p->docs);
    p->docs[p->ndocs++] = doc;
    cg_map_put(&p->doc_by_path, cg_intern(&p->pool, rel), doc);
    return doc;
}

static int load_fragments(cg_project *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    p->fragments = cg_xcalloc(m->nfragments + 1, sizeof *p->fragments);
    for (size_t i = 0; i < m->nfragments; i++) {
        cg_doc *doc = load_doc(p, m->fragments[i], &m->fragment_pos[i], err);
        if (!doc)
            return -1;
        int rc = cg_fragment_init(&p->fragments[i], doc, err);
        p->nfragments++;
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Tiers named by workflows must exist in some tree. */
static int check_workflow_tiers(cg_project *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        for (int pass = 0; pass < 2; pass++) {
            const char *const *names = pass ? wd->on_request : wd->tiers;
            const cg_pos *pos = pass ? wd->on_request_pos : wd->tier_pos;
            size_t n = pass ? wd->non_request : wd->ntiers;
            for (size_t i = 0; i < n; i++) {
                bool found = false;
                const char *cands[256];
                size_t nc = 0;
                for (size_t t = 0; t < p->ntrees && !found; t++)
                    for (size_t k = 0; k < p->trees[t]->ntiers && !found; k++) {
                        found = cg_streq(p->trees[t]->tiers[k].name, names[i]);
                        if (nc < CG_ARRAY_LEN(cands))
                            cands[nc++] = p->trees[t]->tiers[k].name;
                    }
                if (found)
                    continue;
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, names[i], cands, nc);
                cg_error_at(err, &pos[i], "workflow '%s' takes tier '%s', which no tree declares%s", wd->name,
                            names[i], cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                return -1;
            }
        }
    }
    return 0;
}

static void copy_selection(cg_selection *to, const cg_selection *from, const char *source)
{
    for (size_t i = 0; i < from->nonly; i++)
        cg_selection_add(to, true, from->only[i], &from->only_pos[i]);
    for (size_t i = 0; i < from->nalso; i++)
        cg_selection_add(to, false, from->also[i], &from->also_pos[i]);
    free(to->source);
    to->source = cg_xstrdup(from->source ? from->source : source);
}

/* The selection in force: flags, --overlay, special-pr.yml, or the fallback. */
static int load_selection(cg_project *p, cg_error *err)
{
    const cg_options *o = &p->opt;
    if (o->selection && !cg_selection_empty(o->selection)) {
        copy_selection(&p->selection, o->selection, "the command line");
        return 0;
    }
    const char *file = o->overlay ? o->overlay : o->no_overlay ? NULL : CG_DEFAULT_OVERLAY;
    if (file) {
        char *data = NULL;
        size_t len = 0;
        cg_pos ref = {0};
        if (cg_check_project_path(file, &ref, "the overlay path", err) != 0)
            return -1;
        int r = cg_read_source(p->root, file, &ref, CG_DEFAULT_MAX_BYTES, &data, &len, o->overlay == NULL, err);
        if (r < 0)
            return -1;
        if (r == 0) {
            int rc = cg_selection_parse(&p->selection, file, data, len, err);
            free(data);
            return rc;
        }
    }
    if (o->fallback && !cg_selection_empty(o->fallback))
        copy_selection(&p->selection, o->fallback, "the header of the committed config");
    return 0;
}

static int pattern_error(cg_error *err, const cg_selection *s, bool only, size_t i, const char *what)
{
    const cg_pos *pos = only ? &s->only_pos[i] : &s->also_pos[i];
    const char *pat = only ? s->only[i] : s->also[i];
    if (pos->file)
        return cg_error_at(err, pos, "'%s' %s", pat, what);
    return cg_error_plain(err, "--%s '%s' %s", only ? "only" : "also", pat, what);
}

/* Puts the selected jobs (and what they require) into the per-change
 * workflow, ungated; with `only`, culls every other generated job. */
static int apply_selection(cg_project *p, cg_error *err)
{
    const cg_selection *s = &p->selection;
    if (cg_selection_empty(s))
        return 0;
    if (p->per_change < 0)
        return cg_error_plain(err, "a special-PR selection (from %s) needs a workflow marked 'per_change: true' "
                              "in %s", s->source, p->opt.manifest);
    size_t ngroups = s->nonly + s->nalso;
    cg_query *q = cg_xcalloc(ngroups + 1, sizeof *q);
    int rc = 0;
    for (size_t i = 0; i < ngroups && rc == 0; i++) {
        bool only = i < s->nonly;
        size_t k = only ? i : i - s->nonly;
        cg_query_init(&q[i]);
        const char *pat = only ? s->only[k] : s->also[k];
        const cg_pos *pos = only ? &s->only_pos[k] : &s->also_pos[k];
        /* the header records it on a comment line; its text stays out of the message */
        if (cg_line_breaker(pat, NULL) && pos->file)
            rc = cg_error_at(err, pos, "a pattern holds a control character or a line break");
        else if (cg_line_breaker(pat, NULL))
            rc = cg_error_plain(err, "an --%s pattern holds a control character or a line break",
                                only ? "only" : "also");
        else if (cg_query_add(&q[i], pat) != 0)
            rc = pattern_error(err, s, only, k, "is not a pattern (NAME=GLOB,... or a job-name glob)");
        else if (cg_query_check_names(&q[i], p, pos, err) != 0)
            rc = -1;
    }
    /* A pattern of dimension values selects only the jobs of phases that run
     * on pull requests (that land in the per-change workflow); upload or
     * smoke jobs must be named: by phase=..., or by a job-name glob. */
    bool *explicit_phase = cg_xcalloc(ngroups + 1, sizeof *explicit_phase);
    for (size_t i = 0; i < ngroups; i++)
        for (size_t t = 0; rc == 0 && t < q[i].groups[0].n; t++) {
            const char *name = q[i].groups[0].terms[t].name;
            explicit_phase[i] = explicit_phase[i] || !name || cg_streq(name, "phase") || cg_streq(name, "job");
        }
    bool *selected = cg_xcalloc(p->jobs.n + 1, sizeof *selected);
    size_t *hits = cg_xcalloc(ngroups + 1, sizeof *hits), *ineligible = cg_xcalloc(ngroups + 1, sizeof *ineligible);
    cg_env *envs = cg_xcalloc(p->ntrees + 1, sizeof *envs);
    for (size_t t = 0; t < p->ntrees; t++)
        cg_env_init(&envs[t], p->trees[t], err);
    for (size_t k = 0; k < p->jobs.n && rc == 0; k++) {
        const cg_job *j = &p->jobs.v[k];
        cg_env *env = &envs[cg_project_tree_index(p, j->tree)];
        if (cg_project_bind_job(p, env, j, -1) != 0) {
            rc = -1;
            break;
        }
        const cg_phase *ph = &j->tree->phases[j->phase];
        bool runs_on_prs = false;
        for (size_t w = 0; w < ph->nworkflows; w++)
            runs_on_prs = runs_on_prs || ph->workflows[w] == p->per_change;
        for (size_t i = 0; i < ngroups; i++) {
            int m = cg_query_match(&q[i], p, j, env);
            if (m < 0)
                rc = -1;
            if (m == 1 && !runs_on_prs && !explicit_phase[i])
                ineligible[i]++;
            else if (m == 1) {
                selected[k] = true;
                hits[i]++;
            }
        }
    }
    for (size_t i = 0; i < ngroups && rc == 0; i++)
        if (!hits[i])
            rc = pattern_error(err, s, i < s->nonly, i < s->nonly ? i : i - s->nonly,
                               ineligible[i] ? "selects only jobs of phases that do not run on pull requests "
                                               "(name them to run them: add phase=NAME, or use a job-name glob)"
                                             : "selects no job");
    if (rc == 0) {
        /* the jobs the selected ones require come along */
        size_t *stack = cg_xmalloc((p->jobs.n + 1) * sizeof *stack), n = 0;
        for (size_t k = 0; k < p->jobs.n; k++)
            if (selected[k])
                stack[n++] = k;
        while (n) {
            const cg_job *j = &p->jobs.v[stack[--n]];
            for (uint32_t r = 0; r < j->nrequires; r++) {
                const cg_job *dep = cg_jobs_find(&p->jobs, j->requires[r]);
                if (dep && !selected[dep->index]) {
                    selected[dep->index] = true;
                    stack[n++] = dep->index;
                }
            }
        }
        free(stack);
        uint64_t bit = (uint64_t)1 << p->per_change;
        for (size_t k = 0; k < p->jobs.n; k++) {
            cg_job *j = &p->jobs.v[k];
            if (selected[k]) {
                j->workflows |= bit;
                j->gated &= ~bit;
                j->special |= bit;
            } else if (s->nonly) {
                j->workflows = 0;
                j->gated = 0;
            }
        }
    }
    for (size_t i = 0; i < ngroups; i++)
        cg_query_release(&q[i]);
    for (size_t t = 0; t < p->ntrees; t++)
        cg_env_release(&envs[t]);
    free(envs);
    free(q);
    free(selected);
    free(hits);
    free(ineligible);
    free(explicit_phase);
    return rc;
}

const char *cg_project_source_kind(const cg_project *p, const char *rel)
{
    const cg_manifest *m = &p->manifest;
    if (cg_path_same(rel, p->opt.manifest))
        return "the manifest";
    for (size_t i = 0; i < m->ntrees; i++)
        if (cg_path_same(rel, m->trees[i]))
            return "a tree";
    for (size_t i = 0; i < m->nfragments; i++)
        if (cg_path_same(rel, m->fragments[i]))
            return "a fragment";
    for (size_t i = 0; i < p->ndocs; i++)
        if (cg_path_same(rel, cg_doc_file(p->docs[i])))
            return "a template";
    /* templates not loaded yet (graph, list): the constant paths */
    for (size_t t = 0; t < p->ntrees; t++)
        for (size_t k = 0; k < p->trees[t]->nphases; k++) {
            const cg_pstr *tp = &p->trees[t]->phases[k].template_path;
            if (tp->has_names)
                continue;
            cg_strbuf path = CG_STRBUF_INIT;
            for (size_t s = 0; s < tp->nsegs; s++)
                cg_strbuf_add(&path, tp->segs[s].text, tp->segs[s].len);
            bool same = cg_path_same(rel, cg_strbuf_str(&path));
            cg_strbuf_release(&path);
            if (same)
                return "a template";
        }
    const char *overlay = p->opt.overlay ? p->opt.overlay : p->opt.no_overlay ? NULL : CG_DEFAULT_OVERLAY;
    if (overlay && cg_path_same(rel, overlay))
        return "the special-PR overlay";
    return NULL;
}

int cg_project_load(cg_project *p, const cg_options *o, cg_error *err)
{
    p->opt = *o;
    if (!p->opt.dir)
        p->opt.dir = ".";
    if (!p->opt.manifest)
        p->opt.manifest = "cigen.yml";
    if (!(p->root = cg_realdir(p->opt.dir, err)))
        return -1;
    if (cg_check_project_path(p->opt.manifest, &(cg_pos){0}, "the manifest path", err) != 0)
        return -1;
    /* "-m ./cigen.yml" is cigen.yml: its name is in the header and digest */
    cg_strbuf norm = CG_STRBUF_INIT;
    cg_path_normalize(p->opt.manifest, &norm);
    if (norm.len)
        p->opt.manifest = cg_intern(&p->pool, norm.buf);
    cg_strbuf_release(&norm);
    cg_pos none = {p->opt.manifest, 0, 0};
    char *data = NULL;
    size_t len = 0;
    int rc = cg_read_source(p->root, p->opt.manifest, &(cg_pos){0}, CG_DEFAULT_MAX_BYTES, &data, &len,
                            true, err);
    if (rc == 1)
        return cg_error_plain(err, "cannot read '%s': no such file (run cigen in the project's folder, or name "
                              "it with -C DIR or the manifest with -m FILE)", p->opt.manifest);
    if (rc != 0)
        return -1;
    (void)none;
    p->manifest_doc = cg_doc_parse(p->opt.manifest, data, len, NULL, err);
    free(data);
    if (!p->manifest_doc)
        return -1;
    cg_grow(&p->docs, &p->docs_cap, p->ndocs + 1, sizeof *p->docs);
    p->docs[p->ndocs++] = p->manifest_doc;
    cg_map_put(&p->doc_by_path, cg_intern(&p->pool, p->opt.manifest), p->manifest_doc);
    if (cg_manifest_parse(p->manifest_doc, &p->pool, &p->manifest, err) != 0)
        return -1;
    const cg_manifest *m = &p->manifest;
    if (load_fragments(p, err) != 0)
        return -1;
    p->trees = cg_xcalloc(m->ntrees + 1, sizeof *p->trees);
    p->cells = cg_xcalloc(m->ntrees + 1, sizeof *p->cells);
    for (size_t i = 0; i < m->ntrees; i++) {
        const cg_doc *doc = cg_project_doc(p, m->trees[i], &m->tree_pos[i], err);
        if (!doc)
            return -1;
        cg_tree *t = cg_tree_parse(doc, i, m, &p->pool, err);
        if (!t)
            return -1;
        p->trees[p->ntrees++] = t;
        for (size_t j = 0; j < i; j++)
            if (cg_streq(p->trees[j]->name, t->name)) {
                cg_error_at(err, &m->tree_pos[i], "two trees are named '%s' (after their file names)", t->name);
                cg_error_note(err, &m->tree_pos[j], "the other one");
                return -1;
            }
        if (cg_expand(t, &p->pool, &p->cells[i], m->max_cells, p->opt.strict, &p->warnings, err) != 0)
            return -1;
    }
    if (check_workflow_tiers(p, err) != 0)
        return -1;
    for (size_t i = 0; i < p->ntrees; i++)
        if (cg_jobs_build(&p->jobs, p->trees[i], &p->cells[i], m, &p->pool, err) != 0)
            return -1;
    for (size_t w = 0; w < m->nworkflows; w++)
        if (m->workflows[w].per_change)
            p->per_change = (int)w;
    if (load_selection(p, err) != 0 || apply_selection(p, err) != 0)
        return -1;
    if (cg_jobs_check_requires(&p->jobs, m, err) != 0)
        return -1;
    /* skip patterns are counted while building jobs: report unmatched ones now */
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        for (size_t k = 0; k < t->npatterns; k++) {
            const cg_pattern *pt = t->patterns[k];
            if (pt->hits || !cg_streq(pt->kind, "skip"))
                continue;
            if (p->opt.strict)
                return cg_error_at(err, &pt->pos, "skip pattern %s matches no cell", pt->text);
            cg_warn_at(&p->warnings, &pt->pos, "skip pattern %s matches no cell", pt->text);
        }
    }
    return 0;
}

size_t cg_project_tree_index(const cg_project *p, const cg_tree *t)
{
    for (size_t i = 0; i < p->ntrees; i++)
        if (p->trees[i] == t)
            return i;
    return 0;
}

int cg_project_bind_job(cg_project *p, cg_env *env, const cg_job *j, int workflow)
{
    (void)p;
    if (env->cell != j->cell) {
        if (cg_env_bind(env, j->cell) != 0)
            return -1;
    }
    const cg_tree *t = j->tree;
    cg_env_set_builtin(env, CG_B_JOB, j->name, false);
    cg_env_set_builtin(env, CG_B_PHASE, t->phases[j->phase].name, false);
    cg_env_set_builtin(env, CG_B_WORKFLOW, workflow >= 0 ? p->manifest.workflows[workflow].name : NULL, false);
    bool gated = workflow >= 0 && (j->gated & ((uint64_t)1 << workflow));
    cg_env_set_builtin(env, CG_B_ON_REQUEST, gated ? "true" : "false", true);
    /* {{ cell }}: the job name without its phase */
    if (!env->builtin[CG_B_CELL] || env->cell != j->cell) {
        const char *saved = env->builtin[CG_B_PHASE];
        env->builtin[CG_B_PHASE] = NULL;
        cg_strbuf name = CG_STRBUF_INIT;
        cg_env_expand(env, &t->job_name, true, t, &name, &t->job_name_src, "the job name pattern");
        env->builtin[CG_B_PHASE] = saved;
        cg_env_set_builtin(env, CG_B_CELL, cg_arena_strndup(&env->arena, cg_strbuf_str(&name), name.len), false);
        cg_strbuf_release(&name);
    }
    return 0;
}

const cg_template *cg_project_template(cg_project *p, const cg_job *j, cg_env *env, cg_error *err)
{
    const cg_tree *t = j->tree;
    const cg_phase *ph = &t->phases[j->phase];
    /* a template path without placeholders names one template per phase */
    const cg_template **cached = NULL;
    if (!ph->template_path.has_names) {
        if (!p->phase_templates)
            p->phase_templates = cg_xcalloc(p->ntrees + 1, sizeof *p->phase_templates);
        size_t ti = cg_project_tree_index(p, t);
        if (!p->phase_templates[ti])
            p->phase_templates[ti] = cg_xcalloc(t->nphases + 1, sizeof **p->phase_templates);
        cached = &p->phase_templates[ti][j->phase];
        if (*cached)
            return *cached;
    }
    cg_strbuf path = CG_STRBUF_INIT;
    cg_src src = {t->doc, ph->template_doc_path, ph->template_pos};
    if (cg_env_expand(env, &ph->template_path, false, NULL, &path, &src, "the template path") != 0) {
        cg_strbuf_release(&path);
        return NULL;
    }
    cg_strbuf key = CG_STRBUF_INIT;
    cg_strbuf_addf(&key, "%zu:%s", t->index, path.buf);
    cg_template *tpl = cg_map_get(&p->templates, key.buf);
    if (!tpl && cg_check_project_path(path.buf, &ph->template_pos, "the template path", err) == 0) {
        const cg_doc *doc = cg_project_doc(p, path.buf, &ph->template_pos, err);
        if (doc && (tpl = cg_template_compile(doc, t, &p->pool, err)))
            cg_map_put(&p->templates, cg_intern(&p->pool, key.buf), tpl);
    }
    cg_strbuf_release(&key);
    cg_strbuf_release(&path);
    if (cached)
        *cached = tpl;
    return tpl;
}

/* ---- rendering ---- */

static void write_static_entry(cg_yw *w, const cg_doc *doc, const char *path, json_t *e,
                               const cg_workflow_decl *wd, bool per_job_filters)
{
    bool has_filters = json_is_object(e) && json_is_object(json_object_iter_value(json_object_iter(e))) &&
                       json_object_get(json_object_iter_value(json_object_iter(e)), "filters");
    if (!per_job_filters || has_filters) {
        cg_yw_value(w, doc, path, e);
        return;
    }
    /* add the workflow's branch/tag filters to the entry */
    cg_yw_map_begin(w);
    if (json_is_string(e)) {
        cg_yw_key(w, json_string_value(e), json_string_length(e));
        cg_yw_map_begin(w);
    } else {
        const char *k = json_object_iter_key(json_object_iter(e));
        json_t *args = json_object_iter_value(json_object_iter(e));
        cg_yw_keys(w, k);
        cg_yw_map_begin(w);
        cg_strbuf ap = CG_STRBUF_INIT, kp = CG_STRBUF_INIT;
        cg_path_join_key(&ap, path, k);
        const char *ak;
        json_t *av;
        json_object_foreach(args, ak, av) {
            cg_path_join_key(&kp, ap.buf, ak);
            cg_yw_keys(w, ak);
            cg_yw_value(w, doc, kp.buf, av);
        }
        cg_strbuf_release(&ap);
        cg_strbuf_release(&kp);
    }
    cg_write_filters(w, &wd->branches, &wd->tags);
    cg_yw_end(w);
    cg_yw_end(w);
}

/* Streaming: hands all but the last two bytes of the rendered text to the
 * background writer (the YAML writer and the assembler look back two bytes
 * at most), which hashes the body and gives it to the sink while the next
 * chunk is rendered.  Called between jobs, where *mark == out->len. */
static int spill(cg_project *p, cg_strbuf *out, size_t *mark, cg_error *err)
{
    size_t chunk = (size_t)1 << 20;
    if (out->len < (p->streamed ? chunk : p->sink->keep) + 2)
        return 0;
    size_t n = out->len - 2;
    size_t skip = p->streamed < p->header_len ? p->header_len - p->streamed : 0; /* the header is not body */
    char tail[2] = {out->buf[n], out->buf[n + 1]};
    cg_strbuf_truncate(out, n);
    if (!p->bg)
        p->bg = cg_bgwrite_new(p->sink, &p->body_sha);
    if (cg_bgwrite_put(p->bg, out, skip < n ? skip : n, err) != 0)
        return -1;
    cg_strbuf_add(out, tail, 2);
    p->streamed += n;
    *mark -= n;
    return 0;
}

static int render_workflow(cg_project *p, size_t wi, cg_yw *w, cg_strbuf *out, cg_linemap *map,
                           uint32_t *line, size_t *mark, cg_env *envs, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    const cg_workflow_decl *wd = &m->workflows[wi];
    bool per_job = !wd->schedule && (wd->branches.set || wd->tags.set);
    cg_strbuf sub = CG_STRBUF_INIT;
    cg_yw_keys(w, wd->name);
    cg_yw_map_begin(w);
    if (wd->when) {
        cg_strbuf_adds(&sub, wd->path);
        cg_strbuf_adds(&sub, "/when");
        cg_yw_keys(w, "when");
        cg_yw_value(w, m->doc, sub.buf, wd->when);
    }
    if (wd->schedule) {
        cg_yw_keys(w, "triggers");
        cg_yw_seq_begin(w);
        cg_yw_map_begin(w);
        cg_yw_keys(w, "schedule");
        cg_yw_map_begin(w);
        cg_yw_keys(w, "cron");
        cg_yw_strs(w, wd->schedule);
        if (wd->branches.set)
            cg_write_filters(w, &wd->branches, NULL);
        cg_yw_end(w);
        cg_yw_end(w);
        cg_yw_end(w);
    }
    cg_yw_keys(w, "jobs");
    cg_yw_seq_begin(w);
    if (wd->jobs) {
        for (size_t i = 0; i < json_array_size(wd->jobs); i++) {
            cg_strbuf_reset(&sub);
            cg_strbuf_adds(&sub, wd->path);
            cg_strbuf_adds(&sub, "/jobs");
            cg_path_push_index(&sub, i);
            write_static_entry(w, m->doc, sub.buf, json_array_get(wd->jobs, i), wd, per_job);
        }
    }
    cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, m->doc ? cg_doc_file(m->doc) : NULL,
                   wd->pos.line, -1, (int32_t)wi);
    *mark = out->len;
    int rc = 0;
    uint64_t bit = (uint64_t)1 << wi;
    for (size_t k = 0; k < p->jobs.n && rc == 0; k++) {
        const cg_job *j = &p->jobs.v[k];
        if (!(j->workflows & bit))
            continue;
        cg_env *env = &envs[cg_project_tree_index(p, j->tree)];
        if ((rc = cg_project_bind_job(p, env, j, (int)wi)) != 0)
            break;
        const cg_template *tpl = cg_project_template(p, j, env, err);
        if (!tpl) {
            rc = -1;
            break;
        }
        /* special-PR jobs run on the pull request whatever the filters say */
        bool lift = (j->special & bit) != 0;
        cg_render_job rj = {j->name, j->requires, j->nrequires, per_job && !lift ? &wd->branches : NULL,
                            per_job && !lift ? &wd->tags : NULL, lift, &p->lint, (int)k, (int)wi};
        if ((rc = cg_template_render(tpl, env, &rj, w, err)) != 0)
            break;
        cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, NULL, 0, (int32_t)k, (int32_t)wi);
        *mark = out->len;
        /* lint reports a config over the limit; this stops one that explodes */
        if ((p->streamed + out->len) / 4 > (size_t)p->manifest.max_config_bytes) {
            rc = cg_error_at(err, &p->manifest.output_pos, "the generated workflows grow past %zu bytes (4 times "
                             "'limits: max_config_bytes'); stopping at job '%s'", p->streamed + out->len, j->name);
            break;
        }
        if (p->sink && (rc = spill(p, out, mark, err)) != 0)
            break;
    }
    if (rc == 0) {
        cg_yw_end(w); /* jobs */
        cg_yw_end(w); /* the workflow */
        cg_linemap_add(map, line, out->buf + *mark, out->len - *mark, NULL, 0, -1, (int32_t)wi);
        *mark = out->len;
    }
    cg_strbuf_release(&sub);
    return rc;
}

void cg_header_write(cg_strbuf *out, const cg_manifest *m, const cg_selection *special, const char *sources,
                     const char *body)
{
    const char *manifest = m->doc ? cg_doc_file(m->doc) : "cigen.yml";
    cg_strbuf_addf(out, "# Generated by cigen from %s. Do not edit this file by hand:\n", manifest);
    cg_strbuf_addf(out, "# edit the sources %s names and run `%s`.\n", manifest, m->regenerate);
    cg_strbuf_adds(out, "# `cigen explain JOB` shows where a job comes from.\n");
    if (special && !cg_selection_empty(special))
        cg_selection_header(special, out);
    cg_strbuf_addf(out, "# cigen-digest: sources=%s body=%s\n", sources, body);
}

static void sources_digest(cg_project *p, char hex[41])
{
    /* every source, sorted by path, so the digest ignores load order */
    size_t n = p->ndocs + p->nfragments;
    const cg_doc **all = cg_xmalloc((n + 1) * sizeof *all);
    size_t k = 0;
    for (size_t i = 0; i < p->ndocs; i++)
        all[k++] = p->docs[i];
    for (size_t i = 0; i < p->nfragments; i++)
        all[k++] = p->fragments[i].doc;
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && strcmp(cg_doc_file(all[j - 1]), cg_doc_file(all[j])) > 0; j--) {
            const cg_doc *tmp = all[j];
            all[j] = all[j - 1];
            all[j - 1] = tmp;
        }
    cg_sha256 s;
    cg_sha256_init(&s);
    for (size_t i = 0; i < k; i++) {
        size_t len;
        const char *text = cg_doc_text(all[i], &len);
        const char *name = cg_doc_file(all[i]);
        char size[32];
        snprintf(size, sizeof size, "%zu", len);
        cg_sha256_update(&s, name, strlen(name) + 1);
        cg_sha256_update(&s, size, strlen(size) + 1);
        cg_sha256_update(&s, text, len);
    }
    unsigned char d[32];
    cg_sha256_final(&s, d);
    cg_hex(d, 20, hex);
    free(all);
}

typedef struct wf_render {
    cg_project *p;
    cg_env *envs;     /* [ntrees] */
    cg_error *err;
} wf_render;

/* The generated workflows, written by cg_assemble() in their place. */
static int write_workflows(void *ctx, cg_strbuf *out, cg_linemap *map, uint32_t *line)
{
    wf_render *R = ctx;
    cg_yw w;
    cg_yw_init_in_map(&w, out, 2);
    size_t mark = out->len;
    int rc = 0;
    for (size_t i = 0; i < R->p->manifest.nworkflows && rc == 0; i++) {
        if (i > 0)
            cg_strbuf_addc(out, '\n'); /* a blank line between workflows */
        rc = render_workflow(R->p, i, &w, out, map, line, &mark, R->envs, R->err);
    }
    cg_yw_release(&w);
    return rc;
}

/* ---- the diagrams, drawn beside the config ---- */

/* What the drawing thread owns until it is joined: it reads the project,
 * which the renderer only adds to (the config, the lint, compiled
 * templates), never any part a diagram is drawn from. */
typedef struct drawing {
    const cg_project *p;
    cg_pool pool;
    cg_dot_output *v;
    size_t n;
} drawing;

static void *draw(void *arg)
{
    drawing *d = arg;
    size_t n = cg_dot_outputs(d->p, &d->pool, NULL, 0);
    d->v = cg_xcalloc(n + 1, sizeof *d->v);
    d->n = cg_dot_outputs(d->p, &d->pool, d->v, n);
    return NULL;
}

static void keep_drawing(cg_project *p, drawing *d)
{
    cg_pool_release(&p->diagrams_pool);
    free(p->diagrams);
    p->diagrams_pool = d->pool;
    p->diagrams = d->v;
    p->ndiagrams = d->n;
    p->drawn = true;
}

size_t cg_project_diagrams(cg_project *p, const cg_dot_output **out)
{
    if (!p->drawn) {
        drawing d = {p, {0}, NULL, 0};
        cg_pool_init(&d.pool);
        draw(&d);
        keep_drawing(p, &d);
    }
    *out = p->diagrams;
    return p->ndiagrams;
}

static int render(cg_project *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    if (p->linted)
        cg_lint_release(&p->lint);
    cg_lint_init(&p->lint, p);
    p->linted = true;
    cg_env *envs = cg_xcalloc(p->ntrees + 1, sizeof *envs);
    for (size_t i = 0; i < p->ntrees; i++)
        cg_env_init(&envs[i], p->trees[i], err);
    const char **names = cg_xcalloc(m->nworkflows + 1, sizeof *names);
    cg_pos *wpos = cg_xcalloc(m->nworkflows + 1, sizeof *wpos);
    for (size_t i = 0; i < m->nworkflows; i++) {
        names[i] = m->workflows[i].name;
        wpos[i] = m->workflows[i].pos;
    }
    wf_render R = {p, envs, err};
    cg_assembly in = {"", p->fragments, p->nfragments, write_workflows, &R, names, wpos, m->nworkflows};
    /* the body goes straight after a header of the final length, whose
     * digests are filled in once the body is known: no copy of the body */
    static const char zeros[41] = "0000000000000000000000000000000000000000";
    cg_linemap bmap = {0};
    cg_strbuf_reset(&p->config);
    cg_header_write(&p->config, m, &p->selection, zeros, zeros);
    p->header_len = p->config.len;
    p->streamed = 0;
    cg_sha256_init(&p->body_sha);
    p->bg = NULL;
    int rc = cg_assemble(&in, &p->config, &bmap, err);
    /* the chunks still in flight come first, and so does their error */
    if (cg_bgwrite_finish(p->bg, err) != 0)
        rc = -1;
    p->bg = NULL;
    free(names);
    free(wpos);
    for (size_t i = 0; i < p->ntrees; i++)
        cg_env_release(&envs[i]);
    free(envs);
    if (rc == 0) {
        sources_digest(p, p->sources_digest);
        size_t skip = p->streamed < p->header_len ? p->header_len - p->streamed : 0;
        cg_sha256_update(&p->body_sha, p->config.buf + skip, p->config.len - skip);
        unsigned char d[32];
        cg_sha256_final(&p->body_sha, d);
        cg_hex(d, 20, p->body_digest);
        p->config_size = p->streamed + p->config.len;
        cg_strbuf header = CG_STRBUF_INIT;
        cg_header_write(&header, m, &p->selection, p->sources_digest, p->body_digest);
        assert(header.len == p->header_len); /* the digests have a fixed width */
        if (!p->streamed) {
            memcpy(p->config.buf, header.buf, header.len);
        } else if (p->sink->write(p->sink->ctx, p->config.buf, p->config.len, err) != 0 ||
                   p->sink->header(p->sink->ctx, header.buf, header.len, err) != 0) {
            rc = -1;
        }
        /* from the header itself: a streamed config's buffer holds only its tail */
        uint32_t header_lines = (uint32_t)cg_count_newlines(header.buf, header.len);
        cg_linemap_release(&p->linemap);
        uint32_t l = 1;
        cg_linemap_add(&p->linemap, &l, header.buf, header.len, NULL, 0, -1, -1);
        cg_strbuf_release(&header);
        for (size_t e = 0; e < bmap.n; e++) {
            cg_linemap_entry x = bmap.v[e];
            x.out_line += header_lines;
            cg_grow(&p->linemap.v, &p->linemap.cap, p->linemap.n + 1, sizeof *p->linemap.v);
            p->linemap.v[p->linemap.n++] = x;
        }
    }
    cg_linemap_release(&bmap);
    if (rc == 0)
        cg_lint_finish(&p->lint);
    return rc;
}

int cg_project_render(cg_project *p, cg_error *err)
{
    /* a thread costs more than the diagrams of a small matrix: 0.3 ms on
     * the embedded default (creating it, and the cross-core TLB flushes
     * every later unmap pays once a second thread ran) */
    if (!p->draw_diagrams || p->drawn || p->jobs.n < 10000)
        return render(p, err);
    /* on two cores the diagrams of a large one cost no time: drawn while the config is */
    drawing d = {p, {0}, NULL, 0};
    cg_pool_init(&d.pool);
    pthread_t th;
    if (!cg_threads_allowed() || pthread_create(&th, NULL, draw, &d) != 0) {
        cg_pool_release(&d.pool); /* no thread: drawn when asked for */
        return render(p, err);
    }
    int rc = render(p, err);
    pthread_join(th, NULL);
    keep_drawing(p, &d);
    return rc;
}
