/* infer_manifest — a workflow of the manifest: its triggers, tiers, static
 * entries and the trees' jobs in place (see infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

/* ---- the workflows ---- */

/* Can the manifest say this workflow's own keys (all but its entries)? */
bool cg_infer_manifest_can_say(json_t *wv)
{
    if (!json_is_object(wv) || !json_is_array(json_object_get(wv, "jobs")))
        return false;
    const char *k;
    json_t *v;
    json_object_foreach(wv, k, v) {
        if (cg_streq(k, "jobs") || cg_streq(k, "when"))
            continue;
        if (!cg_streq(k, "triggers") || !json_is_array(v) || json_array_size(v) != 1)
            return false;
        json_t *t = json_array_get(v, 0);
        json_t *s = json_object_get(t, "schedule");
        if (!json_is_object(t) || json_object_size(t) != 1 || !json_is_object(s) ||
            !json_is_string(json_object_get(s, "cron")))
            return false;
        const char *sk;
        json_t *sv;
        json_object_foreach(s, sk, sv) {
            if (cg_streq(sk, "cron"))
                continue;
            if (!cg_streq(sk, "filters") || !json_is_object(sv) || json_object_size(sv) != 1 ||
                !json_object_get(sv, "branches"))
                return false;
        }
    }
    return true;
}

/* The lines of the value at path (its key's line first). */
void cg_infer_copy_lines(const cg_doc *doc, const char *path, cg_strbuf *out)
{
    cg_pos kp = cg_doc_key_where(doc, path);
    cg_node_pos np;
    if (!cg_doc_lookup(doc, path, &np) || !kp.line)
        return;
    size_t len;
    const char *text = cg_doc_text(doc, &len);
    uint32_t line = 1;
    size_t i = 0;
    while (i < len && line < kp.line)
        if (text[i++] == '\n')
            line++;
    size_t from = i;
    while (i < len && line <= np.end_line)
        if (text[i++] == '\n')
            line++;
    cg_strbuf_add(out, text + from, i - from);
    if (i == len && i > from && text[i - 1] != '\n')
        cg_strbuf_addc(out, '\n');
}

void cg_infer_write_workflow(ctx *C, cg_yw *w, const wplan *W)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_yw_keys(w, W->name);
    cg_yw_map_begin(w);
    json_t *when = json_object_get(W->v, "when");
    if (when) {
        cg_path_join_key(&p, W->path, "when");
        cg_yw_keys(w, "when");
        cg_yw_value(w, C->doc, p.buf, when);
    }
    json_t *trig = json_object_get(W->v, "triggers");
    if (trig) {
        json_t *s = json_object_get(json_array_get(trig, 0), "schedule");
        cg_yw_keys(w, "schedule");
        cg_yw_strs(w, json_string_value(json_object_get(s, "cron")));
        json_t *br = json_object_get(json_object_get(s, "filters"), "branches");
        if (br) {
            cg_path_join_key(&p, W->path, "triggers");
            cg_path_push_index(&p, 0);
            cg_path_push_key(&p, "schedule");
            cg_path_push_key(&p, "filters");
            cg_path_push_key(&p, "branches");
            cg_yw_keys(w, "branches");
            cg_yw_value(w, C->doc, p.buf, br);
        }
    }
    if (W->tiered) {
        cg_yw_keys(w, "tier");
        cg_yw_strs(w, W->tier);
        if (W->gated) {
            cg_strbuf b = CG_STRBUF_INIT;
            cg_strbuf_addf(&b, "%s_on_request", W->tier);
            cg_yw_keys(w, "on_request");
            cg_yw_strs(w, b.buf);
            cg_strbuf_release(&b);
        }
    }
    bool trees = false;
    for (size_t t = 0; t < W->nt; t++)
        trees = trees || W->t[t].ok;
    size_t nstatic = 0;
    for (size_t i = 0; i < W->ne; i++) {
        const ent *e = &W->e[i];
        nstatic += !cg_infer_in_tree(W, e);
    }
    if (trees) {
        /* the entries in place: static ones by name, a tree's cell by cell or phase by phase */
        cg_yw_keys(w, "order");
        cg_yw_seq_begin(w);
        bool *placed = cg_xcalloc(W->nt * (W->nf + 1) + 1, sizeof *placed);
        for (size_t i = 0; i < W->ne; i++) {
            const ent *e = &W->e[i];
            if (e->fanin >= 0) {
                /* with its tree's jobs, or in place when phase by phase */
                const tplan *T = &W->t[e->fanin];
                if (T->phase_major) {
                    const char *phase = NULL;
                    for (size_t x = 0; x < T->nfins; x++)
                        if (T->fins[x].e == i)
                            phase = T->fins[x].phase;
                    cg_yw_map_begin(w);
                    cg_yw_keys(w, "tree");
                    cg_yw_strs(w, T->name);
                    cg_yw_keys(w, "phase");
                    cg_yw_strs(w, phase);
                    cg_yw_end(w);
                }
                continue;
            }
            const fam *f = e->fam >= 0 ? &W->f[e->fam] : NULL;
            if (!f || f->tree < 0 || !W->t[f->tree].ok) {
                cg_yw_strs(w, e->name);
                continue;
            }
            const tplan *T = &W->t[f->tree];
            const tplan *Tn = T->into ? T->into : T;
            size_t slot = (size_t)f->tree * (W->nf + 1) + (T->phase_major ? (size_t)e->fam + 1 : 0);
            if (placed[slot])
                continue;
            placed[slot] = true;
            cg_yw_map_begin(w);
            cg_yw_keys(w, "tree");
            cg_yw_strs(w, Tn->name);
            if (T->phase_major) {
                cg_yw_keys(w, "phase");
                cg_yw_strs(w, f->phase);
            }
            cg_yw_end(w);
        }
        free(placed);
        cg_yw_end(w);
    }
    if (nstatic || !trees) {
        cg_yw_keys(w, "jobs");
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < W->ne; i++) {
            const ent *e = &W->e[i];
            if (cg_infer_in_tree(W, e))
                continue;
            cg_yw_value(w, C->doc, e->path, json_array_get(json_object_get(W->v, "jobs"), i));
            C->r->nstatic++;
        }
        cg_yw_end(w);
    }
    cg_yw_end(w);
    cg_strbuf_release(&p);
}
