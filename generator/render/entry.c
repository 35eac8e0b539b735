/* Rendering one generated workflow entry from its compiled template. */
#include "render/entry.h"

#include <stdlib.h>
#include <string.h>


static int expand(cg_env *env, const cg_tpl_node *n, const cg_template *tpl, cg_strbuf *out, bool *typed,
                  bool arg_value)
{
    cg_strbuf_reset(out);
    *typed = false;
    if (!n->text.has_names) {
        for (size_t i = 0; i < n->text.nsegs; i++)
            cg_strbuf_add(out, n->text.segs[i].text, n->text.segs[i].len);
        *typed = n->plain && cg_yaml_resolve(cg_strbuf_str(out), out->len) != CG_T_STR;
        return 0;
    }
    cg_src src = {tpl->doc, n->path, {0}, arg_value}; /* the position is looked up only for an error */
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

/* The keys of one rendered mapping, when a placeholder makes any of them:
 * YAML forbids a key twice, and each reader keeps a different one. */
typedef struct key_set {
    bool on;
    cg_map seen;  /* key -> its template node */
    cg_pool pool;
} key_set;

static void keys_init(key_set *ks, const cg_tpl_node *m)
{
    ks->on = false;
    for (size_t i = 0; i < m->nkids && !ks->on; i += 2)
        ks->on = m->kids[i].text.has_names;
    if (ks->on) {
        cg_map_init(&ks->seen);
        cg_pool_init(&ks->pool);
    }
}

static void keys_release(key_set *ks)
{
    if (ks->on) {
        cg_map_release(&ks->seen);
        cg_pool_release(&ks->pool);
    }
}

/* Records key `text` written from template node k; -1 after an error
 * when the mapping has it already (pointing at a key a placeholder made). */
static int keys_add(key_set *ks, cg_env *env, const cg_template *tpl, const cg_tpl_node *k, const char *text)
{
    if (!ks->on)
        return 0;
    const cg_tpl_node *first = cg_map_get(&ks->seen, text);
    if (!first) {
        cg_map_put(&ks->seen, cg_pool_strndup(&ks->pool, text, strlen(text)), (void *)k);
        return 0;
    }
    const cg_tpl_node *at = k->text.has_names ? k : first, *other = at == k ? first : k;
    cg_pos p = cg_doc_key_where(tpl->doc, at->path), op = cg_doc_key_where(tpl->doc, other->path);
    cg_error_at(env->err, &p, "this key gives '%s' for job '%s', a key the mapping has already; a mapping cannot "
                "hold a key twice", text, env->builtin[CG_B_JOB] ? env->builtin[CG_B_JOB] : "?");
    cg_error_note(env->err, &op, "the other '%s' comes from here", text);
    return -1;
}

/* A key a placeholder makes may not be one cigen writes itself ('name',
 * 'requires', 'filters') or reads from the template as written ('context':
 * a job with one is never pulled in by a selection): -1 after an error. */
static int check_arg_key(cg_env *env, const cg_template *tpl, const cg_tpl_node *k, const char *text)
{
    static const char *const reserved[] = {"name", "requires", "filters", "context"};
    if (!k->text.has_names)
        return 0;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
        if (!cg_streq(text, reserved[i]))
            continue;
        cg_pos p = cg_doc_key_where(tpl->doc, k->path);
        return cg_error_at(env->err, &p, "this key gives '%s' for job '%s'; cigen writes 'name', 'requires' and "
                           "'filters' of an entry itself and reads its 'context' as written, so none of them may "
                           "come from a placeholder", text, env->builtin[CG_B_JOB] ? env->builtin[CG_B_JOB] : "?");
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
    if (expand(env, n, tpl, tmp, &typed, false) != 0)
        return -1;
    cg_yw_key(w, tmp->buf ? tmp->buf : "", tmp->len);
    *text = cg_strbuf_str(tmp);
    return 0;
}

/* The list a scalar that is one placeholder names (a list variable): 1
 * and the list, 0 when it names no list, -1 on error. */
static int whole_list(cg_env *env, const cg_tpl_node *n, const cg_env_list **l)
{
    if (n->kind != 'v' || !n->text.whole)
        return 0;
    return cg_env_get_list(env, n->text.segs[0].id, l);
}

static void write_list(cg_yw *w, const cg_env_list *l)
{
    cg_yw_seq_begin(w);
    for (size_t i = 0; i < l->n; i++) {
        if (l->typed[i])
            cg_yw_raw(w, l->v[i], l->len[i]);
        else
            cg_yw_str(w, l->v[i], l->len[i]);
    }
    cg_yw_end(w);
}

/* Writes scalar node n; *text, *len and *typed say what was written (*text
 * NULL: a list variable, written as a sequence). */
static int write_scalar(cg_env *env, const cg_tpl_node *n, const cg_template *tpl, cg_yw *w, cg_strbuf *tmp,
                        const char **text, size_t *len, bool *typed)
{
    const cg_env_list *l;
    int lr = n->text.has_names ? whole_list(env, n, &l) : 0;
    if (lr < 0)
        return -1;
    if (lr == 1) {
        write_list(w, l);
        *text = NULL;
        *len = 0;
        *typed = false;
        return 0;
    }
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
    if (expand(env, n, tpl, tmp, typed, true) != 0)
        return -1;
    if (*typed)
        cg_yw_raw(w, tmp->buf ? tmp->buf : "", tmp->len);
    else
        cg_yw_str(w, tmp->buf ? tmp->buf : "", tmp->len);
    *text = cg_strbuf_str(tmp);
    *len = tmp->len;
    return 0;
}

/* Whether every name node n needs is set for the job: 1 yes, 0 no, -1 an
 * error (recorded).  Names under an optional key or item do not count:
 * those leave out only their own entry. */
static int present(cg_env *env, const cg_tpl_node *n)
{
    if (n->kind == 'v') {
        for (size_t i = 0; i < n->text.nsegs; i++) {
            const cg_seg *seg = &n->text.segs[i];
            if (seg->kind != CG_SEG_NAME || seg->optional)
                continue;
            const char *v;
            size_t len;
            bool typed;
            int r = cg_env_get(env, seg->id, &v, &len, &typed);
            if (r <= 0)
                return r;
        }
        return 1;
    }
    for (size_t i = 0; i < n->nkids; i++) {
        const cg_tpl_node *k = &n->kids[i];
        if (n->kind == 'm' && k->optional) {
            i++; /* an optional key: its entry only */
            continue;
        }
        if (n->kind == 's' && k->optional)
            continue;
        int r = present(env, k);
        if (r <= 0)
            return r;
    }
    return 1;
}

/* For an optional key (kids[i] of a mapping) or item: 1 to write it, 0 to
 * leave it out, -1 on error. */
static int wanted(cg_env *env, const cg_tpl_node *n, bool is_map, size_t i)
{
    const cg_tpl_node *k = &n->kids[i];
    if (!k->optional)
        return 1;
    int r = present(env, k);
    if (r == 1 && is_map)
        r = present(env, &n->kids[i + 1]);
    if (r == 1 && !is_map) {
        /* `- "{{ name? }}"` */
        const char *v;
        size_t len;
        bool typed;
        r = cg_env_get(env, k->text.segs[0].id, &v, &len, &typed);
    }
    return r;
}

/* An item that is a mapping of optional keys only, none of them written:
 * 1 (leave the item out), 0, or -1 on error. */
static int all_left_out(cg_env *env, const cg_tpl_node *item)
{
    if (item->kind != 'm' || item->nkids == 0)
        return 0;
    for (size_t i = 0; i < item->nkids; i += 2) {
        if (!item->kids[i].optional)
            return 0;
        int r = wanted(env, item, true, i);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    return 1;
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
        key_set ks;
        keys_init(&ks, n);
        cg_yw_map_begin(w);
        for (size_t i = 0; i < n->nkids; i += 2) {
            const char *key;
            int r = wanted(env, n, true, i);
            if (r == 0)
                continue;
            if (r < 0 || write_key(env, &n->kids[i], tpl, w, tmp, &key) != 0 ||
                keys_add(&ks, env, tpl, &n->kids[i], key) != 0 ||
                render_node(env, &n->kids[i + 1], tpl, w, tmp) != 0) {
                keys_release(&ks);
                return -1;
            }
        }
        keys_release(&ks);
        cg_yw_end(w);
    } else if (n->kind == 's') {
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < n->nkids; i++) {
            int r = wanted(env, n, false, i), gone = r == 1 ? all_left_out(env, &n->kids[i]) : 0;
            if (r < 0 || gone < 0)
                return -1;
            if (r == 1 && !gone && render_node(env, &n->kids[i], tpl, w, tmp) != 0)
                return -1;
        }
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

/* `only:` or `ignore:` names, in the form the manifest wrote them */
static void write_names(cg_yw *w, const char *key, const char *const *names, size_t n, bool scalar)
{
    cg_yw_keys(w, key);
    if (scalar && n == 1) {
        cg_yw_strs(w, names[0]);
        return;
    }
    cg_yw_seq_begin(w);
    for (size_t i = 0; i < n; i++)
        cg_yw_strs(w, names[i]);
    cg_yw_end(w);
}

static void write_ref_filter(cg_yw *w, const char *key, const cg_ref_filter *f)
{
    cg_yw_keys(w, key);
    cg_yw_map_begin(w);
    if (f->nonly)
        write_names(w, "only", f->only, f->nonly, f->only_scalar);
    if (f->nignore)
        write_names(w, "ignore", f->ignore, f->nignore, f->ignore_scalar);
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

/* The constant text of key node k ("" when it has placeholders). */
static const char *key_text(const cg_tpl_node *k)
{
    return k->ctext ? k->ctext : "";
}

/* The value of constant key `name` in mapping node m (written, for an
 * optional key), or NULL; -1 in *rc on error. */
static const cg_tpl_node *map_value(cg_env *env, const cg_tpl_node *m, const char *name, int *rc)
{
    for (size_t i = 0; m->kind == 'm' && i < m->nkids; i += 2) {
        if (!cg_streq(key_text(&m->kids[i]), name))
            continue;
        int r = wanted(env, m, true, i);
        if (r < 0)
            *rc = -1;
        return r == 1 ? &m->kids[i + 1] : NULL;
    }
    return NULL;
}

/* One ref kind (branches or tags) set by both the template (node v: names,
 * or {only, ignore}) and the workflow (f): the template's `only` replaces
 * the workflow's, the `ignore` lists add up (the workflow's first). */
static int write_combined_ref(cg_env *env, const cg_template *tpl, cg_yw *w, cg_strbuf *tmp, const char *key,
                              const cg_tpl_node *v, const cg_ref_filter *f)
{
    int rc = 0;
    const cg_tpl_node *only = v->kind == 'm' ? map_value(env, v, "only", &rc) : v;
    const cg_tpl_node *ignore = v->kind == 'm' ? map_value(env, v, "ignore", &rc) : NULL;
    if (rc != 0)
        return -1;
    cg_yw_keys(w, key);
    cg_yw_map_begin(w);
    if (only) {
        cg_yw_keys(w, "only");
        if (render_node(env, only, tpl, w, tmp) != 0)
            return -1;
    } else if (f->nonly) {
        write_names(w, "only", f->only, f->nonly, f->only_scalar);
    }
    if (ignore && f->nignore) {
        cg_yw_keys(w, "ignore");
        cg_yw_seq_begin(w);
        for (size_t i = 0; i < f->nignore; i++)
            cg_yw_strs(w, f->ignore[i]);
        const cg_env_list *l;
        int lr = whole_list(env, ignore, &l);
        if (lr < 0)
            return -1;
        if (ignore->kind == 's') {
            for (size_t i = 0; i < ignore->nkids; i++) {
                int r = wanted(env, ignore, false, i);
                if (r < 0 || (r == 1 && render_node(env, &ignore->kids[i], tpl, w, tmp) != 0))
                    return -1;
            }
        } else if (lr == 1) {
            for (size_t i = 0; i < l->n; i++)
                cg_yw_str(w, l->v[i], l->len[i]);
        } else if (render_node(env, ignore, tpl, w, tmp) != 0) {
            return -1;
        }
        cg_yw_end(w);
    } else if (ignore) {
        cg_yw_keys(w, "ignore");
        if (render_node(env, ignore, tpl, w, tmp) != 0)
            return -1;
    } else if (f->nignore) {
        write_names(w, "ignore", f->ignore, f->nignore, f->ignore_scalar);
    }
    cg_yw_end(w);
    return 0;
}

/* The template's own `filters:` (node fv) combined with the workflow's
 * per-job filters: a kind only one side sets is kept as written; a kind
 * both set is combined by write_combined_ref(). */
static int write_combined_filters(cg_env *env, const cg_template *tpl, cg_yw *w, cg_strbuf *tmp,
                                  const cg_tpl_node *fv, const cg_render_job *job)
{
    bool done_b = false, done_t = false;
    cg_yw_keys(w, "filters");
    cg_yw_map_begin(w);
    for (size_t i = 0; i < fv->nkids; i += 2) {
        int r = wanted(env, fv, true, i);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        const char *k = key_text(&fv->kids[i]);
        bool b = cg_streq(k, "branches");
        const cg_ref_filter *f = b ? job->branches : job->tags;
        if (b)
            done_b = true;
        else
            done_t = true;
        if (f && f->set) {
            if (write_combined_ref(env, tpl, w, tmp, k, &fv->kids[i + 1], f) != 0)
                return -1;
            continue;
        }
        cg_yw_keys(w, k);
        if (render_node(env, &fv->kids[i + 1], tpl, w, tmp) != 0)
            return -1;
    }
    if (!done_b && job->branches && job->branches->set)
        write_ref_filter(w, "branches", job->branches);
    if (!done_t && job->tags && job->tags->set)
        write_ref_filter(w, "tags", job->tags);
    cg_yw_end(w);
    return 0;
}

int cg_template_render(const cg_template *tpl, cg_env *env, const cg_render_job *job, cg_yw *w,
                       cg_error *err)
{
    const cg_entry_observer *obs = job->observer;
    cg_strbuf own = CG_STRBUF_INIT;
    cg_strbuf *tmp = job->scratch ? job->scratch : &own;
    key_set ks = {0};
    bool typed;
    int rc = 0;
    cg_yw_map_begin(w);
    const char *invoked;
    if ((rc = write_key(env, &tpl->invoke, tpl, w, tmp, &invoked)) != 0)
        goto out;
    if (obs)
        obs->begin(obs->ctx, tpl, job->job, job->workflow, invoked);
    cg_yw_map_begin(w);
    if (tpl->no_name) {
        /* `name: ~`: CircleCI names the entry after the job it runs */
        if (!cg_streq(invoked, job->name)) {
            cg_pos p = cg_doc_where(tpl->doc, tpl->args.kids[tpl->name_arg + 1].path);
            rc = cg_error_at(err, &p, "'name: ~' leaves 'name:' out, but job '%s' runs '%s', so CircleCI would name "
                             "it '%s'; give the job that name (the tree's job_name) or remove 'name: ~'",
                             job->name, invoked, invoked);
            goto out;
        }
    } else if (tpl->name_arg >= 0) {
        const cg_tpl_node *v = &tpl->args.kids[tpl->name_arg + 1];
        if (v->kind != 'v' || (rc = expand(env, v, tpl, tmp, &typed, false)) != 0 ||
            !cg_streq(cg_strbuf_str(tmp), job->name)) {
            if (rc == 0) {
                cg_pos p = cg_doc_where(tpl->doc, v->path);
                rc = cg_error_at(err, &p, "'name' here gives '%s' but the job is named '%s' (by the tree's "
                                 "job_name); write name: \"{{ job }}\" or leave 'name' out",
                                 cg_strbuf_str(tmp), job->name);
            }
            goto out;
        }
    }
    if (!tpl->no_name) {
        cg_yw_keys(w, "name");
        cg_yw_strs(w, job->name);
    }
    keys_init(&ks, &tpl->args);
    bool wf_filters = (job->branches && job->branches->set) || (job->tags && job->tags->set);
    bool wrote_filters = false;
    for (size_t i = 0; i < tpl->args.nkids; i += 2) {
        if ((int)i == tpl->name_arg)
            continue;
        if (job->lift_filters && (int)i == tpl->filters_arg)
            continue;
        int r = wanted(env, &tpl->args, true, i);
        if (r < 0) {
            rc = -1;
            goto out;
        }
        if (r == 0)
            continue;
        const cg_tpl_node *val = &tpl->args.kids[i + 1];
        if ((int)i == tpl->filters_arg) {
            wrote_filters = true;
            if (wf_filters) {
                if (obs)
                    obs->arg(obs->ctx, key_id(&tpl->args.kids[i]), "filters", tpl->args.kids[i].path, val->kind, NULL,
                             false, val->path, NULL, -1);
                if ((rc = write_combined_filters(env, tpl, w, tmp, val, job)) != 0)
                    goto out;
                continue;
            }
        }
        const char *key;
        if ((rc = write_key(env, &tpl->args.kids[i], tpl, w, tmp, &key)) != 0 ||
            (rc = check_arg_key(env, tpl, &tpl->args.kids[i], key)) != 0 ||
            (rc = keys_add(&ks, env, tpl, &tpl->args.kids[i], key)) != 0)
            goto out;
        if (val->kind != 'v') {
            if (obs)
                obs->arg(obs->ctx, key_id(&tpl->args.kids[i]), key, tpl->args.kids[i].path, val->kind, NULL, false,
                         val->path, NULL, -1);
            if ((rc = render_node(env, val, tpl, w, tmp)) != 0)
                goto out;
            continue;
        }
        /* the key's text may live in tmp, which the value reuses */
        char *owned = obs && key == tmp->buf ? cg_xstrdup(key) : NULL;
        if (owned)
            key = owned;
        const char *text;
        size_t len;
        if ((rc = write_scalar(env, val, tpl, w, tmp, &text, &len, &typed)) != 0) {
            free(owned);
            goto out;
        }
        if (obs && text)
            obs->arg(obs->ctx, key_id(&tpl->args.kids[i]), key, tpl->args.kids[i].path, 'v', text, typed, val->path,
                     env, val->text.whole ? val->text.segs[0].id : -1);
        else if (obs) /* a list variable: a sequence */
            obs->arg(obs->ctx, key_id(&tpl->args.kids[i]), key, tpl->args.kids[i].path, 's', NULL, false, val->path,
                     NULL, -1);
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
    if (!wrote_filters && wf_filters)
        cg_write_filters(w, job->branches, job->tags);
    cg_yw_end(w);
    cg_yw_end(w);
out:
    keys_release(&ks);
    cg_strbuf_reset(tmp);
    cg_strbuf_release(&own);
    return rc;
}
