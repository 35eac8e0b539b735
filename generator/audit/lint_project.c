/* lint_project — lint's checks of the project as a whole, once every entry
 * is rendered: the config's version, values with spaces, jobs run on request
 * that never say so, unused and idle definitions, CircleCI's limits. */
#include <stdlib.h>
#include <string.h>

#include "audit/lint.h"
#include "audit/lint_impl.h"

/* deeper than this, a fragment is hard to read (a warning, not CircleCI's limit) */
#define MAX_DEPTH_WARNING 32

void cg_lint_check_limits(cg_lint *l)
{
    const cg_model *p = l->p;
    const cg_manifest *m = &p->manifest;
    /* the size with every alias and merge expanded: each fragment's tree
     * written out, plus the generated text (which has no aliases) */
    size_t expanded = l->out->config.len, depth = 0;
    for (size_t f = 0; f < p->nfragments; f++) {
        const cg_doc *doc = p->fragments[f].doc;
        cg_strbuf dump = CG_STRBUF_INIT;
        cg_yw w;
        cg_yw_init(&w, &dump);
        cg_yw_value(&w, doc, "", cg_doc_root(doc));
        cg_yw_release(&w);
        expanded = expanded - (p->fragments[f].len < expanded ? p->fragments[f].len : expanded) + dump.len;
        cg_strbuf_release(&dump);
        size_t d = cg_lint_depth_of(cg_doc_root(doc));
        if (d > depth)
            depth = d;
    }
    long limit = m->max_config_bytes;
    cg_pos at = m->output_pos;
    if ((long)expanded > limit)
        cg_lint_add(l, true, "config-size", &at, NULL, NULL, -1, -1,
            "%s is %zu bytes with its aliases expanded, over the limit of %ld (CircleCI allows 8 MB; "
            "'limits.max_config_bytes' in the manifest)", m->output, expanded, limit);
    else if ((double)expanded > 0.9 * (double)limit)
        cg_lint_add(l, false, "config-size", &at, NULL, NULL, -1, -1,
            "%s is %zu bytes with its aliases expanded, %.0f%% of the limit of %ld", m->output, expanded,
            100.0 * (double)expanded / (double)limit, limit);
    if (depth > MAX_DEPTH_WARNING)
        cg_lint_add(l, false, "nesting", &at, NULL, NULL, -1, -1,
            "a fragment nests %zu levels deep; keep CircleCI configs shallower than %d", depth, MAX_DEPTH_WARNING);
}

/* The manifest's idle_jobs, idle_commands or idle_executors (k: 0, 1, 2). */
static void idle_list(const cg_manifest *m, size_t k, const char *const **names, const cg_pos **pos, size_t *n)
{
    *names = k == 0 ? m->idle_jobs : k == 1 ? m->idle_commands : m->idle_executors;
    *pos = k == 0 ? m->idle_pos : k == 1 ? m->idle_commands_pos : m->idle_executors_pos;
    *n = k == 0 ? m->nidle : k == 1 ? m->nidle_commands : m->nidle_executors;
}

static const char *const idle_key[] = {"idle_jobs", "idle_commands", "idle_executors"};

void cg_lint_check_unused(cg_lint *l)
{
    static const struct {
        const char *what;
        size_t off;
    } kinds[] = {{"job", 0}, {"command", 1}, {"executor", 2}};
    for (size_t k = 0; k < 3; k++) {
        /* --only culls jobs on purpose; the full config is linted on landing */
        if (k == 0 && l->p->selection.nonly)
            continue;
        cg_def *defs = k == 0 ? l->jobs : k == 1 ? l->commands : l->executors;
        size_t n = k == 0 ? l->njobs : k == 1 ? l->ncommands : l->nexecutors;
        const char *const *idle;
        const cg_pos *idle_pos;
        size_t nidle;
        idle_list(&l->p->manifest, k, &idle, &idle_pos, &nidle);
        for (size_t i = 0; i < n; i++) {
            if (defs[i].used)
                continue;
            /* the manifest's idle_jobs (idle_commands, ...): kept unused on purpose */
            bool is_idle = false;
            for (size_t j = 0; j < nidle && !is_idle; j++)
                is_idle = cg_streq(idle[j], defs[i].name);
            if (is_idle)
                continue;
            cg_pos pos = cg_doc_key_where(defs[i].doc, defs[i].path);
            cg_lint_add(l, false, "unused", &pos, NULL, NULL, -1, -1, "%s '%s' is defined but %s", kinds[k].what,
                defs[i].name, k == 0 ? "no workflow runs it" : k == 1 ? "no job or command uses it" : "no job uses it");
        }
    }
}

/* Every name of the manifest's idle_jobs is a job of a fragment that no
 * workflow runs (idle_commands: a command nothing uses; idle_executors: an
 * executor no job uses): otherwise the list says something untrue. */
void cg_lint_check_idle(cg_lint *l)
{
    static const char *const what[] = {"job", "command", "executor"};
    static const char *const user[] = {"a workflow runs it", "a job or command uses it", "a job uses it"};
    for (size_t k = 0; k < 3; k++) {
        const cg_def *defs = k == 0 ? l->jobs : k == 1 ? l->commands : l->executors;
        size_t ndefs = k == 0 ? l->njobs : k == 1 ? l->ncommands : l->nexecutors;
        const char *const *idle;
        const cg_pos *idle_pos;
        size_t nidle;
        idle_list(&l->p->manifest, k, &idle, &idle_pos, &nidle);
        for (size_t j = 0; j < nidle; j++) {
            const cg_def *d = NULL;
            for (size_t i = 0; i < ndefs && !d; i++)
                if (cg_streq(defs[i].name, idle[j]))
                    d = &defs[i];
            if (!d) {
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_lint_hint(&hint, idle[j], defs, ndefs, NULL, 0);
                cg_lint_add(l, true, "idle", &idle_pos[j], NULL, NULL, -1, -1,
                            "%s names '%s', which no fragment defines%s%s%s", idle_key[k], idle[j],
                            k ? " as a " : "", k ? what[k] : "", cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
            } else if (d->used && !(k == 0 && l->p->selection.nonly)) {
                cg_pos dp = cg_doc_key_where(d->doc, d->path);
                cg_lint_add(l, false, "idle", &idle_pos[j], &dp, "defined here", -1, -1,
                            "%s names '%s', but %s; remove it from %s", idle_key[k], idle[j], user[k], idle_key[k]);
            }
        }
    }
}

/* CircleCI needs a top-level 'version'; only fragments can give one. */
void cg_lint_check_version(cg_lint *l)
{
    const cg_model *p = l->p;
    for (size_t i = 0; i < p->nfragments; i++)
        if (json_object_get(cg_doc_root(p->fragments[i].doc), "version"))
            return;
    cg_pos at = p->manifest.nfragments ? p->manifest.fragment_pos[0] : cg_doc_where(p->manifest_doc, "");
    cg_lint_add(l, true, "no-version", &at, NULL, NULL, -1, -1,
        "%s has no 'version' (CircleCI needs one, e.g. version: 2.1); write it in a fragment", p->manifest.output);
}

static bool has_space(const char *s)
{
    for (; s && *s; s++)
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
            return true;
    return false;
}

/* The key of (dimension, value) in the examples' map: "dim=value". */
static const char *example_key(cg_strbuf *key, int dim, const char *value)
{
    cg_strbuf_reset(key);
    cg_strbuf_addf(key, "%d=%s", dim, value);
    return key->buf;
}

/* examples: "dim=value" -> a job whose cell has that value and whose name
 * holds whitespace (the example, and the proof that the value's whitespace
 * reaches a name: the pattern or 'replace' may leave it out). */
static void spaced_value(cg_lint *l, const cg_tree *t, const cg_map *examples, cg_strbuf *key, int dim,
                         const char *value, const cg_pos *pos)
{
    if (!has_space(value))
        return;
    const char *example = cg_map_get(examples, example_key(key, dim, value));
    if (!example)
        return;
    cg_lint_add(l, false, "value-whitespace", pos, NULL, NULL, -1, -1,
        "value '%s' of dimension '%s' holds whitespace, and so do the job names made from it (e.g. '%s'): "
        "write the value without it, or map it in job_name's 'replace'", value, t->dims[dim], example);
}

/* A dimension value with whitespace that reaches a job name: CircleCI
 * takes the name, but it is awkward to require, select and read. */
void cg_lint_check_spaced_values(cg_lint *l)
{
    const cg_model *p = l->p;
    for (size_t ti = 0; ti < p->ntrees; ti++) {
        const cg_tree *t = p->trees[ti];
        /* one pass over the tree's jobs: the first spaced name of each
         * spaced value */
        cg_map examples;
        cg_map_init(&examples);
        cg_pool keys;
        cg_pool_init(&keys);
        cg_strbuf key = CG_STRBUF_INIT;
        for (size_t k = 0; k < p->jobs.n; k++) {
            const cg_job *j = &p->jobs.v[k];
            if (j->tree != t || !has_space(j->name))
                continue;
            for (size_t d = 0; d < t->ndims; d++) {
                const char *v = j->cell->values[d];
                if (has_space(v) && !cg_map_has(&examples, example_key(&key, (int)d, v)))
                    cg_map_put(&examples, cg_pool_strndup(&keys, key.buf, key.len), (void *)j->name);
            }
        }
        for (size_t ni = 0; examples.len && ni < t->nnodes; ni++) {
            const cg_tnode *nd = t->nodes[ni];
            for (size_t f = 0; f < nd->nfans; f++)
                for (size_t v = 0; v < nd->fans[f].n; v++)
                    spaced_value(l, t, &examples, &key, nd->fans[f].dim, nd->fans[f].values[v], &nd->fans[f].pos[v]);
            const cg_zip *z = nd->zip;
            for (size_t b = 0; z && b < z->n; b++)
                for (size_t c = 0; c < z->nnames; c++) {
                    const cg_vardecl *cell = &z->cells[b * z->nnames + c];
                    if (cg_tree_is_dim(t, z->ids[c]))
                        spaced_value(l, t, &examples, &key, z->ids[c], cell->raw, &cell->pos);
                }
        }
        cg_strbuf_release(&key);
        cg_pool_release(&keys);
        cg_map_release(&examples);
    }
}

/* Whether template node n passes placeholder `id` anywhere (keys too). */
static bool node_uses(const cg_tpl_node *n, int id)
{
    for (size_t i = 0; i < n->text.nsegs; i++)
        if (n->text.segs[i].kind == CG_SEG_NAME && n->text.segs[i].id == id)
            return true;
    for (size_t i = 0; i < n->nkids; i++)
        if (node_uses(&n->kids[i], id))
            return true;
    return false;
}

/* A job a workflow runs on request (its cell is in the workflow's
 * on_request tier) learns it only from '{{ on_request }}': a template that
 * never passes it runs the job in full on every push, as if it were in the
 * workflow's tier.  One warning per template (jobs whose template path
 * names a variable are not looked at). */
void cg_lint_check_on_request(cg_lint *l)
{
    const cg_model *p = l->p;
    if (p->manifest.pipeline.dynamic)
        return; /* cigen select leaves on-request jobs out itself: they never halt */
    /* the templates looked at already: a handful, searched in turn */
    const cg_template **seen = NULL;
    size_t nseen = 0, cap = 0;
    for (size_t k = 0; k < p->jobs.n; k++) {
        const cg_job *j = &p->jobs.v[k];
        if (!j->gated)
            continue;
        /* its template: one per phase (a constant path), or per job (a
         * path naming dimensions only) */
        const cg_template *tpl = p->job_templates ? p->job_templates[k] : NULL;
        if (!tpl && !j->tree->phases[j->phase].template_path.has_names && p->phase_templates &&
            p->phase_templates[j->tree->index])
            tpl = p->phase_templates[j->tree->index][j->phase];
        if (!tpl)
            continue;
        size_t s = 0;
        while (s < nseen && seen[s] != tpl)
            s++;
        if (s < nseen)
            continue;
        cg_grow(&seen, &cap, nseen + 1, sizeof *seen);
        seen[nseen++] = tpl;
        int id = cg_tree_builtin(tpl->tree, CG_B_ON_REQUEST);
        if (node_uses(&tpl->invoke, id) || node_uses(&tpl->args, id))
            continue;
        int w = 0;
        while (!(j->gated & ((uint64_t)1 << w)))
            w++;
        cg_pos at = cg_doc_key_where(tpl->doc, tpl->invoke.path);
        cg_lint_add(l, false, "on-request-unused", &at, NULL, NULL, (int)k, w,
                    "job '%s' runs on request in workflow '%s', but %s never passes '{{ on_request }}', so the job "
                    "cannot tell and runs in full on every push; pass it to a job parameter that skips the work "
                    "unless asked (on_request: \"{{ on_request }}\")", j->name, p->manifest.workflows[w].name,
                    tpl->is_default ? "its phase has no template, and so" : "its template");
    }
    free(seen);
}
