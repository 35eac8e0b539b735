#include "lang/template.h"

#include <stdlib.h>
#include <string.h>

#include "lang/ref_regex.h"
#include "lang/schema.h"

typedef struct compiler {
    const cg_doc *doc;
    const cg_tree *t;
    cg_pool *pool;
    cg_error *err;
} compiler;

/* Resolves the names of `s`, the scalar (or, when is_key, the key) at `path`. */
static int resolve(compiler *C, const char *path, cg_pstr *s, bool is_key)
{
    for (size_t i = 0; i < s->nsegs; i++) {
        cg_seg *seg = &s->segs[i];
        if (seg->kind != CG_SEG_NAME)
            continue;
        seg->id = cg_tree_name_id(C->t, seg->text);
        if (seg->id >= 0)
            continue;
        cg_pos p = is_key ? cg_key_offset_pos(C->doc, path, seg->offset)
                          : cg_scalar_offset_pos(C->doc, path, seg->offset);
        const char **cands = cg_xmalloc((C->t->nnames + 1) * sizeof *cands);
        for (size_t k = 0; k < C->t->nnames; k++)
            cands[k] = C->t->names[k];
        cg_strbuf hint = CG_STRBUF_INIT;
        cg_did_you_mean(&hint, seg->text, cands, C->t->nnames);
        free(cands);
        cg_error_at(C->err, &p, "unknown name '%s'%s: tree '%s' has no dimension or variable of that name",
                    seg->text, cg_strbuf_str(&hint), C->t->name);
        cg_strbuf_release(&hint);
        return -1;
    }
    return 0;
}

/* A constant scalar is formatted once here instead of once per job. */
static void precompute(compiler *C, cg_tpl_node *n, bool is_key)
{
    if (n->text.has_names)
        return;
    cg_strbuf t = CG_STRBUF_INIT;
    for (size_t i = 0; i < n->text.nsegs; i++)
        cg_strbuf_add(&t, n->text.segs[i].text, n->text.segs[i].len);
    n->ctext = cg_pool_strndup(C->pool, t.buf ? t.buf : "", t.len);
    n->ctext_len = t.len;
    n->ctyped = !is_key && n->plain && cg_yaml_resolve(n->ctext, t.len) != CG_T_STR;
    if (n->ctyped) {
        n->cyaml = n->ctext;
        n->cyaml_len = t.len;
    } else if (is_key || !cg_yaml_wants_literal(n->ctext, t.len)) {
        cg_strbuf y = CG_STRBUF_INIT;
        cg_yaml_scalar_text(&y, n->ctext, t.len);
        n->cyaml = cg_pool_strndup(C->pool, y.buf, y.len);
        n->cyaml_len = y.len;
        cg_strbuf_release(&y);
    }
    cg_strbuf_release(&t);
}

static int compile_scalar(compiler *C, const char *path, const char *s, size_t n, cg_tpl_node *out)
{
    out->kind = 'v';
    out->path = cg_pool_strndup(C->pool, path, strlen(path));
    out->plain = cg_doc_is_plain(C->doc, path);
    if (cg_pstr_parse_at(C->doc, path, s, n, C->pool, &out->text, C->err) != 0)
        return -1;
    if (resolve(C, path, &out->text, false) != 0)
        return -1;
    precompute(C, out, false);
    return 0;
}

static int compile(compiler *C, const char *path, json_t *v, cg_tpl_node *out)
{
    memset(out, 0, sizeof *out);
    out->path = cg_pool_strndup(C->pool, path, strlen(path));
    cg_strbuf p = CG_STRBUF_INIT;
    int rc = 0;
    if (json_is_object(v)) {
        out->kind = 'm';
        out->nkids = 2 * json_object_size(v);
        out->kids = cg_pool_alloc(C->pool, (out->nkids + 1) * sizeof *out->kids);
        size_t i = 0;
        const char *k;
        json_t *child;
        json_object_foreach(v, k, child) {
            cg_path_join_key(&p, path, k);
            /* keys: positions are those of the key */
            cg_tpl_node *key = &out->kids[i++];
            memset(key, 0, sizeof *key);
            key->kind = 'v';
            key->path = cg_pool_strndup(C->pool, p.buf, p.len);
            size_t off, klen = strlen(k);
            const char *msg;
            /* `key?:` an optional entry (a key ending in '?' from a {{ "" }} literal is not) */
            if (klen && k[klen - 1] == '?') {
                key->optional = true;
                klen--;
                if (klen == 0) {
                    cg_pos kp = cg_doc_key_where(C->doc, p.buf);
                    rc = cg_error_at(C->err, &kp, "'?' alone is not a key: write the key before it "
                                     "('resource_class?: ...' leaves the key out when its value is unset)");
                    break;
                }
            }
            if (cg_pstr_parse(k, klen, C->pool, &key->text, &off, &msg) != 0) {
                cg_pos kp = cg_key_offset_pos(C->doc, p.buf, off);
                rc = cg_error_at(C->err, &kp, "%s", msg);
                break;
            }
            if ((rc = resolve(C, p.buf, &key->text, true)) != 0)
                break;
            precompute(C, key, true);
            if ((rc = compile(C, p.buf, child, &out->kids[i++])) != 0)
                break;
        }
    } else if (json_is_array(v)) {
        out->kind = 's';
        out->nkids = json_array_size(v);
        out->kids = cg_pool_alloc(C->pool, (out->nkids + 1) * sizeof *out->kids);
        for (size_t i = 0; i < out->nkids && rc == 0; i++) {
            cg_path_join_index(&p, path, i);
            cg_tpl_node *item = &out->kids[i];
            rc = compile(C, p.buf, json_array_get(v, i), item);
            /* `- "{{ name? }}"`: no item at all when unset */
            if (rc == 0 && item->kind == 'v' && item->text.whole && item->text.segs[0].optional)
                item->optional = true;
        }
    } else {
        rc = compile_scalar(C, path, json_string_value(v), json_string_length(v), out);
    }
    cg_strbuf_release(&p);
    return rc;
}

static int check_ref_names(const cg_doc *doc, const char *path, json_t *v, const char *key, bool with_only,
                           cg_error *err);

/* A mapping of exactly the two `keys` (either may be left out), each holding
 * names as check_ref_names() takes them (with `with_only` for the values). */
static int check_ref_map(const cg_doc *doc, const char *path, json_t *v, const char *const keys[2], const char *where,
                         bool with_only, cg_error *err)
{
    /* each key may be optional ('branches?:') */
    char opt[2][16];
    snprintf(opt[0], sizeof opt[0], "%s?", keys[0]);
    snprintf(opt[1], sizeof opt[1], "%s?", keys[1]);
    const char *const allowed[4] = {keys[0], keys[1], opt[0], opt[1]};
    if (cg_check_keys(doc, path, v, allowed, 4, where, err) != 0)
        return -1;
    cg_strbuf kp = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < 4 && rc == 0; i++) {
        json_t *x = json_object_get(v, allowed[i]);
        cg_path_join_key(&kp, path, allowed[i]);
        if (x && i >= 2 && json_object_get(v, keys[i - 2])) {
            cg_pos p = cg_doc_key_where(doc, kp.buf);
            rc = cg_error_at(err, &p, "'%s' and '%s' are both here; keep one", keys[i - 2], allowed[i]);
        } else if (x) {
            rc = check_ref_names(doc, kp.buf, x, keys[i % 2], with_only, err);
        }
    }
    cg_strbuf_release(&kp);
    return rc;
}

/* A name, a list of names, or (when `with_only`) {only: ..., ignore: ...}. */
static int check_ref_names(const cg_doc *doc, const char *path, json_t *v, const char *key, bool with_only,
                           cg_error *err)
{
    if (json_is_string(v))
        return 0;
    if (json_is_array(v)) {
        cg_strbuf ip = CG_STRBUF_INIT;
        int rc = 0;
        for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
            cg_path_join_index(&ip, path, i);
            json_t *e = json_array_get(v, i);
            if (!json_is_string(e)) {
                cg_pos p = cg_doc_where(doc, ip.buf);
                rc = cg_error_at(err, &p, "each entry of '%s' must be a name or a pattern, not %s", key,
                                 cg_kind_name(doc, ip.buf, e));
            }
        }
        cg_strbuf_release(&ip);
        return rc;
    }
    if (json_is_object(v) && with_only) {
        static const char *const keys[] = {"only", "ignore"};
        char where[64];
        snprintf(where, sizeof where, "in '%s'", key);
        return check_ref_map(doc, path, v, keys, where, false, err);
    }
    cg_pos p = cg_doc_where(doc, path);
    return cg_error_at(err, &p, "'%s' must be a name, a list of names%s, not %s", key,
                       with_only ? " or {only, ignore}" : "", cg_kind_name(doc, path, v));
}

/* A template's own `filters:` replace the workflow's: check their shape,
 * since CircleCI only rejects them after the push. */
static int check_filters(const cg_doc *doc, const char *path, json_t *v, cg_error *err)
{
    if (!json_is_object(v)) {
        cg_pos p = cg_doc_where(doc, path);
        return cg_error_at(err, &p, "'filters' must be a mapping with 'branches' or 'tags' (each a list or "
                           "{only, ignore}), not %s", cg_kind_name(doc, path, v));
    }
    static const char *const keys[] = {"branches", "tags"};
    if (check_ref_map(doc, path, v, keys, "in 'filters'", true, err) != 0)
        return -1;
    return cg_ref_filters_check(doc, path, v, true, err);
}

cg_template *cg_template_compile(const cg_doc *doc, const cg_tree *t, cg_pool *pool, cg_error *err)
{
    compiler C = {doc, t, pool, err};
    json_t *root = cg_doc_root(doc);
    cg_pos where = {cg_doc_file(doc), 0, 0};
    if (!root) {
        cg_error_at(err, &where, "the template is empty; it holds one workflow entry, e.g. 'my_job: {param: value}'");
        return NULL;
    }
    if (!json_is_object(root) || json_object_size(root) != 1) {
        where = cg_doc_where(doc, "");
        cg_error_at(err, &where,
                    "a template holds exactly one workflow entry: a mapping with one key, the job to run "
                    "(e.g. 'binary_linux_build: {build_environment: \"{{ build_environment }}\"}')");
        return NULL;
    }
    cg_template *tpl = cg_pool_alloc(pool, sizeof *tpl);
    memset(tpl, 0, sizeof *tpl);
    tpl->file = cg_doc_file(doc);
    tpl->doc = doc;
    tpl->tree = t;
    tpl->name_arg = -1;
    tpl->filters_arg = -1;
    const char *k = NULL;
    json_t *args = NULL;
    json_object_foreach(root, k, args) break;
    cg_strbuf p = CG_STRBUF_INIT;
    cg_path_join_key(&p, "", k);
    tpl->invoke.kind = 'v';
    tpl->invoke.path = cg_pool_strndup(pool, p.buf, p.len);
    size_t off;
    const char *msg;
    int rc = 0;
    if (cg_pstr_parse(k, strlen(k), pool, &tpl->invoke.text, &off, &msg) != 0) {
        cg_pos kp = cg_key_offset_pos(doc, p.buf, off);
        rc = cg_error_at(err, &kp, "%s", msg);
    }
    if (rc == 0)
        rc = resolve(&C, p.buf, &tpl->invoke.text, true);
    if (rc == 0)
        precompute(&C, &tpl->invoke, true);
    if (rc == 0) {
        if (json_is_string(args) && json_string_length(args) == 0 && cg_doc_is_plain(doc, p.buf)) {
            tpl->args.kind = 'm'; /* `job:` with no arguments */
        } else if (!json_is_object(args)) {
            where = cg_doc_where(doc, p.buf);
            rc = cg_error_at(err, &where, "the arguments of '%s' must be a mapping of parameter names to values", k);
        } else {
            rc = compile(&C, p.buf, args, &tpl->args);
        }
    }
    json_t *raw_v = NULL;
    void *it = json_is_object(args) ? json_object_iter(args) : NULL;
    for (size_t i = 0; rc == 0 && i < tpl->args.nkids; i += 2, it = json_object_iter_next(args, it)) {
        raw_v = json_object_iter_value(it);
        const cg_tpl_node *key = &tpl->args.kids[i];
        const char *kt = key->text.nsegs == 1 && key->text.segs[0].kind == CG_SEG_TEXT ? key->text.segs[0].text : "";
        cg_pos kp = cg_doc_key_where(doc, key->path);
        if (cg_streq(kt, "requires"))
            rc = cg_error_at(err, &kp, "'requires' comes from the phase's 'requires' in the tree; remove it from the template");
        else if (cg_streq(kt, "name") && key->optional)
            rc = cg_error_at(err, &kp, "'name' cannot be optional: leave it out (cigen writes the job name), or "
                             "write 'name: ~' for no 'name:' when the job is named like the job it runs");
        else if (cg_streq(kt, "name") && tpl->args.kids[i + 1].kind != 'v') {
            cg_pos vp = cg_doc_where(doc, key->path);
            rc = cg_error_at(err, &vp, "'name' must be a string (write name: \"{{ job }}\" or leave 'name' out), not %s",
                             tpl->args.kids[i + 1].kind == 'm' ? "a mapping" : "a list");
        } else if (cg_streq(kt, "name")) {
            tpl->name_arg = (int)i;
            const cg_tpl_node *v = &tpl->args.kids[i + 1];
            /* `name: ~`: no `name:` line (the job must be named like the job it invokes) */
            tpl->no_name = !v->text.has_names && v->plain && cg_yaml_resolve(v->ctext, v->ctext_len) == CG_T_NULL;
        } else if (cg_streq(kt, "filters")) {
            tpl->has_filters = true;
            tpl->filters_arg = (int)i;
            rc = check_filters(doc, key->path, raw_v, err);
        }
    }
    cg_strbuf_release(&p);
    return rc == 0 ? tpl : NULL;
}

/* A constant key or a whole-placeholder value node, built without a doc. */
static void default_node(compiler *C, cg_tpl_node *n, const char *path, const char *text, bool is_key)
{
    memset(n, 0, sizeof *n);
    n->kind = 'v';
    n->path = path;
    size_t off;
    const char *msg;
    /* a name of the tree always parses: cg_is_name() made sure of it */
    if (cg_pstr_parse(text, strlen(text), C->pool, &n->text, &off, &msg) != 0)
        abort();
    for (size_t i = 0; i < n->text.nsegs; i++)
        if (n->text.segs[i].kind == CG_SEG_NAME)
            n->text.segs[i].id = cg_tree_name_id(C->t, n->text.segs[i].text);
    precompute(C, n, is_key);
}

cg_template *cg_template_default(const cg_tree *t, size_t phase, cg_pool *pool)
{
    compiler C = {t->doc, t, pool, NULL};
    const cg_phase *ph = &t->phases[phase];
    const char *path = ph->template_doc_path;
    cg_template *tpl = cg_pool_alloc(pool, sizeof *tpl);
    memset(tpl, 0, sizeof *tpl);
    tpl->file = t->file;
    tpl->doc = t->doc;
    tpl->tree = t;
    tpl->name_arg = -1;
    tpl->filters_arg = -1;
    tpl->is_default = true;
    default_node(&C, &tpl->invoke, path, ph->name, true);
    /* dimensions, then variables: the names after the built-ins */
    size_t nargs = t->nnames - CG_NBUILTINS;
    tpl->args.kind = 'm';
    tpl->args.path = path;
    tpl->args.nkids = 2 * nargs;
    tpl->args.kids = cg_pool_alloc(pool, (tpl->args.nkids + 1) * sizeof *tpl->args.kids);
    cg_strbuf v = CG_STRBUF_INIT;
    size_t i = 0;
    for (size_t id = 0; id < t->nnames; id++) {
        if (id >= t->ndims && id < t->ndims + CG_NBUILTINS)
            continue;
        cg_strbuf_reset(&v);
        cg_strbuf_addf(&v, "{{ %s }}", t->names[id]);
        cg_tpl_node *key = &tpl->args.kids[i++];
        default_node(&C, key, path, t->names[id], true);
        key->optional = true;
        default_node(&C, &tpl->args.kids[i++], path, v.buf, false);
    }
    cg_strbuf_release(&v);
    return tpl;
}
