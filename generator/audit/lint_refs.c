/* lint_refs — the `<< name >>` references CircleCI fills in when it
 * compiles the config: `<< pipeline.parameters.X >>` names a parameter
 * declared under a fragment's top-level `parameters:`, `<< pipeline.X >>`
 * one of the pipeline values CircleCI documents, and `<< parameters.X >>`
 * inside a job, command or executor one of that definition's parameters.
 * CircleCI refuses the config otherwise ("Unknown variable(s): ...").
 * Other names (`<< matrix.X >>`, an orb's own) are left to CircleCI. */
#include "audit/lint.h"
#include "audit/lint_impl.h"

#include "base/text.h"

/* The pipeline values of https://circleci.com/docs/pipeline-variables/ */
static const char *const pipeline_values[] = {
    "pipeline.id", "pipeline.number", "pipeline.name", "pipeline.project.git_url", "pipeline.project.type",
    "pipeline.git.tag", "pipeline.git.branch", "pipeline.git.branch.is_default", "pipeline.git.revision",
    "pipeline.git.base_revision", "pipeline.git.repo_id", "pipeline.git.repo_name", "pipeline.git.repo_owner",
    "pipeline.git.repo_url", "pipeline.git.ssh_checkout_url", "pipeline.in_setup", "pipeline.trigger_source",
    "pipeline.schedule.name", "pipeline.schedule.id", "pipeline.project.slug", "pipeline.definition.id",
    "pipeline.integration_source"};
/* ... and the families whose members depend on the trigger and the VCS */
static const char *const pipeline_families[] = {
    "pipeline.git.commit.", "pipeline.trigger.", "pipeline.trigger_parameters.", "pipeline.event.",
    "pipeline.config.", "pipeline.deploy."};

static bool known_pipeline_value(const char *name)
{
    if (one_of(name, pipeline_values, CG_ARRAY_LEN(pipeline_values)))
        return true;
    for (size_t i = 0; i < CG_ARRAY_LEN(pipeline_families); i++)
        if (strncmp(name, pipeline_families[i], strlen(pipeline_families[i])) == 0 &&
            name[strlen(pipeline_families[i])])
            return true;
    return false;
}

static bool name_char(char c)
{
    return cg_isalnum(c) || c == '_' || c == '-' || c == '.';
}

/* One reference, `name` (trimmed), written in a string at `pos`. */
static void check_ref(cg_lint *l, const char *name, const cg_pos *pos, const cg_ref_scope *sc, int job, int wf,
                      const cg_pos *note_pos, const char *note)
{
    static const char pp[] = "pipeline.parameters.", p[] = "parameters.";
    cg_strbuf h = CG_STRBUF_INIT;
    if (strncmp(name, pp, sizeof pp - 1) == 0) {
        const char *k = name + sizeof pp - 1;
        if (!json_object_get(l->pipeline_params, k)) {
            cg_lint_param_hint(&h, k, l->pipeline_params);
            cg_lint_add(l, true, "undeclared-pipeline-parameter", pos, note_pos, note, job, wf,
                        "'<< %s >>' names pipeline parameter '%s', which no fragment declares under its top-level "
                        "'parameters:'%s", name, k, cg_strbuf_str(&h));
        }
    } else if (strncmp(name, "pipeline.", 9) == 0) {
        if (!known_pipeline_value(name)) {
            cg_did_you_mean(&h, name, pipeline_values, CG_ARRAY_LEN(pipeline_values));
            /* CircleCI refuses a name it does not know; but it adds values
             * now and then, and this list may lag behind: an error when the
             * name is a near miss of a known one (a typo), else a warning */
            cg_lint_add(l, h.len > 0, "unknown-pipeline-value", pos, note_pos, note, job, wf,
                        "'<< %s >>' is not one of the pipeline values CircleCI documents; it refuses a config "
                        "naming one it does not know%s", name, cg_strbuf_str(&h));
        }
    } else if (sc && strncmp(name, p, sizeof p - 1) == 0 && !strchr(name + sizeof p - 1, '.')) {
        const char *k = name + sizeof p - 1;
        if (!json_object_get(sc->params, k)) {
            cg_lint_param_hint(&h, k, sc->params);
            cg_lint_add(l, true, "undeclared-parameter", pos, note_pos, note, job, wf,
                        "'<< %s >>' names no parameter of %s '%s'%s", name, sc->what, sc->name,
                        cg_strbuf_str(&h));
        }
    }
    cg_strbuf_release(&h);
}

void cg_lint_refs(cg_lint *l, const char *s, const cg_pos *pos, const cg_ref_scope *sc, int job, int wf,
                  const cg_pos *note_pos, const char *note)
{
    cg_strbuf name = CG_STRBUF_INIT;
    for (const char *open = strstr(s, "<<"); open; open = strstr(open, "<<")) {
        /* `\<<` is CircleCI's escape: written as `<<`, not filled in */
        if (open > s && open[-1] == '\\') {
            open += 2;
            continue;
        }
        const char *b = open + 2, *e = strstr(b, ">>");
        if (!e)
            break;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        const char *end = e;
        while (end > b && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        const char *c = b;
        while (c < end && name_char(*c))
            c++;
        if (c == end && end > b) {
            cg_strbuf_reset(&name);
            cg_strbuf_add(&name, b, (size_t)(end - b));
            check_ref(l, name.buf, pos, sc, job, wf, note_pos, note);
        }
        open = e + 2;
    }
    cg_strbuf_release(&name);
}

/* Every string under v (keys aside), at `path` of doc. */
static void walk(cg_lint *l, json_t *v, const cg_doc *doc, cg_strbuf *path, const cg_ref_scope *sc)
{
    size_t len = path->len;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strstr(s, "<<")) {
            cg_pos at = cg_doc_where(doc, cg_strbuf_str(path));
            cg_lint_refs(l, s, &at, sc, -1, -1, NULL, NULL);
        }
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            cg_path_push_key(path, k);
            walk(l, x, doc, path, sc);
            cg_strbuf_truncate(path, len);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            cg_path_push_index(path, i);
            walk(l, json_array_get(v, i), doc, path, sc);
            cg_strbuf_truncate(path, len);
        }
    }
}

/* A template's constant text below its arguments' mappings and lists (a
 * scalar argument is checked as each job's entry is rendered, with what
 * its placeholders gave). */
static void walk_template(cg_lint *l, const cg_template *tpl, const cg_tpl_node *n)
{
    if (n->kind == 'v') {
        if (n->ctext && strstr(n->ctext, "<<")) {
            cg_pos at = cg_doc_where(tpl->doc, n->path);
            cg_lint_refs(l, n->ctext, &at, NULL, -1, -1, NULL, NULL);
        }
        return;
    }
    for (size_t i = n->kind == 'm' ? 1 : 0; i < n->nkids; i += n->kind == 'm' ? 2 : 1)
        walk_template(l, tpl, &n->kids[i]);
}

static int by_file(const void *a, const void *b)
{
    const cg_template *x = *(const cg_template *const *)a, *y = *(const cg_template *const *)b;
    int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
    return c ? c : (x < y ? -1 : x > y);
}

void cg_lint_check_templates_refs(cg_lint *l)
{
    const cg_map *m = &l->p->templates;
    const cg_template **v = cg_xmalloc((m->len + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (cg_map_key_at(m, i)) {
            const cg_template *t = m->slots[i].val;
            bool seen = false;
            for (size_t j = 0; j < n && !seen; j++)
                seen = v[j]->doc == t->doc;
            if (t && !t->is_default && !seen)
                v[n++] = t;
        }
    qsort(v, n, sizeof *v, by_file);
    for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a + 1 < v[i]->args.nkids; a += 2)
            if (v[i]->args.kids[a + 1].kind != 'v')
                walk_template(l, v[i], &v[i]->args.kids[a + 1]);
    free(v);
}

void cg_lint_check_refs(cg_lint *l)
{
    const cg_model *p = l->p;
    static const char *const sections[] = {"jobs", "commands", "executors"};
    static const char *const whats[] = {"job", "command", "executor"};
    cg_strbuf path = CG_STRBUF_INIT;
    for (size_t f = 0; f < p->nfragments; f++) {
        const cg_doc *doc = p->fragments[f].doc;
        const char *k;
        json_t *v;
        json_object_foreach(cg_doc_root(doc), k, v) {
            /* an inline orb's definitions name its own parameters */
            if (cg_streq(k, "orbs"))
                continue;
            cg_strbuf_reset(&path);
            cg_path_push_key(&path, k);
            size_t s = 0;
            while (s < CG_ARRAY_LEN(sections) && !cg_streq(k, sections[s]))
                s++;
            if (s == CG_ARRAY_LEN(sections) || !json_is_object(v)) {
                walk(l, v, doc, &path, NULL);
                continue;
            }
            size_t len = path.len;
            const char *name;
            json_t *def;
            json_object_foreach(v, name, def) {
                json_t *params = json_object_get(def, "parameters");
                cg_ref_scope sc = {json_is_object(params) ? params : NULL, whats[s], name};
                cg_path_push_key(&path, name);
                walk(l, def, doc, &path, &sc);
                cg_strbuf_truncate(&path, len);
            }
        }
    }
    /* the manifest's workflows' `when` and static entries, written to the
     * config as they are (a selection's copy is its original: once) */
    const cg_manifest *m = &p->manifest;
    for (size_t w = 0; w < m->nworkflows; w++) {
        if (!m->workflows[w].when)
            continue;
        cg_path_join_key(&path, m->workflows[w].path, "when");
        walk(l, m->workflows[w].when, p->manifest_doc, &path, NULL);
    }
    for (size_t i = 0; i < p->nstatics; i++) {
        const cg_static_job *sj = &p->statics[i];
        if (sj->culled || sj->origin != sj->workflow)
            continue;
        cg_strbuf_reset(&path);
        cg_strbuf_adds(&path, sj->path);
        walk(l, sj->entry, p->manifest_doc, &path, NULL);
    }
    cg_strbuf_release(&path);
}
