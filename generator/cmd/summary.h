/* summary — the lines check and generate print when everything is in sync,
 * generate's one-line summary, and the stamp of a run that found its
 * outputs in sync (cmd/stamp.h), which records both so that either command
 * can answer the next run. */
#ifndef CIGEN_SUMMARY_H
#define CIGEN_SUMMARY_H

#include "base/strbuf.h"
#include "cmd/cli.h"
#include "cmd/disk.h"
#include "cmd/stamp.h"
#include "cmd/stream.h"

/* check's "cigen: in sync: config.yml and 5 diagrams match their sources". */
void cg_summary_in_sync(const cg_project *p, const cg_disk *o, cg_strbuf *out);

/* generate's "cigen: config.yml: 292 jobs in 4 workflows, 103769 bytes; WHAT"
 * (jobs: every workflow entry, a selection's culled ones left out). */
void cg_summary_generate(const cg_project *p, const char *what, cg_strbuf *out);

/* Records the stamp of a run that found p's outputs in sync: each output
 * with the bytes it was compared with (a streamed config: its generated
 * header and body digest), check's line, and generate's "already up to
 * date" line unless generate would print more (a lint warning, a tier
 * change). */
void cg_summary_stamp(cg_stamp *stamp, cg_project *p, const cg_disk *o, const cg_stream *streamed);

#endif
