/* infer_fanin — fan-ins: an entry that requires the jobs of one phase of
 * every cell of a tree becomes a phase of that tree with `per: []` (see
 * infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

bool cg_infer_in_tree(const wplan *W, const ent *e)
{
    return e->fanin >= 0 || (e->fam >= 0 && W->f[e->fam].tree >= 0 && W->t[W->f[e->fam].tree].ok);
}

/* The phase of T whose jobs (one per cell, every cell running it) E's
 * requires name, in cell order, one run; -1 when none.  `*at` is where the
 * run starts in E's requires. */
static int gathered_phase(const wplan *W, const tplan *T, const ent *E, size_t *at)
{
    size_t nreq = json_array_size(E->req);
    for (size_t a = 0; a < T->nfams; a++) {
        bool every = true;
        for (size_t c = 0; c < T->ncells && every; c++)
            every = T->fc[a * T->ncells + c] >= 0;
        if (!every || nreq < T->ncells)
            continue;
        const char *first = W->e[T->fc[a * T->ncells]].name;
        for (size_t r = 0; r + T->ncells <= nreq; r++) {
            if (!cg_streq(json_string_value(json_array_get(E->req, r)), first))
                continue;
            bool run = true;
            for (size_t c = 1; c < T->ncells && run; c++)
                run = cg_streq(json_string_value(json_array_get(E->req, r + c)),
                               W->e[T->fc[a * T->ncells + c]].name);
            if (run) {
                *at = r;
                return (int)a;
            }
        }
    }
    return -1;
}

/* Does E require any job of T but the run at [at, at + ncells)? */
static bool other_tree_requires(const wplan *W, const tplan *T, const ent *E, size_t at)
{
    for (size_t r = 0; r < json_array_size(E->req); r++) {
        if (r >= at && r < at + T->ncells)
            continue;
        const char *nm = json_string_value(json_array_get(E->req, r));
        for (size_t i = 0; i < T->nfams * T->ncells; i++)
            if (T->fc[i] >= 0 && cg_streq(W->e[T->fc[i]].name, nm))
                return true;
        for (size_t i = 0; i < T->nfins; i++)
            if (cg_streq(W->e[T->fins[i].e].name, nm))
                return true;
    }
    return false;
}

static long last_entry(const tplan *T)
{
    long last = -1;
    for (size_t i = 0; i < T->nfams * T->ncells; i++)
        if (T->fc[i] > last)
            last = T->fc[i];
    for (size_t i = 0; i < T->nfins; i++)
        if ((long)T->fins[i].e > last)
            last = (long)T->fins[i].e;
    return last;
}

static char *fanin_phase_name(ctx *C, const wplan *W, const tplan *T, const ent *E)
{
    cg_map taken;
    cg_map_init(&taken);
    /* never another entry's name (the fan-in's own is fine: a job named
     * like its phase) */
    for (size_t i = 0; i < W->ne; i++)
        if (&W->e[i] != E)
            cg_map_put(&taken, W->e[i].name, (void *)1);
    for (size_t a = 0; a < T->nfams; a++)
        cg_map_put(&taken, W->f[T->fams[a]].phase, (void *)1);
    for (size_t i = 0; i < T->nfins; i++)
        cg_map_put(&taken, T->fins[i].phase, (void *)1);
    for (size_t r = 0; r < json_array_size(E->req); r++)
        cg_map_put(&taken, json_string_value(json_array_get(E->req, r)), (void *)1);
    const char *last = strrchr(E->kind, '_');
    cg_strbuf b = CG_STRBUF_INIT;
    cg_infer_identifier(&b, last && last[1] ? last + 1 : E->kind);
    if (cg_infer_reserved(b.buf))
        cg_strbuf_adds(&b, "_phase");
    if (cg_map_has(&taken, b.buf)) {
        cg_strbuf_reset(&b);
        cg_infer_identifier(&b, E->kind);
        cg_strbuf_adds(&b, "_phase");
    }
    char *s = cg_infer_unique_name(C, &taken, b.buf);
    cg_strbuf_release(&b);
    cg_map_release(&taken);
    return s;
}

/* The fan-ins of a workflow's trees (those of one workflow: a tree merged
 * with another workflow's keeps its fan-ins static). */
void cg_infer_fanins(ctx *C, wplan *W)
{
    for (size_t i = 0; i < W->ne; i++) {
        ent *E = &W->e[i];
        if (!E->eligible || cg_infer_in_tree(W, E) || !E->req)
            continue;
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            if (!T->ok || !T->shapes || T->into || T->nwfs > 1)
                continue;
            size_t at = 0;
            int a = gathered_phase(W, T, E, &at);
            if (a < 0 || other_tree_requires(W, T, E, at))
                continue;
            /* in place: after the tree's last job when cell by cell */
            if (!T->phase_major && (long)i != last_entry(T) + 1)
                continue;
            if ((long)i < last_entry(T))
                continue;
            json_t *tok = json_array();
            for (size_t r = 0; r < json_array_size(E->req); r++) {
                if (r == at) {
                    char b[32];
                    snprintf(b, sizeof b, "\x01%d", T->fams[a]);
                    json_array_append_new(tok, json_string(b));
                }
                if (r < at || r >= at + T->ncells)
                    json_array_append(tok, json_array_get(E->req, r));
            }
            cg_grow(&T->fins, &T->fins_cap, T->nfins + 1, sizeof *T->fins);
            infer_fanin *F = &T->fins[T->nfins];
            F->e = i;
            F->phase = fanin_phase_name(C, W, T, E);
            F->rtok = tok;
            T->nfins++;
            E->fanin = (int)t;
            break;
        }
    }
}

/* The fan-in's phase in the tree's file, and its template. */
void cg_infer_write_fanin(ctx *C, cg_yw *w, const wplan *W, const tplan *T, const infer_fanin *F)
{
    const ent *E = &W->e[F->e];
    cg_yw_keys(w, F->phase);
    cg_yw_map_begin(w);
    cg_yw_keys(w, "job_name");
    cg_yw_strs(w, E->name);
    cg_yw_keys(w, "per");
    cg_yw_raw(w, "[]", 2);
    cg_strbuf tp = CG_STRBUF_INIT;
    cg_strbuf_addf(&tp, "templates/%s_%s.yml", T->name, F->phase);
    cg_yw_keys(w, "template");
    cg_yw_strs(w, tp.buf);
    cg_yw_keys(w, "requires");
    cg_yw_seq_begin(w);
    for (size_t q = 0; q < json_array_size(F->rtok); q++) {
        const char *t = json_string_value(json_array_get(F->rtok, q));
        cg_yw_strs(w, t[0] == '\x01' ? W->f[atoi(t + 1)].phase : t);
    }
    cg_yw_end(w);
    cg_yw_end(w);
    /* its template: the entry as written, but its name and requires */
    cg_infer_file *tf = cg_infer_add_file(C->r, tp.buf);
    C->r->ntemplates++;
    cg_strbuf *to = &tf->text;
    cg_strbuf_adds(to, "# Phase '");
    cg_strbuf_add_comment_text(to, F->phase);
    cg_strbuf_adds(to, "' of dimensions/");
    cg_strbuf_add_comment_text(to, T->name);
    cg_strbuf_adds(to, ".yml: one job after every cell's, as the config has it.\n");
    cg_yw tw;
    cg_yw_init(&tw, to);
    cg_yw_map_begin(&tw);
    cg_yw_keys(&tw, E->kind);
    cg_yw_map_begin(&tw);
    if (!E->named) {
        cg_yw_keys(&tw, "name");
        cg_yw_raw(&tw, "~", 1);
    }
    cg_strbuf kp = CG_STRBUF_INIT;
    const char *k;
    json_t *v;
    json_object_foreach(E->args, k, v) {
        if (cg_streq(k, "name") || cg_streq(k, "requires"))
            continue;
        cg_yw_keys(&tw, k);
        cg_path_join_key(&kp, E->apath, k);
        cg_yw_value(&tw, C->doc, kp.buf, v);
    }
    cg_strbuf_release(&kp);
    cg_yw_end(&tw);
    cg_yw_end(&tw);
    cg_yw_release(&tw);
    cg_strbuf_release(&tp);
}
