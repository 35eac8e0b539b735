/* query — selecting jobs from the command line.
 *
 *   os=linux,cuda=cu1*      every term must match (a glob; "!glob" negates)
 *   binary_linux_*          a term without '=' matches the job name
 *   flags=-O2\,-g           a backslash escapes the next character: a comma
 *                           (or '*', '?', '[', '\\') of a value, matched literally
 *
 * Names: a dimension or variable of the job's tree, or `phase`, `tree`,
 * `workflow`, `tier`, `job`.  Several queries added to one cg_query must all
 * match (`--where A --where B`); cg_query_any() instead asks for any one
 * (`--only A --only B`).
 */
#ifndef CIGEN_QUERY_H
#define CIGEN_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

typedef struct cg_qterm {
    char *name;        /* NULL: the job name */
    char *glob;
    bool negate;
} cg_qterm;

typedef struct cg_qgroup {      /* one command-line argument: all terms */
    cg_qterm *terms;
    size_t n;
    char *text;
} cg_qgroup;

typedef struct cg_query {
    cg_qgroup *groups;
    size_t n, cap;
} cg_query;

void cg_query_init(cg_query *q);
void cg_query_release(cg_query *q);
/* Appends `value` as a pattern that matches exactly it: '\\' before each
 * of \\ , * ? [ and a leading '!'. */
void cg_query_quote(cg_strbuf *out, const char *value);
/* Adds "a=x,b=y" as a group; -1 when malformed. */
int cg_query_add(cg_query *q, const char *text);
/* Rejects names no tree knows (with a suggestion), at `pos` when the
 * query was read from a file (NULL or no file: a command-line query), and
 * a term without '=' after a NAME=GLOB one that names no job ("os=a,b":
 * most likely a value holding a comma, written "os=a\,b"). */
int cg_query_check_names(const cg_query *q, const cg_model *p, const cg_pos *pos, cg_error *err);
/* 1 when every group matches the job (env bound to it), 0 when not, -1 on error. */
int cg_query_match(const cg_query *q, const cg_model *p, const cg_job *j, cg_env *env);
/* 1 when one group matches. */
int cg_query_any(const cg_query *q, const cg_model *p, const cg_job *j, cg_env *env);
int cg_qgroup_match(const cg_qgroup *g, const cg_model *p, const cg_job *j, cg_env *env);
/* Whether a static entry (by its name or the job it invokes, and its
 * workflow) matches; a term on anything else never does. */
bool cg_qgroup_match_static(const cg_qgroup *g, const char *name, const char *invokes, const char *workflow,
                            json_t *entry);

#endif
