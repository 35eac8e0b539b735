#include "model/env.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/yaml_scalar.h"

void cg_env_init(cg_env *env, const cg_tree *t, cg_error *err)
{
    memset(env, 0, sizeof *env);
    env->t = t;
    env->err = err;
    size_t n = t->nnames;
    env->win = cg_xcalloc(n, sizeof *env->win);
    env->win_ov = cg_xcalloc(n, sizeof *env->win_ov);
    env->base_win = cg_xcalloc(n, sizeof *env->base_win);
    env->list = cg_xcalloc(n, sizeof *env->list);
    env->is_list = cg_xcalloc(n, sizeof *env->is_list);
    env->state = cg_xcalloc(n, sizeof *env->state);
    env->val = cg_xcalloc(n, sizeof *env->val);
    env->len = cg_xcalloc(n, sizeof *env->len);
    env->typed = cg_xcalloc(n, sizeof *env->typed);
    env->dim_len = cg_xcalloc(t->ndims + 1, sizeof *env->dim_len);
    cg_arena_init(&env->arena);
    cg_strbuf_init(&env->scratch);
}

void cg_env_release(cg_env *env)
{
    free(env->win);
    free(env->win_ov);
    free(env->base_win);
    free(env->list);
    free(env->is_list);
    free(env->state);
    free(env->val);
    free(env->len);
    free(env->typed);
    free(env->dim_len);
    free(env->applied);
    free(env->expanding);
    cg_strbuf_release(&env->scratch);
    cg_arena_release(&env->arena);
    memset(env, 0, sizeof *env);
}

static void set_winners(cg_env *env, const cg_vardecl *vars, size_t n, const cg_override *ov)
{
    for (size_t i = 0; i < n; i++) {
        env->win[vars[i].id] = &vars[i];
        env->win_ov[vars[i].id] = ov;
    }
}

static void reset_values(cg_env *env)
{
    memset(env->state, 0, env->t->nnames * sizeof *env->state);
    memset(env->is_list, 0, env->t->nnames * sizeof *env->is_list);
}

/* The phase's vars, then the overrides whose `when` matches (seen before
 * any override applies, with the phase's vars), over the base winners. */
static void apply_layers(cg_env *env, const cg_phase *ph)
{
    const cg_tree *t = env->t;
    env->phase = ph;
    memcpy(env->win, env->base_win, t->nnames * sizeof *env->win);
    memset(env->win_ov, 0, t->nnames * sizeof *env->win_ov);
    if (ph)
        set_winners(env, ph->vars, ph->nvars, NULL);
    reset_values(env);
    env->napplied = 0;
    for (size_t o = 0; o < t->noverrides; o++) {
        if (cg_pattern_matches(t->overrides[o].when, env)) {
            cg_grow(&env->applied, &env->applied_cap, env->napplied + 1, sizeof *env->applied);
            env->applied[env->napplied++] = &t->overrides[o];
            if (ph && t->overrides[o].when->names_phase)
                ((cg_pattern *)t->overrides[o].when)->hits++; /* counted per job (see load.c) */
        }
    }
    for (size_t a = 0; a < env->napplied; a++)
        set_winners(env, env->applied[a]->vars, env->applied[a]->nvars, env->applied[a]);
    reset_values(env);
}

int cg_env_bind(cg_env *env, const cg_cell *cell)
{
    const cg_tree *t = env->t;
    env->cell = cell;
    memset(env->win, 0, t->nnames * sizeof *env->win);
    memset(env->win_ov, 0, t->nnames * sizeof *env->win_ov);
    for (size_t b = 0; b < CG_NBUILTINS; b++) {
        env->builtin[b] = NULL;
        env->builtin_typed[b] = false;
        env->builtin_len[b] = SIZE_MAX;
    }
    for (size_t d = 0; d < t->ndims; d++)
        env->dim_len[d] = SIZE_MAX;
    env->cell_pending = false;
    env->builtin[CG_B_TREE] = t->name;
    env->napplied = 0;
    env->nexpanding = 0;
    cg_arena_reset(&env->arena);
    cg_strbuf_reset(&env->scratch);
    reset_values(env);
    /* root first: collect the path from the leaf up, then walk it down */
    const cg_tnode *chain[256];
    size_t depth = 0;
    for (const cg_tnode *n = cell->leaf; n && depth < CG_ARRAY_LEN(chain); n = n->parent)
        chain[depth++] = n;
    while (depth > 0) {
        const cg_tnode *n = chain[--depth];
        set_winners(env, n->vars, n->nvars, NULL);
    }
    for (uint32_t i = 0; i < cell->nzvars; i++) {
        env->win[cell->zvars[i]->id] = cell->zvars[i];
        env->win_ov[cell->zvars[i]->id] = NULL;
    }
    env->phase = NULL;
    if (t->phase_vars)
        memcpy(env->base_win, env->win, t->nnames * sizeof *env->win);
    if (t->noverrides == 0)
        return 0;
    /* `when` sees the cell before any override applies */
    for (size_t o = 0; o < t->noverrides; o++) {
        if (cg_pattern_matches(t->overrides[o].when, env)) {
            cg_grow(&env->applied, &env->applied_cap, env->napplied + 1, sizeof *env->applied);
            env->applied[env->napplied++] = &t->overrides[o];
        }
        if (env->err && env->err->set)
            return -1;
    }
    if (env->napplied == 0)
        return 0;
    for (size_t a = 0; a < env->napplied; a++)
        set_winners(env, env->applied[a]->vars, env->applied[a]->nvars, env->applied[a]);
    reset_values(env);
    return 0;
}

void cg_env_set_builtin(cg_env *env, enum cg_builtin b, const char *value, bool typed)
{
    env->builtin[b] = value;
    env->builtin_typed[b] = typed;
    env->builtin_len[b] = SIZE_MAX;
    if (b == CG_B_CELL)
        env->cell_pending = false;
    if (b == CG_B_PHASE && env->t->phase_vars && env->cell) {
        const cg_phase *ph = NULL;
        for (size_t p = 0; value && p < env->t->nphases && !ph; p++)
            if (cg_streq(env->t->phases[p].name, value))
                ph = &env->t->phases[p];
        apply_layers(env, ph);
    }
}

void cg_env_defer_cell(cg_env *env)
{
    if (!env->builtin[CG_B_CELL])
        env->cell_pending = true;
}

/* {{ cell }}: the job name pattern expanded without the phase. */
static void make_cell(cg_env *env)
{
    const cg_tree *t = env->t;
    env->cell_pending = false;
    const char *saved = env->builtin[CG_B_PHASE];
    size_t saved_len = env->builtin_len[CG_B_PHASE];
    env->builtin[CG_B_PHASE] = NULL;
    cg_strbuf *out = &env->scratch;
    size_t from = out->len;
    cg_env_expand(env, &t->job_name, CG_EXPAND_NAME, t, out, &t->job_name_src, "the job name pattern");
    env->builtin[CG_B_PHASE] = saved;
    env->builtin_len[CG_B_PHASE] = saved_len;
    cg_env_set_builtin(env, CG_B_CELL, cg_arena_strndup(&env->arena, out->buf ? out->buf + from : "",
                                                        out->len - from), false);
    cg_strbuf_truncate(out, from);
}

static void describe_for_error(cg_env *env, cg_strbuf *sb)
{
    if (env->builtin[CG_B_JOB])
        cg_strbuf_addf(sb, "job '%s'", env->builtin[CG_B_JOB]);
    else {
        cg_strbuf_adds(sb, "cell ");
        cg_cell_describe(env->t, env->cell, sb);
    }
}

static int expand_with(cg_env *env, const cg_pstr *s, enum cg_expand_mode mode, const char *const *from,
                       const char *const *to, size_t nrep, cg_strbuf *out, const cg_src *src, const char *context);

/* A list variable: each item expanded (as a variable's value, with its
 * `replace`), kept in the arena; its text is the list in YAML's flow style. */
static int get_list(cg_env *env, int id, const cg_vardecl *d, const char **s, size_t *n, bool *typed)
{
    const cg_tree *t = env->t;
    env->state[id] = 1;
    cg_grow(&env->expanding, &env->expanding_cap, env->nexpanding + 1, sizeof *env->expanding);
    env->expanding[env->nexpanding++] = id;
    cg_env_list *l = &env->list[id];
    l->n = d->nitems;
    l->v = cg_arena_alloc(&env->arena, (d->nitems + 1) * sizeof *l->v);
    l->len = cg_arena_alloc(&env->arena, (d->nitems + 1) * sizeof *l->len);
    l->typed = cg_arena_alloc(&env->arena, (d->nitems + 1) * sizeof *l->typed);
    char what[220];
    snprintf(what, sizeof what, "an item of variable '%.180s'", t->names[id]);
    cg_strbuf *out = &env->scratch;
    size_t from = out->len;
    cg_strbuf flow = CG_STRBUF_INIT;
    cg_strbuf_addc(&flow, '[');
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < d->nitems && rc == 0; i++) {
        cg_path_join_index(&ip, d->path, i);
        cg_src src = {t->doc, ip.buf, {0}, false};
        rc = expand_with(env, &d->items[i], CG_EXPAND_VAR, d->replace_from, d->replace_to, d->nreplace, out,
                         &src, what);
        if (rc != 0)
            break;
        l->v[i] = cg_arena_strndup(&env->arena, out->buf ? out->buf + from : "", out->len - from);
        l->len[i] = out->len - from;
        l->typed[i] = !d->items[i].has_names && d->item_plain[i] &&
                      cg_yaml_resolve(l->v[i], l->len[i]) != CG_T_STR;
        if (i)
            cg_strbuf_adds(&flow, ", ");
        if (l->typed[i] || (cg_yaml_plain_safe(l->v[i], l->len[i]) && !memchr(l->v[i], ',', l->len[i])))
            cg_strbuf_add(&flow, l->v[i], l->len[i]);
        else
            cg_yaml_quote(&flow, l->v[i], l->len[i]);
        cg_strbuf_truncate(out, from);
    }
    cg_strbuf_addc(&flow, ']');
    cg_strbuf_release(&ip);
    env->nexpanding--;
    cg_strbuf_truncate(out, from);
    if (rc != 0) {
        cg_strbuf_release(&flow);
        if (rc == 1) {
            env->state[id] = 3;
            return 0;
        }
        return -1;
    }
    env->val[id] = cg_arena_strndup(&env->arena, flow.buf, flow.len);
    env->len[id] = flow.len;
    env->typed[id] = false;
    env->is_list[id] = true;
    env->state[id] = 2;
    cg_strbuf_release(&flow);
    return cg_env_get(env, id, s, n, typed);
}

int cg_env_get_list(cg_env *env, int id, const cg_env_list **out)
{
    const char *v;
    size_t n;
    bool typed;
    int rc = cg_env_get(env, id, &v, &n, &typed);
    if (rc != 1)
        return rc;
    if (cg_tree_is_dim(env->t, id) || (size_t)id < env->t->ndims + CG_NBUILTINS || !env->is_list[id])
        return 0;
    *out = &env->list[id];
    return 1;
}

int cg_env_get(cg_env *env, int id, const char **s, size_t *n, bool *typed)
{
    const cg_tree *t = env->t;
    if (id < 0 || (size_t)id >= t->nnames)
        return 0;
    if (cg_tree_is_dim(t, id)) {
        const char *v = env->cell->values[id];
        if (!v)
            return 0;
        /* measured once per bound cell (an env made by hand has no dim_len) */
        if (!env->dim_len)
            *n = strlen(v);
        else if ((*n = env->dim_len[id]) == SIZE_MAX)
            *n = env->dim_len[id] = strlen(v);
        *s = v;
        *typed = false;
        return 1;
    }
    if ((size_t)id < t->ndims + CG_NBUILTINS) {
        size_t b = (size_t)id - t->ndims;
        if (b == CG_B_CELL && env->cell_pending)
            make_cell(env);
        if (!env->builtin[b])
            return 0;
        if (env->builtin_len[b] == SIZE_MAX)
            env->builtin_len[b] = strlen(env->builtin[b]);
        *s = env->builtin[b];
        *n = env->builtin_len[b];
        *typed = env->builtin_typed[b];
        return 1;
    }
    const cg_vardecl *d = env->win[id];
    if (!d || d->unset || env->state[id] == 3)
        return 0; /* `~`, or 3: unset for a group (uses a name the group lacks) */
    if (env->state[id] == 2) {
        *s = env->val[id];
        *n = env->len[id];
        *typed = env->typed[id];
        return 1;
    }
    if (env->state[id] == 1) {
        cg_strbuf ctx = CG_STRBUF_INIT, cycle = CG_STRBUF_INIT;
        describe_for_error(env, &ctx);
        size_t from = 0;
        while (from < env->nexpanding && env->expanding[from] != id)
            from++;
        for (size_t i = from; i < env->nexpanding; i++)
            cg_strbuf_addf(&cycle, "%s -> ", t->names[env->expanding[i]]);
        cg_strbuf_adds(&cycle, t->names[id]);
        cg_error_at(env->err, &d->pos, "variables refer to each other in a cycle: %s (for %s)", cycle.buf,
                    ctx.buf);
        cg_strbuf_release(&ctx);
        cg_strbuf_release(&cycle);
        return -1;
    }
    if (d->list)
        return get_list(env, id, d, s, n, typed);
    if (!d->text.has_names && !d->nreplace) {
        env->val[id] = d->text.nsegs ? d->text.segs[0].text : "";
        env->len[id] = d->text.nsegs ? d->text.segs[0].len : 0;
        /* {{ "x" }} literals make a single text segment too: keep raw typing only for plain text */
        if (d->text.nsegs > 1) {
            cg_strbuf tmp = CG_STRBUF_INIT;
            for (size_t i = 0; i < d->text.nsegs; i++)
                cg_strbuf_add(&tmp, d->text.segs[i].text, d->text.segs[i].len);
            env->val[id] = cg_arena_strndup(&env->arena, tmp.buf, tmp.len);
            env->len[id] = tmp.len;
            cg_strbuf_release(&tmp);
        }
        env->typed[id] = d->plain && cg_yaml_resolve(d->raw, d->len) != CG_T_STR;
        env->state[id] = 2;
        return cg_env_get(env, id, s, n, typed);
    }
    env->state[id] = 1;
    cg_grow(&env->expanding, &env->expanding_cap, env->nexpanding + 1, sizeof *env->expanding);
    env->expanding[env->nexpanding++] = id;
    /* expanded at the end of the scratch buffer: a variable it uses is
     * expanded after it and truncated away again before this one goes on */
    cg_strbuf *out = &env->scratch;
    size_t from = out->len;
    char what[200]; /* "variable 'NAME'", for an error (no printf: made for every variable of every cell) */
    size_t len = strlen(t->names[id]), nl = len < sizeof what - 11 ? len : sizeof what - 11;
    memcpy(what, "variable '", 10); /* cut as snprintf would cut it */
    memcpy(what + 10, t->names[id], nl);
    what[10 + nl] = '\0';
    if (10 + len + 1 < sizeof what)
        memcpy(what + 10 + nl, "'", 2);
    cg_src src = {t->doc, d->path, d->pos, false};
    int rc = 0;
    if (d->text.whole && !d->nreplace && (size_t)d->text.segs[0].id >= t->ndims + CG_NBUILTINS) {
        /* "{{ branches }}" naming a list: the same list */
        const char *x;
        size_t xn;
        bool xt;
        int lr = cg_env_get(env, d->text.segs[0].id, &x, &xn, &xt);
        if (lr == 1 && env->is_list[d->text.segs[0].id]) {
            env->nexpanding--;
            env->list[id] = env->list[d->text.segs[0].id];
            env->is_list[id] = true;
            env->val[id] = x;
            env->len[id] = xn;
            env->typed[id] = false;
            env->state[id] = 2;
            return cg_env_get(env, id, s, n, typed);
        }
        if (lr < 0)
            rc = -1;
    }
    if (rc == 0)
        rc = expand_with(env, &d->text, CG_EXPAND_VAR, d->replace_from, d->replace_to, d->nreplace, out, &src,
                         what);
    env->nexpanding--;
    if (rc != 0) {
        cg_strbuf_truncate(out, from);
        if (rc == 1) { /* a group's cell lacks a name it uses: unset */
            env->state[id] = 3;
            return 0;
        }
        return -1;
    }
    /* a whole placeholder keeps the type of what it names */
    bool ty = false;
    if (!d->text.has_names) {
        ty = d->plain && cg_yaml_resolve(d->raw, d->len) != CG_T_STR; /* (replace found nothing to rewrite) */
    } else if (d->text.whole && !d->nreplace) {
        const char *x;
        size_t xn;
        if (cg_env_get(env, d->text.segs[0].id, &x, &xn, &ty) != 1)
            ty = false;
    }
    env->val[id] = cg_arena_strndup(&env->arena, out->buf ? out->buf + from : "", out->len - from);
    env->len[id] = out->len - from;
    env->typed[id] = ty;
    env->state[id] = 2;
    cg_strbuf_truncate(out, from);
    return cg_env_get(env, id, s, n, typed);
}

/* Appends v[0..n) with replacements made (the tree's job-name `replace`, or
 * a derived variable's): at each offset the first of them that matches,
 * else the byte itself.  Only the bytes that start a replaced string (none
 * is empty) are looked at closer; the runs between them are copied whole. */
static void add_replaced(cg_env *env, cg_strbuf *out, const char *v, size_t n, const char *const *from,
                         const char *const *to, size_t nrep)
{
    bool *starts = env->starts;
    if (env->starts_of != from) {
        memset(env->starts, 0, sizeof env->starts);
        for (size_t r = 0; r < nrep; r++)
            starts[(unsigned char)from[r][0]] = true;
        env->starts_of = from;
    }
    size_t run = 0;
    for (size_t k = 0; k < n;) {
        if (!starts[(unsigned char)v[k]]) {
            k++;
            continue;
        }
        size_t r = 0, fl = 0;
        for (; r < nrep; r++) {
            fl = strlen(from[r]);
            if (fl <= n - k && memcmp(v + k, from[r], fl) == 0)
                break;
        }
        if (r == nrep) {
            k++;
            continue;
        }
        cg_strbuf_add(out, v + run, k - run);
        cg_strbuf_adds(out, to[r]);
        k += fl;
        run = k;
    }
    cg_strbuf_add(out, v + run, n - run);
}

static bool is_separator(char c, enum cg_expand_mode mode)
{
    return c == '_' || c == '-' || c == '.' || (mode == CG_EXPAND_VAR && c == ' ');
}

/* The key whose value src is (the last part of its document path), when
 * it is a plain key of a template; NULL for an item or anything else. */
static const char *value_key(const cg_src *src)
{
    const char *slash = src && src->doc && src->path ? strrchr(src->path, '/') : NULL;
    const char *k = slash ? slash + 1 : NULL;
    if (!k || !*k || strchr(k, '~') || strchr(k, '?'))
        return NULL; /* (an escaped or already optional key: not suggested) */
    for (const char *c = k; *c; c++)
        if (!cg_isdigit(*c))
            return k;
    return NULL; /* an item's index */
}

int cg_env_expand(cg_env *env, const cg_pstr *s, enum cg_expand_mode mode, const cg_tree *replace,
                  cg_strbuf *out, const cg_src *src, const char *context)
{
    if (replace && replace->nreplace)
        return expand_with(env, s, mode, replace->replace_from, replace->replace_to, replace->nreplace, out, src,
                           context);
    return expand_with(env, s, mode, NULL, NULL, 0, out, src, context);
}

static int expand_with(cg_env *env, const cg_pstr *s, enum cg_expand_mode mode, const char *const *from,
                       const char *const *to, size_t nrep, cg_strbuf *out, const cg_src *src, const char *context)
{
    bool optional_dims = mode == CG_EXPAND_NAME;
    size_t start_len = out->len;
    bool drop_next_sep = false;
    size_t text_from = SIZE_MAX; /* where the literal text just before a placeholder starts in out */
    for (size_t i = 0; i <= s->nsegs; i++) {
        if (out->len - start_len > CG_MAX_VALUE_BYTES) {
            /* "{{ v }}{{ v }}" chains double at each step: stop them early */
            cg_pos at = src->pos.line ? src->pos : cg_src_pos(src, 0);
            cg_error_at(env->err, &at, "%s expands to more than %d bytes; do its placeholders repeat "
                        "each other (each doubling it)?", context, CG_MAX_VALUE_BYTES);
            return -1;
        }
        if (i == s->nsegs)
            break;
        const cg_seg *seg = &s->segs[i];
        if (seg->kind == CG_SEG_TEXT) {
            const char *text = seg->text;
            size_t len = seg->len;
            if (drop_next_sep && len && is_separator(text[0], mode)) {
                text++;
                len--;
            }
            drop_next_sep = false;
            text_from = out->len;
            cg_strbuf_add(out, text, len);
            continue;
        }
        const char *v;
        size_t n;
        bool typed;
        int rc = cg_env_get(env, seg->id, &v, &n, &typed);
        if (rc < 0)
            return -1;
        bool optional = seg->optional || (optional_dims && (cg_tree_is_dim(env->t, seg->id) ||
                                                            seg->id == cg_tree_builtin(env->t, CG_B_PHASE)));
        if (rc == 0) {
            if (!optional && mode == CG_EXPAND_VAR && env->cell && env->cell->group)
                return 1; /* the variable is unset for the group (see cg_env_get) */
            if (!optional) {
                cg_strbuf ctx = CG_STRBUF_INIT;
                describe_for_error(env, &ctx);
                cg_pos p = cg_src_pos(src, seg->offset);
                /* for a cell's job, the value may be missing because the job
                 * should not exist there: '?' would hide that; and a key's
                 * whole value left empty would be written as "" (an optional
                 * key leaves the key out) */
                const char *key = s->whole && mode == CG_EXPAND_PLAIN && src && src->arg_value ? value_key(src) : NULL;
                if (env->cell && key)
                    cg_error_at(env->err, &p, "%s uses '{{ %s }}', which is not set for %s; set it where the cell "
                                "comes from, keep the phase from running there (its 'skip' or 'only') if the job "
                                "should not exist, or write the key as '%s?:' to leave it out where it is not set",
                                context, seg->text, ctx.buf, key);
                else if (env->cell)
                    cg_error_at(env->err, &p, "%s uses '{{ %s }}', which is not set for %s; set it where the cell "
                                "comes from, keep the phase from running there (its 'skip' or 'only') if the job "
                                "should not exist, or write '{{ %s? }}' to allow it to be empty",
                                context, seg->text, ctx.buf, seg->text);
                else
                    cg_error_at(env->err, &p, "%s uses '{{ %s }}', which is not set for %s; "
                                "set it, or write '{{ %s? }}' to allow it to be empty",
                                context, seg->text, ctx.buf, seg->text);
                cg_strbuf_release(&ctx);
                const cg_vardecl *u = (size_t)seg->id >= env->t->ndims + CG_NBUILTINS && env->win ? env->win[seg->id] : NULL;
                if (u && u->unset)
                    cg_error_note(env->err, &u->pos, "'%s' is unset here ('~')", seg->text);
                else if (env->cell)
                    cg_error_note(env->err, &env->cell->leaf->pos, "the cell comes from here");
                return -1;
            }
            if (mode == CG_EXPAND_NAME && text_from != SIZE_MAX && text_from < out->len) {
                /* a name: the literal text glued to the absent value goes
                 * with it (`_py{{ python }}`), back to its last separator */
                size_t k = out->len;
                while (k > text_from && !is_separator(out->buf[k - 1], mode))
                    k--;
                cg_strbuf_truncate(out, k > text_from ? k : text_from);
            }
            text_from = SIZE_MAX;
            if (mode != CG_EXPAND_PLAIN) {
                /* drop the separator written before the absent value */
                if (out->len > start_len && is_separator(out->buf[out->len - 1], mode))
                    cg_strbuf_truncate(out, out->len - 1);
                else if (out->len == start_len)
                    drop_next_sep = true;
            }
            continue;
        }
        drop_next_sep = false;
        text_from = SIZE_MAX;
        if (env->is_list && (size_t)seg->id < env->t->nnames && env->is_list[seg->id]) {
            cg_pos p = cg_src_pos(src, seg->offset);
            const cg_vardecl *d = env->win[seg->id];
            cg_error_at(env->err, &p, "%s uses '{{ %s }}' inside text, but variable '%s' holds a list; a list is "
                        "written as a template value of its own (key: \"{{ %s }}\") or named by a variable "
                        "that is just '{{ %s }}'", context, seg->text, seg->text, seg->text, seg->text);
            if (d)
                cg_error_note(env->err, &d->pos, "the list is set here");
            return -1;
        }
        if (nrep) {
            add_replaced(env, out, v, n, from, to, nrep);
        } else {
            cg_strbuf_add(out, v, n);
        }
    }
    return 0;
}

static bool glob_match(const cg_glob *g, cg_env *env, int id, const char *v)
{
    bool m;
    if (g->kind == CG_GLOB_TEXT) {
        /* a glob without wildcards or escapes matches itself only */
        m = strpbrk(g->text, "*?[\\") ? fnmatch(g->text, v, 0) == 0 : strcmp(g->text, v) == 0;
    } else {
        const char *first, *last;
        m = cg_cell_value_ends(env->cell, id, &first, &last) &&
            cg_streq(v, g->kind == CG_GLOB_FIRST ? first : last);
    }
    return g->negate ? !m : m;
}

/* Whether value v of name id matches m's globs: one of its plain globs
 * (when it has any) and none of its negated ones. */
static bool value_matches(const cg_match *m, cg_env *env, const char *v)
{
    bool any = false, plain = false;
    for (size_t g = 0; g < m->nglobs; g++) {
        const cg_glob *gl = &m->globs[g];
        if (gl->negate) {
            if (!glob_match(gl, env, m->id, v))
                return false; /* (glob_match negates: false when the value matches the glob) */
            continue;
        }
        plain = true;
        any = any || glob_match(gl, env, m->id, v);
    }
    return !plain || any;
}

bool cg_pattern_matches(const cg_pattern *p, cg_env *env)
{
    for (size_t i = 0; i < p->nitems; i++) {
        const cg_match *m = &p->items[i];
        const char *v;
        size_t n;
        bool typed;
        int rc = cg_env_get(env, m->id, &v, &n, &typed);
        if (rc < 0)
            return false;
        if (m->absent) {
            if (rc == 1)
                return false;
            continue;
        }
        if (rc == 0)
            return false;
        if (env->is_list && (size_t)m->id >= env->t->ndims + CG_NBUILTINS && env->is_list[m->id]) {
            /* a list matches when one of its items does */
            const cg_env_list *l = &env->list[m->id];
            bool any = false;
            for (size_t k = 0; k < l->n && !any; k++)
                any = value_matches(m, env, l->v[k]);
            if (!any)
                return false;
            continue;
        }
        if (!value_matches(m, env, v))
            return false;
    }
    return true;
}

cg_pos cg_env_value_pos(cg_env *env, int id)
{
    const cg_tree *t = env->t;
    if (id < 0 || (size_t)id >= t->nnames)
        return (cg_pos){0};
    if (!cg_tree_is_dim(t, id))
        return env->win[id] ? env->win[id]->pos : (cg_pos){0};
    return cg_cell_value_pos(env->cell, id);
}

size_t cg_env_history(cg_env *env, int id, cg_var_step *out, size_t max)
{
    const cg_tree *t = env->t;
    const cg_cell *cell = env->cell;
    size_t n = 0;
    const cg_tnode *chain[256];
    size_t depth = 0;
    for (const cg_tnode *nd = cell->leaf; nd && depth < CG_ARRAY_LEN(chain); nd = nd->parent)
        chain[depth++] = nd;
    while (depth > 0) {
        const cg_tnode *nd = chain[--depth];
        for (size_t i = 0; i < nd->nvars; i++)
            if (nd->vars[i].id == id && n < max)
                out[n++] = (cg_var_step){&nd->vars[i], NULL, NULL};
    }
    for (uint32_t i = 0; i < cell->nzvars; i++)
        if (cell->zvars[i]->id == id && n < max)
            out[n++] = (cg_var_step){cell->zvars[i], NULL, NULL};
    for (size_t i = 0; env->phase && i < env->phase->nvars; i++)
        if (env->phase->vars[i].id == id && n < max)
            out[n++] = (cg_var_step){&env->phase->vars[i], NULL, env->phase};
    for (size_t a = 0; a < env->napplied; a++)
        for (size_t i = 0; i < env->applied[a]->nvars; i++)
            if (env->applied[a]->vars[i].id == id && n < max)
                out[n++] = (cg_var_step){&env->applied[a]->vars[i], env->applied[a], NULL};
    (void)t;
    return n;
}
