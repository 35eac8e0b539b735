/* infer_groups — a workflow's entries, their groups and phases, and the
 * plan of a candidate tree (see infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

/* Does any scalar (or key) under v hold text cigen would read as a
 * placeholder? */
static bool has_braces(json_t *v)
{
    if (json_is_string(v))
        return strstr(json_string_value(v), "{{") || strstr(json_string_value(v), "}}");
    const char *k;
    json_t *c;
    if (json_is_object(v)) {
        json_object_foreach(v, k, c) {
            if (strstr(k, "{{") || strstr(k, "}}") || has_braces(c))
                return true;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (has_braces(json_array_get(v, i)))
                return true;
    }
    return false;
}

/* ---- reading a workflow's entries ---- */

void cg_infer_read_entries(ctx *C, wplan *W)
{
    json_t *jobs = json_object_get(W->v, "jobs");
    W->ne = json_array_size(jobs);
    W->e = cg_xcalloc(W->ne + 1, sizeof *W->e);
    cg_map names;
    cg_map_init(&names);
    for (size_t i = 0; i < W->ne; i++) {
        ent *e = &W->e[i];
        json_t *it = json_array_get(jobs, i);
        cg_strbuf p = CG_STRBUF_INIT;
        cg_path_join_key(&p, W->path, "jobs");
        cg_path_push_index(&p, i);
        e->path = cg_infer_pstr(C, p.buf);
        e->fam = -1;
        e->cell = -1;
        e->fanin = -1;
        if (json_is_string(it)) {
            e->kind = e->name = json_string_value(it);
            /* a job named like the job it runs: a phase of one cell at most */
            e->eligible = !strstr(e->name, "{{") && !strstr(e->name, "<<");
        } else if (json_is_object(it) && json_object_size(it) == 1) {
            void *iter = json_object_iter(it);
            e->kind = json_object_iter_key(iter);
            json_t *a = json_object_iter_value(iter);
            cg_path_push_key(&p, e->kind);
            e->apath = cg_infer_pstr(C, p.buf);
            e->name = e->kind;
            if (json_is_object(a)) {
                e->args = a;
                json_t *nm = json_object_get(a, "name");
                if (json_is_string(nm)) {
                    e->name = json_string_value(nm);
                    e->named = true;
                }
                e->req = json_object_get(a, "requires");
                bool reqs_ok = !e->req || (json_is_array(e->req) && json_array_size(e->req));
                for (size_t r = 0; reqs_ok && r < json_array_size(e->req); r++)
                    reqs_ok = json_is_string(json_array_get(e->req, r));
                bool keys_ok = !nm || json_is_string(nm);
                const char *k;
                json_t *v;
                json_object_foreach(a, k, v) {
                    size_t kl = strlen(k);
                    if (!*k || k[kl - 1] == '?' || cg_streq(k, "matrix") || strstr(k, "{{"))
                        keys_ok = false;
                }
                e->eligible = reqs_ok && keys_ok && !has_braces(a) && !strstr(e->name, "<<") &&
                              !strstr(e->name, "{{");
            } else if (json_is_null(a) || (json_is_string(a) && !*json_string_value(a))) {
                e->eligible = false;
            }
        } else {
            e->kind = e->name = "";
        }
        if (cg_map_has(&names, e->name))
            e->eligible = false;
        cg_map_put(&names, e->name, e);
        cg_strbuf_release(&p);
    }
    cg_map_release(&names);
}

/* The signature of a group: the job, and every argument that is not a
 * scalar (scalars may vary). */
static char *signature(ctx *C, const ent *e)
{
    cg_strbuf s = CG_STRBUF_INIT;
    cg_strbuf_adds(&s, e->kind);
    cg_strbuf_addc(&s, '\n');
    cg_strbuf_adds(&s, e->req ? "R" : "-");
    if (!e->named) {
        cg_strbuf_adds(&s, "\nunnamed ");
        cg_strbuf_adds(&s, e->name);
    }
    const char *k;
    json_t *v;
    json_object_foreach(e->args, k, v) {
        if (json_is_string(v) || cg_streq(k, "requires") || cg_streq(k, "name"))
            continue;
        cg_strbuf p = CG_STRBUF_INIT;
        cg_path_join_key(&p, e->apath, k);
        json_t *t = cg_doc_typed(C->doc, p.buf, v);
        char *d = json_dumps(t, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
        cg_strbuf_addf(&s, "\n%s=%s", k, d ? d : "?");
        free(d);
        json_decref(t);
        cg_strbuf_release(&p);
    }
    char *r = cg_infer_pstr(C, s.buf);
    cg_strbuf_release(&s);
    return r;
}

void cg_infer_group(ctx *C, wplan *W)
{
    cg_map by_sig;
    cg_map_init(&by_sig);
    W->f = cg_xcalloc(W->ne + 1, sizeof *W->f);
    for (size_t i = 0; i < W->ne; i++) {
        ent *e = &W->e[i];
        if (!e->eligible)
            continue;
        char *sig = signature(C, e);
        /* one group per parent group: the group of its last grouped requirement */
        for (size_t r = json_array_size(e->req); r-- > 0;) {
            const char *rn = json_string_value(json_array_get(e->req, r));
            long x = -1;
            for (size_t q = 0; q < i && x < 0; q++)
                if (cg_streq(W->e[q].name, rn))
                    x = (long)q;
            if (x >= 0 && W->e[x].fam >= 0) {
                cg_strbuf b = CG_STRBUF_INIT;
                cg_strbuf_addf(&b, "%s\nparent %d", sig, W->e[x].fam);
                sig = cg_infer_pstr(C, b.buf);
                cg_strbuf_release(&b);
                break;
            }
        }
        void *got = cg_map_get(&by_sig, sig);
        size_t fi;
        if (!got) {
            fi = W->nf++;
            fam *f = &W->f[fi];
            f->kind = e->kind;
            f->sig = sig;
            f->parent = -1;
            f->tree = -1;
            cg_map_put(&by_sig, sig, (void *)(fi + 1));
        } else {
            fi = (size_t)got - 1;
        }
        fam *f = &W->f[fi];
        cg_grow(&f->mem, &f->cap, f->n + 1, sizeof *f->mem);
        f->mem[f->n++] = i;
        e->fam = (int)fi;
    }
    cg_map_release(&by_sig);
}

static long entry_named(const wplan *W, const char *name)
{
    for (size_t i = 0; i < W->ne; i++)
        if (cg_streq(W->e[i].name, name))
            return (long)i;
    return -1;
}

static bool is_ancestor(const wplan *W, int a, int f)
{
    for (int p = W->f[f].parent, guard = 0; p >= 0 && guard < 1000; p = W->f[p].parent, guard++)
        if (p == a)
            return true;
    return false;
}

/* Each group whose members each require one member of another group (one
 * to one) is a later phase of that group's cells. */
void cg_infer_link_phases(wplan *W)
{
    for (size_t fi = 0; fi < W->nf; fi++) {
        fam *f = &W->f[fi];
        if (f->n < 1)
            continue;
        /* the parent: the group of the last requirement of the first member
         * that is a grouped entry */
        const ent *e0 = &W->e[f->mem[0]];
        int parent = -1;
        for (size_t r = json_array_size(e0->req); r-- > 0 && parent < 0;) {
            long x = entry_named(W, json_string_value(json_array_get(e0->req, r)));
            if (x >= 0 && W->e[x].fam >= 0 && W->e[x].fam != (int)fi)
                parent = W->e[x].fam;
        }
        if (parent < 0 || is_ancestor(W, (int)fi, parent))
            continue;
        size_t *par = cg_xcalloc(f->n, sizeof *par);
        bool ok = true;
        for (size_t m = 0; m < f->n && ok; m++) {
            const ent *e = &W->e[f->mem[m]];
            int found = 0;
            for (size_t r = 0; r < json_array_size(e->req); r++) {
                long x = entry_named(W, json_string_value(json_array_get(e->req, r)));
                if (x >= 0 && W->e[x].fam == parent) {
                    found++;
                    par[m] = (size_t)x;
                }
            }
            ok = found == 1;
            for (size_t q = 0; q < m && ok; q++)
                ok = par[q] != par[m];
        }
        if (!ok) {
            free(par);
            continue;
        }
        f->parent = parent;
        f->par = par;
    }
}

static void tree_fail(ctx *C, tplan *T, const char *why)
{
    if (T->ok) {
        T->ok = false;
        T->why = cg_infer_pstr(C, why);
    }
}

/* The trees of a workflow: one per group without a parent, with the groups
 * below it as its later phases. */
void cg_infer_plan_trees(ctx *C, wplan *W)
{
    W->t = cg_xcalloc(W->nf + 1, sizeof *W->t);
    for (size_t fi = 0; fi < W->nf; fi++) {
        fam *root = &W->f[fi];
        if (root->parent >= 0)
            continue;
        /* the phases: the root and every group below it */
        int *fams = cg_xcalloc(W->nf + 1, sizeof *fams);
        size_t nf = 0;
        for (size_t g = 0; g < W->nf; g++)
            if (g == fi || is_ancestor(W, (int)fi, (int)g))
                fams[nf++] = (int)g;
        /* a tree needs two cells */
        if (root->n < 2) {
            free(fams);
            continue;
        }
        /* phases in order of their first entry */
        for (size_t a = 1; a < nf; a++)
            for (size_t b = a; b > 0 && W->f[fams[b]].mem[0] < W->f[fams[b - 1]].mem[0]; b--) {
                int t = fams[b];
                fams[b] = fams[b - 1];
                fams[b - 1] = t;
            }
        tplan *T = &W->t[W->nt];
        memset(T, 0, sizeof *T);
        T->root = (int)fi;
        T->fams = fams;
        T->nfams = nf;
        T->ncells = root->n;
        T->ok = true;
        T->fc = cg_xcalloc(nf * T->ncells + 1, sizeof *T->fc);
        for (size_t i = 0; i < nf * T->ncells; i++)
            T->fc[i] = -1;
        for (size_t c = 0; c < root->n; c++)
            W->e[root->mem[c]].cell = (int)c;
        /* the cell of each later entry: its parent's, groups in order of depth */
        for (size_t pass = 0; pass < nf; pass++)
            for (size_t a = 0; a < nf; a++) {
                fam *f = &W->f[fams[a]];
                if (fams[a] == (int)fi)
                    continue;
                for (size_t m = 0; m < f->n; m++)
                    W->e[f->mem[m]].cell = W->e[f->par[m]].cell;
            }
        for (size_t a = 0; a < nf; a++) {
            fam *f = &W->f[fams[a]];
            f->tree = (int)W->nt;
            for (size_t m = 0; m < f->n; m++)
                T->fc[a * T->ncells + (size_t)W->e[f->mem[m]].cell] = (long)f->mem[m];
        }
        T->pattern = cg_xcalloc(nf + 1, sizeof *T->pattern);
        W->nt++;
        /* the candidate's number, for `enabled` */
        size_t number = C->candidate++;
        int tl = C->enabled ? C->enabled[number] : C->level;
        if (tl > C->level)
            tl = C->level;
        T->enabled = tl >= CG_INFER_TREES;
        T->shapes = tl >= CG_INFER_SHAPES;
        if (!T->enabled)
            tree_fail(C, T, "left static (the proof failed with it as a tree)");
        (void)C;
    }
}

/* Where the tree's entries stand in the workflow: cell by cell, or phase by
 * phase, each a run of entries no other entry interrupts. */
static void check_order(ctx *C, const wplan *W, tplan *T)
{
    size_t n = 0;
    for (size_t i = 0; i < T->nfams * T->ncells; i++)
        n += T->fc[i] >= 0;
    long *cellwise = cg_xcalloc(n + 1, sizeof *cellwise), *phasewise = cg_xcalloc(n + 1, sizeof *phasewise);
    size_t a = 0, b = 0;
    for (size_t c = 0; c < T->ncells; c++)
        for (size_t f = 0; f < T->nfams; f++)
            if (T->fc[f * T->ncells + c] >= 0)
                cellwise[a++] = T->fc[f * T->ncells + c];
    for (size_t f = 0; f < T->nfams; f++)
        for (size_t c = 0; c < T->ncells; c++)
            if (T->fc[f * T->ncells + c] >= 0)
                phasewise[b++] = T->fc[f * T->ncells + c];
    /* cell by cell: one run */
    bool cell_ok = true;
    for (size_t i = 1; i < n && cell_ok; i++)
        cell_ok = cellwise[i] == cellwise[i - 1] + 1;
    bool phase_ok = !cell_ok;
    if (phase_ok) {
        size_t i = 0;
        for (size_t f = 0; f < T->nfams && phase_ok; f++) {
            size_t first = i;
            for (size_t c = 0; c < T->ncells; c++)
                if (T->fc[f * T->ncells + c] >= 0) {
                    if (i > first && phasewise[i] != phasewise[i - 1] + 1)
                        phase_ok = false;
                    i++;
                }
        }
    }
    (void)W;
    free(cellwise);
    free(phasewise);
    if (!cell_ok && !phase_ok)
        tree_fail(C, T, "its entries are neither cell by cell nor phase by phase, each in one run");
    T->phase_major = !cell_ok && phase_ok;
}

/* The requires of each phase, the same for every entry: names, and the
 * phases of the same cell. */
static void plan_requires(ctx *C, wplan *W, tplan *T)
{
    for (size_t a = 0; a < T->nfams && T->ok; a++) {
        fam *f = &W->f[T->fams[a]];
        json_t *tok0 = NULL;
        for (size_t m = 0; m < f->n && T->ok; m++) {
            const ent *e = &W->e[f->mem[m]];
            json_t *tok = json_array();
            for (size_t r = 0; r < json_array_size(e->req); r++) {
                const char *nm = json_string_value(json_array_get(e->req, r));
                long x = entry_named(W, nm);
                bool same_cell = x >= 0 && W->e[x].fam >= 0 && W->f[W->e[x].fam].tree == f->tree &&
                                 W->e[x].cell == e->cell && (W->e[x].fam == f->parent ||
                                                             is_ancestor(W, W->e[x].fam, T->fams[a]));
                if (same_cell) {
                    char b[32];
                    snprintf(b, sizeof b, "\x01%d", W->e[x].fam);
                    json_array_append_new(tok, json_string(b));
                } else {
                    /* a job of this tree's other cells, or a later phase: not a name it can keep */
                    if (x >= 0 && W->e[x].fam >= 0 && W->f[W->e[x].fam].tree == f->tree)
                        tree_fail(C, T, "an entry requires a job of another cell of the same matrix");
                    json_array_append_new(tok, json_string(nm));
                }
            }
            if (!tok0)
                tok0 = tok;
            else {
                if (!json_equal(tok0, tok))
                    tree_fail(C, T, "the entries of one job require different jobs");
                json_decref(tok);
            }
        }
        f->rtok = tok0;
    }
}

static void name_phases(ctx *C, const wplan *W, tplan *T, cg_map *taken_in_workflow)
{
    cg_map taken;
    cg_map_init(&taken);
    /* never a name the requires of this tree use, nor an entry's */
    for (size_t i = 0; i < W->ne; i++)
        cg_map_put(&taken, W->e[i].name, (void *)1);
    for (size_t a = 0; a < T->nfams; a++) {
        fam *f = &W->f[T->fams[a]];
        for (size_t r = 0; r < json_array_size(f->rtok); r++)
            cg_map_put(&taken, json_string_value(json_array_get(f->rtok, r)), (void *)1);
    }
    for (size_t a = 0; a < T->nfams; a++) {
        fam *f = &W->f[T->fams[a]];
        const char *last = strrchr(f->kind, '_');
        cg_strbuf b = CG_STRBUF_INIT;
        cg_infer_identifier(&b, last && last[1] ? last + 1 : f->kind);
        if (cg_infer_reserved(b.buf))
            cg_strbuf_adds(&b, "_phase");
        if (cg_map_has(&taken, b.buf)) {
            cg_strbuf_reset(&b);
            cg_infer_identifier(&b, f->kind);
            cg_strbuf_adds(&b, "_phase");
        }
        f->phase = cg_infer_unique_name(C, &taken, b.buf);
        cg_strbuf_release(&b);
    }
    cg_map_release(&taken);
    (void)taken_in_workflow;
}

/* Drops the phases of one entry (follow-ups) from T, and returns how many:
 * a follow-up written away from its cell's other jobs stays static. */
static size_t drop_followups(wplan *W, tplan *T)
{
    size_t kept = 0, dropped = 0;
    for (size_t a = 0; a < T->nfams; a++) {
        fam *f = &W->f[T->fams[a]];
        if (a > 0 && f->n == 1) {
            f->tree = -1;
            f->parent = -1;
            W->e[f->mem[0]].fam = -1;
            dropped++;
            continue;
        }
        if (kept != a) {
            T->fams[kept] = T->fams[a];
            memmove(T->fc + kept * T->ncells, T->fc + a * T->ncells, T->ncells * sizeof *T->fc);
        }
        kept++;
    }
    T->nfams = kept;
    return dropped;
}

void cg_infer_plan_tree(ctx *C, wplan *W, tplan *T, cg_map *tree_names)
{
    if (!T->ok)
        return;
    check_order(C, W, T);
    if (!T->ok && drop_followups(W, T)) {
        T->ok = true;
        T->why = NULL;
        check_order(C, W, T);
    }
    plan_requires(C, W, T);
    if (!T->ok)
        return;
    name_phases(C, W, T, NULL);
    T->shaped = true;
    cg_infer_columns(C, W, T);
    if (!cg_infer_find_patterns(T, W)) {
        tree_fail(C, T, "no job-name pattern made of its varying arguments gives every name");
        return;
    }
    /* a phase not in every cell: `only` names its cells by their dimensions */
    for (size_t a = 1; a < T->nfams; a++) {
        for (size_t c = 0; c < T->ncells; c++) {
            if (T->fc[a * T->ncells + c] >= 0)
                continue;
            for (size_t d = 0; d < T->ncols; d++)
                if (T->cols[d].dim) {
                    for (size_t k = 0; k < T->ncells; k++)
                        if (T->cols[d].v[k] && *T->cols[d].v[k] && !cg_infer_glob_safe(T->cols[d].v[k]))
                            tree_fail(C, T, "a phase runs for some cells only, and a dimension's value holds "
                                      "a character a pattern reads as a glob");
                }
            break;
        }
    }
    cg_infer_detect_shape(T, T->shapes);
    if (!T->product && T->shapes)
        cg_infer_detect_nested(T);
    const fam *root = &W->f[T->root];
    cg_strbuf b = CG_STRBUF_INIT;
    cg_infer_identifier(&b, root->kind);
    T->name = cg_infer_unique_name(C, tree_names, b.buf);
    cg_strbuf_release(&b);
}
