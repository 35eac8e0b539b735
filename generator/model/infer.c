/* infer — a cigen project inferred from a CircleCI config (see infer.h). */
#include "model/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"

/* ---- the candidates: entries, groups of entries, trees ---- */

typedef struct ent {
    const char *kind;      /* the job it runs */
    const char *name;      /* its name: `name:`, or the job */
    json_t *args;          /* its arguments (an object), or NULL */
    char *path;            /* the entry in the config */
    char *apath;           /* its arguments */
    json_t *req;           /* `requires:` (borrowed), or NULL */
    bool eligible;         /* may be a job of a tree */
    bool named;            /* has a `name:` (else it is named like its job) */
    int fam;               /* its group, or -1 */
    int cell;              /* its cell in its tree */
} ent;

typedef struct fam {
    const char *kind;
    char *sig;
    size_t *mem;           /* entries, in workflow order */
    size_t n, cap;
    int parent;            /* the group whose entries each member requires, or -1 */
    size_t *par;           /* per member: the entry it requires of the parent */
    int tree;              /* -1: none (its entries stay static) */
    char *phase;           /* its phase's name */
    json_t *rtok;          /* its requires: names, and "\x01N" for group N of the same cell */
} fam;

typedef struct col {
    char *name;            /* the dimension's or variable's name */
    char *tname;           /* what the template uses: name, or a typed shadow variable */
    const char *key;       /* the argument */
    bool dim;
    bool typed;            /* some value is a plain non-string (dims then get a shadow) */
    bool empty;            /* some value is "" (a dimension is then absent there, and gets a shadow) */
    bool dim_ok;           /* its values may be a dimension's */
    const char **v;        /* [ncells]: its value per cell, NULL where absent */
    bool *plain;           /* [ncells] */
    bool *phases;          /* [nfams]: the phases whose argument it is */
    size_t follows;        /* product: the dimension (column) whose value sets it */
} col;

typedef struct tplan tplan;
typedef struct wplan wplan;
struct tplan {
    char *name;
    int root;
    int *fams;             /* phases, in order of first appearance */
    size_t nfams;
    size_t ncells;
    long *fc;              /* [nfams * ncells]: the entry of phase f in cell c, or -1 */
    col *cols;
    size_t ncols;
    cg_strbuf *pattern;    /* [nfams] */
    int replace;           /* index into replaces[] */
    bool phase_major;
    bool ok;
    bool product;
    /* a tree of another workflow whose jobs are the same: merged into this */
    const struct tplan *into;  /* this one was merged into `into` (not written) */
    size_t nwfs;               /* the workflows it lands in (>1 once merged) */
    const struct wplan **wfs;
    struct tplan **from;       /* [nwfs]: the tree of each workflow (this one first) */
    unsigned char *cell_in;    /* [nwfs * ncells]: 0 out, 1 in, 2 on request */
    bool *phase_in;            /* [nwfs * nfams] */
    int *phase_of;             /* [nwfs * nfams]: the phase's index in that workflow's tree, or -1 */
    int *cell_of;              /* [nwfs * ncells]: the cell's index in that workflow's tree, or -1 */
    bool gated;                /* `on_request` passes the built-in {{ on_request }} */
    bool enabled;              /* not left static by the caller */
    bool shaped;               /* in place and with requires a tree can say (another tree may take its jobs) */
    size_t *dimorder;      /* product: the dimensions' columns in multiplication order */
    size_t ndimorder;
    char *why;             /* why it stays static, when !ok */
};

struct wplan {
    const char *name;
    char *path;
    json_t *v;
    bool verbatim;         /* copied into a fragment as it is */
    bool tiered;           /* some tree sends it only some of its cells: a tier */
    bool gated;            /* some cells run on request: an on_request tier */
    char *tier;            /* the tier's name (the workflow's, as a name) */
    ent *e;
    size_t ne;
    fam *f;
    size_t nf;
    tplan *t;
    size_t nt;
};

typedef struct ctx {
    const cg_doc *doc;
    const char *source;
    const char *output;
    int level;
    const bool *enabled;
    size_t candidate;      /* the next candidate tree's number */
    cg_infer *r;
    cg_pool pool;
    wplan *w;
    size_t nw;
    cg_map tree_names;
    cg_map file_names;
} ctx;

static const struct {
    const char *from[2], *to[2];
    size_t n;
} replaces[] = {
    {{NULL, NULL}, {NULL, NULL}, 0},
    {{".", NULL}, {"_", NULL}, 1},
    {{".", NULL}, {"", NULL}, 1},
    {{" ", NULL}, {"_", NULL}, 1},
    {{".", " "}, {"_", "_"}, 2},
    {{".", " "}, {"", "_"}, 2},
    {{" ", NULL}, {"-", NULL}, 1},
    {{".", " "}, {"-", "-"}, 2},
    {{".", NULL}, {"-", NULL}, 1},
};
#define NREPLACES (sizeof replaces / sizeof replaces[0])

static char *pstr(ctx *C, const char *s)
{
    return cg_pool_strndup(&C->pool, s, strlen(s));
}

static cg_infer_file *add_file(cg_infer *r, const char *rel)
{
    cg_grow(&r->files, &r->files_cap, r->nfiles + 1, sizeof *r->files);
    cg_infer_file *f = &r->files[r->nfiles++];
    f->rel = cg_xstrdup(rel);
    cg_strbuf_init(&f->text);
    return f;
}

/* A name for a file, a tree, a dimension: letters, digits and '_'. */
static void identifier(cg_strbuf *out, const char *s)
{
    size_t from = out->len;
    for (; *s; s++)
        cg_strbuf_addc(out, cg_isalnum((unsigned char)*s) || *s == '_' ? *s : '_');
    if (out->len == from || cg_isdigit((unsigned char)out->buf[from])) {
        cg_strbuf tmp = CG_STRBUF_INIT;
        cg_strbuf_adds(&tmp, "v_");
        cg_strbuf_add(&tmp, out->buf + from, out->len - from);
        cg_strbuf_truncate(out, from);
        cg_strbuf_add(out, tmp.buf, tmp.len);
        cg_strbuf_release(&tmp);
    }
}

/* A name `base` not in `taken` (recorded there): base, base_2, base_3... */
static char *unique_name(ctx *C, cg_map *taken, const char *base)
{
    cg_strbuf b = CG_STRBUF_INIT;
    cg_strbuf_adds(&b, base);
    for (int i = 2; cg_map_has(taken, b.buf); i++) {
        cg_strbuf_reset(&b);
        cg_strbuf_addf(&b, "%s_%d", base, i);
    }
    char *s = pstr(C, b.buf);
    cg_map_put(taken, s, s);
    cg_strbuf_release(&b);
    return s;
}

/* Does any scalar (or key) under v hold text cigen would read as a
 * placeholder? */
static bool has_braces(json_t *v)
{
    if (json_is_string(v))
        return strstr(json_string_value(v), "{{") || strstr(json_string_value(v), "}}");
    const char *k;
    json_t *c;
    if (json_is_object(v)) {
        json_object_foreach(v, k, c) {
            if (strstr(k, "{{") || strstr(k, "}}") || has_braces(c))
                return true;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (has_braces(json_array_get(v, i)))
                return true;
    }
    return false;
}

/* ---- fragments: the top-level sections, byte for byte ---- */

static const char *section_kind(const char *text, size_t len, size_t off)
{
    static const char *const kinds[] = {"workflows", "jobs", "commands", "executors"};
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(kinds[i]);
        if (off + n < len && memcmp(text + off, kinds[i], n) == 0 &&
            (text[off + n] == ':' || text[off + n] == ' '))
            return kinds[i];
    }
    return "header";
}

typedef struct slice {
    size_t start, end;
    const char *kind;
} slice;

/* The root mapping's entries as slices of the text: each from the end of
 * the one before (its comments come with it) to the end of its last line. */
static int slices_of(const cg_doc *doc, slice **out, size_t *n, cg_error *err)
{
    size_t len;
    const char *text = cg_doc_text(doc, &len);
    const cg_doc_layout *L = cg_doc_get_layout(doc);
    if (!json_is_object(cg_doc_root(doc)) || !L || L->nentries == 0) {
        cg_pos p = {cg_doc_file(doc), 1, 1};
        return cg_error_at(err, &p, "a CircleCI config is a mapping (version, jobs, workflows, ...); this is not one");
    }
    /* line starts */
    size_t *ls = cg_xcalloc(cg_count_newlines(text, len) + 2, sizeof *ls);
    size_t nl = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            ls[nl++] = i + 1;
    slice *s = cg_xcalloc(L->nentries, sizeof *s);
    size_t at = 0;
    for (size_t i = 0; i < L->nentries; i++) {
        const cg_doc_entry_text *e = &L->entries[i];
        size_t key = e->key_line - 1 < nl ? ls[e->key_line - 1] + e->key_col - 1 : 0;
        size_t end = e->end;
        /* a block scalar ends at the start of the line after it */
        if (!(end > 0 && text[end - 1] == '\n')) {
            while (end < len && text[end] != '\n')
                end++;
            if (end < len)
                end++;
        }
        if (i + 1 == L->nentries)
            end = len;
        s[i].start = at;
        s[i].end = end;
        s[i].kind = e->merge ? "header" : section_kind(text, len, key);
        at = end;
    }
    free(ls);
    *out = s;
    *n = L->nentries;
    return 0;
}

/* ---- reading a workflow's entries ---- */

static void read_entries(ctx *C, wplan *W)
{
    json_t *jobs = json_object_get(W->v, "jobs");
    W->ne = json_array_size(jobs);
    W->e = cg_xcalloc(W->ne + 1, sizeof *W->e);
    cg_map names;
    cg_map_init(&names);
    for (size_t i = 0; i < W->ne; i++) {
        ent *e = &W->e[i];
        json_t *it = json_array_get(jobs, i);
        cg_strbuf p = CG_STRBUF_INIT;
        cg_path_join_key(&p, W->path, "jobs");
        cg_path_push_index(&p, i);
        e->path = pstr(C, p.buf);
        e->fam = -1;
        e->cell = -1;
        if (json_is_string(it)) {
            e->kind = e->name = json_string_value(it);
            /* a job named like the job it runs: a phase of one cell at most */
            e->eligible = !strstr(e->name, "{{") && !strstr(e->name, "<<");
        } else if (json_is_object(it) && json_object_size(it) == 1) {
            void *iter = json_object_iter(it);
            e->kind = json_object_iter_key(iter);
            json_t *a = json_object_iter_value(iter);
            cg_path_push_key(&p, e->kind);
            e->apath = pstr(C, p.buf);
            e->name = e->kind;
            if (json_is_object(a)) {
                e->args = a;
                json_t *nm = json_object_get(a, "name");
                if (json_is_string(nm)) {
                    e->name = json_string_value(nm);
                    e->named = true;
                }
                e->req = json_object_get(a, "requires");
                bool reqs_ok = !e->req || (json_is_array(e->req) && json_array_size(e->req));
                for (size_t r = 0; reqs_ok && r < json_array_size(e->req); r++)
                    reqs_ok = json_is_string(json_array_get(e->req, r));
                bool keys_ok = !nm || json_is_string(nm);
                const char *k;
                json_t *v;
                json_object_foreach(a, k, v) {
                    size_t kl = strlen(k);
                    if (!*k || k[kl - 1] == '?' || cg_streq(k, "matrix") || strstr(k, "{{"))
                        keys_ok = false;
                }
                e->eligible = reqs_ok && keys_ok && !has_braces(a) && !strstr(e->name, "<<") &&
                              !strstr(e->name, "{{");
            } else if (json_is_null(a) || (json_is_string(a) && !*json_string_value(a))) {
                e->eligible = false;
            }
        } else {
            e->kind = e->name = "";
        }
        if (cg_map_has(&names, e->name))
            e->eligible = false;
        cg_map_put(&names, e->name, e);
        cg_strbuf_release(&p);
    }
    cg_map_release(&names);
}

/* The signature of a group: the job, and every argument that is not a
 * scalar (scalars may vary). */
static char *signature(ctx *C, const ent *e)
{
    cg_strbuf s = CG_STRBUF_INIT;
    cg_strbuf_adds(&s, e->kind);
    cg_strbuf_addc(&s, '\n');
    cg_strbuf_adds(&s, e->req ? "R" : "-");
    if (!e->named) {
        cg_strbuf_adds(&s, "\nunnamed ");
        cg_strbuf_adds(&s, e->name);
    }
    const char *k;
    json_t *v;
    json_object_foreach(e->args, k, v) {
        if (json_is_string(v) || cg_streq(k, "requires") || cg_streq(k, "name"))
            continue;
        cg_strbuf p = CG_STRBUF_INIT;
        cg_path_join_key(&p, e->apath, k);
        json_t *t = cg_doc_typed(C->doc, p.buf, v);
        char *d = json_dumps(t, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
        cg_strbuf_addf(&s, "\n%s=%s", k, d ? d : "?");
        free(d);
        json_decref(t);
        cg_strbuf_release(&p);
    }
    char *r = pstr(C, s.buf);
    cg_strbuf_release(&s);
    return r;
}

static void group(ctx *C, wplan *W)
{
    cg_map by_sig;
    cg_map_init(&by_sig);
    W->f = cg_xcalloc(W->ne + 1, sizeof *W->f);
    for (size_t i = 0; i < W->ne; i++) {
        ent *e = &W->e[i];
        if (!e->eligible)
            continue;
        char *sig = signature(C, e);
        /* one group per parent group: the group of its last grouped requirement */
        for (size_t r = json_array_size(e->req); r-- > 0;) {
            const char *rn = json_string_value(json_array_get(e->req, r));
            long x = -1;
            for (size_t q = 0; q < i && x < 0; q++)
                if (cg_streq(W->e[q].name, rn))
                    x = (long)q;
            if (x >= 0 && W->e[x].fam >= 0) {
                cg_strbuf b = CG_STRBUF_INIT;
                cg_strbuf_addf(&b, "%s\nparent %d", sig, W->e[x].fam);
                sig = pstr(C, b.buf);
                cg_strbuf_release(&b);
                break;
            }
        }
        void *got = cg_map_get(&by_sig, sig);
        size_t fi;
        if (!got) {
            fi = W->nf++;
            fam *f = &W->f[fi];
            f->kind = e->kind;
            f->sig = sig;
            f->parent = -1;
            f->tree = -1;
            cg_map_put(&by_sig, sig, (void *)(fi + 1));
        } else {
            fi = (size_t)got - 1;
        }
        fam *f = &W->f[fi];
        cg_grow(&f->mem, &f->cap, f->n + 1, sizeof *f->mem);
        f->mem[f->n++] = i;
        e->fam = (int)fi;
    }
    cg_map_release(&by_sig);
}

static long entry_named(const wplan *W, const char *name)
{
    for (size_t i = 0; i < W->ne; i++)
        if (cg_streq(W->e[i].name, name))
            return (long)i;
    return -1;
}

static bool is_ancestor(const wplan *W, int a, int f)
{
    for (int p = W->f[f].parent, guard = 0; p >= 0 && guard < 1000; p = W->f[p].parent, guard++)
        if (p == a)
            return true;
    return false;
}

/* Each group whose members each require one member of another group (one
 * to one) is a later phase of that group's cells. */
static void link_phases(wplan *W)
{
    for (size_t fi = 0; fi < W->nf; fi++) {
        fam *f = &W->f[fi];
        if (f->n < 1)
            continue;
        /* the parent: the group of the last requirement of the first member
         * that is a grouped entry */
        const ent *e0 = &W->e[f->mem[0]];
        int parent = -1;
        for (size_t r = json_array_size(e0->req); r-- > 0 && parent < 0;) {
            long x = entry_named(W, json_string_value(json_array_get(e0->req, r)));
            if (x >= 0 && W->e[x].fam >= 0 && W->e[x].fam != (int)fi)
                parent = W->e[x].fam;
        }
        if (parent < 0 || is_ancestor(W, (int)fi, parent))
            continue;
        size_t *par = cg_xcalloc(f->n, sizeof *par);
        bool ok = true;
        for (size_t m = 0; m < f->n && ok; m++) {
            const ent *e = &W->e[f->mem[m]];
            int found = 0;
            for (size_t r = 0; r < json_array_size(e->req); r++) {
                long x = entry_named(W, json_string_value(json_array_get(e->req, r)));
                if (x >= 0 && W->e[x].fam == parent) {
                    found++;
                    par[m] = (size_t)x;
                }
            }
            ok = found == 1;
            for (size_t q = 0; q < m && ok; q++)
                ok = par[q] != par[m];
        }
        if (!ok) {
            free(par);
            continue;
        }
        f->parent = parent;
        f->par = par;
    }
}

/* ---- a tree ---- */

static bool glob_safe(const char *s)
{
    return !strpbrk(s, "*?[]\\,=") && s[0] != '!' && s[0] != '@' && s[0] != '~' && *s;
}

static bool dim_value_ok(const char *s)
{
    if (!*s || strstr(s, "<<"))
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return false;
    return !cg_blank_name(s);
}

static void transform(cg_strbuf *out, const char *s, int rep)
{
    cg_strbuf_reset(out);
    for (; *s; s++) {
        bool done = false;
        for (size_t i = 0; i < replaces[rep].n && !done; i++)
            if (*s == replaces[rep].from[i][0]) {
                cg_strbuf_adds(out, replaces[rep].to[i]);
                done = true;
            }
        if (!done)
            cg_strbuf_addc(out, *s);
    }
}

typedef struct search {
    tplan *T;
    const wplan *W;
    size_t f;              /* the phase's index in T */
    int rep;
    size_t *cells;         /* the cells running the phase */
    size_t ncells;
    const char **names;    /* [ncells] */
    char ***tv;            /* [ncols][T->ncells]: transformed values */
    size_t ref;            /* the reference cell (index into cells) */
    int *items;            /* the pattern: >= 0 a column, < 0 -(char + 1) */
    size_t nitems, cap;
    long budget;
} search;

static bool is_sep(char c)
{
    return c == '_' || c == '-' || c == '.';
}

static bool dfs(search *S, size_t *off)
{
    if (--S->budget < 0)
        return false;
    const char *rn = S->names[S->ref];
    size_t ro = off[S->ref];
    if (!rn[ro]) {
        for (size_t k = 0; k < S->ncells; k++)
            if (S->names[k][off[k]])
                return false;
        return true;
    }
    size_t *next = cg_xcalloc(S->ncells, sizeof *next);
    cg_grow(&S->items, &S->cap, S->nitems + 1, sizeof *S->items);
    /* a column whose value is here, longest first */
    const tplan *T = S->T;
    size_t refcell = S->cells[S->ref];
    bool prev_sep = S->nitems > 0 && S->items[S->nitems - 1] < 0 && is_sep((char)(-S->items[S->nitems - 1] - 1));
    for (int pass = 0; pass < 2; pass++) {
        for (size_t c = 0; c < T->ncols; c++) {
            const char *rv = S->tv[c][refcell];
            if (!T->cols[c].dim_ok || !rv || !*rv)
                continue;
            size_t rl = strlen(rv);
            /* longest values first: the first pass takes those longer than 3 */
            if ((pass == 0) != (rl > 3))
                continue;
            if (strncmp(rn + ro, rv, rl) != 0)
                continue;
            bool ok = true;
            for (size_t k = 0; k < S->ncells && ok; k++) {
                const char *v = S->tv[c][S->cells[k]];
                if (!v) {
                    /* absent: the separator before it is dropped too */
                    ok = prev_sep;
                    next[k] = off[k] - 1;
                    continue;
                }
                size_t l = strlen(v);
                ok = l > 0 && strncmp(S->names[k] + off[k], v, l) == 0;
                next[k] = off[k] + l;
            }
            if (!ok)
                continue;
            S->items[S->nitems++] = (int)c;
            if (dfs(S, next)) {
                free(next);
                return true;
            }
            S->nitems--;
            cg_grow(&S->items, &S->cap, S->nitems + 1, sizeof *S->items);
        }
    }
    /* a separator and a column: both left out where the column is absent */
    if (is_sep(rn[ro])) {
        for (size_t c = 0; c < T->ncols; c++) {
            const char *rv = S->tv[c][refcell];
            if (!T->cols[c].dim_ok || !rv || !*rv)
                continue;
            size_t rl = strlen(rv);
            if (strncmp(rn + ro + 1, rv, rl) != 0)
                continue;
            bool ok = true, absent = false;
            for (size_t k = 0; k < S->ncells && ok; k++) {
                const char *v = S->tv[c][S->cells[k]];
                if (!v) {
                    absent = true;
                    next[k] = off[k];
                    continue;
                }
                size_t l = strlen(v);
                ok = S->names[k][off[k]] == rn[ro] && strncmp(S->names[k] + off[k] + 1, v, l) == 0;
                next[k] = off[k] + 1 + l;
            }
            if (!ok || !absent)
                continue;
            cg_grow(&S->items, &S->cap, S->nitems + 2, sizeof *S->items);
            S->items[S->nitems++] = -((int)(unsigned char)rn[ro] + 1);
            S->items[S->nitems++] = (int)c;
            if (dfs(S, next)) {
                free(next);
                return true;
            }
            S->nitems -= 2;
        }
    }
    /* the literal character */
    char ch = rn[ro];
    bool ok = ch != '{' && ch != '}';
    for (size_t k = 0; k < S->ncells && ok; k++) {
        ok = S->names[k][off[k]] == ch;
        next[k] = off[k] + 1;
    }
    if (ok) {
        S->items[S->nitems++] = -((int)(unsigned char)ch + 1);
        if (dfs(S, next)) {
            free(next);
            return true;
        }
        S->nitems--;
    }
    free(next);
    return false;
}

static void pattern_text(cg_strbuf *out, const tplan *T, const int *items, size_t n)
{
    cg_strbuf_reset(out);
    for (size_t i = 0; i < n; i++) {
        if (items[i] >= 0)
            cg_strbuf_addf(out, "{{ %s }}", T->cols[items[i]].name);
        else
            cg_strbuf_addc(out, (char)(-items[i] - 1));
    }
}

/* The job-name patterns of every phase, with one `replace` for all. */
static bool find_patterns(tplan *T, const wplan *W)
{
    for (int rep = 0; rep < (int)NREPLACES; rep++) {
        char ***tv = cg_xcalloc(T->ncols + 1, sizeof *tv);
        cg_strbuf tmp = CG_STRBUF_INIT;
        for (size_t c = 0; c < T->ncols; c++) {
            tv[c] = cg_xcalloc(T->ncells, sizeof **tv);
            for (size_t k = 0; k < T->ncells; k++)
                if (T->cols[c].v[k] && *T->cols[c].v[k]) {
                    transform(&tmp, T->cols[c].v[k], rep);
                    tv[c][k] = cg_xstrdup(tmp.buf ? tmp.buf : "");
                }
        }
        cg_strbuf_release(&tmp);
        bool all = true;
        bool *used = cg_xcalloc(T->ncols + 1, sizeof *used);
        for (size_t f = 0; f < T->nfams && all; f++) {
            search S = {T, W, f, rep, NULL, 0, NULL, tv, 0, NULL, 0, 0, 200000};
            S.cells = cg_xcalloc(T->ncells, sizeof *S.cells);
            S.names = cg_xcalloc(T->ncells, sizeof *S.names);
            size_t best = 0;
            for (size_t c = 0; c < T->ncells; c++) {
                long e = T->fc[f * T->ncells + c];
                if (e < 0)
                    continue;
                size_t present = 0;
                for (size_t k = 0; k < T->ncols; k++)
                    present += T->cols[k].dim_ok && tv[k][c] != NULL;
                if (present > best || S.ncells == 0) {
                    best = present;
                    S.ref = S.ncells;
                }
                S.cells[S.ncells] = c;
                S.names[S.ncells++] = W->e[e].name;
            }
            size_t *off = cg_xcalloc(S.ncells + 1, sizeof *off);
            all = dfs(&S, off);
            if (all) {
                pattern_text(&T->pattern[f], T, S.items, S.nitems);
                for (size_t i = 0; i < S.nitems; i++)
                    if (S.items[i] >= 0)
                        used[S.items[i]] = true;
            }
            free(off);
            free(S.cells);
            free(S.names);
            free(S.items);
        }
        /* the names must use no replace they do not need: a value with a dot
         * kept whole is found with rep 0 first */
        for (size_t c = 0; c < T->ncols; c++) {
            for (size_t k = 0; k < T->ncells; k++)
                free(tv[c][k]);
            free(tv[c]);
        }
        free(tv);
        if (all) {
            T->replace = rep;
            for (size_t c = 0; c < T->ncols; c++)
                T->cols[c].dim = used[c];
            free(used);
            return true;
        }
        free(used);
    }
    return false;
}

/* Two values of a column are the same when the same text, written the same
 * way (plain or not). */
static bool same_value(const char *a, bool ap, const char *b, bool bp)
{
    if (!a || !b)
        return a == b;
    if (!cg_streq(a, b))
        return false;
    bool at = ap && cg_yaml_resolve(a, strlen(a)) != CG_T_STR;
    bool bt = bp && cg_yaml_resolve(b, strlen(b)) != CG_T_STR;
    return at == bt;
}

static const char *const reserved[] = {
    "job", "phase", "tree", "cell", "workflow", "on_request", "vars", "children", "zip", "exclude", "only",
    "extra", "tiers", "list", "overrides", "name", "requires", "template", "per", "skip", "when", "cells",
    "pairwise", "pin", "cost", "dimensions", "description", "job_name", "workflows", "phases", "filters",
    "context", "lists", "replace", "pattern",
};

static char *column_name(ctx *C, cg_map *taken, const char *key)
{
    cg_strbuf b = CG_STRBUF_INIT;
    identifier(&b, key);
    for (size_t i = 0; i < CG_ARRAY_LEN(reserved); i++)
        if (cg_streq(b.buf, reserved[i])) {
            cg_strbuf_adds(&b, "_arg");
            break;
        }
    char *s = unique_name(C, taken, b.buf);
    cg_strbuf_release(&b);
    return s;
}

/* Is the phase `f` (a group) constant in argument k: present in every
 * member, the same value written the same way? */
static bool constant_arg(const ctx *C, const wplan *W, const fam *f, const char *k)
{
    const ent *e0 = &W->e[f->mem[0]];
    json_t *v0 = json_object_get(e0->args, k);
    if (!v0)
        return false;
    if (!json_is_string(v0))
        return true; /* the signature holds it */
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, e0->apath, k);
    bool p0 = cg_doc_is_plain(C->doc, p.buf);
    bool same = true;
    for (size_t m = 1; m < f->n && same; m++) {
        const ent *e = &W->e[f->mem[m]];
        json_t *v = json_object_get(e->args, k);
        if (!json_is_string(v)) {
            same = false;
            break;
        }
        cg_path_join_key(&p, e->apath, k);
        same = same_value(json_string_value(v0), p0, json_string_value(v), cg_doc_is_plain(C->doc, p.buf));
    }
    cg_strbuf_release(&p);
    return same;
}

static void tree_fail(ctx *C, tplan *T, const char *why)
{
    if (T->ok) {
        T->ok = false;
        T->why = pstr(C, why);
    }
}

/* The columns of a tree: every scalar argument that varies.  A column
 * serves the phases that agree on it in every cell where they both run
 * (the same value, or both without the argument). */
static void columns(ctx *C, const wplan *W, tplan *T)
{
    cg_map taken;
    cg_map_init(&taken);
    cg_strbuf p = CG_STRBUF_INIT;
    size_t cols_cap = 0;
    const char **v = cg_xcalloc(T->ncells + 1, sizeof *v);
    bool *pl = cg_xcalloc(T->ncells + 1, sizeof *pl);
    for (size_t fi = 0; fi < T->nfams; fi++) {
        const fam *f = &W->f[T->fams[fi]];
        cg_map seen;
        cg_map_init(&seen);
        for (size_t m = 0; m < f->n; m++) {
            const char *k;
            json_t *jv;
            json_object_foreach(W->e[f->mem[m]].args, k, jv) {
                if (!json_is_string(jv) || cg_streq(k, "name") || cg_streq(k, "requires") || cg_map_has(&seen, k))
                    continue;
                cg_map_put(&seen, k, (void *)1);
                if (constant_arg(C, W, f, k))
                    continue;
                memset(v, 0, T->ncells * sizeof *v);
                for (size_t q = 0; q < f->n; q++) {
                    const ent *eq = &W->e[f->mem[q]];
                    json_t *vq = json_object_get(eq->args, k);
                    if (!json_is_string(vq))
                        continue;
                    cg_path_join_key(&p, eq->apath, k);
                    v[eq->cell] = json_string_value(vq);
                    pl[eq->cell] = cg_doc_is_plain(C->doc, p.buf);
                }
                long found = -1;
                for (size_t c = 0; c < T->ncols && found < 0; c++) {
                    col *cl = &T->cols[c];
                    if (!cg_streq(cl->key, k))
                        continue;
                    bool agree = true;
                    for (size_t cell = 0; cell < T->ncells && agree; cell++) {
                        if (T->fc[fi * T->ncells + cell] < 0)
                            continue;
                        bool shared = false;
                        for (size_t h = 0; h < T->nfams && !shared; h++)
                            shared = cl->phases[h] && T->fc[h * T->ncells + cell] >= 0;
                        if (shared)
                            agree = same_value(cl->v[cell], cl->plain[cell], v[cell], pl[cell]);
                    }
                    if (agree)
                        found = (long)c;
                }
                if (found < 0) {
                    cg_grow(&T->cols, &cols_cap, T->ncols + 1, sizeof *T->cols);
                    col *c = &T->cols[T->ncols];
                    memset(c, 0, sizeof *c);
                    c->key = k;
                    c->name = column_name(C, &taken, k);
                    c->v = cg_xcalloc(T->ncells + 1, sizeof *c->v);
                    c->plain = cg_xcalloc(T->ncells + 1, sizeof *c->plain);
                    c->phases = cg_xcalloc(T->nfams + 1, sizeof *c->phases);
                    found = (long)T->ncols++;
                }
                col *c = &T->cols[found];
                c->phases[fi] = true;
                for (size_t cell = 0; cell < T->ncells; cell++)
                    if (v[cell]) {
                        c->v[cell] = v[cell];
                        c->plain[cell] = pl[cell];
                    }
            }
        }
        cg_map_release(&seen);
    }
    free(v);
    free(pl);
    for (size_t c = 0; c < T->ncols; c++) {
        col *cl = &T->cols[c];
        cl->dim_ok = true;
        for (size_t k = 0; k < T->ncells; k++) {
            if (!cl->v[k])
                continue;
            if (!*cl->v[k])
                cl->empty = true;
            else if (!dim_value_ok(cl->v[k]))
                cl->dim_ok = false;
            if (cl->plain[k] && cg_yaml_resolve(cl->v[k], strlen(cl->v[k])) != CG_T_STR)
                cl->typed = true;
        }
    }
    cg_strbuf_release(&p);
    cg_map_release(&taken);
}

/* The tree's column of argument k in phase fi, or NULL (a constant). */
static const col *column_of(const tplan *T, size_t fi, const char *k)
{
    for (size_t c = 0; c < T->ncols; c++)
        if (T->cols[c].phases[fi] && cg_streq(T->cols[c].key, k))
            return &T->cols[c];
    return NULL;
}

/* The trees of a workflow: one per group without a parent, with the groups
 * below it as its later phases. */
static void plan_trees(ctx *C, wplan *W)
{
    W->t = cg_xcalloc(W->nf + 1, sizeof *W->t);
    for (size_t fi = 0; fi < W->nf; fi++) {
        fam *root = &W->f[fi];
        if (root->parent >= 0)
            continue;
        /* the phases: the root and every group below it */
        int *fams = cg_xcalloc(W->nf + 1, sizeof *fams);
        size_t nf = 0;
        for (size_t g = 0; g < W->nf; g++)
            if (g == fi || is_ancestor(W, (int)fi, (int)g))
                fams[nf++] = (int)g;
        /* a tree needs two cells */
        if (root->n < 2) {
            free(fams);
            continue;
        }
        /* phases in order of their first entry */
        for (size_t a = 1; a < nf; a++)
            for (size_t b = a; b > 0 && W->f[fams[b]].mem[0] < W->f[fams[b - 1]].mem[0]; b--) {
                int t = fams[b];
                fams[b] = fams[b - 1];
                fams[b - 1] = t;
            }
        tplan *T = &W->t[W->nt];
        memset(T, 0, sizeof *T);
        T->root = (int)fi;
        T->fams = fams;
        T->nfams = nf;
        T->ncells = root->n;
        T->ok = true;
        T->fc = cg_xcalloc(nf * T->ncells + 1, sizeof *T->fc);
        for (size_t i = 0; i < nf * T->ncells; i++)
            T->fc[i] = -1;
        for (size_t c = 0; c < root->n; c++)
            W->e[root->mem[c]].cell = (int)c;
        /* the cell of each later entry: its parent's, groups in order of depth */
        for (size_t pass = 0; pass < nf; pass++)
            for (size_t a = 0; a < nf; a++) {
                fam *f = &W->f[fams[a]];
                if (fams[a] == (int)fi)
                    continue;
                for (size_t m = 0; m < f->n; m++)
                    W->e[f->mem[m]].cell = W->e[f->par[m]].cell;
            }
        for (size_t a = 0; a < nf; a++) {
            fam *f = &W->f[fams[a]];
            f->tree = (int)W->nt;
            for (size_t m = 0; m < f->n; m++)
                T->fc[a * T->ncells + (size_t)W->e[f->mem[m]].cell] = (long)f->mem[m];
        }
        T->pattern = cg_xcalloc(nf + 1, sizeof *T->pattern);
        W->nt++;
        /* the candidate's number, for `enabled` */
        size_t number = C->candidate++;
        T->enabled = C->level >= CG_INFER_TREES && (!C->enabled || C->enabled[number]);
        if (C->level < CG_INFER_TREES || (C->enabled && !C->enabled[number]))
            tree_fail(C, T, "left static (the proof failed with it as a tree)");
        (void)C;
    }
}

/* Where the tree's entries stand in the workflow: cell by cell, or phase by
 * phase, each a run of entries no other entry interrupts. */
static void check_order(ctx *C, const wplan *W, tplan *T)
{
    size_t n = 0;
    for (size_t i = 0; i < T->nfams * T->ncells; i++)
        n += T->fc[i] >= 0;
    long *cellwise = cg_xcalloc(n + 1, sizeof *cellwise), *phasewise = cg_xcalloc(n + 1, sizeof *phasewise);
    size_t a = 0, b = 0;
    for (size_t c = 0; c < T->ncells; c++)
        for (size_t f = 0; f < T->nfams; f++)
            if (T->fc[f * T->ncells + c] >= 0)
                cellwise[a++] = T->fc[f * T->ncells + c];
    for (size_t f = 0; f < T->nfams; f++)
        for (size_t c = 0; c < T->ncells; c++)
            if (T->fc[f * T->ncells + c] >= 0)
                phasewise[b++] = T->fc[f * T->ncells + c];
    /* cell by cell: one run */
    bool cell_ok = true;
    for (size_t i = 1; i < n && cell_ok; i++)
        cell_ok = cellwise[i] == cellwise[i - 1] + 1;
    bool phase_ok = !cell_ok;
    if (phase_ok) {
        size_t i = 0;
        for (size_t f = 0; f < T->nfams && phase_ok; f++) {
            size_t first = i;
            for (size_t c = 0; c < T->ncells; c++)
                if (T->fc[f * T->ncells + c] >= 0) {
                    if (i > first && phasewise[i] != phasewise[i - 1] + 1)
                        phase_ok = false;
                    i++;
                }
        }
    }
    (void)W;
    free(cellwise);
    free(phasewise);
    if (!cell_ok && !phase_ok)
        tree_fail(C, T, "its entries are neither cell by cell nor phase by phase, each in one run");
    T->phase_major = !cell_ok && phase_ok;
}

/* The requires of each phase, the same for every entry: names, and the
 * phases of the same cell. */
static void plan_requires(ctx *C, wplan *W, tplan *T)
{
    for (size_t a = 0; a < T->nfams && T->ok; a++) {
        fam *f = &W->f[T->fams[a]];
        json_t *tok0 = NULL;
        for (size_t m = 0; m < f->n && T->ok; m++) {
            const ent *e = &W->e[f->mem[m]];
            json_t *tok = json_array();
            for (size_t r = 0; r < json_array_size(e->req); r++) {
                const char *nm = json_string_value(json_array_get(e->req, r));
                long x = entry_named(W, nm);
                bool same_cell = x >= 0 && W->e[x].fam >= 0 && W->f[W->e[x].fam].tree == f->tree &&
                                 W->e[x].cell == e->cell && (W->e[x].fam == f->parent ||
                                                             is_ancestor(W, W->e[x].fam, T->fams[a]));
                if (same_cell) {
                    char b[32];
                    snprintf(b, sizeof b, "\x01%d", W->e[x].fam);
                    json_array_append_new(tok, json_string(b));
                } else {
                    /* a job of this tree's other cells, or a later phase: not a name it can keep */
                    if (x >= 0 && W->e[x].fam >= 0 && W->f[W->e[x].fam].tree == f->tree)
                        tree_fail(C, T, "an entry requires a job of another cell of the same matrix");
                    json_array_append_new(tok, json_string(nm));
                }
            }
            if (!tok0)
                tok0 = tok;
            else {
                if (!json_equal(tok0, tok))
                    tree_fail(C, T, "the entries of one job require different jobs");
                json_decref(tok);
            }
        }
        f->rtok = tok0;
    }
}

static void name_phases(ctx *C, const wplan *W, tplan *T, cg_map *taken_in_workflow)
{
    cg_map taken;
    cg_map_init(&taken);
    /* never a name the requires of this tree use, nor an entry's */
    for (size_t i = 0; i < W->ne; i++)
        cg_map_put(&taken, W->e[i].name, (void *)1);
    for (size_t a = 0; a < T->nfams; a++) {
        fam *f = &W->f[T->fams[a]];
        for (size_t r = 0; r < json_array_size(f->rtok); r++)
            cg_map_put(&taken, json_string_value(json_array_get(f->rtok, r)), (void *)1);
    }
    for (size_t a = 0; a < T->nfams; a++) {
        fam *f = &W->f[T->fams[a]];
        const char *last = strrchr(f->kind, '_');
        cg_strbuf b = CG_STRBUF_INIT;
        identifier(&b, last && last[1] ? last + 1 : f->kind);
        for (size_t i = 0; i < CG_ARRAY_LEN(reserved); i++)
            if (cg_streq(b.buf, reserved[i]))
                cg_strbuf_adds(&b, "_phase");
        if (cg_map_has(&taken, b.buf)) {
            cg_strbuf_reset(&b);
            identifier(&b, f->kind);
            cg_strbuf_adds(&b, "_phase");
        }
        f->phase = unique_name(C, &taken, b.buf);
        cg_strbuf_release(&b);
    }
    cg_map_release(&taken);
    (void)taken_in_workflow;
}

/* Cells as a product: every cell has every dimension, and the cells are
 * the dimensions' values multiplied in some order of the dimensions.  The
 * variables must then each follow one dimension's value (overrides). */
static void detect_product(tplan *T)
{
    size_t nd = 0;
    size_t *dims = cg_xcalloc(T->ncols + 1, sizeof *dims);
    for (size_t c = 0; c < T->ncols; c++)
        if (T->cols[c].dim)
            dims[nd++] = c;
    if (nd < 2 && nd != 1) {
        free(dims);
        return;
    }
    for (size_t i = 0; i < nd; i++)
        for (size_t k = 0; k < T->ncells; k++)
            if (!T->cols[dims[i]].v[k] || !*T->cols[dims[i]].v[k] || !glob_safe(T->cols[dims[i]].v[k])) {
                free(dims);
                return;
            }
    /* the slowest dimension first: the one whose value changes least often */
    size_t *changes = cg_xcalloc(nd + 1, sizeof *changes);
    for (size_t i = 0; i < nd; i++)
        for (size_t k = 1; k < T->ncells; k++)
            changes[i] += !cg_streq(T->cols[dims[i]].v[k], T->cols[dims[i]].v[k - 1]);
    for (size_t a = 1; a < nd; a++)
        for (size_t b = a; b > 0 && changes[b] < changes[b - 1]; b--) {
            size_t t = changes[b];
            changes[b] = changes[b - 1];
            changes[b - 1] = t;
            t = dims[b];
            dims[b] = dims[b - 1];
            dims[b - 1] = t;
        }
    free(changes);
    /* the distinct values of each, in order of appearance; the product of
     * their counts must be the cell count, and cell k the k-th combination */
    size_t total = 1;
    bool ok = true;
    size_t *counts = cg_xcalloc(nd + 1, sizeof *counts);
    const char ***vals = cg_xcalloc(nd + 1, sizeof *vals);
    for (size_t i = 0; i < nd && ok; i++) {
        vals[i] = cg_xcalloc(T->ncells + 1, sizeof **vals);
        for (size_t k = 0; k < T->ncells; k++) {
            const char *v = T->cols[dims[i]].v[k];
            bool seen = false;
            for (size_t j = 0; j < counts[i] && !seen; j++)
                seen = cg_streq(vals[i][j], v);
            if (!seen)
                vals[i][counts[i]++] = v;
        }
        total *= counts[i];
        if (total > T->ncells)
            ok = false;
    }
    ok = ok && total == T->ncells;
    for (size_t k = 0; k < T->ncells && ok; k++) {
        size_t rest = k;
        for (size_t i = nd; i-- > 0 && ok;) {
            size_t j = rest % counts[i];
            rest /= counts[i];
            ok = cg_streq(T->cols[dims[i]].v[k], vals[i][j]);
        }
    }
    /* each variable: set everywhere, and a function of one dimension */
    for (size_t c = 0; c < T->ncols && ok; c++) {
        col *cl = &T->cols[c];
        if (cl->dim)
            continue;
        bool follows_one = false;
        for (size_t i = 0; i < nd && !follows_one; i++) {
            bool fn = true;
            for (size_t k = 0; k < T->ncells && fn; k++)
                for (size_t q = 0; q < k && fn; q++)
                    if (cg_streq(T->cols[dims[i]].v[k], T->cols[dims[i]].v[q]))
                        fn = same_value(cl->v[k], cl->plain[k], cl->v[q], cl->plain[q]);
            if (fn) {
                follows_one = true;
                cl->follows = dims[i];
            }
        }
        /* a variable some cells lack cannot be an override of a value */
        for (size_t k = 0; k < T->ncells && follows_one; k++)
            if (!cl->v[k])
                follows_one = false;
        ok = follows_one;
    }
    for (size_t i = 0; i < nd; i++)
        free(vals[i]);
    free(vals);
    free(counts);
    if (ok) {
        T->product = true;
        T->dimorder = dims;
        T->ndimorder = nd;
    } else {
        free(dims);
    }
}

/* Drops the phases of one entry (follow-ups) from T, and returns how many:
 * a follow-up written away from its cell's other jobs stays static. */
static size_t drop_followups(wplan *W, tplan *T)
{
    size_t kept = 0, dropped = 0;
    for (size_t a = 0; a < T->nfams; a++) {
        fam *f = &W->f[T->fams[a]];
        if (a > 0 && f->n == 1) {
            f->tree = -1;
            f->parent = -1;
            W->e[f->mem[0]].fam = -1;
            dropped++;
            continue;
        }
        if (kept != a) {
            T->fams[kept] = T->fams[a];
            memmove(T->fc + kept * T->ncells, T->fc + a * T->ncells, T->ncells * sizeof *T->fc);
        }
        kept++;
    }
    T->nfams = kept;
    return dropped;
}

static void plan_tree(ctx *C, wplan *W, tplan *T, cg_map *tree_names)
{
    if (!T->ok)
        return;
    check_order(C, W, T);
    if (!T->ok && drop_followups(W, T)) {
        T->ok = true;
        T->why = NULL;
        check_order(C, W, T);
    }
    plan_requires(C, W, T);
    if (!T->ok)
        return;
    name_phases(C, W, T, NULL);
    T->shaped = true;
    columns(C, W, T);
    if (!find_patterns(T, W)) {
        tree_fail(C, T, "no job-name pattern made of its varying arguments gives every name");
        return;
    }
    /* a phase not in every cell: `only` names its cells by their dimensions */
    for (size_t a = 1; a < T->nfams; a++) {
        for (size_t c = 0; c < T->ncells; c++) {
            if (T->fc[a * T->ncells + c] >= 0)
                continue;
            for (size_t d = 0; d < T->ncols; d++)
                if (T->cols[d].dim) {
                    for (size_t k = 0; k < T->ncells; k++)
                        if (T->cols[d].v[k] && *T->cols[d].v[k] && !glob_safe(T->cols[d].v[k]))
                            tree_fail(C, T, "a phase runs for some cells only, and a dimension's value holds "
                                      "a character a pattern reads as a glob");
                }
            break;
        }
    }
    detect_product(T);
    const fam *root = &W->f[T->root];
    cg_strbuf b = CG_STRBUF_INIT;
    identifier(&b, root->kind);
    T->name = unique_name(C, tree_names, b.buf);
    cg_strbuf_release(&b);
}

/* ---- one tree for the same jobs in several workflows ---- */

/* The requires of phase a as names (phases by their names). */
static void requires_text(const wplan *W, const tplan *T, size_t a, cg_strbuf *out)
{
    const fam *f = &W->f[T->fams[a]];
    cg_strbuf_reset(out);
    for (size_t q = 0; q < json_array_size(f->rtok); q++) {
        const char *t = json_string_value(json_array_get(f->rtok, q));
        cg_strbuf_adds(out, t[0] == '\x01' ? W->f[atoi(t + 1)].phase : t);
        cg_strbuf_addc(out, '\n');
    }
}

/* An entry's arguments as data, without `requires`, `name` and (when
 * gated) `on_request`. */
static json_t *entry_data(const ctx *C, const ent *e, bool gated)
{
    json_t *d = e->args ? cg_doc_typed(C->doc, e->apath, e->args) : json_object();
    json_object_del(d, "requires");
    json_object_del(d, "name");
    if (gated)
        json_object_del(d, "on_request");
    return d;
}

/* The entry's on_request: 1 false, 2 true, 0 not a plain boolean. */
static int gate_of(const ctx *C, const ent *e)
{
    json_t *v = e->args ? json_object_get(e->args, "on_request") : NULL;
    if (!json_is_string(v))
        return 0;
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, e->apath, "on_request");
    bool plain = cg_doc_is_plain(C->doc, p.buf);
    cg_strbuf_release(&p);
    if (!plain || cg_yaml_resolve(json_string_value(v), json_string_length(v)) != CG_T_BOOL)
        return 0;
    const char *t = json_string_value(v);
    return strchr("tTyY", t[0]) || ((t[0] == 'o' || t[0] == 'O') && (t[1] == 'n' || t[1] == 'N')) ? 2 : 1;
}

static void merge_init(tplan *B, const wplan *WB)
{
    if (B->nwfs)
        return;
    B->nwfs = 1;
    B->wfs = cg_xcalloc(1, sizeof *B->wfs);
    B->wfs[0] = WB;
    B->from = cg_xcalloc(1, sizeof *B->from);
    B->from[0] = B;
    B->cell_in = cg_xcalloc(B->ncells, 1);
    memset(B->cell_in, 1, B->ncells);
    B->phase_in = cg_xcalloc(B->nfams, sizeof *B->phase_in);
    for (size_t a = 0; a < B->nfams; a++)
        B->phase_in[a] = true;
    B->phase_of = cg_xcalloc(B->nfams, sizeof *B->phase_of);
    for (size_t a = 0; a < B->nfams; a++)
        B->phase_of[a] = (int)a;
    B->cell_of = cg_xcalloc(B->ncells, sizeof *B->cell_of);
    for (size_t c = 0; c < B->ncells; c++)
        B->cell_of[c] = (int)c;
}

/* Merges O (workflow WO) into B (workflow WB) when O's jobs are jobs of B:
 * the same dimensions and names, each of O's cells a cell of B, each of its
 * phases one of B's, each entry the same (but for `on_request`, which may
 * then be the built-in: the workflow's tiers say which cells are gated). */
static bool try_merge(ctx *C, tplan *B, const wplan *WB, tplan *O, const wplan *WO)
{
    if (O->nfams > B->nfams || O->ncells > B->ncells || B->nwfs >= 63)
        return false;
    int *pof = cg_xcalloc(B->nfams + 1, sizeof *pof);
    int *cof = cg_xcalloc(B->ncells + 1, sizeof *cof);
    unsigned char *cin = cg_xcalloc(B->ncells + 1, 1);
    bool *pin = cg_xcalloc(B->nfams + 1, sizeof *pin);
    bool ok = true;
    cg_strbuf rb = CG_STRBUF_INIT, ro = CG_STRBUF_INIT;
    for (size_t b = 0; b < B->nfams; b++)
        pof[b] = -1;
    for (size_t c = 0; c < B->ncells; c++)
        cof[c] = -1;
    /* each of O's entries is an entry of B of the same name: its phase and
     * its cell are B's, one to one */
    for (size_t a = 0; a < O->nfams && ok; a++) {
        for (size_t co = 0; co < O->ncells && ok; co++) {
            long eo = O->fc[a * O->ncells + co];
            if (eo < 0)
                continue;
            long eb = -1;
            size_t b = 0, cb = 0;
            for (size_t x = 0; x < B->nfams && eb < 0; x++)
                for (size_t y = 0; y < B->ncells && eb < 0; y++) {
                    long e = B->fc[x * B->ncells + y];
                    if (e >= 0 && cg_streq(WB->e[e].name, WO->e[eo].name)) {
                        eb = e;
                        b = x;
                        cb = y;
                    }
                }
            if (eb < 0 || !cg_streq(WB->e[eb].kind, WO->e[eo].kind) || WB->e[eb].named != WO->e[eo].named) {
                ok = false;
                break;
            }
            if ((pof[b] >= 0 && pof[b] != (int)a) || (cof[cb] >= 0 && cof[cb] != (int)co)) {
                ok = false;
                break;
            }
            for (size_t x = 0; x < B->nfams && ok; x++)
                if (x != b && pof[x] == (int)a)
                    ok = false;
            for (size_t y = 0; y < B->ncells && ok; y++)
                if (y != cb && cof[y] == (int)co)
                    ok = false;
            pof[b] = (int)a;
            pin[b] = true;
            cof[cb] = (int)co;
        }
    }
    for (size_t b = 0; b < B->nfams && ok; b++) {
        if (pof[b] < 0)
            continue;
        requires_text(WB, B, b, &rb);
        requires_text(WO, O, (size_t)pof[b], &ro);
        ok = cg_streq(rb.buf ? rb.buf : "", ro.buf ? ro.buf : "");
    }
    /* the same jobs: for each of O's cells every phase O runs there is B's, and the reverse */
    bool gated = false;
    for (size_t cb = 0; cb < B->ncells && ok; cb++) {
        if (cof[cb] < 0)
            continue;
        size_t co = (size_t)cof[cb];
        for (size_t b = 0; b < B->nfams && ok; b++) {
            if (pof[b] < 0)
                continue;
            long eb = B->fc[b * B->ncells + cb], eo = O->fc[(size_t)pof[b] * O->ncells + co];
            if ((eb < 0) != (eo < 0)) {
                ok = false;
                break;
            }
            if (eb < 0)
                continue;
            json_t *db = entry_data(C, &WB->e[eb], false), *dob = entry_data(C, &WO->e[eo], false);
            if (!json_equal(db, dob)) {
                json_t *gb = entry_data(C, &WB->e[eb], true), *go = entry_data(C, &WO->e[eo], true);
                if (json_equal(gb, go) && gate_of(C, &WB->e[eb]) && gate_of(C, &WO->e[eo]))
                    gated = true;
                else
                    ok = false;
                json_decref(gb);
                json_decref(go);
            }
            json_decref(db);
            json_decref(dob);
        }
    }
    /* gated: every entry of every workflow of the tree passes a plain boolean,
     * the same for all phases of a cell */
    unsigned char *bgate = NULL;
    if (ok && (gated || B->gated)) {
        bgate = cg_xcalloc(B->ncells + 1, 1);
        for (size_t cb = 0; cb < B->ncells && ok; cb++) {
            int gb = -1, go = -1;
            for (size_t b = 0; b < B->nfams && ok; b++) {
                long eb = B->fc[b * B->ncells + cb];
                if (eb >= 0 && json_object_get(WB->e[eb].args, "on_request")) {
                    int g = gate_of(C, &WB->e[eb]);
                    ok = g && (gb < 0 || g == gb);
                    gb = g;
                }
                if (cof[cb] >= 0 && pof[b] >= 0) {
                    long eo = O->fc[(size_t)pof[b] * O->ncells + (size_t)cof[cb]];
                    if (eo >= 0 && json_object_get(WO->e[eo].args, "on_request")) {
                        int g = gate_of(C, &WO->e[eo]);
                        ok = ok && g && (go < 0 || g == go);
                        go = g;
                    }
                }
            }
            bgate[cb] = (unsigned char)(gb < 0 ? 1 : gb);
            cin[cb] = (unsigned char)(cof[cb] < 0 ? 0 : go < 0 ? 1 : go);
        }
    } else if (ok) {
        for (size_t cb = 0; cb < B->ncells; cb++)
            cin[cb] = cof[cb] < 0 ? 0 : 1;
    }
    /* the tiers name cells by their dimensions: values a pattern reads as they are */
    bool subset = false;
    for (size_t cb = 0; cb < B->ncells; cb++)
        subset = subset || cin[cb] != 1;
    if (ok && (subset || gated || B->gated))
        for (size_t d = 0; d < B->ncols && ok; d++)
            for (size_t k = 0; k < B->ncells && ok; k++)
                if (B->cols[d].dim && B->cols[d].v[k] && *B->cols[d].v[k] && !glob_safe(B->cols[d].v[k]))
                    ok = false;
    if (ok) {
        merge_init(B, WB);
        if (bgate && !B->gated)
            for (size_t cb = 0; cb < B->ncells; cb++)
                B->cell_in[cb] = bgate[cb];
        size_t w = B->nwfs++;
        B->wfs = cg_xrealloc(B->wfs, B->nwfs * sizeof *B->wfs);
        B->from = cg_xrealloc(B->from, B->nwfs * sizeof *B->from);
        B->cell_in = cg_xrealloc(B->cell_in, B->nwfs * B->ncells);
        B->phase_in = cg_xrealloc(B->phase_in, B->nwfs * B->nfams * sizeof *B->phase_in);
        B->phase_of = cg_xrealloc(B->phase_of, B->nwfs * B->nfams * sizeof *B->phase_of);
        B->cell_of = cg_xrealloc(B->cell_of, B->nwfs * B->ncells * sizeof *B->cell_of);
        B->wfs[w] = WO;
        B->from[w] = O;
        memcpy(B->cell_in + w * B->ncells, cin, B->ncells);
        memcpy(B->phase_in + w * B->nfams, pin, B->nfams * sizeof *pin);
        memcpy(B->phase_of + w * B->nfams, pof, B->nfams * sizeof *pof);
        memcpy(B->cell_of + w * B->ncells, cof, B->ncells * sizeof *cof);
        B->gated = B->gated || gated;
        O->into = B;
        O->ok = true;
        O->why = NULL;
        /* O's phases are placed by B's names */
        for (size_t b = 0; b < B->nfams; b++)
            if (pof[b] >= 0)
                ((wplan *)WO)->f[O->fams[pof[b]]].phase = WB->f[B->fams[b]].phase;
        /* the tree keeps the first name its jobs had */
        if (strcmp(O->name, B->name) < 0 && strlen(O->name) <= strlen(B->name)) {
            char *t = B->name;
            B->name = O->name;
            O->name = t;
        }
    }
    free(bgate);
    free(pof);
    free(cof);
    free(cin);
    free(pin);
    cg_strbuf_release(&rb);
    cg_strbuf_release(&ro);
    return ok;
}

/* Trees of different workflows that make the same jobs become one: the
 * tree with the most cells and phases takes the others. */
static void merge_trees(ctx *C)
{
    for (size_t i = 0; i < C->nw; i++)
        for (size_t t = 0; t < C->w[i].nt; t++) {
            tplan *B = &C->w[i].t[t];
            if (!B->ok || B->into)
                continue;
            for (size_t j = 0; j < C->nw; j++) {
                if (j == i)
                    continue;
                for (size_t u = 0; u < C->w[j].nt; u++) {
                    tplan *O = &C->w[j].t[u];
                    if (!O->shaped || !O->enabled || O->into || O->nwfs > 1 || O == B)
                        continue;
                    bool bigger = B->ncells > O->ncells || (B->ncells == O->ncells && B->nfams > O->nfams) ||
                                  (B->ncells == O->ncells && B->nfams == O->nfams && i < j);
                    if (bigger)
                        try_merge(C, B, &C->w[i], O, &C->w[j]);
                }
            }
        }
}

/* ---- writing the files ---- */

static void yw_strlist_begin(cg_yw *w, const char *key)
{
    cg_yw_keys(w, key);
    cg_yw_seq_begin(w);
}

/* A dimension the template cannot use as it is (a typed value, or "" where
 * the dimension is absent) is passed through a variable of its own. */
static bool shadowed(const col *cl)
{
    return cl->dim && (cl->typed || cl->empty);
}

static const char *tname_of(ctx *C, const col *cl)
{
    if (shadowed(cl) && !cl->tname) {
        cg_strbuf b = CG_STRBUF_INIT;
        cg_strbuf_addf(&b, "%s_value", cl->name);
        ((col *)cl)->tname = pstr(C, b.buf);
        cg_strbuf_release(&b);
    }
    return cl->tname ? cl->tname : cl->name;
}

/* A variable's value in cell k (the column's own, or the typed shadow of a
 * dimension). */
static void write_var_value(cg_yw *w, const col *cl, size_t k)
{
    cg_yw_scalar(w, cl->v[k], strlen(cl->v[k]), cl->plain[k]);
}

static void write_cell_vars(ctx *C, cg_yw *w, const tplan *T, size_t k)
{
    bool any = false;
    for (size_t c = 0; c < T->ncols; c++) {
        const col *cl = &T->cols[c];
        if (!cl->v[k] || (cl->dim && !shadowed(cl)) || (T->gated && cg_streq(cl->key, "on_request")))
            continue;
        if (!any) {
            cg_yw_keys(w, "vars");
            cg_yw_map_begin(w);
            any = true;
        }
        cg_yw_keys(w, tname_of(C, cl));
        write_var_value(w, cl, k);
    }
    if (any)
        cg_yw_end(w);
}

static void write_pattern_value(cg_yw *w, const char *v)
{
    if (v)
        cg_yw_strs(w, v);
    else
        cg_yw_raw(w, "~", 1);
}

static void write_cells(cg_yw *w, const tplan *T, const size_t *dims, size_t nd, const unsigned char *in,
                        unsigned char want)
{
    cg_yw_map_begin(w);
    cg_yw_keys(w, "cells");
    cg_yw_seq_begin(w);
    for (size_t c = 0; c < T->ncells; c++) {
        if (in[c] != want)
            continue;
        cg_yw_map_begin(w);
        for (size_t i = 0; i < nd; i++) {
            const char *pv = T->cols[dims[i]].v[c];
            cg_yw_keys(w, T->cols[dims[i]].name);
            write_pattern_value(w, pv && *pv ? pv : NULL);
        }
        cg_yw_end(w);
    }
    cg_yw_end(w);
    cg_yw_end(w);
}

/* The tiers of the workflows the tree lands in that take tiers: its cells
 * there, those run on request apart. */
static void write_tiers(ctx *C, cg_yw *w, const wplan *W, const tplan *T, const size_t *dims, size_t nd)
{
    (void)C;
    size_t n = T->nwfs ? T->nwfs : 1;
    bool any = false;
    for (size_t x = 0; x < n; x++) {
        const wplan *X = T->nwfs ? T->wfs[x] : W;
        if (!X->tiered)
            continue;
        if (!any) {
            cg_yw_keys(w, "tiers");
            cg_yw_map_begin(w);
            any = true;
        }
        size_t nin = 0, ngate = 0;
        for (size_t c = 0; c < T->ncells; c++) {
            unsigned char v = T->nwfs ? T->cell_in[x * T->ncells + c] : 1;
            nin += v == 1;
            ngate += v == 2;
        }
        cg_yw_keys(w, X->tier);
        if (nin == T->ncells)
            cg_yw_strs(w, "all");
        else if (!nin)
            cg_yw_strs(w, "none");
        else
            write_cells(w, T, dims, nd, T->cell_in + x * T->ncells, 1);
        if (X->gated) {
            cg_strbuf b = CG_STRBUF_INIT;
            cg_strbuf_addf(&b, "%s_on_request", X->tier);
            cg_yw_keys(w, b.buf);
            cg_strbuf_release(&b);
            if (!ngate)
                cg_yw_strs(w, "none");
            else if (ngate == T->ncells)
                cg_yw_strs(w, "all");
            else
                write_cells(w, T, dims, nd, T->cell_in + x * T->ncells, 2);
        }
    }
    if (any)
        cg_yw_end(w);
}

static void emit_tree(ctx *C, const wplan *W, tplan *T)
{
    cg_infer *r = C->r;
    const fam *root = &W->f[T->root];
    cg_strbuf rel = CG_STRBUF_INIT;
    cg_strbuf_addf(&rel, "dimensions/%s.yml", T->name);
    cg_infer_file *file = add_file(r, rel.buf);
    cg_strbuf *o = &file->text;
    cg_strbuf_addf(o, "# The entries of workflow '");
    cg_strbuf_add_comment_text(o, W->name);
    cg_strbuf_addf(o, "' that run '");
    cg_strbuf_add_comment_text(o, root->kind);
    cg_strbuf_addf(o, "' (%zu cells) and what requires them, one\n# phase per job; imported from ", T->ncells);
    cg_strbuf_add_comment_text(o, C->source);
    cg_strbuf_adds(o, " by `cigen import`.\n");
    cg_yw w;
    cg_yw_init(&w, o);
    cg_yw_map_begin(&w);
    size_t nd = 0;
    size_t *dims = cg_xcalloc(T->ncols + 1, sizeof *dims);
    if (T->product) {
        memcpy(dims, T->dimorder, T->ndimorder * sizeof *dims);
        nd = T->ndimorder;
    } else {
        for (size_t c = 0; c < T->ncols; c++)
            if (T->cols[c].dim)
                dims[nd++] = c;
    }
    yw_strlist_begin(&w, "dimensions");
    for (size_t i = 0; i < nd; i++)
        cg_yw_strs(&w, T->cols[dims[i]].name);
    cg_yw_end(&w);
    cg_yw_keys(&w, "job_name");
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "pattern");
    cg_yw_strs(&w, T->pattern[0].buf);
    if (replaces[T->replace].n) {
        cg_yw_keys(&w, "replace");
        cg_yw_map_begin(&w);
        for (size_t i = 0; i < replaces[T->replace].n; i++) {
            cg_yw_keys(&w, replaces[T->replace].from[i]);
            cg_yw_strs(&w, replaces[T->replace].to[i]);
        }
        cg_yw_end(&w);
    }
    cg_yw_end(&w);
    if (T->nwfs <= 1) {
        yw_strlist_begin(&w, "workflows");
        cg_yw_strs(&w, W->name);
        cg_yw_end(&w);
    }
    write_tiers(C, &w, W, T, dims, nd);
    cg_yw_keys(&w, "tree");
    cg_yw_seq_begin(&w);
    if (T->product) {
        cg_yw_map_begin(&w);
        for (size_t i = 0; i < nd; i++) {
            const col *cl = &T->cols[dims[i]];
            cg_yw_keys(&w, cl->name);
            cg_yw_seq_begin(&w);
            for (size_t k = 0; k < T->ncells; k++) {
                bool seen = false;
                for (size_t q = 0; q < k && !seen; q++)
                    seen = cg_streq(cl->v[q], cl->v[k]);
                if (!seen)
                    cg_yw_strs(&w, cl->v[k]);
            }
            cg_yw_end(&w);
        }
        cg_yw_end(&w);
    } else {
        for (size_t k = 0; k < T->ncells; k++) {
            cg_yw_map_begin(&w);
            for (size_t i = 0; i < nd; i++) {
                const col *cl = &T->cols[dims[i]];
                if (!cl->v[k] || !*cl->v[k])
                    continue;
                cg_yw_keys(&w, cl->name);
                cg_yw_strs(&w, cl->v[k]);
            }
            write_cell_vars(C, &w, T, k);
            cg_yw_end(&w);
        }
    }
    cg_yw_end(&w);
    if (T->product) {
        /* each variable by the value of the dimension it follows */
        bool any = false;
        for (size_t c = 0; c < T->ncols; c++) {
            const col *cl = &T->cols[c];
            if ((cl->dim && !shadowed(cl)) || (T->gated && cg_streq(cl->key, "on_request")))
                continue;
            const col *by = cl->dim ? cl : &T->cols[cl->follows];
            for (size_t k = 0; k < T->ncells; k++) {
                bool seen = false;
                for (size_t q = 0; q < k && !seen; q++)
                    seen = cg_streq(by->v[q], by->v[k]);
                if (seen)
                    continue;
                if (!any) {
                    cg_yw_keys(&w, "overrides");
                    cg_yw_seq_begin(&w);
                    any = true;
                }
                cg_yw_map_begin(&w);
                cg_yw_keys(&w, "when");
                cg_yw_map_begin(&w);
                cg_yw_keys(&w, by->name);
                cg_yw_strs(&w, by->v[k]);
                cg_yw_end(&w);
                cg_yw_keys(&w, "vars");
                cg_yw_map_begin(&w);
                cg_yw_keys(&w, tname_of(C, cl));
                write_var_value(&w, cl, k);
                cg_yw_end(&w);
                cg_yw_end(&w);
            }
        }
        if (any)
            cg_yw_end(&w);
    }
    cg_yw_keys(&w, "phases");
    cg_yw_map_begin(&w);
    for (size_t a = 0; a < T->nfams; a++) {
        const fam *f = &W->f[T->fams[a]];
        cg_yw_keys(&w, f->phase);
        cg_yw_map_begin(&w);
        cg_yw_keys(&w, "job_name");
        cg_yw_strs(&w, T->pattern[a].buf);
        cg_strbuf tp = CG_STRBUF_INIT;
        cg_strbuf_addf(&tp, "templates/%s_%s.yml", T->name, f->phase);
        cg_yw_keys(&w, "template");
        cg_yw_strs(&w, tp.buf);
        if (T->nwfs > 1) {
            yw_strlist_begin(&w, "workflows");
            for (size_t x = 0; x < T->nwfs; x++)
                if (T->phase_in[x * T->nfams + a])
                    cg_yw_strs(&w, T->wfs[x]->name);
            cg_yw_end(&w);
        }
        if (json_array_size(f->rtok)) {
            yw_strlist_begin(&w, "requires");
            for (size_t q = 0; q < json_array_size(f->rtok); q++) {
                const char *t = json_string_value(json_array_get(f->rtok, q));
                cg_yw_strs(&w, t[0] == '\x01' ? W->f[atoi(t + 1)].phase : t);
            }
            cg_yw_end(&w);
        }
        size_t have = 0;
        for (size_t c = 0; c < T->ncells; c++)
            have += T->fc[a * T->ncells + c] >= 0;
        if (have < T->ncells) {
            /* the cells that run it, by their dimensions */
            bool skip = T->ncells - have < have;
            cg_yw_keys(&w, skip ? "skip" : "only");
            cg_yw_seq_begin(&w);
            for (size_t c = 0; c < T->ncells; c++) {
                if ((T->fc[a * T->ncells + c] >= 0) == skip)
                    continue;
                cg_yw_map_begin(&w);
                for (size_t i = 0; i < nd; i++) {
                    cg_yw_keys(&w, T->cols[dims[i]].name);
                    const char *pv = T->cols[dims[i]].v[c];
                    write_pattern_value(&w, pv && *pv ? pv : NULL);
                }
                cg_yw_end(&w);
            }
            cg_yw_end(&w);
        }
        cg_yw_end(&w);
        /* its template */
        cg_infer_file *tf = add_file(r, tp.buf);
        r->ntemplates++;
        cg_strbuf *to = &tf->text;
        cg_strbuf_adds(to, "# Phase '");
        cg_strbuf_add_comment_text(to, f->phase);
        cg_strbuf_adds(to, "' of dimensions/");
        cg_strbuf_add_comment_text(to, T->name);
        cg_strbuf_adds(to, ".yml: what every entry passes, and {{ placeholders }} for\n"
                           "# what varies (a key ending in '?' where some cells pass nothing).\n");
        cg_yw tw;
        cg_yw_init(&tw, to);
        cg_yw_map_begin(&tw);
        cg_yw_keys(&tw, f->kind);
        cg_yw_map_begin(&tw);
        if (!W->e[f->mem[0]].named) {
            /* named like the job it runs */
            cg_yw_keys(&tw, "name");
            cg_yw_raw(&tw, "~", 1);
        }
        cg_map seen;
        cg_map_init(&seen);
        cg_strbuf kp = CG_STRBUF_INIT;
        for (size_t m = 0; m < f->n; m++) {
            const ent *e = &W->e[f->mem[m]];
            const char *k;
            json_t *v;
            json_object_foreach(e->args, k, v) {
                if (cg_streq(k, "name") || cg_streq(k, "requires") || cg_map_has(&seen, k))
                    continue;
                cg_map_put(&seen, k, (void *)1);
                if (T->gated && cg_streq(k, "on_request")) {
                    /* true for the cells the workflow runs on request */
                    cg_yw_keys(&tw, k);
                    cg_yw_strs(&tw, "{{ on_request }}");
                    continue;
                }
                const col *cl = json_is_string(v) ? column_of(T, a, k) : NULL;
                if (!cl) {
                    cg_yw_keys(&tw, k);
                    cg_path_join_key(&kp, e->apath, k);
                    cg_yw_value(&tw, C->doc, kp.buf, v);
                    continue;
                }
                bool optional = false;
                for (size_t q = 0; q < f->n && !optional; q++)
                    optional = !json_object_get(W->e[f->mem[q]].args, k);
                cg_strbuf key = CG_STRBUF_INIT, val = CG_STRBUF_INIT;
                cg_strbuf_adds(&key, k);
                if (optional)
                    cg_strbuf_addc(&key, '?');
                cg_strbuf_addf(&val, "{{ %s }}", tname_of(C, cl));
                cg_yw_keys(&tw, key.buf);
                cg_yw_strs(&tw, val.buf);
                cg_strbuf_release(&key);
                cg_strbuf_release(&val);
            }
        }
        cg_strbuf_release(&kp);
        cg_map_release(&seen);
        cg_yw_end(&tw);
        cg_yw_end(&tw);
        cg_yw_release(&tw);
        cg_strbuf_release(&tp);
    }
    cg_yw_end(&w);
    cg_yw_end(&w);
    cg_yw_release(&w);
    free(dims);
    cg_strbuf_release(&rel);
}

/* ---- the workflows ---- */

/* Can the manifest say this workflow's own keys (all but its entries)? */
static bool manifest_can_say(json_t *wv)
{
    if (!json_is_object(wv) || !json_is_array(json_object_get(wv, "jobs")))
        return false;
    const char *k;
    json_t *v;
    json_object_foreach(wv, k, v) {
        if (cg_streq(k, "jobs") || cg_streq(k, "when"))
            continue;
        if (!cg_streq(k, "triggers") || !json_is_array(v) || json_array_size(v) != 1)
            return false;
        json_t *t = json_array_get(v, 0);
        json_t *s = json_object_get(t, "schedule");
        if (!json_is_object(t) || json_object_size(t) != 1 || !json_is_object(s) ||
            !json_is_string(json_object_get(s, "cron")))
            return false;
        const char *sk;
        json_t *sv;
        json_object_foreach(s, sk, sv) {
            if (cg_streq(sk, "cron"))
                continue;
            if (!cg_streq(sk, "filters") || !json_is_object(sv) || json_object_size(sv) != 1 ||
                !json_object_get(sv, "branches"))
                return false;
        }
    }
    return true;
}

/* The lines of the value at path (its key's line first). */
static void copy_lines(const cg_doc *doc, const char *path, cg_strbuf *out)
{
    cg_pos kp = cg_doc_key_where(doc, path);
    cg_node_pos np;
    if (!cg_doc_lookup(doc, path, &np) || !kp.line)
        return;
    size_t len;
    const char *text = cg_doc_text(doc, &len);
    uint32_t line = 1;
    size_t i = 0;
    while (i < len && line < kp.line)
        if (text[i++] == '\n')
            line++;
    size_t from = i;
    while (i < len && line <= np.end_line)
        if (text[i++] == '\n')
            line++;
    cg_strbuf_add(out, text + from, i - from);
    if (i == len && i > from && text[i - 1] != '\n')
        cg_strbuf_addc(out, '\n');
}

static void write_manifest_workflow(ctx *C, cg_yw *w, const wplan *W)
{
    cg_strbuf p = CG_STRBUF_INIT;
    cg_yw_keys(w, W->name);
    cg_yw_map_begin(w);
    json_t *when = json_object_get(W->v, "when");
    if (when) {
        cg_path_join_key(&p, W->path, "when");
        cg_yw_keys(w, "when");
        cg_yw_value(w, C->doc, p.buf, when);
    }
    json_t *trig = json_object_get(W->v, "triggers");
    if (trig) {
        json_t *s = json_object_get(json_array_get(trig, 0), "schedule");
        cg_yw_keys(w, "schedule");
        cg_yw_strs(w, json_string_value(json_object_get(s, "cron")));
        json_t *br = json_object_get(json_object_get(s, "filters"), "branches");
        if (br) {
            cg_path_join_key(&p, W->path, "triggers");
            cg_path_push_index(&p, 0);
            cg_path_push_key(&p, "schedule");
            cg_path_push_key(&p, "filters");
            cg_path_push_key(&p, "branches");
            cg_yw_keys(w, "branches");
            cg_yw_value(w, C->doc, p.buf, br);
        }
    }
    if (W->tiered) {
        cg_yw_keys(w, "tier");
        cg_yw_strs(w, W->tier);
        if (W->gated) {
            cg_strbuf b = CG_STRBUF_INIT;
            cg_strbuf_addf(&b, "%s_on_request", W->tier);
            cg_yw_keys(w, "on_request");
            cg_yw_strs(w, b.buf);
            cg_strbuf_release(&b);
        }
    }
    bool trees = false;
    for (size_t t = 0; t < W->nt; t++)
        trees = trees || W->t[t].ok;
    size_t nstatic = 0;
    for (size_t i = 0; i < W->ne; i++) {
        const ent *e = &W->e[i];
        nstatic += !(e->fam >= 0 && W->f[e->fam].tree >= 0 && W->t[W->f[e->fam].tree].ok);
    }
    if (trees) {
        /* the entries in place: static ones by name, a tree's cell by cell or phase by phase */
        cg_yw_keys(w, "order");
        cg_yw_seq_begin(w);
        bool *placed = cg_xcalloc(W->nt * (W->nf + 1) + 1, sizeof *placed);
        for (size_t i = 0; i < W->ne; i++) {
            const ent *e = &W->e[i];
            const fam *f = e->fam >= 0 ? &W->f[e->fam] : NULL;
            if (!f || f->tree < 0 || !W->t[f->tree].ok) {
                cg_yw_strs(w, e->name);
                continue;
            }
            const tplan *T = &W->t[f->tree];
            const tplan *Tn = T->into ? T->into : T;
            size_t slot = (size_t)f->tree * (W->nf + 1) + (T->phase_major ? (size_t)e->fam + 1 : 0);
            if (placed[slot])
                continue;
            placed[slot] = true;
            cg_yw_map_begin(w);
            cg_yw_keys(w, "tree");
            cg_yw_strs(w, Tn->name);
            if (T->phase_major) {
                cg_yw_keys(w, "phase");
                cg_yw_strs(w, f->phase);
            }
            cg_yw_end(w);
        }
        free(placed);
        cg_yw_end(w);
    }
    if (nstatic || !trees) {
        cg_yw_keys(w, "jobs");
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < W->ne; i++) {
            const ent *e = &W->e[i];
            if (e->fam >= 0 && W->f[e->fam].tree >= 0 && W->t[W->f[e->fam].tree].ok)
                continue;
            cg_yw_value(w, C->doc, e->path, json_array_get(json_object_get(W->v, "jobs"), i));
            C->r->nstatic++;
        }
        cg_yw_end(w);
    }
    cg_yw_end(w);
    cg_strbuf_release(&p);
}

static void free_plans(ctx *C)
{
    for (size_t i = 0; i < C->nw; i++) {
        wplan *W = &C->w[i];
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            for (size_t c = 0; c < T->ncols; c++) {
                free(T->cols[c].v);
                free(T->cols[c].plain);
                free(T->cols[c].phases);
            }
            free(T->cols);
            for (size_t a = 0; a < T->nfams; a++)
                cg_strbuf_release(&T->pattern[a]);
            free(T->pattern);
            free(T->fams);
            free(T->fc);
            free(T->dimorder);
            free(T->wfs);
            free(T->from);
            free(T->cell_in);
            free(T->phase_in);
            free(T->phase_of);
            free(T->cell_of);
        }
        free(W->t);
        for (size_t f = 0; f < W->nf; f++) {
            free(W->f[f].mem);
            free(W->f[f].par);
            json_decref(W->f[f].rtok);
        }
        free(W->f);
        free(W->e);
    }
    free(C->w);
}

void cg_infer_init(cg_infer *r)
{
    memset(r, 0, sizeof *r);
}

void cg_infer_release(cg_infer *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        free(r->files[i].rel);
        cg_strbuf_release(&r->files[i].text);
    }
    free(r->files);
    cg_strbuf_release(&r->summary);
    memset(r, 0, sizeof *r);
}

int cg_infer_project(const cg_doc *doc, const char *source, const char *output, int level,
                     const bool *enabled, cg_infer *r, cg_error *err)
{
    slice *sl = NULL;
    size_t nsl = 0;
    if (slices_of(doc, &sl, &nsl, err) != 0)
        return -1;
    ctx C0 = {doc, source, output, level, enabled, 0, r, {0}, NULL, 0, {0}, {0}};
    ctx *C = &C0;
    cg_pool_init(&C->pool);
    cg_map_init(&C->tree_names);
    cg_map_init(&C->file_names);
    json_t *root = cg_doc_root(doc);
    json_t *wfs = json_object_get(root, "workflows");
    size_t text_len;
    const char *text = cg_doc_text(doc, &text_len);
    long wslice = -1;
    for (size_t i = 0; i < nsl; i++)
        if (cg_streq(sl[i].kind, "workflows"))
            wslice = (long)i;
    if (wslice >= 0)
        r->workflows_lines = cg_count_newlines(text + sl[wslice].start, sl[wslice].end - sl[wslice].start);
    /* which workflows the manifest holds */
    const char *version = NULL;
    if (!json_is_object(wfs) || wslice < 0)
        level = CG_INFER_VERBATIM;
    if (level > CG_INFER_VERBATIM) {
        const char *k;
        json_t *v;
        C->w = cg_xcalloc(json_object_size(wfs) + 1, sizeof *C->w);
        json_object_foreach(wfs, k, v) {
            if (cg_streq(k, "version")) {
                cg_strbuf p = CG_STRBUF_INIT;
                cg_path_join_key(&p, "/workflows", "version");
                if (json_is_string(v) && cg_streq(json_string_value(v), "2") && cg_doc_is_plain(doc, p.buf))
                    version = "2";
                else
                    level = CG_INFER_VERBATIM;
                cg_strbuf_release(&p);
                continue;
            }
            wplan *W = &C->w[C->nw++];
            W->name = k;
            W->v = v;
            cg_strbuf p = CG_STRBUF_INIT;
            cg_path_join_key(&p, "/workflows", k);
            W->path = pstr(C, p.buf);
            cg_strbuf_release(&p);
            W->verbatim = !manifest_can_say(v);
        }
    }
    C->level = level;
    bool any_verbatim = level == CG_INFER_VERBATIM;
    for (size_t i = 0; i < C->nw; i++)
        any_verbatim = any_verbatim || C->w[i].verbatim;
    if (level > CG_INFER_VERBATIM && any_verbatim && version) {
        /* version: 2 goes in the manifest, the verbatim ones in a fragment: fine */
    }
    /* the fragments, in the config's order: consecutive sections of a kind together */
    const char **frag_names = cg_xcalloc(nsl + 2, sizeof *frag_names);
    size_t nfrag = 0;
    cg_map kinds;
    cg_map_init(&kinds);
    const char *prev = NULL;
    cg_infer_file *cur = NULL;
    for (size_t i = 0; i < nsl; i++) {
        const char *kind = sl[i].kind;
        bool is_wf = (long)i == wslice;
        if (is_wf && level > CG_INFER_VERBATIM && !any_verbatim)
            continue;
        if (!prev || !cg_streq(prev, kind) || is_wf) {
            cg_strbuf rel = CG_STRBUF_INIT;
            cg_strbuf_addf(&rel, "verbatim-sources/%s", kind);
            char *name = unique_name(C, &kinds, rel.buf);
            cg_strbuf_reset(&rel);
            cg_strbuf_addf(&rel, "%s.yml", name);
            cur = add_file(r, rel.buf);
            frag_names[nfrag++] = pstr(C, rel.buf);
            cg_strbuf_release(&rel);
            prev = kind;
        }
        if (is_wf && level > CG_INFER_VERBATIM) {
            /* the workflows the manifest cannot say, as they are written */
            cg_strbuf_adds(&cur->text, "workflows:\n");
            for (size_t w = 0; w < C->nw; w++)
                if (C->w[w].verbatim) {
                    copy_lines(doc, C->w[w].path, &cur->text);
                    r->nverbatim_workflows++;
                }
            prev = NULL;
            continue;
        }
        cg_strbuf_add(&cur->text, text + sl[i].start, sl[i].end - sl[i].start);
        if (is_wf) {
            /* every workflow, as written */
            const char *k;
            json_t *v;
            json_object_foreach(wfs, k, v)
                r->nverbatim_workflows += json_is_object(v);
            prev = NULL;
        }
    }
    r->nfragments = nfrag;
    cg_map_release(&kinds);
    free(sl);
    /* the trees */
    size_t nfiles_before_trees = r->nfiles;
    for (size_t i = 0; i < C->nw; i++) {
        wplan *W = &C->w[i];
        if (W->verbatim)
            continue;
        read_entries(C, W);
        if (level < CG_INFER_TREES)
            continue;
        group(C, W);
        link_phases(W);
        plan_trees(C, W);
        for (size_t t = 0; t < W->nt; t++)
            plan_tree(C, W, &W->t[t], &C->tree_names);
    }
    r->ncandidates = C->candidate;
    if (level >= CG_INFER_TREES)
        merge_trees(C);
    /* the workflows that take tiers */
    for (size_t i = 0; i < C->nw; i++) {
        cg_strbuf b = CG_STRBUF_INIT;
        identifier(&b, C->w[i].name);
        C->w[i].tier = pstr(C, b.buf);
        cg_strbuf_release(&b);
    }
    for (size_t i = 0; i < C->nw; i++)
        for (size_t t = 0; t < C->w[i].nt; t++) {
            const tplan *T = &C->w[i].t[t];
            if (!T->ok || T->into)
                continue;
            for (size_t x = 0; x < T->nwfs; x++)
                for (size_t c = 0; c < T->ncells; c++) {
                    unsigned char v = T->cell_in[x * T->ncells + c];
                    if (v != 1)
                        ((wplan *)T->wfs[x])->tiered = true;
                    if (v == 2)
                        ((wplan *)T->wfs[x])->gated = true;
                }
        }
    for (size_t i = 0; i < C->nw; i++) {
        wplan *W = &C->w[i];
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            if (!T->ok || T->into)
                continue;
            emit_tree(C, W, T);
            r->ntrees++;
            r->ncells += T->ncells;
            size_t jobs = 0;
            for (size_t x = 0; x < (T->nwfs ? T->nwfs : 1); x++) {
                const tplan *F = T->nwfs ? T->from[x] : T;
                for (size_t y = 0; y < F->nfams * F->ncells; y++)
                    jobs += F->fc[y] >= 0;
            }
            r->ngenerated += jobs;
            /* the summary line */
            cg_strbuf *s = &r->summary;
            cg_strbuf_addf(s, "  tree dimensions/%s.yml (workflow%s ", T->name, T->nwfs > 1 ? "s" : "");
            for (size_t x = 0; x < (T->nwfs ? T->nwfs : 1); x++)
                cg_strbuf_addf(s, "%s%s", x ? ", " : "", T->nwfs ? T->wfs[x]->name : W->name);
            cg_strbuf_addf(s, "): %zu cells, %zu entries", T->ncells, jobs);
            size_t nd = 0;
            for (size_t c = 0; c < T->ncols; c++)
                nd += T->cols[c].dim;
            cg_strbuf_adds(s, nd ? ", dimensions " : ", no dimension");
            bool first = true;
            for (size_t c = 0; c < T->ncols; c++)
                if (T->cols[c].dim) {
                    size_t nv = 0;
                    for (size_t k = 0; k < T->ncells; k++) {
                        bool seen = !T->cols[c].v[k] || !*T->cols[c].v[k];
                        for (size_t q = 0; q < k && !seen; q++)
                            seen = T->cols[c].v[q] && cg_streq(T->cols[c].v[q], T->cols[c].v[k]);
                        nv += !seen;
                    }
                    cg_strbuf_addf(s, "%s%s (%zu)", first ? "" : " x ", T->cols[c].name, nv);
                    first = false;
                }
            cg_strbuf_addf(s, "%s", T->product ? ", a product" : ", one node per cell");
            size_t nv = 0;
            for (size_t c = 0; c < T->ncols; c++)
                nv += !T->cols[c].dim || shadowed(&T->cols[c]);
            if (nv)
                cg_strbuf_addf(s, ", %zu variable%s", nv, nv == 1 ? "" : "s");
            cg_strbuf_adds(s, "; phases");
            for (size_t a = 0; a < T->nfams; a++) {
                size_t have = 0;
                for (size_t c = 0; c < T->ncells; c++)
                    have += T->fc[a * T->ncells + c] >= 0;
                cg_strbuf_addf(s, " %s", W->f[T->fams[a]].phase);
                if (have < T->ncells)
                    cg_strbuf_addf(s, " (%zu cells)", have);
            }
            if (T->phase_major)
                cg_strbuf_adds(s, ", placed phase by phase");
            if (T->gated)
                cg_strbuf_adds(s, ", on_request by tiers");
            cg_strbuf_addc(s, '\n');
        }
        for (size_t t = 0; t < W->nt; t++) {
            tplan *T = &W->t[t];
            if (T->ok && T->into)
                cg_strbuf_addf(&r->summary, "  the %zu entries of workflow %s that run %s: the same jobs as tree "
                               "dimensions/%s.yml, which sends them there\n", W->f[T->root].n, W->name,
                               W->f[T->root].kind, T->into->name);
            if (T->ok)
                continue;
            cg_strbuf_addf(&r->summary, "  not a tree: the %zu entries of workflow %s that run %s: %s\n",
                           W->f[T->root].n, W->name, W->f[T->root].kind, T->why);
        }
    }
    (void)nfiles_before_trees;
    /* the manifest, first of the files */
    cg_infer_file mf = {cg_xstrdup("cigen.yml"), CG_STRBUF_INIT};
    cg_strbuf *o = &mf.text;
    cg_strbuf_adds(o, "# cigen.yml: how ");
    cg_strbuf_add_comment_text(o, output);
    cg_strbuf_adds(o, " is made, imported from ");
    cg_strbuf_add_comment_text(o, source);
    cg_strbuf_adds(o, " by `cigen import`.\n"
                      "# Every path is relative to this file.  Change a source, run `cigen generate`,\n"
                      "# and commit the sources with the config.\n");
    cg_yw w;
    cg_yw_init(&w, o);
    cg_yw_map_begin(&w);
    cg_yw_keys(&w, "output");
    cg_yw_strs(&w, output);
    cg_yw_keys(&w, "regenerate");
    cg_yw_strs(&w, "cigen generate");
    cg_yw_keys(&w, "fragments");
    cg_yw_seq_begin(&w);
    for (size_t i = 0; i < nfrag; i++)
        cg_yw_strs(&w, frag_names[i]);
    cg_yw_end(&w);
    if (r->ntrees) {
        cg_yw_keys(&w, "trees");
        cg_yw_seq_begin(&w);
        for (size_t i = 0; i < C->nw; i++)
            for (size_t t = 0; t < C->w[i].nt; t++)
                if (C->w[i].t[t].ok && !C->w[i].t[t].into) {
                    cg_strbuf rel = CG_STRBUF_INIT;
                    cg_strbuf_addf(&rel, "dimensions/%s.yml", C->w[i].t[t].name);
                    cg_yw_strs(&w, rel.buf);
                    cg_strbuf_release(&rel);
                }
        cg_yw_end(&w);
    }
    bool manifest_wfs = false;
    for (size_t i = 0; i < C->nw; i++)
        manifest_wfs = manifest_wfs || !C->w[i].verbatim;
    if (level > CG_INFER_VERBATIM && manifest_wfs) {
        cg_yw_keys(&w, "workflows");
        cg_yw_map_begin(&w);
        if (version) {
            cg_yw_keys(&w, "version");
            cg_yw_raw(&w, "2", 1);
        }
        for (size_t i = 0; i < C->nw; i++)
            if (!C->w[i].verbatim)
                write_manifest_workflow(C, &w, &C->w[i]);
        cg_yw_end(&w);
    }
    cg_yw_end(&w);
    cg_yw_release(&w);
    /* the manifest goes first */
    cg_grow(&r->files, &r->files_cap, r->nfiles + 1, sizeof *r->files);
    memmove(r->files + 1, r->files, r->nfiles * sizeof *r->files);
    r->files[0] = mf;
    r->nfiles++;
    free(frag_names);
    free_plans(C);
    cg_map_release(&C->tree_names);
    cg_map_release(&C->file_names);
    cg_pool_release(&C->pool);
    return 0;
}
