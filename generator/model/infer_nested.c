/* infer_nested — cells that are no product as a node per value of one
 * dimension, each node a product of the dimensions its cells set (see
 * infer_impl.h). */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

/* Cells as nodes of one dimension's values: each value of the dimension
 * whose value changes least (set in every cell) is one run of cells, and
 * each run a product of the other dimensions it sets (a dimension a run
 * never sets is absent there: a dependent sub-tree).  Each variable is the
 * same in all of a run's cells (the node's `vars`) or absent in all. */
void cg_infer_detect_nested(tplan *T)
{
    size_t nd = 0;
    size_t *dims = cg_xcalloc(T->ncols + 1, sizeof *dims);
    for (size_t c = 0; c < T->ncols; c++)
        if (T->cols[c].dim)
            dims[nd++] = c;
    bool ok = nd >= 2;
    for (size_t i = 0; i < nd && ok; i++)
        for (size_t k = 0; k < T->ncells && ok; k++) {
            const char *v = T->cols[dims[i]].v[k];
            ok = !v || (*v && cg_infer_glob_safe(v));
        }
    /* the dimensions by their changes, those set in every cell first */
    size_t *changes = cg_xcalloc(nd + 1, sizeof *changes);
    bool *everywhere = cg_xcalloc(nd + 1, sizeof *everywhere);
    for (size_t i = 0; i < nd; i++) {
        everywhere[i] = true;
        for (size_t k = 0; k < T->ncells; k++) {
            everywhere[i] = everywhere[i] && T->cols[dims[i]].v[k];
            if (k > 0)
                changes[i] += !cg_streq(T->cols[dims[i]].v[k] ? T->cols[dims[i]].v[k] : "",
                                        T->cols[dims[i]].v[k - 1] ? T->cols[dims[i]].v[k - 1] : "");
        }
    }
    for (size_t a = 1; a < nd; a++)
        for (size_t b = a; b > 0; b--) {
            bool before = (everywhere[b] && !everywhere[b - 1]) ||
                          (everywhere[b] == everywhere[b - 1] && changes[b] < changes[b - 1]);
            if (!before)
                break;
            size_t t = changes[b];
            changes[b] = changes[b - 1];
            changes[b - 1] = t;
            bool e = everywhere[b];
            everywhere[b] = everywhere[b - 1];
            everywhere[b - 1] = e;
            t = dims[b];
            dims[b] = dims[b - 1];
            dims[b - 1] = t;
        }
    ok = ok && everywhere[0];
    free(changes);
    free(everywhere);
    /* the runs of the first dimension's values, each value one run */
    const col *d0 = ok ? &T->cols[dims[0]] : NULL;
    size_t *runs = cg_xcalloc(T->ncells + 2, sizeof *runs);
    size_t nruns = 0;
    for (size_t k = 0; k < T->ncells && ok; k++) {
        if (k > 0 && cg_streq(d0->v[k], d0->v[k - 1]))
            continue;
        for (size_t r = 0; r < nruns && ok; r++)
            ok = !cg_streq(d0->v[runs[r]], d0->v[k]);
        runs[nruns++] = k;
    }
    runs[nruns] = T->ncells;
    ok = ok && nruns >= 2 && nruns < T->ncells;
    /* each run a product of the dimensions it sets, in the order above */
    size_t *cnt = cg_xcalloc(nd + 1, sizeof *cnt);
    for (size_t r = 0; r < nruns && ok; r++) {
        size_t s = runs[r], e = runs[r + 1], total = 1;
        for (size_t i = 1; i < nd && ok; i++) {
            const col *cl = &T->cols[dims[i]];
            cnt[i] = 0;
            for (size_t k = s; k < e && ok; k++) {
                ok = (cl->v[k] != NULL) == (cl->v[s] != NULL);
                bool seen = !cl->v[k];
                for (size_t q = s; q < k && !seen; q++)
                    seen = cg_streq(cl->v[q], cl->v[k]);
                cnt[i] += !seen;
            }
            total *= cnt[i] ? cnt[i] : 1;
        }
        ok = ok && total == e - s;
        /* cell k is the (k - s)-th combination: the values in order of
         * appearance, the last dimension fastest */
        for (size_t k = s; k < e && ok; k++) {
            size_t rest = k - s;
            for (size_t i = nd; i-- > 1 && ok;) {
                const col *cl = &T->cols[dims[i]];
                if (!cl->v[s])
                    continue;
                size_t j = rest % cnt[i];
                rest /= cnt[i];
                /* the j-th distinct value of the run */
                size_t n = 0;
                const char *vj = NULL;
                for (size_t q = s; q < e && !vj; q++) {
                    bool seen = false;
                    for (size_t p = s; p < q && !seen; p++)
                        seen = cg_streq(cl->v[p], cl->v[q]);
                    if (!seen && n++ == j)
                        vj = cl->v[q];
                }
                ok = vj && cg_streq(vj, cl->v[k]);
            }
        }
    }
    free(cnt);
    /* the variables: the same in all of a run's cells, or absent in all */
    for (size_t c = 0; c < T->ncols && ok; c++) {
        const col *cl = &T->cols[c];
        if (!cg_infer_is_var(T, cl))
            continue;
        for (size_t r = 0; r < nruns && ok; r++)
            for (size_t k = runs[r] + 1; k < runs[r + 1] && ok; k++)
                ok = cg_infer_same_value(cl->v[k], cl->plain[k], cl->v[runs[r]], cl->plain[runs[r]]);
    }
    if (!ok) {
        free(runs);
        free(dims);
        return;
    }
    T->nested = true;
    T->runs = runs;
    T->nruns = nruns;
    T->dimorder = dims;
    T->ndimorder = nd;
}

/* A node per run: the first dimension's value, the others' values (a list
 * when more than one), the variables of the run. */
void cg_infer_write_nested(ctx *C, cg_yw *w, const tplan *T)
{
    cg_yw_keys(w, "tree");
    cg_yw_seq_begin(w);
    for (size_t r = 0; r < T->nruns; r++) {
        size_t s = T->runs[r], e = T->runs[r + 1];
        cg_yw_map_begin(w);
        for (size_t i = 0; i < T->ndimorder; i++) {
            const col *cl = &T->cols[T->dimorder[i]];
            if (!cl->v[s])
                continue;
            size_t n = 0;
            for (size_t k = s; k < e; k++) {
                bool seen = false;
                for (size_t q = s; q < k && !seen; q++)
                    seen = cg_streq(cl->v[q], cl->v[k]);
                n += !seen;
            }
            cg_yw_keys(w, cl->name);
            if (n == 1) {
                cg_yw_strs(w, cl->v[s]);
                continue;
            }
            cg_yw_seq_begin(w);
            for (size_t k = s; k < e; k++) {
                bool seen = false;
                for (size_t q = s; q < k && !seen; q++)
                    seen = cg_streq(cl->v[q], cl->v[k]);
                if (!seen)
                    cg_yw_strs(w, cl->v[k]);
            }
            cg_yw_end(w);
        }
        bool any = false;
        for (size_t c = 0; c < T->ncols; c++) {
            const col *cl = &T->cols[c];
            if (!cg_infer_is_var(T, cl) || !cl->v[s])
                continue;
            if (!any) {
                cg_yw_keys(w, "vars");
                cg_yw_map_begin(w);
                any = true;
            }
            cg_yw_keys(w, cg_infer_tname(C, cl));
            cg_yw_scalar(w, cl->v[s], strlen(cl->v[s]), cl->plain[s]);
        }
        if (any)
            cg_yw_end(w);
        cg_yw_end(w);
    }
    cg_yw_end(w);
}
