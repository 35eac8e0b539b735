#include "model/expand.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "model/pairwise.h"
#include "lang/yamlwrite.h"

/* ---- the environment of one cell ---- */

void cg_env_init(cg_env *env, const cg_tree *t, cg_error *err)
{
    memset(env, 0, sizeof *env);
    env->t = t;
    env->err = err;
    size_t n = t->nnames;
    env->win = cg_xcalloc(n, sizeof *env->win);
    env->win_ov = cg_xcalloc(n, sizeof *env->win_ov);
    env->state = cg_xcalloc(n, sizeof *env->state);
    env->val = cg_xcalloc(n, sizeof *env->val);
    env->len = cg_xcalloc(n, sizeof *env->len);
    env->typed = cg_xcalloc(n, sizeof *env->typed);
    cg_arena_init(&env->arena);
}

void cg_env_release(cg_env *env)
{
    free(env->win);
    free(env->win_ov);
    free(env->state);
    free(env->val);
    free(env->len);
    free(env->typed);
    free(env->applied);
    free(env->expanding);
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
    }
    env->builtin[CG_B_TREE] = t->name;
    env->napplied = 0;
    env->nexpanding = 0;
    cg_arena_reset(&env->arena);
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

int cg_env_get(cg_env *env, int id, const char **s, size_t *n, bool *typed)
{
    const cg_tree *t = env->t;
    if (id < 0 || (size_t)id >= t->nnames)
        return 0;
    if (cg_tree_is_dim(t, id)) {
        const char *v = env->cell->values[id];
        if (!v)
            return 0;
        *s = v;
        *n = strlen(v);
        *typed = false;
        return 1;
    }
    if ((size_t)id < t->ndims + CG_NBUILTINS) {
        size_t b = (size_t)id - t->ndims;
        if (!env->builtin[b])
            return 0;
        *s = env->builtin[b];
        *n = strlen(*s);
        *typed = env->builtin_typed[b];
        return 1;
    }
    const cg_vardecl *d = env->win[id];
    if (!d)
        return 0;
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
    if (!d->text.has_names) {
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
    cg_strbuf out = CG_STRBUF_INIT;
    char what[200];
    snprintf(what, sizeof what, "variable '%s'", t->names[id]);
    cg_src src = {t->doc, d->path, d->pos};
    int rc = cg_env_expand(env, &d->text, false, NULL, &out, &src, what);
    env->nexpanding--;
    if (rc != 0) {
        cg_strbuf_release(&out);
        return -1;
    }
    /* a whole placeholder keeps the type of what it names */
    bool ty = false;
    if (d->text.whole) {
        const char *x;
        size_t xn;
        if (cg_env_get(env, d->text.segs[0].id, &x, &xn, &ty) != 1)
            ty = false;
    }
    env->val[id] = cg_arena_strndup(&env->arena, cg_strbuf_str(&out), out.len);
    env->len[id] = out.len;
    env->typed[id] = ty;
    env->state[id] = 2;
    cg_strbuf_release(&out);
    return cg_env_get(env, id, s, n, typed);
}

static bool is_separator(char c)
{
    return c == '_' || c == '-' || c == '.';
}

int cg_env_expand(cg_env *env, const cg_pstr *s, bool optional_dims, const cg_tree *replace,
                  cg_strbuf *out, const cg_src *src, const char *context)
{
    size_t start_len = out->len;
    bool drop_next_sep = false;
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
            if (drop_next_sep && len && is_separator(text[0])) {
                text++;
                len--;
            }
            drop_next_sep = false;
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
            if (!optional) {
                cg_strbuf ctx = CG_STRBUF_INIT;
                describe_for_error(env, &ctx);
                cg_pos p = cg_src_pos(src, seg->offset);
                cg_error_at(env->err, &p, "%s uses '{{ %s }}', which is not set for %s; "
                            "set it, or write '{{ %s? }}' to allow it to be empty",
                            context, seg->text, ctx.buf, seg->text);
                cg_strbuf_release(&ctx);
                if (env->cell)
                    cg_error_note(env->err, &env->cell->leaf->pos, "the cell comes from here");
                return -1;
            }
            if (optional_dims) {
                /* drop the separator written before the absent value */
                if (out->len > start_len && is_separator(out->buf[out->len - 1]))
                    cg_strbuf_truncate(out, out->len - 1);
                else if (out->len == start_len)
                    drop_next_sep = true;
            }
            continue;
        }
        drop_next_sep = false;
        if (replace && replace->nreplace) {
            for (size_t k = 0; k < n;) {
                bool hit = false;
                for (size_t r = 0; r < replace->nreplace && !hit; r++) {
                    size_t fl = strlen(replace->replace_from[r]);
                    if (fl <= n - k && memcmp(v + k, replace->replace_from[r], fl) == 0) {
                        cg_strbuf_adds(out, replace->replace_to[r]);
                        k += fl;
                        hit = true;
                    }
                }
                if (!hit)
                    cg_strbuf_addc(out, v[k++]);
            }
        } else {
            cg_strbuf_add(out, v, n);
        }
    }
    return 0;
}

static bool glob_match(const cg_glob *g, const char *v)
{
    bool m = fnmatch(g->text, v, 0) == 0;
    return g->negate ? !m : m;
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
        bool any = false;
        /* a negated glob alone means "anything but"; several globs are alternatives */
        for (size_t g = 0; g < m->nglobs && !any; g++)
            any = glob_match(&m->globs[g], v);
        if (!any)
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

cg_pos cg_cell_value_pos(const cg_cell *cell, int dim)
{
    int id = dim;
    const char *v = cell->values[id];
    for (const cg_tnode *n = cell->leaf; v && n; n = n->parent) {
        for (size_t f = 0; f < n->nfans; f++)
            if (n->fans[f].dim == id)
                for (size_t i = 0; i < n->fans[f].n; i++)
                    if (n->fans[f].values[i] == v)
                        return n->fans[f].pos[i];
        if (n->zip)
            for (size_t b = 0; b < n->zip->n; b++)
                for (size_t c = 0; c < n->zip->nnames; c++) {
                    const cg_vardecl *z = &n->zip->cells[b * n->zip->nnames + c];
                    if (z->id == id && z->raw == v)
                        return z->pos;
                }
    }
    return (cg_pos){0};
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
                out[n++] = (cg_var_step){&nd->vars[i], NULL};
    }
    for (uint32_t i = 0; i < cell->nzvars; i++)
        if (cell->zvars[i]->id == id && n < max)
            out[n++] = (cg_var_step){cell->zvars[i], NULL};
    for (size_t a = 0; a < env->napplied; a++)
        for (size_t i = 0; i < env->applied[a]->nvars; i++)
            if (env->applied[a]->vars[i].id == id && n < max)
                out[n++] = (cg_var_step){&env->applied[a]->vars[i], env->applied[a]};
    (void)t;
    return n;
}

void cg_cell_describe(const cg_tree *t, const cg_cell *c, cg_strbuf *out)
{
    bool first = true;
    for (size_t d = 0; d < t->ndims; d++) {
        if (!c->values[d])
            continue;
        cg_strbuf_addf(out, "%s%s=%s", first ? "" : ",", t->dims[d], c->values[d]);
        first = false;
    }
}

/* ---- expansion ---- */

typedef struct walk {
    cg_tree *t;
    cg_pool *pool;
    cg_cells *out;
    cg_env env;
    cg_error *err;
    const char **values;          /* [ndims] */
    const cg_vardecl **zstack;
    size_t nz, zcap;
    const cg_tnode **scope;       /* nodes on the path, root first */
    size_t nscope;
    uint64_t tiers;
} walk;

static cg_cell *new_cell(walk *W, const cg_tnode *leaf, bool extra)
{
    cg_cells *c = W->out;
    cg_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v);
    cg_cell *cell = &c->v[c->n];
    memset(cell, 0, sizeof *cell);
    cell->index = (uint32_t)c->n++;
    cell->leaf = leaf;
    cell->extra = extra;
    size_t nd = W->t->ndims;
    cell->values = cg_pool_alloc(W->pool, nd * sizeof *cell->values);
    memcpy(cell->values, W->values, nd * sizeof *cell->values);
    if (W->nz) {
        cell->zvars = cg_pool_alloc(W->pool, W->nz * sizeof *cell->zvars);
        memcpy(cell->zvars, W->zstack, W->nz * sizeof *cell->zvars);
        cell->nzvars = (uint32_t)W->nz;
    }
    cell->tiers = W->tiers;
    return cell;
}

static void apply_filters(walk *W, cg_cell *cell)
{
    for (size_t s = 0; s < W->nscope; s++) {
        const cg_tnode *n = W->scope[s];
        for (size_t i = 0; i < n->nexclude; i++) {
            cg_pattern *p = n->exclude[i];
            if (cg_pattern_matches(p, &W->env)) {
                p->hits++;
                if (cell->status == CG_CELL_LIVE) {
                    cell->status = CG_CELL_EXCLUDED;
                    cell->removed_by = p;
                    cell->removed_at = n;
                }
            }
        }
    }
    /* the patterns of one `only` are alternatives; each scope's `only` applies */
    for (size_t s = 0; s < W->nscope; s++) {
        const cg_tnode *n = W->scope[s];
        bool kept = n->nonly == 0;
        for (size_t i = 0; i < n->nonly; i++) {
            cg_pattern *p = n->only[i];
            if (cg_pattern_matches(p, &W->env)) {
                p->hits++;
                kept = true;
            }
        }
        if (!kept && cell->status == CG_CELL_LIVE) {
            cell->status = CG_CELL_NOT_ONLY;
            cell->removed_by = n->only[0];
            cell->removed_at = n;
        }
    }
}

static int filter_cell(walk *W, cg_cell *cell)
{
    if (cg_env_bind(&W->env, cell) != 0)
        return -1;
    if (!cell->extra)
        apply_filters(W, cell);
    if (cell->status == CG_CELL_LIVE)
        for (size_t a = 0; a < W->env.napplied; a++)
            ((cg_override *)W->env.applied[a])->when->hits++;
    return W->err->set ? -1 : 0;
}

static int visit(walk *W, const cg_tnode *node);

static int visit_bound(walk *W, const cg_tnode *node)
{
    if (node->nchildren == 0) {
        bool extra = node->extra;
        cg_cell *cell = new_cell(W, node, extra);
        return filter_cell(W, cell);
    }
    for (size_t i = 0; i < node->nchildren; i++)
        if (visit(W, node->children[i]) != 0)
            return -1;
    return 0;
}

/* Multiplies the node's factors (fans and the zip) in dimension order. */
static int visit_factors(walk *W, const cg_tnode *node, size_t fan, bool zip_done)
{
    /* the zip goes before the first fan whose dimension comes after it */
    if (node->zip && !zip_done && (fan == node->nfans || node->zip->order < node->fans[fan].dim)) {
        const cg_zip *z = node->zip;
        for (size_t b = 0; b < z->n; b++) {
            size_t pushed = 0;
            for (size_t c = 0; c < z->nnames; c++) {
                const cg_vardecl *cell = &z->cells[b * z->nnames + c];
                if (cg_tree_is_dim(W->t, cell->id)) {
                    W->values[cell->id] = cell->raw;
                } else {
                    cg_grow(&W->zstack, &W->zcap, W->nz + 1, sizeof *W->zstack);
                    W->zstack[W->nz++] = cell;
                    pushed++;
                }
            }
            int rc = visit_factors(W, node, fan, true);
            W->nz -= pushed;
            for (size_t c = 0; c < z->nnames; c++)
                if (cg_tree_is_dim(W->t, z->ids[c]))
                    W->values[z->ids[c]] = NULL;
            if (rc != 0)
                return -1;
        }
        return 0;
    }
    if (fan == node->nfans)
        return visit_bound(W, node);
    const cg_fan *f = &node->fans[fan];
    for (size_t i = 0; i < f->n; i++) {
        W->values[f->dim] = f->values[i];
        if (visit_factors(W, node, fan + 1, zip_done) != 0)
            return -1;
    }
    W->values[f->dim] = NULL;
    return 0;
}

static int visit(walk *W, const cg_tnode *node)
{
    uint64_t saved_tiers = W->tiers;
    for (size_t i = 0; i < node->ntiers; i++)
        W->tiers |= (uint64_t)1 << node->tiers[i];
    W->scope[W->nscope++] = node;
    int rc = visit_factors(W, node, 0, false);
    W->nscope--;
    W->tiers = saved_tiers;
    return rc;
}

static int report_unmatched(cg_tree *t, bool strict, cg_warnings *warn, cg_error *err)
{
    for (size_t i = 0; i < t->npatterns; i++) {
        const cg_pattern *p = t->patterns[i];
        /* tiers must match (an error, in assign_tiers); skips are counted with the jobs */
        if (p->hits || cg_streq(p->kind, "tier") || cg_streq(p->kind, "cost") || cg_streq(p->kind, "skip"))
            continue;
        const char *why = cg_streq(p->kind, "only") ? " (a typo? cells must match one 'only' pattern of their scope)" : "";
        if (strict)
            return cg_error_at(err, &p->pos, "%s pattern %s matches no cell%s", p->kind, p->text, why);
        cg_warn_at(warn, &p->pos, "%s pattern %s matches no cell%s", p->kind, p->text, why);
    }
    return 0;
}

/* Every cell the tree spells out is filtered away: almost always a mistake. */
static int report_all_removed(const cg_tree *t, const cg_cells *cells, bool strict, cg_warnings *warn,
                              cg_error *err)
{
    const cg_pattern *by = cells->v[0].removed_by;
    for (size_t c = 1; c < cells->n && by; c++)
        if (cells->v[c].removed_by != by)
            by = NULL;
    cg_pos pos = by ? by->pos : t->dim_pos[0];
    char what[256];
    if (by)
        snprintf(what, sizeof what, "%s pattern %s removes every cell", by->kind, by->text);
    else
        snprintf(what, sizeof what, "the 'exclude' and 'only' patterns remove every cell");
    if (strict)
        return cg_error_at(err, &pos, "%s; the tree makes no jobs", what);
    cg_warn_at(warn, &pos, "%s; the tree makes no jobs", what);
    return 0;
}

/* Tier membership from the top-level tier definitions (pairwise tiers are
 * chosen later, by pairwise.c). */
static int assign_tiers(cg_tree *t, cg_cells *cells, cg_env *env, cg_error *err)
{
    for (size_t ti = 0; ti < t->ntiers; ti++) {
        cg_tier *tier = &t->tiers[ti];
        uint64_t bit = (uint64_t)1 << ti;
        if (tier->kind == CG_TIER_ALL) {
            for (size_t c = 0; c < cells->n; c++)
                if (cells->v[c].status == CG_CELL_LIVE)
                    cells->v[c].tiers |= bit;
            continue;
        }
        if (tier->kind == CG_TIER_ALL)
            continue;
        bool *pinned = tier->kind == CG_TIER_PAIRWISE ? cg_xcalloc(cells->n + 1, sizeof *pinned) : NULL;
        for (size_t k = 0; k < tier->ncells; k++) {
            cg_pattern *p = tier->cells[k];
            const cg_cell *removed = NULL;
            for (size_t c = 0; c < cells->n; c++) {
                cg_cell *cell = &cells->v[c];
                if (cg_env_bind(env, cell) != 0)
                    return -1;
                if (!cg_pattern_matches(p, env))
                    continue;
                if (cell->status != CG_CELL_LIVE) {
                    if (!removed)
                        removed = cell;
                    continue;
                }
                if (pinned)
                    pinned[c] = true;
                else
                    cell->tiers |= bit;
                p->hits++;
            }
            if (p->hits == 0) {
                cg_error_at(err, &p->pos, "tier '%s' %s %s, but no cell of the tree matches it", tier->name,
                            pinned ? "pins" : "lists", p->text);
                if (removed)
                    cg_error_note(err, &removed->removed_by->pos, "the matching cells are removed by this %s",
                                  removed->removed_by->kind);
                free(pinned);
                return -1;
            }
        }
        if (!pinned)
            continue;
        /* cost: the product of the matching rules' costs (1 when none) */
        double *cost = cg_xcalloc(cells->n + 1, sizeof *cost);
        for (size_t c = 0; c < cells->n; c++) {
            cost[c] = 1.0;
            if (cells->v[c].status != CG_CELL_LIVE || !tier->ncosts)
                continue;
            if (cg_env_bind(env, &cells->v[c]) != 0) {
                free(cost);
                free(pinned);
                return -1;
            }
            for (size_t r = 0; r < tier->ncosts; r++)
                if (cg_pattern_matches(tier->costs[r], env)) {
                    cost[c] *= tier->cost_values[r];
                    tier->costs[r]->hits++;
                }
        }
        bool *selected = cg_xcalloc(cells->n + 1, sizeof *selected);
        cg_pairwise_select(t, cells, tier->dims, tier->ndims, pinned, cost, selected);
        for (size_t c = 0; c < cells->n; c++)
            if (selected[c])
                cells->v[c].tiers |= bit;
        free(selected);
        free(cost);
        free(pinned);
    }
    return 0;
}

/* How many cells a node makes (saturating at UINT64_MAX): the product of
 * its factors times the sum of its sub-trees' cells. */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t node_factors(const cg_tnode *n)
{
    uint64_t k = n->zip ? n->zip->n : 1;
    for (size_t i = 0; i < n->nfans; i++)
        k = sat_mul(k, n->fans[i].n);
    return k;
}

/* Counts the cells before making them, so a tree that would make billions
 * fails at once with a message rather than after eating the memory. */
static int count_cells(const cg_tree *t, const cg_tnode *n, long max, uint64_t *out, cg_error *err)
{
    uint64_t below = n->nchildren ? 0 : 1;
    for (size_t i = 0; i < n->nchildren; i++) {
        uint64_t c;
        if (count_cells(t, n->children[i], max, &c, err) != 0)
            return -1;
        below = below > UINT64_MAX - c ? UINT64_MAX : below + c;
    }
    *out = sat_mul(node_factors(n), below);
    if (*out <= (uint64_t)max)
        return 0;
    cg_strbuf why = CG_STRBUF_INIT;
    bool same = !n->zip && n->nchildren == 0 && n->nfans > 1;
    for (size_t i = 1; i < n->nfans && same; i++)
        same = n->fans[i].n == n->fans[0].n;
    if (same) {
        cg_strbuf_addf(&why, "%zu values in each of %zu dimensions", n->fans[0].n, n->nfans);
    } else {
        for (size_t i = 0; i < n->nfans; i++)
            cg_strbuf_addf(&why, "%s%s: %zu", why.len ? " x " : "", t->dims[n->fans[i].dim], n->fans[i].n);
        if (n->zip)
            cg_strbuf_addf(&why, "%s%zu zipped rows", why.len ? " x " : "", n->zip->n);
        if (n->nchildren && below == UINT64_MAX)
            cg_strbuf_addf(&why, "%stoo many cells below", why.len ? " x " : "");
        else if (n->nchildren)
            cg_strbuf_addf(&why, "%s%llu cells below", why.len ? " x " : "", (unsigned long long)below);
    }
    char count[32];
    if (*out == UINT64_MAX)
        snprintf(count, sizeof count, "more than %llu", (unsigned long long)UINT64_MAX);
    else
        snprintf(count, sizeof count, "%llu", (unsigned long long)*out);
    cg_error_at(err, &n->pos, "this node makes %s cells (%s), more than the limit of %ld "
                "(the manifest's 'limits: max_cells')", count, cg_strbuf_str(&why), max);
    cg_strbuf_release(&why);
    return -1;
}

int cg_expand(cg_tree *t, cg_pool *pool, cg_cells *out, long max_cells, bool strict, cg_warnings *warn,
              cg_error *err)
{
    uint64_t total;
    if (count_cells(t, t->root, max_cells, &total, err) != 0)
        return -1;
    if (t->ntiers > 64) {
        cg_pos p = t->tiers[64].pos;
        return cg_error_at(err, &p, "a tree can declare at most 64 tiers");
    }
    walk W = {0};
    W.t = t;
    W.pool = pool;
    W.out = out;
    W.err = err;
    cg_env_init(&W.env, t, err);
    W.values = cg_xcalloc(t->ndims, sizeof *W.values);
    W.scope = cg_xcalloc(t->nnodes + 1, sizeof *W.scope);
    int rc = visit(&W, t->root);
    if (rc == 0) {
        for (size_t c = 0; c < out->n; c++)
            out->nlive += out->v[c].status == CG_CELL_LIVE;
        rc = assign_tiers(t, out, &W.env, err);
    }
    if (rc == 0)
        rc = report_unmatched(t, strict, warn, err);
    if (rc == 0 && out->n && !out->nlive)
        rc = report_all_removed(t, out, strict, warn, err);
    free(W.values);
    free(W.scope);
    free(W.zstack);
    cg_env_release(&W.env);
    return rc;
}

void cg_cells_release(cg_cells *cells)
{
    free(cells->v);
    memset(cells, 0, sizeof *cells);
}
