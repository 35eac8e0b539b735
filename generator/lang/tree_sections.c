/* tree_sections — a tree's top-level sections besides its nodes:
 * job_name, workflows, tiers, overrides, phases. */
#include "lang/tree.h"
#include "lang/tree_impl.h"

#include "base/graph.h"

/* ---- top level ---- */

int cg_tree_parse_job_name(parser *P, json_t *root)
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
        t->job_name_src = (cg_src){NULL, NULL, cg_doc_where(P->doc, ""), false};
        size_t off;
        const char *msg;
        cg_pstr_parse(t->job_name_raw, strlen(t->job_name_raw), P->pool, &t->job_name, &off, &msg);
        return cg_tree_resolve_pstr(P, "", &t->job_name, (1u << CG_B_PHASE) | (1u << CG_B_TREE), "a job name");
    }
    if (cg_expect_nonempty(P->doc, ppath, pattern, "the job name pattern", P->err) != 0)
        return -1;
    t->job_name_raw = pstr(P, pattern);
    t->job_name_src = (cg_src){P->doc, cg_intern(P->pool, ppath), cg_doc_where(P->doc, ppath), false};
    if (cg_pstr_parse_at(P->doc, ppath, t->job_name_raw, strlen(t->job_name_raw), P->pool,
                         &t->job_name, P->err) != 0)
        return -1;
    return cg_tree_resolve_pstr(P, ppath, &t->job_name, (1u << CG_B_PHASE) | (1u << CG_B_TREE),
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

int cg_tree_parse_workflow_list(parser *P, const char *path, json_t *v, int **out, cg_pos **pos,
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

int cg_tree_parse_tiers(parser *P, json_t *root)
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

int cg_tree_parse_tier_bodies(parser *P, json_t *root)
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
        if (json_is_string(def) && cg_streq(json_string_value(def), "none")) {
            tier->kind = CG_TIER_NONE;
            for (size_t n = 0; n < t->nnodes && rc == 0; n++)
                for (size_t k = 0; k < t->nodes[n]->ntiers; k++)
                    if (t->nodes[n]->tiers[k] == (int)i) {
                        cg_pos p = cg_doc_where(P->doc, t->nodes[n]->path);
                        rc = cg_error_at(P->err, &p, "this node joins tier '%s', which is declared 'none' "
                                         "(the tree takes no part in it)", tier->name);
                        cg_error_note(P->err, &tier->pos, "declared here");
                        break;
                    }
            continue;
        }
        if (json_is_string(def) && json_string_length(def) == 0 && cg_doc_is_plain(P->doc, tp.buf)) {
            tier->kind = CG_TIER_CELLS; /* declared, filled by node-level `tiers:` */
            continue;
        }
        if (!json_is_object(def)) {
            cg_pos p = cg_doc_where(P->doc, tp.buf);
            rc = cg_error_at(P->err, &p,
                             "tier '%s' must be 'all', 'none', or a mapping with 'cells' or 'pairwise'", tier->name);
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
            rc = cg_tree_parse_patterns(P, PATH(sp, tp.buf, "cells"), cells, "cells", "tier", &tier->cells,
                &tier->ncells);
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
            rc = cg_tree_parse_patterns(P, PATH(sp, tp.buf, "pin"), pin, "pin", "tier", &tier->cells, &tier->ncells);
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
                if (!(tier->costs[c] = cg_tree_parse_pattern(P, PATH(kp2, cp.buf, "when"), when, "cost",
                    "'when' of a cost"))) {
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

int cg_tree_parse_overrides(parser *P, json_t *root)
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
        if (!(o->when = cg_tree_parse_pattern(P, PATH(kp, op.buf, "when"), when, "override",
            "'when' of an override"))) {
            rc = -1;
            break;
        }
        rc = cg_tree_parse_vars(P, PATH(kp, op.buf, "vars"), vars, &o->vars, &o->nvars);
        t->noverrides++;
    }
    cg_strbuf_release(&op);
    cg_strbuf_release(&kp);
    return rc;
}

static size_t phase_degree(const void *ctx, size_t u)
{
    const cg_tree *t = ctx;
    return t->phases[u].nrequires;
}

static ptrdiff_t phase_target(const void *ctx, size_t u, size_t i)
{
    const cg_tree *t = ctx;
    return t->phases[u].requires_phase[i];
}

static const char *phase_name(const void *ctx, size_t u)
{
    const cg_tree *t = ctx;
    return t->phases[u].name;
}

static int check_phase_cycles(parser *P)
{
    cg_tree *t = P->t;
    cg_cycle c;
    if (!cg_graph_find_cycle(&(cg_graph){t->nphases, phase_degree, phase_target, t}, &c))
        return 0;
    cg_strbuf cyc = CG_STRBUF_INIT;
    cg_cycle_describe(&c, phase_name, t, &cyc);
    const cg_phase *ph = &t->phases[c.nodes[c.len - 1]];
    int rc = cg_error_at(P->err, &ph->requires_pos[c.edge], "the phases' requires form a cycle: %s", cyc.buf);
    cg_strbuf_release(&cyc);
    cg_cycle_release(&c);
    return rc;
}

/* An override's `when: {phase: NAME}` names a phase of the tree (a glob
 * may match several, or none: counted per job like a `skip`). */
static int check_override_phases(parser *P)
{
    cg_tree *t = P->t;
    int id = cg_tree_builtin(t, CG_B_PHASE);
    for (size_t o = 0; o < t->noverrides; o++) {
        const cg_pattern *w = t->overrides[o].when;
        for (size_t i = 0; w->names_phase && i < w->nitems; i++) {
            const cg_match *m = &w->items[i];
            for (size_t g = 0; m->id == id && g < m->nglobs; g++) {
                const char *name = m->globs[g].text;
                if (m->globs[g].kind != CG_GLOB_TEXT || strpbrk(name, "*?[\\"))
                    continue;
                bool known = false;
                for (size_t p = 0; p < t->nphases && !known; p++)
                    known = cg_streq(t->phases[p].name, name);
                if (known)
                    continue;
                const char **cands = cg_xmalloc((t->nphases + 1) * sizeof *cands);
                for (size_t p = 0; p < t->nphases; p++)
                    cands[p] = t->phases[p].name;
                cg_strbuf hint = CG_STRBUF_INIT;
                cg_did_you_mean(&hint, name, cands, t->nphases);
                free(cands);
                int rc = cg_error_at(P->err, &m->pos, "unknown phase '%s' in the 'when' of an override%s", name,
                                     cg_strbuf_str(&hint));
                cg_strbuf_release(&hint);
                return rc;
            }
        }
    }
    return 0;
}

/* `per: [os]`: the phase makes one job per group of cells, the cells of a
 * group having the same values of these dimensions (`per: []`: one group). */
static int parse_per(parser *P, const char *path, json_t *v, cg_phase *ph)
{
    cg_tree *t = P->t;
    ph->per_pos = cg_doc_where(P->doc, path);
    if (!json_is_array(v))
        return cg_error_at(P->err, &ph->per_pos, "'per' must be a list of dimensions, e.g. [os] (or [] for one "
                           "job over every cell), not %s", cg_kind_name(P->doc, path, v));
    ph->aggregate = true;
    ph->nper = json_array_size(v);
    ph->per = palloc(P, ph->nper, sizeof *ph->per);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < ph->nper && rc == 0; i++) {
        cg_path_join_index(&ip, path, i);
        json_t *name = json_array_get(v, i);
        if ((rc = cg_expect_string(P->doc, ip.buf, name, "a dimension name", P->err)) != 0)
            break;
        const char *n = json_string_value(name);
        int id = cg_tree_name_id(t, n);
        cg_pos p = cg_doc_where(P->doc, ip.buf);
        if (id >= 0 && !cg_tree_is_dim(t, id)) {
            rc = cg_error_at(P->err, &p, "'per' groups cells by dimensions; '%s' is %s, not a dimension", n,
                             id < (int)(t->ndims + CG_NBUILTINS) ? "a built-in name" : "a variable");
            break;
        }
        if (id < 0) {
            cg_strbuf hint = CG_STRBUF_INIT;
            cg_did_you_mean(&hint, n, t->dims, t->ndims);
            rc = cg_error_at(P->err, &p, "unknown dimension '%s' in 'per'%s", n, cg_strbuf_str(&hint));
            cg_strbuf_release(&hint);
            break;
        }
        for (size_t e = 0; e < i && rc == 0; e++)
            if (ph->per[e] == id)
                rc = cg_error_at(P->err, &p, "dimension '%s' is listed twice in 'per'", n);
        ph->per[i] = id;
    }
    cg_strbuf_release(&ip);
    return rc;
}

int cg_tree_parse_phases(parser *P, json_t *root, int *tree_wf, cg_pos *tree_wf_pos, size_t ntree_wf)
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
        static const char *const keys[] = {"template", "job_name", "requires", "skip", "only", "workflows", "per",
                                           "vars"};
        char where[160];
        snprintf(where, sizeof where, "in phase '%s'", k);
        /* `test:` with nothing: every key at its default (json_object_get of
         * the empty string finds nothing) */
        bool empty = json_is_string(def) && json_string_length(def) == 0 && cg_doc_is_plain(P->doc, pp.buf);
        if (!empty && ((rc = cg_expect_object(P->doc, pp.buf, def, "a phase", P->err)) != 0 ||
                       (rc = cg_check_keys(P->doc, pp.buf, def, keys, CG_ARRAY_LEN(keys), where, P->err)) != 0))
            break;
        json_t *tpl = json_object_get(def, "template");
        if (!tpl) {
            /* the default template: the job named like the phase, given
             * every dimension and variable the cell sets */
            ph->template_pos = ph->pos;
            ph->template_doc_path = cg_pool_strndup(P->pool, pp.buf, pp.len);
        } else {
            PATH(kp, pp.buf, "template");
            if ((rc = cg_expect_nonempty(P->doc, kp.buf, tpl, "'template'", P->err)) != 0)
                break;
            ph->template_raw = pstr(P, tpl);
            ph->template_pos = cg_doc_where(P->doc, kp.buf);
            ph->template_doc_path = cg_pool_strndup(P->pool, kp.buf, kp.len);
            if ((rc = cg_pstr_parse_at(P->doc, kp.buf, ph->template_raw, strlen(ph->template_raw), P->pool,
                                       &ph->template_path, P->err)) != 0 ||
                (rc = cg_tree_resolve_pstr(P, kp.buf, &ph->template_path, (1u << CG_B_PHASE) | (1u << CG_B_TREE),
                                           "a template path")) != 0)
                break;
        }
        json_t *jn = json_object_get(def, "job_name");
        if (jn) {
            PATH(kp, pp.buf, "job_name");
            if ((rc = cg_expect_nonempty(P->doc, kp.buf, jn, "'job_name'", P->err)) != 0)
                break;
            ph->job_name_src = (cg_src){P->doc, cg_intern(P->pool, kp.buf), cg_doc_where(P->doc, kp.buf), false};
            if ((rc = cg_pstr_parse_at(P->doc, kp.buf, json_string_value(jn), json_string_length(jn), P->pool,
                                       &ph->job_name, P->err)) != 0 ||
                (rc = cg_tree_resolve_pstr(P, kp.buf, &ph->job_name, (1u << CG_B_PHASE) | (1u << CG_B_TREE),
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
            ph->requires_optional = palloc(P, ph->nrequires, sizeof *ph->requires_optional);
            for (size_t i = 0; i < ph->nrequires && rc == 0; i++) {
                cg_path_join_index(&ip, kp.buf, i);
                rc = cg_expect_nonempty(P->doc, ip.buf, json_array_get(req, i), "a required job or phase", P->err);
                if (rc == 0) {
                    const char *rn = json_string_value(json_array_get(req, i));
                    size_t rl = json_string_length(json_array_get(req, i));
                    ph->requires_pos[i] = cg_doc_where(P->doc, ip.buf);
                    /* `name?`: only when that job is in the written workflow */
                    ph->requires_optional[i] = rl > 0 && rn[rl - 1] == '?';
                    if (ph->requires_optional[i] && rl == 1) {
                        rc = cg_error_at(P->err, &ph->requires_pos[i], "'?' alone names no job: write 'name?' "
                                         "to require a job only when it is in the workflow");
                        break;
                    }
                    ph->requires[i] = cg_internn(P->pool, rn, ph->requires_optional[i] ? rl - 1 : rl);
                }
            }
            if (rc != 0)
                break;
        }
        json_t *skip = json_object_get(def, "skip");
        if (skip && (rc = cg_tree_parse_patterns(P, PATH(kp, pp.buf, "skip"), skip, "skip", "skip", &ph->skip,
            &ph->nskip)) != 0)
            break;
        json_t *only = json_object_get(def, "only");
        if (only && (rc = cg_tree_parse_patterns(P, PATH(kp, pp.buf, "only"), only, "only", "phase only",
                                                 &ph->only, &ph->nonly)) != 0)
            break;
        json_t *per = json_object_get(def, "per");
        if (per && (rc = parse_per(P, PATH(kp, pp.buf, "per"), per, ph)) != 0)
            break;
        json_t *pvars = json_object_get(def, "vars");
        if (pvars && (rc = cg_tree_parse_vars(P, PATH(kp, pp.buf, "vars"), pvars, &ph->vars, &ph->nvars)) != 0)
            break;
        if (ph->nvars)
            t->phase_vars = true;
        json_t *wfs = json_object_get(def, "workflows");
        if (wfs) {
            if ((rc = cg_tree_parse_workflow_list(P, PATH(kp, pp.buf, "workflows"), wfs, &ph->workflows,
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
    if (rc == 0)
        rc = check_override_phases(P);
    cg_strbuf_release(&pp);
    cg_strbuf_release(&kp);
    cg_strbuf_release(&ip);
    return rc;
}
