#include "check/report.h"

#include <stdbool.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/diff.h"
#include "check/report_impl.h"
#include "lang/yamlload.h"
#include "model/query.h"

/* ---- reading a config as jobs, whole ---- */

static char *config_read(const char *text, size_t len, const char *what, config *c)
{
    memset(c, 0, sizeof *c);
    cg_map_init(&c->index);
    cg_load_opts o = {.max_bytes = (size_t)1 << 32, .no_positions = true};
    cg_error err;
    cg_error_init(&err);
    c->doc = cg_doc_parse(what, text, len, &o, &err);
    if (!c->doc) {
        char *msg = cg_xstrdup(cg_strbuf_str(&err.text));
        cg_error_release(&err);
        return msg;
    }
    cg_error_release(&err);
    json_t *wfs = json_object_get(cg_doc_root(c->doc), "workflows");
    const char *wname;
    json_t *wf;
    json_object_foreach(wfs, wname, wf) {
        json_t *jobs = json_object_get(wf, "jobs");
        for (size_t i = 0; i < json_array_size(jobs); i++) {
            json_t *e = json_array_get(jobs, i);
            const char *invoke = NULL, *name;
            json_t *args = NULL;
            if (json_is_string(e)) {
                invoke = json_string_value(e);
            } else if (json_is_object(e) && json_object_size(e) == 1) {
                invoke = json_object_iter_key(json_object_iter(e));
                args = json_object_iter_value(json_object_iter(e));
                if (!json_is_object(args))
                    args = NULL;
            } else {
                continue;
            }
            json_t *n = args ? json_object_get(args, "name") : NULL;
            name = json_is_string(n) ? json_string_value(n) : invoke;
            wf_args *w = cg_report_add_entry(c, name, invoke, wname);
            w->args = args;
            w->read = true;
        }
    }
    return NULL;
}

static jobrec *config_find(const config *c, const char *name)
{
    size_t k = (size_t)cg_map_get(&c->index, name);
    return k ? &c->jobs[k - 1] : NULL;
}

/* Whether c holds the job: read, or left out as the same on both sides. */
static bool has_job(const config *c, const char *name)
{
    return config_find(c, name) || (c->shared && cg_report_shared_has(c->shared, name));
}

static char *show(json_t *v)
{
    if (!v)
        return NULL;
    if (json_is_string(v))
        return cg_xstrndup(json_string_value(v), json_string_length(v));
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

void cg_report_add_change(cg_job_change *jc, const char *field, char *b, char *a)
{
    for (size_t i = 0; i < jc->n; i++) {
        cg_field_change *f = &jc->v[i];
        if (cg_streq(f->field, field) && cg_streq(f->before, b) && cg_streq(f->after, a)) {
            free(a);
            free(b);
            return;
        }
    }
    jc->v = cg_xrealloc(jc->v, (jc->n + 1) * sizeof *jc->v);
    jc->v[jc->n++] = (cg_field_change){cg_xstrdup(field), b, a};
}

static void add_change(cg_job_change *jc, const char *field, json_t *before, json_t *after)
{
    cg_report_add_change(jc, field, show(before), show(after));
}

static void workflows_of(const config *c, const jobrec *r, cg_strbuf *out)
{
    for (const wf_args *e = cg_report_first(c, r); e; e = cg_report_next(c, e))
        cg_strbuf_addf(out, "%s%s", e != cg_report_first(c, r) ? ", " : "", e->workflow);
}

static bool same_workflows(const config *ca, const jobrec *a, const config *cb, const jobrec *b)
{
    const wf_args *x = cg_report_first(ca, a), *y = cg_report_first(cb, b);
    for (; x && y; x = cg_report_next(ca, x), y = cg_report_next(cb, y))
        if (x->workflow != y->workflow && strcmp(x->workflow, y->workflow) != 0)
            return false;
    return !x && !y;
}

/* The changes of one pair of entries, read as YAML. */
static void compare_args(json_t *x, json_t *y, cg_job_change *jc)
{
    const char *key;
    json_t *val;
    json_object_foreach(x, key, val) {
        json_t *other = y ? json_object_get(y, key) : NULL;
        if (!cg_streq(key, "name") && (!other || !json_equal(val, other)))
            add_change(jc, key, val, other);
    }
    json_object_foreach(y, key, val)
        if (!cg_streq(key, "name") && !(x && json_object_get(x, key)))
            add_change(jc, key, NULL, val);
}

/* 0, or -1 when a sliced entry does not read alone */
static int compare_job(config *ca, const jobrec *a, config *cb, const jobrec *b, cg_job_change *jc)
{
    if (!cg_streq(a->invoke, b->invoke)) {
        json_t *x = json_string(a->invoke), *y = json_string(b->invoke);
        add_change(jc, "job", x, y);
        json_decref(x);
        json_decref(y);
    }
    cg_strbuf wa = CG_STRBUF_INIT, wb = CG_STRBUF_INIT;
    if (!same_workflows(ca, a, cb, b)) {
        workflows_of(ca, a, &wa);
        workflows_of(cb, b, &wb);
    }
    if (!cg_streq(cg_strbuf_str(&wa), cg_strbuf_str(&wb))) {
        json_t *x = json_string(cg_strbuf_str(&wa)), *y = json_string(cg_strbuf_str(&wb));
        add_change(jc, "workflows", x, y);
        json_decref(x);
        json_decref(y);
    }
    cg_strbuf_release(&wa);
    cg_strbuf_release(&wb);
    for (wf_args *x = cg_report_first(ca, a); x; x = cg_report_next(ca, x)) {
        for (wf_args *y = cg_report_first(cb, b); y; y = cg_report_next(cb, y)) {
            if (!cg_streq(x->workflow, y->workflow))
                continue;
            if (ca->sliced) {
                /* the same text is the same value; plain values compare
                 * as text; anything else is read */
                const char *xt = cg_report_text(ca, x, 0), *yt = cg_report_text(cb, y, 0);
                if ((x->len == y->len && memcmp(xt, yt, x->len) == 0) || cg_report_compare_plain(x, xt, y, yt, jc) == 0) {
                    x->covered = y->covered = true;
                    continue;
                }
                if (cg_report_entry_read(ca, x) != 0 || cg_report_entry_read(cb, y) != 0)
                    return -1;
            }
            compare_args(x->args, y->args, jc);
        }
    }
    return 0;
}

static void compare_definitions(const config *a, const config *b, cg_matrix *m)
{
    static const char *const sections[] = {"jobs", "commands", "executors"};
    if (!a->doc || !b->doc)
        return; /* sliced, and the same text */
    for (size_t s = 0; s < 3; s++) {
        json_t *x = json_object_get(cg_doc_root(a->doc), sections[s]);
        json_t *y = json_object_get(cg_doc_root(b->doc), sections[s]);
        const char *key;
        json_t *val;
        cg_strbuf line = CG_STRBUF_INIT;
        json_object_foreach(y, key, val) {
            json_t *old = x ? json_object_get(x, key) : NULL;
            if (old && json_equal(old, val))
                continue;
            cg_strbuf_reset(&line);
            cg_strbuf_addf(&line, "%s.%s %s", sections[s], key, old ? "changed" : "added");
            m->definitions = cg_xrealloc(m->definitions, (m->ndefinitions + 1) * sizeof *m->definitions);
            m->definitions[m->ndefinitions++] = cg_xstrdup(line.buf);
        }
        json_object_foreach(x, key, val) {
            if (y && json_object_get(y, key))
                continue;
            cg_strbuf_reset(&line);
            cg_strbuf_addf(&line, "%s.%s removed", sections[s], key);
            m->definitions = cg_xrealloc(m->definitions, (m->ndefinitions + 1) * sizeof *m->definitions);
            m->definitions[m->ndefinitions++] = cg_xstrdup(line.buf);
        }
        cg_strbuf_release(&line);
    }
}

/* ---- grouping ---- */

static void push_group(cg_matrix *m, char kind, const char *label, const char *why, char **jobs, size_t n)
{
    m->groups = cg_xrealloc(m->groups, (m->ngroups + 1) * sizeof *m->groups);
    cg_group *g = &m->groups[m->ngroups++];
    g->kind = kind;
    g->label = label ? cg_xstrdup(label) : NULL;
    g->why = why ? cg_xstrdup(why) : NULL;
    g->jobs = cg_xmalloc((n + 1) * sizeof *g->jobs);
    for (size_t i = 0; i < n; i++)
        g->jobs[i] = cg_xstrdup(jobs[i]);
    g->n = n;
}

/* "dim=value" as a pattern of `list --where` (the value quoted: a comma
 * in it is "\\,"), cut at 255 bytes. */
static void pair(char out[256], const char *dim, const char *value)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_addf(&sb, "%s=", dim);
    cg_query_quote(&sb, value);
    snprintf(out, 256, "%s", sb.buf);
    cg_strbuf_release(&sb);
}

/* The separator of "a,b": its first comma that no backslash escapes. */
static const char *combo_comma(const char *combo)
{
    const char *c = combo;
    while (*c && *c != ',')
        c += c[0] == '\\' && c[1] ? 2 : 1;
    return c;
}

/* "dim=value" pairs of a job of the model (phase included), in order. */
static size_t job_pairs(const cg_job *j, char pairs[][256], size_t max)
{
    size_t n = 0;
    const cg_tree *t = j->tree;
    for (size_t d = 0; d < t->ndims && n < max; d++)
        if (j->cell->values[d])
            pair(pairs[n++], t->dims[d], j->cell->values[d]);
    if (n < max)
        snprintf(pairs[n++], 256, "phase=%s", t->phases[j->phase].name);
    return n;
}

/* Whether `p` is the pair "dim=value" as pair() makes it (the value quoted
 * when `quote`, the whole cut at 255 bytes), compared as it would be made:
 * explain_group asks this of every job, for each candidate pair. */
static bool is_pair(const char *p, const char *dim, const char *value, bool quote)
{
    size_t n = 0;
#define PAIR_BYTE(ch)                                                                                                  \
    do {                                                                                                               \
        if (n == 255)                                                                                                  \
            return p[n] == '\0'; /* cut here */                                                                        \
        if (p[n] != (ch))                                                                                              \
            return false;                                                                                              \
        n++;                                                                                                           \
    } while (0)
    for (const char *c = dim; *c; c++)
        PAIR_BYTE(*c);
    PAIR_BYTE('=');
    for (const char *c = value; *c; c++) {
        if (quote && (strchr("\\,*?[", *c) || (c == value && *c == '!'))) /* as cg_query_quote */
            PAIR_BYTE('\\');
        PAIR_BYTE(*c);
    }
#undef PAIR_BYTE
    return p[n] == '\0';
}

/* Whether one of job_pairs(j) is `p`. */
static bool has_pair(const cg_job *j, const char *p)
{
    const cg_tree *t = j->tree;
    size_t n = 0;
    for (size_t d = 0; d < t->ndims && n < 70; d++) { /* as job_pairs(j, ., 70) */
        if (!j->cell->values[d])
            continue;
        n++;
        if (is_pair(p, t->dims[d], j->cell->values[d], true))
            return true;
    }
    return n < 70 && is_pair(p, "phase", t->phases[j->phase].name, false);
}

/* Whether job j has both pairs of "a,b" (a pattern as `list --where` takes). */
static bool has_combo(const cg_job *j, const char *combo)
{
    char pairs[70][256];
    size_t n = job_pairs(j, pairs, 70), hits = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(pairs[i]);
        const char *comma = combo_comma(combo);
        hits += ((size_t)(comma - combo) == l && strncmp(combo, pairs[i], l) == 0) ||
                (*comma && strcmp(comma + 1, pairs[i]) == 0);
    }
    return hits == 2;
}

/* "a,b" into key (each pair is under 256 bytes). */
static void combo_key(char key[520], const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    memcpy(key, a, la);
    key[la] = ',';
    memcpy(key + la + 1, b, lb + 1);
}

/* When no single value is new (python=3.8 existed on macOS, now on Linux
 * too): the two values that most of the jobs left share and no job of the
 * other config has together.  Skipped when those jobs are too many to pair
 * cheaply. */
static const char *best_combo(const cg_model *p, const config *other, char **left, size_t n, cg_pool *pool,
                              size_t *best_n)
{
    cg_map counts;
    cg_map_init(&counts);
    const char **order = NULL;
    size_t norder = 0, ocap = 0;
    char pairs[70][256], key[520];
    for (size_t i = 0; i < n; i++) {
        const cg_job *j = cg_jobs_find(&p->jobs, left[i]);
        size_t np = j ? job_pairs(j, pairs, 70) : 0;
        for (size_t a = 0; a < np; a++)
            for (size_t b = a + 1; b < np; b++) {
                combo_key(key, pairs[a], pairs[b]);
                const char *k = cg_intern(pool, key);
                size_t c = (size_t)cg_map_get(&counts, k);
                if (!c) {
                    cg_grow(&order, &ocap, norder + 1, sizeof *order);
                    order[norder++] = k;
                }
                cg_map_put(&counts, k, (void *)(c + 1));
            }
    }
    /* the combinations the other config's jobs have are not news */
    size_t work = 0;
    for (size_t k = 0; k < p->jobs.n && work < ((size_t)1 << 24); k++) {
        const cg_job *j = &p->jobs.v[k];
        if (!has_job(other, j->name))
            continue;
        size_t np = job_pairs(j, pairs, 70);
        work += np * np;
        for (size_t a = 0; a < np; a++)
            for (size_t b = a + 1; b < np; b++) {
                combo_key(key, pairs[a], pairs[b]);
                if (cg_map_get(&counts, key))
                    cg_map_put(&counts, cg_intern(pool, key), (void *)0);
            }
    }
    const char *best = NULL;
    *best_n = 0;
    for (size_t i = 0; i < norder && work < ((size_t)1 << 24); i++) {
        size_t c = (size_t)cg_map_get(&counts, order[i]);
        if (c > *best_n) {
            best = order[i];
            *best_n = c;
        }
    }
    free(order);
    cg_map_release(&counts);
    return best;
}

/* Jobs of the model added (or removed: a selection's culled jobs stay in
 * the model), left[0, n): repeatedly take the value that the jobs left
 * have in common most often and that no job of the other config has (or
 * else two values together), as a group of `kind`.  Returns how many are
 * left in left[] (none in the model, or sharing nothing new). */
static size_t group_by_values(cg_matrix *m, const cg_model *p, char kind, char **left, size_t n,
                              const config *other)
{
    /* pairs of the jobs the other config has too */
    cg_map old_pairs;
    cg_map_init(&old_pairs);
    cg_pool pool;
    cg_pool_init(&pool);
    for (size_t k = 0; p && n > 0 && k < p->jobs.n; k++) { /* (none needed when none was added) */
        const cg_job *j = &p->jobs.v[k];
        if (!has_job(other, j->name))
            continue;
        char pairs[70][256];
        size_t np = job_pairs(j, pairs, 70);
        for (size_t i = 0; i < np; i++)
            cg_map_put(&old_pairs, cg_intern(&pool, pairs[i]), (void *)1);
    }
    while (n > 0 && p) {
        cg_map counts;
        cg_map_init(&counts);
        const char **order = NULL;
        size_t norder = 0, ocap = 0;
        for (size_t i = 0; i < n; i++) {
            const cg_job *j = cg_jobs_find(&p->jobs, left[i]);
            if (!j)
                continue;
            char pairs[70][256];
            size_t np = job_pairs(j, pairs, 70);
            for (size_t q = 0; q < np; q++) {
                if (cg_map_has(&old_pairs, pairs[q]))
                    continue;
                const char *key = cg_intern(&pool, pairs[q]);
                size_t c = (size_t)cg_map_get(&counts, key);
                if (!c) {
                    cg_grow(&order, &ocap, norder + 1, sizeof *order);
                    order[norder++] = key;
                }
                cg_map_put(&counts, key, (void *)(c + 1));
            }
        }
        const char *best = NULL;
        size_t best_n = 0;
        for (size_t i = 0; i < norder; i++) {
            size_t c = (size_t)cg_map_get(&counts, order[i]);
            if (c > best_n) {
                best = order[i];
                best_n = c;
            }
        }
        free(order);
        cg_map_release(&counts);
        bool combo = false;
        if (!best || best_n < 2) {
            best = best_combo(p, other, left, n, &pool, &best_n);
            combo = true;
        }
        if (!best || best_n < 2)
            break;
        char **in = cg_xmalloc((n + 1) * sizeof *in);
        size_t nin = 0, nout = 0;
        for (size_t i = 0; i < n; i++) {
            const cg_job *j = cg_jobs_find(&p->jobs, left[i]);
            if (j && (combo ? has_combo(j, best) : has_pair(j, best)))
                in[nin++] = left[i];
            else
                left[nout++] = left[i];
        }
        push_group(m, kind, best, NULL, in, nin);
        free(in);
        n = nout;
    }
    cg_map_release(&old_pairs);
    cg_pool_release(&pool);
    return n;
}

static void group_added(cg_matrix *m, const cg_model *p, const config *oldc)
{
    size_t n = m->nadded;
    char **left = cg_xmalloc((n + 1) * sizeof *left);
    if (n) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(left, m->added, n * sizeof *left);
    n = group_by_values(m, p, '+', left, n, oldc);
    if (n)
        push_group(m, '+', NULL, NULL, left, n);
    free(left);
}

static size_t tokens(const char *name, char tok[][128], size_t max)
{
    size_t n = 0, len = 0;
    for (const char *c = name;; c++) {
        if (*c == '_' || *c == '\0') {
            if (n < max) {
                tok[n][len < 127 ? len : 127] = '\0';
                n++;
            }
            len = 0;
            if (!*c)
                break;
            continue;
        }
        if (n < max && len < 127)
            tok[n][len] = *c;
        len++;
    }
    return n;
}

/* Removed jobs a selection culled are still in the model: grouped by their
 * values, as added ones are.  The others are not: group them by a part of
 * their name that all of them share and no current job has, and find the
 * dimension that part stands for from a current job whose name differs
 * only there. */
static void group_removed(cg_matrix *m, const cg_model *p, const config *newc)
{
    size_t n = m->nremoved;
    char **left = cg_xmalloc((n + 1) * sizeof *left);
    if (n)
        memcpy(left, m->removed, n * sizeof *left);
    n = group_by_values(m, p, '-', left, n, newc);
    cg_map now;
    cg_map_init(&now);
    cg_pool pool;
    cg_pool_init(&pool);
    for (size_t i = 0; n > 1 && i < newc->n + newc->nshared; i++) { /* (only grouping two or more needs them) */
        char tok[64][128];
        size_t nt = tokens(i < newc->n ? newc->jobs[i].name : newc->shared_names[i - newc->n], tok, 64);
        for (size_t k = 0; k < nt; k++)
            cg_map_put(&now, cg_intern(&pool, tok[k]), (void *)1);
    }
    while (n > 1) {
        char tok[64][128];
        size_t nt = tokens(left[0], tok, 64);
        const char *best = NULL;
        size_t best_n = 0, best_i = 0;
        for (size_t k = 0; k < nt; k++) {
            if (cg_map_has(&now, tok[k]))
                continue;
            size_t c = 0;
            for (size_t i = 0; i < n; i++) {
                char t2[64][128];
                size_t n2 = tokens(left[i], t2, 64);
                for (size_t q = 0; q < n2; q++)
                    if (strcmp(t2[q], tok[k]) == 0) {
                        c++;
                        break;
                    }
            }
            if (c > best_n) {
                best = cg_intern(&pool, tok[k]);
                best_n = c;
                best_i = k;
            }
        }
        if (!best || best_n < 2)
            break;
        /* which dimension: a current job named like left[0] but for that part */
        char label[300];
        snprintf(label, sizeof label, "'%s' in the name", best);
        for (size_t k = 0; p && k < p->jobs.n; k++) {
            char t2[64][128];
            size_t n2 = tokens(p->jobs.v[k].name, t2, 64);
            if (n2 != nt)
                continue;
            size_t diff = 0;
            for (size_t q = 0; q < nt && diff < 2; q++)
                diff += strcmp(t2[q], tok[q]) != 0;
            if (diff != 1 || strcmp(t2[best_i], tok[best_i]) == 0)
                continue;
            const cg_job *j = &p->jobs.v[k];
            for (size_t d = 0; d < j->tree->ndims; d++) {
                const char *v = j->cell->values[d];
                if (!v)
                    continue;
                /* compare with the value as the name pattern normalises it */
                cg_strbuf norm = CG_STRBUF_INIT;
                for (const char *c = v; *c; c++) {
                    bool hit = false;
                    for (size_t r = 0; r < j->tree->nreplace && !hit; r++)
                        if (strncmp(c, j->tree->replace_from[r], strlen(j->tree->replace_from[r])) == 0) {
                            cg_strbuf_adds(&norm, j->tree->replace_to[r]);
                            c += strlen(j->tree->replace_from[r]) - 1;
                            hit = true;
                        }
                    if (!hit)
                        cg_strbuf_addc(&norm, *c);
                }
                if (cg_streq(norm.buf, t2[best_i]))
                    pair(label, j->tree->dims[d], best);
                cg_strbuf_release(&norm);
            }
            break;
        }
        char **in = cg_xmalloc((n + 1) * sizeof *in);
        size_t nin = 0, nout = 0;
        for (size_t i = 0; i < n; i++) {
            char t2[64][128];
            size_t n2 = tokens(left[i], t2, 64);
            bool has = false;
            for (size_t q = 0; q < n2 && !has; q++)
                has = strcmp(t2[q], best) == 0;
            if (has)
                in[nin++] = left[i];
            else
                left[nout++] = left[i];
        }
        push_group(m, '-', label, NULL, in, nin);
        free(in);
        n = nout;
    }
    if (n)
        push_group(m, '-', NULL, NULL, left, n);
    free(left);
    cg_map_release(&now);
    cg_pool_release(&pool);
}

/* A value all of the group's jobs share and no other job carrying the
 * field has (among jobs present in both versions), or NULL. */
static const char *explain_group(const cg_model *p, const config *oldc, const config *newc, char **jobs,
                                 size_t nj, char *buf, size_t size)
{
    const cg_job *j0 = p && nj > 1 ? cg_jobs_find(&p->jobs, jobs[0]) : NULL;
    if (!j0)
        return NULL;
    cg_map in;
    cg_map_init(&in);
    for (size_t z = 0; z < nj; z++)
        cg_map_put(&in, jobs[z], (void *)1);
    char pairs[70][256];
    size_t np = job_pairs(j0, pairs, 70);
    const char *why = NULL;
    /* the group's jobs, found once (NULL: not in the model) */
    const cg_job **gj = cg_xmalloc(nj * sizeof *gj);
    for (size_t k = 1; k < nj; k++)
        gj[k] = cg_jobs_find(&p->jobs, jobs[k]);
    for (size_t q = 0; q < np && !why; q++) {
        bool ok = true;
        for (size_t k = 1; k < nj && ok; k++)
            ok = gj[k] && has_pair(gj[k], pairs[q]);
        /* (the pair first: most jobs lack it, and then where they are
         * does not matter) */
        for (size_t k = 0; k < p->jobs.n && ok; k++) {
            const cg_job *jk = &p->jobs.v[k];
            ok = !has_pair(jk, pairs[q]) || cg_map_has(&in, jk->name) || !has_job(oldc, jk->name) ||
                 !has_job(newc, jk->name);
        }
        if (ok) {
            snprintf(buf, size, "%s", pairs[q]);
            why = buf;
        }
    }
    free(gj);
    cg_map_release(&in);
    return why;
}

/* Changed jobs: the same change on several jobs is one group. */
static void group_changed(cg_matrix *m, const cg_model *p, const config *oldc, const config *newc)
{
    typedef struct { char *label; char **jobs; size_t n, cap; } bucket;
    bucket *b = NULL;
    size_t nb = 0, bcap = 0;
    cg_map index;
    cg_map_init(&index);
    cg_strbuf label = CG_STRBUF_INIT;
    for (size_t i = 0; i < m->nchanged; i++) {
        for (size_t f = 0; f < m->changed[i].n; f++) {
            const cg_field_change *fc = &m->changed[i].v[f];
            /* "F added: 'A'", "F removed (was 'B')", "F 'B' -> 'A'" (a
             * label a change: appended, not printed) */
            cg_strbuf_reset(&label);
            cg_strbuf_adds(&label, fc->field);
            cg_strbuf_adds(&label, !fc->before ? " added: '" : !fc->after ? " removed (was '" : " '");
            cg_strbuf_adds(&label, fc->before ? fc->before : fc->after);
            if (fc->before && fc->after) {
                cg_strbuf_adds(&label, "' -> '");
                cg_strbuf_adds(&label, fc->after);
            }
            cg_strbuf_adds(&label, !fc->after ? "')" : "'");
            size_t k = (size_t)cg_map_get(&index, label.buf);
            if (!k) {
                cg_grow(&b, &bcap, nb + 1, sizeof *b);
                b[nb] = (bucket){cg_xstrdup(label.buf), NULL, 0, 0};
                cg_map_put(&index, b[nb].label, (void *)(nb + 1));
                k = ++nb;
            }
            bucket *bk = &b[k - 1];
            cg_grow(&bk->jobs, &bk->cap, bk->n + 1, sizeof *bk->jobs);
            bk->jobs[bk->n++] = m->changed[i].name;
        }
    }
    for (size_t i = 0; i < nb; i++) {
        char whybuf[256];
        const char *why = explain_group(p, oldc, newc, b[i].jobs, b[i].n, whybuf, sizeof whybuf);
        push_group(m, '~', b[i].label, why, b[i].jobs, b[i].n);
        free(b[i].label);
        free(b[i].jobs);
    }
    free(b);
    cg_map_release(&index);
    cg_strbuf_release(&label);
}

/* ---- the comparison ---- */

static bool same_text(const cg_strbuf *a, const cg_strbuf *b)
{
    return a->len == b->len && memcmp(cg_strbuf_str(a), cg_strbuf_str(b), a->len) == 0;
}

/* Reads what the sliced readings left: the parts besides `workflows:` (for
 * the definitions) and the workflows' skeletons when the two configs'
 * differ, and every entry no comparison read or matched.  0, or -1 when
 * one does not read. */
static int sliced_rest(config *a, config *b)
{
    cg_load_opts o = {.max_bytes = (size_t)1 << 32, .no_positions = true};
    cg_error err;
    cg_error_init(&err);
    int rc = 0;
    for (int side = 0; side < 2 && rc == 0 && !same_text(&a->skeleton, &b->skeleton); side++) {
        config *c = side ? b : a;
        cg_doc *d = cg_doc_parse(c->what, cg_strbuf_str(&c->skeleton), c->skeleton.len, &o, &err);
        rc = d ? 0 : -1;
        cg_doc_free(d);
    }
    if (rc == 0 && !same_text(&a->rest, &b->rest)) {
        a->doc = cg_doc_parse(a->what, cg_strbuf_str(&a->rest), a->rest.len, &o, &err);
        b->doc = a->doc ? cg_doc_parse(b->what, cg_strbuf_str(&b->rest), b->rest.len, &o, &err) : NULL;
        rc = b->doc ? 0 : -1;
    }
    cg_error_release(&err);
    for (int side = 0; side < 2; side++) {
        config *c = side ? b : a;
        for (size_t i = 0; i < c->nents && rc == 0; i++)
            rc = cg_report_entry_check(c, &c->ents[i]);
    }
    return rc;
}

/* compare_job where it needs no YAML and no jansson value (the same job
 * invoked in the same workflows, each pair of entries the same text or
 * plain), on thread t: 0, or 1 when it does (jc then holds what was added
 * before). */
static int compare_job_plain(config *ca, const jobrec *a, config *cb, const jobrec *b, cg_job_change *jc, int t)
{
    if (!ca->sliced || !cg_streq(a->invoke, b->invoke) || !same_workflows(ca, a, cb, b))
        return 1;
    for (wf_args *x = cg_report_first(ca, a); x; x = cg_report_next(ca, x))
        for (wf_args *y = cg_report_first(cb, b); y; y = cg_report_next(cb, y)) {
            if (!cg_streq(x->workflow, y->workflow))
                continue;
            const char *xt = cg_report_text(ca, x, t), *yt = cg_report_text(cb, y, t);
            if ((x->len == y->len && memcmp(xt, yt, x->len) == 0) || cg_report_compare_plain(x, xt, y, yt, jc) == 0) {
                x->covered = y->covered = true;
                continue;
            }
            return 1;
        }
    return 0;
}

/* The jobs [from, to) of b compared without YAML where they can be: each
 * one's entry in a (*old, NULL: none), its changes, and whether it still
 * needs compare_job. */
typedef struct compare_part {
    config *a, *b;
    size_t from, to;
    jobrec **old;
    cg_job_change *jc;
    bool *again;
    int t;               /* which of the configs' readers it reads entries with */
} compare_part;

static void compare_part_run(void *v)
{
    compare_part *q = v;
    for (size_t i = q->from; i < q->to; i++) {
        q->old[i] = config_find(q->a, q->b->jobs[i].name);
        q->jc[i] = (cg_job_change){NULL, NULL, 0};
        q->again[i] = q->old[i] && compare_job_plain(q->a, q->old[i], q->b, &q->b->jobs[i], &q->jc[i], q->t) != 0;
    }
}

static void job_change_release(cg_job_change *jc)
{
    for (size_t f = 0; f < jc->n; f++) {
        free(jc->v[f].field);
        free(jc->v[f].before);
        free(jc->v[f].after);
    }
    free(jc->v);
    free(jc->name);
    *jc = (cg_job_change){NULL, NULL, 0};
}

int cg_report_compare_configs(config *a, config *b, const cg_model *p, cg_run_both_fn both, cg_matrix *m)
{
    m->valid = true;
    size_t acap = 0, ccap = 0, rcap = 0; /* (doubled as they grow, not one by one) */
    /* the jobs of b in two halves (at once, when `both` runs them so),
     * compared where they need nothing but their text; then in order,
     * those that need more compared as ever (compare_job, one at a time:
     * it reads YAML into a and b) */
    jobrec **old = cg_xmalloc((b->n + 1) * sizeof *old);
    cg_job_change *jcs = cg_xmalloc((b->n + 1) * sizeof *jcs);
    bool *again = cg_xmalloc(b->n + 1);
    compare_part h0 = {a, b, 0, b->n / 2, old, jcs, again, 0}, h1 = {a, b, b->n / 2, b->n, old, jcs, again, 1};
    if (both && b->n >= 1024) {
        both(compare_part_run, &h0, &h1);
    } else {
        compare_part_run(&h0);
        compare_part_run(&h1);
    }
    int rc = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (rc != 0) {
            job_change_release(&jcs[i]);
            continue;
        }
        if (!old[i]) {
            cg_grow(&m->added, &acap, m->nadded + 1, sizeof *m->added);
            m->added[m->nadded++] = cg_xstrdup(b->jobs[i].name);
            continue;
        }
        cg_job_change jc = jcs[i];
        if (again[i]) {
            job_change_release(&jc);
            if (compare_job(a, old[i], b, &b->jobs[i], &jc) != 0) {
                cg_grow(&m->changed, &ccap, m->nchanged + 1, sizeof *m->changed);
                m->changed[m->nchanged++] = jc; /* released with m */
                rc = -1;
                continue;
            }
        }
        if (jc.n) {
            jc.name = cg_xstrdup(b->jobs[i].name);
            cg_grow(&m->changed, &ccap, m->nchanged + 1, sizeof *m->changed);
            m->changed[m->nchanged++] = jc;
        }
    }
    free(old);
    free(jcs);
    free(again);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < a->n; i++) {
        if (config_find(b, a->jobs[i].name))
            continue;
        cg_grow(&m->removed, &rcap, m->nremoved + 1, sizeof *m->removed);
        m->removed[m->nremoved++] = cg_xstrdup(a->jobs[i].name);
    }
    if (a->sliced && sliced_rest(a, b) != 0)
        return -1;
    compare_definitions(a, b, m);
    group_added(m, p, a);
    group_removed(m, p, b);
    group_changed(m, p, a, b);
    return 0;
}

void cg_matrix_compare_whole(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                             const cg_model *p, cg_matrix *m)
{
    memset(m, 0, sizeof *m);
    config a, b;
    char *problem = config_read(old_text, old_len, "config.yml (committed)", &a);
    if (problem) {
        m->problem = problem;
        cg_report_config_release(&a);
        return;
    }
    problem = config_read(new_text, new_len, "config.yml (generated)", &b);
    if (problem) {
        m->problem = problem;
        cg_report_config_release(&a);
        cg_report_config_release(&b);
        return;
    }
    cg_report_compare_configs(&a, &b, p, NULL, m);
    cg_report_config_release(&a);
    cg_report_config_release(&b);
}

typedef struct slice_job {
    const char *text;
    size_t len;
    const char *what;
    size_t hint;
    config *c;
    int rc;
} slice_job;

static void slice_one(void *v)
{
    slice_job *j = v;
    j->rc = cg_report_slice(j->text, j->len, j->what, j->hint, j->c);
}

/* The sliced reading, the two texts sliced by `both` (at once), or one
 * after the other. */
static bool compare_sliced(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                           const cg_model *p, cg_run_both both, cg_matrix *m)
{
    memset(m, 0, sizeof *m);
    config a, b;
    size_t hint = p ? p->jobs.n : 0;
    slice_job ja = {old_text, old_len, "config.yml (committed)", hint, &a, 0};
    slice_job jb = {new_text, new_len, "config.yml (generated)", hint, &b, 0};
    bool ok;
    if (both) {
        both(slice_one, &ja, &jb);
        ok = ja.rc == 0 && jb.rc == 0 && cg_report_compare_configs(&a, &b, p, both, m) == 0;
        cg_report_config_release(&b);
    } else {
        slice_one(&ja);
        ok = ja.rc == 0;
        if (ok) {
            slice_one(&jb);
            ok = jb.rc == 0 && cg_report_compare_configs(&a, &b, p, both, m) == 0;
            cg_report_config_release(&b);
        }
    }
    cg_report_config_release(&a);
    if (!ok)
        cg_matrix_release(m);
    return ok;
}

bool cg_matrix_compare_sliced(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                              const cg_model *p, cg_matrix *m)
{
    return compare_sliced(old_text, old_len, new_text, new_len, p, NULL, m);
}

void cg_matrix_compare_both(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                            const cg_model *p, cg_run_both both, cg_matrix *m)
{
    if (!compare_sliced(old_text, old_len, new_text, new_len, p, both, m))
        cg_matrix_compare_whole(old_text, old_len, new_text, new_len, p, m);
}

void cg_matrix_compare(const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                       const cg_model *p, cg_matrix *m)
{
    cg_matrix_compare_both(old_text, old_len, new_text, new_len, p, NULL, m);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void cg_matrix_release(cg_matrix *m)
{
    free_list(m->added, m->nadded);
    free_list(m->removed, m->nremoved);
    for (size_t i = 0; i < m->nchanged; i++) {
        for (size_t f = 0; f < m->changed[i].n; f++) {
            free(m->changed[i].v[f].field);
            free(m->changed[i].v[f].before);
            free(m->changed[i].v[f].after);
        }
        free(m->changed[i].v);
        free(m->changed[i].name);
    }
    free(m->changed);
    free_list(m->definitions, m->ndefinitions);
    for (size_t i = 0; i < m->ngroups; i++) {
        free(m->groups[i].label);
        free(m->groups[i].why);
        free_list(m->groups[i].jobs, m->groups[i].n);
    }
    free(m->groups);
    free(m->problem);
    memset(m, 0, sizeof *m);
}

void cg_matrix_summary(const cg_matrix *m, cg_strbuf *out)
{
    bool any = false;
    if (m->nadded) {
        cg_strbuf_addf(out, "+%zu job%s", m->nadded, m->nadded == 1 ? "" : "s");
        any = true;
    }
    if (m->nremoved) {
        cg_strbuf_addf(out, "%s-%zu job%s", any ? ", " : "", m->nremoved, m->nremoved == 1 ? "" : "s");
        any = true;
    }
    if (m->nchanged) {
        cg_strbuf_addf(out, "%s%zu changed", any ? ", " : "", m->nchanged);
        any = true;
    }
    if (!any && m->ndefinitions)
        cg_strbuf_addf(out, "%zu definition%s changed", m->ndefinitions, m->ndefinitions == 1 ? "" : "s");
    else if (!any)
        cg_strbuf_adds(out, "no job added, removed or changed");
}

static void put_line(cg_strbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void names(cg_strbuf *out, char **v, size_t n)
{
    size_t show_n = n < 3 ? n : 3;
    cg_strbuf line = CG_STRBUF_INIT;
    cg_strbuf_adds(&line, "      ");
    for (size_t i = 0; i < show_n; i++)
        cg_strbuf_addf(&line, "%s%s", i ? ", " : "", v[i]);
    if (n > show_n)
        cg_strbuf_addf(&line, " and %zu more", n - show_n);
    put_line(out, "%s", cg_strbuf_str(&line));
    cg_strbuf_release(&line);
}

void cg_matrix_print(const cg_matrix *m, cg_strbuf *out)
{
    if (!m->valid) {
        cg_strbuf_addf(out, "jobs: cannot compare: %s\n", m->problem ? m->problem : "unknown");
        return;
    }
    if (!m->nadded && !m->nremoved && !m->nchanged && !m->ndefinitions) {
        cg_strbuf_adds(out, "jobs: none added, removed or changed (the order of entries, comments, formatting or the header differ)\n");
        return;
    }
    cg_strbuf_adds(out, "jobs: ");
    cg_matrix_summary(m, out);
    cg_strbuf_addc(out, '\n');
    cg_matrix_print_groups(m, out);
}

/* One line of the report, as printed: escaped as messages are (the values
 * come from the committed file, which a pull request may write: a value
 * cannot forge a line or drive the terminal), cut at CG_DIFF_MAX_WIDTH
 * bytes. */
static void put_line(cg_strbuf *out, const char *fmt, ...)
{
    cg_strbuf line = CG_STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(&line, fmt, ap);
    va_end(ap);
    size_t n = line.len, shown = n;
    if (shown > CG_DIFF_MAX_WIDTH) {
        shown = CG_DIFF_MAX_WIDTH;
        while (shown > 0 && ((unsigned char)line.buf[shown] & 0xC0) == 0x80 && CG_DIFF_MAX_WIDTH - shown < 4)
            shown--;
    }
    cg_escape_line(out, cg_strbuf_str(&line), shown);
    if (shown < n)
        cg_strbuf_addf(out, " ... (%zu more bytes)", n - shown);
    cg_strbuf_addc(out, '\n');
    cg_strbuf_release(&line);
}

void cg_matrix_print_groups(const cg_matrix *m, cg_strbuf *out)
{
    size_t ngroups = m->ngroups < CG_REPORT_MAX_GROUPS ? m->ngroups : CG_REPORT_MAX_GROUPS;
    for (size_t i = 0; i < ngroups; i++) {
        const cg_group *g = &m->groups[i];
        if (g->kind == '~' && g->n == 1) {
            put_line(out, "  ~ %s: %s", g->jobs[0], g->label);
            continue;
        }
        if (g->kind == '~') {
            put_line(out, "  ~%zu jobs: %s%s%s%s", g->n, g->label, g->why ? " (" : "",
                           g->why ? g->why : "", g->why ? ")" : "");
        } else if (!g->label) {
            for (size_t k = 0; k < g->n && k < 10; k++)
                put_line(out, "  %c %s", g->kind, g->jobs[k]);
            if (g->n > 10)
                put_line(out, "  %c ... and %zu more", g->kind, g->n - 10);
            continue;
        } else {
            put_line(out, "  %c%zu job%s: %s", g->kind, g->n, g->n == 1 ? "" : "s",
                           g->label ? g->label : "(no single dimension value explains them)");
        }
        names(out, g->jobs, g->n);
    }
    if (ngroups < m->ngroups) {
        size_t jobs = 0;
        for (size_t i = ngroups; i < m->ngroups; i++)
            jobs += m->groups[i].n;
        cg_strbuf_addf(out, "  ... and %zu more groups (%zu jobs) not shown; --json lists them all\n",
                       m->ngroups - ngroups, jobs);
    }
    size_t ndefs = m->ndefinitions < CG_REPORT_MAX_GROUPS ? m->ndefinitions : CG_REPORT_MAX_GROUPS;
    for (size_t i = 0; i < ndefs; i++)
        put_line(out, "  definition %s", m->definitions[i]);
    if (ndefs < m->ndefinitions)
        cg_strbuf_addf(out, "  ... and %zu more definitions not shown\n", m->ndefinitions - ndefs);
}

static json_t *str_array(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *opt_string(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *cg_matrix_json(const cg_matrix *m)
{
    json_t *o = json_object();
    if (!m->valid) {
        json_object_set_new(o, "error", json_string(m->problem ? m->problem : "unknown"));
        return o;
    }
    json_object_set_new(o, "added", str_array(m->added, m->nadded));
    json_object_set_new(o, "removed", str_array(m->removed, m->nremoved));
    json_t *ch = json_array();
    for (size_t i = 0; i < m->nchanged; i++) {
        json_t *c = json_object(), *fields = json_array();
        json_object_set_new(c, "name", json_string(m->changed[i].name));
        for (size_t f = 0; f < m->changed[i].n; f++) {
            json_t *x = json_object();
            json_object_set_new(x, "field", json_string(m->changed[i].v[f].field));
            json_object_set_new(x, "before", opt_string(m->changed[i].v[f].before));
            json_object_set_new(x, "after", opt_string(m->changed[i].v[f].after));
            json_array_append_new(fields, x);
        }
        json_object_set_new(c, "changes", fields);
        json_array_append_new(ch, c);
    }
    json_object_set_new(o, "changed", ch);
    json_t *gs = json_array();
    for (size_t i = 0; i < m->ngroups; i++) {
        const cg_group *g = &m->groups[i];
        json_t *x = json_object();
        json_object_set_new(x, "kind", json_string(g->kind == '+' ? "added" : g->kind == '-' ? "removed" : "changed"));
        json_object_set_new(x, "count", json_integer((json_int_t)g->n));
        if (g->kind == '~') {
            json_object_set_new(x, "change", json_string(g->label));
            json_object_set_new(x, "by", opt_string(g->why));
        } else {
            json_object_set_new(x, "by", opt_string(g->label));
        }
        json_object_set_new(x, "jobs", str_array(g->jobs, g->n));
        json_array_append_new(gs, x);
    }
    json_object_set_new(o, "groups", gs);
    json_object_set_new(o, "definitions", str_array(m->definitions, m->ndefinitions));
    return o;
}
