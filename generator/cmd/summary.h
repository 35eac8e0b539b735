/* summary — the line check prints when everything is in sync, and
 * generate's one-line summary. */
#ifndef CIGEN_SUMMARY_H
#define CIGEN_SUMMARY_H

#include "base/strbuf.h"
#include "cmd/cli.h"
#include "cmd/disk.h"

/* check's "cigen: in sync: config.yml and 5 diagrams match their sources". */
void cg_summary_in_sync(const cg_project *p, const cg_disk *o, cg_strbuf *out);

/* generate's "cigen: config.yml: 197 jobs (310 workflow entries) in 4
 * workflows, 103769 bytes; WHAT": jobs counted as check's report counts
 * them, one per name, and the entries only when there are more (a job in
 * two workflows is two entries; a selection's culled ones left out). */
void cg_summary_generate(const cg_project *p, const char *what, cg_strbuf *out);

#endif
