/* infer_merge — one tree for the same jobs in several workflows (see
 * infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

/* The requires of phase a as names (phases by their names). */
static void requires_text(const wplan *W, const tplan *T, size_t a, cg_strbuf *out)
{
    const fam *f = &W->f[T->fams[a]];
    cg_strbuf_reset(out);
    for (size_t q = 0; q < json_array_size(f->rtok); q++) {
        const char *t = json_string_value(json_array_get(f->rtok, q));
        cg_strbuf_adds(out, t[0] == '\x01' ? W->f[atoi(t + 1)].phase : t);
        cg_strbuf_addc(out, '\n');
    }
}

/* An entry's arguments as data, without `requires`, `name` and (when
 * gated) `on_request`. */
static json_t *entry_data(const ctx *C, const ent *e, bool gated)
{
    json_t *d = e->args ? cg_doc_typed(C->doc, e->apath, e->args) : json_object();
    json_object_del(d, "requires");
    json_object_del(d, "name");
    if (gated)
        json_object_del(d, "on_request");
    return d;
}

/* The entry's on_request: 1 false, 2 true, 0 not a plain boolean. */
static int gate_of(const ctx *C, const ent *e)
{
    json_t *v = e->args ? json_object_get(e->args, "on_request") : NULL;
    if (!json_is_string(v))
        return 0;
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, e->apath, "on_request");
    bool plain = cg_doc_is_plain(C->doc, p.buf);
    cg_strbuf_release(&p);
    if (!plain || cg_yaml_resolve(json_string_value(v), json_string_length(v)) != CG_T_BOOL)
        return 0;
    const char *t = json_string_value(v);
    return strchr("tTyY", t[0]) || ((t[0] == 'o' || t[0] == 'O') && (t[1] == 'n' || t[1] == 'N')) ? 2 : 1;
}

static void merge_init(tplan *B, const wplan *WB)
{
    if (B->nwfs)
        return;
    B->nwfs = 1;
    B->wfs = cg_xcalloc(1, sizeof *B->wfs);
    B->wfs[0] = WB;
    B->from = cg_xcalloc(1, sizeof *B->from);
    B->from[0] = B;
    B->cell_in = cg_xcalloc(B->ncells, 1);
    memset(B->cell_in, 1, B->ncells);
    B->phase_in = cg_xcalloc(B->nfams, sizeof *B->phase_in);
    for (size_t a = 0; a < B->nfams; a++)
        B->phase_in[a] = true;
    B->phase_of = cg_xcalloc(B->nfams, sizeof *B->phase_of);
    for (size_t a = 0; a < B->nfams; a++)
        B->phase_of[a] = (int)a;
    B->cell_of = cg_xcalloc(B->ncells, sizeof *B->cell_of);
    for (size_t c = 0; c < B->ncells; c++)
        B->cell_of[c] = (int)c;
}

/* Merges O (workflow WO) into B (workflow WB) when O's jobs are jobs of B:
 * the same dimensions and names, each of O's cells a cell of B, each of its
 * phases one of B's, each entry the same (but for `on_request`, which may
 * then be the built-in: the workflow's tiers say which cells are gated). */
static bool try_merge(ctx *C, tplan *B, const wplan *WB, tplan *O, const wplan *WO)
{
    if (O->nfams > B->nfams || O->ncells > B->ncells || B->nwfs >= 63)
        return false;
    int *pof = cg_xcalloc(B->nfams + 1, sizeof *pof);
    int *cof = cg_xcalloc(B->ncells + 1, sizeof *cof);
    unsigned char *cin = cg_xcalloc(B->ncells + 1, 1);
    bool *pin = cg_xcalloc(B->nfams + 1, sizeof *pin);
    bool ok = true;
    cg_strbuf rb = CG_STRBUF_INIT, ro = CG_STRBUF_INIT;
    for (size_t b = 0; b < B->nfams; b++)
        pof[b] = -1;
    for (size_t c = 0; c < B->ncells; c++)
        cof[c] = -1;
    /* each of O's entries is an entry of B of the same name: its phase and
     * its cell are B's, one to one */
    for (size_t a = 0; a < O->nfams && ok; a++) {
        for (size_t co = 0; co < O->ncells && ok; co++) {
            long eo = O->fc[a * O->ncells + co];
            if (eo < 0)
                continue;
            long eb = -1;
            size_t b = 0, cb = 0;
            for (size_t x = 0; x < B->nfams && eb < 0; x++)
                for (size_t y = 0; y < B->ncells && eb < 0; y++) {
                    long e = B->fc[x * B->ncells + y];
                    if (e >= 0 && cg_streq(WB->e[e].name, WO->e[eo].name)) {
                        eb = e;
                        b = x;
                        cb = y;
                    }
                }
            if (eb < 0 || !cg_streq(WB->e[eb].kind, WO->e[eo].kind) || WB->e[eb].named != WO->e[eo].named) {
                ok = false;
                break;
            }
            if ((pof[b] >= 0 && pof[b] != (int)a) || (cof[cb] >= 0 && cof[cb] != (int)co)) {
                ok = false;
                break;
            }
            for (size_t x = 0; x < B->nfams && ok; x++)
                if (x != b && pof[x] == (int)a)
                    ok = false;
            for (size_t y = 0; y < B->ncells && ok; y++)
                if (y != cb && cof[y] == (int)co)
                    ok = false;
            pof[b] = (int)a;
            pin[b] = true;
            cof[cb] = (int)co;
        }
    }
    for (size_t b = 0; b < B->nfams && ok; b++) {
        if (pof[b] < 0)
            continue;
        requires_text(WB, B, b, &rb);
        requires_text(WO, O, (size_t)pof[b], &ro);
        ok = cg_streq(rb.buf ? rb.buf : "", ro.buf ? ro.buf : "");
    }
    /* the same jobs: for each of O's cells every phase O runs there is B's, and the reverse */
    bool gated = false;
    for (size_t cb = 0; cb < B->ncells && ok; cb++) {
        if (cof[cb] < 0)
            continue;
        size_t co = (size_t)cof[cb];
        for (size_t b = 0; b < B->nfams && ok; b++) {
            if (pof[b] < 0)
                continue;
            long eb = B->fc[b * B->ncells + cb], eo = O->fc[(size_t)pof[b] * O->ncells + co];
            if ((eb < 0) != (eo < 0)) {
                ok = false;
                break;
            }
            if (eb < 0)
                continue;
            json_t *db = entry_data(C, &WB->e[eb], false), *dob = entry_data(C, &WO->e[eo], false);
            if (!json_equal(db, dob)) {
                json_t *gb = entry_data(C, &WB->e[eb], true), *go = entry_data(C, &WO->e[eo], true);
                if (json_equal(gb, go) && gate_of(C, &WB->e[eb]) && gate_of(C, &WO->e[eo]))
                    gated = true;
                else
                    ok = false;
                json_decref(gb);
                json_decref(go);
            }
            json_decref(db);
            json_decref(dob);
        }
    }
    /* gated: every entry of every workflow of the tree passes a plain boolean,
     * the same for all phases of a cell */
    unsigned char *bgate = NULL;
    if (ok && (gated || B->gated)) {
        bgate = cg_xcalloc(B->ncells + 1, 1);
        for (size_t cb = 0; cb < B->ncells && ok; cb++) {
            int gb = -1, go = -1;
            for (size_t b = 0; b < B->nfams && ok; b++) {
                long eb = B->fc[b * B->ncells + cb];
                if (eb >= 0 && json_object_get(WB->e[eb].args, "on_request")) {
                    int g = gate_of(C, &WB->e[eb]);
                    ok = g && (gb < 0 || g == gb);
                    gb = g;
                }
                if (cof[cb] >= 0 && pof[b] >= 0) {
                    long eo = O->fc[(size_t)pof[b] * O->ncells + (size_t)cof[cb]];
                    if (eo >= 0 && json_object_get(WO->e[eo].args, "on_request")) {
                        int g = gate_of(C, &WO->e[eo]);
                        ok = ok && g && (go < 0 || g == go);
                        go = g;
                    }
                }
            }
            bgate[cb] = (unsigned char)(gb < 0 ? 1 : gb);
            cin[cb] = (unsigned char)(cof[cb] < 0 ? 0 : go < 0 ? 1 : go);
        }
    } else if (ok) {
        for (size_t cb = 0; cb < B->ncells; cb++)
            cin[cb] = cof[cb] < 0 ? 0 : 1;
    }
    /* the tiers name cells by their dimensions: values a pattern reads as they are */
    bool subset = false;
    for (size_t cb = 0; cb < B->ncells; cb++)
        subset = subset || cin[cb] != 1;
    if (ok && (subset || gated || B->gated))
        for (size_t d = 0; d < B->ncols && ok; d++)
            for (size_t k = 0; k < B->ncells && ok; k++)
                if (B->cols[d].dim && B->cols[d].v[k] && *B->cols[d].v[k] && !cg_infer_glob_safe(B->cols[d].v[k]))
                    ok = false;
    if (ok) {
        merge_init(B, WB);
        if (bgate && !B->gated)
            for (size_t cb = 0; cb < B->ncells; cb++)
                B->cell_in[cb] = bgate[cb];
        size_t w = B->nwfs++;
        B->wfs = cg_xrealloc(B->wfs, B->nwfs * sizeof *B->wfs);
        B->from = cg_xrealloc(B->from, B->nwfs * sizeof *B->from);
        B->cell_in = cg_xrealloc(B->cell_in, B->nwfs * B->ncells);
        B->phase_in = cg_xrealloc(B->phase_in, B->nwfs * B->nfams * sizeof *B->phase_in);
        B->phase_of = cg_xrealloc(B->phase_of, B->nwfs * B->nfams * sizeof *B->phase_of);
        B->cell_of = cg_xrealloc(B->cell_of, B->nwfs * B->ncells * sizeof *B->cell_of);
        B->wfs[w] = WO;
        B->from[w] = O;
        memcpy(B->cell_in + w * B->ncells, cin, B->ncells);
        memcpy(B->phase_in + w * B->nfams, pin, B->nfams * sizeof *pin);
        memcpy(B->phase_of + w * B->nfams, pof, B->nfams * sizeof *pof);
        memcpy(B->cell_of + w * B->ncells, cof, B->ncells * sizeof *cof);
        B->gated = B->gated || gated;
        O->into = B;
        O->ok = true;
        O->why = NULL;
        /* O's phases are placed by B's names */
        for (size_t b = 0; b < B->nfams; b++)
            if (pof[b] >= 0)
                ((wplan *)WO)->f[O->fams[pof[b]]].phase = WB->f[B->fams[b]].phase;
        /* the tree keeps the first name its jobs had */
        if (strcmp(O->name, B->name) < 0 && strlen(O->name) <= strlen(B->name)) {
            char *t = B->name;
            B->name = O->name;
            O->name = t;
        }
    }
    free(bgate);
    free(pof);
    free(cof);
    free(cin);
    free(pin);
    cg_strbuf_release(&rb);
    cg_strbuf_release(&ro);
    return ok;
}

/* Trees of different workflows that make the same jobs become one: the
 * tree with the most cells and phases takes the others. */
void cg_infer_merge_trees(ctx *C)
{
    for (size_t i = 0; i < C->nw; i++)
        for (size_t t = 0; t < C->w[i].nt; t++) {
            tplan *B = &C->w[i].t[t];
            if (!B->ok || B->into)
                continue;
            for (size_t j = 0; j < C->nw; j++) {
                if (j == i)
                    continue;
                for (size_t u = 0; u < C->w[j].nt; u++) {
                    tplan *O = &C->w[j].t[u];
                    if (!O->shaped || !O->enabled || O->into || O->nwfs > 1 || O == B)
                        continue;
                    bool bigger = B->ncells > O->ncells || (B->ncells == O->ncells && B->nfams > O->nfams) ||
                                  (B->ncells == O->ncells && B->nfams == O->nfams && i < j);
                    if (bigger)
                        try_merge(C, B, &C->w[i], O, &C->w[j]);
                }
            }
        }
}
