#include "model/tiers.h"

#include <stdlib.h>

#include "model/pairwise.h"

int cg_tiers_assign(cg_tree *t, cg_cells *cells, cg_env *env, cg_error *err)
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
        bool *pinned = tier->kind == CG_TIER_PAIRWISE ? cg_xcalloc(cells->n + 1, sizeof *pinned) : NULL;
        for (size_t k = 0; k < tier->ncells; k++) {
            cg_pattern *p = tier->cells[k];
            const cg_cell *removed = NULL;
            for (size_t c = 0; c < cells->n; c++) {
                cg_cell *cell = &cells->v[c];
                if (cg_env_bind(env, cell) != 0) {
                    free(pinned);
                    return -1;
                }
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
