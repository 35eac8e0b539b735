/* env — the variables of one cell, resolved lazily with cycle detection.
 *
 * Variables: the tree's top-level `vars`, then each node's from the root down
 * (deeper wins), then zipped variables, then every `override` whose `when`
 * matches (in order; `when` is evaluated before any override applies).
 *
 * A cg_env owns its tables and the arena that holds expanded values: a value
 * returned by cg_env_get() is borrowed and valid until the next
 * cg_env_bind() (or cg_env_release()).  The tree and the bound cell are
 * borrowed and must outlive the env.
 */
#ifndef CIGEN_ENV_H
#define CIGEN_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "lang/tree.h"
#include "model/cell.h"

/* One step of a variable's history, for `explain`. */
typedef struct cg_var_step {
    const cg_vardecl *decl;
    const cg_override *override; /* set when an override applied it */
    const cg_phase *phase;       /* set when the job's phase's `vars` did */
} cg_var_step;

/* A list variable's items for the bound cell (`vars: {branches: [main, "/ci-.*\/"]}`). */
typedef struct cg_env_list {
    const char **v;
    size_t *len;
    bool *typed;
    size_t n;
} cg_env_list;

typedef struct cg_env {
    const cg_tree *t;
    const cg_cell *cell;
    const cg_vardecl **win;      /* [nnames]: the winning declaration */
    const cg_vardecl **base_win; /* [nnames]: the winners of the nodes and zips (before the
                                  * phase's vars and the overrides), for a tree whose
                                  * variables depend on the phase */
    const cg_phase *phase;       /* the phase whose `vars` apply (t->phase_vars only) */
    cg_env_list *list;           /* [nnames]: a list variable's items (n set when it is one) */
    bool *is_list;               /* [nnames] */
    const cg_override **win_ov;  /* [nnames]: the override that set it, if any */
    uint8_t *state;              /* [nnames]: 0 new, 1 expanding, 2 done, 3 unset for a group */
    const char **val;            /* [nnames] */
    size_t *len;
    bool *typed;
    const char *builtin[CG_NBUILTINS];
    bool builtin_typed[CG_NBUILTINS];
    size_t builtin_len[CG_NBUILTINS]; /* SIZE_MAX: not measured yet */
    size_t *dim_len;             /* [ndims], the bound cell's; SIZE_MAX: not measured yet */
    bool cell_pending;           /* {{ cell }} is made when first asked for */
    const char *const *starts_of; /* the `replace` table starts[] is for (its from list) */
    bool starts[256];            /* bytes that start one of its `replace` strings */
    const cg_override **applied; /* overrides that matched this cell */
    size_t napplied, applied_cap;
    cg_arena arena;
    cg_strbuf scratch;           /* where variables are expanded (nested ones
                                  * after their caller's text), then copied
                                  * to the arena: no allocation per value */
    int *expanding;              /* variables being expanded, outermost first */
    size_t nexpanding, expanding_cap;
    cg_error *err;               /* where expansion errors go */
} cg_env;

void cg_env_init(cg_env *env, const cg_tree *t, cg_error *err);
void cg_env_release(cg_env *env);
/* Binds the env to a cell: computes winners and applies overrides.
 * Returns -1 after recording an error. */
int cg_env_bind(cg_env *env, const cg_cell *cell);
/* Sets a built-in for what follows (job, phase, workflow, ...).  Setting the
 * phase applies its `vars` and the overrides naming it, when the tree has
 * any (t->phase_vars): values got before are then stale. */
void cg_env_set_builtin(cg_env *env, enum cg_builtin b, const char *value, bool typed);
/* {{ cell }} (the job name pattern without the phase) for the bound cell,
 * made when first asked for, unless it is set already. */
void cg_env_defer_cell(cg_env *env);
/* The value of `id`: 1 and the value when set, 0 when unset, -1 on error
 * (a cycle, or a variable using an unset name).  Bound to a group's cell
 * (cg_cell.group), a variable using a name the group lacks is unset. */
int cg_env_get(cg_env *env, int id, const char **s, size_t *n, bool *typed);

/* How cg_env_expand treats absent values:
 *   CG_EXPAND_PLAIN  only `{{ name? }}` may be absent; it gives nothing
 *   CG_EXPAND_NAME   every dimension (and phase) is optional and an absent one
 *                    drops the '_', '-' or '.' written before it (job names)
 *   CG_EXPAND_VAR    an absent `{{ name? }}` drops the separator before it,
 *                    a space included, as names do (variables) */
enum cg_expand_mode { CG_EXPAND_PLAIN, CG_EXPAND_NAME, CG_EXPAND_VAR };

/* Expands a parsed string (see cg_expand_mode).  `replace` rewrites
 * substituted values (job names).  Unset required names are errors at the
 * placeholder (found through `src`); in CG_EXPAND_VAR for a group's cell,
 * the result is 1 instead (the variable is unset for the group). */
int cg_env_expand(cg_env *env, const cg_pstr *s, enum cg_expand_mode mode, const cg_tree *replace,
                  cg_strbuf *out, const cg_src *src, const char *context);

/* The items of list variable `id` for the bound cell: 1 when it is set and
 * a list, 0 otherwise, -1 on error. */
int cg_env_get_list(cg_env *env, int id, const cg_env_list **out);

/* Whether the bound cell matches pattern p: every name matches one of the
 * globs given for it, and none of its negated globs (`["!@first", "!@last"]`:
 * neither the first nor the last); a list variable matches when one of its
 * items does. */
bool cg_pattern_matches(const cg_pattern *p, cg_env *env);

/* Where the value of `id` for the bound cell was written: a variable's
 * winning declaration, or the listed dimension value; file NULL when
 * unknown (built-ins, unset). */
cg_pos cg_env_value_pos(cg_env *env, int id);

/* The history of variable `id` for the bound cell (oldest first). */
size_t cg_env_history(cg_env *env, int id, cg_var_step *out, size_t max);

/* The most bytes one expanded value may hold (a variable, a template scalar). */
#define CG_MAX_VALUE_BYTES (1 << 20)

#endif
