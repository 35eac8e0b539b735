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

/* Every workflow entry of the config: the generated ones (a job in two
 * workflows is two entries), the manifest's static ones and those of
 * workflows written verbatim in fragments. */
static size_t count_entries(const cg_project *p)
{
    size_t n = 0;
    for (size_t k = 0; k < p->m.jobs.n; k++)
        for (uint64_t w = p->m.jobs.v[k].workflows; w; w &= w - 1)
            n++;
    for (size_t e = 0; e < p->m.nstatics; e++) /* a selection may cull some, or copy them */
        n += p->m.statics[e].mark.kind != CG_MARK_CULLED;
    for (size_t i = 0; i < p->m.nfragments; i++) {
        json_t *ws = json_object_get(cg_doc_root(p->m.fragments[i].doc), "workflows");
        const char *name;
        json_t *w;
        json_object_foreach(ws, name, w) n += json_array_size(json_object_get(w, "jobs"));
    }
    return n;
}

void cg_summary_generate(const cg_project *p, const char *what, cg_strbuf *out)
{
    size_t njobs = count_entries(p), nw = count_workflows(p);
    cg_strbuf_addf(out, "cigen: %s: %zu job%s in %zu workflow%s, %zu bytes; %s\n", p->m.manifest.output, njobs,
                   njobs == 1 ? "" : "s", nw, nw == 1 ? "" : "s", p->out.config.len, what);
}
