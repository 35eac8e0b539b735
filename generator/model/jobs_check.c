/* jobs_check — what is checked of the jobs once every tree's are built:
 * the names the manifest's static entries and requires give, every
 * requirement against the workflows it lands in (plain and optional), and
 * which cell's paths a changed file matches. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "lang/schema.h"
#include "model/jobs.h"

const char *cg_static_entry_name(json_t *entry)
{
    if (json_is_string(entry))
        return json_string_value(entry);
    const char *k = NULL;
    json_t *v;
    json_object_foreach(entry, k, v) {
        json_t *n = json_is_object(v) ? json_object_get(v, "name") : NULL;
        return json_is_string(n) ? json_string_value(n) : k;
    }
    return NULL;
}

const char *cg_requires_item_name(const json_t *item)
{
    if (json_is_string(item))
        return json_string_value(item);
    if (json_is_object(item) && json_object_size(item) == 1)
        return json_object_iter_key(json_object_iter((json_t *)item));
    return NULL;
}

/* Whether workflow w lists a static entry named `name`. */
static bool static_in(const cg_manifest *m, size_t w, const char *name)
{
    json_t *st = m->workflows[w].jobs;
    for (size_t i = 0; st && i < json_array_size(st); i++)
        if (cg_streq(cg_static_entry_name(json_array_get(st, i)), name))
            return true;
    return false;
}

int cg_optional_require_check(const cg_jobs *jobs, const cg_manifest *m, const cg_tree *const *trees,
                              size_t ntrees, const char *name, const cg_pos *pos, cg_error *err)
{
    if (cg_jobs_find(jobs, name))
        return 0;
    for (size_t w = 0; w < m->nworkflows; w++)
        if (static_in(m, w, name))
            return 0;
    for (size_t t = 0; t < ntrees; t++)
        for (size_t p = 0; p < trees[t]->nphases; p++)
            if (cg_streq(trees[t]->phases[p].name, name))
                return 0;
    /* a typo: the static entries, the phases, and the jobs of a small project */
    size_t nc = jobs->n <= 1000 ? jobs->n : 0, c = 0;
    for (size_t w = 0; w < m->nworkflows; w++)
        nc += m->workflows[w].jobs ? json_array_size(m->workflows[w].jobs) : 0;
    for (size_t t = 0; t < ntrees; t++)
        nc += trees[t]->nphases;
    const char **cands = cg_xmalloc((nc + 1) * sizeof *cands);
    for (size_t w = 0; w < m->nworkflows; w++)
        for (size_t i = 0; m->workflows[w].jobs && i < json_array_size(m->workflows[w].jobs); i++) {
            const char *sn = cg_static_entry_name(json_array_get(m->workflows[w].jobs, i));
            if (sn)
                cands[c++] = sn;
        }
    for (size_t t = 0; t < ntrees; t++)
        for (size_t p = 0; p < trees[t]->nphases; p++)
            cands[c++] = trees[t]->phases[p].name;
    for (size_t k = 0; jobs->n <= 1000 && k < jobs->n; k++)
        cands[c++] = jobs->v[k].name;
    cg_strbuf hint = CG_STRBUF_INIT;
    cg_did_you_mean(&hint, name, cands, c);
    free(cands);
    cg_error_at(err, pos, "'%s?' names no job: no workflow lists '%s' and no tree makes a job or has a phase of "
                "that name%s", name, name, cg_strbuf_str(&hint));
    cg_strbuf_release(&hint);
    return -1;
}

int cg_jobs_check_requires(const cg_jobs *jobs, const cg_manifest *m, const cg_tree *const *trees, size_t ntrees,
                           cg_error *err)
{
    for (size_t k = 0; k < jobs->n; k++) {
        const cg_job *j = &jobs->v[k];
        for (uint32_t r = 0; r < j->nrequires; r++) {
            const char *need = j->requires[r];
            const cg_job *dep = j->requires_job[r] >= 0 ? &jobs->v[j->requires_job[r]] : cg_jobs_find(jobs, need);
            if (cg_job_require_optional(j, r)) {
                /* kept where the job is written, dropped elsewhere: only a
                 * name nothing has is wrong (a typo) */
                if (!dep && cg_optional_require_check(jobs, m, trees, ntrees, need, j->requires_pos[r], err) != 0)
                    return -1;
                continue;
            }
            for (size_t w = 0; w < m->nworkflows; w++) {
                if (!(j->workflows & ((uint64_t)1 << w)))
                    continue;
                if (dep && (dep->workflows & ((uint64_t)1 << w)))
                    continue;
                if (static_in(m, w, need))
                    continue;
                json_t *st = m->workflows[w].jobs;
                /* a typo names a phase of the tree or an entry of the workflow */
                size_t nc = j->tree->nphases + (st ? json_array_size(st) : 0), c = 0;
                const char **cands = cg_xmalloc((nc + 1) * sizeof *cands);
                for (size_t p = 0; p < j->tree->nphases; p++)
                    cands[c++] = j->tree->phases[p].name;
                for (size_t i = 0; st && i < json_array_size(st); i++) {
                    const char *sn = cg_static_entry_name(json_array_get(st, i));
                    if (sn)
                        cands[c++] = sn;
                }
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, need, cands, c);
                free(cands);
                cg_error_at(err, j->requires_pos[r],
                            "job '%s' requires '%s', but workflow '%s' has no job of that name%s", j->name,
                            need, m->workflows[w].name, cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                cg_error_note(err, &m->workflows[w].pos, "workflow '%s' is declared here; add '%s' to its 'jobs' "
                              "or fix the name", m->workflows[w].name, need);
                return -1;
            }
        }
    }
    /* a static entry's `name?` must name a job of the project */
    cg_strbuf path = CG_STRBUF_INIT, name = CG_STRBUF_INIT;
    for (size_t w = 0; w < m->nworkflows; w++) {
        json_t *st = m->workflows[w].jobs;
        for (size_t i = 0; st && i < json_array_size(st); i++) {
            json_t *e = json_array_get(st, i);
            json_t *args = json_is_object(e) ? json_object_iter_value(json_object_iter(e)) : NULL;
            json_t *req = json_is_object(args) ? json_object_get(args, "requires") : NULL;
            for (size_t r = 0; r < json_array_size(req); r++) {
                const char *need = cg_requires_item_name(json_array_get(req, r));
                size_t len = need ? strlen(need) : 0;
                if (len < 2 || need[len - 1] != '?')
                    continue;
                cg_strbuf_reset(&name);
                cg_strbuf_add(&name, need, len - 1);
                cg_strbuf_reset(&path);
                cg_strbuf_adds(&path, m->workflows[w].path);
                cg_strbuf_adds(&path, "/jobs");
                cg_path_push_index(&path, i);
                cg_path_push_key(&path, json_object_iter_key(json_object_iter(e)));
                cg_path_push_key(&path, "requires");
                cg_path_push_index(&path, r);
                cg_pos at = cg_doc_where(m->doc, path.buf);
                if (cg_optional_require_check(jobs, m, trees, ntrees, name.buf, &at, err) != 0) {
                    cg_strbuf_release(&path);
                    cg_strbuf_release(&name);
                    return -1;
                }
            }
        }
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&name);
    /* generated names must not collide with static entries of their workflows */
    for (size_t w = 0; w < m->nworkflows; w++) {
        json_t *st = m->workflows[w].jobs;
        for (size_t i = 0; st && i < json_array_size(st); i++) {
            const char *sn = cg_static_entry_name(json_array_get(st, i));
            const cg_job *j = sn ? cg_jobs_find(jobs, sn) : NULL;
            if (j && (j->workflows & ((uint64_t)1 << w))) {
                cg_error_at(err, &j->cell->leaf->pos, "generated job '%s' has the name of a job listed in workflow '%s'",
                            sn, m->workflows[w].name);
                cg_strbuf p = CG_STRBUF_INIT;
                cg_strbuf_adds(&p, m->workflows[w].path);
                cg_strbuf_adds(&p, "/jobs");
                cg_pos ep = cg_doc_where(m->doc, p.buf);
                cg_strbuf_release(&p);
                cg_error_note(err, &ep, "listed here");
                return -1;
            }
        }
    }
    return 0;
}

/* Path glob g of a cell, its `{{ dim }}` filled with the cell's values:
 * false when the cell lacks a dimension it names (it does not apply). */
static bool fill_glob(const cg_pstr *g, const cg_cell *cell, cg_strbuf *out)
{
    cg_strbuf_reset(out);
    for (size_t s = 0; s < g->nsegs; s++) {
        const cg_seg *seg = &g->segs[s];
        if (seg->kind == CG_SEG_TEXT) {
            cg_strbuf_add(out, seg->text, seg->len);
            continue;
        }
        const char *v = cell->values[seg->id];
        if (!v && !seg->optional)
            return false;
        if (v)
            cg_strbuf_adds(out, v);
    }
    return true;
}

static const char *cell_paths_match(const cg_tnode *leaf, const cg_cell *cell, const char *file, cg_pos *pos,
                                    cg_strbuf *tmp)
{
    for (const cg_tnode *n = leaf; n; n = n->parent)
        for (size_t i = 0; i < n->npaths; i++) {
            const char *g = n->paths[i];
            if (n->paths_text[i].has_names) {
                if (!fill_glob(&n->paths_text[i], cell, tmp))
                    continue;
                g = cg_strbuf_str(tmp);
            }
            if (fnmatch(g, file, 0) == 0) {
                if (pos)
                    *pos = n->paths_pos[i];
                return n->paths[i];
            }
        }
    return NULL;
}

const char *cg_job_paths_match(const cg_job *j, const char *file, cg_pos *pos)
{
    if (!j->tree->has_paths)
        return NULL;
    cg_strbuf tmp = CG_STRBUF_INIT;
    const char *g = NULL;
    if (!j->nmembers)
        g = cell_paths_match(j->cell->leaf, j->cell, file, pos, &tmp);
    for (uint32_t m = 0; m < j->nmembers && !g; m++)
        g = cell_paths_match(j->members[m]->leaf, j->members[m], file, pos, &tmp);
    cg_strbuf_release(&tmp);
    return g;
}
