/* Which jobs a pipeline runs, decided when it starts (model/pipeline.h). */
#include "model/pipeline.h"

#include <stdarg.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "lang/yaml_path.h"
#include "model/condition.h"
#include "model/query.h"
#include "model/select.h"

#define MAX_NOTES 256

/* ASCII only, whatever the locale */
static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool blank(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool word_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

static int ncaseeq_cmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int x = lower((unsigned char)a[i]), y = lower((unsigned char)b[i]);
        if (x != y || !x)
            return x - y;
    }
    return 0;
}

static int caseeq_cmp(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    return la != lb ? 1 : ncaseeq_cmp(a, b, la);
}

/* ---- the commit message's tokens ---- */

static void push(char ***v, size_t *n, const char *s, size_t len)
{
    *v = cg_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = cg_xstrndup(s, len);
}

static const char *skip_space(const char *s, const char *end)
{
    while (s < end && blank((unsigned char)*s))
        s++;
    return s;
}

/* "ci" then blanks then `word` (any case) then optional blanks and ':' */
static const char *keyword(const char *s, const char *end, const char *word, bool colon)
{
    size_t n = strlen(word);
    if ((size_t)(end - s) < n || ncaseeq_cmp(s, word, n) != 0)
        return NULL;
    s += n;
    if (!colon)
        return s;
    s = skip_space(s, end);
    return s < end && *s == ':' ? s + 1 : NULL;
}

void cg_pipeline_tokens_parse(const char *message, cg_pipeline_tokens *t)
{
    memset(t, 0, sizeof *t);
    for (const char *open = message ? strchr(message, '[') : NULL; open; open = strchr(open + 1, '[')) {
        const char *close = strchr(open + 1, ']');
        if (!close)
            break;
        const char *next = strchr(open + 1, '[');
        if (next && next < close)
            continue; /* "[[conda ci]": the token starts at the inner '[' */
        const char *s = skip_space(open + 1, close), *e = close;
        while (e > s && blank((unsigned char)e[-1]))
            e--;
        const char *r;
        /* [ci only: P], [ci also: P] */
        if ((r = keyword(s, e, "ci", false)) && r < e && blank((unsigned char)*r)) {
            const char *k = skip_space(r, e), *q;
            bool only = (q = keyword(k, e, "only", true)) != NULL;
            if (only || (q = keyword(k, e, "also", true))) {
                q = skip_space(q, e);
                if (q < e)
                    push(only ? &t->only : &t->also, only ? &t->nonly : &t->nalso, q, (size_t)(e - q));
                continue;
            }
            if ((q = keyword(k, e, "all", false)) && q == e) {
                t->all = true;
                continue;
            }
        }
        /* [WORD ci]: WORD of [A-Za-z0-9_.-], then blanks, then ci */
        const char *w = s;
        while (w < e && word_char((unsigned char)*w))
            w++;
        if (w == s || w == e || !blank((unsigned char)*w))
            continue;
        const char *c = skip_space(w, e);
        if (e - c == 2 && ncaseeq_cmp(c, "ci", 2) == 0) {
            push(&t->words, &t->nwords, s, (size_t)(w - s));
            for (char *x = t->words[t->nwords - 1]; *x; x++)
                *x = (char)lower((unsigned char)*x);
        }
    }
}

void cg_pipeline_tokens_free(cg_pipeline_tokens *t)
{
    for (size_t i = 0; i < t->nonly; i++)
        free(t->only[i]);
    for (size_t i = 0; i < t->nalso; i++)
        free(t->also[i]);
    for (size_t i = 0; i < t->nwords; i++)
        free(t->words[i]);
    free(t->only);
    free(t->also);
    free(t->words);
    memset(t, 0, sizeof *t);
}

/* ---- the rules ---- */

typedef struct rules {
    cg_model *m;
    cg_pipeline_run *run;
    int w;                   /* the per-change workflow */
    uint64_t bit;
    json_t *statics;         /* its static entries (manifest) */
    const char **why_static; /* [nstatics] */
    cg_env *envs;
    cg_error *err;
} rules;

static void note(rules *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(rules *R, const char *fmt, ...)
{
    if (R->run->nnotes >= MAX_NOTES)
        return;
    cg_strbuf sb = CG_STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    R->run->notes[R->run->nnotes++] = cg_pool_strndup(&R->m->pool, sb.buf, sb.len);
    cg_strbuf_release(&sb);
}

static const char *pooled(rules *R, const char *s)
{
    return cg_pool_strndup(&R->m->pool, s, strlen(s));
}

static size_t nstatic(const rules *R)
{
    return R->statics ? json_array_size(R->statics) : 0;
}

static const char *static_name(const rules *R, size_t i)
{
    return cg_static_entry_name(json_array_get(R->statics, i));
}

static const char *static_invokes(const rules *R, size_t i)
{
    json_t *e = json_array_get(R->statics, i);
    return json_is_string(e) ? json_string_value(e) : json_object_iter_key(json_object_iter(e));
}

/* Chooses job k (the first rule that chose it gives the reason). */
static void choose_job(rules *R, size_t k, const char *why)
{
    if (!R->run->job_in[k]) {
        R->run->job_in[k] = true;
        R->run->job_why[k] = why;
    }
}

static void choose_static(rules *R, size_t i, const char *why)
{
    if (!R->why_static[i])
        R->why_static[i] = why;
}

/* Every entry of the per-change workflow (gated ones too). */
static size_t choose_all(rules *R, const char *why)
{
    size_t n = 0;
    for (size_t k = 0; k < R->m->jobs.n; k++)
        if (R->m->jobs.v[k].workflows & R->bit) {
            choose_job(R, k, why);
            n++;
        }
    for (size_t i = 0; i < nstatic(R); i++, n++)
        choose_static(R, i, why);
    return n;
}

/* The entries a pattern matches in the per-change workflow; -1 when it is
 * not a pattern. */
static long choose_pattern(rules *R, const char *pattern, const cg_pos *pos, const char *why)
{
    cg_query q;
    cg_query_init(&q);
    if (cg_line_breaker(pattern, NULL) || cg_query_add(&q, pattern) != 0) {
        cg_query_release(&q);
        if (pos && pos->file)
            return cg_error_at(R->err, pos, "'%s' is not a pattern (NAME=GLOB,... or a job-name glob)", pattern);
        cg_error_plain(R->err, "'%s' is not a pattern (NAME=GLOB,... or a job-name glob)", pattern);
        return -1;
    }
    if (cg_query_check_names(&q, R->m, pos, R->err) != 0) {
        cg_query_release(&q);
        return -1;
    }
    long n = 0;
    for (size_t k = 0; k < R->m->jobs.n; k++) {
        const cg_job *j = &R->m->jobs.v[k];
        if (!(j->workflows & R->bit))
            continue;
        cg_env *env = &R->envs[j->tree->index];
        if (cg_model_bind_job(R->m, env, j, R->w) != 0) {
            n = -1;
            break;
        }
        int mt = cg_query_match(&q, R->m, j, env);
        if (mt < 0) {
            n = -1;
            break;
        }
        if (mt == 1) {
            choose_job(R, k, why);
            n++;
        }
    }
    for (size_t i = 0; i < nstatic(R) && n >= 0; i++)
        if (q.n == 1 && cg_qgroup_match_static(&q.groups[0], static_name(R, i), static_invokes(R, i),
                                               R->m->manifest.workflows[R->w].name)) {
            choose_static(R, i, why);
            n++;
        }
    cg_query_release(&q);
    return n;
}

/* WORD is the job's name or one of its '_'-separated parts (any case). */
static bool word_of(const char *word, const char *name)
{
    size_t wl = strlen(word);
    if (caseeq_cmp(word, name) == 0)
        return true;
    for (const char *s = name; *s;) {
        const char *e = strchr(s, '_');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == wl && ncaseeq_cmp(s, word, wl) == 0)
            return true;
        if (!e)
            break;
        s = e + 1;
    }
    return false;
}

static bool glob_any(const char **globs, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], s, 0) == 0)
            return true;
    return false;
}

/* A push to a branch other than a run_all one: the rules of pipeline.h. */
static int choose_for_pr(rules *R, const cg_pipeline_input *in)
{
    const cg_pipeline_decl *d = &R->m->manifest.pipeline;
    cg_pipeline_tokens t;
    cg_pipeline_tokens_parse(in->message, &t);
    cg_strbuf why = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < t.nonly && rc == 0; i++) {
        cg_strbuf_reset(&why);
        cg_strbuf_addf(&why, "the commit message says [ci only: %s]", t.only[i]);
        long n = choose_pattern(R, t.only[i], NULL, pooled(R, why.buf));
        if (n == 0)
            rc = cg_error_plain(R->err, "the commit message's [ci only: %s] selects no job of the per-change workflow "
                                "'%s' (a commit message picks among its jobs only)", t.only[i],
                                R->m->manifest.workflows[R->w].name);
        else if (n > 0)
            note(R, "[ci only: %s]: %ld job%s", t.only[i], n, n == 1 ? "" : "s");
        else
            rc = -1;
    }
    if (t.nonly) {
        if (t.all || t.nwords || t.nalso)
            note(R, "the other tokens of the commit message do not count: [ci only: ...] picks exactly");
        goto done;
    }
    bool defaults = true;
    const char *default_why = "a default job: runs on every pull request (no list of changed files)";
    if (in->changed_known && in->nchanged) {
        size_t unmatched = 0;
        const char *first_unmatched = NULL;
        for (size_t f = 0; f < in->nchanged && rc == 0; f++) {
            const cg_path_rule *r = NULL;
            for (size_t i = 0; i < d->npaths && !r; i++)
                if (fnmatch(d->paths[i].glob, in->changed[f], 0) == 0)
                    r = &d->paths[i];
            if (!r) {
                if (!unmatched++)
                    first_unmatched = in->changed[f];
                continue;
            }
            cg_strbuf_reset(&why);
            cg_strbuf_addf(&why, "changed file '%s' matches path rule '%s' (%s:%u)", in->changed[f], r->glob,
                           r->pos.file ? r->pos.file : "", r->pos.line);
            const char *w = pooled(R, why.buf);
            long n = 0;
            for (size_t s = 0; s < r->nselect && n >= 0; s++) {
                if (cg_streq(r->select[s], "none"))
                    continue;
                long c = cg_streq(r->select[s], "all") ? (long)choose_all(R, w)
                                                       : choose_pattern(R, r->select[s], &r->select_pos[s], w);
                n = c < 0 ? -1 : n + c;
            }
            if (n < 0)
                rc = -1;
        }
        defaults = unmatched > 0;
        if (defaults) {
            cg_strbuf_reset(&why);
            cg_strbuf_addf(&why, "a default job: runs on every pull request ('%s'%s no path rule)",
                           first_unmatched, unmatched > 1 ? " and others match" : " matches");
            default_why = pooled(R, why.buf);
            note(R, "%zu of %zu changed files match no path rule ('%s'%s): the default jobs run", unmatched,
                 in->nchanged, first_unmatched, unmatched > 1 ? ", ..." : "");
        } else {
            note(R, "every changed file (%zu) matches a path rule: only what they select runs", in->nchanged);
        }
    } else {
        note(R, "no list of changed files: the default jobs run");
    }
    if (rc == 0 && defaults) {
        for (size_t k = 0; k < R->m->jobs.n; k++) {
            const cg_job *j = &R->m->jobs.v[k];
            if ((j->workflows & R->bit) && !(j->gated & R->bit))
                choose_job(R, k, default_why);
        }
        for (size_t i = 0; i < nstatic(R); i++)
            choose_static(R, i, default_why);
    }
    if (rc == 0 && t.all)
        note(R, "[ci all]: %zu jobs", choose_all(R, "the commit message says [ci all]"));
    for (size_t i = 0; i < t.nwords && rc == 0; i++) {
        cg_strbuf_reset(&why);
        cg_strbuf_addf(&why, "the commit message says [%s ci]", t.words[i]);
        const char *w = pooled(R, why.buf);
        size_t n = 0;
        for (size_t k = 0; k < R->m->jobs.n; k++) {
            const cg_job *j = &R->m->jobs.v[k];
            if ((j->workflows & R->bit) && (j->gated & R->bit) && word_of(t.words[i], j->name)) {
                choose_job(R, k, w);
                n++;
            }
        }
        note(R, "[%s ci]: %zu on-request jobs", t.words[i], n);
    }
    for (size_t i = 0; i < t.nalso && rc == 0; i++) {
        cg_strbuf_reset(&why);
        cg_strbuf_addf(&why, "the commit message says [ci also: %s]", t.also[i]);
        long n = choose_pattern(R, t.also[i], NULL, pooled(R, why.buf));
        if (n == 0)
            rc = cg_error_plain(R->err, "the commit message's [ci also: %s] selects no job of the per-change workflow "
                                "'%s' (a commit message picks among its jobs only)", t.also[i],
                                R->m->manifest.workflows[R->w].name);
        else if (n < 0)
            rc = -1;
        else
            note(R, "[ci also: %s]: %ld job%s", t.also[i], n, n == 1 ? "" : "s");
    }
done:
    cg_strbuf_release(&why);
    cg_pipeline_tokens_free(&t);
    return rc;
}

/* A job name as a --only pattern that matches it alone. */
/* The pattern naming exactly this job (any name: ',', '=' and globs quoted). */
static void exact_pattern(cg_strbuf *out, const char *name)
{
    cg_strbuf_reset(out);
    cg_strbuf_adds(out, "job=");
    cg_query_quote(out, name);
}

/* Through the special-PR selection: the chosen entries, what they require,
 * the keep entries; everything else culled. */
static int apply(rules *R)
{
    cg_model *m = R->m;
    cg_selection *s = &m->selection;
    cg_selection_release(s);
    cg_selection_init(s);
    s->source = cg_xstrdup("the pipeline's rules");
    cg_strbuf pat = CG_STRBUF_INIT;
    cg_pos none = {0};
    int rc = 0;
    for (size_t k = 0; k < m->jobs.n && rc == 0; k++)
        if (R->run->job_in[k]) {
            exact_pattern(&pat, m->jobs.v[k].name);
            cg_selection_add(s, true, pat.buf, &none);
        }
    for (size_t i = 0; i < nstatic(R) && rc == 0; i++)
        if (R->why_static[i]) {
            exact_pattern(&pat, static_name(R, i));
            cg_selection_add(s, true, pat.buf, &none);
        }
    cg_strbuf_release(&pat);
    /* why the others are out (a requirement may still bring one in) */
    const char *wname = m->manifest.workflows[R->w].name;
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_addf(&sb, "not in workflow '%s' (a pipeline of a push runs no other workflow)", wname);
    const char *elsewhere = pooled(R, sb.buf);
    cg_strbuf_release(&sb);
    for (size_t k = 0; k < m->jobs.n; k++) {
        const cg_job *j = &m->jobs.v[k];
        if (R->run->job_in[k])
            continue;
        R->run->job_why[k] = !(j->workflows & R->bit) ? elsewhere
                             : (j->gated & R->bit) ? "on request: neither the commit message, the changed files "
                                                     "nor the branch asked for it"
                                                   : "a default job the rules did not choose ([ci only: ...] or "
                                                     "path rules chose others)";
    }
    const cg_workflow_decl *wd = &m->manifest.workflows[R->w];
    if (rc == 0 && cg_selection_empty(s) && !wd->nkeep) {
        /* nothing runs at all */
        R->run->workflow = -1;
        rc = cg_model_apply_selection(m, R->err);
        m->omitted = ~(uint64_t)0;
        return rc;
    }
    if (rc == 0 && cg_selection_empty(s)) {
        /* only the keep entries: select the first, the selection keeps the rest */
        for (size_t i = 0; i < nstatic(R); i++)
            if (cg_streq(static_name(R, i), wd->keep[0]))
                choose_static(R, i, "kept: the workflow's 'keep' names it (nothing else runs)");
        exact_pattern(&pat, wd->keep[0]);
        cg_selection_add(s, true, pat.buf, &none);
        cg_strbuf_release(&pat);
    }
    if (rc == 0)
        rc = cg_model_apply_selection(m, R->err);
    if (rc == 0)
        m->omitted |= ~R->bit;
    return rc;
}

/* ---- pipeline parameters and the workflow's `when` ---- */

/* The pipeline's values: every declared parameter's default, then the ones
 * given (checked against their declarations) into run->parameters too. */
static int pipeline_values(rules *R, const cg_pipeline_input *in, cg_pipeline_values *pv)
{
    cg_model *m = R->m;
    json_t *decls = json_object(); /* name -> declaration (borrowed) */
    pv->parameters = json_object();
    R->run->parameters = json_object();
    for (size_t f = 0; f < m->nfragments; f++) {
        const cg_doc *doc = m->fragments[f].doc;
        json_object_update(decls, json_object_get(cg_doc_root(doc), "parameters"));
        cg_parameter_defaults(doc, pv->parameters);
    }
    int rc = 0;
    for (size_t i = 0; i < in->nparams && rc == 0; i++) {
        const char *name = in->param_names[i], *text = in->param_values[i];
        json_t *d = json_object_get(decls, name);
        const char *type = json_string_value(json_object_get(d, "type"));
        json_t *v = NULL;
        cg_strbuf sb = CG_STRBUF_INIT;
        if (!d) {
            const char **names = cg_xcalloc(json_object_size(decls) + 1, sizeof *names);
            size_t n = 0;
            const char *k;
            json_t *x;
            json_object_foreach(decls, k, x)
                names[n++] = k;
            cg_did_you_mean(&sb, name, names, n);
            free(names);
            rc = cg_error_plain(R->err, "--parameter '%s': no fragment declares it in its top-level 'parameters:'%s",
                                name, sb.len ? sb.buf : "");
        } else if (json_object_get(R->run->parameters, name)) {
            rc = cg_error_plain(R->err, "--parameter '%s' is given twice", name);
        } else if (type && cg_streq(type, "boolean")) {
            if (cg_streq(text, "true") || cg_streq(text, "false"))
                v = json_boolean(cg_streq(text, "true"));
            else
                rc = cg_error_plain(R->err, "--parameter '%s': a boolean parameter is true or false, not '%s'", name,
                                    text);
        } else if (type && cg_streq(type, "integer")) {
            char *end = NULL;
            long long x = strtoll(text, &end, 10);
            if (*text && end && !*end)
                v = json_integer((json_int_t)x);
            else
                rc = cg_error_plain(R->err, "--parameter '%s': an integer parameter, not '%s'", name, text);
        } else if (type && cg_streq(type, "enum")) {
            json_t *e = json_object_get(d, "enum");
            bool ok = false;
            for (size_t k = 0; k < json_array_size(e); k++) {
                const char *s = json_string_value(json_array_get(e, k));
                cg_strbuf_addf(&sb, "%s'%s'", k ? ", " : "", s ? s : "");
                ok |= s && cg_streq(s, text);
            }
            if (ok)
                v = json_string(text);
            else
                rc = cg_error_plain(R->err, "--parameter '%s': '%s' is not one of its enum values (%s)", name, text,
                                    sb.len ? sb.buf : "none");
        } else {
            v = json_string(text);
        }
        cg_strbuf_release(&sb);
        if (v) {
            json_object_set(R->run->parameters, name, v);
            json_object_set_new(pv->parameters, name, v);
        }
    }
    json_decref(decls);
    return rc;
}

/* Whether workflow w runs for these values: its `when`, as CircleCI will
 * evaluate it in the continuation config (left to CircleCI when unknown). */
static bool workflow_runs(rules *R, size_t w, const cg_pipeline_values *pv)
{
    const cg_manifest *mf = &R->m->manifest;
    const cg_workflow_decl *wd = &mf->workflows[w];
    if (!wd->when)
        return true;
    cg_strbuf path = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    cg_path_join_key(&path, wd->path, "when");
    json_t *stmt = cg_doc_typed(mf->doc, path.buf, wd->when);
    int t = cg_condition_eval(stmt, pv, &why);
    if (t == CG_COND_UNKNOWN)
        note(R, "workflow '%s': its 'when' is left to CircleCI (%s)", wd->name, why.buf);
    else
        note(R, "workflow '%s': its 'when' is %s for this pipeline%s", wd->name, t ? "true" : "false",
             t ? "" : ": nothing runs");
    json_decref(stmt);
    cg_strbuf_release(&path);
    cg_strbuf_release(&why);
    return t != CG_COND_FALSE;
}

/* Workflow w does not run (`why`): no job runs, each says why. */
static int nothing_runs(rules *R, size_t w, const char *why)
{
    cg_model *m = R->m;
    for (size_t k = 0; k < m->jobs.n; k++)
        if (m->jobs.v[k].workflows & ((uint64_t)1 << w))
            R->run->job_why[k] = why;
    R->statics = m->manifest.workflows[w].jobs;
    R->why_static = cg_pool_alloc(&m->pool, (nstatic(R) + 1) * sizeof *R->why_static);
    for (size_t i = 0; i < nstatic(R) + 1; i++)
        R->why_static[i] = i < nstatic(R) ? why : NULL;
    R->run->workflow = -1;
    int rc = cg_model_apply_selection(m, R->err);
    m->omitted = ~(uint64_t)0;
    return rc;
}

static const char *when_false(rules *R, size_t w)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_addf(&sb, "workflow '%s' does not run: its 'when' is false for this pipeline",
                   R->m->manifest.workflows[w].name);
    const char *why = pooled(R, sb.buf);
    cg_strbuf_release(&sb);
    return why;
}

static const char *workflow_names(cg_model *m, cg_strbuf *sb)
{
    for (size_t w = 0; w < m->manifest.nworkflows; w++)
        cg_strbuf_addf(sb, "%s'%s'", w ? ", " : "", m->manifest.workflows[w].name);
    return sb->buf ? sb->buf : "none";
}

int cg_pipeline_select(cg_model *m, cg_error *err)
{
    const cg_pipeline_input *in = m->opt.pipeline;
    cg_manifest *mf = &m->manifest;
    cg_pipeline_run *run = cg_pool_alloc(&m->pool, sizeof *run);
    memset(run, 0, sizeof *run);
    m->run = run;
    run->notes = cg_pool_alloc(&m->pool, MAX_NOTES * sizeof *run->notes);
    run->job_why = cg_pool_alloc(&m->pool, (m->jobs.n + 1) * sizeof *run->job_why);
    run->job_in = cg_pool_alloc(&m->pool, (m->jobs.n + 1) * sizeof *run->job_in);
    memset(run->job_why, 0, (m->jobs.n + 1) * sizeof *run->job_why);
    memset(run->job_in, 0, (m->jobs.n + 1) * sizeof *run->job_in);
    run->workflow = m->per_change;
    rules R = {m, run, m->per_change, 0, NULL, NULL, NULL, err};
    cg_strbuf sb = CG_STRBUF_INIT;
    const char *branch = in->branch && *in->branch ? in->branch : NULL;
    const char *tag = in->tag && *in->tag ? in->tag : NULL;
    int rc = 0;
    for (size_t i = 0; i < mf->nworkflows && rc == 0; i++) {
        /* one per-change workflow and scheduled ones: anything else would
         * run beside them with rules of its own */
        const cg_workflow_decl *wd = &mf->workflows[i];
        if (!wd->per_change && !wd->schedule)
            rc = cg_error_at(err, &wd->pos, "workflow '%s' has no 'schedule' and is not 'per_change': cigen select "
                             "picks the jobs of the per-change workflow or runs a scheduled one, and cannot "
                             "tell when this one runs", wd->name);
    }
    cg_pipeline_values pv = {NULL, in->schedule ? in->schedule : "", tag ? "" : branch ? branch : "", tag ? tag : ""};
    if (rc == 0)
        rc = pipeline_values(&R, in, &pv);
    if (rc == 0 && in->schedule && *in->schedule) {
        int w = -1;
        for (size_t i = 0; i < mf->nworkflows; i++)
            if (cg_streq(mf->workflows[i].name, in->schedule))
                w = (int)i;
        if (w < 0 || !mf->workflows[w].schedule) {
            cg_strbuf_reset(&sb);
            for (size_t i = 0; i < mf->nworkflows; i++)
                if (mf->workflows[i].schedule)
                    cg_strbuf_addf(&sb, "%s'%s'", sb.len ? ", " : "", mf->workflows[i].name);
            rc = cg_error_plain(err, "the scheduled pipeline '%s' names no scheduled workflow (name the schedule after "
                                "one of: %s)", in->schedule, sb.len ? sb.buf : "none");
            goto out;
        }
        cg_strbuf_reset(&sb);
        cg_strbuf_addf(&sb, "the scheduled pipeline '%s'", in->schedule);
        run->what = pooled(&R, sb.buf);
        run->workflow = w;
        R.w = w;
        R.bit = (uint64_t)1 << w;
        if (branch && !cg_ref_filter_passes(&mf->workflows[w].branches, branch)) {
            /* as the schedule's branch filter of a classic config: a schedule
             * set up on another branch runs nothing of it */
            cg_strbuf_reset(&sb);
            cg_strbuf_addf(&sb, "workflow '%s' does not run: its 'branches' do not let '%s' through (the branch the "
                           "schedule runs on)", mf->workflows[w].name, branch);
            note(&R, "%s: nothing runs", sb.buf);
            rc = nothing_runs(&R, (size_t)w, pooled(&R, sb.buf));
            goto out;
        }
        if (!workflow_runs(&R, (size_t)w, &pv)) {
            rc = nothing_runs(&R, (size_t)w, when_false(&R, (size_t)w));
            goto out;
        }
        /* the schedule is the trigger: no cron, no branch filter; every job of its tier runs */
        cg_workflow_decl *wd = &mf->workflows[w];
        wd->schedule = NULL;
        wd->branches.set = false;
        cg_strbuf_reset(&sb);
        cg_strbuf_addf(&sb, "workflow '%s' runs whole in its scheduled pipeline", wd->name);
        const char *why = pooled(&R, sb.buf);
        for (size_t k = 0; k < m->jobs.n; k++) {
            cg_job *j = &m->jobs.v[k];
            j->gated &= ~R.bit;
            if (j->workflows & R.bit)
                choose_job(&R, k, why);
        }
        R.statics = wd->jobs;
        R.why_static = cg_pool_alloc(&m->pool, (nstatic(&R) + 1) * sizeof *R.why_static);
        for (size_t i = 0; i < nstatic(&R); i++)
            R.why_static[i] = why;
        note(&R, "scheduled: workflow '%s', every job of it", wd->name);
        rc = cg_model_apply_selection(m, err);
        m->omitted = ~R.bit;
        goto out;
    }
    if (rc == 0 && m->per_change < 0) {
        rc = cg_error_plain(err, "cigen select needs a workflow marked 'per_change: true' in %s (workflows: %s)",
                            m->opt.manifest ? m->opt.manifest : "cigen.yml", workflow_names(m, &sb));
        goto out;
    }
    if (rc != 0)
        goto out;
    const cg_workflow_decl *pwd = &mf->workflows[m->per_change];
    R.bit = (uint64_t)1 << m->per_change;
    R.statics = pwd->jobs;
    R.why_static = cg_pool_alloc(&m->pool, (nstatic(&R) + 1) * sizeof *R.why_static);
    memset(R.why_static, 0, (nstatic(&R) + 1) * sizeof *R.why_static);
    R.envs = cg_xcalloc(m->ntrees + 1, sizeof *R.envs);
    for (size_t t = 0; t < m->ntrees; t++)
        cg_env_init(&R.envs[t], m->trees[t], err);
    cg_strbuf_reset(&sb);
    if (tag)
        cg_strbuf_addf(&sb, "a push of tag '%s'", tag);
    else
        cg_strbuf_addf(&sb, "a push to branch '%s'", branch ? branch : "(none)");
    run->what = pooled(&R, sb.buf);
    if (!workflow_runs(&R, (size_t)m->per_change, &pv)) {
        rc = nothing_runs(&R, (size_t)m->per_change, when_false(&R, (size_t)m->per_change));
        goto release;
    }
    if (tag) {
        if (pwd->tags.set) {
            note(&R, "tag '%s': workflow '%s' has a tags filter: every job of it", tag, pwd->name);
            choose_all(&R, "a tag runs the per-change workflow whole");
        } else {
            note(&R, "tag '%s': workflow '%s' has no tags filter: nothing runs", tag, pwd->name);
            run->workflow = -1;
            rc = cg_model_apply_selection(m, err);
            m->omitted = ~(uint64_t)0;
            goto release;
        }
    } else {
        const cg_pipeline_decl *d = &mf->pipeline;
        if (branch && glob_any(d->run_all, d->nrun_all, branch)) {
            cg_strbuf_reset(&sb);
            cg_strbuf_addf(&sb, "branch '%s' runs every job ('run_all')", branch);
            note(&R, "%s", sb.buf);
            cg_pipeline_tokens t;
            cg_pipeline_tokens_parse(in->message, &t);
            if (t.all || t.nonly || t.nalso || t.nwords)
                note(&R, "the commit message's tokens do not count on a 'run_all' branch");
            cg_pipeline_tokens_free(&t);
            choose_all(&R, pooled(&R, sb.buf));
        } else {
            rc = choose_for_pr(&R, in);
        }
    }
    if (rc == 0)
        rc = apply(&R);
release:
    for (size_t t = 0; t < m->ntrees; t++)
        cg_env_release(&R.envs[t]);
    free(R.envs);
out:
    if (rc == 0 && R.statics) {
        run->nstatics = nstatic(&R);
        run->statics = cg_pool_alloc(&m->pool, (run->nstatics + 1) * sizeof *run->statics);
        for (size_t i = 0; i < run->nstatics; i++)
            run->statics[i] = (cg_pipeline_why){static_name(&R, i), R.why_static[i] != NULL, R.why_static[i]};
    }
    json_decref(pv.parameters);
    cg_strbuf_release(&sb);
    return rc;
}
