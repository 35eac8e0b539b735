/* infer_columns — a tree's columns (the arguments that vary) and the
 * shape of its cells (see infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

static bool dim_value_ok(const char *s)
{
    if (!*s || strstr(s, "<<"))
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return false;
    return !cg_blank_name(s);
}

/* Two values of a column are the same when the same text, written the same
 * way (plain or not). */
bool cg_infer_same_value(const char *a, bool ap, const char *b, bool bp)
{
    if (!a || !b)
        return a == b;
    if (!cg_streq(a, b))
        return false;
    bool at = ap && cg_yaml_resolve(a, strlen(a)) != CG_T_STR;
    bool bt = bp && cg_yaml_resolve(b, strlen(b)) != CG_T_STR;
    return at == bt;
}

static const char *const reserved[] = {
    "job", "phase", "tree", "cell", "workflow", "on_request", "vars", "children", "zip", "exclude", "only",
    "extra", "tiers", "list", "overrides", "name", "requires", "template", "per", "skip", "when", "cells",
    "pairwise", "pin", "cost", "dimensions", "description", "job_name", "workflows", "phases", "filters",
    "context", "lists", "replace", "pattern",
};

/* Is name one of the tree language's keys or built-in names? */
bool cg_infer_reserved(const char *name)
{
    for (size_t i = 0; i < CG_ARRAY_LEN(reserved); i++)
        if (cg_streq(name, reserved[i]))
            return true;
    return false;
}

static char *column_name(ctx *C, cg_map *taken, const char *key)
{
    cg_strbuf b = CG_STRBUF_INIT;
    cg_infer_identifier(&b, key);
    if (cg_infer_reserved(b.buf))
        cg_strbuf_adds(&b, "_arg");
    char *s = cg_infer_unique_name(C, taken, b.buf);
    cg_strbuf_release(&b);
    return s;
}

/* Is the phase `f` (a group) constant in argument k: present in every
 * member, the same value written the same way? */
static bool constant_arg(const ctx *C, const wplan *W, const fam *f, const char *k)
{
    const ent *e0 = &W->e[f->mem[0]];
    json_t *v0 = json_object_get(e0->args, k);
    if (!v0)
        return false;
    if (!json_is_string(v0))
        return true; /* the signature holds it */
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, e0->apath, k);
    bool p0 = cg_doc_is_plain(C->doc, p.buf);
    bool same = true;
    for (size_t m = 1; m < f->n && same; m++) {
        const ent *e = &W->e[f->mem[m]];
        json_t *v = json_object_get(e->args, k);
        if (!json_is_string(v)) {
            same = false;
            break;
        }
        cg_path_join_key(&p, e->apath, k);
        same = cg_infer_same_value(json_string_value(v0), p0, json_string_value(v), cg_doc_is_plain(C->doc, p.buf));
    }
    cg_strbuf_release(&p);
    return same;
}

/* The columns of a tree: every scalar argument that varies.  A column
 * serves the phases that agree on it in every cell where they both run
 * (the same value, or both without the argument). */
void cg_infer_columns(ctx *C, const wplan *W, tplan *T)
{
    cg_map taken;
    cg_map_init(&taken);
    cg_strbuf p = CG_STRBUF_INIT;
    size_t cols_cap = 0;
    const char **v = cg_xcalloc(T->ncells + 1, sizeof *v);
    bool *pl = cg_xcalloc(T->ncells + 1, sizeof *pl);
    for (size_t fi = 0; fi < T->nfams; fi++) {
        const fam *f = &W->f[T->fams[fi]];
        cg_map seen;
        cg_map_init(&seen);
        for (size_t m = 0; m < f->n; m++) {
            const char *k;
            json_t *jv;
            json_object_foreach(W->e[f->mem[m]].args, k, jv) {
                if (!json_is_string(jv) || cg_streq(k, "name") || cg_streq(k, "requires") || cg_map_has(&seen, k))
                    continue;
                cg_map_put(&seen, k, (void *)1);
                if (constant_arg(C, W, f, k))
                    continue;
                memset(v, 0, T->ncells * sizeof *v);
                for (size_t q = 0; q < f->n; q++) {
                    const ent *eq = &W->e[f->mem[q]];
                    json_t *vq = json_object_get(eq->args, k);
                    if (!json_is_string(vq))
                        continue;
                    cg_path_join_key(&p, eq->apath, k);
                    v[eq->cell] = json_string_value(vq);
                    pl[eq->cell] = cg_doc_is_plain(C->doc, p.buf);
                }
                long found = -1;
                for (size_t c = 0; c < T->ncols && found < 0; c++) {
                    col *cl = &T->cols[c];
                    if (!cg_streq(cl->key, k))
                        continue;
                    bool agree = true;
                    for (size_t cell = 0; cell < T->ncells && agree; cell++) {
                        if (T->fc[fi * T->ncells + cell] < 0)
                            continue;
                        bool shared = false;
                        for (size_t h = 0; h < T->nfams && !shared; h++)
                            shared = cl->phases[h] && T->fc[h * T->ncells + cell] >= 0;
                        if (shared)
                            agree = cg_infer_same_value(cl->v[cell], cl->plain[cell], v[cell], pl[cell]);
                    }
                    if (agree)
                        found = (long)c;
                }
                if (found < 0) {
                    cg_grow(&T->cols, &cols_cap, T->ncols + 1, sizeof *T->cols);
                    col *c = &T->cols[T->ncols];
                    memset(c, 0, sizeof *c);
                    c->key = k;
                    c->name = column_name(C, &taken, k);
                    c->v = cg_xcalloc(T->ncells + 1, sizeof *c->v);
                    c->plain = cg_xcalloc(T->ncells + 1, sizeof *c->plain);
                    c->phases = cg_xcalloc(T->nfams + 1, sizeof *c->phases);
                    found = (long)T->ncols++;
                }
                col *c = &T->cols[found];
                c->phases[fi] = true;
                for (size_t cell = 0; cell < T->ncells; cell++)
                    if (v[cell]) {
                        c->v[cell] = v[cell];
                        c->plain[cell] = pl[cell];
                    }
            }
        }
        cg_map_release(&seen);
    }
    free(v);
    free(pl);
    for (size_t c = 0; c < T->ncols; c++) {
        col *cl = &T->cols[c];
        cl->dim_ok = true;
        for (size_t k = 0; k < T->ncells; k++) {
            if (!cl->v[k])
                continue;
            if (!*cl->v[k])
                cl->empty = true;
            else if (!dim_value_ok(cl->v[k]))
                cl->dim_ok = false;
            if (cl->plain[k] && cg_yaml_resolve(cl->v[k], strlen(cl->v[k])) != CG_T_STR)
                cl->typed = true;
        }
    }
    cg_strbuf_release(&p);
    cg_map_release(&taken);
}

/* The tree's column of argument k in phase fi, or NULL (a constant). */
const col *cg_infer_column_of(const tplan *T, size_t fi, const char *k)
{
    for (size_t c = 0; c < T->ncols; c++)
        if (T->cols[c].phases[fi] && cg_streq(T->cols[c].key, k))
            return &T->cols[c];
    return NULL;
}
