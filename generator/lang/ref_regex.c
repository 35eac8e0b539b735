#include "lang/ref_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"

/* What one regex may cost beyond the gate's limits (ref_regex_gate.c):
 * PCRE2 compiles into at most 64K code units (its link size) with at most
 * COMPILE_HEAP bytes, and a match stops after MATCH_LIMIT steps,
 * DEPTH_LIMIT nested backtracks or HEAP_LIMIT_KIB of backtracking frames:
 * about a tenth of a second at worst, whatever the regex and the name. */
#define MAX_PATTERN 65536       /* bytes of the pattern handed to PCRE2 */
#define PARENS_LIMIT 104        /* the gate's 100, and JAVA_DOLLAR nests 2 more */
#define COMPILE_HEAP (16u << 20)
#define MATCH_LIMIT 1000000
#define DEPTH_LIMIT 100000
#define HEAP_LIMIT_KIB 65536

/* PCRE2 10.42 without UCP makes \S+ possessive before \v or \h, as if
 * they held only spaces, and \S+\v fails on "a" U+2029 (Java matches): its
 * optimizations are off, a match being bounded by MATCH_LIMIT anyway. */
#define OPTIMIZATIONS_OFF (PCRE2_NO_AUTO_POSSESS | PCRE2_NO_START_OPTIMIZE)

bool cg_ref_is_regex(const char *value)
{
    size_t n = strlen(value);
    return n >= 2 && value[0] == '/' && value[n - 1] == '/';
}

/* The memory of one compilation, counted: PCRE2 gets none past COMPILE_HEAP
 * (it then fails cleanly).  Only the compilation counts: `limit` is 0 once
 * it is done, and the allocator only reads it from then on. */
typedef struct compile_mem {
    size_t used, limit;
} compile_mem;

static void *mem_alloc(size_t n, void *data)
{
    compile_mem *m = data;
    if (m->limit) {
        if (n > m->limit - m->used)
            return NULL;
        m->used += n;
    }
    return malloc(n);
}

static void mem_free(void *p, void *data)
{
    (void)data;
    free(p);
}

struct cg_ref_value {
    bool is_regex;
    bool units_behind; /* (cg_regex_java_to_pcre2) */
    pcre2_code *code;
    pcre2_match_context *mctx;
    compile_mem mem;
    char text[]; /* the value as written */
};

/* Compiles the PCRE2 pattern into v; 0, or PCRE2's reason in why. */
static int compile(cg_ref_value *v, const char *pattern, size_t len, cg_strbuf *why)
{
    v->mem = (compile_mem){0, COMPILE_HEAP};
    pcre2_general_context *gc = pcre2_general_context_create(mem_alloc, mem_free, &v->mem);
    pcre2_compile_context *cc = gc ? pcre2_compile_context_create(gc) : NULL;
    int errcode = PCRE2_ERROR_NOMEMORY;
    PCRE2_SIZE erroff;
    if (cc) {
        pcre2_set_max_pattern_length(cc, MAX_PATTERN);
        pcre2_set_parens_nest_limit(cc, PARENS_LIMIT);
        v->code = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_NEVER_UCP | PCRE2_NEVER_BACKSLASH_C |
                                PCRE2_ANCHORED | PCRE2_ENDANCHORED | OPTIMIZATIONS_OFF, &errcode, &erroff, cc);
    }
    pcre2_compile_context_free(cc);
    pcre2_general_context_free(gc);
    v->mem.limit = 0;
    if (!v->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(errcode, msg, sizeof msg);
        cg_strbuf_addf(why, "%s", (const char *)msg);
        return -1;
    }
    if (!(v->mctx = pcre2_match_context_create(NULL)))
        cg_die_oom();
    pcre2_set_match_limit(v->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(v->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(v->mctx, HEAP_LIMIT_KIB);
    return 0;
}

cg_ref_value *cg_ref_value_new(const char *value, const char *kind, const cg_pos *pos, cg_error *err)
{
    size_t n = strlen(value);
    cg_ref_value *v = cg_xmalloc(sizeof *v + n + 1);
    memset(v, 0, sizeof *v);
    memcpy(v->text, value, n + 1);
    v->is_regex = cg_ref_is_regex(value);
    if (!v->is_regex)
        return v;
    cg_strbuf pattern = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    int rc = cg_regex_java_to_pcre2(value + 1, n - 2, &pattern, &why, &v->units_behind);
    if (rc == 0 && compile(v, pattern.buf ? pattern.buf : "", pattern.len, &why) != 0)
        rc = CG_REGEX_LIMIT;
    if (rc == CG_REGEX_INVALID && err)
        cg_error_at(err, pos, "the %s filter %s is not a valid regular expression: %s (CircleCI reads it as a Java "
                    "regex, and Java refuses it too)", kind, value, why.buf);
    else if (rc == CG_REGEX_LIMIT && err)
        cg_error_at(err, pos, "the %s filter %s cannot be evaluated by cigen's regex engine: PCRE2 says \"%s\" "
                    "(CircleCI reads it as a Java regex, but cigen evaluates branch and tag filters itself (list "
                    "--branch, select, special-PR checks) with PCRE2, within limits that keep any regex's cost "
                    "bounded)", kind, value, why.buf);
    else if (rc != 0 && err)
        cg_error_at(err, pos, "the %s filter %s uses %s, which cigen cannot evaluate: CircleCI reads it as a Java "
                    "regex, but cigen evaluates branch and tag filters itself (list --branch, select, special-PR "
                    "checks) with PCRE2, and refuses what PCRE2 would read otherwise than Java: inline flags, "
                    "\\b \\B, \\p{..}, \\X, \\N{..}, \\Q...\\E, a class inside a class or &&, a repetition of an "
                    "anchor, of nothing or of what can match nothing, a possessive group", kind, value, why.buf);
    cg_strbuf_release(&pattern);
    cg_strbuf_release(&why);
    if (rc != 0) {
        cg_ref_value_free(v);
        return NULL;
    }
    return v;
}

void cg_ref_value_free(cg_ref_value *v)
{
    if (v) {
        pcre2_match_context_free(v->mctx);
        pcre2_code_free(v->code);
    }
    free(v);
}

int cg_ref_value_match(const cg_ref_value *v, const char *name)
{
    if (!v->is_regex)
        return strcmp(v->text, name) == 0;
    size_t n = strlen(name), i = 0, len;
    while (i < n && (len = cg_utf8_length(name + i)) != 0) {
        if (len == 4 && v->units_behind)
            return -1;
        i += len;
    }
    cg_strbuf fixed = CG_STRBUF_INIT;
    if (i < n) { /* not UTF-8 (git allows it): each stray byte U+FFFD, as Java decodes it */
        for (cg_strbuf_add(&fixed, name, i); i < n; i += len ? len : 1) {
            len = cg_utf8_length(name + i);
            cg_strbuf_add(&fixed, len ? name + i : "\xEF\xBF\xBD", len ? len : 3);
        }
        name = fixed.buf;
        n = fixed.len;
    }
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        cg_die_oom();
    int rc = pcre2_match(v->code, (PCRE2_SPTR)name, n, 0, 0, md, v->mctx);
    pcre2_match_data_free(md);
    cg_strbuf_release(&fixed);
    return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* A walk over the filters of a doc: each /regex/ checked once. */
typedef struct walk {
    const cg_doc *doc;
    bool templated;      /* a value with a placeholder is known only once rendered */
    cg_map seen;         /* values already checked (borrowed from the doc) */
    cg_error *err;
} walk;

static int check_value(walk *W, const char *path, json_t *v, const char *kind)
{
    const char *s = json_string_value(v);
    if (!s || !cg_ref_is_regex(s) || (W->templated && strstr(s, "{{")) || cg_map_put_new(&W->seen, s, (void *)s))
        return 0;
    cg_pos pos = cg_doc_where(W->doc, path);
    cg_ref_value *rv = cg_ref_value_new(s, kind, &pos, W->err);
    cg_ref_value_free(rv);
    return rv ? 0 : -1;
}

/* A value or a list of values. */
static int check_values(walk *W, const char *path, json_t *v, const char *kind)
{
    if (!json_is_array(v))
        return check_value(W, path, v, kind);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
        cg_path_join_index(&ip, path, i);
        rc = check_value(W, ip.buf, json_array_get(v, i), kind);
    }
    cg_strbuf_release(&ip);
    return rc;
}

/* A key, or the same key made optional ("branches?") in a template. */
static bool key_is(const char *key, const char *name)
{
    size_t n = strlen(name);
    return strncmp(key, name, n) == 0 && (key[n] == '\0' || (key[n] == '?' && key[n + 1] == '\0'));
}

static int check_filters(walk *W, const char *path, json_t *filters)
{
    const char *key, *sub;
    json_t *v, *x;
    int rc = 0;
    cg_strbuf kp = CG_STRBUF_INIT, sp = CG_STRBUF_INIT;
    json_object_foreach(filters, key, v) {
        const char *kind = key_is(key, "branches") ? "branch" : key_is(key, "tags") ? "tag" : NULL;
        if (!kind)
            continue;
        cg_path_join_key(&kp, path, key);
        if (!json_is_object(v)) {
            rc = check_values(W, kp.buf, v, kind);
        } else {
            json_object_foreach(v, sub, x) {
                if (!key_is(sub, "only") && !key_is(sub, "ignore"))
                    continue;
                cg_path_join_key(&sp, kp.buf, sub);
                if ((rc = check_values(W, sp.buf, x, kind)) != 0)
                    break;
            }
        }
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&kp);
    cg_strbuf_release(&sp);
    return rc;
}

/* The `filters:` of each entry of a workflow's `jobs` at path. */
static int check_entries(walk *W, const char *path, json_t *jobs)
{
    cg_strbuf ep = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(jobs) && rc == 0; i++) {
        json_t *e = json_array_get(jobs, i);
        void *it = json_is_object(e) ? json_object_iter(e) : NULL;
        json_t *args = it ? json_object_iter_value(it) : NULL;
        json_t *f = json_is_object(args) ? json_object_get(args, "filters") : NULL;
        if (!json_is_object(f))
            continue;
        cg_path_join_index(&ep, path, i);
        cg_path_push_key(&ep, json_object_iter_key(it));
        cg_path_push_key(&ep, "filters");
        rc = check_filters(W, ep.buf, f);
    }
    cg_strbuf_release(&ep);
    return rc;
}

/* The entries and the triggers' filters of each workflow at path. */
static int check_workflows(walk *W, const char *path, json_t *workflows)
{
    const char *name;
    json_t *wf;
    int rc = 0;
    cg_strbuf p = CG_STRBUF_INIT;
    json_object_foreach(workflows, name, wf) {
        if (!json_is_object(wf))
            continue;
        cg_path_join_key(&p, path, name);
        cg_path_push_key(&p, "jobs");
        if ((rc = check_entries(W, p.buf, json_object_get(wf, "jobs"))) != 0)
            break;
        /* a scheduled workflow's branches: triggers: [{schedule: {filters: ...}}] */
        json_t *triggers = json_object_get(wf, "triggers");
        for (size_t i = 0; i < json_array_size(triggers) && rc == 0; i++) {
            json_t *sched = json_object_get(json_array_get(triggers, i), "schedule");
            json_t *f = json_object_get(sched, "filters");
            if (!json_is_object(f))
                continue;
            cg_path_join_key(&p, path, name);
            cg_path_push_key(&p, "triggers");
            cg_path_push_index(&p, i);
            cg_path_push_key(&p, "schedule");
            cg_path_push_key(&p, "filters");
            rc = check_filters(W, p.buf, f);
        }
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&p);
    return rc;
}

static int run_walk(const cg_doc *doc, bool templated, cg_error *err, int (*check)(walk *, const char *, json_t *),
                    const char *path, json_t *v)
{
    walk W = {doc, templated, {0}, err};
    cg_map_init(&W.seen);
    int rc = check(&W, path, v);
    cg_map_release(&W.seen);
    return rc;
}

int cg_ref_filters_check(const cg_doc *doc, const char *path, json_t *filters, bool templated, cg_error *err)
{
    return json_is_object(filters) ? run_walk(doc, templated, err, check_filters, path, filters) : 0;
}

int cg_ref_entries_check(const cg_doc *doc, const char *path, json_t *jobs, cg_error *err)
{
    return run_walk(doc, false, err, check_entries, path, jobs);
}

int cg_ref_workflows_check(const cg_doc *doc, const char *path, json_t *workflows, cg_error *err)
{
    return run_walk(doc, false, err, check_workflows, path, workflows);
}

void cg_ref_cache_init(cg_ref_cache *c)
{
    memset(c, 0, sizeof *c);
    cg_map_init(&c->index);
}

void cg_ref_cache_release(cg_ref_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].text);
        cg_ref_value_free(c->v[i].value);
    }
    free(c->v);
    cg_map_release(&c->index);
    memset(c, 0, sizeof *c);
}

int cg_ref_cache_match(cg_ref_cache *c, const char *value, const char *name)
{
    if (!cg_ref_is_regex(value))
        return strcmp(value, name) == 0;
    uintptr_t k1 = (uintptr_t)cg_map_get(&c->index, value);
    if (!k1) {
        cg_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v);
        c->v[c->n] = (cg_ref_cached){cg_xstrdup(value), cg_ref_value_new(value, NULL, NULL, NULL)};
        k1 = ++c->n;
        cg_map_put(&c->index, c->v[k1 - 1].text, (void *)k1);
    }
    const cg_ref_value *v = c->v[k1 - 1].value;
    return v ? cg_ref_value_match(v, name) : -1;
}
