/* cigen coverage — does a tier cover every pair of values? */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "model/pairwise.h"

/* The dimensions to pair: the tier's own (pairwise), --dims, or all; dims
 * has room for every dimension of the tree (--dims names each once). */
static size_t coverage_dims(const cg_tree *t, const cg_tier *tier, const char *spec, int *dims, cg_error *err)
{
    size_t n = 0;
    if (tier->kind == CG_TIER_PAIRWISE && !spec) {
        memcpy(dims, tier->dims, tier->ndims * sizeof *dims);
        return tier->ndims;
    }
    if (!spec) {
        for (size_t d = 0; d < t->ndims; d++)
            dims[n++] = (int)d;
        return n;
    }
    char *copy = cg_xstrdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int id = cg_tree_name_id(t, tok);
        if (!cg_tree_is_dim(t, id)) {
            cg_strbuf hint = CG_STRBUF_INIT;
            const char *s = cg_suggest(tok, t->dims, t->ndims);
            if (s)
                cg_strbuf_addf(&hint, " (did you mean '%s'?)", s);
            cg_error_plain(err, "tree '%s' has no dimension '%s'%s", t->name, tok, cg_strbuf_str(&hint));
            cg_strbuf_release(&hint);
            free(copy);
            return (size_t)-1;
        }
        for (size_t i = 0; i < n; i++)
            if (dims[i] == id) {
                cg_error_plain(err, "--dims names '%s' twice", tok);
                free(copy);
                return (size_t)-1;
            }
        dims[n++] = id;
    }
    free(copy);
    if (n < 2)
        return cg_error_plain(err, "--dims wants two dimensions or more (a pair is two values of two "
                              "dimensions), not '%s'", spec), (size_t)-1;
    return n;
}

static bool pinned_cell(const cg_tier *tier, const cg_cell *cell, cg_env *env)
{
    if (tier->kind != CG_TIER_PAIRWISE || cg_env_bind(env, cell) != 0)
        return false;
    for (size_t k = 0; k < tier->ncells; k++)
        if (cg_pattern_matches(tier->cells[k], env))
            return true;
    return false;
}

/* "python=3.8 + cuda=cu101": a pair, as the report names it (into sb, reset first). */
static void pair_text(cg_strbuf *sb, const cg_tree *t, const cg_pair *m)
{
    cg_strbuf_reset(sb);
    cg_strbuf_addf(sb, "%s=%s + %s=%s", t->dims[m->d1], m->v1, t->dims[m->d2], m->v2);
}

/* The cost of the selected cells: per cell, the product of the matching rules. */
static double selection_cost(const cg_tier *tier, const cg_cells *cells, const bool *selected, cg_env *env)
{
    double sum = 0;
    for (size_t c = 0; c < cells->n; c++) {
        if (!selected[c] || cg_env_bind(env, &cells->v[c]) != 0)
            continue;
        double cost = 1;
        for (size_t r = 0; r < tier->ncosts; r++)
            if (cg_pattern_matches(tier->costs[r], env))
                cost *= tier->cost_values[r];
        sum += cost;
    }
    return sum;
}

static int report_tier(cg_project *p, size_t ti, size_t k, const char *dims_spec, bool json, json_t *arr,
                       cg_strbuf *out, cg_error *err)
{
    const cg_tree *t = p->m.trees[ti];
    const cg_tier *tier = &t->tiers[k];
    const cg_cells *cells = &p->m.cells[ti];
    int *dims = cg_xcalloc(t->ndims + 1, sizeof *dims);
    size_t nd = coverage_dims(t, tier, dims_spec, dims, err);
    if (nd == (size_t)-1) {
        free(dims);
        return -1;
    }
    bool *selected = cg_xcalloc(cells->n + 1, sizeof *selected);
    size_t nsel = 0;
    for (size_t c = 0; c < cells->n; c++)
        if (cells->v[c].tiers & ((uint64_t)1 << k))
            selected[c] = true, nsel++;
    cg_env env;
    cg_env_init(&env, t, err);
    cg_coverage cov;
    cg_coverage_compute(t, cells, dims, nd, selected, &cov);
    json_t *o = json ? json_object() : NULL;
    json_t *jcells = json ? json_array() : NULL, *jmissing = json ? json_array() : NULL, *jdims = NULL;
    if (json) {
        json_object_set_new(o, "tree", json_string(t->name));
        json_object_set_new(o, "tier", json_string(tier->name));
        json_object_set_new(o, "kind", json_string(tier->kind == CG_TIER_PAIRWISE ? "pairwise" :
                                                   tier->kind == CG_TIER_ALL ? "all" :
                                                   tier->kind == CG_TIER_NONE ? "none" : "cells"));
        jdims = json_array();
        for (size_t i = 0; i < nd; i++)
            json_array_append_new(jdims, json_string(t->dims[dims[i]]));
        json_object_set_new(o, "dimensions", jdims);
        json_object_set_new(o, "reachable_pairs", json_integer((json_int_t)cov.reachable));
        json_object_set_new(o, "covered_pairs", json_integer((json_int_t)cov.covered));
        json_object_set_new(o, "live_cells", json_integer((json_int_t)p->m.cells[ti].nlive));
        if (tier->ncosts)
            json_object_set_new(o, "cost", json_real(selection_cost(tier, cells, selected, &env)));
    } else {
        cg_strbuf_addf(out, "tree %s, tier %s (%s over", t->name, tier->name,
                       tier->kind == CG_TIER_PAIRWISE ? "pairwise" : tier->kind == CG_TIER_ALL ? "all cells" :
                       tier->kind == CG_TIER_NONE ? "no cells" : "listed cells");
        for (size_t i = 0; i < nd; i++)
            cg_strbuf_addf(out, "%s %s", i ? "," : "", t->dims[dims[i]]);
        cg_strbuf_addf(out, ")\n  pairs covered: %zu/%zu\n  cells: %zu of %zu live cells", cov.covered,
                       cov.reachable, nsel, cells->nlive);
        if (tier->ncosts)
            cg_strbuf_addf(out, ", cost %g", selection_cost(tier, cells, selected, &env));
        cg_strbuf_addc(out, '\n');
    }
    for (size_t c = 0; c < cells->n; c++) {
        if (!selected[c])
            continue;
        cg_strbuf cell = CG_STRBUF_INIT;
        cg_cell_describe(t, &cells->v[c], &cell);
        bool pin = pinned_cell(tier, &cells->v[c], &env);
        if (json) {
            json_t *x = json_object();
            json_object_set_new(x, "cell", json_string(cell.buf));
            json_object_set_new(x, "pinned", json_boolean(pin));
            json_array_append_new(jcells, x);
        } else {
            cg_strbuf_addf(out, "    %s%s\n", cell.buf, pin ? "  (pinned)" : "");
        }
        cg_strbuf_release(&cell);
    }
    /* the proof: each covered pair, and the first selected cell that has it */
    json_t *jpairs = json ? json_array() : NULL;
    if (cov.covered && !json)
        cg_strbuf_addf(out, "  covered pairs (%zu):\n", cov.covered);
    cg_strbuf line = CG_STRBUF_INIT;
    for (size_t i = 0; i < cov.covered; i++) {
        pair_text(&line, t, &cov.pairs[i]);
        cg_strbuf cell = CG_STRBUF_INIT;
        cg_cell_describe(t, &cells->v[cov.by[i]], &cell);
        if (json) {
            json_t *x = json_object();
            json_object_set_new(x, "pair", json_string(line.buf));
            json_object_set_new(x, "cell", json_string(cell.buf));
            json_array_append_new(jpairs, x);
        } else {
            cg_strbuf_addf(out, "    %-40s by %s\n", line.buf, cell.buf);
        }
        cg_strbuf_release(&cell);
    }
    if (cov.nmissing && !json)
        cg_strbuf_addf(out, "  missing pairs (%zu):\n", cov.nmissing);
    for (size_t i = 0; i < cov.nmissing; i++) {
        pair_text(&line, t, &cov.missing[i]);
        if (json)
            json_array_append_new(jmissing, json_string(line.buf));
        else
            cg_strbuf_addf(out, "    %s\n", line.buf);
    }
    cg_strbuf_release(&line);
    if (json) {
        json_object_set_new(o, "cells", jcells);
        json_object_set_new(o, "covered", jpairs);
        json_object_set_new(o, "missing", jmissing);
        json_array_append_new(arr, o);
    }
    int rc = cov.nmissing ? 1 : 0;
    cg_env_release(&env);
    cg_coverage_release(&cov);
    free(selected);
    free(dims);
    return rc;
}

int cg_cmd_coverage(const cg_global *g0, int argc, char **argv)
{
    cg_global local = *g0, *g = &local;
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"tier", required_argument, NULL, 't'},
                                             {"tree", required_argument, NULL, 'T'},
                                             {"dims", required_argument, NULL, 'd'},
                                             {"json", no_argument, NULL, 'j'},
                                             CG_GLOBAL_LONGOPTS,
                                             {0}};
    const char *want_tier = NULL, *want_tree = NULL, *dims = NULL;
    bool json = false;
    int c;
    optind = 0; /* 0, not 1: GNU getopt then forgets main's "+" (stop at the first argument) */
    while ((c = cg_cli_getopt(g, argc, argv, "hqv", longopts)) != -1) {
        switch (c) {
        case 'h':
            puts("usage: cigen coverage [--tier NAME] [--tree NAME] [--dims A,B,...] [--json]\n\n"
                 "For each tier that selects cells (pairwise or an explicit list), prints how many\n"
                 "of the reachable pairs of values it covers (a pair is two values of two dimensions\n"
                 "that occur together in some live cell), the cells it selects, each pair it covers\n"
                 "with the first selected cell that has it (\"os=linux + cuda=cu90  by CELL\"), and the pairs it\n"
                 "misses.  Pairwise tiers are checked over their own dimensions, explicit lists over\n"
                 "every dimension of the tree (or --dims).\n\n"
                 "Exit status: 0 every reachable pair covered, 1 some pair missing, 2 error.");
            return 0;
        case 't': want_tier = optarg; break;
        case 'T': want_tree = optarg; break;
        case 'd': dims = optarg; break;
        case 'j': json = true; break;
        default: return CG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cigen: error: coverage takes no arguments ('%s')\n", cg_cli_shown(argv[optind]));
        return CG_EXIT_ERROR;
    }
    cg_project p;
    cg_project_init(&p);
    int rc = cg_cli_build(g, &p, false);
    if (rc != 0) {
        cg_project_release(&p);
        return rc;
    }
    cg_error err;
    cg_error_init(&err);
    cg_strbuf out = CG_STRBUF_INIT;
    json_t *arr = json ? json_array() : NULL;
    size_t reported = 0;
    bool missing = false;
    for (size_t ti = 0; ti < p.m.ntrees && rc == 0; ti++) {
        const cg_tree *t = p.m.trees[ti];
        if (want_tree && !cg_streq(t->name, want_tree))
            continue;
        for (size_t k = 0; k < t->ntiers && rc == 0; k++) {
            const cg_tier *tier = &t->tiers[k];
            if (tier->kind == CG_TIER_NONE) /* the tree takes no part: nothing to cover */
                continue;
            if (want_tier ? !cg_streq(tier->name, want_tier) : tier->kind == CG_TIER_ALL)
                continue;
            int r = report_tier(&p, ti, k, dims, json, arr, &out, &err);
            if (r < 0)
                rc = CG_EXIT_ERROR;
            missing = missing || r == 1;
            reported++;
        }
    }
    if (rc == 0 && reported == 0) {
        cg_error_plain(&err, want_tier ? "no tree has a tier named '%s'" : "no tier selects cells (nothing to check)%s",
                       want_tier ? want_tier : "");
        rc = CG_EXIT_ERROR;
    }
    if (rc == CG_EXIT_ERROR) {
        cg_cli_print_error(&err);
    } else {
        if (json) {
            char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            puts(s);
            free(s);
        } else {
            fputs(cg_strbuf_str(&out), stdout);
        }
        rc = missing ? CG_EXIT_DIFF : 0;
    }
    if (arr)
        json_decref(arr);
    cg_strbuf_release(&out);
    cg_error_release(&err);
    cg_project_release(&p);
    return rc;
}
