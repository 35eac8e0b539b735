#include "model/order.h"

#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"

static void push(cg_wf_order *o, size_t *cap, int32_t item)
{
    cg_grow(&o->items, cap, o->n + 1, sizeof *o->items);
    o->items[o->n++] = item;
}

/* Whether some tree sends phase `name` to workflow w. */
static bool phase_lands(cg_tree *const *trees, size_t ntrees, size_t w, const char *name)
{
    for (size_t t = 0; t < ntrees; t++)
        for (size_t k = 0; k < trees[t]->nphases; k++) {
            const cg_phase *ph = &trees[t]->phases[k];
            if (!cg_streq(ph->name, name))
                continue;
            for (size_t i = 0; i < ph->nworkflows; i++)
                if (ph->workflows[i] == (int)w)
                    return true;
        }
    return false;
}

static const char *job_phase(const cg_job *j)
{
    return j->tree->phases[j->phase].name;
}

typedef struct placed_phase {
    const cg_tree *tree;
    const char *phase;
    bool any_tree;  /* placed by an item naming no tree */
} placed_phase;

/* Records that an item of `order` places phase `name` of tree t; placing
 * one twice is an error (`any_tree`: the item named no tree). */
static int place(const cg_workflow_decl *wd, const cg_tree *t, const char *name, const cg_pos *pos, bool any_tree,
                 placed_phase **pl, size_t *n, size_t *cap, cg_error *err)
{
    for (size_t q = 0; q < *n; q++)
        if ((*pl)[q].tree == t && cg_streq((*pl)[q].phase, name)) {
            if (any_tree && (*pl)[q].any_tree)
                return cg_error_at(err, pos, "'order' of workflow '%s' places phase '%s' twice", wd->name, name);
            return cg_error_at(err, pos, "'order' of workflow '%s' places phase '%s' of tree '%s' twice", wd->name,
                               name, t->name);
        }
    cg_grow(pl, cap, *n + 1, sizeof **pl);
    (*pl)[(*n)++] = (placed_phase){t, name, any_tree};
    return 0;
}

static int order_list(const cg_manifest *m, size_t w, cg_tree *const *trees, size_t ntrees, const cg_jobs *jobs,
                      cg_wf_order *o, size_t *cap, cg_error *err)
{
    const cg_workflow_decl *wd = &m->workflows[w];
    uint64_t bit = (uint64_t)1 << w;
    size_t nstatic = wd->jobs ? json_array_size(wd->jobs) : 0;
    bool *placed = cg_xcalloc(nstatic + 1, sizeof *placed);
    placed_phase *pl = NULL; /* every (tree, phase) placed so far */
    size_t nplaced = 0, plcap = 0;
    cg_strbuf ip = CG_STRBUF_INIT, kp = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(wd->order_list) && rc == 0; i++) {
        json_t *e = json_array_get(wd->order_list, i);
        cg_strbuf_reset(&ip);
        cg_strbuf_adds(&ip, wd->path);
        cg_strbuf_adds(&ip, "/order");
        cg_path_push_index(&ip, i);
        if (json_is_string(e)) {
            const char *name = json_string_value(e);
            size_t s = 0;
            while (s < nstatic && !cg_streq(cg_static_entry_name(json_array_get(wd->jobs, s)), name))
                s++;
            cg_pos p = cg_doc_where(m->doc, ip.buf);
            if (s == nstatic) {
                const char **cands = cg_xcalloc(nstatic + 1, sizeof *cands);
                for (size_t k = 0; k < nstatic; k++)
                    cands[k] = cg_static_entry_name(json_array_get(wd->jobs, k));
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, name, cands, nstatic);
                free(cands);
                rc = cg_error_at(err, &p, "'order' of workflow '%s' places '%s', which is not one of its static "
                                 "'jobs'%s; generated jobs are placed by phase ({phase: NAME})", wd->name, name,
                                 cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                break;
            }
            if (placed[s]) {
                rc = cg_error_at(err, &p, "'order' of workflow '%s' places '%s' twice", wd->name, name);
                break;
            }
            placed[s] = true;
            push(o, cap, -(int32_t)s - 1);
            continue;
        }
        json_t *ph = json_object_get(e, "phase"), *tr = json_object_get(e, "tree");
        int only_tree = -1; /* {tree: NAME}: that tree's phases only */
        if (tr) {
            cg_strbuf_reset(&kp);
            cg_strbuf_adds(&kp, ip.buf);
            cg_path_push_key(&kp, "tree");
            cg_pos p = cg_doc_where(m->doc, kp.buf);
            const char *name = json_string_value(tr);
            for (size_t t = 0; t < ntrees && only_tree < 0; t++)
                if (cg_streq(trees[t]->name, name))
                    only_tree = (int)t;
            if (only_tree < 0) {
                const char **cands = cg_xcalloc(ntrees + 1, sizeof *cands);
                for (size_t t = 0; t < ntrees; t++)
                    cands[t] = trees[t]->name;
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, name, cands, ntrees);
                free(cands);
                rc = cg_error_at(err, &p, "'order' of workflow '%s' names tree '%s', which is not one of the "
                                 "manifest's 'trees' (a tree is named by its file name without .yml)%s", wd->name,
                                 name, cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                break;
            }
            bool any = false;
            for (size_t k = 0; k < trees[only_tree]->nphases && !any; k++)
                any = phase_lands(&trees[only_tree], 1, w, trees[only_tree]->phases[k].name);
            if (!any) {
                rc = cg_error_at(err, &p, "'order' of workflow '%s' names tree '%s', which sends no phase to it",
                                 wd->name, name);
                break;
            }
        }
        /* the (tree, phase) pairs this item places */
        size_t first = nplaced;
        cg_tree *const *scope = only_tree >= 0 ? &trees[only_tree] : trees;
        size_t nscope = only_tree >= 0 ? 1 : ntrees;
        size_t nn = ph ? (json_is_array(ph) ? json_array_size(ph) : 1) : 0;
        for (size_t k = 0; k < nn && rc == 0; k++) {
            json_t *n = json_is_array(ph) ? json_array_get(ph, k) : ph;
            const char *name = json_string_value(n);
            cg_strbuf np = CG_STRBUF_INIT;
            cg_strbuf_adds(&np, ip.buf);
            cg_path_push_key(&np, "phase");
            if (json_is_array(ph))
                cg_path_push_index(&np, k);
            cg_pos p = cg_doc_where(m->doc, np.buf);
            cg_strbuf_release(&np);
            if (!phase_lands(scope, nscope, w, name)) {
                if (only_tree >= 0)
                    rc = cg_error_at(err, &p, "'order' of workflow '%s' places phase '%s' of tree '%s', but that "
                                     "tree sends no phase of that name to it", wd->name, name, trees[only_tree]->name);
                else
                    rc = cg_error_at(err, &p, "'order' of workflow '%s' places phase '%s', but no tree sends a "
                                     "phase of that name to it", wd->name, name);
                break;
            }
            for (size_t t = 0; t < nscope && rc == 0; t++)
                if (phase_lands(&scope[t], 1, w, name))
                    rc = place(wd, scope[t], name, &p, only_tree < 0, &pl, &nplaced, &plcap, err);
        }
        if (!ph) /* {tree: NAME}: all its phases that land here */
            for (size_t k = 0; k < trees[only_tree]->nphases && rc == 0; k++) {
                const char *name = trees[only_tree]->phases[k].name;
                if (phase_lands(&trees[only_tree], 1, w, name)) {
                    cg_strbuf_reset(&kp);
                    cg_strbuf_adds(&kp, ip.buf);
                    cg_path_push_key(&kp, "tree");
                    cg_pos p = cg_doc_where(m->doc, kp.buf);
                    rc = place(wd, trees[only_tree], name, &p, false, &pl, &nplaced, &plcap, err);
                }
            }
        for (size_t j = 0; j < jobs->n && rc == 0; j++) {
            if (!(jobs->v[j].workflows & bit))
                continue;
            for (size_t q = first; q < nplaced; q++)
                if (pl[q].tree == jobs->v[j].tree && cg_streq(pl[q].phase, job_phase(&jobs->v[j]))) {
                    push(o, cap, (int32_t)j);
                    break;
                }
        }
    }
    for (size_t s = 0; s < nstatic && rc == 0; s++)
        if (!placed[s])
            rc = cg_error_at(err, &wd->order_pos, "'order' of workflow '%s' does not place its static entry '%s'",
                             wd->name, cg_static_entry_name(json_array_get(wd->jobs, s)));
    for (size_t t = 0; t < ntrees && rc == 0; t++)
        for (size_t k = 0; k < trees[t]->nphases && rc == 0; k++) {
            const cg_phase *ph = &trees[t]->phases[k];
            bool lands = false, done = false;
            for (size_t i = 0; i < ph->nworkflows; i++)
                lands = lands || ph->workflows[i] == (int)w;
            for (size_t q = 0; q < nplaced; q++)
                done = done || (pl[q].tree == trees[t] && cg_streq(pl[q].phase, ph->name));
            if (lands && !done) {
                rc = cg_error_at(err, &wd->order_pos, "'order' of workflow '%s' does not place phase '%s', which "
                                 "tree '%s' sends to it; add {phase: %s} (or {tree: %s, phase: %s})", wd->name,
                                 ph->name, trees[t]->name, ph->name, trees[t]->name, ph->name);
                cg_error_note(err, &ph->pos, "phase '%s' is declared here", ph->name);
            }
        }
    /* a job the list does not place (a selection copied it in from a phase
     * that does not land here) goes at the end, in cell order: never nowhere */
    bool *in_order = cg_xcalloc(jobs->n + 1, sizeof *in_order);
    for (size_t i = 0; i < o->n && rc == 0; i++)
        if (o->items[i] >= 0)
            in_order[o->items[i]] = true;
    for (size_t j = 0; j < jobs->n && rc == 0; j++)
        if ((jobs->v[j].workflows & bit) && !in_order[j])
            push(o, cap, (int32_t)j);
    free(in_order);
    free(placed);
    free(pl);
    cg_strbuf_release(&ip);
    cg_strbuf_release(&kp);
    return rc;
}

int cg_order_build(const cg_manifest *m, cg_tree *const *trees, size_t ntrees, const cg_jobs *jobs,
                   cg_wf_order *out, cg_error *err)
{
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        cg_wf_order *o = &out[w];
        size_t cap = 0;
        uint64_t bit = (uint64_t)1 << w;
        size_t nstatic = wd->jobs ? json_array_size(wd->jobs) : 0;
        if (wd->order == CG_ORDER_LIST) {
            if (order_list(m, w, trees, ntrees, jobs, o, &cap, err) != 0)
                return -1;
            continue;
        }
        for (size_t s = 0; s < nstatic; s++)
            push(o, &cap, -(int32_t)s - 1);
        if (wd->order == CG_ORDER_CELL) {
            for (size_t j = 0; j < jobs->n; j++)
                if (jobs->v[j].workflows & bit)
                    push(o, &cap, (int32_t)j);
            continue;
        }
        /* by phase: the phase names in the order the trees declare them */
        for (size_t t = 0; t < ntrees; t++)
            for (size_t k = 0; k < trees[t]->nphases; k++) {
                const char *name = trees[t]->phases[k].name;
                bool seen = false;
                for (size_t t2 = 0; t2 <= t && !seen; t2++)
                    for (size_t k2 = 0; k2 < (t2 == t ? k : trees[t2]->nphases) && !seen; k2++)
                        seen = cg_streq(trees[t2]->phases[k2].name, name);
                if (seen)
                    continue;
                for (size_t j = 0; j < jobs->n; j++)
                    if ((jobs->v[j].workflows & bit) && cg_streq(job_phase(&jobs->v[j]), name))
                        push(o, &cap, (int32_t)j);
            }
    }
    return 0;
}

void cg_order_release(cg_wf_order *o, size_t n)
{
    for (size_t i = 0; o && i < n; i++)
        free(o[i].items);
}
