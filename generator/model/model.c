/* The services of a loaded model (model/model.h): where a file of the
 * project comes from, a job bound to a workflow, the templates of jobs
 * (loaded and compiled once, by cg_model_load, and for a walk); and the
 * sources read and kept for the loader (model/model_impl.h). */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "io/fsio.h"
#include "lang/schema.h"
#include "model/model_impl.h"

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

cg_doc *cg_model_load_doc(cg_model *p, const char *rel, const cg_pos *ref, const cg_load_opts *opts,
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

const cg_doc *cg_model_doc(cg_model *p, const char *rel, const cg_pos *ref, cg_error *err)
{
    cg_doc *doc = cg_map_get(&p->doc_by_path, rel);
    if (doc)
        return doc;
    if (!(doc = cg_model_load_doc(p, rel, ref, NULL, err)))
        return NULL;
    cg_grow(&p->docs, &p->docs_cap, p->ndocs + 1, sizeof *p->docs);
    p->docs[p->ndocs++] = doc;
    cg_map_put(&p->doc_by_path, cg_intern(&p->pool, rel), doc);
    return doc;
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

bool cg_model_written_in(const cg_model *p, size_t w, const char *name, int32_t job)
{
    uint64_t bit = (uint64_t)1 << w;
    if (p->omitted & bit)
        return false;
    const cg_job *j = job >= 0 ? &p->jobs.v[job] : cg_jobs_find(&p->jobs, name);
    if (j && (j->workflows & bit))
        return true;
    if (job >= 0)
        return false;
    if (!p->statics) { /* no selection gathered them: the manifest's, as listed */
        json_t *st = p->manifest.workflows[w].jobs;
        for (size_t i = 0; st && i < json_array_size(st); i++)
            if (cg_streq(cg_static_entry_name(json_array_get(st, i)), name))
                return true;
        return false;
    }
    for (size_t i = 0; i < p->nstatics; i++)
        if (p->statics[i].workflow == w && !p->statics[i].culled && cg_streq(p->statics[i].name, name))
            return true;
    return false;
}

void cg_model_requires_text(const cg_model *p, const char *const *names, const bool *optional, const int32_t *job,
                            uint32_t n, uint64_t workflows, cg_strbuf *out)
{
    for (uint32_t r = 0; r < n; r++) {
        cg_strbuf_addf(out, " %s", names[r]);
        if (!optional || !optional[r])
            continue;
        cg_strbuf_adds(out, "? (");
        bool first = true;
        for (size_t w = 0; w < p->manifest.nworkflows; w++) {
            if (!(workflows & ((uint64_t)1 << w)) || (p->omitted & ((uint64_t)1 << w)))
                continue;
            cg_strbuf_addf(out, "%s%s in %s", first ? "" : ", ",
                           cg_model_written_in(p, w, names[r], job ? job[r] : -1) ? "kept" : "dropped",
                           p->manifest.workflows[w].name);
            first = false;
        }
        cg_strbuf_adds(out, first ? "optional; not written)" : ")");
    }
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
        const cg_doc *doc = cg_model_doc(p, path->buf, &ph->template_pos, err);
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
 * cg_model_load_templates() and for rendering, p->job_templates).  1 when it cannot
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
int cg_model_load_templates(cg_model *p, cg_error *err)
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
