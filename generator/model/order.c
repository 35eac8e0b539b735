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

static int order_list(const cg_manifest *m, size_t w, cg_tree *const *trees, size_t ntrees, const cg_jobs *jobs,
                      cg_wf_order *o, size_t *cap, cg_error *err)
{
    const cg_workflow_decl *wd = &m->workflows[w];
    uint64_t bit = (uint64_t)1 << w;
    size_t nstatic = wd->jobs ? json_array_size(wd->jobs) : 0;
    bool *placed = cg_xcalloc(nstatic + 1, sizeof *placed);
    const char **phases = NULL; /* every phase placed so far */
    size_t nphases = 0, pcap = 0;
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
        json_t *ph = json_object_get(e, "phase");
        cg_strbuf_reset(&kp);
        cg_strbuf_adds(&kp, ip.buf);
        cg_path_push_key(&kp, "phase");
        size_t nn = json_is_array(ph) ? json_array_size(ph) : 1;
        size_t first = nphases;
        for (size_t k = 0; k < nn && rc == 0; k++) {
            json_t *n = json_is_array(ph) ? json_array_get(ph, k) : ph;
            const char *name = json_string_value(n);
            cg_strbuf np = CG_STRBUF_INIT;
            cg_strbuf_adds(&np, kp.buf);
            if (json_is_array(ph))
                cg_path_push_index(&np, k);
            cg_pos p = cg_doc_where(m->doc, np.buf);
            cg_strbuf_release(&np);
            for (size_t q = 0; q < nphases && rc == 0; q++)
                if (cg_streq(phases[q], name))
                    rc = cg_error_at(err, &p, "'order' of workflow '%s' places phase '%s' twice", wd->name, name);
            if (rc == 0 && !phase_lands(trees, ntrees, w, name))
                rc = cg_error_at(err, &p, "'order' of workflow '%s' places phase '%s', but no tree sends a phase "
                                 "of that name to it", wd->name, name);
            cg_grow(&phases, &pcap, nphases + 1, sizeof *phases);
            phases[nphases++] = name;
        }
        for (size_t j = 0; j < jobs->n && rc == 0; j++) {
            if (!(jobs->v[j].workflows & bit))
                continue;
            for (size_t q = first; q < nphases; q++)
                if (cg_streq(phases[q], job_phase(&jobs->v[j]))) {
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
            for (size_t q = 0; q < nphases; q++)
                done = done || cg_streq(phases[q], ph->name);
            if (lands && !done) {
                rc = cg_error_at(err, &wd->order_pos, "'order' of workflow '%s' does not place phase '%s', which "
                                 "tree '%s' sends to it; add {phase: %s}", wd->name, ph->name, trees[t]->name,
                                 ph->name);
                cg_error_note(err, &ph->pos, "phase '%s' is declared here", ph->name);
            }
        }
    free(placed);
    free(phases);
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
