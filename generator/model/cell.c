#include "model/cell.h"

#include <stdlib.h>
#include <string.h>

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

bool cg_cell_value_ends(const cg_cell *cell, int dim, const char **first, const char **last)
{
    if (!cell->values[dim])
        return false;
    for (const cg_tnode *n = cell->leaf; n; n = n->parent) {
        for (size_t f = 0; f < n->nfans; f++)
            if (n->fans[f].dim == dim) {
                *first = n->fans[f].values[0];
                *last = n->fans[f].values[n->fans[f].n - 1];
                return true;
            }
        if (n->zip)
            for (size_t c = 0; c < n->zip->nnames; c++)
                if (n->zip->ids[c] == dim) {
                    *first = n->zip->cells[c].raw;
                    *last = n->zip->cells[(n->zip->n - 1) * n->zip->nnames + c].raw;
                    return true;
                }
    }
    return false;
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

void cg_cells_release(cg_cells *cells)
{
    free(cells->v);
    memset(cells, 0, sizeof *cells);
}
