/* summary — the one line saying how the jobs of config.yml changed, as
 * generate ("written (+2 jobs, 1 changed)") and check ("jobs: -1 job")
 * print it: only the parts that are not zero.
 */
#ifndef CIGEN_SUMMARY_H
#define CIGEN_SUMMARY_H

#include "base/strbuf.h"
#include "check/report.h"

/* "+3 jobs, -1 job, 5 changed", "2 changed", "1 definition changed"
 * (definitions only when no job changed), or "no job added, removed or
 * changed" when nothing did. */
void cg_summary_line(const cg_matrix *m, cg_strbuf *out);

/* check's report of the jobs: the summary line, then the groups. */
void cg_summary_print(const cg_matrix *m, cg_strbuf *out);

#endif
