#include "model/tiers.h"

#include <stdlib.h>
#include <string.h>

#include "model/pairwise.h"

/* ---- the committed selection: the header's `# cigen-tier:` lines ---- */

void cg_tier_prev_init(cg_tier_prev *prev)
{
    memset(prev, 0, sizeof *prev);
    cg_map_init(&prev->cells);
    cg_map_init(&prev->tiers);
    cg_pool_init(&prev->pool);
}

void cg_tier_prev_release(cg_tier_prev *prev)
{
    cg_map_release(&prev->cells);
    cg_map_release(&prev->tiers);
    cg_pool_release(&prev->pool);
    free(prev->keys);
    memset(prev, 0, sizeof *prev);
}

/* Bytes that would break the line or its fields are written %XX. */
static void enc(cg_strbuf *out, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c <= ' ' || *c == 0x7f || *c == '%' || *c == ',' || *c == '=')
            cg_strbuf_addf(out, "%%%02X", *c);
        else
            cg_strbuf_addc(out, (char)*c);
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The key as a person reads it: %XX decoded (a bad escape is kept). */
static char *decode(const char *s)
{
    cg_strbuf out = CG_STRBUF_INIT;
    for (; *s; s++) {
        int hi, lo;
        if (*s == '%' && (hi = hexval(s[1])) >= 0 && (lo = hexval(s[2])) >= 0) {
            cg_strbuf_addc(&out, (char)(hi * 16 + lo));
            s += 2;
        } else {
            cg_strbuf_addc(&out, *s);
        }
    }
    return cg_strbuf_detach(&out, NULL);
}

static void cell_key(const cg_tree *t, const cg_cell *c, cg_strbuf *out)
{
    bool first = true;
    for (size_t d = 0; d < t->ndims; d++) {
        if (!c->values[d])
            continue;
        if (!first)
            cg_strbuf_addc(out, ',');
        enc(out, t->dims[d]);
        cg_strbuf_addc(out, '=');
        enc(out, c->values[d]);
        first = false;
    }
}

void cg_tier_line(const cg_tree *t, const cg_tier *tier, const cg_cell *c, cg_strbuf *out)
{
    cg_strbuf_adds(out, CG_TIER_LINE);
    enc(out, t->name);
    cg_strbuf_addc(out, ' ');
    enc(out, tier->name);
    cg_strbuf_addc(out, ' ');
    cell_key(t, c, out);
    cg_strbuf_addc(out, '\n');
}

void cg_tier_prev_parse(cg_tier_prev *prev, const char *text, size_t len)
{
    static const char digest_key[] = "# cigen-digest: ";
    static const char key[] = CG_TIER_LINE;
    cg_strbuf k = CG_STRBUF_INIT;
    for (size_t i = 0; i < len && text[i] == '#';) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *line = text + i;
        size_t n = end - i;
        i = nl ? end + 1 : len;
        if (n >= sizeof digest_key - 1 && memcmp(line, digest_key, sizeof digest_key - 1) == 0)
            break;
        if (n <= sizeof key - 1 || memcmp(line, key, sizeof key - 1) != 0)
            continue;
        /* three fields, one space apart: tree, tier, cell */
        const char *f = line + sizeof key - 1, *stop = line + n;
        const char *s1 = memchr(f, ' ', (size_t)(stop - f));
        const char *s2 = s1 ? memchr(s1 + 1, ' ', (size_t)(stop - s1 - 1)) : NULL;
        if (!s2 || s1 == f || s2 == s1 + 1 || s2 + 1 == stop || memchr(s2 + 1, ' ', (size_t)(stop - s2 - 1)) ||
            memchr(f, '\0', (size_t)(stop - f)))
            continue;
        cg_strbuf_reset(&k);
        cg_strbuf_add(&k, f, (size_t)(s2 - f));
        k.buf[s1 - f] = '\x1f';
        if (!cg_map_has(&prev->tiers, k.buf))
            cg_map_put(&prev->tiers, cg_intern(&prev->pool, k.buf), (void *)1);
        cg_strbuf_addc(&k, '\x1f');
        cg_strbuf_add(&k, s2 + 1, (size_t)(stop - s2 - 1));
        if (cg_map_has(&prev->cells, k.buf))
            continue;
        const char *kk = cg_intern(&prev->pool, k.buf);
        cg_grow(&prev->keys, &prev->cap, prev->n + 1, sizeof *prev->keys);
        prev->keys[prev->n++] = kk;
        cg_map_put(&prev->cells, kk, (void *)prev->n);
    }
    cg_strbuf_release(&k);
}

void cg_tier_changes_release(cg_tier_changes *ch)
{
    for (size_t i = 0; i < ch->n; i++) {
        free(ch->v[i].cell);
        free(ch->v[i].why);
    }
    free(ch->v);
    memset(ch, 0, sizeof *ch);
}

static void add_change(cg_tier_changes *ch, const cg_tree *t, const cg_tier *tier, char *cell, bool entered,
                       cg_strbuf *why)
{
    cg_grow(&ch->v, &ch->cap, ch->n + 1, sizeof *ch->v);
    ch->v[ch->n++] = (cg_tier_change){t->name, tier->name, cell, cg_strbuf_detach(why, NULL), entered};
}

/* Why cell c is in the tier: a pair of its values no other selected cell has. */
static void entered_why(const cg_tree *t, const cg_tier *tier, const cg_cells *cells, const bool *selected,
                        const bool *pinned, size_t c, cg_strbuf *why)
{
    if (pinned[c]) {
        cg_strbuf_adds(why, "pinned");
        return;
    }
    const cg_cell *x = &cells->v[c];
    for (size_t i = 0; i < tier->ndims; i++)
        for (size_t j = i + 1; j < tier->ndims; j++) {
            int d1 = tier->dims[i] < tier->dims[j] ? tier->dims[i] : tier->dims[j];
            int d2 = tier->dims[i] < tier->dims[j] ? tier->dims[j] : tier->dims[i];
            if (!x->values[d1] || !x->values[d2])
                continue;
            size_t n = 0;
            for (size_t o = 0; o < cells->n && n < 2; o++)
                n += selected[o] && cells->v[o].values[d1] && cells->v[o].values[d2] &&
                     cg_streq(cells->v[o].values[d1], x->values[d1]) &&
                     cg_streq(cells->v[o].values[d2], x->values[d2]);
            if (n == 1) {
                cg_strbuf_addf(why, "the only cell of the tier with %s=%s + %s=%s", t->dims[d1], x->values[d1],
                               t->dims[d2], x->values[d2]);
                return;
            }
        }
    cg_strbuf_adds(why, "chosen by the pairwise selection");
}

/* Starts the tier from its committed cells and records what changed. */
static void pairwise_tier(const cg_tree *t, const cg_tier *tier, cg_cells *cells, const bool *pinned,
                          const double *cost, bool *selected, const cg_tier_prev *prev, cg_tier_changes *changes)
{
    cg_strbuf k = CG_STRBUF_INIT;
    enc(&k, t->name);
    cg_strbuf_addc(&k, '\x1f');
    enc(&k, tier->name);
    bool recorded = prev && cg_map_has(&prev->tiers, k.buf);
    size_t base = k.len;
    bool *was = NULL;
    size_t *cell_of = NULL; /* [prev->n]: the cell (+1) each recorded key names */
    if (recorded) {
        was = cg_xcalloc(cells->n + 1, sizeof *was);
        cell_of = cg_xcalloc(prev->n + 1, sizeof *cell_of);
        for (size_t c = 0; c < cells->n; c++) {
            cg_strbuf_truncate(&k, base);
            cg_strbuf_addc(&k, '\x1f');
            cell_key(t, &cells->v[c], &k);
            size_t at = (size_t)cg_map_get(&prev->cells, k.buf);
            if (!at)
                continue;
            if (!cell_of[at - 1])
                cell_of[at - 1] = c + 1;
            was[c] = cells->v[c].status == CG_CELL_LIVE;
        }
    }
    cg_pairwise_select(t, cells, tier->dims, tier->ndims, pinned, prev && prev->fresh ? NULL : was, cost, selected);
    if (recorded && changes) {
        cg_strbuf why = CG_STRBUF_INIT, d = CG_STRBUF_INIT;
        for (size_t c = 0; c < cells->n; c++) {
            if (!selected[c] || was[c])
                continue;
            entered_why(t, tier, cells, selected, pinned, c, &why);
            cg_strbuf_reset(&d);
            cg_cell_describe(t, &cells->v[c], &d);
            add_change(changes, t, tier, cg_strbuf_detach(&d, NULL), true, &why);
        }
        cg_strbuf_truncate(&k, base);
        cg_strbuf_addc(&k, '\x1f');
        for (size_t i = 0; i < prev->n; i++) {
            if (strncmp(prev->keys[i], k.buf, k.len) != 0)
                continue;
            size_t c = cell_of[i];
            if (c && selected[c - 1])
                continue;
            const cg_cell *x = c ? &cells->v[c - 1] : NULL;
            if (!x) {
                cg_strbuf_adds(&why, "the tree no longer has this cell");
            } else if (x->status != CG_CELL_LIVE) {
                const cg_pos *pos = x->removed_by ? &x->removed_by->pos : &x->leaf->pos;
                cg_strbuf_addf(&why, "removed by %s at %s:%u",
                               x->removed_by ? x->removed_by->kind : "a filter",
                               pos->file ? pos->file : t->file, (unsigned)pos->line);
            } else {
                cg_strbuf_adds(&why, "the other cells of the tier cover its pairs");
            }
            add_change(changes, t, tier, decode(prev->keys[i] + k.len), false, &why);
        }
        cg_strbuf_release(&why);
        cg_strbuf_release(&d);
    }
    free(was);
    free(cell_of);
    cg_strbuf_release(&k);
}

int cg_tiers_assign(cg_tree *t, cg_cells *cells, cg_env *env, const cg_tier_prev *prev, cg_tier_changes *changes,
                    cg_error *err)
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
        pairwise_tier(t, tier, cells, pinned, cost, selected, prev, changes);
        for (size_t c = 0; c < cells->n; c++)
            if (selected[c])
                cells->v[c].tiers |= bit;
        free(selected);
        free(cost);
        free(pinned);
    }
    return 0;
}
