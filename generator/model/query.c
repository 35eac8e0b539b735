#include "model/query.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"

static const char *const pseudo[] = {"phase", "tree", "workflow", "tier", "job"};

void cg_query_init(cg_query *q)
{
    memset(q, 0, sizeof *q);
}

void cg_query_release(cg_query *q)
{
    for (size_t i = 0; i < q->n; i++) {
        for (size_t t = 0; t < q->groups[i].n; t++) {
            free(q->groups[i].terms[t].name);
            free(q->groups[i].terms[t].glob);
        }
        free(q->groups[i].terms);
        free(q->groups[i].text);
    }
    free(q->groups);
    cg_query_init(q);
}

void cg_query_quote(cg_strbuf *out, const char *value)
{
    for (const char *c = value; *c; c++) {
        if (strchr("\\,*?[", *c) || (c == value && *c == '!'))
            cg_strbuf_addc(out, '\\');
        cg_strbuf_addc(out, *c);
    }
}

int cg_query_add(cg_query *q, const char *text)
{
    if (!*text)
        return -1;
    cg_qgroup g = {NULL, 0, cg_xstrdup(text)};
    size_t cap = 0;
    const char *p = text;
    while (1) {
        /* a backslash escapes the next character: a backslash-comma is a
         * comma of a value, not a separator (the glob keeps the backslash,
         * and fnmatch reads the pair as a literal comma) */
        const char *comma = p;
        while (*comma && *comma != ',')
            comma += comma[0] == '\\' && comma[1] ? 2 : 1;
        if (!*comma)
            comma = NULL;
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            goto bad;
        const char *eq = memchr(p, '=', len);
        cg_qterm t = {0};
        if (eq) {
            /* "!os=macos" is "os=!macos"; one '!' at most */
            bool neg_name = p[0] == '!';
            const char *v = eq + 1;
            size_t vl = len - (size_t)(v - p);
            bool neg_value = vl && v[0] == '!';
            if (eq == p + neg_name || (neg_name && neg_value))
                goto bad;
            t.name = cg_xstrndup(p + neg_name, (size_t)(eq - p) - neg_name);
            t.negate = neg_name || neg_value;
            t.glob = cg_xstrndup(v + neg_value, vl - neg_value);
        } else {
            t.negate = p[0] == '!';
            t.glob = cg_xstrndup(p + t.negate, len - t.negate);
        }
        cg_grow(&g.terms, &cap, g.n + 1, sizeof *g.terms);
        g.terms[g.n++] = t;
        if (!comma)
            break;
        p = comma + 1;
    }
    cg_grow(&q->groups, &q->cap, q->n + 1, sizeof *q->groups);
    q->groups[q->n++] = g;
    return 0;
bad:
    for (size_t i = 0; i < g.n; i++) {
        free(g.terms[i].name);
        free(g.terms[i].glob);
    }
    free(g.terms);
    free(g.text);
    return -1;
}

static bool glob(const char *pattern, const char *value);

/* Whether a job-name glob matches the name of a job or static entry of p
 * (true when the jobs are not kept: a walk cannot tell). */
static bool names_a_job(const cg_model *p, const char *g)
{
    if (p->walk)
        return true;
    for (size_t k = 0; k < p->jobs.n; k++)
        if (glob(g, p->jobs.v[k].name))
            return true;
    for (size_t k = 0; k < p->nstatics; k++)
        if (glob(g, p->statics[k].name) || (p->statics[k].invokes && glob(g, p->statics[k].invokes)))
            return true;
    return false;
}

/* A term without '=' after a NAME=GLOB one ("os=a,b") is a job-name glob:
 * one that names no job is most likely the rest of a value holding a comma,
 * which would select nothing without a word.  Said, with the escape. */
static int check_bare_terms(const cg_query *q, const cg_model *p, const cg_pos *pos, cg_error *err)
{
    for (size_t i = 0; i < q->n; i++) {
        const cg_qgroup *g = &q->groups[i];
        for (size_t t = 1; t < g->n; t++) {
            const cg_qterm *term = &g->terms[t], *before = &g->terms[t - 1];
            if (term->name || term->negate || !before->name || names_a_job(p, term->glob))
                continue;
            cg_strbuf fix = CG_STRBUF_INIT;
            cg_strbuf_addf(&fix, "%s%s=%s\\,%s", before->negate ? "!" : "", before->name, before->glob, term->glob);
#define BARE_TERM "'%s' in '%s' is not NAME=GLOB and matches no job name; a comma in a value is written '\\,' ('%s')"
            if (pos && pos->file)
                cg_error_at(err, pos, BARE_TERM, term->glob, g->text, fix.buf);
            else
                cg_error_plain(err, BARE_TERM, term->glob, g->text, fix.buf);
#undef BARE_TERM
            cg_strbuf_release(&fix);
            return -1;
        }
    }
    return 0;
}

int cg_query_check_names(const cg_query *q, const cg_model *p, const cg_pos *pos, cg_error *err)
{
    if (check_bare_terms(q, p, pos, err) != 0)
        return -1;
    for (size_t i = 0; i < q->n; i++) {
        for (size_t t = 0; t < q->groups[i].n; t++) {
            const char *name = q->groups[i].terms[t].name;
            if (!name)
                continue;
            bool known = false;
            for (size_t k = 0; k < CG_ARRAY_LEN(pseudo) && !known; k++)
                known = cg_streq(name, pseudo[k]);
            for (size_t k = 0; k < p->ntrees && !known; k++) {
                int id = cg_tree_name_id(p->trees[k], name);
                known = id >= 0 && (cg_tree_is_dim(p->trees[k], id) ||
                                    (size_t)id >= p->trees[k]->ndims + CG_NBUILTINS);
            }
            if (known)
                continue;
            size_t total = CG_ARRAY_LEN(pseudo);
            for (size_t k = 0; k < p->ntrees; k++)
                total += p->trees[k]->nnames;
            const char **cands = cg_xmalloc((total + 1) * sizeof *cands);
            size_t nc = 0;
            for (size_t k = 0; k < CG_ARRAY_LEN(pseudo); k++)
                cands[nc++] = pseudo[k];
            for (size_t k = 0; k < p->ntrees; k++)
                for (size_t n = 0; n < p->trees[k]->nnames; n++)
                    cands[nc++] = p->trees[k]->names[n];
            cg_strbuf hint = CG_STRBUF_INIT;
            cg_did_you_mean(&hint, name, cands, nc);
            free(cands);
            if (pos && pos->file)
                cg_error_at(err, pos, "unknown name '%s' in '%s': not a dimension or variable of any tree%s", name,
                            q->groups[i].text, cg_strbuf_str(&hint));
            else
                cg_error_plain(err, "unknown name '%s' in '%s': not a dimension or variable of any tree%s", name,
                               q->groups[i].text, cg_strbuf_str(&hint));
            cg_strbuf_release(&hint);
            return -1;
        }
    }
    return 0;
}

static bool glob(const char *pattern, const char *value)
{
    return fnmatch(pattern, value, 0) == 0;
}

/* 1 match, 0 no match (values absent count as not matching the glob). */
static int term_match(const cg_qterm *t, const cg_model *p, const cg_job *j, cg_env *env)
{
    const cg_tree *tr = j->tree;
    bool hit = false;
    if (!t->name || cg_streq(t->name, "job")) {
        hit = glob(t->glob, j->name);
    } else if (cg_streq(t->name, "phase")) {
        hit = glob(t->glob, tr->phases[j->phase].name);
    } else if (cg_streq(t->name, "tree")) {
        hit = glob(t->glob, tr->name);
    } else if (cg_streq(t->name, "workflow")) {
        for (size_t w = 0; w < p->manifest.nworkflows && !hit; w++)
            hit = (j->workflows & ((uint64_t)1 << w)) && glob(t->glob, p->manifest.workflows[w].name);
    } else if (cg_streq(t->name, "tier")) {
        for (size_t k = 0; k < tr->ntiers && !hit; k++)
            hit = (j->cell->tiers & ((uint64_t)1 << k)) && glob(t->glob, tr->tiers[k].name);
    } else {
        int id = cg_tree_name_id(tr, t->name);
        const char *v;
        size_t n;
        bool typed;
        int rc = id >= 0 ? cg_env_get(env, id, &v, &n, &typed) : 0;
        if (rc < 0)
            return -1;
        hit = rc == 1 && glob(t->glob, v);
    }
    return t->negate ? !hit : hit;
}

int cg_qgroup_match(const cg_qgroup *g, const cg_model *p, const cg_job *j, cg_env *env)
{
    for (size_t t = 0; t < g->n; t++) {
        int m = term_match(&g->terms[t], p, j, env);
        if (m <= 0)
            return m;
    }
    return 1;
}

int cg_query_match(const cg_query *q, const cg_model *p, const cg_job *j, cg_env *env)
{
    for (size_t i = 0; i < q->n; i++) {
        int m = cg_qgroup_match(&q->groups[i], p, j, env);
        if (m <= 0)
            return m;
    }
    return 1;
}

int cg_query_any(const cg_query *q, const cg_model *p, const cg_job *j, cg_env *env)
{
    for (size_t i = 0; i < q->n; i++) {
        int m = cg_qgroup_match(&q->groups[i], p, j, env);
        if (m != 0)
            return m;
    }
    return 0;
}

/* A static entry has a name, the job it invokes, a workflow and the
 * arguments it passes: a term on another name matches the value the entry
 * passes under that name (`python: "3.8"` is python=3.8); an entry passing
 * none does not match (phase, tree and tier are never arguments). */
bool cg_qgroup_match_static(const cg_qgroup *g, const char *name, const char *invokes, const char *workflow,
                            json_t *entry)
{
    json_t *args = json_is_object(entry) ? json_object_iter_value(json_object_iter(entry)) : NULL;
    for (size_t t = 0; t < g->n; t++) {
        const cg_qterm *term = &g->terms[t];
        bool hit = false;
        json_t *v = json_is_object(args) && term->name ? json_object_get(args, term->name) : NULL;
        char num[64];
        const char *text = json_is_string(v) ? json_string_value(v) : NULL;
        if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v)) {
            if (json_is_integer(v))
                snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            else if (json_is_real(v))
                snprintf(num, sizeof num, "%.17g", json_real_value(v));
            else
                snprintf(num, sizeof num, "%s", json_is_true(v) ? "true" : "false");
            text = num;
        }
        if (!term->name || cg_streq(term->name, "job"))
            hit = glob(term->glob, name) || (invokes && glob(term->glob, invokes));
        else if (cg_streq(term->name, "workflow"))
            hit = glob(term->glob, workflow);
        else if (text && !cg_streq(term->name, "phase") && !cg_streq(term->name, "tree") &&
                 !cg_streq(term->name, "tier") && !cg_streq(term->name, "name"))
            hit = glob(term->glob, text);
        else
            return false;
        if (term->negate ? hit : !hit)
            return false;
    }
    return true;
}
