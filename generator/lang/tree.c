#include "lang/tree.h"
#include "lang/tree_impl.h"

const char *const cg_builtin_names[CG_NBUILTINS] = {
    "job", "phase", "tree", "cell", "workflow", "on_request"};

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
    json_t *phases = json_object_get(root, "phases");
    if (rc == 0 && json_is_object(phases)) {
        const char *k;
        json_t *ph;
        json_object_foreach(phases, k, ph) {
            if (!json_is_object(ph))
                continue;
            PATH(ip, "/phases", k);
            char *pp = cg_xstrdup(ip.buf);
            rc = collect_vars_in(P, pp, ph);
            free(pp);
            if (rc != 0)
                break;
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

int cg_tree_unknown_name(parser *P, const cg_pos *pos, const char *name, const char *what,
                         bool with_builtins)
{
    const char **cands = cg_xmalloc((P->t->nnames + 1) * sizeof *cands);
    size_t n;
    name_candidates(P->t, cands, &n, with_builtins);
    cg_strbuf hint = CG_STRBUF_INIT;
    cg_did_you_mean(&hint, name, cands, n);
    free(cands);
    /* a placeholder's name: say what names there are */
    cg_error_at(P->err, pos, "unknown %s '%s'%s%s", what, name, cg_strbuf_str(&hint),
                cg_streq(what, "name") ? ": not a dimension, variable or built-in of this tree (dimensions are "
                                         "listed under 'dimensions', variables set under 'vars')" : "");
    cg_strbuf_release(&hint);
    return -1;
}

/* Resolves the names of a parsed string.  `allowed` is a bitmask of the
 * built-ins that may appear; dimensions and variables always may. */
int cg_tree_resolve_pstr(parser *P, const char *path, cg_pstr *s, unsigned allowed,
                         const char *context)
{
    for (size_t i = 0; i < s->nsegs; i++) {
        cg_seg *seg = &s->segs[i];
        if (seg->kind != CG_SEG_NAME)
            continue;
        int id = cg_tree_name_id(P->t, seg->text);
        bool unknown = id < 0;
        if (unknown || (id >= (int)P->t->ndims && id < (int)(P->t->ndims + CG_NBUILTINS) &&
                        !(allowed & (1u << (id - (int)P->t->ndims))))) {
            /* found only for the error: it reads the document from its start */
            cg_pos p = cg_scalar_offset_pos(P->doc, path, seg->offset);
            if (unknown)
                return cg_tree_unknown_name(P, &p, seg->text, "name", true);
            return cg_error_at(P->err, &p, "'{{ %s }}' is not available in %s", seg->text, context);
        }
        seg->id = id;
    }
    return 0;
}

/* `replace: {".": ""}` of a derived value: what its substituted values
 * have rewritten, as job_name's `replace` */
static int parse_replace(parser *P, const char *path, json_t *rep, cg_vardecl *out)
{
    if (cg_expect_object(P->doc, path, rep, "'replace'", P->err) != 0)
        return -1;
    if (json_object_size(rep) == 0) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'replace' is empty; give what to rewrite, e.g. {\".\": \"\"}");
    }
    out->replace_from = palloc(P, json_object_size(rep), sizeof *out->replace_from);
    out->replace_to = palloc(P, json_object_size(rep), sizeof *out->replace_to);
    const char *k;
    json_t *to;
    cg_strbuf rp = CG_STRBUF_INIT;
    int rc = 0;
    json_object_foreach(rep, k, to) {
        PATH(rp, path, k);
        if (!*k) {
            cg_pos p = cg_doc_key_where(P->doc, rp.buf);
            rc = cg_error_at(P->err, &p, "cannot replace the empty string");
            break;
        }
        if ((rc = cg_expect_string(P->doc, rp.buf, to, "a replacement", P->err)) != 0)
            break;
        out->replace_from[out->nreplace] = cg_pool_strndup(P->pool, k, strlen(k));
        out->replace_to[out->nreplace++] = pstr(P, to);
    }
    cg_strbuf_release(&rp);
    return rc;
}

static bool is_null(parser *P, const char *path, const json_t *v)
{
    return json_is_null(v) || (json_is_string(v) && cg_doc_is_plain(P->doc, path) &&
                               cg_yaml_resolve(json_string_value(v), json_string_length(v)) == CG_T_NULL);
}

static int parse_string_value(parser *P, const char *path, json_t *v, cg_pstr *out)
{
    const char *raw = pstr(P, v);
    if (cg_pstr_parse_at(P->doc, path, raw, json_string_length(v), P->pool, out, P->err) != 0)
        return -1;
    return cg_tree_resolve_pstr(P, path, out, 1u << CG_B_TREE,
                                "a variable (only 'tree' of the built-in names is)");
}

/* A list value: every item a string (a scalar), none `~`. */
static int parse_list_value(parser *P, const char *path, const char *name, json_t *v, cg_vardecl *out)
{
    out->list = true;
    out->nitems = json_array_size(v);
    out->items = palloc(P, out->nitems, sizeof *out->items);
    out->item_plain = palloc(P, out->nitems, sizeof *out->item_plain);
    cg_strbuf ip = CG_STRBUF_INIT, flow = CG_STRBUF_INIT;
    cg_strbuf_addc(&flow, '[');
    int rc = 0;
    for (size_t i = 0; i < out->nitems && rc == 0; i++) {
        json_t *it = json_array_get(v, i);
        cg_path_join_index(&ip, path, i);
        if (!json_is_string(it) || is_null(P, ip.buf, it)) {
            cg_pos p = cg_doc_where(P->doc, ip.buf);
            rc = cg_error_at(P->err, &p, "an item of list variable '%s' must be a string or number, not %s", name,
                             is_null(P, ip.buf, it) ? "null ('~' unsets a whole variable, not an item)"
                                                     : cg_kind_name(P->doc, ip.buf, it));
            break;
        }
        out->item_plain[i] = cg_doc_is_plain(P->doc, ip.buf);
        rc = parse_string_value(P, ip.buf, it, &out->items[i]);
        if (i)
            cg_strbuf_adds(&flow, ", ");
        cg_strbuf_add(&flow, json_string_value(it), json_string_length(it));
    }
    cg_strbuf_addc(&flow, ']');
    out->raw = cg_pool_strndup(P->pool, flow.buf, flow.len);
    out->len = flow.len;
    cg_strbuf_release(&ip);
    cg_strbuf_release(&flow);
    return rc;
}

int cg_tree_parse_vardecl(parser *P, const char *path, const char *name, json_t *v, cg_vardecl *out)
{
    out->id = cg_tree_name_id(P->t, name);
    out->pos = cg_doc_where(P->doc, path);
    out->path = cg_pool_strndup(P->pool, path, strlen(path));
    if (is_null(P, path, v)) {
        /* `~`: unset here, so an optional key using it is left out (never a null) */
        out->unset = true;
        out->raw = "~";
        out->len = 1;
        return 0;
    }
    if (json_is_object(v)) {
        /* a derived value: {value: "cu{{ cuda }}", replace: {".": ""}} */
        static const char *const keys[] = {"value", "replace"};
        if (cg_check_keys(P->doc, path, v, keys, 2, "in a variable written as a mapping ({value: ..., replace: ...})", P->err) != 0)
            return -1;
        json_t *val = json_object_get(v, "value"), *rep = json_object_get(v, "replace");
        if (!val)
            return cg_error_at(P->err, &out->pos, "variable '%s' is written as a mapping, which needs 'value' (the "
                               "text, e.g. \"cu{{ cuda }}\") and may have 'replace' (what to rewrite in the values "
                               "it substitutes, e.g. {\".\": \"\"})", name);
        cg_strbuf sub = CG_STRBUF_INIT;
        int rc = rep ? parse_replace(P, PATH(sub, path, "replace"), rep, out) : 0;
        if (rc == 0) {
            PATH(sub, path, "value");
            char *vp = cg_xstrdup(sub.buf);
            if (is_null(P, vp, val) || json_is_object(val)) {
                cg_pos p = cg_doc_where(P->doc, vp);
                rc = cg_error_at(P->err, &p, "the 'value' of variable '%s' must be a string or a list of strings, "
                                 "not %s%s", name, cg_kind_name(P->doc, vp, val),
                                 json_is_object(val) ? "" : " (to unset the variable, write ~ as its whole value)");
            } else {
                rc = cg_tree_parse_vardecl(P, vp, name, val, out);
            }
            free(vp);
        }
        cg_strbuf_release(&sub);
        return rc;
    }
    if (json_is_array(v))
        return parse_list_value(P, path, name, v, out);
    if (!json_is_string(v))
        return cg_error_at(P->err, &out->pos, "variable '%s' must be a string or number, a list of them, "
                           "{value: ..., replace: ...} or '~' (unset), not %s", name,
                           cg_kind_name(P->doc, path, v));
    out->raw = pstr(P, v);
    out->len = json_string_length(v);
    out->plain = cg_doc_is_plain(P->doc, path);
    return parse_string_value(P, path, v, &out->text);
}

int cg_tree_parse_vars(parser *P, const char *path, json_t *vars, cg_vardecl **out, size_t *n)
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
        if ((rc = cg_tree_parse_vardecl(P, PATH(vp, path, k), k, v, &(*out)[*n])) != 0)
            break;
        (*n)++;
    }
    cg_strbuf_release(&vp);
    return rc;
}

static int tree_body(parser *P, json_t *root)
{
    cg_tree *t = P->t;
    static const char *const keys[] = {"description", "dimensions", "job_name", "workflows", "vars",
                                       "tree", "exclude", "only", "overrides", "extra", "tiers",
                                       "phases", "paths"};
    if (cg_check_keys(P->doc, "", root, keys, CG_ARRAY_LEN(keys), "at the top of a tree", P->err) != 0)
        return -1;
    json_t *d = json_object_get(root, "description");
    if (d && cg_expect_string(P->doc, "/description", d, "'description'", P->err) != 0)
        return -1;
    if (parse_dimensions(P, root) != 0 || collect_names(P, root) != 0 || cg_tree_parse_tiers(P, root) != 0)
        return -1;
    P->bound_by = cg_xmalloc(t->ndims * sizeof *P->bound_by);
    for (size_t i = 0; i < t->ndims; i++)
        P->bound_by[i] = -1;
    if (cg_tree_parse_job_name(P, root) != 0)
        return -1;
    int *wf = NULL;
    cg_pos *wf_pos = NULL;
    size_t nwf = 0;
    json_t *v = json_object_get(root, "workflows");
    if (v && cg_tree_parse_workflow_list(P, "/workflows", v, &wf, &wf_pos, &nwf) != 0)
        return -1;
    /* the root node carries the top-level vars and filters */
    t->root = cg_tree_new_node(P, NULL, "");
    json_t *tree = json_object_get(root, "tree"), *extra = json_object_get(root, "extra");
    if (!tree && !extra) {
        cg_pos p = cg_doc_where(P->doc, "");
        return cg_error_at(P->err, &p, "the tree has no 'tree' (the nodes that make its cells)");
    }
    size_t nkids = (json_is_array(tree) ? json_array_size(tree) : 0) + (json_is_array(extra) ? json_array_size(extra) : 0);
    t->root->children = palloc(P, nkids, sizeof *t->root->children);
    if (tree && cg_tree_parse_node_list(P, "/tree", tree, t->root, false, "'tree'") != 0)
        return -1;
    if (cg_tree_parse_node_body(P, "", root, t->root) != 0) /* vars, filters, then `extra` */
        return -1;
    if (cg_tree_parse_overrides(P, root) != 0 || cg_tree_parse_tier_bodies(P, root) != 0)
        return -1;
    return cg_tree_parse_phases(P, root, wf, wf_pos, nwf);
}

static const char *tree_name(cg_pool *pool, const char *file)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return cg_internn(pool, base, n);
}

cg_tree *cg_tree_parse(const cg_doc *doc, size_t index, const cg_manifest *m, cg_lists *lists, cg_pool *pool,
                       cg_error *err)
{
    cg_tree *t = cg_xcalloc(1, sizeof *t);
    t->doc = doc;
    t->file = cg_intern(pool, cg_doc_file(doc));
    t->name = tree_name(pool, t->file);
    t->index = index;
    cg_map_init(&t->name_ids);
    parser P = {t, doc, m, pool, err, 0, 0, NULL, lists};
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

size_t cg_tree_cell_paths(const cg_tnode *leaf, const char **out, size_t max)
{
    const cg_tnode *chain[256];
    size_t depth = 0, n = 0;
    for (const cg_tnode *nd = leaf; nd && depth < CG_ARRAY_LEN(chain); nd = nd->parent)
        chain[depth++] = nd;
    while (depth > 0) {
        const cg_tnode *nd = chain[--depth];
        for (size_t i = 0; i < nd->npaths; i++, n++)
            if (n < max)
                out[n] = nd->paths[i];
    }
    return n;
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
