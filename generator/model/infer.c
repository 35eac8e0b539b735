/* infer — a cigen project inferred from a CircleCI config (see infer.h). */
#include "model/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

char *cg_infer_pstr(ctx *C, const char *s)
{
    return cg_pool_strndup(&C->pool, s, strlen(s));
}

cg_infer_file *cg_infer_add_file(cg_infer *r, const char *rel)
{
    cg_grow(&r->files, &r->files_cap, r->nfiles + 1, sizeof *r->files);
    cg_infer_file *f = &r->files[r->nfiles++];
    f->rel = cg_xstrdup(rel);
    cg_strbuf_init(&f->text);
    return f;
}

/* A name for a file, a tree, a dimension: letters, digits and '_'. */
void cg_infer_identifier(cg_strbuf *out, const char *s)
{
    size_t from = out->len;
    for (; *s; s++)
        cg_strbuf_addc(out, cg_isalnum((unsigned char)*s) || *s == '_' ? *s : '_');
    if (out->len == from || cg_isdigit((unsigned char)out->buf[from])) {
        cg_strbuf tmp = CG_STRBUF_INIT;
        cg_strbuf_adds(&tmp, "v_");
        cg_strbuf_add(&tmp, out->buf + from, out->len - from);
        cg_strbuf_truncate(out, from);
        cg_strbuf_add(out, tmp.buf, tmp.len);
        cg_strbuf_release(&tmp);
    }
}

/* A name `base` not in `taken` (recorded there): base, base_2, base_3... */
char *cg_infer_unique_name(ctx *C, cg_map *taken, const char *base)
{
    cg_strbuf b = CG_STRBUF_INIT;
    cg_strbuf_adds(&b, base);
    for (int i = 2; cg_map_has(taken, b.buf); i++) {
        cg_strbuf_reset(&b);
        cg_strbuf_addf(&b, "%s_%d", base, i);
    }
    char *s = cg_infer_pstr(C, b.buf);
    cg_map_put(taken, s, s);
    cg_strbuf_release(&b);
    return s;
}

/* ---- a tree ---- */

bool cg_infer_glob_safe(const char *s)
{
    return !strpbrk(s, "*?[]\\,=") && s[0] != '!' && s[0] != '@' && s[0] != '~' && *s;
}

/* ---- fragments: the top-level sections, byte for byte ---- */

static const char *section_kind(const char *text, size_t len, size_t off)
{
    static const char *const kinds[] = {"workflows", "jobs", "commands", "executors"};
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(kinds[i]);
        if (off + n < len && memcmp(text + off, kinds[i], n) == 0 &&
            (text[off + n] == ':' || text[off + n] == ' '))
            return kinds[i];
    }
    return "header";
}

typedef struct slice {
    size_t start, end;
    const char *kind;
} slice;

/* The root mapping's entries as slices of the text: each from the end of
 * the one before (its comments come with it) to the end of its last line. */
static int slices_of(const cg_doc *doc, slice **out, size_t *n, cg_error *err)
{
    size_t len;
    const char *text = cg_doc_text(doc, &len);
    const cg_doc_layout *L = cg_doc_get_layout(doc);
    if (!json_is_object(cg_doc_root(doc)) || !L || L->nentries == 0) {
        cg_pos p = {cg_doc_file(doc), 1, 1};
        return cg_error_at(err, &p, "a CircleCI config is a mapping (version, jobs, workflows, ...); this is not one");
    }
    /* line starts */
    size_t *ls = cg_xcalloc(cg_count_newlines(text, len) + 2, sizeof *ls);
    size_t nl = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            ls[nl++] = i + 1;
    slice *s = cg_xcalloc(L->nentries, sizeof *s);
    size_t at = 0;
    for (size_t i = 0; i < L->nentries; i++) {
        const cg_doc_entry_text *e = &L->entries[i];
        size_t key = e->key_line - 1 < nl ? ls[e->key_line - 1] + e->key_col - 1 : 0;
        size_t end = e->end;
        /* a block scalar ends at the start of the line after it */
        if (!(end > 0 && text[end - 1] == '\n')) {
            while (end < len && text[end] != '\n')
                end++;
            if (end < len)
                end++;
        }
        if (i + 1 == L->nentries)
            end = len;
        s[i].start = at;
        s[i].end = end;
        s[i].kind = e->merge ? "header" : section_kind(text, len, key);
        at = end;
    }
    free(ls);
    *out = s;
    *n = L->nentries;
    return 0;
}

static void free_plans(ctx *C)
{
    for (size_t i = 0; i < C->nw; i++) {
        wplan *W = &C->w[i];
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            for (size_t c = 0; c < T->ncols; c++) {
                free(T->cols[c].v);
                free(T->cols[c].plain);
                free(T->cols[c].phases);
            }
            free(T->cols);
            for (size_t a = 0; a < T->nfams; a++)
                cg_strbuf_release(&T->pattern[a]);
            free(T->pattern);
            free(T->fams);
            free(T->fc);
            free(T->dimorder);
            cg_infer_shape_free(T);
            for (size_t x = 0; x < T->nfins; x++)
                json_decref(T->fins[x].rtok);
            free(T->fins);
            free(T->wfs);
            free(T->from);
            free(T->cell_in);
            free(T->phase_in);
            free(T->phase_of);
            free(T->cell_of);
        }
        free(W->t);
        for (size_t f = 0; f < W->nf; f++) {
            free(W->f[f].mem);
            free(W->f[f].par);
            json_decref(W->f[f].rtok);
        }
        free(W->f);
        free(W->e);
    }
    free(C->w);
}

void cg_infer_init(cg_infer *r)
{
    memset(r, 0, sizeof *r);
}

void cg_infer_release(cg_infer *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        free(r->files[i].rel);
        cg_strbuf_release(&r->files[i].text);
    }
    free(r->files);
    cg_strbuf_release(&r->summary);
    memset(r, 0, sizeof *r);
}

int cg_infer_project(const cg_doc *doc, const char *source, const char *output, int level,
                     const unsigned char *enabled, cg_infer *r, cg_error *err)
{
    slice *sl = NULL;
    size_t nsl = 0;
    if (slices_of(doc, &sl, &nsl, err) != 0)
        return -1;
    ctx C0 = {doc, source, output, level, enabled, 0, r, {0}, NULL, 0, {0}, {0}};
    ctx *C = &C0;
    cg_pool_init(&C->pool);
    cg_map_init(&C->tree_names);
    cg_map_init(&C->file_names);
    json_t *root = cg_doc_root(doc);
    json_t *wfs = json_object_get(root, "workflows");
    size_t text_len;
    const char *text = cg_doc_text(doc, &text_len);
    long wslice = -1;
    for (size_t i = 0; i < nsl; i++)
        if (cg_streq(sl[i].kind, "workflows"))
            wslice = (long)i;
    if (wslice >= 0)
        r->workflows_lines = cg_count_newlines(text + sl[wslice].start, sl[wslice].end - sl[wslice].start);
    /* which workflows the manifest holds */
    const char *version = NULL;
    if (!json_is_object(wfs) || wslice < 0)
        level = CG_INFER_VERBATIM;
    if (level > CG_INFER_VERBATIM) {
        const char *k;
        json_t *v;
        C->w = cg_xcalloc(json_object_size(wfs) + 1, sizeof *C->w);
        json_object_foreach(wfs, k, v) {
            if (cg_streq(k, "version")) {
                cg_strbuf p = CG_STRBUF_INIT;
                cg_path_join_key(&p, "/workflows", "version");
                if (json_is_string(v) && cg_streq(json_string_value(v), "2") && cg_doc_is_plain(doc, p.buf))
                    version = "2";
                else
                    level = CG_INFER_VERBATIM;
                cg_strbuf_release(&p);
                continue;
            }
            wplan *W = &C->w[C->nw++];
            W->name = k;
            W->v = v;
            cg_strbuf p = CG_STRBUF_INIT;
            cg_path_join_key(&p, "/workflows", k);
            W->path = cg_infer_pstr(C, p.buf);
            cg_strbuf_release(&p);
            W->verbatim = !cg_infer_manifest_can_say(v);
        }
    }
    C->level = level;
    bool any_verbatim = level == CG_INFER_VERBATIM;
    for (size_t i = 0; i < C->nw; i++)
        any_verbatim = any_verbatim || C->w[i].verbatim;
    if (level > CG_INFER_VERBATIM && any_verbatim && version) {
        /* version: 2 goes in the manifest, the verbatim ones in a fragment: fine */
    }
    /* the fragments, in the config's order: consecutive sections of a kind together */
    const char **frag_names = cg_xcalloc(nsl + 2, sizeof *frag_names);
    size_t nfrag = 0;
    cg_map kinds;
    cg_map_init(&kinds);
    const char *prev = NULL;
    cg_infer_file *cur = NULL;
    for (size_t i = 0; i < nsl; i++) {
        const char *kind = sl[i].kind;
        bool is_wf = (long)i == wslice;
        if (is_wf && level > CG_INFER_VERBATIM && !any_verbatim)
            continue;
        if (!prev || !cg_streq(prev, kind) || is_wf) {
            cg_strbuf rel = CG_STRBUF_INIT;
            cg_strbuf_addf(&rel, "verbatim-sources/%s", kind);
            char *name = cg_infer_unique_name(C, &kinds, rel.buf);
            cg_strbuf_reset(&rel);
            cg_strbuf_addf(&rel, "%s.yml", name);
            cur = cg_infer_add_file(r, rel.buf);
            frag_names[nfrag++] = cg_infer_pstr(C, rel.buf);
            cg_strbuf_release(&rel);
            prev = kind;
        }
        if (is_wf && level > CG_INFER_VERBATIM) {
            /* the workflows the manifest cannot say, as they are written */
            cg_strbuf_adds(&cur->text, "workflows:\n");
            for (size_t w = 0; w < C->nw; w++)
                if (C->w[w].verbatim) {
                    cg_infer_copy_lines(doc, C->w[w].path, &cur->text);
                    r->nverbatim_workflows++;
                }
            prev = NULL;
            continue;
        }
        cg_strbuf_add(&cur->text, text + sl[i].start, sl[i].end - sl[i].start);
        if (is_wf) {
            /* every workflow, as written */
            const char *k;
            json_t *v;
            json_object_foreach(wfs, k, v)
                r->nverbatim_workflows += json_is_object(v);
            prev = NULL;
        }
    }
    r->nfragments = nfrag;
    cg_map_release(&kinds);
    free(sl);
    /* the trees */
    size_t nfiles_before_trees = r->nfiles;
    for (size_t i = 0; i < C->nw; i++) {
        wplan *W = &C->w[i];
        if (W->verbatim)
            continue;
        cg_infer_read_entries(C, W);
        if (level < CG_INFER_TREES)
            continue;
        cg_infer_group(C, W);
        cg_infer_link_phases(W);
        cg_infer_plan_trees(C, W);
        for (size_t t = 0; t < W->nt; t++)
            cg_infer_plan_tree(C, W, &W->t[t], &C->tree_names);
    }
    r->ncandidates = C->candidate;
    if (level >= CG_INFER_TREES)
        cg_infer_merge_trees(C);
    if (level >= CG_INFER_SHAPES)
        for (size_t i = 0; i < C->nw; i++)
            if (!C->w[i].verbatim)
                cg_infer_fanins(C, &C->w[i]);
    /* the workflows that take tiers */
    for (size_t i = 0; i < C->nw; i++) {
        cg_strbuf b = CG_STRBUF_INIT;
        cg_infer_identifier(&b, C->w[i].name);
        C->w[i].tier = cg_infer_pstr(C, b.buf);
        cg_strbuf_release(&b);
    }
    for (size_t i = 0; i < C->nw; i++)
        for (size_t t = 0; t < C->w[i].nt; t++) {
            const tplan *T = &C->w[i].t[t];
            if (!T->ok || T->into)
                continue;
            for (size_t x = 0; x < T->nwfs; x++)
                for (size_t c = 0; c < T->ncells; c++) {
                    unsigned char v = T->cell_in[x * T->ncells + c];
                    if (v != 1)
                        ((wplan *)T->wfs[x])->tiered = true;
                    if (v == 2)
                        ((wplan *)T->wfs[x])->gated = true;
                }
        }
    /* the values several trees share, in a file of lists */
    bool lists = false;
    if (level >= CG_INFER_SHAPES) {
        cg_strbuf lt = CG_STRBUF_INIT;
        cg_infer_shared_lists(C, &lt);
        if (lt.len) {
            cg_infer_file *lf = cg_infer_add_file(r, "dimensions/shared-lists.yml");
            cg_strbuf_add(&lf->text, lt.buf, lt.len);
            lists = true;
        }
        cg_strbuf_release(&lt);
    }
    for (size_t i = 0; i < C->nw; i++) {
        wplan *W = &C->w[i];
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            if (!T->ok || T->into)
                continue;
            cg_infer_emit_tree(C, W, T);
            r->ntrees++;
            r->ncells += T->ncells;
            size_t jobs = 0;
            for (size_t x = 0; x < (T->nwfs ? T->nwfs : 1); x++) {
                const tplan *F = T->nwfs ? T->from[x] : T;
                for (size_t y = 0; y < F->nfams * F->ncells; y++)
                    jobs += F->fc[y] >= 0;
            }
            jobs += T->nfins;
            r->ngenerated += jobs;
            /* the summary line */
            cg_strbuf *s = &r->summary;
            cg_strbuf_addf(s, "  tree dimensions/%s.yml (workflow%s ", T->name, T->nwfs > 1 ? "s" : "");
            for (size_t x = 0; x < (T->nwfs ? T->nwfs : 1); x++)
                cg_strbuf_addf(s, "%s%s", x ? ", " : "", T->nwfs ? T->wfs[x]->name : W->name);
            cg_strbuf_addf(s, "): %zu cells, %zu entries", T->ncells, jobs);
            size_t nd = 0;
            for (size_t c = 0; c < T->ncols; c++)
                nd += T->cols[c].dim;
            cg_strbuf_adds(s, nd ? ", dimensions " : ", no dimension");
            bool first = true;
            for (size_t c = 0; c < T->ncols; c++)
                if (T->cols[c].dim) {
                    size_t nv = 0;
                    for (size_t k = 0; k < T->ncells; k++) {
                        bool seen = !T->cols[c].v[k] || !*T->cols[c].v[k];
                        for (size_t q = 0; q < k && !seen; q++)
                            seen = T->cols[c].v[q] && cg_streq(T->cols[c].v[q], T->cols[c].v[k]);
                        nv += !seen;
                    }
                    cg_strbuf_addf(s, "%s%s (%zu)", first ? "" : " x ", T->cols[c].name, nv);
                    first = false;
                }
            cg_strbuf_adds(s, ", ");
            if (T->product)
                cg_infer_shape_text(T, s);
            else if (T->nested)
                cg_strbuf_addf(s, "a node per %s (%zu nodes)", T->cols[T->dimorder[0]].name, T->nruns);
            else
                cg_strbuf_adds(s, "one node per cell");
            size_t nv = 0;
            for (size_t c = 0; c < T->ncols; c++)
                nv += !T->cols[c].dim || cg_infer_shadowed(&T->cols[c]);
            if (nv)
                cg_strbuf_addf(s, ", %zu variable%s", nv, nv == 1 ? "" : "s");
            cg_strbuf_adds(s, "; phases");
            for (size_t a = 0; a < T->nfams; a++) {
                size_t have = 0;
                for (size_t c = 0; c < T->ncells; c++)
                    have += T->fc[a * T->ncells + c] >= 0;
                cg_strbuf_addf(s, " %s", W->f[T->fams[a]].phase);
                if (have < T->ncells)
                    cg_strbuf_addf(s, " (%zu cells)", have);
            }
            for (size_t x = 0; x < T->nfins; x++)
                cg_strbuf_addf(s, " %s (a fan-in: per [])", T->fins[x].phase);
            if (T->phase_major)
                cg_strbuf_adds(s, ", placed phase by phase");
            if (T->gated)
                cg_strbuf_adds(s, ", on_request by tiers");
            cg_strbuf_addc(s, '\n');
        }
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            if (T->ok && T->into)
                cg_strbuf_addf(&r->summary, "  the %zu entries of workflow %s that run %s: the same jobs as tree "
                               "dimensions/%s.yml, which sends them there\n", W->f[T->root].n, W->name,
                               W->f[T->root].kind, T->into->name);
            if (T->ok)
                continue;
            cg_strbuf_addf(&r->summary, "  not a tree: the %zu entries of workflow %s that run %s: %s\n",
                           W->f[T->root].n, W->name, W->f[T->root].kind, T->why);
        }
    }
    (void)nfiles_before_trees;
    /* the manifest, first of the files */
    cg_infer_file mf = {cg_xstrdup("cigen.yml"), CG_STRBUF_INIT};
    cg_strbuf *o = &mf.text;
    cg_strbuf_adds(o, "# cigen.yml: how ");
    cg_strbuf_add_comment_text(o, output);
    cg_strbuf_adds(o, " is made, imported from ");
    cg_strbuf_add_comment_text(o, source);
    cg_strbuf_adds(o, " by `cigen import`.\n"
                      "# Every path is relative to this file.  Change a source, run `cigen generate`,\n"
                      "# and commit the sources with the config.\n");
    cg_yw w;
    cg_yw_init(&w, o);
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "output");
    cg_yw_strs(&w, output);
    cg_yw_keys(&w, "regenerate");
    cg_yw_strs(&w, "cigen generate");
    cg_yw_keys(&w, "fragments");
    cg_yw_seq_begin(&w);
    for (size_t i = 0; i < nfrag; i++)
        cg_yw_strs(&w, frag_names[i]);
    cg_yw_end(&w);
    if (r->ntrees) {
        cg_yw_keys(&w, "trees");
        cg_yw_seq_begin(&w);
        for (size_t i = 0; i < C->nw; i++)
            for (size_t t = 0; t < C->w[i].nt; t++)
                if (C->w[i].t[t].ok && !C->w[i].t[t].into) {
                    cg_strbuf rel = CG_STRBUF_INIT;
                    cg_strbuf_addf(&rel, "dimensions/%s.yml", C->w[i].t[t].name);
                    cg_yw_strs(&w, rel.buf);
                    cg_strbuf_release(&rel);
                }
        cg_yw_end(&w);
    }
    if (lists) {
        cg_yw_keys(&w, "lists");
        cg_yw_seq_begin(&w);
        cg_yw_strs(&w, "dimensions/shared-lists.yml");
        cg_yw_end(&w);
    }
    bool manifest_wfs = false;
    for (size_t i = 0; i < C->nw; i++)
        manifest_wfs = manifest_wfs || !C->w[i].verbatim;
    if (level > CG_INFER_VERBATIM && manifest_wfs) {
        cg_yw_keys(&w, "workflows");
        cg_yw_map_begin(&w);
        if (version) {
            cg_yw_keys(&w, "version");
            cg_yw_raw(&w, "2", 1);
        }
        for (size_t i = 0; i < C->nw; i++)
            if (!C->w[i].verbatim)
                cg_infer_write_workflow(C, &w, &C->w[i]);
        cg_yw_end(&w);
    }
    cg_yw_end(&w);
    cg_yw_release(&w);
    /* the manifest goes first */
    cg_grow(&r->files, &r->files_cap, r->nfiles + 1, sizeof *r->files);
    memmove(r->files + 1, r->files, r->nfiles * sizeof *r->files);
    r->files[0] = mf;
    r->nfiles++;
    free(frag_names);
    free_plans(C);
    cg_map_release(&C->tree_names);
    cg_map_release(&C->file_names);
    cg_pool_release(&C->pool);
    return 0;
}
