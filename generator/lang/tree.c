#include "lang/tree.h"

#include <stdlib.h>
#include <string.h>

#include "lang/schema.h"
#include "lang/yaml_scalar.h"

const char *const cg_builtin_names[CG_NBUILTINS] = {
    "job", "phase", "tree", "cell", "workflow", "on_request"};

static const char *const node_keywords[] = {"vars", "children", "zip", "exclude", "only",
                                            "extra", "tiers"};

typedef struct parser {
    cg_tree *t;
    const cg_doc *doc;
    const cg_manifest *m;
    cg_pool *pool;
    cg_error *err;
    size_t nodes_cap;
    size_t patterns_cap;
    int *bound_by;      /* [ndims]: index of the node binding each dimension on the current path, or -1 */
} parser;

#define PATH(sb, parent, key) (cg_path_join_key(&(sb), (parent), (key)), cg_strbuf_str(&(sb)))

static void *palloc(parser *P, size_t n, size_t size)
{
    void *p = cg_pool_alloc(P->pool, (n ? n : 1) * size);
    memset(p, 0, (n ? n : 1) * size);
    return p;
}

static const char *pstr(parser *P, const json_t *v)
{
    return cg_pool_strndup(P->pool, json_string_value(v), json_string_length(v));
}

int cg_tree_name_id(const cg_tree *t, const char *name)
{
    size_t id = (size_t)cg_map_get(&t->name_ids, name);
    return id ? (int)id - 1 : -1;
}

static int add_name(parser *P, const char *name)
{
    cg_tree *t = P->t;
    int id = cg_tree_name_id(t, name);
    if (id >= 0)
        return id;
    t->names = cg_xrealloc(t->names, (t->nnames + 1) * sizeof *t->names);
    t->names[t->nnames] = cg_intern(P->pool, name);
    cg_map_put(&t->name_ids, t->names[t->nnames], (void *)(t->nnames + 1));
    return (int)t->nnames++;
}

static bool is_reserved(const char *name)
{
    for (size_t i = 0; i < CG_NBUILTINS; i++)
        if (cg_streq(name, cg_builtin_names[i]))
            return true;
    for (size_t i = 0; i < CG_ARRAY_LEN(node_keywords); i++)
        if (cg_streq(name, node_keywords[i]))
            return true;
    return false;
}

/* ---- pass 1: dimensions and every variable name ---- */

static int parse_dimensions(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    json_t *dims = json_object_get(root, "dimensions");
    if (!dims) {
        cg_pos p = cg_doc_where(P->doc, "");
        return cg_error_at(P->err, &p, "the tree has no 'dimensions' (the ordered list of its dimension names)");
    }
    bool empty = json_is_string(dims) && json_string_length(dims) == 0 && cg_doc_is_plain(P->doc, "/dimensions");
    if (!empty && cg_expect_array(P->doc, "/dimensions", dims, "'dimensions'", P->err) != 0)
        return -1;
    if (empty || json_array_size(dims) == 0) {
        cg_pos p = cg_doc_where(P->doc, "/dimensions");
        return cg_error_at(P->err, &p, "'dimensions' is empty; name at least one dimension");
    }
    t->ndims = json_array_size(dims);
    t->dims = palloc(P, t->ndims, sizeof *t->dims);
    t->dim_pos = palloc(P, t->ndims, sizeof *t->dim_pos);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < t->ndims && rc == 0; i++) {
        json_t *d = json_array_get(dims, i);
        cg_path_join_index(&ip, "/dimensions", i);
        if ((rc = cg_expect_name(P->doc, ip.buf, d, "a dimension name", P->err)) != 0)
            break;
        const char *name = json_string_value(d);
        t->dim_pos[i] = cg_doc_where(P->doc, ip.buf);
        if (is_reserved(name)) {
            rc = cg_error_at(P->err, &t->dim_pos[i],
                             "'%s' is a reserved word of the tree language; choose another dimension name", name);
            break;
        }
        if (cg_tree_name_id(t, name) >= 0) {
            rc = cg_error_at(P->err, &t->dim_pos[i], "dimension '%s' is listed twice", name);
            cg_error_note(P->err, &t->dim_pos[cg_tree_name_id(t, name)], "first listed here");
            break;
        }
        int id = add_name(P, name); /* may move t->names */
        t->dims[i] = t->names[id];
    }
    cg_strbuf_release(&ip);
    for (size_t b = 0; b < CG_NBUILTINS && rc == 0; b++)
        add_name(P, cg_builtin_names[b]);
    return rc;
}

static int declare_var(parser *P, const char *path, const char *name)
{
    cg_strbuf kp = CG_STRBUF_INIT;
    cg_pos p = cg_doc_key_where(P->doc, PATH(kp, path, name));
    cg_strbuf_release(&kp);
    if (!cg_is_name(name))
        return cg_error_at(P->err, &p,
                           "variable name '%s' is not a valid name (letters, digits, '_' and '-', "
                           "starting with a letter or '_')", name);
    int id = cg_tree_name_id(P->t, name);
    if (cg_tree_is_dim(P->t, id))
        return cg_error_at(P->err, &p,
                           "'%s' is a dimension; set its values in the tree, not as a variable", name);
    if (is_reserved(name))
        return cg_error_at(P->err, &p, "'%s' is a reserved name; choose another variable name", name);
    add_name(P, name);
    return 0;
}

static int collect_vars_in(parser *P, const char *path, json_t *obj)
{
    json_t *vars = json_object_get(obj, "vars");
    cg_strbuf vp = CG_STRBUF_INIT;
    int rc = 0;
    if (json_is_object(vars)) {
        const char *k;
        json_t *v;
        PATH(vp, path, "vars");
        json_object_foreach(vars, k, v) {
            if ((rc = declare_var(P, vp.buf, k)) != 0)
                break;
        }
    }
    json_t *zip = json_object_get(obj, "zip");
    if (rc == 0 && json_is_object(zip)) {
        const char *k;
        json_t *v;
        PATH(vp, path, "zip");
        json_object_foreach(zip, k, v) {
            int id = cg_tree_name_id(P->t, k);
            if (!cg_tree_is_dim(P->t, id) && (rc = declare_var(P, vp.buf, k)) != 0)
                break;
        }
    }
    cg_strbuf_release(&vp);
    return rc;
}

static int collect_node_vars(parser *P, const char *path, json_t *node, unsigned depth)
{
    if (!json_is_object(node) || depth > 200)
        return 0;
    if (collect_vars_in(P, path, node) != 0)
        return -1;
    static const char *const lists[] = {"children", "extra"};
    cg_strbuf lp = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t l = 0; l < 2 && rc == 0; l++) {
        json_t *kids = json_object_get(node, lists[l]);
        if (!json_is_array(kids))
            continue;
        PATH(lp, path, lists[l]);
        for (size_t i = 0; i < json_array_size(kids) && rc == 0; i++) {
            cg_path_join_index(&ip, lp.buf, i);
            char *child_path = cg_xstrdup(ip.buf);
            rc = collect_node_vars(P, child_path, json_array_get(kids, i), depth + 1);
            free(child_path);
        }
    }
    cg_strbuf_release(&lp);
    cg_strbuf_release(&ip);
    return rc;
}

static int collect_names(parser *P, json_t *root)
{
    if (collect_vars_in(P, "", root) != 0)
        return -1;
    static const char *const lists[] = {"tree", "extra"};
    cg_strbuf ip = CG_STRBUF_INIT, lp = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t l = 0; l < 2 && rc == 0; l++) {
        json_t *nodes = json_object_get(root, lists[l]);
        if (!json_is_array(nodes))
            continue;
        PATH(lp, "", lists[l]);
        for (size_t i = 0; i < json_array_size(nodes) && rc == 0; i++) {
            cg_path_join_index(&ip, lp.buf, i);
            char *np = cg_xstrdup(ip.buf);
            rc = collect_node_vars(P, np, json_array_get(nodes, i), 0);
            free(np);
        }
    }
    json_t *ovs = json_object_get(root, "overrides");
    if (rc == 0 && json_is_array(ovs)) {
        for (size_t i = 0; i < json_array_size(ovs) && rc == 0; i++) {
            cg_path_join_index(&ip, "/overrides", i);
            json_t *o = json_array_get(ovs, i);
            if (json_is_object(o))
                rc = collect_vars_in(P, ip.buf, o);
        }
    }
    cg_strbuf_release(&ip);
    cg_strbuf_release(&lp);
    return rc;
}

/* ---- names inside values ---- */

static void name_candidates(const cg_tree *t, const char **out, size_t *n, bool with_builtins)
{
    *n = 0;
    for (size_t i = 0; i < t->nnames; i++) {
        bool builtin = i >= t->ndims && i < t->ndims + CG_NBUILTINS;
        if (builtin && !with_builtins)
            continue;
        out[(*n)++] = t->names[i];
    }
}

static int unknown_name(parser *P, const cg_pos *pos, const char *name, const char *what,
                        bool with_builtins)
{
    const char **cands = cg_xmalloc((P->t->nnames + 1) * sizeof *cands);
    size_t n;
    name_candidates(P->t, cands, &n, with_builtins);
    cg_strbuf hint = CG_STRBUF_INIT;
    cg_did_you_mean(&hint, name, cands, n);
    free(cands);
    cg_error_at(P->err, pos, "unknown %s '%s'%s", what, name, cg_strbuf_str(&hint));
    cg_strbuf_release(&hint);
    return -1;
}

/* Resolves the names of a parsed string.  `allowed` is a bitmask of the
 * built-ins that may appear; dimensions and variables always may. */
static int resolve_pstr(parser *P, const char *path, cg_pstr *s, unsigned allowed,
                        const char *context)
{
    for (size_t i = 0; i < s->nsegs; i++) {
        cg_seg *seg = &s->segs[i];
        if (seg->kind != CG_SEG_NAME)
            continue;
        int id = cg_tree_name_id(P->t, seg->text);
        cg_pos p = cg_scalar_offset_pos(P->doc, path, seg->offset);
        if (id < 0)
            return unknown_name(P, &p, seg->text, "name", true);
        if (id >= (int)P->t->ndims && id < (int)(P->t->ndims + CG_NBUILTINS) &&
            !(allowed & (1u << (id - (int)P->t->ndims))))
            return cg_error_at(P->err, &p, "'{{ %s }}' is not available in %s", seg->text, context);
        seg->id = id;
    }
    return 0;
}

static int parse_vardecl(parser *P, const char *path, const char *name, json_t *v, cg_vardecl *out)
{
    if (!json_is_string(v)) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "variable '%s' must be a string or number, not %s", name,
                           cg_kind_name(P->doc, path, v));
    }
    out->id = cg_tree_name_id(P->t, name);
    out->raw = pstr(P, v);
    out->len = json_string_length(v);
    out->plain = cg_doc_is_plain(P->doc, path);
    out->pos = cg_doc_where(P->doc, path);
    out->path = cg_pool_strndup(P->pool, path, strlen(path));
    if (cg_pstr_parse_at(P->doc, path, out->raw, out->len, P->pool, &out->text, P->err) != 0)
        return -1;
    return resolve_pstr(P, path, &out->text, 1u << CG_B_TREE,
                        "a variable (only 'tree' of the built-in names is)");
}

static int parse_vars(parser *P, const char *path, json_t *vars, cg_vardecl **out, size_t *n)
{
    *n = 0;
    if (!vars)
        return 0;
    if (cg_expect_object(P->doc, path, vars, "'vars'", P->err) != 0)
        return -1;
    *out = palloc(P, json_object_size(vars), sizeof **out);
    cg_strbuf vp = CG_STRBUF_INIT;
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach(vars, k, v) {
        if ((rc = parse_vardecl(P, PATH(vp, path, k), k, v, &(*out)[*n])) != 0)
            break;
        (*n)++;
    }
    cg_strbuf_release(&vp);
    return rc;
}

/* ---- patterns ---- */

static void describe_value(cg_strbuf *out, const char *s)
{
    if (cg_yaml_plain_safe(s, strlen(s)) && !strchr(s, ','))
        cg_strbuf_adds(out, s);
    else
        cg_yaml_quote(out, s, strlen(s));
}

void cg_pattern_describe(const cg_tree *t, const cg_pattern *p, cg_strbuf *out)
{
    cg_strbuf_addc(out, '{');
    for (size_t i = 0; i < p->nitems; i++) {
        const cg_match *m = &p->items[i];
        if (i)
            cg_strbuf_adds(out, ", ");
        cg_strbuf_adds(out, t->names[m->id]);
        cg_strbuf_adds(out, ": ");
        if (m->absent) {
            cg_strbuf_addc(out, '~');
            continue;
        }
        if (m->nglobs != 1)
            cg_strbuf_addc(out, '[');
        for (size_t g = 0; g < m->nglobs; g++) {
            if (g)
                cg_strbuf_adds(out, ", ");
            cg_strbuf tmp = CG_STRBUF_INIT;
            if (m->globs[g].negate)
                cg_strbuf_addc(&tmp, '!');
            cg_strbuf_adds(&tmp, m->globs[g].text);
            describe_value(out, cg_strbuf_str(&tmp));
            cg_strbuf_release(&tmp);
        }
        if (m->nglobs != 1)
            cg_strbuf_addc(out, ']');
    }
    cg_strbuf_addc(out, '}');
}

static int parse_glob(parser *P, const char *path, json_t *v, cg_glob *g)
{
    if (cg_expect_string(P->doc, path, v, "a pattern value", P->err) != 0)
        return -1;
    const char *s = json_string_value(v);
    g->negate = s[0] == '!';
    g->text = cg_pool_strndup(P->pool, s + g->negate, strlen(s + g->negate));
    return 0;
}

/* `kind` names the pattern in later messages ("exclude pattern {os: linux}");
 * `what`, when set, names the place in a type error ("'when' of an override"). */
static cg_pattern *parse_pattern(parser *P, const char *path, json_t *v, const char *kind, const char *what)
{
    if (!json_is_object(v) || json_object_size(v) == 0) {
        cg_pos p = cg_doc_where(P->doc, path);
        if (json_is_object(v))
            cg_error_at(P->err, &p, "an empty pattern in '%s' would match every cell; name at least one dimension", kind);
        else if (what)
            cg_error_at(P->err, &p, "%s must be a pattern such as {os: linux, cuda: \"cu*\"}, not %s", what,
                        cg_kind_name(P->doc, path, v));
        else
            cg_error_at(P->err, &p, "a pattern in '%s' must be a mapping such as {os: linux, cuda: \"cu*\"}, not %s",
                        kind, cg_kind_name(P->doc, path, v));
        return NULL;
    }
    cg_pattern *pat = palloc(P, 1, sizeof *pat);
    pat->kind = kind;
    pat->pos = cg_doc_where(P->doc, path);
    pat->items = palloc(P, json_object_size(v), sizeof *pat->items);
    cg_strbuf kp = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    const char *k;
    json_t *val;
    json_object_foreach(v, k, val) {
        cg_match *m = &pat->items[pat->nitems];
        PATH(kp, path, k);
        m->pos = cg_doc_key_where(P->doc, kp.buf);
        m->id = cg_tree_name_id(P->t, k);
        if (m->id < 0 || (m->id >= (int)P->t->ndims && m->id < (int)(P->t->ndims + CG_NBUILTINS))) {
            unknown_name(P, &m->pos, k, "dimension or variable", false);
            goto fail;
        }
        if (json_is_array(val)) {
            if (json_array_size(val) == 0) {
                cg_pos p = cg_doc_where(P->doc, kp.buf);
                cg_error_at(P->err, &p, "an empty list matches nothing; give at least one value");
                goto fail;
            }
            m->nglobs = json_array_size(val);
            m->globs = palloc(P, m->nglobs, sizeof *m->globs);
            for (size_t i = 0; i < m->nglobs; i++) {
                cg_path_join_index(&ip, kp.buf, i);
                if (parse_glob(P, ip.buf, json_array_get(val, i), &m->globs[i]) != 0)
                    goto fail;
            }
        } else if (json_is_string(val) && cg_doc_is_plain(P->doc, kp.buf) &&
                   cg_yaml_resolve(json_string_value(val), json_string_length(val)) == CG_T_NULL) {
            m->absent = true;
        } else {
            m->nglobs = 1;
            m->globs = palloc(P, 1, sizeof *m->globs);
            if (parse_glob(P, kp.buf, val, &m->globs[0]) != 0)
                goto fail;
        }
        pat->nitems++;
    }
    cg_strbuf_release(&kp);
    cg_strbuf_release(&ip);
    cg_strbuf desc = CG_STRBUF_INIT;
    cg_pattern_describe(P->t, pat, &desc);
    pat->text = cg_pool_strndup(P->pool, desc.buf, desc.len);
    cg_strbuf_release(&desc);
    cg_tree *t = P->t;
    cg_grow(&t->patterns, &P->patterns_cap, t->npatterns + 1, sizeof *t->patterns);
    t->patterns[t->npatterns++] = pat;
    return pat;
fail:
    cg_strbuf_release(&kp);
    cg_strbuf_release(&ip);
    return NULL;
}

/* A pattern or a list of patterns, under the key `key`. */
static int parse_patterns(parser *P, const char *path, json_t *v, const char *key, const char *kind,
                          cg_pattern ***out, size_t *n)
{
    *n = 0;
    if (!v)
        return 0;
    if (json_is_object(v)) {
        *out = palloc(P, 1, sizeof **out);
        if (!((*out)[0] = parse_pattern(P, path, v, kind, NULL)))
            return -1;
        *n = 1;
        return 0;
    }
    if (!json_is_array(v)) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'%s' must be a pattern or a list of patterns, not %s", key,
                           cg_kind_name(P->doc, path, v));
    }
    *out = palloc(P, json_array_size(v), sizeof **out);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        cg_path_join_index(&ip, path, i);
        if (!((*out)[i] = parse_pattern(P, ip.buf, json_array_get(v, i), kind, NULL))) {
            rc = -1;
            break;
        }
        (*n)++;
    }
    cg_strbuf_release(&ip);
    return rc;
}

/* ---- nodes ---- */

static int tier_index(parser *P, const char *name, const cg_pos *pos)
{
    for (size_t i = 0; i < P->t->ntiers; i++)
        if (cg_streq(P->t->tiers[i].name, name))
            return (int)i;
    const char **cands = cg_xmalloc((P->t->ntiers + 1) * sizeof *cands);
    for (size_t i = 0; i < P->t->ntiers; i++)
        cands[i] = P->t->tiers[i].name;
    cg_strbuf hint = CG_STRBUF_INIT;
    cg_did_you_mean(&hint, name, cands, P->t->ntiers);
    free(cands);
    cg_error_at(P->err, pos, "unknown tier '%s'%s; declare it under 'tiers' at the top of the tree",
                name, cg_strbuf_str(&hint));
    cg_strbuf_release(&hint);
    return -1;
}

static int parse_values(parser *P, const char *path, int dim, json_t *v, cg_fan *fan)
{
    const char *dname = P->t->dims[dim];
    fan->dim = dim;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (json_is_object(v) || (json_is_array(v) && n == 0)) {
        cg_pos p = cg_doc_where(P->doc, path);
        if (json_is_object(v))
            return cg_error_at(P->err, &p, "the value of dimension '%s' must be a string or a list of strings, not a mapping", dname);
        return cg_error_at(P->err, &p, "dimension '%s' has an empty list of values; give at least one", dname);
    }
    fan->n = n;
    fan->values = palloc(P, n, sizeof *fan->values);
    fan->pos = palloc(P, n, sizeof *fan->pos);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        const char *ipath = path;
        if (json_is_array(v)) {
            cg_path_join_index(&ip, path, i);
            ipath = ip.buf;
        }
        char what[200];
        snprintf(what, sizeof what, "a value of dimension '%s'", dname);
        if ((rc = cg_expect_nonempty(P->doc, ipath, item, what, P->err)) != 0)
            break;
        fan->values[i] = cg_intern(P->pool, json_string_value(item));
        fan->pos[i] = cg_doc_where(P->doc, ipath);
        for (size_t j = 0; j < i; j++) {
            if (fan->values[j] == fan->values[i]) {
                rc = cg_error_at(P->err, &fan->pos[i], "value '%s' of dimension '%s' is listed twice",
                                 fan->values[i], dname);
                cg_error_note(P->err, &fan->pos[j], "first listed here");
                break;
            }
        }
    }
    cg_strbuf_release(&ip);
    return rc;
}

static int bind_dim(parser *P, cg_tnode *node, int dim, const cg_pos *pos)
{
    if (P->bound_by[dim] == (int)node->index)
        return cg_error_at(P->err, pos, "dimension '%s' is set twice on this node", P->t->dims[dim]);
    if (P->bound_by[dim] >= 0) {
        cg_tnode *other = P->t->nodes[P->bound_by[dim]];
        cg_error_at(P->err, pos, "dimension '%s' is already set for this branch", P->t->dims[dim]);
        cg_error_note(P->err, &other->pos, "set here, by an enclosing node");
        return -1;
    }
    P->bound_by[dim] = (int)node->index;
    return 0;
}

static int parse_zip(parser *P, const char *path, json_t *v, cg_tnode *node)
{
    if (cg_expect_object(P->doc, path, v, "'zip'", P->err) != 0)
        return -1;
    size_t ncols = json_object_size(v);
    if (ncols < 2) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'zip' needs at least two names that advance together");
    }
    cg_zip *z = palloc(P, 1, sizeof *z);
    z->nnames = ncols;
    z->ids = palloc(P, ncols, sizeof *z->ids);
    z->pos = cg_doc_where(P->doc, path);
    z->order = (int)P->t->ndims;
    cg_strbuf kp = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    const char *k;
    json_t *col;
    size_t c = 0, branches = 0;
    const char *first = NULL;
    int rc = 0;
    json_object_foreach(v, k, col) {
        PATH(kp, path, k);
        z->ids[c] = cg_tree_name_id(P->t, k);
        if (!json_is_array(col) || json_array_size(col) == 0) {
            cg_pos p = cg_doc_where(P->doc, kp.buf);
            rc = cg_error_at(P->err, &p, "'%s' in 'zip' must be a non-empty list", k);
            break;
        }
        if (c == 0) {
            branches = json_array_size(col);
            first = k;
            z->n = branches;
            z->cells = palloc(P, branches * ncols, sizeof *z->cells);
        } else if (json_array_size(col) != branches) {
            cg_pos p = cg_doc_where(P->doc, kp.buf);
            rc = cg_error_at(P->err, &p, "'%s' has %zu value%s but '%s' has %zu; zipped lists advance together and must have the same length",
                             k, json_array_size(col), json_array_size(col) == 1 ? "" : "s", first, branches);
            break;
        }
        if (cg_tree_is_dim(P->t, z->ids[c])) {
            cg_pos p = cg_doc_key_where(P->doc, kp.buf);
            if ((rc = bind_dim(P, node, z->ids[c], &p)) != 0)
                break;
            if (z->ids[c] < z->order)
                z->order = z->ids[c];
        }
        for (size_t b = 0; b < branches && rc == 0; b++) {
            cg_path_join_index(&ip, kp.buf, b);
            json_t *item = json_array_get(col, b);
            cg_vardecl *cell = &z->cells[b * ncols + c];
            if (cg_tree_is_dim(P->t, z->ids[c])) {
                char what[200];
                snprintf(what, sizeof what, "a value of dimension '%s'", k);
                if ((rc = cg_expect_nonempty(P->doc, ip.buf, item, what, P->err)) != 0)
                    break;
                cell->id = z->ids[c];
                cell->raw = cg_intern(P->pool, json_string_value(item));
                cell->len = json_string_length(item);
                cell->pos = cg_doc_where(P->doc, ip.buf);
            } else {
                rc = parse_vardecl(P, ip.buf, k, item, cell);
            }
        }
        c++;
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&kp);
    cg_strbuf_release(&ip);
    node->zip = z;
    return rc;
}

static int fan_cmp(const void *a, const void *b)
{
    const cg_fan *x = a, *y = b;
    return (x->dim > y->dim) - (x->dim < y->dim);
}

static cg_tnode *new_node(parser *P, cg_tnode *parent, const char *path)
{
    cg_tree *t = P->t;
    cg_tnode *n = palloc(P, 1, sizeof *n);
    n->index = (uint32_t)t->nnodes;
    n->parent = parent;
    n->depth = parent ? parent->depth + 1 : 0;
    n->path = cg_pool_strndup(P->pool, path, strlen(path));
    n->pos = cg_doc_where(P->doc, path);
    cg_grow(&t->nodes, &P->nodes_cap, t->nnodes + 1, sizeof *t->nodes);
    t->nodes[t->nnodes++] = n;
    return n;
}

static int parse_node_list(parser *P, const char *path, json_t *v, cg_tnode *parent,
                           bool extra, const char *what);

static int parse_node_body(parser *P, const char *path, json_t *obj, cg_tnode *node)
{
    cg_strbuf kp = CG_STRBUF_INIT;
    int rc = 0;
    json_t *v;
    if ((v = json_object_get(obj, "vars")))
        rc = parse_vars(P, PATH(kp, path, "vars"), v, &node->vars, &node->nvars);
    if (rc == 0 && (v = json_object_get(obj, "exclude")))
        rc = parse_patterns(P, PATH(kp, path, "exclude"), v, "exclude", "exclude", &node->exclude, &node->nexclude);
    if (rc == 0 && (v = json_object_get(obj, "only")))
        rc = parse_patterns(P, PATH(kp, path, "only"), v, "only", "only", &node->only, &node->nonly);
    if (rc == 0 && (v = json_object_get(obj, "tiers")) && node->parent) {
        PATH(kp, path, "tiers");
        size_t n = json_is_array(v) ? json_array_size(v) : 1;
        if (!json_is_array(v) && !json_is_string(v)) {
            cg_pos p = cg_doc_where(P->doc, kp.buf);
            rc = cg_error_at(P->err, &p, "'tiers' of a node must be a tier name or a list of tier names");
        }
        node->tiers = palloc(P, n, sizeof *node->tiers);
        cg_strbuf ip = CG_STRBUF_INIT;
        for (size_t i = 0; i < n && rc == 0; i++) {
            json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
            cg_path_join_index(&ip, kp.buf, i);
            const char *ipath = json_is_array(v) ? ip.buf : kp.buf;
            if ((rc = cg_expect_nonempty(P->doc, ipath, item, "a tier name", P->err)) != 0)
                break;
            cg_pos p = cg_doc_where(P->doc, ipath);
            int ti = tier_index(P, json_string_value(item), &p);
            if (ti < 0)
                rc = -1;
            else
                node->tiers[node->ntiers++] = ti;
        }
        cg_strbuf_release(&ip);
    }
    /* children first, then extras; the caller sized node->children */
    json_t *kids = node->parent ? json_object_get(obj, "children") : NULL;
    json_t *extras = json_object_get(obj, "extra");
    if (rc == 0 && kids)
        rc = parse_node_list(P, PATH(kp, path, "children"), kids, node, node->extra, "'children'");
    if (rc == 0 && extras)
        rc = parse_node_list(P, PATH(kp, path, "extra"), extras, node, true, "'extra'");
    cg_strbuf_release(&kp);
    return rc;
}

static int parse_node(parser *P, const char *path, json_t *obj, cg_tnode *parent, bool extra)
{
    cg_tree *t = P->t;
    if (!json_is_object(obj)) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p,
                           "a tree node must be a mapping of dimensions to values (e.g. {os: linux}), not %s",
                           cg_kind_name(P->doc, path, obj));
    }
    cg_tnode *node = new_node(P, parent, path);
    node->extra = extra;
    parent->children[parent->nchildren++] = node;
    json_t *kids = json_object_get(obj, "children"), *extras = json_object_get(obj, "extra");
    node->children = palloc(P, (json_is_array(kids) ? json_array_size(kids) : 0) +
                                   (json_is_array(extras) ? json_array_size(extras) : 0),
                            sizeof *node->children);
    /* keys: dimensions and keywords */
    const char *k;
    json_t *v;
    size_t nfans = 0;
    json_object_foreach(obj, k, v) {
        int id = cg_tree_name_id(t, k);
        bool kw = false;
        for (size_t i = 0; i < CG_ARRAY_LEN(node_keywords); i++)
            kw = kw || cg_streq(k, node_keywords[i]);
        if (cg_tree_is_dim(t, id)) {
            nfans++;
            continue;
        }
        if (kw)
            continue;
        const char **cands = cg_xmalloc((t->ndims + CG_ARRAY_LEN(node_keywords)) * sizeof *cands);
        for (size_t i = 0; i < t->ndims; i++)
            cands[i] = t->dims[i];
        for (size_t i = 0; i < CG_ARRAY_LEN(node_keywords); i++)
            cands[t->ndims + i] = node_keywords[i];
        cg_strbuf hint = CG_STRBUF_INIT;
        cg_did_you_mean(&hint, k, cands, t->ndims + CG_ARRAY_LEN(node_keywords));
        free(cands);
        cg_pos p = cg_key_pos(P->doc, path, k);
        cg_error_at(P->err, &p, "unknown dimension '%s'%s; this tree's dimensions are listed under 'dimensions'",
                    k, cg_strbuf_str(&hint));
        cg_strbuf_release(&hint);
        return -1;
    }
    /* remember the bindings of the enclosing nodes, to restore them after */
    int *saved = cg_xmalloc(t->ndims * sizeof *saved);
    memcpy(saved, P->bound_by, t->ndims * sizeof *saved);
    node->fans = palloc(P, nfans, sizeof *node->fans);
    cg_strbuf kp = CG_STRBUF_INIT;
    int rc = 0;
    json_object_foreach(obj, k, v) {
        int id = cg_tree_name_id(t, k);
        if (!cg_tree_is_dim(t, id))
            continue;
        cg_pos p = cg_key_pos(P->doc, path, k);
        if ((rc = bind_dim(P, node, id, &p)) != 0 ||
            (rc = parse_values(P, PATH(kp, path, k), id, v, &node->fans[node->nfans])) != 0)
            break;
        node->nfans++;
    }
    qsort(node->fans, node->nfans, sizeof *node->fans, fan_cmp);
    if (rc == 0 && (v = json_object_get(obj, "zip")))
        rc = parse_zip(P, PATH(kp, path, "zip"), v, node);
    if (rc == 0)
        rc = parse_node_body(P, path, obj, node);
    cg_strbuf_release(&kp);
    memcpy(P->bound_by, saved, t->ndims * sizeof *saved);
    free(saved);
    return rc;
}

static int parse_node_list(parser *P, const char *path, json_t *v, cg_tnode *parent,
                           bool extra, const char *what)
{
    if (cg_expect_array(P->doc, path, v, what, P->err) != 0)
        return -1;
    if (json_array_size(v) == 0) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "%s is an empty list; remove it or add a node", what);
    }
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
        cg_path_join_index(&ip, path, i);
        char *np = cg_xstrdup(ip.buf);
        rc = parse_node(P, np, json_array_get(v, i), parent, extra);
        free(np);
    }
    cg_strbuf_release(&ip);
    return rc;
}

/* ---- top level ---- */

static int parse_job_name(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    json_t *v = json_object_get(root, "job_name");
    const char *ppath = "/job_name";
    json_t *pattern = v;
    if (json_is_array(v)) {
        cg_pos p = cg_doc_where(P->doc, ppath);
        return cg_error_at(P->err, &p, "'job_name' must be a pattern (a string) or a mapping with 'pattern', not a list");
    }
    if (json_is_object(v)) {
        static const char *const keys[] = {"pattern", "replace"};
        if (cg_check_keys(P->doc, "/job_name", v, keys, 2, "in 'job_name'", P->err) != 0)
            return -1;
        pattern = json_object_get(v, "pattern");
        ppath = "/job_name/pattern";
        json_t *rep = json_object_get(v, "replace");
        if (rep) {
            if (cg_expect_object(P->doc, "/job_name/replace", rep, "'replace'", P->err) != 0)
                return -1;
            t->replace_from = palloc(P, json_object_size(rep), sizeof *t->replace_from);
            t->replace_to = palloc(P, json_object_size(rep), sizeof *t->replace_to);
            const char *k;
            json_t *to;
            cg_strbuf rp = CG_STRBUF_INIT;
            json_object_foreach(rep, k, to) {
                PATH(rp, "/job_name/replace", k);
                if (!*k) {
                    cg_pos p = cg_doc_key_where(P->doc, rp.buf);
                    cg_strbuf_release(&rp);
                    return cg_error_at(P->err, &p, "cannot replace the empty string");
                }
                if (cg_expect_string(P->doc, rp.buf, to, "a replacement", P->err) != 0) {
                    cg_strbuf_release(&rp);
                    return -1;
                }
                t->replace_from[t->nreplace] = cg_pool_strndup(P->pool, k, strlen(k));
                t->replace_to[t->nreplace++] = pstr(P, to);
            }
            cg_strbuf_release(&rp);
        }
        if (!pattern) {
            cg_pos p = cg_doc_where(P->doc, "/job_name");
            return cg_error_at(P->err, &p, "'job_name' needs a 'pattern'");
        }
    }
    if (!pattern) {
        /* default: the dimensions, then the phase, joined by '_' */
        cg_strbuf def = CG_STRBUF_INIT;
        for (size_t i = 0; i < t->ndims; i++)
            cg_strbuf_addf(&def, "%s{{ %s }}", i ? "_" : "", t->dims[i]);
        cg_strbuf_adds(&def, "_{{ phase }}");
        t->job_name_raw = cg_pool_strndup(P->pool, def.buf, def.len);
        cg_strbuf_release(&def);
        t->job_name_src = (cg_src){NULL, NULL, cg_doc_where(P->doc, "")};
        size_t off;
        const char *msg;
        cg_pstr_parse(t->job_name_raw, strlen(t->job_name_raw), P->pool, &t->job_name, &off, &msg);
        return resolve_pstr(P, "", &t->job_name, (1u << CG_B_PHASE) | (1u << CG_B_TREE), "a job name");
    }
    if (cg_expect_nonempty(P->doc, ppath, pattern, "the job name pattern", P->err) != 0)
        return -1;
    t->job_name_raw = pstr(P, pattern);
    t->job_name_src = (cg_src){P->doc, cg_intern(P->pool, ppath), cg_doc_where(P->doc, ppath)};
    if (cg_pstr_parse_at(P->doc, ppath, t->job_name_raw, strlen(t->job_name_raw), P->pool,
                         &t->job_name, P->err) != 0)
        return -1;
    return resolve_pstr(P, ppath, &t->job_name, (1u << CG_B_PHASE) | (1u << CG_B_TREE),
                        "a job name (dimensions, variables, 'phase' and 'tree' are)");
}

static int workflow_index(parser *P, const char *name, const cg_pos *pos)
{
    for (size_t i = 0; i < P->m->nworkflows; i++)
        if (cg_streq(P->m->workflows[i].name, name))
            return (int)i;
    const char **cands = cg_xmalloc((P->m->nworkflows + 1) * sizeof *cands);
    for (size_t i = 0; i < P->m->nworkflows; i++)
        cands[i] = P->m->workflows[i].name;
    cg_strbuf hint = CG_STRBUF_INIT;
    cg_did_you_mean(&hint, name, cands, P->m->nworkflows);
    free(cands);
    cg_error_at(P->err, pos, "unknown workflow '%s'%s; workflows are declared in the manifest",
                name, cg_strbuf_str(&hint));
    cg_strbuf_release(&hint);
    return -1;
}

static int parse_workflow_list(parser *P, const char *path, json_t *v, int **out, cg_pos **pos,
                               size_t *n)
{
    size_t count = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v)) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'workflows' must be a workflow name or a list of names, not %s",
                           cg_kind_name(P->doc, path, v));
    }
    *out = palloc(P, count, sizeof **out);
    *pos = palloc(P, count, sizeof **pos);
    *n = 0;
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        cg_path_join_index(&ip, path, i);
        const char *ipath = json_is_array(v) ? ip.buf : path;
        if ((rc = cg_expect_nonempty(P->doc, ipath, item, "a workflow name", P->err)) != 0)
            break;
        (*pos)[i] = cg_doc_where(P->doc, ipath);
        int w = workflow_index(P, json_string_value(item), &(*pos)[i]);
        if (w < 0) {
            rc = -1;
            break;
        }
        for (size_t j = 0; j < *n; j++)
            if ((*out)[j] == w) {
                rc = cg_error_at(P->err, &(*pos)[i], "workflow '%s' is listed twice", json_string_value(item));
                break;
            }
        (*out)[(*n)++] = w;
    }
    cg_strbuf_release(&ip);
    return rc;
}

static int parse_tiers(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    json_t *v = json_object_get(root, "tiers");
    if (!v)
        return 0;
    if (cg_expect_object(P->doc, "/tiers", v, "'tiers'", P->err) != 0)
        return -1;
    t->tiers = palloc(P, json_object_size(v), sizeof *t->tiers);
    const char *k;
    json_t *def;
    cg_strbuf tp = CG_STRBUF_INIT;
    int rc = 0;
    /* names first, so node-level `tiers:` can refer to any of them */
    json_object_foreach(v, k, def) {
        cg_tier *tier = &t->tiers[t->ntiers];
        PATH(tp, "/tiers", k);
        tier->pos = cg_doc_key_where(P->doc, tp.buf);
        if (!cg_is_name(k)) {
            rc = cg_error_at(P->err, &tier->pos, "tier name '%s' is not a valid name", k);
            break;
        }
        tier->name = cg_intern(P->pool, k);
        t->ntiers++;
    }
    cg_strbuf_release(&tp);
    return rc;
}

static int parse_tier_bodies(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    json_t *v = json_object_get(root, "tiers");
    cg_strbuf tp = CG_STRBUF_INIT, sp = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < t->ntiers && rc == 0; i++) {
        cg_tier *tier = &t->tiers[i];
        json_t *def = json_object_get(v, tier->name);
        PATH(tp, "/tiers", tier->name);
        if (json_is_string(def) && cg_streq(json_string_value(def), "all")) {
            tier->kind = CG_TIER_ALL;
            continue;
        }
        if (json_is_string(def) && json_string_length(def) == 0 && cg_doc_is_plain(P->doc, tp.buf)) {
            tier->kind = CG_TIER_CELLS; /* declared, filled by node-level `tiers:` */
            continue;
        }
        if (!json_is_object(def)) {
            cg_pos p = cg_doc_where(P->doc, tp.buf);
            rc = cg_error_at(P->err, &p,
                             "tier '%s' must be 'all', or a mapping with 'cells' or 'pairwise'", tier->name);
            break;
        }
        static const char *const keys[] = {"cells", "pairwise", "pin", "cost"};
        char where[160];
        snprintf(where, sizeof where, "in tier '%s'", tier->name);
        if ((rc = cg_check_keys(P->doc, tp.buf, def, keys, CG_ARRAY_LEN(keys), where, P->err)) != 0)
            break;
        json_t *cells = json_object_get(def, "cells"), *pw = json_object_get(def, "pairwise");
        if (cells && pw) {
            cg_pos p = cg_key_pos(P->doc, tp.buf, "pairwise");
            rc = cg_error_at(P->err, &p, "a tier is either an explicit list ('cells') or 'pairwise', not both");
            break;
        }
        if (cells) {
            tier->kind = CG_TIER_CELLS;
            rc = parse_patterns(P, PATH(sp, tp.buf, "cells"), cells, "cells", "tier", &tier->cells, &tier->ncells);
            continue;
        }
        if (!pw) {
            cg_pos p = cg_doc_where(P->doc, tp.buf);
            rc = cg_error_at(P->err, &p, "tier '%s' needs 'cells' (an explicit list) or 'pairwise' (dimensions to cover)",
                             tier->name);
            break;
        }
        tier->kind = CG_TIER_PAIRWISE;
        PATH(sp, tp.buf, "pairwise");
        if ((rc = cg_expect_array(P->doc, sp.buf, pw, "'pairwise'", P->err)) != 0)
            break;
        if (json_array_size(pw) < 2) {
            cg_pos p = cg_doc_where(P->doc, sp.buf);
            rc = cg_error_at(P->err, &p, "'pairwise' needs at least two dimensions to pair");
            break;
        }
        tier->ndims = json_array_size(pw);
        tier->dims = palloc(P, tier->ndims, sizeof *tier->dims);
        cg_strbuf ip = CG_STRBUF_INIT;
        for (size_t d = 0; d < tier->ndims && rc == 0; d++) {
            cg_path_join_index(&ip, sp.buf, d);
            json_t *name = json_array_get(pw, d);
            if ((rc = cg_expect_string(P->doc, ip.buf, name, "a dimension name", P->err)) != 0)
                break;
            int id = cg_tree_name_id(t, json_string_value(name));
            cg_pos p = cg_doc_where(P->doc, ip.buf);
            if (!cg_tree_is_dim(t, id)) {
                const char **cands = t->dims;
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, json_string_value(name), cands, t->ndims);
                rc = cg_error_at(P->err, &p, "unknown dimension '%s' in 'pairwise'%s", json_string_value(name),
                                 cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                break;
            }
            for (size_t e = 0; e < d; e++)
                if (tier->dims[e] == id)
                    rc = cg_error_at(P->err, &p, "dimension '%s' is listed twice in 'pairwise'", t->dims[id]);
            tier->dims[d] = id;
        }
        cg_strbuf_release(&ip);
        json_t *pin = json_object_get(def, "pin");
        if (rc == 0 && pin)
            rc = parse_patterns(P, PATH(sp, tp.buf, "pin"), pin, "pin", "tier", &tier->cells, &tier->ncells);
        json_t *cost = json_object_get(def, "cost");
        if (rc == 0 && cost) {
            PATH(sp, tp.buf, "cost");
            if ((rc = cg_expect_array(P->doc, sp.buf, cost, "'cost'", P->err)) != 0)
                break;
            tier->ncosts = json_array_size(cost);
            tier->costs = palloc(P, tier->ncosts, sizeof *tier->costs);
            tier->cost_values = palloc(P, tier->ncosts, sizeof *tier->cost_values);
            cg_strbuf cp = CG_STRBUF_INIT, kp2 = CG_STRBUF_INIT;
            for (size_t c = 0; c < tier->ncosts && rc == 0; c++) {
                cg_path_join_index(&cp, sp.buf, c);
                json_t *rule = json_array_get(cost, c);
                static const char *const ckeys[] = {"when", "cost"};
                if ((rc = cg_expect_object(P->doc, cp.buf, rule, "a cost rule", P->err)) != 0 ||
                    (rc = cg_check_keys(P->doc, cp.buf, rule, ckeys, 2, "in a cost rule", P->err)) != 0)
                    break;
                json_t *when = json_object_get(rule, "when"), *w = json_object_get(rule, "cost");
                if (!when || !w) {
                    cg_pos p = cg_doc_where(P->doc, cp.buf);
                    rc = cg_error_at(P->err, &p, "a cost rule needs 'when' (a pattern) and 'cost' (a number)");
                    break;
                }
                if (!(tier->costs[c] = parse_pattern(P, PATH(kp2, cp.buf, "when"), when, "cost", "'when' of a cost"))) {
                    rc = -1;
                    break;
                }
                const char *s = json_is_string(w) ? json_string_value(w) : "";
                char *end;
                double val = strtod(s, &end); /* "C" locale: we never call setlocale */
                if (!*s || *end || !(val > 0) || val > 1e9) {
                    cg_pos p = cg_doc_where(P->doc, PATH(kp2, cp.buf, "cost"));
                    rc = cg_error_at(P->err, &p, "'cost' must be a positive number");
                    break;
                }
                tier->cost_values[c] = val;
            }
            cg_strbuf_release(&cp);
            cg_strbuf_release(&kp2);
        }
    }
    cg_strbuf_release(&tp);
    cg_strbuf_release(&sp);
    return rc;
}

static int parse_overrides(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    json_t *v = json_object_get(root, "overrides");
    if (!v)
        return 0;
    if (cg_expect_array(P->doc, "/overrides", v, "'overrides'", P->err) != 0)
        return -1;
    t->overrides = palloc(P, json_array_size(v), sizeof *t->overrides);
    cg_strbuf op = CG_STRBUF_INIT, kp = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
        cg_override *o = &t->overrides[i];
        json_t *item = json_array_get(v, i);
        cg_path_join_index(&op, "/overrides", i);
        static const char *const keys[] = {"when", "vars"};
        if ((rc = cg_expect_object(P->doc, op.buf, item, "an override", P->err)) != 0 ||
            (rc = cg_check_keys(P->doc, op.buf, item, keys, 2, "in an override", P->err)) != 0)
            break;
        o->pos = cg_doc_where(P->doc, op.buf);
        json_t *when = json_object_get(item, "when"), *vars = json_object_get(item, "vars");
        if (!when || !vars) {
            rc = cg_error_at(P->err, &o->pos, "an override needs 'when' (a pattern) and 'vars' (what to set)");
            break;
        }
        if (!(o->when = parse_pattern(P, PATH(kp, op.buf, "when"), when, "override", "'when' of an override"))) {
            rc = -1;
            break;
        }
        rc = parse_vars(P, PATH(kp, op.buf, "vars"), vars, &o->vars, &o->nvars);
        t->noverrides++;
    }
    cg_strbuf_release(&op);
    cg_strbuf_release(&kp);
    return rc;
}

static int check_phase_cycles(parser *P)
{
    cg_tree *t = P->t;
    /* depth-first search with colours; phases are few */
    int *colour = cg_xcalloc(t->nphases, sizeof *colour);
    int *stack = cg_xmalloc((t->nphases + 1) * sizeof *stack);
    int rc = 0;
    for (size_t s = 0; s < t->nphases && rc == 0; s++) {
        if (colour[s])
            continue;
        /* iterative DFS keeping the path for the message */
        size_t *next = cg_xcalloc(t->nphases, sizeof *next);
        size_t depth = 0;
        stack[depth++] = (int)s;
        colour[s] = 1;
        while (depth && rc == 0) {
            int u = stack[depth - 1];
            cg_phase *ph = &t->phases[u];
            if (next[u] < ph->nrequires) {
                size_t r = next[u]++;
                int w = ph->requires_phase[r];
                if (w < 0)
                    continue;
                if (colour[w] == 1) {
                    cg_strbuf cyc = CG_STRBUF_INIT;
                    size_t from = 0;
                    while (stack[from] != w)
                        from++;
                    for (size_t i = from; i < depth; i++)
                        cg_strbuf_addf(&cyc, "%s -> ", t->phases[stack[i]].name);
                    cg_strbuf_adds(&cyc, t->phases[w].name);
                    rc = cg_error_at(P->err, &ph->requires_pos[r], "the phases' requires form a cycle: %s",
                                     cyc.buf);
                    cg_strbuf_release(&cyc);
                    break;
                }
                if (colour[w] == 0) {
                    colour[w] = 1;
                    stack[depth++] = w;
                }
            } else {
                colour[u] = 2;
                depth--;
            }
        }
        free(next);
    }
    free(colour);
    free(stack);
    return rc;
}

static int parse_phases(parser *P, json_t *root, int *tree_wf, cg_pos *tree_wf_pos, size_t ntree_wf)
{
    cg_tree *t = P->t;
    json_t *v = json_object_get(root, "phases");
    if (!v) {
        cg_pos p = cg_doc_where(P->doc, "");
        return cg_error_at(P->err, &p, "the tree has no 'phases' (each cell's jobs, e.g. build: {template: ...})");
    }
    if (cg_expect_object(P->doc, "/phases", v, "'phases'", P->err) != 0)
        return -1;
    if (json_object_size(v) == 0) {
        cg_pos p = cg_doc_where(P->doc, "/phases");
        return cg_error_at(P->err, &p, "'phases' is empty; declare at least one phase");
    }
    if (json_object_size(v) > CG_MAX_PHASES) {
        cg_pos p = cg_doc_where(P->doc, "/phases");
        return cg_error_at(P->err, &p, "a tree can declare at most %d phases, not %zu", CG_MAX_PHASES,
                           json_object_size(v));
    }
    t->phases = palloc(P, json_object_size(v), sizeof *t->phases);
    const char *k;
    json_t *def;
    cg_strbuf pp = CG_STRBUF_INIT, kp = CG_STRBUF_INIT, ip = CG_STRBUF_INIT;
    int rc = 0;
    json_object_foreach(v, k, def) {
        cg_phase *ph = &t->phases[t->nphases++];
        PATH(pp, "/phases", k);
        ph->pos = cg_doc_key_where(P->doc, pp.buf);
        if (!cg_is_name(k)) {
            rc = cg_error_at(P->err, &ph->pos, "phase name '%s' is not a valid name", k);
            break;
        }
        ph->name = cg_intern(P->pool, k);
        static const char *const keys[] = {"template", "job_name", "requires", "skip", "workflows"};
        char where[160];
        snprintf(where, sizeof where, "in phase '%s'", k);
        if (json_is_string(def) && json_string_length(def) == 0 && cg_doc_is_plain(P->doc, pp.buf)) {
            cg_pos p = cg_doc_where(P->doc, pp.buf);
            rc = cg_error_at(P->err, &p, "phase '%s' is empty; it needs at least 'template'", k);
            break;
        }
        if ((rc = cg_expect_object(P->doc, pp.buf, def, "a phase", P->err)) != 0 ||
            (rc = cg_check_keys(P->doc, pp.buf, def, keys, CG_ARRAY_LEN(keys), where, P->err)) != 0)
            break;
        json_t *tpl = json_object_get(def, "template");
        if (!tpl) {
            cg_pos p = cg_doc_where(P->doc, pp.buf);
            rc = cg_error_at(P->err, &p, "phase '%s' has no 'template'", k);
            break;
        }
        PATH(kp, pp.buf, "template");
        if ((rc = cg_expect_nonempty(P->doc, kp.buf, tpl, "'template'", P->err)) != 0)
            break;
        ph->template_raw = pstr(P, tpl);
        ph->template_pos = cg_doc_where(P->doc, kp.buf);
        ph->template_doc_path = cg_pool_strndup(P->pool, kp.buf, kp.len);
        if ((rc = cg_pstr_parse_at(P->doc, kp.buf, ph->template_raw, strlen(ph->template_raw), P->pool,
                                   &ph->template_path, P->err)) != 0 ||
            (rc = resolve_pstr(P, kp.buf, &ph->template_path, (1u << CG_B_PHASE) | (1u << CG_B_TREE),
                               "a template path")) != 0)
            break;
        json_t *jn = json_object_get(def, "job_name");
        if (jn) {
            PATH(kp, pp.buf, "job_name");
            if ((rc = cg_expect_nonempty(P->doc, kp.buf, jn, "'job_name'", P->err)) != 0)
                break;
            ph->job_name_src = (cg_src){P->doc, cg_intern(P->pool, kp.buf), cg_doc_where(P->doc, kp.buf)};
            if ((rc = cg_pstr_parse_at(P->doc, kp.buf, json_string_value(jn), json_string_length(jn), P->pool,
                                       &ph->job_name, P->err)) != 0 ||
                (rc = resolve_pstr(P, kp.buf, &ph->job_name, (1u << CG_B_PHASE) | (1u << CG_B_TREE),
                                   "a job name (dimensions, variables, 'phase' and 'tree' are)")) != 0)
                break;
        }
        json_t *req = json_object_get(def, "requires");
        if (req) {
            PATH(kp, pp.buf, "requires");
            if (json_is_string(req)) {
                cg_pos p = cg_doc_where(P->doc, kp.buf);
                rc = cg_error_at(P->err, &p, "'requires' must be a list, e.g. [build]");
                break;
            }
            if ((rc = cg_expect_array(P->doc, kp.buf, req, "'requires'", P->err)) != 0)
                break;
            ph->nrequires = json_array_size(req);
            ph->requires = palloc(P, ph->nrequires, sizeof *ph->requires);
            ph->requires_pos = palloc(P, ph->nrequires, sizeof *ph->requires_pos);
            ph->requires_phase = palloc(P, ph->nrequires, sizeof *ph->requires_phase);
            for (size_t i = 0; i < ph->nrequires && rc == 0; i++) {
                cg_path_join_index(&ip, kp.buf, i);
                rc = cg_expect_nonempty(P->doc, ip.buf, json_array_get(req, i), "a required job or phase", P->err);
                if (rc == 0) {
                    ph->requires[i] = cg_intern(P->pool, json_string_value(json_array_get(req, i)));
                    ph->requires_pos[i] = cg_doc_where(P->doc, ip.buf);
                }
            }
            if (rc != 0)
                break;
        }
        json_t *skip = json_object_get(def, "skip");
        if (skip && (rc = parse_patterns(P, PATH(kp, pp.buf, "skip"), skip, "skip", "skip", &ph->skip, &ph->nskip)) != 0)
            break;
        json_t *wfs = json_object_get(def, "workflows");
        if (wfs) {
            if ((rc = parse_workflow_list(P, PATH(kp, pp.buf, "workflows"), wfs, &ph->workflows,
                                          &ph->workflow_pos, &ph->nworkflows)) != 0)
                break;
        } else if (ntree_wf) {
            ph->workflows = tree_wf;
            ph->workflow_pos = tree_wf_pos;
            ph->nworkflows = ntree_wf;
        } else {
            rc = cg_error_at(P->err, &ph->pos,
                             "phase '%s' lands in no workflow; add 'workflows' to the tree or the phase", k);
            break;
        }
    }
    /* requires: a phase of the same cell, or an external job */
    for (size_t i = 0; i < t->nphases && rc == 0; i++) {
        cg_phase *ph = &t->phases[i];
        for (size_t r = 0; r < ph->nrequires; r++) {
            ph->requires_phase[r] = -1;
            for (size_t j = 0; j < t->nphases; j++)
                if (t->phases[j].name == ph->requires[r])
                    ph->requires_phase[r] = (int)j;
            for (size_t q = 0; q < r; q++)
                if (ph->requires[q] == ph->requires[r])
                    rc = cg_error_at(P->err, &ph->requires_pos[r], "'%s' is required twice", ph->requires[r]);
        }
    }
    if (rc == 0)
        rc = check_phase_cycles(P);
    cg_strbuf_release(&pp);
    cg_strbuf_release(&kp);
    cg_strbuf_release(&ip);
    return rc;
}

static int tree_body(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    static const char *const keys[] = {"description", "dimensions", "job_name", "workflows", "vars",
                                       "tree", "exclude", "only", "overrides", "extra", "tiers",
                                       "phases"};
    if (cg_check_keys(P->doc, "", root, keys, CG_ARRAY_LEN(keys), "at the top of a tree", P->err) != 0)
        return -1;
    json_t *d = json_object_get(root, "description");
    if (d && cg_expect_string(P->doc, "/description", d, "'description'", P->err) != 0)
        return -1;
    if (parse_dimensions(P, root) != 0 || collect_names(P, root) != 0 || parse_tiers(P, root) != 0)
        return -1;
    P->bound_by = cg_xmalloc(t->ndims * sizeof *P->bound_by);
    for (size_t i = 0; i < t->ndims; i++)
        P->bound_by[i] = -1;
    if (parse_job_name(P, root) != 0)
        return -1;
    int *wf = NULL;
    cg_pos *wf_pos = NULL;
    size_t nwf = 0;
    json_t *v = json_object_get(root, "workflows");
    if (v && parse_workflow_list(P, "/workflows", v, &wf, &wf_pos, &nwf) != 0)
        return -1;
    /* the root node carries the top-level vars and filters */
    t->root = new_node(P, NULL, "");
    json_t *tree = json_object_get(root, "tree"), *extra = json_object_get(root, "extra");
    if (!tree && !extra) {
        cg_pos p = cg_doc_where(P->doc, "");
        return cg_error_at(P->err, &p, "the tree has no 'tree' (the nodes that make its cells)");
    }
    size_t nkids = (json_is_array(tree) ? json_array_size(tree) : 0) + (json_is_array(extra) ? json_array_size(extra) : 0);
    t->root->children = palloc(P, nkids, sizeof *t->root->children);
    if (tree && parse_node_list(P, "/tree", tree, t->root, false, "'tree'") != 0)
        return -1;
    if (parse_node_body(P, "", root, t->root) != 0) /* vars, filters, then `extra` */
        return -1;
    if (parse_overrides(P, root) != 0 || parse_tier_bodies(P, root) != 0)
        return -1;
    return parse_phases(P, root, wf, wf_pos, nwf);
}

static const char *tree_name(cg_pool *pool, const char *file)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return cg_internn(pool, base, n);
}

cg_tree *cg_tree_parse(const cg_doc *doc, size_t index, const cg_manifest *m, cg_pool *pool,
                       cg_error *err)
{
    cg_tree *t = cg_xcalloc(1, sizeof *t);
    t->doc = doc;
    t->file = cg_intern(pool, cg_doc_file(doc));
    t->name = tree_name(pool, t->file);
    t->index = index;
    cg_map_init(&t->name_ids);
    parser P = {t, doc, m, pool, err, 0, 0, NULL};
    json_t *root = cg_doc_root(doc);
    int rc;
    if (!root)
        rc = cg_error_at(err, &(cg_pos){t->file, 0, 0}, "the tree file is empty; a tree needs 'dimensions', 'tree' "
                         "and 'phases' (see docs/tree-language.md)");
    else if (cg_expect_object(doc, "", root, "a tree file", err) != 0)
        rc = -1;
    else
        rc = tree_body(&P, root);
    free(P.bound_by);
    if (rc != 0) {
        cg_tree_free(t);
        return NULL;
    }
    return t;
}

void cg_tree_free(cg_tree *t)
{
    if (!t)
        return;
    cg_map_release(&t->name_ids);
    free(t->names);
    free(t->nodes);
    free(t->patterns);
    free(t);
}
