/* The special-PR selection in force, applied to the jobs of the model
 * (model/cull.h). */
#include "model/cull.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/fsio.h"
#include "lang/schema.h"
#include "model/query.h"

static void copy_selection(cg_special *to, const cg_special *from, const char *source)
{
    for (size_t i = 0; i < from->nonly; i++)
        cg_special_add(to, true, from->only[i], &from->only_pos[i]);
    for (size_t i = 0; i < from->nalso; i++)
        cg_special_add(to, false, from->also[i], &from->also_pos[i]);
    free(to->source);
    to->source = cg_xstrdup(from->source ? from->source : source);
    free(to->branch);
    to->branch = from->branch ? cg_xstrdup(from->branch) : NULL;
    to->allow_protected = from->allow_protected;
}

static int load_selection_from(cg_model *p, cg_error *err);

/* The selection in force: flags, --overlay, special-pr.yml, or the fallback;
 * --allow-protected and --pr-branch apply to any of them. */
static int load_selection(cg_model *p, cg_error *err)
{
    if (load_selection_from(p, err) != 0)
        return -1;
    const cg_special *f = p->opt.selection;
    if (f && f->allow_protected)
        p->selection.allow_protected = true;
    if (f && f->branch) {
        free(p->selection.branch);
        p->selection.branch = cg_xstrdup(f->branch);
    }
    const char *why = p->selection.branch ? cg_branch_name_problem(p->selection.branch) : NULL;
    if (why)
        return cg_error_plain(err, "the pull request's branch is not a git branch name: %s", why);
    return 0;
}

static int load_selection_from(cg_model *p, cg_error *err)
{
    const cg_options *o = &p->opt;
    if (o->selection && !cg_special_empty(o->selection)) {
        copy_selection(&p->selection, o->selection, "the command line");
        return 0;
    }
    const char *file = o->overlay ? o->overlay : o->no_overlay ? NULL : CG_DEFAULT_OVERLAY;
    if (file) {
        char *data = NULL;
        size_t len = 0;
        cg_pos ref = {0};
        if (cg_check_project_path(file, &ref, "the overlay path", err) != 0)
            return -1;
        int r = cg_model_read_source(p, file, &ref, &data, &len, o->overlay == NULL, err);
        if (r < 0)
            return -1;
        if (r == 0) {
            int rc = cg_special_parse(&p->selection, file, data, len, err);
            free(data);
            return rc;
        }
    }
    if (o->fallback && !cg_special_empty(o->fallback))
        copy_selection(&p->selection, o->fallback, "the header of the committed config");
    return 0;
}

static int pattern_error(cg_error *err, const cg_special *s, bool only, size_t i, const char *what)
{
    const cg_pos *pos = only ? &s->only_pos[i] : &s->also_pos[i];
    const char *pat = only ? s->only[i] : s->also[i];
    if (pos->file)
        return cg_error_at(err, pos, "'%s' %s", pat, what);
    return cg_error_plain(err, "--%s '%s' %s", only ? "only" : "also", pat, what);
}

/* The static entries of every workflow, as the manifest lists them. */
static void collect_statics(cg_model *p)
{
    const cg_manifest *m = &p->manifest;
    if (p->statics)
        return; /* cigen select collected them before its rules */
    size_t n = 0;
    for (size_t w = 0; w < m->nworkflows; w++)
        n += m->workflows[w].jobs ? json_array_size(m->workflows[w].jobs) : 0;
    /* room for a copy of each in the per-change workflow */
    p->statics = cg_xcalloc(2 * n + 1, sizeof *p->statics);
    cg_strbuf path = CG_STRBUF_INIT, sub = CG_STRBUF_INIT;
    for (size_t w = 0; w < m->nworkflows; w++) {
        const cg_workflow_decl *wd = &m->workflows[w];
        for (size_t i = 0; wd->jobs && i < json_array_size(wd->jobs); i++) {
            cg_static_job *sj = &p->statics[p->nstatics++];
            json_t *e = json_array_get(wd->jobs, i);
            cg_strbuf_reset(&path);
            cg_strbuf_adds(&path, wd->path);
            cg_strbuf_adds(&path, "/jobs");
            cg_path_push_index(&path, i);
            sj->path = cg_pool_strndup(&p->pool, path.buf, path.len);
            sj->pos = cg_doc_where(m->doc, path.buf);
            sj->entry = e;
            sj->workflow = sj->origin = (uint32_t)w;
            sj->index = (uint32_t)i;
            json_t *args = NULL;
            if (json_is_string(e)) {
                sj->invokes = sj->name = json_string_value(e);
            } else {
                const char *k = json_object_iter_key(json_object_iter(e));
                args = json_object_iter_value(json_object_iter(e));
                sj->invokes = sj->name = k;
                json_t *nm = json_is_object(args) ? json_object_get(args, "name") : NULL;
                if (json_is_string(nm))
                    sj->name = json_string_value(nm);
                cg_path_join_key(&sub, path.buf, k);
                cg_strbuf_reset(&path);
                cg_strbuf_adds(&path, sub.buf);
            }
            json_t *req = json_is_object(args) ? json_object_get(args, "requires") : NULL;
            /* a list of names and {name: status}; any other shape is a lint error */
            size_t nr = json_array_size(req);
            sj->requires = cg_pool_alloc(&p->pool, (nr + 1) * sizeof *sj->requires);
            bool *opt = NULL;
            for (size_t r = 0; r < nr; r++) {
                const char *need = cg_requires_item_name(json_array_get(req, r));
                size_t len = need ? strlen(need) : 0;
                if (len > 1 && need[len - 1] == '?') { /* `name?`: only where that job is written */
                    if (!opt) {
                        opt = cg_pool_alloc(&p->pool, nr + 1);
                        memset(opt, 0, nr + 1);
                    }
                    opt[sj->nrequires] = true;
                    need = cg_internn(&p->pool, need, len - 1);
                }
                if (need)
                    sj->requires[sj->nrequires++] = need;
            }
            sj->requires_optional = opt;
            json_t *ctx = json_is_object(args) ? json_object_get(args, "context") : NULL;
            if (ctx) {
                json_t *first = json_is_array(ctx) ? json_array_get(ctx, 0) : ctx;
                sj->context = json_is_string(first) ? json_string_value(first) : "(a context)";
                cg_path_join_key(&sub, path.buf, "context");
                sj->context_pos = cg_doc_where(m->doc, sub.buf);
            }
        }
    }
    cg_strbuf_release(&path);
    cg_strbuf_release(&sub);
}

/* A node of the job graph: a generated job (< njobs) or a static entry. */
typedef struct graph {
    cg_model *p;
    const cg_special *s;
    size_t njobs;
    uint64_t *orig;          /* [njobs] the workflows before the selection */
    uint64_t *mask;          /* [njobs] after */
    size_t *parent;          /* [njobs + nstatics cap] in the per-change workflow: who needed it (SIZE_MAX: selected) */
    size_t *stack;           /* (node, workflow) pairs */
    size_t n, cap;
    bool only;
    cg_error *err;
} graph;

static const char *node_name(const graph *g, size_t node)
{
    return node < g->njobs ? g->p->jobs.v[node].name : g->p->statics[node - g->njobs].name;
}

static cg_mark *node_mark(graph *g, size_t node)
{
    return node < g->njobs ? &g->p->marks[node] : &g->p->statics[node - g->njobs].mark;
}

/* The node named `name` written in workflow w, or SIZE_MAX. */
static size_t find_in(const graph *g, size_t w, const char *name)
{
    for (size_t i = 0; i < g->p->nstatics; i++)
        if (g->p->statics[i].workflow == w && cg_streq(g->p->statics[i].name, name))
            return g->njobs + i;
    const cg_job *j = cg_jobs_find(&g->p->jobs, name);
    if (j && ((g->orig[j->index] | g->mask[j->index]) & ((uint64_t)1 << w)))
        return j->index;
    return SIZE_MAX;
}

/* Why a node is protected (its context, or the manifest's glob), or NULL. */
static const char *protection(graph *g, size_t node, cg_pos *where, cg_strbuf *why)
{
    const cg_model *p = g->p;
    const cg_manifest *m = &p->manifest;
    const char *name = node_name(g, node);
    if (node >= g->njobs && p->statics[node - g->njobs].context) {
        const cg_static_job *sj = &p->statics[node - g->njobs];
        *where = sj->context_pos;
        cg_strbuf_addf(why, "runs with context '%s' (credentials)", sj->context);
        return why->buf;
    }
    if (node < g->njobs) {
        const cg_job *j = &p->jobs.v[node];
        cg_env env;
        cg_env_init(&env, j->tree, g->err);
        const cg_template *tpl = cg_model_bind_job(p, &env, j, -1) == 0 ? cg_model_template(p, j, &env, g->err) : NULL;
        cg_env_release(&env);
        for (size_t i = 0; tpl && i < tpl->args.nkids; i += 2) {
            const cg_tpl_node *k = &tpl->args.kids[i];
            if (k->text.nsegs == 1 && cg_streq(k->text.segs[0].text, "context")) {
                *where = cg_doc_where(tpl->doc, k->path);
                const cg_tpl_node *v = &tpl->args.kids[i + 1];
                if (v->kind == 'v' && v->text.nsegs == 1 && v->text.segs[0].kind == CG_SEG_TEXT)
                    cg_strbuf_addf(why, "runs with context '%s' (credentials)", v->text.segs[0].text);
                else
                    cg_strbuf_adds(why, "runs with a context (credentials)");
                return why->buf;
            }
        }
    }
    for (size_t i = 0; i < m->nprotected; i++) {
        const char *inv = node >= g->njobs ? p->statics[node - g->njobs].invokes : NULL;
        if (fnmatch(m->protected[i], name, 0) == 0 || (inv && fnmatch(m->protected[i], inv, 0) == 0)) {
            *where = m->protected_pos[i];
            cg_strbuf_addf(why, "is protected ('%s' in 'protected')", m->protected[i]);
            return why->buf;
        }
    }
    return NULL;
}

static void pattern_text(const cg_special *s, int32_t i, cg_strbuf *out)
{
    if ((size_t)i >= s->nonly + s->nalso) {
        cg_strbuf_addf(out, "the pipeline's rules, '%s'", s->stay[(size_t)i - s->nonly - s->nalso]);
        return;
    }
    bool only = (size_t)i < s->nonly;
    const char *pat = only ? s->only[i] : s->also[(size_t)i - s->nonly];
    const cg_pos *pos = only ? &s->only_pos[i] : &s->also_pos[(size_t)i - s->nonly];
    if (pos->file)
        cg_strbuf_addf(out, "'%s' (%s:%u)", pat, pos->file, pos->line);
    else
        cg_strbuf_addf(out, "--%s '%s'", only ? "only" : "also", pat);
}

/* Puts a node into workflow w (if it is not there yet); `parent` needed it.
 * `lift`: as a special PR's job, into the per-change workflow without its
 * filters; else where it is, as written (cigen select's picks). */
static int visit(graph *g, size_t node, size_t w, size_t parent, bool lift)
{
    cg_model *p = g->p;
    bool pr = lift && (int)w == p->per_change;
    uint64_t bit = (uint64_t)1 << w;
    if (node < g->njobs) {
        cg_job *j = &p->jobs.v[node];
        if ((g->mask[node] & bit) && (!pr || (j->special & bit)))
            return 0;
        g->mask[node] |= bit;
        if (pr)
            j->special |= bit;
        if (pr || g->s->runs)
            j->gated &= ~bit; /* picked to run: it does not halt */
    } else {
        cg_static_job *sj = &p->statics[node - g->njobs];
        if (!sj->culled && (!pr || sj->lift))
            return 0;
        sj->culled = false;
        sj->lift = pr;
    }
    cg_mark *mk = node_mark(g, node);
    if (parent != SIZE_MAX && mk->kind == CG_MARK_NONE) {
        mk->kind = CG_MARK_PULLED;
        mk->by = node_name(g, parent);
    }
    if (pr) {
        g->parent[node] = parent;
        /* credentials never come along by a requirement */
        cg_strbuf why = CG_STRBUF_INIT;
        cg_pos where = {0};
        /* named by a special PR: runs with credentials only when allowed
         * (a commit message never allows it) */
        if (mk->kind == CG_MARK_SELECTED && !g->s->allow_protected && protection(g, node, &where, &why)) {
            cg_strbuf pt = CG_STRBUF_INIT;
            pattern_text(g->s, mk->pattern, &pt);
            bool message = g->s->source && cg_streq(g->s->source, "the commit message");
            size_t pi = (size_t)mk->pattern;
            bool only = pi < g->s->nonly;
            int rc = message ? cg_error_at(g->err, &where, "'%s' %s: the commit message's [ci %s: %s] reaches it, and "
                                           "a commit message never runs a job with credentials on a pull request's "
                                           "branch", node_name(g, node), why.buf, only ? "only" : "also",
                                           only ? g->s->only[pi] : g->s->also[pi - g->s->nonly])
                             : cg_error_at(g->err, &where, "'%s' %s: %s selects it, and a special PR runs a job with "
                                           "credentials on the pull request's branch only when allowed: pass "
                                           "--allow-protected (allow_protected: true in %s)", node_name(g, node),
                                           why.buf, pt.buf, CG_DEFAULT_OVERLAY);
            cg_strbuf_release(&pt);
            cg_strbuf_release(&why);
            return rc;
        }
        if (mk->kind == CG_MARK_PULLED && !g->s->allow_protected && protection(g, node, &where, &why)) {
            cg_strbuf chain = CG_STRBUF_INIT;
            size_t root = node;
            while (g->parent[root] != SIZE_MAX)
                root = g->parent[root];
            cg_strbuf_addf(&chain, "'%s' (selected by ", node_name(g, root));
            pattern_text(g->s, node_mark(g, root)->pattern, &chain);
            cg_strbuf_adds(&chain, ")");
            /* the chain from the selected job down to this one */
            size_t path[64], n = 0;
            for (size_t x = node; x != root && n < 64; x = g->parent[x])
                path[n++] = x;
            while (n)
                cg_strbuf_addf(&chain, " requires '%s'", node_name(g, path[--n]));
            int rc = cg_error_at(g->err, &where, "'%s' %s: a special-PR selection does not pull it into the pull "
                                 "request; %s. Select it by name, or allow it with --allow-protected "
                                 "(allow_protected: true in %s)", node_name(g, node), why.buf, chain.buf,
                                 CG_DEFAULT_OVERLAY);
            cg_strbuf_release(&why);
            cg_strbuf_release(&chain);
            return rc;
        }
        cg_strbuf_release(&why);
    }
    cg_grow(&g->stack, &g->cap, g->n + 3, sizeof *g->stack);
    g->stack[g->n++] = node;
    g->stack[g->n++] = w;
    g->stack[g->n++] = lift;
    return 0;
}

/* A copy of static entry i in the per-change workflow (or the entry of
 * that name already there). */
static size_t static_in_pr(graph *g, size_t i)
{
    cg_model *p = g->p;
    size_t have = find_in(g, (size_t)p->per_change, p->statics[i].name);
    if (have != SIZE_MAX)
        return have;
    cg_static_job *c = &p->statics[p->nstatics++];
    *c = p->statics[i];
    c->workflow = (uint32_t)p->per_change;
    c->culled = true; /* until visited */
    c->lift = false;
    c->mark = (cg_mark){CG_MARK_NONE, -1, NULL};
    return g->njobs + (size_t)(c - p->statics);
}

/* Everything the nodes on the stack require, into their workflows. */
static int close_requires(graph *g)
{
    cg_model *p = g->p;
    while (g->n) {
        bool lift = g->stack[--g->n] != 0;
        size_t w = g->stack[--g->n], node = g->stack[--g->n];
        const char **req;
        uint32_t nreq;
        if (node < g->njobs) {
            req = p->jobs.v[node].requires;
            nreq = p->jobs.v[node].nrequires;
        } else {
            req = p->statics[node - g->njobs].requires;
            nreq = p->statics[node - g->njobs].nrequires;
        }
        for (uint32_t r = 0; r < nreq; r++) {
            if (node < g->njobs ? cg_job_require_optional(&p->jobs.v[node], r)
                                : cg_static_require_optional(&p->statics[node - g->njobs], r))
                continue; /* `name?` pulls nothing in: it is dropped where its job is not written */
            size_t dep = find_in(g, w, req[r]);
            if (dep == SIZE_MAX && lift && (int)w == p->per_change) {
                /* not in the per-change workflow: a generated job, or a static
                 * entry of another workflow, comes along */
                const cg_job *j = cg_jobs_find(&p->jobs, req[r]);
                if (j)
                    dep = j->index;
                for (size_t i = 0; dep == SIZE_MAX && i < p->nstatics; i++)
                    if (cg_streq(p->statics[i].name, req[r]))
                        dep = static_in_pr(g, i);
            }
            if (dep == SIZE_MAX)
                continue; /* lint names the requirement no workflow has */
            if (visit(g, dep, w, node, lift) != 0)
                return -1;
        }
    }
    return 0;
}

/* Puts the selected jobs (and what they require) into the per-change
 * workflow, ungated and with their filters lifted; with `only`, culls
 * everything else, static entries included. */
/* The job name a query names exactly (one job-name term, no wildcard),
 * unescaped into out; false for any other pattern.  Such a query is looked
 * up by name instead of matched against every job: `cigen select` names
 * each job it picks, and a maintainer may list many. */
static bool literal_name(const cg_query *q, cg_strbuf *out)
{
    if (q->n != 1 || q->groups[0].n != 1)
        return false;
    const cg_qterm *t = &q->groups[0].terms[0];
    if ((t->name && !cg_streq(t->name, "job")) || t->negate)
        return false;
    cg_strbuf_reset(out);
    for (const char *c = t->glob; *c; c++) {
        if (*c == '\\' && c[1])
            c++;
        else if (strchr("*?[", *c))
            return false;
        cg_strbuf_addc(out, *c);
    }
    return true;
}

static int apply_selection(cg_model *p, cg_error *err)
{
    const cg_special *s = &p->selection;
    const cg_manifest *m = &p->manifest;
    collect_statics(p);
    if (cg_special_empty(s) && !s->runs)
        return 0;
    if (p->per_change < 0 && !cg_special_empty(s))
        return cg_error_plain(err, "a special-PR selection (from %s) needs a workflow marked 'per_change: true' "
                              "in %s", s->source, p->opt.manifest);
    const cg_workflow_decl *pwd = p->per_change >= 0 ? &m->workflows[p->per_change] : NULL;
    if (pwd && pwd->schedule && !cg_special_empty(s))
        return cg_error_at(err, &pwd->schedule_pos, "the per-change workflow '%s' runs on a schedule, never on a "
                           "pull request's branch: a special-PR selection cannot run anything there", pwd->name);
    size_t nnamed = s->nonly + s->nalso, ngroups = nnamed + s->nstay;
    cg_query *q = cg_xcalloc(ngroups + 1, sizeof *q);
    int rc = 0;
    for (size_t i = 0; i < ngroups && rc == 0; i++) {
        bool only = i < s->nonly;
        size_t k = only ? i : i - s->nonly;
        cg_query_init(&q[i]);
        if (i >= nnamed) { /* cigen select's picks: job=NAME, quoted */
            if (cg_query_add(&q[i], s->stay[i - nnamed]) != 0)
                rc = cg_error_plain(err, "internal: '%s' is not a pattern", s->stay[i - nnamed]);
            continue;
        }
        const char *pat = only ? s->only[k] : s->also[k];
        const cg_pos *pos = only ? &s->only_pos[k] : &s->also_pos[k];
        /* the header records it on a comment line; its text stays out of the message */
        if (cg_line_breaker(pat, NULL) && pos->file)
            rc = cg_error_at(err, pos, "a pattern holds a control character or a line break");
        else if (cg_line_breaker(pat, NULL))
            rc = cg_error_plain(err, "an --%s pattern holds a control character or a line break",
                                only ? "only" : "also");
        else if (cg_query_add(&q[i], pat) != 0)
            rc = pattern_error(err, s, only, k, "is not a pattern (NAME=GLOB,... or a job-name glob)");
        else if (cg_query_check_names(&q[i], p, pos, err) != 0)
            rc = -1;
    }
    /* A pattern of dimension values selects only the jobs of phases that run
     * on pull requests (that land in the per-change workflow); upload or
     * smoke jobs must be named: by phase=..., or by a job-name glob. */
    bool *explicit_phase = cg_xcalloc(ngroups + 1, sizeof *explicit_phase);
    for (size_t i = 0; i < ngroups; i++)
        for (size_t t = 0; rc == 0 && t < q[i].groups[0].n; t++) {
            const char *name = q[i].groups[0].terms[t].name;
            explicit_phase[i] = explicit_phase[i] || !name || cg_streq(name, "phase") || cg_streq(name, "job");
        }
    size_t nstatic0 = p->nstatics;
    p->marks = cg_xcalloc(p->jobs.n + 1, sizeof *p->marks);
    for (size_t k = 0; k < p->jobs.n; k++)
        p->marks[k].pattern = -1;
    for (size_t i = 0; i < nstatic0; i++)
        p->statics[i].mark.pattern = -1;
    size_t *hits = cg_xcalloc(ngroups + 1, sizeof *hits), *ineligible = cg_xcalloc(ngroups + 1, sizeof *ineligible);
    cg_env *envs = cg_xcalloc(p->ntrees + 1, sizeof *envs);
    for (size_t t = 0; t < p->ntrees; t++)
        cg_env_init(&envs[t], p->trees[t], err);
    /* exact names first: a lookup each; the first pattern that selects a job marks it */
    bool *literal = cg_xcalloc(ngroups + 1, sizeof *literal);
    cg_strbuf lit = CG_STRBUF_INIT;
    for (size_t i = 0; i < ngroups && rc == 0; i++) {
        if (!(literal[i] = literal_name(&q[i], &lit)))
            continue;
        const cg_job *j = cg_jobs_find(&p->jobs, cg_strbuf_str(&lit));
        if (!j)
            continue;
        size_t k = (size_t)(j - p->jobs.v);
        if (p->marks[k].kind == CG_MARK_NONE || p->marks[k].pattern > (int32_t)i)
            p->marks[k] = (cg_mark){CG_MARK_SELECTED, (int32_t)i, NULL};
        hits[i]++;
    }
    cg_strbuf_release(&lit);
    for (size_t k = 0; k < p->jobs.n && rc == 0; k++) {
        const cg_job *j = &p->jobs.v[k];
        cg_env *env = &envs[j->tree->index];
        if (cg_model_bind_job(p, env, j, -1) != 0) {
            rc = -1;
            break;
        }
        const cg_phase *ph = &j->tree->phases[j->phase];
        bool runs_on_prs = false;
        for (size_t w = 0; w < ph->nworkflows; w++)
            runs_on_prs = runs_on_prs || ph->workflows[w] == p->per_change;
        for (size_t i = 0; i < ngroups; i++) {
            if (literal[i])
                continue;
            int mt = cg_query_match(&q[i], p, j, env);
            if (mt < 0)
                rc = -1;
            if (mt == 1 && !runs_on_prs && !explicit_phase[i])
                ineligible[i]++;
            else if (mt == 1) {
                if (p->marks[k].kind == CG_MARK_NONE || p->marks[k].pattern > (int32_t)i)
                    p->marks[k] = (cg_mark){CG_MARK_SELECTED, (int32_t)i, NULL};
                hits[i]++;
            }
        }
    }
    /* static entries are reached by their name, or the job they invoke */
    for (size_t e = 0; e < nstatic0 && rc == 0; e++) {
        cg_static_job *sj = &p->statics[e];
        const char *wname = m->workflows[sj->workflow].name;
        bool any = false, by_name = false;
        for (size_t i = 0; i < ngroups; i++)
            if (q[i].n == 1 && cg_qgroup_match_static(&q[i].groups[0], sj->name, i < nnamed ? sj->invokes : NULL,
                                                      wname, i < nnamed ? sj->entry : NULL)) {
                if (sj->mark.kind == CG_MARK_NONE)
                    sj->mark = (cg_mark){CG_MARK_SELECTED, (int32_t)i, NULL};
                hits[i]++;
                any = true;
                /* by its name or the values it passes, not the job it runs */
                by_name = by_name || cg_qgroup_match_static(&q[i].groups[0], sj->name, NULL, wname, sj->entry);
            }
        sj->by_its_job = any && !by_name;
    }
    for (size_t i = 0; i < ngroups && rc == 0; i++)
        if (!hits[i])
            rc = i >= nnamed ? cg_error_plain(err, "internal: '%s' names no job", s->stay[i - nnamed])
                 : pattern_error(err, s, i < s->nonly, i < s->nonly ? i : i - s->nonly,
                               ineligible[i] ? "selects only jobs of phases that do not run on pull requests "
                                               "(name them to run them: add phase=NAME, or use a job-name glob)"
                                             : "selects no job");
    graph g = {p, s, p->jobs.n, NULL, NULL, NULL, NULL, 0, 0, s->nonly > 0 || s->runs, err};
    if (rc == 0) {
        g.orig = cg_xcalloc(p->jobs.n + 1, sizeof *g.orig);
        g.mask = cg_xcalloc(p->jobs.n + 1, sizeof *g.mask);
        g.parent = cg_xcalloc(p->jobs.n + 2 * nstatic0 + 1, sizeof *g.parent);
        for (size_t k = 0; k < p->jobs.n; k++) {
            g.orig[k] = p->jobs.v[k].workflows;
            g.mask[k] = g.only ? 0 : g.orig[k];
        }
        for (size_t i = 0; i < nstatic0; i++)
            p->statics[i].culled = g.only;
        /* selected jobs: where they were (with --only, what they need there
         * too), and in the per-change workflow */
        for (size_t k = 0; k < p->jobs.n && rc == 0; k++) {
            if (p->marks[k].kind != CG_MARK_SELECTED)
                continue;
            /* cigen select's picks run where CircleCI runs them, as written */
            bool stay = (size_t)p->marks[k].pattern >= nnamed;
            for (size_t w = 0; g.only && w < m->nworkflows && rc == 0; w++)
                if ((g.orig[k] & ((uint64_t)1 << w)) && (stay || (int)w != p->per_change) &&
                    (!s->runs || s->runs(s->runs_ctx, m->workflows[w].name, p->jobs.v[k].name)))
                    rc = visit(&g, k, w, SIZE_MAX, false);
            if (rc == 0 && !stay)
                rc = visit(&g, k, (size_t)p->per_change, SIZE_MAX, true);
        }
        for (size_t e = 0; e < nstatic0 && rc == 0; e++) {
            if (p->statics[e].mark.kind != CG_MARK_SELECTED)
                continue;
            bool stay = (size_t)p->statics[e].mark.pattern >= nnamed;
            const char *wname = m->workflows[p->statics[e].workflow].name;
            if (g.only && (stay || (int)p->statics[e].workflow != p->per_change) &&
                (!s->runs || s->runs(s->runs_ctx, wname, p->statics[e].name)))
                rc = visit(&g, g.njobs + e, p->statics[e].workflow, SIZE_MAX, false);
            if (rc == 0 && !stay) {
                size_t node = static_in_pr(&g, e);
                *node_mark(&g, node) = p->statics[e].mark;
                rc = visit(&g, node, (size_t)p->per_change, SIZE_MAX, true);
            }
        }
        /* the per-change workflow's `keep:` entries (its consistency check) stay */
        for (size_t i = 0; pwd && i < pwd->nkeep && rc == 0; i++) {
            size_t node = find_in(&g, (size_t)p->per_change, pwd->keep[i]);
            if (node == SIZE_MAX) {
                rc = cg_error_at(err, &pwd->keep_pos[i], "'%s' is not an entry of workflow '%s' (what 'keep' "
                                 "names must be one of its static 'jobs' or a job generated into it)",
                                 pwd->keep[i], pwd->name);
                break;
            }
            if (s->runs && !s->runs(s->runs_ctx, pwd->name, pwd->keep[i]))
                continue; /* CircleCI would not run it on this pipeline */
            if (node_mark(&g, node)->kind == CG_MARK_NONE)
                node_mark(&g, node)->kind = CG_MARK_KEPT;
            /* kept where it is: a special PR's copy is lifted, cigen select's is not */
            rc = visit(&g, node, (size_t)p->per_change, SIZE_MAX, !s->runs);
        }
        if (rc == 0)
            rc = close_requires(&g);
    }
    if (rc == 0) {
        /* what was culled, and why: a static entry whose requirement was
         * culled goes with it */
        for (size_t k = 0; k < p->jobs.n; k++) {
            cg_job *j = &p->jobs.v[k];
            j->workflows = g.mask[k];
            j->gated &= g.mask[k];
            if (!g.mask[k] && p->marks[k].kind == CG_MARK_NONE)
                p->marks[k].kind = CG_MARK_CULLED;
        }
        for (size_t e = 0; e < p->nstatics; e++) {
            cg_static_job *sj = &p->statics[e];
            if (!sj->culled || sj->mark.kind != CG_MARK_NONE)
                continue;
            sj->mark.kind = CG_MARK_CULLED;
            for (uint32_t r = 0; r < sj->nrequires && !sj->mark.by; r++) {
                if (cg_static_require_optional(sj, r))
                    continue; /* `name?` is dropped with its job, and culls nothing */
                const cg_job *dep = cg_jobs_find(&p->jobs, sj->requires[r]);
                if (dep && (g.orig[dep->index] & ((uint64_t)1 << sj->workflow)) &&
                    !(dep->workflows & ((uint64_t)1 << sj->workflow)))
                    sj->mark.by = dep->name;
                for (size_t o = 0; o < p->nstatics && !sj->mark.by; o++)
                    if (p->statics[o].workflow == sj->workflow && p->statics[o].culled &&
                        cg_streq(p->statics[o].name, sj->requires[r]))
                        sj->mark.by = p->statics[o].name;
            }
        }
        /* a workflow left without jobs is not written; none at all is an error */
        size_t left = 0;
        for (size_t w = 0; w < m->nworkflows; w++) {
            bool any = false;
            for (size_t k = 0; k < p->jobs.n && !any; k++)
                any = (p->jobs.v[k].workflows >> w) & 1;
            for (size_t e = 0; e < p->nstatics && !any; e++)
                any = p->statics[e].workflow == w && !p->statics[e].culled;
            if (!any)
                p->omitted |= (uint64_t)1 << w;
            else
                left++;
        }
        if (!left && m->nworkflows)
            rc = cg_error_plain(err, "the special-PR selection (from %s) leaves every workflow without jobs",
                                s->source);
    }
    free(g.orig);
    free(g.mask);
    free(g.parent);
    free(g.stack);
    for (size_t i = 0; i < ngroups; i++)
        cg_query_release(&q[i]);
    for (size_t t = 0; t < p->ntrees; t++)
        cg_env_release(&envs[t]);
    free(envs);
    free(q);
    free(hits);
    free(ineligible);
    free(literal);
    free(explicit_phase);
    return rc;
}

int cg_cull_load(cg_model *p, cg_error *err)
{
    return load_selection(p, err);
}

void cg_cull_collect_statics(cg_model *p)
{
    collect_statics(p);
}

int cg_cull_apply_loaded(cg_model *p, cg_error *err)
{
    return apply_selection(p, err);
}

int cg_cull_apply(cg_model *p, cg_error *err)
{
    if (load_selection(p, err) != 0)
        return -1;
    return apply_selection(p, err);
}
