/* Grouping a report's jobs (audit/report.h) by the dimension value that
 * explains them, from the current model: "+12 jobs: python=3.8". */
#include "audit/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/report_impl.h"
#include "model/query.h"

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
        if (!cg_report_find(other, j->name))
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
        if (!cg_report_find(other, j->name))
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

/* A value as a job name pattern writes it (the tree's `replace`). */
static void normalize(const cg_tree *t, const char *v, cg_strbuf *out)
{
    for (const char *c = v; *c; c++) {
        bool hit = false;
        for (size_t r = 0; r < t->nreplace && !hit; r++)
            if (strncmp(c, t->replace_from[r], strlen(t->replace_from[r])) == 0) {
                cg_strbuf_adds(out, t->replace_to[r]);
                c += strlen(t->replace_from[r]) - 1;
                hit = true;
            }
        if (!hit)
            cg_strbuf_addc(out, *c);
    }
}

/* The value a removed job had where current job j, named like it but for
 * one part, has one of its values: "python=3.5" into label (as `list
 * --where` takes it), when j's value, as its name writes it, covers the
 * part of the names that differs and the removed job's part reads back
 * (the tree's `replace` undone) as a value that the name writes so.  The
 * label stays as it is otherwise. */
static void removed_value(const cg_job *j, const char *removed, char *label, size_t size)
{
    const char *jn = j->name;
    size_t jl = strlen(jn), rl = strlen(removed), cp = 0, cs = 0;
    while (cp < jl && cp < rl && jn[cp] == removed[cp])
        cp++;
    while (cs < jl - cp && cs < rl - cp && jn[jl - 1 - cs] == removed[rl - 1 - cs])
        cs++;
    const cg_tree *t = j->tree;
    for (size_t d = 0; d < t->ndims; d++) {
        const char *v = j->cell->values[d];
        if (!v)
            continue;
        cg_strbuf norm = CG_STRBUF_INIT, back = CG_STRBUF_INIT, again = CG_STRBUF_INIT;
        normalize(t, v, &norm);
        /* where j's name writes the value, over the part that differs */
        for (const char *at = norm.len ? strstr(jn, norm.buf) : NULL; at; at = strstr(at + 1, norm.buf)) {
            size_t q = (size_t)(at - jn), e = q + norm.len;
            if (q > cp || e < jl - cs || jl - e > rl - q)
                continue;
            /* the removed job's part there, its replacements undone where
             * j's value made them */
            const char *x = removed + q;
            size_t xl = rl - q - (jl - e);
            for (size_t i = 0; i < xl;) {
                bool hit = false;
                for (size_t r = 0; r < t->nreplace && !hit; r++) {
                    size_t tl = strlen(t->replace_to[r]);
                    if (tl && strstr(v, t->replace_from[r]) && i + tl <= xl &&
                        strncmp(x + i, t->replace_to[r], tl) == 0) {
                        cg_strbuf_adds(&back, t->replace_from[r]);
                        i += tl;
                        hit = true;
                    }
                }
                if (!hit)
                    cg_strbuf_addc(&back, x[i++]);
            }
            normalize(t, back.buf ? back.buf : "", &again);
            if (back.len && again.len == xl && memcmp(again.buf, x, xl) == 0) {
                pair(label, t->dims[d], back.buf);
                label[size - 1] = '\0';
                d = t->ndims; /* found */
            }
            break;
        }
        cg_strbuf_release(&norm);
        cg_strbuf_release(&back);
        cg_strbuf_release(&again);
    }
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
    for (size_t i = 0; n > 1 && i < newc->n; i++) { /* (only grouping two or more needs them) */
        char tok[64][128];
        size_t nt = tokens(newc->jobs[i].name, tok, 64);
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
        /* which dimension and value: a current job named like left[0] but
         * for that part */
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
            removed_value(&p->jobs.v[k], left[0], label, sizeof label);
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
            ok = !has_pair(jk, pairs[q]) || cg_map_has(&in, jk->name) || !cg_report_find(oldc, jk->name) ||
                 !cg_report_find(newc, jk->name);
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

/* An item of a list as a label shows it: a string as it is, else JSON. */
static void item_text(cg_strbuf *out, json_t *v)
{
    if (json_is_string(v)) {
        cg_strbuf_adds(out, json_string_value(v));
        return;
    }
    char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    cg_strbuf_adds(out, t ? t : "?");
    free(t);
}

/* Whether json array a holds an item equal to v. */
static bool array_has(json_t *a, json_t *v)
{
    for (size_t i = 0; i < json_array_size(a); i++)
        if (json_equal(json_array_get(a, i), v))
            return true;
    return false;
}

/* A change between two lists (before and after, JSON text) as what the
 * list gained and lost, " +hold -setup" (or " reordered"), appended to
 * label: false when they are not both lists. */
static bool list_change(const char *before, const char *after, cg_strbuf *label)
{
    if (!before || !after || before[0] != '[' || after[0] != '[')
        return false;
    json_t *a = json_loads(before, JSON_DECODE_ANY, NULL), *b = json_loads(after, JSON_DECODE_ANY, NULL);
    bool lists = json_is_array(a) && json_is_array(b);
    if (lists) {
        size_t len = label->len;
        for (size_t i = 0; i < json_array_size(b); i++)
            if (!array_has(a, json_array_get(b, i))) {
                cg_strbuf_adds(label, " +");
                item_text(label, json_array_get(b, i));
            }
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!array_has(b, json_array_get(a, i))) {
                cg_strbuf_adds(label, " -");
                item_text(label, json_array_get(a, i));
            }
        if (label->len == len)
            cg_strbuf_adds(label, json_array_size(a) == json_array_size(b) ? " reordered" : " (an item repeated)");
    }
    json_decref(a);
    json_decref(b);
    return lists;
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
            if (list_change(fc->before, fc->after, &label)) {
                /* "requires +hold": what the list gained and lost */
            } else {
                cg_strbuf_adds(&label, !fc->before ? " added: '" : !fc->after ? " removed (was '" : " '");
                cg_strbuf_adds(&label, fc->before ? fc->before : fc->after);
                if (fc->before && fc->after) {
                    cg_strbuf_adds(&label, "' -> '");
                    cg_strbuf_adds(&label, fc->after);
                }
                cg_strbuf_adds(&label, !fc->after ? "')" : "'");
            }
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

void cg_report_group(cg_matrix *m, const cg_model *p, const config *oldc, const config *newc)
{
    group_added(m, p, oldc);
    group_removed(m, p, newc);
    group_changed(m, p, oldc, newc);
}
