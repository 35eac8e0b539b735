/* tree_node — the nodes of a tree: dimensions and values, zips, vars,
 * filters, children. */
#include "lang/tree.h"
#include "lang/tree_impl.h"

#include "base/text.h"

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

/* `{list: NAME}`: a shared list of the manifest's list files. */
static int list_ref(parser *P, const char *path, json_t *v, const cg_list **out)
{
    static const char *const keys[] = {"list"};
    if (cg_check_keys(P->doc, path, v, keys, 1, "in a list reference ({list: NAME})", P->err) != 0)
        return -1;
    cg_strbuf kp = CG_STRBUF_INIT;
    PATH(kp, path, "list");
    json_t *name = json_object_get(v, "list");
    int rc = cg_expect_nonempty(P->doc, kp.buf, name, "a list name", P->err);
    cg_pos p = cg_doc_where(P->doc, kp.buf);
    cg_strbuf_release(&kp);
    if (rc != 0)
        return -1;
    cg_list *list = P->lists ? cg_lists_find(P->lists, json_string_value(name)) : NULL;
    if (!list) {
        size_t n = P->lists ? P->lists->n : 0;
        const char **cands = cg_xmalloc((n + 1) * sizeof *cands);
        for (size_t i = 0; i < n; i++)
            cands[i] = P->lists->v[i].name;
        cg_strbuf hint = CG_STRBUF_INIT;
        cg_did_you_mean(&hint, json_string_value(name), cands, n);
        free(cands);
        cg_error_at(P->err, &p, "unknown list '%s'%s; lists are declared in the files the manifest names "
                    "under 'lists'", json_string_value(name), cg_strbuf_str(&hint));
        cg_strbuf_release(&hint);
        return -1;
    }
    list->uses++;
    *out = list;
    return 0;
}

/* The values of a dimension as written at `path`: a value, a list of values,
 * `{list: NAME}`, or a list mixing values and `{list: NAME}` (spliced in
 * place).  Values are interned, each with its position (in the list file
 * for a shared list's).  Duplicates are an error unless `dups` (a zip's
 * column may repeat a value). */
int cg_tree_dim_values(parser *P, const char *path, int dim, json_t *v, bool dups, const char ***values,
                       cg_pos **pos, size_t *n)
{
    const char *dname = P->t->dims[dim];
    *n = 0;
    size_t count = 0;
    size_t items = json_is_array(v) ? json_array_size(v) : 1;
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    if (json_is_array(v) && items == 0) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "dimension '%s' has an empty list of values; give at least one", dname);
    }
    /* pass 1: count, resolving the shared lists */
    const cg_list **refs = cg_xcalloc(items, sizeof *refs);
    for (size_t i = 0; i < items && rc == 0; i++) {
        json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        const char *ipath = path;
        if (json_is_array(v)) {
            cg_path_join_index(&ip, path, i);
            ipath = ip.buf;
        }
        if (json_is_object(item)) {
            if (json_object_get(item, "list") == NULL) {
                cg_pos p = cg_doc_where(P->doc, ipath);
                rc = cg_error_at(P->err, &p, "%s of dimension '%s' must be a string%s or {list: NAME} (a shared "
                                 "list), not a mapping", json_is_array(v) ? "a value" : "the value", dname,
                                 json_is_array(v) ? "" : ", a list of strings");
                break;
            }
            if ((rc = list_ref(P, ipath, item, &refs[i])) == 0)
                count += refs[i]->n;
        } else {
            count++;
        }
    }
    if (rc == 0) {
        *values = palloc(P, count, sizeof **values);
        *pos = palloc(P, count, sizeof **pos);
    }
    char what[200];
    snprintf(what, sizeof what, "a value of dimension '%s'", dname);
    for (size_t i = 0; i < items && rc == 0; i++) {
        json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        const char *ipath = path;
        if (json_is_array(v)) {
            cg_path_join_index(&ip, path, i);
            ipath = ip.buf;
        }
        size_t from = *n;
        if (refs[i]) {
            for (size_t k = 0; k < refs[i]->n; k++) {
                (*values)[*n] = refs[i]->values[k];
                (*pos)[(*n)++] = refs[i]->value_pos[k];
            }
        } else {
            if ((rc = cg_expect_nonempty(P->doc, ipath, item, what, P->err)) != 0)
                break;
            (*values)[*n] = cg_intern(P->pool, json_string_value(item));
            (*pos)[(*n)++] = cg_doc_where(P->doc, ipath);
        }
        /* a value is part of the job names made from it (and of config.yml's
         * header): one line of printable UTF-8, no tab */
        for (size_t a = from; a < *n && rc == 0; a++) {
            const char *why = cg_name_breaker((*values)[a]);
            bool param = !why && strstr((*values)[a], "<<");
            if (!why && !param)
                continue;
            cg_strbuf shown = CG_STRBUF_INIT;
            cg_add_tabs_shown(&shown, (*values)[a]);
            /* `<< ... >>` is CircleCI's: it would replace it when it compiles
             * the config, and the job would not be named what cigen wrote */
            if (param)
                rc = cg_error_at(P->err, &(*pos)[a], "value '%s' of dimension '%s' holds '<<'; job names are made "
                                 "from it, and CircleCI reads '<< ... >>' as a parameter when it compiles the "
                                 "config, so a job would not be named what cigen wrote", shown.buf, dname);
            else
                rc = cg_error_at(P->err, &(*pos)[a], "value '%s' of dimension '%s' holds %s; job names are made "
                                 "from it, and a job name is one line of printable text", shown.buf, dname, why);
            if (refs[i]) {
                cg_pos here = cg_doc_where(P->doc, ipath);
                cg_error_note(P->err, &here, "list '%s' gives dimension '%s' its values here", refs[i]->name,
                              dname);
            }
            cg_strbuf_release(&shown);
        }
        for (size_t a = from; a < *n && rc == 0 && !dups; a++)
            for (size_t j = 0; j < a; j++)
                if ((*values)[j] == (*values)[a]) {
                    cg_pos here = refs[i] ? cg_doc_where(P->doc, ipath) : (*pos)[a];
                    rc = cg_error_at(P->err, &here, "value '%s' of dimension '%s' is listed twice", (*values)[a],
                                     dname);
                    if (refs[i])
                        cg_error_note(P->err, &(*pos)[a], "list '%s' holds it", refs[i]->name);
                    cg_error_note(P->err, &(*pos)[j], "first listed here");
                    break;
                }
    }
    free(refs);
    cg_strbuf_release(&ip);
    return rc;
}

static int parse_values(parser *P, const char *path, int dim, json_t *v, cg_fan *fan)
{
    fan->dim = dim;
    return cg_tree_dim_values(P, path, dim, v, false, &fan->values, &fan->pos, &fan->n);
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

/* A variable's column of a zip: a list of values and `{list: NAME}` (spliced
 * in place), or `{list: NAME}` alone.  It is data, not a dimension: a value
 * may repeat (two Pythons pinned to one numpy).  A shared list's values are
 * text as written in the list file (no placeholders), at their position
 * there.  Returns the number of values in *len, or -1. */
static int var_column(parser *P, const char *path, const char *name, json_t *col, cg_vardecl **out, size_t *len)
{
    size_t items = json_is_array(col) ? json_array_size(col) : 1;
    const cg_list **refs = cg_xcalloc(items, sizeof *refs);
    cg_strbuf ip = CG_STRBUF_INIT;
    size_t count = 0;
    int rc = 0;
    for (size_t i = 0; i < items && rc == 0; i++) {
        json_t *item = json_is_array(col) ? json_array_get(col, i) : col;
        if (json_is_object(item) && json_object_get(item, "list")) {
            const char *ipath = path;
            if (json_is_array(col)) {
                cg_path_join_index(&ip, path, i);
                ipath = ip.buf;
            }
            if ((rc = list_ref(P, ipath, item, &refs[i])) == 0)
                count += refs[i]->n;
        } else {
            count++;
        }
    }
    if (rc == 0) {
        *out = palloc(P, count, sizeof **out);
        *len = count;
    }
    size_t n = 0;
    for (size_t i = 0; i < items && rc == 0; i++) {
        if (refs[i]) {
            for (size_t k = 0; k < refs[i]->n; k++) {
                cg_vardecl *d = &(*out)[n++];
                const char *val = refs[i]->values[k];
                d->id = cg_tree_name_id(P->t, name);
                d->raw = val;
                d->len = strlen(val);
                d->plain = false;       /* text, as a dimension's value */
                d->pos = refs[i]->value_pos[k];
                d->path = NULL;         /* not in the tree's doc: errors at pos */
                d->text.segs = palloc(P, 1, sizeof *d->text.segs);
                d->text.segs[0] = (cg_seg){.kind = CG_SEG_TEXT, .text = val, .len = d->len, .id = -1};
                d->text.nsegs = 1;
            }
        } else {
            const char *ipath = path;
            if (json_is_array(col)) {
                cg_path_join_index(&ip, path, i);
                ipath = ip.buf;
            }
            rc = cg_tree_parse_vardecl(P, ipath, name, json_is_array(col) ? json_array_get(col, i) : col,
                                       &(*out)[n++]);
        }
    }
    free(refs);
    cg_strbuf_release(&ip);
    return rc;
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
    const char ***dvals = palloc(P, ncols, sizeof *dvals); /* a dimension's values (shared lists spliced) */
    cg_pos **dpos = palloc(P, ncols, sizeof *dpos);
    cg_strbuf kp = CG_STRBUF_INIT;
    const char *k;
    json_t *col;
    size_t c = 0, branches = 0;
    const char *first = NULL;
    int rc = 0;
    json_object_foreach(v, k, col) {
        PATH(kp, path, k);
        z->ids[c] = cg_tree_name_id(P->t, k);
        bool dim = cg_tree_is_dim(P->t, z->ids[c]);
        size_t len = json_is_array(col) ? json_array_size(col) : 0;
        const cg_vardecl *vcol = NULL;  /* a variable's column */
        if (json_is_object(col) && json_object_get(col, "list")) {
            /* {list: NAME}: a shared list as the column */
        } else if (!json_is_array(col) || len == 0) {
            cg_pos p = cg_doc_where(P->doc, kp.buf);
            rc = cg_error_at(P->err, &p, "'%s' in 'zip' must be a non-empty list or {list: NAME}", k);
            break;
        }
        if (dim && (rc = cg_tree_dim_values(P, kp.buf, z->ids[c], col, true, &dvals[c], &dpos[c], &len)) != 0)
            break;
        if (!dim) {
            cg_vardecl *vals = NULL;
            if ((rc = var_column(P, kp.buf, k, col, &vals, &len)) != 0)
                break;
            vcol = vals;
        }
        if (c == 0) {
            branches = len;
            first = k;
            z->n = branches;
            z->cells = palloc(P, branches * ncols, sizeof *z->cells);
        } else if (len != branches) {
            cg_pos p = cg_doc_where(P->doc, kp.buf);
            rc = cg_error_at(P->err, &p, "'%s' has %zu value%s but '%s' has %zu; zipped lists advance together and must have the same length",
                             k, len, len == 1 ? "" : "s", first, branches);
            break;
        }
        if (dim) {
            cg_pos p = cg_doc_key_where(P->doc, kp.buf);
            if ((rc = bind_dim(P, node, z->ids[c], &p)) != 0)
                break;
            if (z->ids[c] < z->order)
                z->order = z->ids[c];
        }
        for (size_t b = 0; b < branches && rc == 0; b++) {
            cg_vardecl *cell = &z->cells[b * ncols + c];
            if (dim) {
                cell->id = z->ids[c];
                cell->raw = dvals[c][b];
                cell->len = strlen(dvals[c][b]);
                cell->pos = dpos[c][b];
            } else {
                *cell = vcol[b];
            }
        }
        c++;
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&kp);
    node->zip = z;
    return rc;
}

static int fan_cmp(const void *a, const void *b)
{
    const cg_fan *x = a, *y = b;
    return (x->dim > y->dim) - (x->dim < y->dim);
}

cg_tnode *cg_tree_new_node(parser *P, cg_tnode *parent, const char *path)
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

/* `paths: [vision/models, setup.py]`: the files the jobs of the node's
 * cells depend on (a glob, from the repository's root, '*' crossing '/', as
 * the manifest's `pipeline: paths` rules read them); a node's cells depend
 * on the paths of every node above them too. */
static int parse_paths(parser *P, const char *path, json_t *v, cg_tnode *node)
{
    if (!json_is_array(v) && !json_is_string(v)) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'paths' must be a glob or a list of globs of changed files (e.g. "
                           "[\"src/vision/*\", setup.py]), not %s", cg_kind_name(P->doc, path, v));
    }
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (n == 0) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'paths' is empty; give at least one glob, or leave 'paths' out");
    }
    node->paths = palloc(P, n, sizeof *node->paths);
    node->paths_text = palloc(P, n, sizeof *node->paths_text);
    node->paths_pos = palloc(P, n, sizeof *node->paths_pos);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        cg_path_join_index(&ip, path, i);
        const char *ipath = json_is_array(v) ? ip.buf : path;
        if ((rc = cg_expect_nonempty(P->doc, ipath, item, "a glob of changed files", P->err)) != 0)
            break;
        const char *g = json_string_value(item);
        cg_pos p = cg_doc_where(P->doc, ipath);
        if (g[0] == '/' || (g[0] == '.' && g[1] == '/')) {
            rc = cg_error_at(P->err, &p, "path glob '%s' must be written from the repository's root without a "
                             "leading '%s' (changed files are named 'src/a.c')", g, g[0] == '/' ? "/" : "./");
            break;
        }
        for (size_t k = 0; k < node->npaths && rc == 0; k++)
            if (cg_streq(node->paths[k], g)) {
                rc = cg_error_at(P->err, &p, "path glob '%s' is listed twice", g);
                cg_error_note(P->err, &node->paths_pos[k], "first listed here");
            }
        cg_pstr *txt = &node->paths_text[node->npaths];
        if ((rc = cg_pstr_parse_at(P->doc, ipath, g, strlen(g), P->pool, txt, P->err)) != 0 ||
            (rc = cg_tree_resolve_pstr(P, ipath, txt, 0, "a path glob")) != 0)
            break;
        for (size_t k = 0; k < txt->nsegs && rc == 0; k++)
            if (txt->segs[k].kind == CG_SEG_NAME && !cg_tree_is_dim(P->t, txt->segs[k].id)) {
                cg_pos sp = cg_scalar_offset_pos(P->doc, ipath, txt->segs[k].offset);
                rc = cg_error_at(P->err, &sp, "a path glob may name the cell's dimensions only, and '%s' is a "
                                 "variable", txt->segs[k].text);
            }
        if (rc != 0)
            break;
        node->paths[node->npaths] = pstr(P, item);
        node->paths_pos[node->npaths++] = p;
    }
    cg_strbuf_release(&ip);
    if (rc == 0)
        P->t->has_paths = true;
    return rc;
}

int cg_tree_parse_node_body(parser *P, const char *path, json_t *obj, cg_tnode *node)
{
    cg_strbuf kp = CG_STRBUF_INIT;
    int rc = 0;
    json_t *v;
    if ((v = json_object_get(obj, "vars")))
        rc = cg_tree_parse_vars(P, PATH(kp, path, "vars"), v, &node->vars, &node->nvars);
    if (rc == 0 && (v = json_object_get(obj, "exclude")))
        rc = cg_tree_parse_patterns(P, PATH(kp, path, "exclude"), v, "exclude", "exclude", &node->exclude,
            &node->nexclude);
    if (rc == 0 && (v = json_object_get(obj, "only")))
        rc = cg_tree_parse_patterns(P, PATH(kp, path, "only"), v, "only", "only", &node->only, &node->nonly);
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
    if (rc == 0 && (v = json_object_get(obj, "paths")))
        rc = parse_paths(P, PATH(kp, path, "paths"), v, node);
    /* children first, then extras; the caller sized node->children */
    json_t *kids = node->parent ? json_object_get(obj, "children") : NULL;
    json_t *extras = json_object_get(obj, "extra");
    if (rc == 0 && kids)
        rc = cg_tree_parse_node_list(P, PATH(kp, path, "children"), kids, node, node->extra, "'children'");
    if (rc == 0 && extras)
        rc = cg_tree_parse_node_list(P, PATH(kp, path, "extra"), extras, node, true, "'extra'");
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
    cg_tnode *node = cg_tree_new_node(P, parent, path);
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
        rc = cg_tree_parse_node_body(P, path, obj, node);
    cg_strbuf_release(&kp);
    memcpy(P->bound_by, saved, t->ndims * sizeof *saved);
    free(saved);
    return rc;
}

int cg_tree_parse_node_list(parser *P, const char *path, json_t *v, cg_tnode *parent,
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
