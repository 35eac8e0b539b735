/* Reading a config as jobs (audit/report_impl.h): whole, as a YAML
 * document, or by slicing its text.
 *
 * A config that cigen wrote is block YAML: top-level keys at column 0,
 * `workflows:` holding the workflows, each its `jobs:` list of entries.
 * Those are sliced out as text, so two configs compare entry by entry: the
 * same text is the same value, and only an entry whose text differs is
 * read as YAML (alone).  Whatever slicing cannot read as a parser would (a
 * flow collection across lines, a document marker, a key that is not
 * plain, anchors or aliases in `workflows:`) makes cg_report_slice fail,
 * and the caller reads both configs whole.
 */
#include <stdlib.h>
#include <string.h>

#include "audit/report_impl.h"
#include "lang/yaml_text.h"

/* nesting above a workflow entry's sequence: the root, `workflows:`, the
 * workflow */
enum { ENTRY_DEPTH = 3 };

static size_t eol(const char *t, size_t len, size_t i)
{
    const char *nl = memchr(t + i, '\n', len - i);
    return nl ? (size_t)(nl - t) : len;
}

static size_t next_line(size_t len, size_t e)
{
    return e < len ? e + 1 : len;
}

static size_t indent_at(const char *t, size_t i, size_t e)
{
    size_t k = i;
    while (k < e && t[k] == ' ')
        k++;
    return k - i;
}

/* blank, spaces only, or a comment */
static bool no_content(const char *t, size_t i, size_t e)
{
    size_t k = i + indent_at(t, i, e);
    return k == e || t[k] == '#';
}

/* the first line at or after i with content, or end */
static size_t next_content(const char *t, size_t end, size_t i)
{
    while (i < end) {
        size_t e = eol(t, end, i);
        if (!no_content(t, i, e))
            return i;
        i = next_line(end, e);
    }
    return end;
}

/* past the lines at or after i that are deeper than `ind` (or have no content) */
static size_t skip_deeper(const char *t, size_t end, size_t i, size_t ind)
{
    static const char spaces[64] = "                                                                ";
    while (i < end) {
        /* most lines start with more than ind spaces: one comparison */
        bool deeper = ind < sizeof spaces && end - i > ind + 1 && memcmp(t + i, spaces, ind + 1) == 0;
        size_t e = eol(t, end, deeper ? i + ind + 1 : i);
        if (!deeper && !no_content(t, i, e) && indent_at(t, i, e) <= ind)
            break;
        i = next_line(end, e);
    }
    return i;
}

/* What a byte may be in a plain key or value (cg_report_chars). */
#define CLASS_RANGE10(a, v) [a] = v, [a + 1] = v, [a + 2] = v, [a + 3] = v, [a + 4] = v, \
                            [a + 5] = v, [a + 6] = v, [a + 7] = v, [a + 8] = v, [a + 9] = v
#define CLASS_LETTERS(a, v) CLASS_RANGE10(a, v), CLASS_RANGE10(a + 10, v), \
                            [a + 20] = v, [a + 21] = v, [a + 22] = v, [a + 23] = v, [a + 24] = v, [a + 25] = v
enum { WORD = CG_CH_KEY_FIRST | CG_CH_KEY | CG_CH_VALUE_FIRST | CG_CH_VALUE };
const unsigned char cg_report_chars[256] = {
    CLASS_RANGE10('0', WORD), CLASS_LETTERS('a', WORD), CLASS_LETTERS('A', WORD), ['_'] = WORD,
    ['-'] = CG_CH_KEY | CG_CH_VALUE,
    ['.'] = CG_CH_KEY | CG_CH_VALUE_FIRST | CG_CH_VALUE,
    ['/'] = CG_CH_KEY | CG_CH_VALUE_FIRST | CG_CH_VALUE,
    ['+'] = CG_CH_VALUE, ['='] = CG_CH_VALUE, ['('] = CG_CH_VALUE, [')'] = CG_CH_VALUE, [' '] = CG_CH_VALUE,
};
#undef CLASS_LETTERS
#undef CLASS_RANGE10

static bool is(unsigned char c, int cls)
{
    return (cg_report_chars[c] & cls) != 0;
}

/* "KEY:" at t[i..e), KEY plain (a letter, digit or '_' first, then those
 * and "-./"), then a space or the end of the line: KEY's length, and where
 * the value starts (*rest, e when none); else 0. */
static size_t plain_key(const char *t, size_t i, size_t e, size_t *rest)
{
    if (i >= e || !is((unsigned char)t[i], CG_CH_KEY_FIRST))
        return 0;
    size_t k = i;
    while (k < e && is((unsigned char)t[k], CG_CH_KEY))
        k++;
    if (k >= e || t[k] != ':' || (k + 1 < e && t[k + 1] != ' '))
        return 0;
    size_t r = k + 1;
    while (r < e && t[r] == ' ')
        r++;
    *rest = r;
    return k - i;
}

/* A plain scalar on t[r..e) that reads as the text it is (no indicator,
 * quote, comment, colon or escape): *v is it without trailing spaces. */
static bool plain_value(const char *t, size_t r, size_t e, span *v)
{
    while (e > r && t[e - 1] == ' ')
        e--;
    if (r >= e || !is((unsigned char)t[r], CG_CH_VALUE_FIRST))
        return false;
    for (size_t k = r; k < e; k++)
        if (!is((unsigned char)t[k], CG_CH_VALUE))
            return false;
    *v = (span){t + r, e - r};
    return true;
}

/* Whether a top-level key's value on its own line keeps to that line: a
 * flow collection or a quoted scalar must close on it. */
static bool inline_ok(const char *t, size_t r, size_t e)
{
    while (e > r && t[e - 1] == ' ')
        e--;
    char open = t[r], close = open == '[' ? ']' : open == '{' ? '}' : open;
    if (open != '[' && open != '{' && open != '"' && open != '\'')
        return true;
    return e - r >= 2 && t[e - 1] == close;
}

/* Something like an anchor (&a) or an alias (*a): the sign after a space,
 * a line start or a flow indicator, and a name after it.  Cron fields and
 * globs ("5 * * * *", "a*") are not. */
bool cg_report_anchor_like(const char *t, size_t len)
{
    static const char signs[] = "&*";
    for (size_t s = 0; s < 2; s++) {
        for (const char *p = memchr(t, signs[s], len); p; p = memchr(p + 1, signs[s], len - (size_t)(p + 1 - t))) {
            size_t i = (size_t)(p - t);
            char prev = i ? t[i - 1] : '\n', next = i + 1 < len ? t[i + 1] : '\n';
            bool after = prev == ' ' || prev == '\n' || prev == '[' || prev == '{' || prev == ',';
            bool named = next != ' ' && next != '\n' && next != '\t' && next != ',' && next != '[' && next != ']' &&
                         next != '{' && next != '}' && next != '"' && next != '\'' && next != '\r';
            if (after && named)
                return true;
            if (i + 1 >= len)
                break;
        }
    }
    return false;
}

static cg_doc *read_alone(config *c, const char *t, size_t n)
{
    cg_load_opts o = {.max_bytes = (size_t)1 << 32, .max_depth = CG_DEFAULT_MAX_DEPTH - ENTRY_DEPTH,
                      .no_positions = true};
    cg_error err;
    cg_error_init(&err);
    cg_doc *d = cg_doc_parse(c->what, t, n, &o, &err);
    cg_error_release(&err);
    if (d) {
        cg_grow(&c->docs, &c->dcap, c->ndocs + 1, sizeof *c->docs);
        c->docs[c->ndocs++] = d;
    }
    return d;
}

wf_args *cg_report_add_entry(config *c, const char *name, const char *invoke, const char *workflow)
{
    size_t k = (size_t)cg_map_put_new(&c->index, name, (void *)(c->n + 1)); /* one lookup */
    if (!k) {
        cg_grow(&c->jobs, &c->cap, c->n + 1, sizeof *c->jobs);
        c->jobs[c->n] = (jobrec){name, invoke, 0, 0};
        k = ++c->n;
    }
    jobrec *r = &c->jobs[k - 1];
    cg_grow(&c->ents, &c->ecap, c->nents + 1, sizeof *c->ents);
    wf_args *w = &c->ents[c->nents++];
    memset(w, 0, sizeof *w);
    w->workflow = workflow;
    if (r->last)
        c->ents[r->last - 1].next = c->nents;
    else
        r->first = c->nents;
    r->last = c->nents;
    return w;
}

/* The entry's job and arguments as a YAML reading of it gives them (the
 * rules of the whole reading, report.c): false when it is skipped. */
static bool entry_of(json_t *e, const char **invoke, const char **name, json_t **args)
{
    *args = NULL;
    if (json_is_string(e)) {
        *invoke = json_string_value(e);
    } else if (json_is_object(e) && json_object_size(e) == 1) {
        *invoke = json_object_iter_key(json_object_iter(e));
        *args = json_object_iter_value(json_object_iter(e));
        if (!json_is_object(*args))
            *args = NULL;
    } else {
        return false;
    }
    json_t *n = *args ? json_object_get(*args, "name") : NULL;
    *name = json_is_string(n) ? json_string_value(n) : *invoke;
    return true;
}

/* A plain workflow entry as slicing reads it without YAML: the job it
 * invokes, the value of its `name:` (NULL: none; "- job" alone: the job),
 * and the indentation of its arguments' keys. */
typedef struct plain_entry {
    const char *invoke;
    size_t invoke_len;
    const char *name;
    size_t name_len;
    size_t args_indent;
} plain_entry;

/* The workflow entry t[0, n) (its "- " at column E), read as slicing reads
 * it: 1, "- job" alone; 2, "- job:" with its arguments one plain key a line
 * (*out set for both); 0, not plain (read as YAML). */
static int entry_walk(const char *t, size_t n, size_t E, plain_entry *out)
{
    size_t e1 = eol(t, n, 0), C = E + 1, rest = 0;
    while (C < e1 && t[C] == ' ')
        C++;
    size_t kl = plain_key(t, C, e1, &rest);
    bool args = kl && rest == e1; /* "- job:", its arguments below */
    /* the lines after the first, to the entry's end: each one's
     * indentation found once; an entry that is not plain is left at its
     * first line that says so */
    size_t after = 0, J = 0, i = next_line(n, e1);
    bool name_open = false; /* a `name:` line read, the next line with content not yet */
    span nm = {NULL, 0};
    while (i < n) {
        size_t e = eol(t, n, i), k = i;
        while (k < e && t[k] == ' ')
            k++;
        if (k == e || t[k] == '#') { /* no content */
            i = next_line(n, e);
            continue;
        }
        size_t ind = k - i;
        if (ind <= E)
            break; /* the next entry, or what follows the entries */
        if (!after) { /* the first argument: its indentation is theirs */
            after = i, J = ind;
            if (!args || J <= C)
                return 0;
        }
        if (name_open && ind > J)
            return 0; /* the name's value has lines below it */
        name_open = false;
        if (ind < J)
            return 0;
        if (ind == J) {
            size_t r2, kl2 = plain_key(t, i + J, e, &r2);
            if (!kl2)
                return 0;
            if (kl2 == 4 && memcmp(t + i + J, "name", 4) == 0) {
                if (nm.s || !plain_value(t, r2, e, &nm))
                    return 0;
                name_open = true;
            }
        }
        i = next_line(n, e);
    }
    span v;
    if (!after && kl == 0 && plain_value(t, C, e1, &v)) {
        *out = (plain_entry){v.s, v.n, v.s, v.n, 0};
        return 1;
    }
    if (!after)
        return 0;
    *out = (plain_entry){t + C, kl, nm.s, nm.n, J};
    return 2;
}

/* One entry: "- job" alone, "- job:" with its arguments one key a line
 * (plain), or anything else, read alone as YAML. */
static int slice_entry(config *c, const char *wname, const char *t, size_t n, size_t E)
{
    plain_entry pl;
    int kind = entry_walk(t, n, E, &pl);
    if (kind == 1) {
        const char *name = cg_pool_strndup(&c->pool, pl.invoke, pl.invoke_len);
        wf_args *w = cg_report_add_entry(c, name, name, wname);
        w->text = t, w->len = n, w->read = true;
        return 0;
    }
    if (kind == 2) {
        const char *invoke = cg_internn(&c->pool, pl.invoke, pl.invoke_len);
        wf_args *w = cg_report_add_entry(c, pl.name ? cg_pool_strndup(&c->pool, pl.name, pl.name_len) : invoke,
                                         invoke, wname);
        w->text = t, w->len = n, w->args_indent = pl.args_indent, w->plain = true;
        return 0;
    }
    cg_doc *d = read_alone(c, t, n);
    json_t *root = d ? cg_doc_root(d) : NULL;
    if (!json_is_array(root) || json_array_size(root) != 1)
        return -1;
    const char *invoke, *name;
    json_t *args;
    if (!entry_of(json_array_get(root, 0), &invoke, &name, &args))
        return 0;
    wf_args *w = cg_report_add_entry(c, name, invoke, wname);
    w->text = t, w->len = n, w->args = args, w->read = true;
    return 0;
}

/* The `workflows:` block text[start..end): its workflows and their
 * entries; the rest goes to c->skeleton. */
static int slice_workflows(config *c, const char *text, size_t start, size_t end)
{
    cg_map names;
    cg_map_init(&names);
    size_t seg = start, i = next_content(text, end, next_line(end, eol(text, end, start)));
    size_t W = i < end ? indent_at(text, i, eol(text, end, i)) : 0;
    int rc = 0;
    while (i < end && rc == 0) {
        size_t e = eol(text, end, i), rest, kl;
        if (indent_at(text, i, e) != W || !(kl = plain_key(text, i + W, e, &rest))) {
            rc = -1;
            break;
        }
        const char *wname = cg_internn(&c->pool, text + i + W, kl);
        if (cg_map_has(&names, wname)) {
            rc = -1;
            break;
        }
        cg_map_put(&names, wname, (void *)1);
        i = next_line(end, e);
        if (rest < e && text[rest] != '#') { /* `version: 2`: no jobs */
            i = skip_deeper(text, end, i, W);
            continue;
        }
        i = next_content(text, end, i);
        size_t W2 = i < end ? indent_at(text, i, eol(text, end, i)) : 0;
        while (i < end && rc == 0) {
            e = eol(text, end, i);
            size_t ind = indent_at(text, i, e);
            if (ind <= W)
                break;
            if (ind != W2 || !(kl = plain_key(text, i + ind, e, &rest))) {
                rc = -1;
                break;
            }
            bool jobs = kl == 4 && memcmp(text + i + ind, "jobs", 4) == 0;
            i = next_line(end, e);
            if (jobs && rest < e && text[rest] != '#') {
                rc = -1; /* a flow list, or a scalar */
                break;
            }
            if (!jobs) {
                i = skip_deeper(text, end, i, W2);
                continue;
            }
            /* the entries: "- " lines at one indentation, each with the
             * lines below it */
            i = next_content(text, end, i);
            size_t E = i < end ? indent_at(text, i, eol(text, end, i)) : 0;
            while (i < end && rc == 0) {
                e = eol(text, end, i);
                if (indent_at(text, i, e) != E || E < W2 || text[i + E] != '-' ||
                    (i + E + 1 < e && text[i + E + 1] != ' '))
                    break;
                size_t k = skip_deeper(text, end, next_line(end, e), E);
                cg_strbuf_add(&c->skeleton, text + seg, i - seg);
                seg = k;
                rc = slice_entry(c, wname, text + i, k - i, E);
                i = k;
            }
        }
    }
    cg_strbuf_add(&c->skeleton, text + seg, end - seg);
    cg_map_release(&names);
    return rc;
}

int cg_report_slice(const char *text, size_t len, const char *what, size_t jobs_hint, config *c)
{
    memset(c, 0, sizeof *c);
    c->sliced = true;
    c->what = what;
    cg_map_init(&c->index);
    if (jobs_hint) { /* no rehashing or copying on the way there */
        cg_map_reserve(&c->index, jobs_hint);
        cg_grow(&c->jobs, &c->cap, jobs_hint, sizeof *c->jobs);
        cg_grow(&c->ents, &c->ecap, jobs_hint, sizeof *c->ents);
    }
    cg_pool_init(&c->pool);
    cg_strbuf_init(&c->rest);
    cg_strbuf_init(&c->skeleton);
    /* the header: comments and blank lines, checked as a parser would */
    size_t first = next_content(text, len, 0);
    cg_error err;
    cg_error_init(&err);
    int rc = cg_yaml_check_text(what, text, first, &err);
    cg_error_release(&err);
    if (rc != 0)
        return -1;
    /* the top-level keys, each a line at column 0 with the lines below it */
    cg_map keys;
    cg_map_init(&keys);
    size_t wf_start = len, wf_end = len;
    bool in_wf = false;
    for (size_t i = first; i < len;) {
        size_t e = eol(text, len, i), rest, kl;
        if (text[i] == ' ' || no_content(text, i, e)) {
            i = next_line(len, e);
            continue;
        }
        if (!(kl = plain_key(text, i, e, &rest))) {
            rc = -1;
            break;
        }
        const char *key = cg_internn(&c->pool, text + i, kl);
        if (cg_map_has(&keys, key)) {
            rc = -1;
            break;
        }
        cg_map_put(&keys, key, (void *)1);
        if (in_wf)
            wf_end = i;
        in_wf = strcmp(key, "workflows") == 0;
        if (in_wf)
            wf_start = i;
        if (rest < e && (in_wf ? text[rest] != '#' : !inline_ok(text, rest, e))) {
            rc = -1;
            break;
        }
        i = next_line(len, e);
    }
    cg_map_release(&keys);
    if (rc != 0)
        return -1;
    cg_strbuf_add(&c->rest, text + first, wf_start - first);
    cg_strbuf_add(&c->rest, text + wf_end, len - wf_end);
    if (wf_start == len)
        return 0;
    c->anchors = cg_report_anchor_like(text + wf_start, wf_end - wf_start);
    if (c->anchors)
        return -1; /* an entry's value may come from elsewhere */
    return slice_workflows(c, text, wf_start, wf_end);
}

int cg_report_entry_read(config *c, wf_args *w)
{
    if (w->read)
        return 0;
    cg_doc *d = read_alone(c, w->text, w->len);
    json_t *root = d ? cg_doc_root(d) : NULL;
    const char *invoke, *name;
    if (!json_is_array(root) || json_array_size(root) != 1 ||
        !entry_of(json_array_get(root, 0), &invoke, &name, &w->args))
        return -1;
    w->read = true;
    return 0;
}

/* ---- the arguments of a plain entry, as text ---- */

void cg_report_kvs_release(kvs *a)
{
    if (a->v != a->held)
        free(a->v);
}

static kv *kvs_add(kvs *a)
{
    if (a->n == a->cap) {
        size_t cap = 2 * a->cap;
        kv *v = cg_xmalloc(cap * sizeof *v);
        memcpy(v, a->v, a->n * sizeof *v);
        cg_report_kvs_release(a);
        a->v = v, a->cap = cap;
    }
    return &a->v[a->n++];
}

bool cg_report_kv_simple(kv *k)
{
    if (k->simple < 0)
        k->simple = !k->deeper && plain_value(k->first.s, 0, k->first.n, &k->val);
    return k->simple;
}

bool cg_report_scan_args(const wf_args *w, const char *t, kvs *a)
{
    size_t n = w->len, J = w->args_indent;
    a->v = a->held, a->n = 0, a->cap = KV_HELD;
    for (size_t i = next_line(n, eol(t, n, 0)); i < n;) {
        size_t e = eol(t, n, i), c = i; /* (its indentation found once) */
        while (c < e && t[c] == ' ')
            c++;
        bool blank = c == e || t[c] == '#';
        if (blank || c - i > J) {
            if (a->n) {
                kv *last = &a->v[a->n - 1];
                last->raw.n = e - (size_t)(last->raw.s - t);
                last->deeper |= !blank;
            }
            i = next_line(n, e);
            continue;
        }
        size_t rest, kl = plain_key(t, i + J, e, &rest);
        const char *key = t + i + J;
        for (size_t k = 0; k < a->n; k++)
            if (a->v[k].key.n == kl && memcmp(a->v[k].key.s, key, kl) == 0) {
                cg_report_kvs_release(a);
                return false;
            }
        *kvs_add(a) = (kv){{key, kl}, {t + rest, e - rest}, {t + rest, e - rest}, false, -1, {NULL, 0}};
        i = next_line(n, e);
    }
    return true;
}

int cg_report_entry_check(config *c, wf_args *w)
{
    if (w->read || w->covered)
        return 0;
    kvs a;
    bool simple = w->plain && cg_report_scan_args(w, w->text, &a);
    if (w->plain && simple) {
        for (size_t i = 0; i < a.n && simple; i++)
            simple = cg_report_kv_simple(&a.v[i]);
        cg_report_kvs_release(&a);
    }
    return simple ? 0 : cg_report_entry_read(c, w);
}

void cg_report_config_release(config *c)
{
    free(c->jobs);
    free(c->ents);
    cg_map_release(&c->index);
    cg_doc_free(c->doc);
    for (size_t i = 0; i < c->ndocs; i++)
        cg_doc_free(c->docs[i]);
    free(c->docs);
    if (c->sliced) {
        cg_pool_release(&c->pool);
        cg_strbuf_release(&c->rest);
        cg_strbuf_release(&c->skeleton);
    }
    memset(c, 0, sizeof *c);
}

/* ---- whole ---- */

char *cg_report_read_whole(const char *text, size_t len, const char *what, config *c)
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
            const char *invoke, *name;
            json_t *args;
            if (!entry_of(e, &invoke, &name, &args))
                continue;
            wf_args *w = cg_report_add_entry(c, name, invoke, wname);
            w->args = args;
            w->read = true;
        }
    }
    return NULL;
}

jobrec *cg_report_find(const config *c, const char *name)
{
    size_t k = (size_t)cg_map_get(&c->index, name);
    return k ? &c->jobs[k - 1] : NULL;
}
