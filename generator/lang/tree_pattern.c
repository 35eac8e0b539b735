/* tree_pattern — cell patterns ({os: linux, python: "3.*"}) in a tree. */
#include "lang/tree.h"
#include "lang/tree_impl.h"

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

static int parse_glob(parser *P, const char *path, json_t *v, const cg_match *m, cg_glob *g)
{
    if (cg_expect_string(P->doc, path, v, "a pattern value", P->err) != 0)
        return -1;
    const char *s = json_string_value(v);
    g->negate = s[0] == '!';
    g->text = cg_pool_strndup(P->pool, s + g->negate, strlen(s + g->negate));
    if (g->text[0] != '@')
        return 0;
    if (cg_streq(g->text, "@first"))
        g->kind = CG_GLOB_FIRST;
    else if (cg_streq(g->text, "@last"))
        g->kind = CG_GLOB_LAST;
    else {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'%s' is not a position; write '@first' or '@last' (the first or last "
                           "value of the list that sets it), or quote a glob such as '[@]x'", g->text);
    }
    if (!cg_tree_is_dim(P->t, m->id)) {
        cg_pos p = cg_doc_where(P->doc, path);
        return cg_error_at(P->err, &p, "'%s' needs a dimension, and '%s' is a variable (a variable has no "
                           "list of values)", g->text, P->t->names[m->id]);
    }
    return 0;
}

/* `kind` names the pattern in later messages ("exclude pattern {os: linux}");
 * `what`, when set, names the place in a type error ("'when' of an override"). */
cg_pattern *cg_tree_parse_pattern(parser *P, const char *path, json_t *v, const char *kind, const char *what)
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
        /* an override may name the phase of the job: its variables then
         * depend on the phase (`when: {phase: test_multigpu}`) */
        bool phase = m->id == cg_tree_builtin(P->t, CG_B_PHASE) && cg_streq(kind, "override");
        if (!phase && (m->id < 0 || (m->id >= (int)P->t->ndims && m->id < (int)(P->t->ndims + CG_NBUILTINS)))) {
            if (m->id == cg_tree_builtin(P->t, CG_B_PHASE)) {
                cg_error_at(P->err, &m->pos, "only the 'when' of an override may name 'phase' (a cell's filters, "
                            "tiers and a phase's 'skip' and 'only' look at the cell, before it has a phase)");
                goto fail;
            }
            cg_tree_unknown_name(P, &m->pos, k, "dimension or variable", false);
            goto fail;
        }
        if (phase) {
            pat->names_phase = true;
            P->t->phase_vars = true;
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
                if (parse_glob(P, ip.buf, json_array_get(val, i), m, &m->globs[i]) != 0)
                    goto fail;
            }
        } else if (json_is_string(val) && cg_doc_is_plain(P->doc, kp.buf) &&
                   cg_yaml_resolve(json_string_value(val), json_string_length(val)) == CG_T_NULL) {
            m->absent = true;
        } else {
            m->nglobs = 1;
            m->globs = palloc(P, 1, sizeof *m->globs);
            if (parse_glob(P, kp.buf, val, m, &m->globs[0]) != 0)
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
int cg_tree_parse_patterns(parser *P, const char *path, json_t *v, const char *key, const char *kind,
                           cg_pattern ***out, size_t *n)
{
    *n = 0;
    if (!v)
        return 0;
    if (json_is_object(v)) {
        *out = palloc(P, 1, sizeof **out);
        if (!((*out)[0] = cg_tree_parse_pattern(P, path, v, kind, NULL)))
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
        if (!((*out)[i] = cg_tree_parse_pattern(P, ip.buf, json_array_get(v, i), kind, NULL))) {
            rc = -1;
            break;
        }
        (*n)++;
    }
    cg_strbuf_release(&ip);
    return rc;
}
