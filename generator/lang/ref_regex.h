/* ref_regex — the /regex/ values of branch and tag filters.
 *
 * CircleCI reads a filter value written `/.../` as a Java regular expression
 * (java.util.regex) that must match the whole branch or tag name.  cigen
 * evaluates filters itself (list --branch, select, the special-PR checks)
 * with PCRE2, anchored at both ends, in UTF mode, within compile and match
 * limits (so any regex costs bounded time and memory).  A gate reads the
 * Java regex first and refuses, where the sources are loaded, what Java
 * refuses (CG_REGEX_INVALID) and what PCRE2 would read otherwise than Java
 * (CG_REGEX_UNSUPPORTED: inline flags, \b \B, \p{..}, \X, \N{..}, \Q..\E,
 * nested classes and &&, a repetition of an anchor, of nothing or of what
 * can match nothing, a possessive group, ...); the rest it hands to PCRE2
 * spelled so that PCRE2 reads it as Java does ('.', '$', '\Z' and '\R' as
 * Java's line terminators say, backreferences by Java's rule, characters by
 * their code).  docs/tree-language.md lists what is taken.
 */
#ifndef CIGEN_REF_REGEX_H
#define CIGEN_REF_REGEX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/map.h"
#include "base/strbuf.h"
#include "lang/yamlload.h"

enum { CG_REGEX_OK = 0, CG_REGEX_INVALID = -1, CG_REGEX_UNSUPPORTED = -2, CG_REGEX_LIMIT = -3 };

/* Whether a filter value is a /regex/ rather than a name. */
bool cg_ref_is_regex(const char *value);

/* Appends to `out` the PCRE2 pattern that matches, anchored at both ends
 * and in UTF mode, exactly what the Java regex src[0..n) matches.  On
 * failure appends nothing, returns CG_REGEX_INVALID or CG_REGEX_UNSUPPORTED
 * and says what in `why` (a phrase naming the construct, e.g. "'(?i'
 * (inline flags)").  *units_behind (when not NULL): the regex has a
 * lookbehind whose length Java counts in UTF-16 units, not in characters,
 * which it reads otherwise on a name holding a character past U+FFFF. */
int cg_regex_java_to_pcre2(const char *src, size_t n, cg_strbuf *out, cg_strbuf *why, bool *units_behind);

/* One filter value ready to match names: a name, or a /regex/ compiled. */
typedef struct cg_ref_value cg_ref_value;

/* Prepares a filter value; a /regex/ cigen cannot evaluate is an error at
 * `pos` ("branch" or "tag" in `kind` names the filter in the message). */
cg_ref_value *cg_ref_value_new(const char *value, const char *kind, const cg_pos *pos, cg_error *err);
void cg_ref_value_free(cg_ref_value *v);
/* 1 when `name` matches, 0 when not, -1 when cigen cannot tell: matching
 * passed a limit (a regex that backtracks without end: Java may take
 * hours), or the name holds a character past U+FFFF and the regex a
 * lookbehind Java measures in UTF-16 units. */
int cg_ref_value_match(const cg_ref_value *v, const char *name);

/* The filters of workflow entries in a doc: `filters:` (at `path`, value
 * `filters`; NULL: none) and every entry of `jobs` and of `triggers` of a
 * `workflows:` section, with their /regex/ values checked as above.  Only
 * the values are checked, not the shape (lint's and the templates' job).
 * In a template (`templated`) a value with a placeholder ({{ }}) is known
 * only once rendered, and left to whoever evaluates it (cg_ref_cache_match
 * says when it cannot). */
int cg_ref_filters_check(const cg_doc *doc, const char *path, json_t *filters, bool templated, cg_error *err);
int cg_ref_entries_check(const cg_doc *doc, const char *path, json_t *jobs, cg_error *err);
int cg_ref_workflows_check(const cg_doc *doc, const char *path, json_t *workflows, cg_error *err);

/* Values met while reading a written config (list --branch), each prepared
 * once however many entries repeat it. */
typedef struct cg_ref_cached {
    char *text;
    cg_ref_value *value;   /* NULL: a /regex/ cigen cannot evaluate */
} cg_ref_cached;
typedef struct cg_ref_cache {
    cg_map index;          /* text -> entry of v + 1 */
    cg_ref_cached *v;
    size_t n, cap;
} cg_ref_cache;

void cg_ref_cache_init(cg_ref_cache *c);
void cg_ref_cache_release(cg_ref_cache *c);
/* 1 when `name` matches `value`, 0 when not, -1 for a /regex/ cigen cannot
 * evaluate (or not on this name, past a match limit). */
int cg_ref_cache_match(cg_ref_cache *c, const char *value, const char *name);

#endif
