/* Loading a project: the manifest names the sources; each is read (io/fsio),
 * parsed (lang/), expanded into cells and jobs (model/), and every template
 * a workflow entry uses is compiled, so that rendering reads no file. */
#include "model/model.h"
#include "model/model_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "io/fsio.h"
#include "lang/ref_regex.h"
#include "lang/schema.h"
#include "model/pick.h"
#include "model/cull.h"
#include "model/walk.h"

void cg_model_init(cg_model *p)
{
    memset(p, 0, sizeof *p);
    cg_pool_init(&p->pool);
    cg_map_init(&p->doc_by_path);
    cg_map_init(&p->templates);
    cg_lists_init(&p->lists);
    cg_warnings_init(&p->warnings);
    cg_special_init(&p->selection);
    cg_tier_prev_init(&p->tier_prev);
    p->per_change = -1;
}

void cg_model_release(cg_model *p)
{
    for (size_t i = 0; i < p->ntrees; i++) {
        cg_tree_free(p->trees[i]);
        if (p->cells)
            cg_cells_release(&p->cells[i]);
    }
    free(p->trees);
    free(p->cells);
    cg_tier_prev_release(&p->tier_prev);
    cg_tier_changes_release(&p->tier_changes);
    cg_lists_release(&p->lists);
    for (size_t i = 0; i < p->nfragments; i++)
        cg_fragment_release(&p->fragments[i]);
    free(p->fragments);
    cg_jobs_release(&p->jobs);
    if (p->run)
        json_decref(p->run->parameters);
    cg_order_release(p->orders, p->manifest.nworkflows);
    free(p->orders);
    cg_manifest_release(&p->manifest);
    for (size_t i = 0; i < p->ndocs; i++)
        cg_doc_free(p->docs[i]);
    free(p->docs);
    cg_map_release(&p->doc_by_path);
    cg_map_release(&p->templates);
    for (size_t i = 0; p->phase_templates && i < p->ntrees; i++)
        free(p->phase_templates[i]);
    free(p->phase_templates);
    free(p->job_templates);
    cg_warnings_release(&p->warnings);
    cg_special_release(&p->selection);
    free(p->statics);
    free(p->marks);
    free(p->root);
    free(p->source_ids);
    cg_walk_free(p->walk);
    cg_pool_release(&p->pool);
    memset(p, 0, sizeof *p);
}

static int load_fragments(cg_model *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    p->fragments = cg_xcalloc(m->nfragments + 1, sizeof *p->fragments);
    /* an alias may name an anchor of an earlier fragment (the assembler
     * then writes that anchor's section first) */
    const cg_doc **earlier = cg_xcalloc(m->nfragments + 1, sizeof *earlier);
    cg_map by_anchor; /* anchor name -> the last earlier fragment defining it */
    cg_map_init(&by_anchor);
    int rc = 0;
    for (size_t i = 0; i < m->nfragments && rc == 0; i++) {
        cg_load_opts o = {.scope = earlier, .nscope = i, .scope_index = &by_anchor, .copied = true};
        cg_doc *doc = cg_model_load_doc(p, m->fragments[i], &m->fragment_pos[i], &o, err);
        if (!doc) {
            rc = -1;
            break;
        }
        earlier[i] = doc;
        for (size_t a = 0; a < cg_doc_anchor_count(doc); a++)
            cg_map_put(&by_anchor, cg_doc_anchor(doc, a, NULL), doc);
        rc = cg_fragment_init(&p->fragments[i], doc, err);
        p->nfragments++;
        /* the filters of its workflows, which list --branch evaluates */
        json_t *wfs = rc == 0 ? json_object_get(cg_doc_root(doc), "workflows") : NULL;
        if (json_is_object(wfs))
            rc = cg_ref_workflows_check(doc, "/workflows", wfs, err);
    }
    cg_map_release(&by_anchor);
    free(earlier);
    return rc;
}

/* Tiers named by workflows must exist in some tree. */
/* Whether a workflow takes tier `name` (as its tier or on request). */
static bool workflow_takes(const cg_manifest *m, const char *name)
{
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        for (size_t i = 0; i < wd->ntiers; i++)
            if (cg_streq(wd->tiers[i], name))
                return true;
        for (size_t i = 0; i < wd->non_request; i++)
            if (cg_streq(wd->on_request[i], name))
                return true;
    }
    return false;
}

static int check_workflow_tiers(cg_model *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        for (int pass = 0; pass < 2; pass++) {
            const char *const *names = pass ? wd->on_request : wd->tiers;
            const cg_pos *pos = pass ? wd->on_request_pos : wd->tier_pos;
            size_t n = pass ? wd->non_request : wd->ntiers;
            for (size_t i = 0; i < n; i++) {
                bool found = false;
                const char *cands[256];
                size_t nc = 0;
                for (size_t t = 0; t < p->ntrees && !found; t++)
                    for (size_t k = 0; k < p->trees[t]->ntiers && !found; k++) {
                        found = cg_streq(p->trees[t]->tiers[k].name, names[i]);
                        if (nc < CG_ARRAY_LEN(cands))
                            cands[nc++] = p->trees[t]->tiers[k].name;
                    }
                if (found)
                    continue;
                /* the typo may be the tree's: a tier close to this name
                 * that no workflow takes is pointed at, not offered */
                const char *close = cg_suggest(names[i], cands, nc);
                const cg_tier *typo = NULL;
                const cg_tree *in = NULL;
                for (size_t t = 0; close && t < p->ntrees && !typo; t++)
                    for (size_t k = 0; k < p->trees[t]->ntiers && !typo; k++)
                        if (cg_streq(p->trees[t]->tiers[k].name, close) && !workflow_takes(m, close))
                            typo = &p->trees[t]->tiers[k], in = p->trees[t];
                if (typo) {
                    cg_error_at(err, &typo->pos, "tree '%s' declares tier '%s', which no workflow takes; workflow "
                                "'%s' takes '%s' (is one of them misspelt?)", in->name, typo->name, wd->name,
                                names[i]);
                    cg_error_note(err, &pos[i], "workflow '%s' takes tier '%s' here", wd->name, names[i]);
                    return -1;
                }
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, names[i], cands, nc);
                cg_error_at(err, &pos[i], "workflow '%s' takes tier '%s', which no tree declares%s", wd->name,
                            names[i], cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                return -1;
            }
        }
    }
    return 0;
}

/* A tree that sends jobs to a workflow must declare every tier the workflow
 * names (`none` to take no part): otherwise it would silently add nothing. */
static int check_tree_tiers(cg_model *p, cg_error *err)
{
    const cg_manifest *m = &p->manifest;
    for (size_t t = 0; t < p->ntrees; t++) {
        const cg_tree *tr = p->trees[t];
        for (size_t ph = 0; ph < tr->nphases; ph++) {
            const cg_phase *phase = &tr->phases[ph];
            for (size_t k = 0; k < phase->nworkflows; k++) {
                const cg_workflow_decl *wd = &m->workflows[phase->workflows[k]];
                for (size_t i = 0; i < wd->ntiers + wd->non_request; i++) {
                    bool gated = i >= wd->ntiers;
                    const char *name = gated ? wd->on_request[i - wd->ntiers] : wd->tiers[i];
                    const cg_pos *at = gated ? &wd->on_request_pos[i - wd->ntiers] : &wd->tier_pos[i];
                    bool found = false;
                    for (size_t x = 0; x < tr->ntiers && !found; x++)
                        found = cg_streq(tr->tiers[x].name, name);
                    if (found)
                        continue;
                    cg_error_at(err, &phase->workflow_pos[k],
                                "phase '%s' lands in workflow '%s', which takes tier '%s', but tree '%s' does "
                                "not declare it; declare '%s' under 'tiers' (or '%s: none' to take no part)",
                                phase->name, wd->name, name, tr->name, name, name);
                    cg_error_note(err, at, "workflow '%s' takes tier '%s' here", wd->name, name);
                    return -1;
                }
            }
        }
    }
    return 0;
}

/* Every source, sorted by path (so the digest ignores load order): the
 * manifest, trees, templates and fragments. */
static void sources_digest(const cg_model *p, char hex[41])
{
    size_t n = p->ndocs + p->nfragments;
    const cg_doc **all = cg_xmalloc((n + 1) * sizeof *all);
    size_t k = 0;
    for (size_t i = 0; i < p->ndocs; i++)
        all[k++] = p->docs[i];
    for (size_t i = 0; i < p->nfragments; i++)
        all[k++] = p->fragments[i].doc;
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && strcmp(cg_doc_file(all[j - 1]), cg_doc_file(all[j])) > 0; j--) {
            const cg_doc *tmp = all[j];
            all[j] = all[j - 1];
            all[j - 1] = tmp;
        }
    cg_sha256 s;
    cg_sha256_init(&s);
    for (size_t i = 0; i < k; i++) {
        size_t len;
        const char *text = cg_doc_text(all[i], &len);
        const char *name = cg_doc_file(all[i]);
        char size[32];
        snprintf(size, sizeof size, "%zu", len);
        cg_sha256_update(&s, name, strlen(name) + 1);
        cg_sha256_update(&s, size, strlen(size) + 1);
        cg_sha256_update(&s, text, len);
    }
    unsigned char d[32];
    cg_sha256_final(&s, d);
    cg_hex(d, 20, hex);
    free(all);
}

/* The pairwise tiers' cells recorded in the committed config's header, so
 * that the selection starts from them.  An output that cannot be read is
 * as good as none here (generate and check say what is wrong with it). */
static void read_committed_tiers(cg_model *p)
{
    cg_error scratch;
    cg_error_init(&scratch);
    char *old = NULL;
    size_t len = 0, head = (size_t)1 << 16;
    int r = cg_read_output_head(p->root, p->manifest.output, NULL, "read", head, &old, &len, &scratch);
    if (r == 0 && len == head) {
        /* a header longer than the head: only then the whole file */
        bool all_comments = true;
        for (size_t i = 0; i < len && all_comments;) {
            const char *nl = memchr(old + i, '\n', len - i);
            all_comments = old[i] == '#';
            i = nl ? (size_t)(nl - old) + 1 : len;
        }
        if (all_comments) {
            free(old);
            old = NULL;
            r = cg_read_output(p->root, p->manifest.output, NULL, "read", &old, &len, &scratch);
        }
    }
    if (r == 0)
        cg_tier_prev_parse(&p->tier_prev, old, len);
    free(old);
    cg_error_release(&scratch);
}

int cg_model_load(cg_model *p, const cg_options *o, cg_error *err)
{
    p->opt = *o;
    if (!p->opt.dir)
        p->opt.dir = ".";
    if (!p->opt.manifest)
        p->opt.manifest = "cigen.yml";
    if (!(p->root = cg_realdir(p->opt.dir, err)))
        return -1;
    char *gitdir = NULL;
    if (cg_root_in_git(p->root, &gitdir)) {
        cg_error_plain(err, "the project folder '%s' lies inside a repository's git folder ('%s'); cigen never "
                       "reads or writes there", p->opt.dir, gitdir);
        free(gitdir);
        return -1;
    }
    if (cg_check_project_path(p->opt.manifest, &(cg_pos){0}, "the manifest path", err) != 0)
        return -1;
    /* "-m ./cigen.yml" is cigen.yml: its name is in the header and digest */
    cg_strbuf norm = CG_STRBUF_INIT;
    cg_path_normalize(p->opt.manifest, &norm);
    if (norm.len)
        p->opt.manifest = cg_intern(&p->pool, norm.buf);
    cg_strbuf_release(&norm);
    char *data = NULL;
    size_t len = 0;
    int rc = cg_model_read_source(p, p->opt.manifest, &(cg_pos){0}, &data, &len, true, err);
    if (rc == 1)
        return cg_error_plain(err, "cannot read '%s': no such file (run cigen in the project's folder, or name "
                              "it with -C DIR or the manifest with -m FILE)", p->opt.manifest);
    if (rc != 0)
        return -1;
    p->manifest_doc = cg_doc_parse(p->opt.manifest, data, len, NULL, err);
    free(data);
    if (!p->manifest_doc)
        return -1;
    cg_grow(&p->docs, &p->docs_cap, p->ndocs + 1, sizeof *p->docs);
    p->docs[p->ndocs++] = p->manifest_doc;
    cg_map_put(&p->doc_by_path, cg_intern(&p->pool, p->opt.manifest), p->manifest_doc);
    if (cg_manifest_parse(p->manifest_doc, &p->pool, &p->manifest, err) != 0)
        return -1;
    const cg_manifest *m = &p->manifest;
    if (m->pipeline.setup && m->pipeline.project_derived && cg_streq(m->pipeline.project, ".circleci")) {
        /* the setup job will run `cigen -C .circleci`: this folder must be it */
        const char *slash = strrchr(p->root, '/');
        const char *base = slash ? slash + 1 : p->root;
        if (!cg_streq(base, ".circleci"))
            return cg_error_at(err, &m->pipeline.setup_pos, "'output: config.yml' in dynamic mode is the setup config "
                               "CircleCI reads at .circleci/config.yml, but this project's folder is '%s', not the "
                               "repository's .circleci: move the project there, write 'output: .circleci/config.yml' "
                               "(a project at the repository's root), or say where it is ('pipeline: project: PATH')",
                               base);
    }
    if (load_fragments(p, err) != 0)
        return -1;
    for (size_t i = 0; i < m->nlists; i++) {
        const cg_doc *doc = cg_model_doc(p, m->lists[i], &m->list_pos[i], err);
        if (!doc || cg_lists_add(&p->lists, doc, &p->pool, err) != 0)
            return -1;
    }
    read_committed_tiers(p);
    p->tier_prev.fresh = p->opt.fresh_tiers;
    p->trees = cg_xcalloc(m->ntrees + 1, sizeof *p->trees);
    p->cells = cg_xcalloc(m->ntrees + 1, sizeof *p->cells);
    if (p->opt.walker && cg_walk_begin(p, err) != 0)
        return -1;
    uint64_t jobs = 0; /* cells x phases of the trees so far, bounded before each expands */
    for (size_t i = 0; i < m->ntrees; i++) {
        const cg_doc *doc = cg_model_doc(p, m->trees[i], &m->tree_pos[i], err);
        if (!doc)
            return -1;
        cg_tree *t = cg_tree_parse(doc, i, m, &p->lists, &p->pool, err);
        if (!t)
            return -1;
        p->trees[p->ntrees++] = t;
        if (t->has_paths && !m->pipeline.dynamic) {
            /* `paths` choose jobs when a pipeline starts: dynamic mode only */
            for (size_t k = 0; k < t->nnodes; k++)
                if (t->nodes[k]->npaths) {
                    const char *msg = "'paths' choose a cell's jobs when a pipeline starts, which needs the "
                                      "manifest's 'pipeline: {mode: dynamic}'; here they choose nothing";
                    if (p->opt.strict)
                        return cg_error_at(err, &t->nodes[k]->paths_pos[0], "%s", msg);
                    cg_warn_at(&p->warnings, &t->nodes[k]->paths_pos[0], "%s", msg);
                    break;
                }
        }
        for (size_t j = 0; j < i; j++)
            if (cg_streq(p->trees[j]->name, t->name)) {
                cg_error_at(err, &m->tree_pos[i], "two trees are named '%s' (after their file names)", t->name);
                cg_error_note(err, &m->tree_pos[j], "the other one");
                return -1;
            }
        if (cg_expand_bound(t, m->max_cells, m->max_jobs, m->max_filter_tests, m->max_pair_tests, &jobs, err) != 0)
            return -1;
        if (p->opt.walker ? cg_walk_tree(p, t, err) != 0
                          : cg_expand(t, &p->pool, &p->cells[i], m->max_cells, p->opt.strict, &p->tier_prev,
                                      &p->tier_changes, &p->warnings, err) != 0)
            return -1;
    }
    if (check_workflow_tiers(p, err) != 0 || check_tree_tiers(p, err) != 0)
        return -1;
    for (size_t i = 0; i < p->lists.n; i++) {
        const cg_list *l = &p->lists.v[i];
        if (l->uses)
            continue;
        if (p->opt.strict)
            return cg_error_at(err, &l->pos, "list '%s' is used by no tree", l->name);
        cg_warn_at(&p->warnings, &l->pos, "list '%s' is used by no tree", l->name);
    }
    if (p->opt.walker) /* the cells and jobs were walked, not kept */
        return cg_walk_finish(p, err);
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        size_t *skipped = cg_xcalloc(t->nphases + 1, sizeof *skipped);
        int brc = cg_jobs_build(&p->jobs, t, &p->cells[i], m, &p->pool, skipped, err);
        /* a phase that runs for no cell makes no job: say so rather than let it vanish */
        for (size_t k = 0; k < t->nphases && brc == 0; k++) {
            const cg_phase *ph = &t->phases[k];
            if (!p->cells[i].nlive || skipped[k] < p->cells[i].nlive)
                continue;
            const char *why = ph->nskip && ph->nonly ? "'skip' and 'only'" : ph->nskip ? "'skip'" : "'only'";
            if (!ph->nskip && !ph->nonly) { /* only `per` removes cells without skip or only */
                if (p->opt.strict)
                    brc = cg_error_at(err, &ph->per_pos, "phase '%s' runs for no cell: no cell has every "
                                      "dimension of its 'per'", ph->name);
                else
                    cg_warn_at(&p->warnings, &ph->per_pos, "phase '%s' runs for no cell: no cell has every "
                               "dimension of its 'per'", ph->name);
                continue;
            }
            if (p->opt.strict)
                brc = cg_error_at(err, &ph->pos, "phase '%s' runs for no cell: its %s leave%s no job", ph->name,
                                 why, ph->nskip && ph->nonly ? "" : "s");
            else
                cg_warn_at(&p->warnings, &ph->pos, "phase '%s' runs for no cell: its %s leave%s no job", ph->name,
                           why, ph->nskip && ph->nonly ? "" : "s");
        }
        free(skipped);
        if (brc != 0)
            return -1;
    }
    for (size_t w = 0; w < m->nworkflows; w++)
        if (m->workflows[w].per_change)
            p->per_change = (int)w;
    if (cg_jobs_check_requires(&p->jobs, m, (const cg_tree *const *)p->trees, p->ntrees, err) != 0)
        return -1;
    /* skip patterns are counted while building jobs: report unmatched ones now */
    for (size_t i = 0; i < p->ntrees; i++) {
        const cg_tree *t = p->trees[i];
        for (size_t k = 0; k < t->npatterns; k++) {
            const cg_pattern *pt = t->patterns[k];
            if (pt->hits || !(cg_streq(pt->kind, "skip") || cg_streq(pt->kind, "phase only") || pt->names_phase))
                continue;
            const char *kind = pt->names_phase ? "override" : cg_streq(pt->kind, "skip") ? "skip" : "only";
            if (p->opt.strict)
                return cg_error_at(err, &pt->pos, "%s pattern %s matches no cell", kind, pt->text);
            cg_warn_at(&p->warnings, &pt->pos, "%s pattern %s matches no cell", kind, pt->text);
        }
    }
    /* the templates of every job, before the selection: it reads their
     * contexts, and may put a job into one more workflow (loaded after) */
    if (cg_model_load_templates(p, err) != 0 ||
        (p->opt.pipeline ? cg_pick_jobs(p, err) : cg_cull_apply(p, err)) != 0 || cg_model_load_templates(p, err) != 0)
        return -1;
    /* each workflow's entries in order, once the selection placed them */
    p->orders = cg_xcalloc(m->nworkflows + 1, sizeof *p->orders);
    if (cg_order_build(m, p->trees, p->ntrees, &p->jobs, p->orders, err) != 0)
        return -1;
    sources_digest(p, p->sources_digest);
    return 0;
}

