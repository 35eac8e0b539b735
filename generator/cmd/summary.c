/* summary — what check and generate say of outputs in sync (summary.h). */
#include "cmd/summary.h"

#include <string.h>

#include "base/alloc.h"

void cg_summary_in_sync(const cg_project *p, const cg_disk *o, cg_strbuf *out)
{
    cg_strbuf_addf(out, "cigen: in sync: %s", p->m.manifest.output);
    size_t ndiag = o->n - 1;
    if (p->m.manifest.pipeline.setup && o->n > 1) {
        cg_strbuf_addf(out, "%s %s", o->n > 2 ? "," : " and", p->m.manifest.pipeline.setup);
        ndiag--;
    }
    if (ndiag)
        cg_strbuf_addf(out, " and %zu diagram%s", ndiag, ndiag == 1 ? "" : "s");
    cg_strbuf_adds(out, o->n > 1 ? " match their sources\n" : " matches its sources\n");
}

/* Generated workflows plus the ones fragments hold verbatim. */
static size_t count_workflows(const cg_project *p)
{
    size_t n = p->m.manifest.nworkflows;
    for (size_t w = 0; w < p->m.manifest.nworkflows; w++)
        n -= (p->m.omitted >> w) & 1;
    for (size_t i = 0; i < p->m.nfragments; i++) {
        json_t *w = json_object_get(cg_doc_root(p->m.fragments[i].doc), "workflows");
        if (json_is_object(w))
            n += json_object_size(w) - (json_object_get(w, "version") ? 1 : 0);
    }
    return n;
}

/* The jobs of the config, as check's report counts them (one per name,
 * in however many workflows: a workflow entry's `name:`, else the job it
 * invokes), into *jobs; and its workflow entries (a job in two workflows
 * is two), the return value.  The generated ones, the manifest's static
 * ones (a selection may cull some, or copy them) and those of workflows
 * written verbatim in fragments. */
static size_t count_entries(const cg_project *p, size_t *jobs)
{
    size_t n = 0;
    cg_map names;
    cg_map_init(&names);
    for (size_t k = 0; k < p->m.jobs.n; k++) {
        for (uint64_t w = p->m.jobs.v[k].workflows; w; w &= w - 1)
            n++;
        if (p->m.jobs.v[k].workflows)
            cg_map_put(&names, p->m.jobs.v[k].name, (void *)1);
    }
    for (size_t e = 0; e < p->m.nstatics; e++)
        if (p->m.statics[e].mark.kind != CG_MARK_CULLED) {
            n++;
            cg_map_put(&names, p->m.statics[e].name, (void *)1);
        }
    for (size_t i = 0; i < p->m.nfragments; i++) {
        json_t *ws = json_object_get(cg_doc_root(p->m.fragments[i].doc), "workflows");
        const char *wname;
        json_t *w;
        json_object_foreach(ws, wname, w) {
            json_t *list = json_object_get(w, "jobs");
            for (size_t k = 0; k < json_array_size(list); k++) {
                json_t *e = json_array_get(list, k);
                const char *name = json_is_string(e) ? json_string_value(e) : NULL;
                if (json_is_object(e) && json_object_size(e) == 1) {
                    json_t *nm = json_object_get(json_object_iter_value(json_object_iter(e)), "name");
                    name = json_is_string(nm) ? json_string_value(nm) : json_object_iter_key(json_object_iter(e));
                }
                n++;
                if (name)
                    cg_map_put(&names, name, (void *)1);
            }
        }
    }
    *jobs = names.len;
    cg_map_release(&names);
    return n;
}

void cg_summary_generate(const cg_project *p, const char *what, cg_strbuf *out)
{
    size_t njobs, nentries = count_entries(p, &njobs), nw = count_workflows(p);
    cg_strbuf_addf(out, "cigen: %s: %zu job%s", p->m.manifest.output, njobs, njobs == 1 ? "" : "s");
    if (nentries != njobs) /* a job in two workflows is two entries */
        cg_strbuf_addf(out, " (%zu workflow entries)", nentries);
    cg_strbuf_addf(out, " in %zu workflow%s, %zu bytes; %s\n", nw, nw == 1 ? "" : "s", p->out.config.len, what);
}
