/* Which jobs a pipeline runs, decided when it starts (model/pick.h). */
#include "model/pick.h"

#include <stdarg.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "lang/yaml_path.h"
#include "model/condition.h"
#include "model/query.h"
#include "model/cull.h"

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

void cg_pick_tokens_parse(const char *message, cg_pick_tokens *t)
{
    memset(t, 0, sizeof *t);
    /* one pass: a ']' closes the last '[' before it ("[[conda ci]": the
     * token starts at the inner '['); linear in the message, whatever it holds */
    const char *open = NULL;
    for (const char *at = message; at && *at; at++) {
        if (*at == '[') {
            open = at;
            continue;
        }
        if (*at != ']' || !open)
            continue;
        const char *close = at;
        const char *s = skip_space(open + 1, close), *e = close;
        open = NULL;
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

void cg_pick_tokens_free(cg_pick_tokens *t)
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
    cg_pick_run *run;
    const cg_pick_input *in;
    uint64_t bits;           /* the workflows this pipeline may run */
    size_t nstatic;          /* the static entries as the manifest lists them */
    const char **why_static; /* [nstatic]: the rule that chose it */
    cg_env *envs;
    cg_special named;      /* a special PR's patterns: the overlay, flags, [ci only:], [ci also:] */
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

/* Whether CircleCI would run `entry` of workflow w on this pipeline (the
 * simulation of the full config, audit/simulate.h, through cmd/select). */
static bool sim_runs(const rules *R, size_t w, const char *entry)
{
    if (!(R->bits & ((uint64_t)1 << w)))
        return false;
    return !R->in->runs || R->in->runs(R->in->runs_ctx, R->m->manifest.workflows[w].name, entry);
}

/* The workflows where job k runs on this pipeline (0: none). */
static uint64_t job_runs(const rules *R, size_t k)
{
    const cg_job *j = &R->m->jobs.v[k];
    uint64_t out = 0;
    for (size_t w = 0; w < R->m->manifest.nworkflows; w++)
        if ((j->workflows & ((uint64_t)1 << w)) && sim_runs(R, w, j->name))
            out |= (uint64_t)1 << w;
    return out;
}

static bool static_runs(const rules *R, size_t e)
{
    const cg_static_job *sj = &R->m->statics[e];
    return sim_runs(R, sj->workflow, sj->name);
}

/* Chooses job k when CircleCI runs it here (the first rule gives the reason). */
static bool choose_job(rules *R, size_t k, const char *why)
{
    if (!job_runs(R, k))
        return false;
    if (!R->run->job_in[k]) {
        R->run->job_in[k] = true;
        R->run->job_why[k] = why;
    }
    return true;
}

static bool choose_static(rules *R, size_t e, const char *why)
{
    if (!static_runs(R, e))
        return false;
    if (!R->why_static[e])
        R->why_static[e] = why;
    return true;
}

/* Every entry this pipeline runs. */
static size_t choose_all(rules *R, const char *why)
{
    size_t n = 0;
    for (size_t k = 0; k < R->m->jobs.n; k++)
        n += choose_job(R, k, why);
    for (size_t e = 0; e < R->nstatic; e++)
        n += choose_static(R, e, why);
    return n;
}

/* The entries a pattern matches among those this pipeline runs (choose:
 * choose them; else count every entry it names, run or not); -1 when it
 * is not a pattern. */
static long match_pattern(rules *R, const char *pattern, const cg_pos *pos, const char *why, bool choose)
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
        if (!j->workflows || (choose && !job_runs(R, k)))
            continue;
        cg_env *env = &R->envs[j->tree->index];
        if (cg_model_bind_job(R->m, env, j, -1) != 0) {
            n = -1;
            break;
        }
        int mt = cg_query_match(&q, R->m, j, env);
        if (mt < 0) {
            n = -1;
            break;
        }
        if (mt == 1 && (!choose || choose_job(R, k, why)))
            n++;
    }
    for (size_t e = 0; e < R->nstatic && n >= 0; e++) {
        const cg_static_job *sj = &R->m->statics[e];
        if (q.n == 1 && cg_qgroup_match_static(&q.groups[0], sj->name, sj->invokes,
                                               R->m->manifest.workflows[sj->workflow].name, sj->entry) &&
            (!choose || choose_static(R, e, why)))
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

/* ---- paths per cell: the trees' `paths` (docs/tree-language.md).  The
 * jobs whose cell declares a path glob matching the changed file (chosen
 * where this pipeline runs them); the file then needs no `pipeline: paths`
 * rule.  (The tree-language side's hook, kept apart from the rules.) ---- */
static size_t choose_by_cell_paths(rules *R, const char *file)
{
    size_t n = 0;
    cg_strbuf why = CG_STRBUF_INIT;
    for (size_t k = 0; k < R->m->jobs.n; k++) {
        const cg_job *j = &R->m->jobs.v[k];
        cg_pos at = {0};
        const char *g = j->workflows ? cg_job_paths_match(j, file, &at) : NULL;
        if (!g)
            continue;
        cg_strbuf_reset(&why);
        cg_strbuf_addf(&why, "changed file '%s' matches '%s', a path of its cell (%s:%u)", file, g,
                       at.file ? at.file : "", at.line);
        choose_job(R, k, pooled(R, why.buf));
        n++; /* the file is the cell's, whether this pipeline runs the job or not */
    }
    cg_strbuf_release(&why);
    return n;
}
/* ---- end of paths per cell ---- */

/* `[ci only: P]` / `[ci also: P]`: a special PR's pattern, checked to name
 * some job (run here or not: a special PR runs it on the branch). */
static int named_pattern(rules *R, bool only, const char *pattern)
{
    long n = match_pattern(R, pattern, NULL, NULL, false);
    if (n < 0)
        return -1;
    if (n == 0)
        return cg_error_plain(R->err, "the commit message's [ci %s: %s] selects no job", only ? "only" : "also",
                              pattern);
    cg_special_add(&R->named, only, pattern, NULL);
    return 0;
}

/* A push to a branch other than a run_all one: the rules of pipeline.h. */
static int choose_for_pr(rules *R, const cg_pick_tokens *t)
{
    const cg_pick_input *in = R->in;
    const cg_dynamic_decl *d = &R->m->manifest.pipeline;
    cg_strbuf why = CG_STRBUF_INIT;
    int rc = 0;
    bool defaults = true;
    const char *default_why = "a default job: runs on every pull request (no list of changed files)";
    if (in->changed_known) {
        size_t unmatched = 0;
        const char *first_unmatched = NULL;
        for (size_t f = 0; f < in->nchanged && rc == 0; f++) {
            if (choose_by_cell_paths(R, in->changed[f]) > 0)
                continue; /* paths per cell: the cells' own paths, not the manifest's rules */
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
            for (size_t s = 0; s < r->nselect && rc == 0; s++) {
                if (cg_streq(r->select[s], "none"))
                    continue;
                if (cg_streq(r->select[s], "all"))
                    choose_all(R, w);
                else if (match_pattern(R, r->select[s], &r->select_pos[s], w, true) < 0)
                    rc = -1;
            }
        }
        defaults = unmatched > 0;
        if (defaults) {
            cg_strbuf_reset(&why);
            cg_strbuf_addf(&why, "a default job: runs on every pull request ('%s'%s no path rule)",
                           first_unmatched, unmatched > 1 ? " and others match" : " matches");
            default_why = pooled(R, why.buf);
            note(R, "%zu of %zu changed files match no path rule ('%s'%s): the default jobs run", unmatched,
                 in->nchanged, first_unmatched, unmatched > 1 ? ", ..." : "");
        } else if (in->nchanged) {
            note(R, "every changed file (%zu) matches a path rule: only what they select runs", in->nchanged);
        } else {
            /* a known, empty list: nothing matched, like any other list */
            note(R, "no file changed: only what the commit message asks for runs");
        }
    } else {
        note(R, "no list of changed files: the default jobs run");
    }
    if (rc == 0 && defaults) {
        for (size_t k = 0; k < R->m->jobs.n; k++) {
            const cg_job *j = &R->m->jobs.v[k];
            if (job_runs(R, k) & ~j->gated)
                choose_job(R, k, default_why);
        }
        for (size_t e = 0; e < R->nstatic; e++)
            choose_static(R, e, default_why);
    }
    if (rc == 0 && t->all)
        note(R, "[ci all]: %zu jobs", choose_all(R, "the commit message says [ci all]"));
    for (size_t i = 0; i < t->nwords && rc == 0; i++) {
        cg_strbuf_reset(&why);
        cg_strbuf_addf(&why, "the commit message says [%s ci]", t->words[i]);
        const char *w = pooled(R, why.buf);
        size_t n = 0;
        for (size_t k = 0; k < R->m->jobs.n; k++) {
            const cg_job *j = &R->m->jobs.v[k];
            if ((job_runs(R, k) & j->gated) && word_of(t->words[i], j->name))
                n += choose_job(R, k, w);
        }
        note(R, "[%s ci]: %zu on-request jobs", t->words[i], n);
    }
    cg_strbuf_release(&why);
    return rc;
}

/* The pattern naming exactly this entry (any name: ',', '=' and globs quoted). */
static void exact_pattern(cg_strbuf *out, const char *name)
{
    cg_strbuf_reset(out);
    cg_strbuf_adds(out, "job=");
    cg_query_quote(out, name);
}

/* The selection-shaped result: the picks run in place (filters kept), a
 * special PR's patterns through the special-PR selection; the rest culled. */
static int apply(rules *R)
{
    cg_model *m = R->m;
    cg_special *s = &m->selection;
    cg_special_release(s);
    cg_special_init(s);
    s->source = cg_xstrdup(R->named.source ? R->named.source : "the pipeline's rules");
    s->allow_protected = R->named.allow_protected;
    for (size_t i = 0; i < R->named.nonly; i++)
        cg_special_add(s, true, R->named.only[i], &R->named.only_pos[i]);
    for (size_t i = 0; i < R->named.nalso; i++)
        cg_special_add(s, false, R->named.also[i], &R->named.also_pos[i]);
    s->runs = R->in->runs ? R->in->runs : NULL;
    s->runs_ctx = R->in->runs_ctx;
    cg_strbuf pat = CG_STRBUF_INIT;
    size_t picked = 0;
    for (size_t k = 0; k < m->jobs.n; k++)
        if (R->run->job_in[k]) {
            exact_pattern(&pat, m->jobs.v[k].name);
            cg_special_add_stay(s, pat.buf);
            picked++;
        }
    for (size_t e = 0; e < R->nstatic; e++)
        if (R->why_static[e]) {
            exact_pattern(&pat, m->statics[e].name);
            cg_special_add_stay(s, pat.buf);
            picked++;
        }
    cg_strbuf_release(&pat);
    for (size_t k = 0; k < m->jobs.n; k++) {
        const cg_job *j = &m->jobs.v[k];
        if (R->run->job_in[k])
            continue;
        R->run->job_why[k] = !job_runs(R, k) ? NULL /* the caller's simulation says why */
                             : (j->gated & j->workflows) ? "on request: neither the commit message, the changed "
                                                           "files nor the branch asked for it"
                                                         : "a default job the rules did not choose ([ci only: ...] "
                                                           "or path rules chose others)";
    }
    /* without a per-change workflow, a special PR has nowhere to run */
    const cg_workflow_decl *pwd = m->per_change >= 0 ? &m->manifest.workflows[m->per_change] : NULL;
    bool keep = false;
    for (size_t i = 0; pwd && i < pwd->nkeep; i++)
        keep = keep || sim_runs(R, (size_t)m->per_change, pwd->keep[i]);
    if (!picked && cg_special_empty(s) && !keep) {
        R->run->workflow = -1; /* nothing runs at all: nothing is written */
        m->omitted = ~(uint64_t)0;
        for (size_t e = 0; e < m->nstatics; e++)
            m->statics[e].culled = true;
        for (size_t k = 0; k < m->jobs.n; k++)
            m->jobs.v[k].workflows = 0;
        return 0;
    }
    int rc = cg_cull_apply_loaded(m, R->err);
    /* what each special-PR pattern selected, counted as the selection did */
    for (size_t i = 0; rc == 0 && i < s->nonly + s->nalso; i++) {
        size_t n = 0;
        for (size_t k = 0; k < m->jobs.n; k++)
            n += m->marks[k].kind == CG_MARK_SELECTED && m->marks[k].pattern == (int32_t)i;
        for (size_t e = 0; e < m->nstatics; e++)
            n += m->statics[e].mark.kind == CG_MARK_SELECTED && m->statics[e].mark.pattern == (int32_t)i &&
                 !m->statics[e].culled && (int)m->statics[e].workflow == m->per_change;
        bool only = i < s->nonly;
        const char *text = only ? s->only[i] : s->also[i - s->nonly];
        if (cg_streq(s->source, "the commit message"))
            note(R, "[ci %s: %s]: %zu job%s (a special PR: they and what they require run on this branch, "
                 "branch filters lifted)", only ? "only" : "also", text, n, n == 1 ? "" : "s");
        else
            note(R, "--%s '%s' (from %s): %zu job%s (a special PR: they and what they require run on this branch, "
                 "branch filters lifted)", only ? "only" : "also", text, s->source, n, n == 1 ? "" : "s");
    }
    R->run->workflow = -1;
    for (size_t w = 0; w < m->manifest.nworkflows && R->run->workflow < 0; w++)
        if (!(m->omitted & ((uint64_t)1 << w)))
            R->run->workflow = (int)w;
    return rc;
}

/* ---- pipeline parameters and the workflow's `when` ---- */

/* The pipeline's values: every declared parameter's default, then the ones
 * given (checked against their declarations) into run->parameters too. */
static int pipeline_values(rules *R, cg_pipeline_values *pv)
{
    cg_model *m = R->m;
    const cg_pick_input *in = R->in;
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
        const char *name = in->param_names[i];
        cg_strbuf msg = CG_STRBUF_INIT;
        json_t *v = json_object_get(R->run->parameters, name)
                        ? (cg_strbuf_addf(&msg, "--parameter '%s' is given twice", name), NULL)
                        : cg_parameter_given(decls, name, in->param_values[i], &msg);
        if (v) {
            json_object_set(R->run->parameters, name, v);
            json_object_set_new(pv->parameters, name, v);
        } else {
            rc = cg_error_plain(R->err, "%s", msg.buf);
        }
        cg_strbuf_release(&msg);
    }
    json_decref(decls);
    return rc;
}

/* Notes what workflow w's `when` says for these values (CircleCI evaluates
 * the same statement again in the continuation). */
static void note_when(rules *R, size_t w, const cg_pipeline_values *pv)
{
    const cg_manifest *mf = &R->m->manifest;
    const cg_workflow_decl *wd = &mf->workflows[w];
    if (!wd->when)
        return;
    cg_strbuf path = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    cg_path_join_key(&path, wd->path, "when");
    json_t *stmt = cg_doc_typed(mf->doc, path.buf, wd->when);
    int t = cg_condition_eval(stmt, pv, &why);
    if (t == CG_COND_UNKNOWN)
        note(R, "workflow '%s': its 'when' is left to CircleCI (%s)", wd->name, why.buf);
    else
        note(R, "workflow '%s': its 'when' is %s for this pipeline%s", wd->name, t ? "true" : "false",
             t ? "" : ": nothing of it runs");
    json_decref(stmt);
    cg_strbuf_release(&path);
    cg_strbuf_release(&why);
}

int cg_pick_jobs(cg_model *m, cg_error *err)
{
    const cg_pick_input *in = m->opt.pipeline;
    cg_manifest *mf = &m->manifest;
    cg_pick_run *run = cg_pool_alloc(&m->pool, sizeof *run);
    memset(run, 0, sizeof *run);
    m->run = run;
    run->notes = cg_pool_alloc(&m->pool, MAX_NOTES * sizeof *run->notes);
    run->job_why = cg_pool_alloc(&m->pool, (m->jobs.n + 1) * sizeof *run->job_why);
    run->job_in = cg_pool_alloc(&m->pool, (m->jobs.n + 1) * sizeof *run->job_in);
    memset(run->job_why, 0, (m->jobs.n + 1) * sizeof *run->job_why);
    memset(run->job_in, 0, (m->jobs.n + 1) * sizeof *run->job_in);
    run->workflow = -1;
    rules R = {m, run, in, 0, 0, NULL, NULL, {0}, err};
    cg_special_init(&R.named);
    cg_strbuf sb = CG_STRBUF_INIT;
    const char *branch = in->branch && *in->branch ? in->branch : NULL;
    const char *tag = in->tag && *in->tag ? in->tag : NULL;
    const char *schedule = in->schedule && *in->schedule ? in->schedule : NULL;
    cg_pick_tokens t;
    cg_pick_tokens_parse(tag || schedule ? NULL : in->message, &t);
    /* a special PR from the overlay or --only/--also: honoured as in classic mode */
    int rc = cg_cull_load(m, err);
    if (rc == 0 && !cg_special_empty(&m->selection)) {
        /* their positions name the overlay file by a string that outlives
         * m->selection, which apply() releases */
        const cg_special *o = &m->selection;
        for (size_t i = 0; i < o->nonly + o->nalso; i++) {
            bool only = i < o->nonly;
            cg_pos pos = only ? o->only_pos[i] : o->also_pos[i - o->nonly];
            if (pos.file)
                pos.file = cg_pool_strndup(&m->pool, pos.file, strlen(pos.file));
            cg_special_add(&R.named, only, only ? o->only[i] : o->also[i - o->nonly], &pos);
        }
        R.named.source = cg_xstrdup(o->source ? o->source : "the command line");
        R.named.allow_protected = o->allow_protected;
    }
    cg_cull_collect_statics(m);
    R.nstatic = m->nstatics;
    R.why_static = cg_pool_alloc(&m->pool, (R.nstatic + 1) * sizeof *R.why_static);
    memset(R.why_static, 0, (R.nstatic + 1) * sizeof *R.why_static);
    R.envs = cg_xcalloc(m->ntrees + 1, sizeof *R.envs);
    for (size_t i = 0; i < m->ntrees; i++)
        cg_env_init(&R.envs[i], m->trees[i], err);
    cg_pipeline_values pv = {NULL, schedule ? schedule : "", tag ? "" : branch ? branch : "", tag ? tag : "",
                             schedule ? CG_SOURCE_SCHEDULED_PIPELINE : CG_SOURCE_PUSH};
    if (rc == 0)
        rc = pipeline_values(&R, &pv);
    int sw = -1; /* the scheduled workflow */
    if (rc == 0 && schedule) {
        for (size_t i = 0; i < mf->nworkflows; i++)
            if (cg_streq(mf->workflows[i].name, schedule))
                sw = (int)i;
        if (sw < 0 || !mf->workflows[sw].schedule) {
            for (size_t i = 0; i < mf->nworkflows; i++)
                if (mf->workflows[i].schedule)
                    cg_strbuf_addf(&sb, "%s'%s'", sb.len ? ", " : "", mf->workflows[i].name);
            rc = cg_error_plain(err, "the scheduled pipeline '%s' names no scheduled workflow (name the schedule "
                                "after one of: %s)", schedule, sb.len ? sb.buf : "none");
        }
    }
    if (rc != 0)
        goto out;
    cg_strbuf_reset(&sb);
    if (schedule)
        cg_strbuf_addf(&sb, "the scheduled pipeline '%s'", schedule);
    else if (tag)
        cg_strbuf_addf(&sb, "a push of tag '%s'", tag);
    else
        cg_strbuf_addf(&sb, "a push to branch '%s'", branch ? branch : "(none)");
    run->what = pooled(&R, sb.buf);
    for (size_t w = 0; w < mf->nworkflows; w++) {
        /* a schedule runs its workflow; a push, every workflow without one */
        if (schedule ? (int)w == sw : !mf->workflows[w].schedule)
            R.bits |= (uint64_t)1 << w;
        if (R.bits & ((uint64_t)1 << w))
            note_when(&R, w, &pv);
    }
    if (schedule) {
        cg_workflow_decl *wd = &mf->workflows[sw];
        cg_strbuf_reset(&sb);
        cg_strbuf_addf(&sb, "workflow '%s' runs whole in its scheduled pipeline", wd->name);
        size_t n = choose_all(&R, pooled(&R, sb.buf));
        note(&R, "scheduled: workflow '%s', %zu job%s", wd->name, n, n == 1 ? "" : "s");
        /* the scheduled pipeline is the trigger: no cron, no branch filter of it */
        wd->schedule = NULL;
        wd->branches.set = false;
    } else if (tag) {
        size_t n = choose_all(&R, "its filters let the tag through");
        note(&R, "tag '%s': %zu job%s whose filters let it through (and what they require)", tag, n,
             n == 1 ? "" : "s");
    } else if (branch && glob_any(mf->pipeline.run_all, mf->pipeline.nrun_all, branch)) {
        cg_strbuf_reset(&sb);
        cg_strbuf_addf(&sb, "branch '%s' runs every job ('run_all')", branch);
        note(&R, "%s", sb.buf);
        choose_all(&R, pooled(&R, sb.buf));
        if (t.all || t.nwords || t.nonly || t.nalso)
            note(&R, "the commit message's tokens do not count on a 'run_all' branch");
        cg_pick_tokens_free(&t);
    } else if (t.nonly) {
        for (size_t i = 0; i < t.nonly && rc == 0; i++)
            rc = named_pattern(&R, true, t.only[i]);
        if (t.all || t.nwords || t.nalso)
            note(&R, "the other tokens of the commit message do not count: [ci only: ...] picks exactly");
    } else {
        rc = choose_for_pr(&R, &t);
    }
    for (size_t i = 0; i < t.nalso && rc == 0 && !t.nonly; i++)
        rc = named_pattern(&R, false, t.also[i]);
    if (rc == 0 && R.named.nonly) {
        /* [ci only:] or --only: exactly the named jobs (and the keep entries) */
        memset(run->job_in, 0, (m->jobs.n + 1) * sizeof *run->job_in);
        memset(R.why_static, 0, (R.nstatic + 1) * sizeof *R.why_static);
    }
    if (rc == 0 && !R.named.source && (R.named.nonly || R.named.nalso))
        R.named.source = cg_xstrdup("the commit message");
    if (rc == 0)
        rc = apply(&R);
out:
    if (rc == 0) {
        run->nstatics = R.nstatic;
        run->statics = cg_pool_alloc(&m->pool, (run->nstatics + 1) * sizeof *run->statics);
        for (size_t i = 0; i < run->nstatics; i++)
            run->statics[i] = (cg_pick_why){m->statics[i].name, R.why_static[i] != NULL, R.why_static[i]};
    }
    for (size_t i = 0; i < m->ntrees; i++)
        cg_env_release(&R.envs[i]);
    free(R.envs);
    cg_special_release(&R.named);
    cg_pick_tokens_free(&t);
    json_decref(pv.parameters);
    cg_strbuf_release(&sb);
    return rc;
}
