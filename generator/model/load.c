/* Loading a project: the manifest names the sources; each is read (io/fsio),
 * parsed (lang/), expanded into cells and jobs (model/), and every template
 * a workflow entry uses is compiled, so that rendering reads no file. */
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "io/fsio.h"
#include "lang/ref_regex.h"
#include "lang/schema.h"
#include "model/pipeline.h"
#include "model/select.h"
#include "model/walk.h"

void cg_model_init(cg_model *p)
{
    memset(p, 0, sizeof *p);
    cg_pool_init(&p->pool);
    cg_map_init(&p->doc_by_path);
    cg_map_init(&p->templates);
    cg_lists_init(&p->lists);
    cg_warnings_init(&p->warnings);
    cg_selection_init(&p->selection);
    cg_tier_prev_init(&p->tier_prev);
    p->per_change = -1;
}

void cg_model_release(cg_model *p)
{
    for (size_t i = 0; i < p->ntrees; i++) {
        cg_tree_free(p->trees[i]);
        if (p->cells)
            cg_cells_release(&p->cells[i]);
    }
    free(p->trees);
    free(p->cells);
    cg_tier_prev_release(&p->tier_prev);
    cg_tier_changes_release(&p->tier_changes);
    cg_lists_release(&p->lists);
    for (size_t i = 0; i < p->nfragments; i++)
        cg_fragment_release(&p->fragments[i]);
    free(p->fragments);
    cg_jobs_release(&p->jobs);
    if (p->run)
        json_decref(p->run->parameters);
    cg_order_release(p->orders, p->manifest.nworkflows);
    free(p->orders);
    cg_manifest_release(&p->manifest);
    for (size_t i = 0; i < p->ndocs; i++)
        cg_doc_free(p->docs[i]);
    free(p->docs);
    cg_map_release(&p->doc_by_path);
    cg_map_release(&p->templates);
    for (size_t i = 0; p->phase_templates && i < p->ntrees; i++)
        free(p->phase_templates[i]);
    free(p->phase_templates);
    free(p->job_templates);
    cg_warnings_release(&p->warnings);
    cg_selection_release(&p->selection);
    free(p->statics);
    free(p->marks);
    free(p->root);
    free(p->source_ids);
    cg_walk_free(p->walk);
    cg_pool_release(&p->pool);
    memset(p, 0, sizeof *p);
}

int cg_model_read_source(cg_model *p, const char *rel, const cg_pos *ref, char **data, size_t *len,
                         bool missing_ok, cg_error *err)
{
    cg_file_id id;
    int rc = cg_read_source_id(p->root, rel, ref, CG_DEFAULT_MAX_BYTES, data, len, missing_ok, &id, err);
    if (rc == 0) {
        cg_grow(&p->source_ids, &p->source_ids_cap, p->nsource_ids + 1, sizeof *p->source_ids);
        p->source_ids[p->nsource_ids++] = (struct cg_source_id){id, cg_intern(&p->pool, rel)};
    }
    return rc;
}

static cg_doc *load_doc(cg_model *p, const char *rel, const cg_pos *ref, const cg_load_opts *opts,
                        cg_error *err)
{
    char *data = NULL;
    size_t len = 0;
    if (cg_model_read_source(p, rel, ref, &data, &len, false, err) != 0)
        return NULL;
    cg_doc *doc = cg_doc_parse(rel, data, len, opts, err);
    free(data);
    return doc;
}

static const cg_doc *model_doc(cg_model *p, const char *rel, const cg_pos *ref, cg_error *err)
{
    cg_doc *doc = cg_map_get(&p->doc_by_path, rel);
    if (doc)
        return doc;
    if (!(doc = load_doc(p, rel, ref, NULL, err)))
        return NULL;
    cg_grow(&p->docs, &p->docs_cap, p->ndocs + 1, sizeof *p->docs);
    p->docs[p->ndocs++] = doc;
    cg_map_put(&p->doc_by_path, cg_intern(&p->pool, rel), doc);
    return doc;
}

static int load_fragments(cg_model *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    p->fragments = cg_xcalloc(m->nfragments + 1, sizeof *p->fragments);
    /* an alias may name an anchor of an earlier fragment (the assembler
     * then writes that anchor's section first) */
    const cg_doc **earlier = cg_xcalloc(m->nfragments + 1, sizeof *earlier);
    cg_map by_anchor; /* anchor name -> the last earlier fragment defining it */
    cg_map_init(&by_anchor);
    int rc = 0;
    for (size_t i = 0; i < m->nfragments && rc == 0; i++) {
        cg_load_opts o = {.scope = earlier, .nscope = i, .scope_index = &by_anchor, .copied = true};
        cg_doc *doc = load_doc(p, m->fragments[i], &m->fragment_pos[i], &o, err);
        if (!doc) {
            rc = -1;
            break;
        }
        earlier[i] = doc;
        for (size_t a = 0; a < cg_doc_anchor_count(doc); a++)
            cg_map_put(&by_anchor, cg_doc_anchor(doc, a, NULL), doc);
        rc = cg_fragment_init(&p->fragments[i], doc, err);
        p->nfragments++;
        /* the filters of its workflows, which list --branch evaluates */
        json_t *wfs = rc == 0 ? json_object_get(cg_doc_root(doc), "workflows") : NULL;
        if (json_is_object(wfs))
            rc = cg_ref_workflows_check(doc, "/workflows", wfs, err);
    }
    cg_map_release(&by_anchor);
    free(earlier);
    return rc;
}

/* Tiers named by workflows must exist in some tree. */
static int check_workflow_tiers(cg_model *p, cg_error *err)
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

/* A tree that sends jobs to a workflow must declare every tier the workflow
 * names (`none` to take no part): otherwise it would silently add nothing. */
static int check_tree_tiers(cg_model *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    for (size_t t = 0; t < p->ntrees; t++) {
        const cg_tree *tr = p->trees[t];
        for (size_t ph = 0; ph < tr->nphases; ph++) {
            const cg_phase *phase = &tr->phases[ph];
            for (size_t k = 0; k < phase->nworkflows; k++) {
                const cg_workflow_decl *wd = &m->workflows[phase->workflows[k]];
                for (size_t i = 0; i < wd->ntiers + wd->non_request; i++) {
                    bool gated = i >= wd->ntiers;
                    const char *name = gated ? wd->on_request[i - wd->ntiers] : wd->tiers[i];
                    const cg_pos *at = gated ? &wd->on_request_pos[i - wd->ntiers] : &wd->tier_pos[i];
                    bool found = false;
                    for (size_t x = 0; x < tr->ntiers && !found; x++)
                        found = cg_streq(tr->tiers[x].name, name);
                    if (found)
                        continue;
                    cg_error_at(err, &phase->workflow_pos[k],
                                "phase '%s' lands in workflow '%s', which takes tier '%s', but tree '%s' does "
                                "not declare it; declare '%s' under 'tiers' (or '%s: none' to take no part)",
                                phase->name, wd->name, name, tr->name, name, name);
                    cg_error_note(err, at, "workflow '%s' takes tier '%s' here", wd->name, name);
                    return -1;
                }
            }
        }
    }
    return 0;
}

static const char *kind_by_path(const cg_model *p, const char *rel)
{
    const cg_manifest *m = &p->manifest;
    if (cg_path_same(rel, p->opt.manifest))
        return "the manifest";
    for (size_t i = 0; i < m->ntrees; i++)
        if (cg_path_same(rel, m->trees[i]))
            return "a tree";
    for (size_t i = 0; i < m->nlists; i++)
        if (cg_path_same(rel, m->lists[i]))
            return "a list file";
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
            if (tp->has_names || !p->trees[t]->phases[k].template_raw)
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

const char *cg_model_source_kind(const cg_model *p, const char *rel)
{
    const char *kind = kind_by_path(p, rel);
    cg_file_id id;
    if (kind || !p->nsource_ids || cg_file_id_of(p->root, rel, &id) != 0)
        return kind;
    for (size_t i = 0; i < p->nsource_ids; i++)
        if (p->source_ids[i].id.dev == id.dev && p->source_ids[i].id.ino == id.ino)
            return (kind = kind_by_path(p, p->source_ids[i].rel)) ? kind : "a source";
    return NULL;
}

int cg_model_bind_job(const cg_model *p, cg_env *env, const cg_job *j, int workflow)
{
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
    /* {{ cell }}: the job name without its phase, made when first used */
    cg_env_defer_cell(env);
    return 0;
}

int cg_model_template_path(const cg_model *p, const cg_job *j, cg_env *env, cg_strbuf *out, cg_error *err)
{
    (void)p;
    (void)err; /* cg_env_expand records its error in the env's */
    const cg_phase *ph = &j->tree->phases[j->phase];
    cg_src src = {j->tree->doc, ph->template_doc_path, ph->template_pos, false};
    cg_strbuf_reset(out);
    return cg_env_expand(env, &ph->template_path, CG_EXPAND_PLAIN, NULL, out, &src, "the template path");
}

/* "TREE:PATH", the key of p->templates (without printf: it is made for
 * every job, twice). */
static void template_key(cg_strbuf *key, size_t tree, const cg_strbuf *path)
{
    char d[24];
    size_t i = sizeof d;
    do
        d[--i] = (char)('0' + tree % 10);
    while ((tree /= 10) != 0);
    cg_strbuf_add(key, d + i, sizeof d - i);
    cg_strbuf_addc(key, ':');
    cg_strbuf_add(key, cg_strbuf_str(path), path->len);
}

/* The template at `path` for j's tree: loaded and compiled the first time. */
static const cg_template *template_at(cg_model *p, const cg_job *j, const cg_strbuf *path, cg_error *err)
{
    const cg_tree *t = j->tree;
    const cg_phase *ph = &t->phases[j->phase];
    cg_strbuf key = CG_STRBUF_INIT;
    template_key(&key, t->index, path);
    cg_template *tpl = cg_map_get(&p->templates, key.buf);
    if (!tpl && cg_check_project_path(path->buf, &ph->template_pos, "the template path", err) == 0) {
        const cg_doc *doc = model_doc(p, path->buf, &ph->template_pos, err);
        if (doc && (tpl = cg_template_compile(doc, t, &p->pool, err)))
            cg_map_put(&p->templates, cg_intern(&p->pool, key.buf), tpl);
    }
    cg_strbuf_release(&key);
    return tpl;
}

/* Loads and compiles the template of a job bound to a workflow (once per
 * path and tree). */
static int load_template(cg_model *p, const cg_job *j, cg_env *env, cg_error *err)
{
    const cg_tree *t = j->tree;
    const cg_phase *ph = &t->phases[j->phase];
    /* a template path without placeholders names one template per phase */
    const cg_template **cached = NULL;
    if (!ph->template_path.has_names) {
        if (!p->phase_templates[t->index])
            p->phase_templates[t->index] = cg_xcalloc(t->nphases + 1, sizeof **p->phase_templates);
        cached = &p->phase_templates[t->index][j->phase];
        if (*cached)
            return 0;
    }
    if (!ph->template_raw) {
        *cached = cg_template_default(t, j->phase, &p->pool);
        return 0;
    }
    cg_strbuf path = CG_STRBUF_INIT;
    if (cg_model_template_path(p, j, env, &path, err) != 0) {
        cg_strbuf_release(&path);
        return -1;
    }
    const cg_template *tpl = template_at(p, j, &path, err);
    cg_strbuf_release(&path);
    if (cached)
        *cached = tpl;
    return tpl ? 0 : -1;
}

/* A template path naming dimensions only ("templates/{{ os }}.yml") is the
 * same in every workflow and needs no variable: made from the cell's
 * values alone, without binding the job, once per job (for both passes of
 * load_templates() and for rendering, p->job_templates).  1 when it cannot
 * be (a group's job, a value missing: the bound path says why), else 0, or
 * -1 after an error. */
static int dims_template(cg_model *p, const cg_job *j, cg_error *err)
{
    const cg_tree *t = j->tree;
    const cg_pstr *s = &t->phases[j->phase].template_path;
    if (j->nmembers || j->cell->group || !t->phases[j->phase].template_raw)
        return 1;
    for (size_t i = 0; i < s->nsegs; i++)
        if (s->segs[i].kind != CG_SEG_TEXT && !cg_tree_is_dim(t, s->segs[i].id))
            return 1;
    cg_error scratch;
    cg_error_init(&scratch);
    cg_env e;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.cell = j->cell;
    e.err = &scratch;
    cg_strbuf path = CG_STRBUF_INIT;
    bool made = cg_model_template_path(p, j, &e, &path, &scratch) == 0 && !scratch.set;
    cg_error_release(&scratch);
    const cg_template *tpl = made ? template_at(p, j, &path, err) : NULL;
    cg_strbuf_release(&path);
    if (!made)
        return 1;
    if (!tpl)
        return -1;
    if (p->job_templates)
        p->job_templates[j->index] = tpl;
    return 0;
}

/* Every template a workflow entry uses, in the order the config renders
 * them (so the first error is the one rendering would meet first). */
static int load_templates(cg_model *p, cg_error *err)
{
    if (!p->phase_templates)
        p->phase_templates = cg_xcalloc(p->ntrees + 1, sizeof *p->phase_templates);
    if (!p->job_templates) /* the jobs stay the same between the two passes */
        p->job_templates = cg_xcalloc(p->jobs.n + 1, sizeof *p->job_templates);
    cg_env *envs = cg_xcalloc(p->ntrees + 1, sizeof *envs);
    for (size_t i = 0; i < p->ntrees; i++)
        cg_env_init(&envs[i], p->trees[i], err);
    int rc = 0;
    for (size_t w = 0; w < p->manifest.nworkflows && rc == 0; w++) {
        uint64_t bit = (uint64_t)1 << w;
        for (size_t k = 0; k < p->jobs.n && rc == 0; k++) {
            const cg_job *j = &p->jobs.v[k];
            if (!(j->workflows & bit))
                continue;
            const cg_phase *ph = &j->tree->phases[j->phase];
            if (!ph->template_path.has_names && p->phase_templates[j->tree->index] &&
                p->phase_templates[j->tree->index][j->phase])
                continue;
            if (p->job_templates[k])
                continue;
            if (ph->template_path.has_names && (rc = dims_template(p, j, err)) != 1)
                continue;
            rc = 0;
            cg_env *env = &envs[j->tree->index];
            if ((rc = cg_model_bind_job(p, env, j, (int)w)) == 0)
                rc = load_template(p, j, env, err);
        }
    }
    for (size_t i = 0; i < p->ntrees; i++)
        cg_env_release(&envs[i]);
    free(envs);
    return rc;
}

int cg_model_job_templates(cg_model *p, const cg_job *j, cg_env *env, cg_error *err)
{
    if (!p->phase_templates)
        p->phase_templates = cg_xcalloc(p->ntrees + 1, sizeof *p->phase_templates);
    const cg_phase *ph = &j->tree->phases[j->phase];
    for (size_t w = 0; w < p->manifest.nworkflows; w++) {
        if (!(j->workflows & ((uint64_t)1 << w)))
            continue;
        if (!ph->template_path.has_names && p->phase_templates[j->tree->index] &&
            p->phase_templates[j->tree->index][j->phase])
            return 0;
        int rc = ph->template_path.has_names ? dims_template(p, j, err) : 1;
        if (rc != 1)
            return rc; /* made from the cell's values: the same in every workflow */
        if (cg_model_bind_job(p, env, j, (int)w) != 0 || load_template(p, j, env, err) != 0)
            return -1;
    }
    return 0;
}

const cg_template *cg_model_template(const cg_model *p, const cg_job *j, cg_env *env, cg_error *err)
{
    const cg_tree *t = j->tree;
    if (p->job_templates && p->job_templates[j->index])
        return p->job_templates[j->index];
    if (!t->phases[j->phase].template_path.has_names && p->phase_templates && p->phase_templates[t->index] &&
        p->phase_templates[t->index][j->phase])
        return p->phase_templates[t->index][j->phase];
    if (!t->phases[j->phase].template_raw) {
        cg_error_plain(err, "the default template of job '%s' was not made (the job is in no workflow)", j->name);
        return NULL;
    }
    cg_strbuf path = CG_STRBUF_INIT;
    const cg_template *tpl = NULL;
    if (cg_model_template_path(p, j, env, &path, err) == 0) {
        cg_strbuf key = CG_STRBUF_INIT;
        template_key(&key, t->index, &path);
        tpl = cg_map_get(&p->templates, key.buf);
        if (!tpl)
            cg_error_plain(err, "template '%s' of job '%s' was not loaded (the job is in no workflow)", path.buf,
                           j->name);
        cg_strbuf_release(&key);
    }
    cg_strbuf_release(&path);
    return tpl;
}

/* Every source, sorted by path (so the digest ignores load order): the
 * manifest, trees, templates and fragments. */
static void sources_digest(const cg_model *p, char hex[41])
{
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

/* The pairwise tiers' cells recorded in the committed config's header, so
 * that the selection starts from them.  An output that cannot be read is
 * as good as none here (generate and check say what is wrong with it). */
static void read_committed_tiers(cg_model *p)
{
    cg_error scratch;
    cg_error_init(&scratch);
    char *old = NULL;
    size_t len = 0, head = (size_t)1 << 16;
    int r = cg_read_output_head(p->root, p->manifest.output, NULL, "read", head, &old, &len, &scratch);
    if (r == 0 && len == head) {
        /* a header longer than the head: only then the whole file */
        bool all_comments = true;
        for (size_t i = 0; i < len && all_comments;) {
            const char *nl = memchr(old + i, '\n', len - i);
            all_comments = old[i] == '#';
            i = nl ? (size_t)(nl - old) + 1 : len;
        }
        if (all_comments) {
            free(old);
            old = NULL;
            r = cg_read_output(p->root, p->manifest.output, NULL, "read", &old, &len, &scratch);
        }
    }
    if (r == 0)
        cg_tier_prev_parse(&p->tier_prev, old, len);
    free(old);
    cg_error_release(&scratch);
}

int cg_model_load(cg_model *p, const cg_options *o, cg_error *err)
{
    p->opt = *o;
    if (!p->opt.dir)
        p->opt.dir = ".";
    if (!p->opt.manifest)
        p->opt.manifest = "cigen.yml";
    if (!(p->root = cg_realdir(p->opt.dir, err)))
        return -1;
    char *gitdir = NULL;
    if (cg_root_in_git(p->root, &gitdir)) {
        cg_error_plain(err, "the project folder '%s' lies inside a repository's git folder ('%s'); cigen never "
                       "reads or writes there", p->opt.dir, gitdir);
        free(gitdir);
        return -1;
    }
    if (cg_check_project_path(p->opt.manifest, &(cg_pos){0}, "the manifest path", err) != 0)
        return -1;
    /* "-m ./cigen.yml" is cigen.yml: its name is in the header and digest */
    cg_strbuf norm = CG_STRBUF_INIT;
    cg_path_normalize(p->opt.manifest, &norm);
    if (norm.len)
        p->opt.manifest = cg_intern(&p->pool, norm.buf);
    cg_strbuf_release(&norm);
    char *data = NULL;
    size_t len = 0;
    int rc = cg_model_read_source(p, p->opt.manifest, &(cg_pos){0}, &data, &len, true, err);
    if (rc == 1)
        return cg_error_plain(err, "cannot read '%s': no such file (run cigen in the project's folder, or name "
                              "it with -C DIR or the manifest with -m FILE)", p->opt.manifest);
    if (rc != 0)
        return -1;
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
    if (m->pipeline.setup && m->pipeline.project_derived && cg_streq(m->pipeline.project, ".circleci")) {
        /* the setup job will run `cigen -C .circleci`: this folder must be it */
        const char *slash = strrchr(p->root, '/');
        const char *base = slash ? slash + 1 : p->root;
        if (!cg_streq(base, ".circleci"))
            return cg_error_at(err, &m->pipeline.setup_pos, "'output: config.yml' in dynamic mode is the setup config "
                               "CircleCI reads at .circleci/config.yml, but this project's folder is '%s', not the "
                               "repository's .circleci: move the project there, write 'output: .circleci/config.yml' "
                               "(a project at the repository's root), or say where it is ('pipeline: project: PATH')",
                               base);
    }
    if (load_fragments(p, err) != 0)
        return -1;
    for (size_t i = 0; i < m->nlists; i++) {
        const cg_doc *doc = model_doc(p, m->lists[i], &m->list_pos[i], err);
        if (!doc || cg_lists_add(&p->lists, doc, &p->pool, err) != 0)
            return -1;
    }
    read_committed_tiers(p);
    p->tier_prev.fresh = p->opt.fresh_tiers;
    p->trees = cg_xcalloc(m->ntrees + 1, sizeof *p->trees);
    p->cells = cg_xcalloc(m->ntrees + 1, sizeof *p->cells);
    if (p->opt.walker && cg_walk_begin(p, err) != 0)
        return -1;
    uint64_t jobs = 0; /* cells x phases of the trees so far, bounded before each expands */
    for (size_t i = 0; i < m->ntrees; i++) {
        const cg_doc *doc = model_doc(p, m->trees[i], &m->tree_pos[i], err);
        if (!doc)
            return -1;
        cg_tree *t = cg_tree_parse(doc, i, m, &p->lists, &p->pool, err);
        if (!t)
            return -1;
        p->trees[p->ntrees++] = t;
        for (size_t j = 0; j < i; j++)
            if (cg_streq(p->trees[j]->name, t->name)) {
                cg_error_at(err, &m->tree_pos[i], "two trees are named '%s' (after their file names)", t->name);
                cg_error_note(err, &m->tree_pos[j], "the other one");
                return -1;
            }
        if (cg_expand_bound(t, m->max_cells, m->max_jobs, m->max_filter_tests, m->max_pair_tests, &jobs, err) != 0)
            return -1;
        if (p->opt.walker ? cg_walk_tree(p, t, err) != 0
                          : cg_expand(t, &p->pool, &p->cells[i], m->max_cells, p->opt.strict, &p->tier_prev,
                                      &p->tier_changes, &p->warnings, err) != 0)
            return -1;
    }
    if (check_workflow_tiers(p, err) != 0 || check_tree_tiers(p, err) != 0)
        return -1;
    for (size_t i = 0; i < p->lists.n; i++) {
        const cg_list *l = &p->lists.v[i];
        if (l->uses)
            continue;
        if (p->opt.strict)
            return cg_error_at(err, &l->pos, "list '%s' is used by no tree", l->name);
        cg_warn_at(&p->warnings, &l->pos, "list '%s' is used by no tree", l->name);
    }
    if (p->opt.walker) /* the cells and jobs were walked, not kept */
        return cg_walk_finish(p, err);
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        size_t *skipped = cg_xcalloc(t->nphases + 1, sizeof *skipped);
        int brc = cg_jobs_build(&p->jobs, t, &p->cells[i], m, &p->pool, skipped, err);
        /* a phase that runs for no cell makes no job: say so rather than let it vanish */
        for (size_t k = 0; k < t->nphases && brc == 0; k++) {
            const cg_phase *ph = &t->phases[k];
            if (!p->cells[i].nlive || skipped[k] < p->cells[i].nlive)
                continue;
            const char *why = ph->nskip && ph->nonly ? "'skip' and 'only'" : ph->nskip ? "'skip'" : "'only'";
            if (!ph->nskip && !ph->nonly) { /* only `per` removes cells without skip or only */
                if (p->opt.strict)
                    brc = cg_error_at(err, &ph->per_pos, "phase '%s' runs for no cell: no cell has every "
                                      "dimension of its 'per'", ph->name);
                else
                    cg_warn_at(&p->warnings, &ph->per_pos, "phase '%s' runs for no cell: no cell has every "
                               "dimension of its 'per'", ph->name);
                continue;
            }
            if (p->opt.strict)
                brc = cg_error_at(err, &ph->pos, "phase '%s' runs for no cell: its %s leave%s no job", ph->name,
                                 why, ph->nskip && ph->nonly ? "" : "s");
            else
                cg_warn_at(&p->warnings, &ph->pos, "phase '%s' runs for no cell: its %s leave%s no job", ph->name,
                           why, ph->nskip && ph->nonly ? "" : "s");
        }
        free(skipped);
        if (brc != 0)
            return -1;
    }
    for (size_t w = 0; w < m->nworkflows; w++)
        if (m->workflows[w].per_change)
            p->per_change = (int)w;
    if (cg_jobs_check_requires(&p->jobs, m, err) != 0)
        return -1;
    /* skip patterns are counted while building jobs: report unmatched ones now */
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        for (size_t k = 0; k < t->npatterns; k++) {
            const cg_pattern *pt = t->patterns[k];
            if (pt->hits || !(cg_streq(pt->kind, "skip") || cg_streq(pt->kind, "phase only")))
                continue;
            const char *kind = cg_streq(pt->kind, "skip") ? "skip" : "only";
            if (p->opt.strict)
                return cg_error_at(err, &pt->pos, "%s pattern %s matches no cell", kind, pt->text);
            cg_warn_at(&p->warnings, &pt->pos, "%s pattern %s matches no cell", kind, pt->text);
        }
    }
    /* the templates of every job, before the selection: it reads their
     * contexts, and may put a job into one more workflow (loaded after) */
    if (load_templates(p, err) != 0 ||
        (p->opt.pipeline ? cg_pipeline_select(p, err) : cg_model_select(p, err)) != 0 || load_templates(p, err) != 0)
        return -1;
    /* each workflow's entries in order, once the selection placed them */
    p->orders = cg_xcalloc(m->nworkflows + 1, sizeof *p->orders);
    if (cg_order_build(m, p->trees, p->ntrees, &p->jobs, p->orders, err) != 0)
        return -1;
    sources_digest(p, p->sources_digest);
    return 0;
}

