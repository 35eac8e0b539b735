#include "base/graph.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

bool cg_graph_find_cycle(const cg_graph *g, cg_cycle *out)
{
    memset(out, 0, sizeof *out);
    /* colours: 0 not seen, 1 on the current path, 2 done */
    unsigned char *colour = cg_xcalloc(g->n + 1, sizeof *colour);
    size_t *stack = cg_xmalloc((g->n + 1) * sizeof *stack), *next = cg_xcalloc(g->n + 1, sizeof *next);
    bool found = false;
    for (size_t s = 0; s < g->n && !found; s++) {
        if (colour[s])
            continue;
        size_t depth = 0;
        stack[depth++] = s;
        colour[s] = 1;
        while (depth && !found) {
            size_t u = stack[depth - 1];
            if (next[u] >= g->degree(g->ctx, u)) {
                colour[u] = 2;
                depth--;
                continue;
            }
            size_t i = next[u]++;
            ptrdiff_t w = g->target(g->ctx, u, i);
            if (w < 0)
                continue;
            if (colour[w] == 1) {
                size_t from = 0;
                while (stack[from] != (size_t)w)
                    from++;
                out->len = depth - from;
                out->nodes = cg_xmalloc(out->len * sizeof *out->nodes);
                memcpy(out->nodes, stack + from, out->len * sizeof *out->nodes);
                out->edge = i;
                found = true;
            } else if (colour[w] == 0) {
                colour[w] = 1;
                stack[depth++] = (size_t)w;
            }
        }
    }
    free(colour);
    free(stack);
    free(next);
    return found;
}

void cg_cycle_release(cg_cycle *c)
{
    free(c->nodes);
    memset(c, 0, sizeof *c);
}

void cg_cycle_describe(const cg_cycle *c, const char *(*name)(const void *ctx, size_t node), const void *ctx,
                       cg_strbuf *out)
{
    for (size_t i = 0; i < c->len; i++)
        cg_strbuf_addf(out, "%s -> ", name(ctx, c->nodes[i]));
    if (c->len)
        cg_strbuf_adds(out, name(ctx, c->nodes[0]));
}
