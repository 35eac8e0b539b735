/* infer_pattern — the job-name pattern of a tree's phases, searched for
 * among its columns (see infer_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"
#include "lang/yaml_scalar.h"
#include "lang/yamlwrite.h"
#include "model/infer_impl.h"

const cg_infer_replace cg_infer_replaces[] = {
    {{NULL, NULL}, {NULL, NULL}, 0},
    {{".", NULL}, {"_", NULL}, 1},
    {{".", NULL}, {"", NULL}, 1},
    {{" ", NULL}, {"_", NULL}, 1},
    {{".", " "}, {"_", "_"}, 2},
    {{".", " "}, {"", "_"}, 2},
    {{" ", NULL}, {"-", NULL}, 1},
    {{".", " "}, {"-", "-"}, 2},
    {{".", NULL}, {"-", NULL}, 1},
};
const size_t cg_infer_nreplaces = sizeof cg_infer_replaces / sizeof cg_infer_replaces[0];

static void transform(cg_strbuf *out, const char *s, int rep)
{
    cg_strbuf_reset(out);
    for (; *s; s++) {
        bool done = false;
        for (size_t i = 0; i < cg_infer_replaces[rep].n && !done; i++)
            if (*s == cg_infer_replaces[rep].from[i][0]) {
                cg_strbuf_adds(out, cg_infer_replaces[rep].to[i]);
                done = true;
            }
        if (!done)
            cg_strbuf_addc(out, *s);
    }
}

typedef struct search {
    tplan *T;
    const wplan *W;
    size_t f;              /* the phase's index in T */
    int rep;
    size_t *cells;         /* the cells running the phase */
    size_t ncells;
    const char **names;    /* [ncells] */
    char ***tv;            /* [ncols][T->ncells]: transformed values */
    size_t ref;            /* the reference cell (index into cells) */
    int *items;            /* the pattern: >= 0 a column, < 0 -(char + 1) */
    size_t nitems, cap;
    long budget;
} search;

static bool is_sep(char c)
{
    return c == '_' || c == '-' || c == '.';
}

static bool dfs(search *S, size_t *off)
{
    if (--S->budget < 0)
        return false;
    const char *rn = S->names[S->ref];
    size_t ro = off[S->ref];
    if (!rn[ro]) {
        for (size_t k = 0; k < S->ncells; k++)
            if (S->names[k][off[k]])
                return false;
        return true;
    }
    size_t *next = cg_xcalloc(S->ncells, sizeof *next);
    cg_grow(&S->items, &S->cap, S->nitems + 1, sizeof *S->items);
    /* a column whose value is here, longest first */
    const tplan *T = S->T;
    size_t refcell = S->cells[S->ref];
    bool prev_sep = S->nitems > 0 && S->items[S->nitems - 1] < 0 && is_sep((char)(-S->items[S->nitems - 1] - 1));
    for (int pass = 0; pass < 2; pass++) {
        for (size_t c = 0; c < T->ncols; c++) {
            const char *rv = S->tv[c][refcell];
            if (!T->cols[c].dim_ok || !rv || !*rv)
                continue;
            size_t rl = strlen(rv);
            /* longest values first: the first pass takes those longer than 3 */
            if ((pass == 0) != (rl > 3))
                continue;
            if (strncmp(rn + ro, rv, rl) != 0)
                continue;
            bool ok = true;
            for (size_t k = 0; k < S->ncells && ok; k++) {
                const char *v = S->tv[c][S->cells[k]];
                if (!v) {
                    /* absent: the separator before it is dropped too */
                    ok = prev_sep;
                    next[k] = off[k] - 1;
                    continue;
                }
                size_t l = strlen(v);
                ok = l > 0 && strncmp(S->names[k] + off[k], v, l) == 0;
                next[k] = off[k] + l;
            }
            if (!ok)
                continue;
            S->items[S->nitems++] = (int)c;
            if (dfs(S, next)) {
                free(next);
                return true;
            }
            S->nitems--;
            cg_grow(&S->items, &S->cap, S->nitems + 1, sizeof *S->items);
        }
    }
    /* a separator and a column: both left out where the column is absent */
    if (is_sep(rn[ro])) {
        for (size_t c = 0; c < T->ncols; c++) {
            const char *rv = S->tv[c][refcell];
            if (!T->cols[c].dim_ok || !rv || !*rv)
                continue;
            size_t rl = strlen(rv);
            if (strncmp(rn + ro + 1, rv, rl) != 0)
                continue;
            bool ok = true, absent = false;
            for (size_t k = 0; k < S->ncells && ok; k++) {
                const char *v = S->tv[c][S->cells[k]];
                if (!v) {
                    absent = true;
                    next[k] = off[k];
                    continue;
                }
                size_t l = strlen(v);
                ok = S->names[k][off[k]] == rn[ro] && strncmp(S->names[k] + off[k] + 1, v, l) == 0;
                next[k] = off[k] + 1 + l;
            }
            if (!ok || !absent)
                continue;
            cg_grow(&S->items, &S->cap, S->nitems + 2, sizeof *S->items);
            S->items[S->nitems++] = -((int)(unsigned char)rn[ro] + 1);
            S->items[S->nitems++] = (int)c;
            if (dfs(S, next)) {
                free(next);
                return true;
            }
            S->nitems -= 2;
        }
    }
    /* the literal character */
    char ch = rn[ro];
    bool ok = ch != '{' && ch != '}';
    for (size_t k = 0; k < S->ncells && ok; k++) {
        ok = S->names[k][off[k]] == ch;
        next[k] = off[k] + 1;
    }
    if (ok) {
        S->items[S->nitems++] = -((int)(unsigned char)ch + 1);
        if (dfs(S, next)) {
            free(next);
            return true;
        }
        S->nitems--;
    }
    free(next);
    return false;
}

static void pattern_text(cg_strbuf *out, const tplan *T, const int *items, size_t n)
{
    cg_strbuf_reset(out);
    for (size_t i = 0; i < n; i++) {
        if (items[i] >= 0)
            cg_strbuf_addf(out, "{{ %s }}", T->cols[items[i]].name);
        else
            cg_strbuf_addc(out, (char)(-items[i] - 1));
    }
}

/* The job-name patterns of every phase, with one `replace` for all. */
bool cg_infer_find_patterns(tplan *T, const wplan *W)
{
    for (int rep = 0; rep < (int)cg_infer_nreplaces; rep++) {
        char ***tv = cg_xcalloc(T->ncols + 1, sizeof *tv);
        cg_strbuf tmp = CG_STRBUF_INIT;
        for (size_t c = 0; c < T->ncols; c++) {
            tv[c] = cg_xcalloc(T->ncells, sizeof **tv);
            for (size_t k = 0; k < T->ncells; k++)
                if (T->cols[c].v[k] && *T->cols[c].v[k]) {
                    transform(&tmp, T->cols[c].v[k], rep);
                    tv[c][k] = cg_xstrdup(tmp.buf ? tmp.buf : "");
                }
        }
        cg_strbuf_release(&tmp);
        bool all = true;
        bool *used = cg_xcalloc(T->ncols + 1, sizeof *used);
        for (size_t f = 0; f < T->nfams && all; f++) {
            search S = {T, W, f, rep, NULL, 0, NULL, tv, 0, NULL, 0, 0, 200000};
            S.cells = cg_xcalloc(T->ncells, sizeof *S.cells);
            S.names = cg_xcalloc(T->ncells, sizeof *S.names);
            size_t best = 0;
            for (size_t c = 0; c < T->ncells; c++) {
                long e = T->fc[f * T->ncells + c];
                if (e < 0)
                    continue;
                size_t present = 0;
                for (size_t k = 0; k < T->ncols; k++)
                    present += T->cols[k].dim_ok && tv[k][c] != NULL;
                if (present > best || S.ncells == 0) {
                    best = present;
                    S.ref = S.ncells;
                }
                S.cells[S.ncells] = c;
                S.names[S.ncells++] = W->e[e].name;
            }
            size_t *off = cg_xcalloc(S.ncells + 1, sizeof *off);
            all = dfs(&S, off);
            if (all) {
                pattern_text(&T->pattern[f], T, S.items, S.nitems);
                for (size_t i = 0; i < S.nitems; i++)
                    if (S.items[i] >= 0)
                        used[S.items[i]] = true;
            }
            free(off);
            free(S.cells);
            free(S.names);
            free(S.items);
        }
        /* the names must use no replace they do not need: a value with a dot
         * kept whole is found with rep 0 first */
        for (size_t c = 0; c < T->ncols; c++) {
            for (size_t k = 0; k < T->ncells; k++)
                free(tv[c][k]);
            free(tv[c]);
        }
        free(tv);
        if (all) {
            T->replace = rep;
            for (size_t c = 0; c < T->ncols; c++)
                T->cols[c].dim = used[c];
            free(used);
            return true;
        }
        free(used);
    }
    return false;
}
