#include "model/pairwise.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Pairs are numbered; each live cell has the list of its pairs' numbers. */
typedef struct pairset {
    cg_pair *pairs;
    size_t n, cap;
    cg_map index;          /* "d1\x1fd2\x1fv1\x1fv2" -> number + 1 */
    cg_pool pool;
    size_t **of_cell;      /* [ncells]: pair numbers, NULL for removed cells */
    size_t *count;         /* [ncells] */
} pairset;

static void pairset_build(pairset *ps, const cg_tree *t, const cg_cells *cells, const int *dims, size_t ndims)
{
    memset(ps, 0, sizeof *ps);
    cg_map_init(&ps->index);
    cg_pool_init(&ps->pool);
    ps->of_cell = cg_xcalloc(cells->n + 1, sizeof *ps->of_cell);
    ps->count = cg_xcalloc(cells->n + 1, sizeof *ps->count);
    cg_strbuf key = CG_STRBUF_INIT;
    (void)t;
    for (size_t c = 0; c < cells->n; c++) {
        const cg_cell *cell = &cells->v[c];
        if (cell->status != CG_CELL_LIVE)
            continue;
        ps->of_cell[c] = cg_xmalloc((ndims * ndims / 2 + 1) * sizeof **ps->of_cell);
        for (size_t i = 0; i < ndims; i++) {
            for (size_t j = i + 1; j < ndims; j++) {
                int d1 = dims[i] < dims[j] ? dims[i] : dims[j];
                int d2 = dims[i] < dims[j] ? dims[j] : dims[i];
                const char *v1 = cell->values[d1], *v2 = cell->values[d2];
                if (!v1 || !v2)
                    continue;
                cg_strbuf_reset(&key);
                cg_strbuf_addf(&key, "%d\x1f%d\x1f%s\x1f%s", d1, d2, v1, v2);
                size_t k = (size_t)cg_map_get(&ps->index, key.buf);
                if (!k) {
                    cg_grow(&ps->pairs, &ps->cap, ps->n + 1, sizeof *ps->pairs);
                    ps->pairs[ps->n] = (cg_pair){d1, d2, v1, v2};
                    cg_map_put(&ps->index, cg_intern(&ps->pool, key.buf), (void *)(ps->n + 1));
                    k = ++ps->n;
                }
                ps->of_cell[c][ps->count[c]++] = k - 1;
            }
        }
    }
    cg_strbuf_release(&key);
}

static void pairset_release(pairset *ps, size_t ncells)
{
    for (size_t c = 0; c < ncells; c++)
        free(ps->of_cell[c]);
    free(ps->of_cell);
    free(ps->count);
    free(ps->pairs);
    cg_map_release(&ps->index);
    cg_pool_release(&ps->pool);
}

/* A candidate of the greedy cover and its last computed key. */
typedef struct cand {
    double score;
    size_t extra, c;
} cand;

/* Whether a is chosen before b: the higher score, then more extra pairs,
 * then the earlier cell (the order of a scan that keeps the first best). */
static bool better(const cand *a, const cand *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    if (a->extra != b->extra)
        return a->extra > b->extra;
    return a->c < b->c;
}

static void heap_push(cand *h, size_t *n, cand x)
{
    size_t i = (*n)++;
    while (i > 0 && better(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static cand heap_pop(cand *h, size_t *n)
{
    cand top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const cand *best = &x;
        if (l < *n && better(&h[l], best))
            m = l, best = &h[l];
        if (r < *n && better(&h[r], best))
            m = r;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* Greedy cover: pinned cells, then the cell with the most uncovered pairs
 * per unit of cost (`weighted`) or in all (not), ties to the cell that adds
 * the most pairs over every dimension, then to the earlier cell.
 *
 * Lazily: a cell's gain and extra only fall as cells are chosen, so a key
 * computed earlier bounds the current one from above; the cell on top of
 * the heap is taken when its recomputed key still beats every other bound,
 * else it goes back with its new key.  The same cells come out as from a
 * scan of every cell per choice, in time near-linear in the cells (a
 * pairwise tier over 300,000 cells took over a minute that way). */
static void greedy(const cg_cells *cells, const pairset *ps, const pairset *all, const bool *pinned,
                   const bool *prev, const double *cost, bool weighted, bool *selected)
{
    bool *covered = cg_xcalloc(ps->n + 1, sizeof *covered);
    bool *covered_all = cg_xcalloc(all->n + 1, sizeof *covered_all);
    size_t left = ps->n;
    memset(selected, 0, cells->n * sizeof *selected);
    /* pinned cells, then the previous selection's, in cell order (either
     * way the same set) */
    for (size_t c = 0; c < cells->n; c++) {
        if (!((pinned && pinned[c]) || (prev && prev[c])) || !ps->of_cell[c])
            continue;
        selected[c] = true;
        for (size_t k = 0; k < ps->count[c]; k++)
            if (!covered[ps->of_cell[c][k]]) {
                covered[ps->of_cell[c][k]] = true;
                left--;
            }
        for (size_t k = 0; k < all->count[c]; k++)
            covered_all[all->of_cell[c][k]] = true;
    }
    cand *heap = cg_xmalloc((cells->n + 1) * sizeof *heap);
    size_t nheap = 0;
    for (size_t c = 0; c < cells->n && left > 0; c++)
        if (!selected[c] && ps->of_cell[c])
            heap_push(heap, &nheap, (cand){INFINITY, 0, c});
    while (left > 0 && nheap > 0) {
        cand top = heap_pop(heap, &nheap);
        size_t c = top.c, gain = 0, extra = 0;
        for (size_t k = 0; k < ps->count[c]; k++)
            gain += !covered[ps->of_cell[c][k]];
        if (!gain)
            continue; /* it never gains again */
        for (size_t k = 0; k < all->count[c]; k++)
            extra += !covered_all[all->of_cell[c][k]];
        cand now = {weighted && cost ? (double)gain / cost[c] : (double)gain, extra, c};
        if (nheap > 0 && better(&heap[0], &now)) {
            heap_push(heap, &nheap, now);
            continue;
        }
        selected[c] = true;
        for (size_t k = 0; k < ps->count[c]; k++)
            if (!covered[ps->of_cell[c][k]]) {
                covered[ps->of_cell[c][k]] = true;
                left--;
            }
        for (size_t k = 0; k < all->count[c]; k++)
            covered_all[all->of_cell[c][k]] = true;
    }
    free(heap);
    free(covered);
    free(covered_all);
}

typedef struct costed {
    bool prev;
    double cost;
    size_t c;
} costed;

/* New cells before the previous selection's, then the most expensive
 * first, later cells first among equals (a total order: the cells are
 * distinct). */
static int prune_order(const void *pa, const void *pb)
{
    const costed *a = pa, *b = pb;
    if (a->prev != b->prev)
        return a->prev ? 1 : -1;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return a->c > b->c ? -1 : a->c < b->c ? 1 : 0;
}

/* Drops cells whose pairs the others cover too: new cells before the
 * previous selection's, the most expensive first (later cells first among
 * equals); pinned cells stay. */
static void prune(const cg_cells *cells, const pairset *ps, const bool *pinned, const bool *prev,
                  const double *cost, bool *selected)
{
    size_t *times = cg_xcalloc(ps->n + 1, sizeof *times);
    size_t *order = cg_xmalloc((cells->n + 1) * sizeof *order), n = 0;
    for (size_t c = 0; c < cells->n; c++) {
        if (!selected[c])
            continue;
        for (size_t k = 0; k < ps->count[c]; k++)
            times[ps->of_cell[c][k]]++;
        if (!pinned || !pinned[c])
            order[n++] = c;
    }
    costed *sorted = cg_xmalloc((n + 1) * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = (costed){prev && prev[order[i]], cost ? cost[order[i]] : 1, order[i]};
    qsort(sorted, n, sizeof *sorted, prune_order);
    for (size_t i = 0; i < n; i++)
        order[i] = sorted[i].c;
    free(sorted);
    for (size_t i = 0; i < n; i++) {
        size_t c = order[i];
        bool needed = false;
        for (size_t k = 0; k < ps->count[c] && !needed; k++)
            needed = times[ps->of_cell[c][k]] < 2;
        if (needed)
            continue;
        selected[c] = false;
        for (size_t k = 0; k < ps->count[c]; k++)
            times[ps->of_cell[c][k]]--;
    }
    free(times);
    free(order);
}

static double total(const cg_cells *cells, const bool *selected, const double *cost, size_t *count)
{
    double sum = 0;
    *count = 0;
    for (size_t c = 0; c < cells->n; c++)
        if (selected[c]) {
            sum += cost ? cost[c] : 1;
            (*count)++;
        }
    return sum;
}

void cg_pairwise_select(const cg_tree *t, const cg_cells *cells, const int *dims, size_t ndims,
                        const bool *pinned, const bool *prev, const double *cost, bool *selected)
{
    pairset ps, all;
    pairset_build(&ps, t, cells, dims, ndims);
    int *every = cg_xmalloc((t->ndims + 1) * sizeof *every);
    for (size_t d = 0; d < t->ndims; d++)
        every[d] = (int)d;
    pairset_build(&all, t, cells, every, t->ndims);
    free(every);
    /* two greedy runs, each pruned; the cheaper wins (then the smaller) */
    bool *other = cg_xcalloc(cells->n + 1, sizeof *other);
    greedy(cells, &ps, &all, pinned, prev, cost, true, selected);
    prune(cells, &ps, pinned, prev, cost, selected);
    if (cost) {
        greedy(cells, &ps, &all, pinned, prev, cost, false, other);
        prune(cells, &ps, pinned, prev, cost, other);
        size_t na, nb;
        double a = total(cells, selected, cost, &na), b = total(cells, other, cost, &nb);
        if (b < a || (b == a && nb < na))
            memcpy(selected, other, cells->n * sizeof *selected);
    }
    free(other);
    pairset_release(&ps, cells->n);
    pairset_release(&all, cells->n);
}

void cg_coverage_compute(const cg_tree *t, const cg_cells *cells, const int *dims, size_t ndims,
                         const bool *selected, cg_coverage *cov)
{
    memset(cov, 0, sizeof *cov);
    pairset ps;
    pairset_build(&ps, t, cells, dims, ndims);
    bool *covered = cg_xcalloc(ps.n + 1, sizeof *covered);
    size_t *by = cg_xcalloc(ps.n + 1, sizeof *by);
    for (size_t c = 0; c < cells->n; c++)
        if (selected[c] && ps.of_cell[c])
            for (size_t k = 0; k < ps.count[c]; k++)
                if (!covered[ps.of_cell[c][k]]) {
                    covered[ps.of_cell[c][k]] = true;
                    by[ps.of_cell[c][k]] = c;
                }
    cov->reachable = ps.n;
    cov->pairs = cg_xcalloc(ps.n + 1, sizeof *cov->pairs);
    cov->by = cg_xcalloc(ps.n + 1, sizeof *cov->by);
    for (size_t i = 0; i < ps.n; i++) {
        if (covered[i]) {
            cov->pairs[cov->covered] = ps.pairs[i];
            cov->by[cov->covered++] = by[i];
            continue;
        }
        cov->missing = cg_xrealloc(cov->missing, (cov->nmissing + 1) * sizeof *cov->missing);
        cov->missing[cov->nmissing++] = ps.pairs[i];
    }
    free(covered);
    free(by);
    pairset_release(&ps, cells->n);
}

void cg_coverage_release(cg_coverage *cov)
{
    free(cov->missing);
    free(cov->pairs);
    free(cov->by);
    memset(cov, 0, sizeof *cov);
}
