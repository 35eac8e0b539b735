/* infer_shape — the shape of a tree's cells: a product of its dimensions'
 * values, some of them zipped (advancing together), maybe minus a few
 * cells (`exclude`); and the tree's nodes written for it (see
 * infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

/* Do the values of dimension columns a and b determine each other (over
 * every cell)?  A dimension of one value is a factor of its own. */
static bool bijective(const tplan *T, size_t a, size_t b)
{
    bool varies = false;
    for (size_t k = 1; k < T->ncells && !varies; k++)
        varies = !cg_streq(T->cols[a].v[k], T->cols[a].v[0]);
    if (!varies)
        return false;
    for (size_t k = 0; k < T->ncells; k++)
        for (size_t q = 0; q < k; q++) {
            bool sa = cg_streq(T->cols[a].v[k], T->cols[a].v[q]);
            bool sb = cg_streq(T->cols[b].v[k], T->cols[b].v[q]);
            if (sa != sb)
                return false;
        }
    return true;
}

/* The row of cell k in class i: the index of its value among the class's
 * distinct values (in order of appearance), recorded when new. */
static size_t row_of(tplan *T, size_t i, size_t k)
{
    const col *cl = &T->cols[T->dimorder[T->cls_start[i]]];
    for (size_t j = 0; j < T->nrows[i]; j++)
        if (cg_streq(cl->v[T->rows[i][j]], cl->v[k]))
            return j;
    T->rows[i][T->nrows[i]] = k;
    return T->nrows[i]++;
}

static void shape_release(tplan *T)
{
    for (size_t i = 0; i < T->nclasses; i++)
        free(T->rows[i]);
    free(T->rows);
    free(T->nrows);
    free(T->cls_start);
    free(T->present);
    T->rows = NULL;
    T->nrows = NULL;
    T->cls_start = NULL;
    T->present = NULL;
    T->nclasses = 0;
    T->nprod = 0;
}

/* Does pattern pat (a row per class, or -1: any) match product cell p? */
static bool pat_matches(const tplan *T, const long *pat, size_t p)
{
    for (size_t i = T->nclasses; i-- > 0;) {
        size_t j = p % T->nrows[i];
        p /= T->nrows[i];
        if (pat[i] >= 0 && (size_t)pat[i] != j)
            return false;
    }
    return true;
}

/* The exclude patterns: each missing cell, widened (a class dropped, last
 * first) while every cell it matches is missing.  False when there are too
 * many to be worth it. */
static bool plan_excludes(tplan *T)
{
    size_t missing = T->nprod - T->ncells;
    if (!missing)
        return true;
    bool *covered = cg_xcalloc(T->nprod + 1, sizeof *covered);
    T->excl = cg_xcalloc(missing * T->nclasses + 1, sizeof *T->excl);
    T->nexcl = 0;
    long *pat = cg_xcalloc(T->nclasses + 1, sizeof *pat);
    bool ok = true;
    for (size_t m = 0; m < T->nprod && ok; m++) {
        if (T->present[m] || covered[m])
            continue;
        size_t p = m;
        for (size_t i = T->nclasses; i-- > 0;) {
            pat[i] = (long)(p % T->nrows[i]);
            p /= T->nrows[i];
        }
        for (size_t i = T->nclasses; i-- > 0;) {
            long keep = pat[i];
            pat[i] = -1;
            bool all_missing = true;
            size_t nmatch = 0;
            for (size_t q = 0; q < T->nprod && all_missing; q++)
                if (pat_matches(T, pat, q)) {
                    all_missing = !T->present[q];
                    nmatch++;
                }
            /* a pattern naming no dimension at all would remove every cell */
            bool named = false;
            for (size_t x = 0; x < T->nclasses; x++)
                named = named || pat[x] >= 0;
            if (!all_missing || !named)
                pat[i] = keep;
        }
        for (size_t q = 0; q < T->nprod; q++)
            if (pat_matches(T, pat, q))
                covered[q] = true;
        memcpy(T->excl + T->nexcl * T->nclasses, pat, T->nclasses * sizeof *pat);
        T->nexcl++;
        /* fewer patterns than a third of the cells: shorter than a node
         * per cell (three cells or fewer read best as a list) */
        ok = T->nexcl * 3 < T->ncells;
    }
    free(pat);
    free(covered);
    if (!ok) {
        free(T->excl);
        T->excl = NULL;
        T->nexcl = 0;
    }
    return ok;
}

/* Cells as a product: every cell has every dimension, and the cells are the
 * values of the dimensions' classes multiplied in some order (a class: the
 * dimensions whose values determine each other, zipped when more than one),
 * all of them or, with `shapes`, minus a few (`exclude`).  The variables
 * must then each follow one dimension's value (overrides, or a column of
 * the dimension's zip). */
void cg_infer_detect_shape(tplan *T, bool shapes)
{
    size_t nd = 0;
    size_t *dims = cg_xcalloc(T->ncols + 1, sizeof *dims);
    for (size_t c = 0; c < T->ncols; c++)
        if (T->cols[c].dim)
            dims[nd++] = c;
    if (nd == 0) {
        free(dims);
        return;
    }
    for (size_t i = 0; i < nd; i++)
        for (size_t k = 0; k < T->ncells; k++)
            if (!T->cols[dims[i]].v[k] || !*T->cols[dims[i]].v[k] || !cg_infer_glob_safe(T->cols[dims[i]].v[k])) {
                free(dims);
                return;
            }
    /* classes: the first dimension of each (dimensions in a class have the
     * same values' changes, cell to cell) */
    size_t *cls = cg_xcalloc(nd + 1, sizeof *cls);
    for (size_t i = 0; i < nd; i++) {
        cls[i] = i;
        for (size_t j = 0; j < i && cls[i] == i; j++)
            if (cls[j] == j && bijective(T, dims[i], dims[j]))
                cls[i] = j;
    }
    /* the slowest class first: the one whose value changes least often */
    size_t *changes = cg_xcalloc(nd + 1, sizeof *changes);
    for (size_t i = 0; i < nd; i++)
        for (size_t k = 1; k < T->ncells; k++)
            changes[i] += !cg_streq(T->cols[dims[i]].v[k], T->cols[dims[i]].v[k - 1]);
    for (size_t a = 1; a < nd; a++)
        for (size_t b = a; b > 0; b--) {
            bool before = changes[b] < changes[b - 1] || (changes[b] == changes[b - 1] && cls[b] < cls[b - 1]);
            if (!before)
                break;
            size_t t = changes[b];
            changes[b] = changes[b - 1];
            changes[b - 1] = t;
            t = dims[b];
            dims[b] = dims[b - 1];
            dims[b - 1] = t;
            t = cls[b];
            cls[b] = cls[b - 1];
            cls[b - 1] = t;
        }
    free(changes);
    T->dimorder = dims;
    T->ndimorder = nd;
    T->cls_start = cg_xcalloc(nd + 1, sizeof *T->cls_start);
    bool ok = true;
    for (size_t i = 0; i < nd; i++) {
        if (i == 0 || cls[i] != cls[i - 1]) {
            /* a class comes in one run */
            for (size_t j = 0; j + 1 < i && ok; j++)
                ok = cls[j] != cls[i];
            T->cls_start[T->nclasses++] = i;
        }
    }
    T->cls_start[T->nclasses] = nd;
    free(cls);
    if (!shapes)
        ok = ok && T->nclasses == nd;
    /* the rows of each class, in order of appearance; cell k must be the
     * k-th present combination */
    T->rows = cg_xcalloc(T->nclasses + 1, sizeof *T->rows);
    T->nrows = cg_xcalloc(T->nclasses + 1, sizeof *T->nrows);
    size_t total = 1;
    for (size_t i = 0; i < T->nclasses && ok; i++) {
        T->rows[i] = cg_xcalloc(T->ncells + 1, sizeof **T->rows);
        for (size_t k = 0; k < T->ncells; k++)
            row_of(T, i, k);
        total *= T->nrows[i];
        ok = total <= 2 * T->ncells && total <= 100000;
    }
    if (ok) {
        T->nprod = total;
        T->present = cg_xcalloc(total + 1, sizeof *T->present);
        long prev = -1;
        for (size_t k = 0; k < T->ncells && ok; k++) {
            size_t p = 0;
            for (size_t i = 0; i < T->nclasses; i++)
                p = p * T->nrows[i] + row_of(T, i, k);
            ok = (long)p > prev;
            prev = (long)p;
            T->present[p] = true;
        }
        ok = ok && (total == T->ncells || (shapes && plan_excludes(T)));
    }
    /* each variable: set everywhere, and a function of one dimension */
    for (size_t c = 0; c < T->ncols && ok; c++) {
        col *cl = &T->cols[c];
        if (cl->dim)
            continue;
        bool follows_one = false;
        for (size_t i = 0; i < nd && !follows_one; i++) {
            bool fn = true;
            for (size_t k = 0; k < T->ncells && fn; k++)
                for (size_t q = 0; q < k && fn; q++)
                    if (cg_streq(T->cols[dims[i]].v[k], T->cols[dims[i]].v[q]))
                        fn = cg_infer_same_value(cl->v[k], cl->plain[k], cl->v[q], cl->plain[q]);
            if (fn) {
                follows_one = true;
                cl->follows = dims[i];
            }
        }
        /* a variable some cells lack cannot be an override of a value */
        for (size_t k = 0; k < T->ncells && follows_one; k++)
            if (!cl->v[k])
                follows_one = false;
        ok = follows_one;
    }
    if (ok) {
        T->product = true;
    } else {
        free(T->excl);
        T->excl = NULL;
        T->nexcl = 0;
        shape_release(T);
        free(T->dimorder);
        T->dimorder = NULL;
        T->ndimorder = 0;
    }
}

/* The class of dimension column c (its position in dimorder's classes). */
static size_t class_of(const tplan *T, size_t c)
{
    for (size_t i = 0; i < T->nclasses; i++)
        for (size_t x = T->cls_start[i]; x < T->cls_start[i + 1]; x++)
            if (T->dimorder[x] == c)
                return i;
    return SIZE_MAX;
}

static bool zipped(const tplan *T, size_t i)
{
    return T->cls_start[i + 1] - T->cls_start[i] > 1;
}

/* A variable (or a dimension's typed shadow) written in a zip: it follows
 * a zipped dimension. */
static bool in_zip(const tplan *T, const col *cl)
{
    size_t by = cl->dim ? (size_t)(cl - T->cols) : cl->follows;
    return zipped(T, class_of(T, by));
}

bool cg_infer_is_var(const tplan *T, const col *cl)
{
    return (!cl->dim || cg_infer_shadowed(cl)) && !(T->gated && cg_streq(cl->key, "on_request"));
}

/* Text, for the summary: "a product", "a product of a zip (python, cuda)
 * and 2 more dimensions, minus 1 pattern". */
void cg_infer_shape_text(const tplan *T, cg_strbuf *s)
{
    cg_strbuf_adds(s, "a product");
    size_t nzip = 0;
    for (size_t i = 0; i < T->nclasses; i++)
        if (zipped(T, i)) {
            cg_strbuf_adds(s, nzip++ ? ", zip (" : " with zip (");
            for (size_t x = T->cls_start[i]; x < T->cls_start[i + 1]; x++)
                cg_strbuf_addf(s, "%s%s", x > T->cls_start[i] ? ", " : "", T->cols[T->dimorder[x]].name);
            cg_strbuf_addc(s, ')');
        }
    for (size_t x = 0; T->listof && x < T->ndimorder; x++)
        if (T->listof[x])
            cg_strbuf_addf(s, ", %s from shared list %s", T->cols[T->dimorder[x]].name, T->listof[x]);
    if (T->nexcl)
        cg_strbuf_addf(s, ", %zu cell%s excluded by %zu pattern%s", T->nprod - T->ncells,
                       T->nprod - T->ncells == 1 ? "" : "s", T->nexcl, T->nexcl == 1 ? "" : "s");
}

/* The values of the dimension at x in dimorder (of class i): its shared
 * list, or the list. */
static void write_values(cg_yw *w, const tplan *T, size_t i, size_t x)
{
    const col *cl = &T->cols[T->dimorder[x]];
    cg_yw_keys(w, cl->name);
    if (T->listof && T->listof[x]) {
        cg_strbuf b = CG_STRBUF_INIT;
        cg_strbuf_adds(&b, "{list: ");
        cg_yaml_scalar_text(&b, T->listof[x], strlen(T->listof[x]));
        cg_strbuf_addc(&b, '}');
        cg_yw_raw(w, b.buf, b.len);
        cg_strbuf_release(&b);
        return;
    }
    cg_yw_seq_begin(w);
    for (size_t j = 0; j < T->nrows[i]; j++)
        cg_yw_strs(w, cl->v[T->rows[i][j]]);
    cg_yw_end(w);
}

/* The tree's node (nested, one per zip after the first), its `exclude`
 * and its `overrides`. */
void cg_infer_write_shape(ctx *C, cg_yw *w, const tplan *T)
{
    cg_yw_keys(w, "tree");
    cg_yw_seq_begin(w);
    cg_yw_map_begin(w);
    size_t open = 1;
    bool has_zip = false;
    for (size_t i = 0; i < T->nclasses; i++) {
        if (!zipped(T, i)) {
            write_values(w, T, i, T->cls_start[i]);
            continue;
        }
        if (has_zip) {
            /* one zip a node: the next in a child, which varies faster */
            cg_yw_keys(w, "children");
            cg_yw_seq_begin(w);
            cg_yw_map_begin(w);
            open++;
        }
        has_zip = true;
        cg_yw_keys(w, "zip");
        cg_yw_map_begin(w);
        for (size_t x = T->cls_start[i]; x < T->cls_start[i + 1]; x++) {
            write_values(w, T, i, x);
        }
        for (size_t c = 0; c < T->ncols; c++) {
            const col *cl = &T->cols[c];
            if (!cg_infer_is_var(T, cl) || !in_zip(T, cl) || class_of(T, cl->dim ? c : cl->follows) != i)
                continue;
            cg_yw_keys(w, cg_infer_tname(C, cl));
            cg_yw_seq_begin(w);
            for (size_t j = 0; j < T->nrows[i]; j++) {
                size_t k = T->rows[i][j];
                cg_yw_scalar(w, cl->v[k], strlen(cl->v[k]), cl->plain[k]);
            }
            cg_yw_end(w);
        }
        cg_yw_end(w);
    }
    for (size_t i = 0; i < open; i++) {
        cg_yw_end(w); /* the node */
        if (i + 1 < open)
            cg_yw_end(w); /* its children */
    }
    cg_yw_end(w);
    if (T->nexcl) {
        cg_yw_keys(w, "exclude");
        cg_yw_seq_begin(w);
        for (size_t x = 0; x < T->nexcl; x++) {
            const long *pat = T->excl + x * T->nclasses;
            cg_yw_map_begin(w);
            for (size_t i = 0; i < T->nclasses; i++) {
                if (pat[i] < 0)
                    continue;
                const col *cl = &T->cols[T->dimorder[T->cls_start[i]]];
                cg_yw_keys(w, cl->name);
                cg_yw_strs(w, cl->v[T->rows[i][pat[i]]]);
            }
            cg_yw_end(w);
        }
        cg_yw_end(w);
    }
    /* each other variable by the value of the dimension it follows */
    bool any = false;
    for (size_t c = 0; c < T->ncols; c++) {
        const col *cl = &T->cols[c];
        if (!cg_infer_is_var(T, cl) || in_zip(T, cl))
            continue;
        const col *by = cl->dim ? cl : &T->cols[cl->follows];
        for (size_t k = 0; k < T->ncells; k++) {
            bool seen = false;
            for (size_t q = 0; q < k && !seen; q++)
                seen = cg_streq(by->v[q], by->v[k]);
            if (seen)
                continue;
            if (!any) {
                cg_yw_keys(w, "overrides");
                cg_yw_seq_begin(w);
                any = true;
            }
            cg_yw_map_begin(w);
            cg_yw_keys(w, "when");
            cg_yw_map_begin(w);
            cg_yw_keys(w, by->name);
            cg_yw_strs(w, by->v[k]);
            cg_yw_end(w);
            cg_yw_keys(w, "vars");
            cg_yw_map_begin(w);
            cg_yw_keys(w, cg_infer_tname(C, cl));
            cg_yw_scalar(w, cl->v[k], strlen(cl->v[k]), cl->plain[k]);
            cg_yw_end(w);
            cg_yw_end(w);
        }
    }
    if (any)
        cg_yw_end(w);
}

void cg_infer_shape_free(tplan *T)
{
    free(T->runs);
    free(T->listof);
    free(T->excl);
    shape_release(T);
}

/* ---- shared value lists ---- */

/* Text naming a dimension's values: its name and its rows. */
static void list_key(const tplan *T, size_t i, size_t x, cg_strbuf *out)
{
    const col *cl = &T->cols[T->dimorder[x]];
    cg_strbuf_reset(out);
    cg_strbuf_adds(out, cl->name);
    for (size_t j = 0; j < T->nrows[i]; j++) {
        cg_strbuf_addc(out, '\n');
        cg_strbuf_adds(out, cl->v[T->rows[i][j]]);
    }
}

/* The dimensions several trees give the same values (the same name, the
 * same values in the same order, two or more) become shared lists: each
 * tree's `listof` names them, and the lists' file is returned as text
 * (empty when there is none). */
void cg_infer_shared_lists(ctx *C, cg_strbuf *file)
{
    cg_map count, named, taken, names;
    cg_map_init(&count);
    cg_map_init(&named);
    cg_map_init(&taken);
    cg_map_init(&names);
    cg_strbuf key = CG_STRBUF_INIT, tk = CG_STRBUF_INIT;
    cg_yw w;
    bool any = false;
    for (int pass = 0; pass < 2; pass++)
        for (size_t wi = 0; wi < C->nw; wi++)
            for (size_t t = 0; t < C->w[wi].nt; t++) {
                tplan *T = &C->w[wi].t[t];
                if (!T->ok || T->into || !T->product || !T->shapes)
                    continue;
                if (pass == 1)
                    T->listof = cg_xcalloc(T->ndimorder + 1, sizeof *T->listof);
                for (size_t i = 0; i < T->nclasses; i++) {
                    if (T->nrows[i] < 2)
                        continue;
                    for (size_t x = T->cls_start[i]; x < T->cls_start[i + 1]; x++) {
                        list_key(T, i, x, &key);
                        if (pass == 0) {
                            /* how many trees give it (once a tree) */
                            cg_strbuf_reset(&tk);
                            cg_strbuf_addf(&tk, "%zu %zu\n%s", wi, t, key.buf);
                            if (cg_map_has(&taken, tk.buf))
                                continue;
                            cg_map_put(&taken, cg_infer_pstr(C, tk.buf), (void *)1);
                            size_t n = (size_t)cg_map_get(&count, key.buf);
                            cg_map_put(&count, cg_infer_pstr(C, key.buf), (void *)(n + 1));
                            continue;
                        }
                        if ((size_t)cg_map_get(&count, key.buf) < 2)
                            continue;
                        char *name = cg_map_get(&named, key.buf);
                        if (!name) {
                            const col *cl = &T->cols[T->dimorder[x]];
                            name = cg_infer_unique_name(C, &names, cl->name);
                            cg_map_put(&named, cg_infer_pstr(C, key.buf), name);
                            if (!any) {
                                cg_strbuf_adds(file, "# The values several trees share (`{list: NAME}` where "
                                                     "they use them);\n# imported by `cigen import`.\n");
                                cg_yw_init(&w, file);
                                cg_yw_map_begin(&w);
                                any = true;
                            }
                            cg_yw_keys(&w, name);
                            cg_yw_seq_begin(&w);
                            for (size_t j = 0; j < T->nrows[i]; j++)
                                cg_yw_strs(&w, cl->v[T->rows[i][j]]);
                            cg_yw_end(&w);
                        }
                        T->listof[x] = name;
                    }
                }
            }
    if (any) {
        cg_yw_end(&w);
        cg_yw_release(&w);
    }
    cg_strbuf_release(&key);
    cg_strbuf_release(&tk);
    cg_map_release(&names);
    cg_map_release(&taken);
    cg_map_release(&named);
    cg_map_release(&count);
}
