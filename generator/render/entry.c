/* Rendering one generated workflow entry from its compiled template. */
#include "render/entry.h"

#include <stdlib.h>
#include <string.h>


static int expand(cg_env *env, const cg_tpl_node *n, const cg_template *tpl, cg_strbuf *out, bool *typed)
{
    cg_strbuf_reset(out);
    *typed = false;
    if (!n->text.has_names) {
        for (size_t i = 0; i < n->text.nsegs; i++)
            cg_strbuf_add(out, n->text.segs[i].text, n->text.segs[i].len);
        *typed = n->plain && cg_yaml_resolve(cg_strbuf_str(out), out->len) != CG_T_STR;
        return 0;
    }
    cg_src src = {tpl->doc, n->path, {0}}; /* the position is looked up only for an error */
    if (cg_env_expand(env, &n->text, CG_EXPAND_PLAIN, NULL, out, &src, "the template") != 0)
        return -1;
    if (n->text.whole) {
        const char *v;
        size_t len;
        bool ty;
        if (cg_env_get(env, n->text.segs[0].id, &v, &len, &ty) == 1)
            *typed = ty;
    }
    return 0;
}

/* Writes key node n; *text is its text (in tmp, or the node's constant). */
static int write_key(cg_env *env, const cg_tpl_node *n, const cg_template *tpl, cg_yw *w, cg_strbuf *tmp,
                     const char **text)
{
    if (n->cyaml) {
        cg_yw_key_text(w, n->cyaml, n->cyaml_len);
        *text = n->ctext;
        return 0;
    }
    bool typed;
    if (expand(env, n, tpl, tmp, &typed) != 0)
        return -1;
    cg_yw_key(w, tmp->buf ? tmp->buf : "", tmp->len);
    *text = cg_strbuf_str(tmp);
    return 0;
}

/* Writes scalar node n; *text, *len and *typed say what was written. */
static int write_scalar(cg_env *env, const cg_tpl_node *n, const cg_template *tpl, cg_yw *w, cg_strbuf *tmp,
                        const char **text, size_t *len, bool *typed)
{
    if (!n->text.has_names) {
        *text = n->ctext;
        *len = n->ctext_len;
        *typed = n->ctyped;
        if (n->cyaml)
            cg_yw_raw(w, n->cyaml, n->cyaml_len);
        else
            cg_yw_str(w, n->ctext, n->ctext_len);
        return 0;
    }
    if (expand(env, n, tpl, tmp, typed) != 0)
        return -1;
    if (*typed)
        cg_yw_raw(w, tmp->buf ? tmp->buf : "", tmp->len);
    else
        cg_yw_str(w, tmp->buf ? tmp->buf : "", tmp->len);
    *text = cg_strbuf_str(tmp);
    *len = tmp->len;
    return 0;
}

/* For lint: a constant key's node identifies it (its text is the node's). */
static const void *key_id(const cg_tpl_node *key)
{
    return key->cyaml ? key : NULL;
}

static int render_node(cg_env *env, const cg_tpl_node *n, const cg_template *tpl, cg_yw *w,
                       cg_strbuf *tmp)
{
    if (n->kind == 'm') {
        cg_yw_map_begin(w);
        for (size_t i = 0; i < n->nkids; i += 2) {
            const char *key;
            if (write_key(env, &n->kids[i], tpl, w, tmp, &key) != 0 ||
                render_node(env, &n->kids[i + 1], tpl, w, tmp) != 0)
                return -1;
        }
        cg_yw_end(w);
    } else if (n->kind == 's') {
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < n->nkids; i++)
            if (render_node(env, &n->kids[i], tpl, w, tmp) != 0)
                return -1;
        cg_yw_end(w);
    } else {
        const char *text;
        size_t len;
        bool typed;
        if (write_scalar(env, n, tpl, w, tmp, &text, &len, &typed) != 0)
            return -1;
    }
    return 0;
}

static void write_ref_filter(cg_yw *w, const char *key, const cg_ref_filter *f)
{
    cg_yw_keys(w, key);
    cg_yw_map_begin(w);
    if (f->nonly) {
        cg_yw_keys(w, "only");
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < f->nonly; i++)
            cg_yw_strs(w, f->only[i]);
        cg_yw_end(w);
    }
    if (f->nignore) {
        cg_yw_keys(w, "ignore");
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < f->nignore; i++)
            cg_yw_strs(w, f->ignore[i]);
        cg_yw_end(w);
    }
    cg_yw_end(w);
}

void cg_write_filters(cg_yw *w, const cg_ref_filter *branches, const cg_ref_filter *tags)
{
    cg_yw_keys(w, "filters");
    cg_yw_map_begin(w);
    if (branches && branches->set)
        write_ref_filter(w, "branches", branches);
    if (tags && tags->set)
        write_ref_filter(w, "tags", tags);
    cg_yw_end(w);
}

int cg_template_render(const cg_template *tpl, cg_env *env, const cg_render_job *job, cg_yw *w,
                       cg_error *err)
{
    const cg_entry_observer *obs = job->observer;
    cg_strbuf tmp = CG_STRBUF_INIT;
    bool typed;
    int rc = 0;
    cg_yw_map_begin(w);
    const char *invoked;
    if ((rc = write_key(env, &tpl->invoke, tpl, w, &tmp, &invoked)) != 0)
        goto out;
    if (obs)
        obs->begin(obs->ctx, tpl, job->job, job->workflow, invoked);
    cg_yw_map_begin(w);
    if (tpl->name_arg >= 0) {
        const cg_tpl_node *v = &tpl->args.kids[tpl->name_arg + 1];
        if (v->kind != 'v' || (rc = expand(env, v, tpl, &tmp, &typed)) != 0 ||
            !cg_streq(cg_strbuf_str(&tmp), job->name)) {
            if (rc == 0) {
                cg_pos p = cg_doc_where(tpl->doc, v->path);
                rc = cg_error_at(err, &p, "'name' here gives '%s' but the job is named '%s' (by the tree's "
                                 "job_name); write name: \"{{ job }}\" or leave 'name' out",
                                 cg_strbuf_str(&tmp), job->name);
            }
            goto out;
        }
    }
    cg_yw_keys(w, "name");
    cg_yw_strs(w, job->name);
    for (size_t i = 0; i < tpl->args.nkids; i += 2) {
        if ((int)i == tpl->name_arg)
            continue;
        if (job->lift_filters && tpl->args.kids[i].text.nsegs == 1 &&
            cg_streq(tpl->args.kids[i].text.segs[0].text, "filters"))
            continue;
        const char *key;
        if ((rc = write_key(env, &tpl->args.kids[i], tpl, w, &tmp, &key)) != 0)
            goto out;
        const cg_tpl_node *val = &tpl->args.kids[i + 1];
        if (val->kind != 'v') {
            if (obs)
                obs->arg(obs->ctx, key_id(&tpl->args.kids[i]), key, tpl->args.kids[i].path, val->kind, NULL, false,
                         val->path, NULL, -1);
            if ((rc = render_node(env, val, tpl, w, &tmp)) != 0)
                goto out;
            continue;
        }
        /* the key's text may live in tmp, which the value reuses */
        char *owned = obs && key == tmp.buf ? cg_xstrdup(key) : NULL;
        if (owned)
            key = owned;
        const char *text;
        size_t len;
        if ((rc = write_scalar(env, val, tpl, w, &tmp, &text, &len, &typed)) != 0) {
            free(owned);
            goto out;
        }
        if (obs)
            obs->arg(obs->ctx, key_id(&tpl->args.kids[i]), key, tpl->args.kids[i].path, 'v', text, typed, val->path,
                     env, val->text.whole ? val->text.segs[0].id : -1);
        free(owned);
    }
    if (obs)
        obs->end(obs->ctx);
    if (job->nrequires) {
        cg_yw_keys(w, "requires");
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < job->nrequires; i++)
            cg_yw_strs(w, job->requires[i]);
        cg_yw_end(w);
    }
    if (!tpl->has_filters && ((job->branches && job->branches->set) || (job->tags && job->tags->set)))
        cg_write_filters(w, job->branches, job->tags);
    cg_yw_end(w);
    cg_yw_end(w);
out:
    cg_strbuf_release(&tmp);
    return rc;
}
