/* infer_write — a tree's file and the templates of its phases (see
 * infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

static void yw_strlist_begin(cg_yw *w, const char *key)
{
    cg_yw_keys(w, key);
    cg_yw_seq_begin(w);
}

/* A dimension the template cannot use as it is (a typed value, or "" where
 * the dimension is absent) is passed through a variable of its own. */
bool cg_infer_shadowed(const col *cl)
{
    return cl->dim && (cl->typed || cl->empty);
}

const char *cg_infer_tname(ctx *C, const col *cl)
{
    if (cg_infer_shadowed(cl) && !cl->tname) {
        cg_strbuf b = CG_STRBUF_INIT;
        cg_strbuf_addf(&b, "%s_value", cl->name);
        ((col *)cl)->tname = cg_infer_pstr(C, b.buf);
        cg_strbuf_release(&b);
    }
    return cl->tname ? cl->tname : cl->name;
}

/* A variable's value in cell k (the column's own, or the typed shadow of a
 * dimension). */
static void write_var_value(cg_yw *w, const col *cl, size_t k)
{
    cg_yw_scalar(w, cl->v[k], strlen(cl->v[k]), cl->plain[k]);
}

static void write_cell_vars(ctx *C, cg_yw *w, const tplan *T, size_t k)
{
    bool any = false;
    for (size_t c = 0; c < T->ncols; c++) {
        const col *cl = &T->cols[c];
        if (!cl->v[k] || (cl->dim && !cg_infer_shadowed(cl)) || (T->gated && cg_streq(cl->key, "on_request")))
            continue;
        if (!any) {
            cg_yw_keys(w, "vars");
            cg_yw_map_begin(w);
            any = true;
        }
        cg_yw_keys(w, cg_infer_tname(C, cl));
        write_var_value(w, cl, k);
    }
    if (any)
        cg_yw_end(w);
}

static void write_pattern_value(cg_yw *w, const char *v)
{
    if (v)
        cg_yw_strs(w, v);
    else
        cg_yw_raw(w, "~", 1);
}

static void write_cells(cg_yw *w, const tplan *T, const size_t *dims, size_t nd, const unsigned char *in,
                        unsigned char want)
{
    cg_yw_map_begin(w);
    cg_yw_keys(w, "cells");
    cg_yw_seq_begin(w);
    for (size_t c = 0; c < T->ncells; c++) {
        if (in[c] != want)
            continue;
        cg_yw_map_begin(w);
        for (size_t i = 0; i < nd; i++) {
            const char *pv = T->cols[dims[i]].v[c];
            cg_yw_keys(w, T->cols[dims[i]].name);
            write_pattern_value(w, pv && *pv ? pv : NULL);
        }
        cg_yw_end(w);
    }
    cg_yw_end(w);
    cg_yw_end(w);
}

/* The tiers of the workflows the tree lands in that take tiers: its cells
 * there, those run on request apart. */
static void write_tiers(ctx *C, cg_yw *w, const wplan *W, const tplan *T, const size_t *dims, size_t nd)
{
    (void)C;
    size_t n = T->nwfs ? T->nwfs : 1;
    bool any = false;
    for (size_t x = 0; x < n; x++) {
        const wplan *X = T->nwfs ? T->wfs[x] : W;
        if (!X->tiered)
            continue;
        if (!any) {
            cg_yw_keys(w, "tiers");
            cg_yw_map_begin(w);
            any = true;
        }
        size_t nin = 0, ngate = 0;
        for (size_t c = 0; c < T->ncells; c++) {
            unsigned char v = T->nwfs ? T->cell_in[x * T->ncells + c] : 1;
            nin += v == 1;
            ngate += v == 2;
        }
        cg_yw_keys(w, X->tier);
        if (nin == T->ncells)
            cg_yw_strs(w, "all");
        else if (!nin)
            cg_yw_strs(w, "none");
        else
            write_cells(w, T, dims, nd, T->cell_in + x * T->ncells, 1);
        if (X->gated) {
            cg_strbuf b = CG_STRBUF_INIT;
            cg_strbuf_addf(&b, "%s_on_request", X->tier);
            cg_yw_keys(w, b.buf);
            cg_strbuf_release(&b);
            if (!ngate)
                cg_yw_strs(w, "none");
            else if (ngate == T->ncells)
                cg_yw_strs(w, "all");
            else
                write_cells(w, T, dims, nd, T->cell_in + x * T->ncells, 2);
        }
    }
    if (any)
        cg_yw_end(w);
}

void cg_infer_emit_tree(ctx *C, const wplan *W, tplan *T)
{
    cg_infer *r = C->r;
    const fam *root = &W->f[T->root];
    cg_strbuf rel = CG_STRBUF_INIT;
    cg_strbuf_addf(&rel, "dimensions/%s.yml", T->name);
    /* the tree's file comes before its templates; its text is written
     * apart, as adding the templates moves the files */
    cg_infer_add_file(r, rel.buf);
    size_t fidx = r->nfiles - 1;
    cg_strbuf text = CG_STRBUF_INIT;
    cg_strbuf *o = &text;
    cg_strbuf_addf(o, "# The entries of workflow '");
    cg_strbuf_add_comment_text(o, W->name);
    cg_strbuf_addf(o, "' that run '");
    cg_strbuf_add_comment_text(o, root->kind);
    cg_strbuf_addf(o, "' (%zu cells) and what requires them, one\n# phase per job; imported from ", T->ncells);
    cg_strbuf_add_comment_text(o, C->source);
    cg_strbuf_adds(o, " by `cigen import`.\n");
    cg_yw w;
    cg_yw_init(&w, o);
    cg_yw_map_begin(&w);
    size_t nd = 0;
    size_t *dims = cg_xcalloc(T->ncols + 1, sizeof *dims);
    if (T->product || T->nested) {
        memcpy(dims, T->dimorder, T->ndimorder * sizeof *dims);
        nd = T->ndimorder;
    } else {
        for (size_t c = 0; c < T->ncols; c++)
            if (T->cols[c].dim)
                dims[nd++] = c;
    }
    yw_strlist_begin(&w, "dimensions");
    for (size_t i = 0; i < nd; i++)
        cg_yw_strs(&w, T->cols[dims[i]].name);
    cg_yw_end(&w);
    cg_yw_keys(&w, "job_name");
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "pattern");
    cg_yw_strs(&w, T->pattern[0].buf);
    if (cg_infer_replaces[T->replace].n) {
        cg_yw_keys(&w, "replace");
        cg_yw_map_begin(&w);
        for (size_t i = 0; i < cg_infer_replaces[T->replace].n; i++) {
            cg_yw_keys(&w, cg_infer_replaces[T->replace].from[i]);
            cg_yw_strs(&w, cg_infer_replaces[T->replace].to[i]);
        }
        cg_yw_end(&w);
    }
    cg_yw_end(&w);
    if (T->nwfs <= 1) {
        yw_strlist_begin(&w, "workflows");
        cg_yw_strs(&w, W->name);
        cg_yw_end(&w);
    }
    write_tiers(C, &w, W, T, dims, nd);
    if (T->product) {
        cg_infer_write_shape(C, &w, T);
    } else if (T->nested) {
        cg_infer_write_nested(C, &w, T);
    } else {
        cg_yw_keys(&w, "tree");
        cg_yw_seq_begin(&w);
        for (size_t k = 0; k < T->ncells; k++) {
            cg_yw_map_begin(&w);
            for (size_t i = 0; i < nd; i++) {
                const col *cl = &T->cols[dims[i]];
                if (!cl->v[k] || !*cl->v[k])
                    continue;
                cg_yw_keys(&w, cl->name);
                cg_yw_strs(&w, cl->v[k]);
            }
            write_cell_vars(C, &w, T, k);
            cg_yw_end(&w);
        }
        cg_yw_end(&w);
    }
    cg_yw_keys(&w, "phases");
    cg_yw_map_begin(&w);
    for (size_t a = 0; a < T->nfams; a++) {
        const fam *f = &W->f[T->fams[a]];
        cg_yw_keys(&w, f->phase);
        cg_yw_map_begin(&w);
        cg_yw_keys(&w, "job_name");
        cg_yw_strs(&w, T->pattern[a].buf);
        cg_strbuf tp = CG_STRBUF_INIT;
        cg_strbuf_addf(&tp, "templates/%s_%s.yml", T->name, f->phase);
        cg_yw_keys(&w, "template");
        cg_yw_strs(&w, tp.buf);
        if (T->nwfs > 1) {
            yw_strlist_begin(&w, "workflows");
            for (size_t x = 0; x < T->nwfs; x++)
                if (T->phase_in[x * T->nfams + a])
                    cg_yw_strs(&w, T->wfs[x]->name);
            cg_yw_end(&w);
        }
        if (json_array_size(f->rtok)) {
            yw_strlist_begin(&w, "requires");
            for (size_t q = 0; q < json_array_size(f->rtok); q++) {
                const char *t = json_string_value(json_array_get(f->rtok, q));
                cg_yw_strs(&w, t[0] == '\x01' ? W->f[atoi(t + 1)].phase : t);
            }
            cg_yw_end(&w);
        }
        size_t have = 0;
        for (size_t c = 0; c < T->ncells; c++)
            have += T->fc[a * T->ncells + c] >= 0;
        if (have < T->ncells) {
            /* the cells that run it, by their dimensions */
            bool skip = T->ncells - have < have;
            cg_yw_keys(&w, skip ? "skip" : "only");
            cg_yw_seq_begin(&w);
            for (size_t c = 0; c < T->ncells; c++) {
                if ((T->fc[a * T->ncells + c] >= 0) == skip)
                    continue;
                cg_yw_map_begin(&w);
                for (size_t i = 0; i < nd; i++) {
                    cg_yw_keys(&w, T->cols[dims[i]].name);
                    const char *pv = T->cols[dims[i]].v[c];
                    write_pattern_value(&w, pv && *pv ? pv : NULL);
                }
                cg_yw_end(&w);
            }
            cg_yw_end(&w);
        }
        cg_yw_end(&w);
        /* its template */
        cg_infer_file *tf = cg_infer_add_file(r, tp.buf);
        r->ntemplates++;
        cg_strbuf *to = &tf->text;
        cg_strbuf_adds(to, "# Phase '");
        cg_strbuf_add_comment_text(to, f->phase);
        cg_strbuf_adds(to, "' of dimensions/");
        cg_strbuf_add_comment_text(to, T->name);
        cg_strbuf_adds(to, ".yml: what every entry passes, and {{ placeholders }} for\n"
                           "# what varies (a key ending in '?' where some cells pass nothing).\n");
        cg_yw tw;
        cg_yw_init(&tw, to);
        cg_yw_map_begin(&tw);
        cg_yw_keys(&tw, f->kind);
        cg_yw_map_begin(&tw);
        if (!W->e[f->mem[0]].named) {
            /* named like the job it runs */
            cg_yw_keys(&tw, "name");
            cg_yw_raw(&tw, "~", 1);
        }
        cg_map seen;
        cg_map_init(&seen);
        cg_strbuf kp = CG_STRBUF_INIT;
        for (size_t m = 0; m < f->n; m++) {
            const ent *e = &W->e[f->mem[m]];
            const char *k;
            json_t *v;
            json_object_foreach(e->args, k, v) {
                if (cg_streq(k, "name") || cg_streq(k, "requires") || cg_map_has(&seen, k))
                    continue;
                cg_map_put(&seen, k, (void *)1);
                if (T->gated && cg_streq(k, "on_request")) {
                    /* true for the cells the workflow runs on request */
                    cg_yw_keys(&tw, k);
                    cg_yw_strs(&tw, "{{ on_request }}");
                    continue;
                }
                const col *cl = json_is_string(v) ? cg_infer_column_of(T, a, k) : NULL;
                if (!cl) {
                    cg_yw_keys(&tw, k);
                    cg_path_join_key(&kp, e->apath, k);
                    cg_yw_value(&tw, C->doc, kp.buf, v);
                    continue;
                }
                bool optional = false;
                for (size_t q = 0; q < f->n && !optional; q++)
                    optional = !json_object_get(W->e[f->mem[q]].args, k);
                cg_strbuf key = CG_STRBUF_INIT, val = CG_STRBUF_INIT;
                cg_strbuf_adds(&key, k);
                if (optional)
                    cg_strbuf_addc(&key, '?');
                cg_strbuf_addf(&val, "{{ %s }}", cg_infer_tname(C, cl));
                cg_yw_keys(&tw, key.buf);
                cg_yw_strs(&tw, val.buf);
                cg_strbuf_release(&key);
                cg_strbuf_release(&val);
            }
        }
        cg_strbuf_release(&kp);
        cg_map_release(&seen);
        cg_yw_end(&tw);
        cg_yw_end(&tw);
        cg_yw_release(&tw);
        cg_strbuf_release(&tp);
    }
    for (size_t i = 0; i < T->nfins; i++)
        cg_infer_write_fanin(C, &w, W, T, &T->fins[i]);
    cg_yw_end(&w);
    cg_yw_end(&w);
    cg_yw_release(&w);
    cg_strbuf_add(&r->files[fidx].text, text.buf ? text.buf : "", text.len);
    cg_strbuf_release(&text);
    free(dims);
    cg_strbuf_release(&rel);
}
