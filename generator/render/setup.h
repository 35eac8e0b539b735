/* setup — the setup config of a dynamic pipeline (manifest `pipeline:`,
 * mode dynamic): `setup: true`, one job that gets cigen, runs `cigen
 * select` with what the pipeline knows (branch or tag, commit message,
 * files changed against the base branch, the schedule's name) and
 * continues the pipeline with the config it writes (CircleCI's
 * /api/v2/pipeline/continue, with CIRCLE_CONTINUATION_KEY), or ends it
 * when nothing runs.  The fragments' pipeline parameters (top-level
 * `parameters:`) are declared here too, so that a pipeline triggered with
 * them starts; the job hands their values to `cigen select`, which
 * evaluates the workflows' `when` with them.  The continue call passes no
 * parameters: CircleCI carries the trigger's values over to the
 * continuation (which declares them) and refuses them passed again.
 * Pure: the manifest and fragments in, bytes out.
 */
#ifndef CIGEN_SETUP_H
#define CIGEN_SETUP_H

#include "base/strbuf.h"
#include "lang/fragment.h"
#include "lang/manifest.h"

/* The name of the setup job and of its workflow. */
#define CG_SETUP_JOB "cigen_select"
#define CG_SETUP_WORKFLOW "cigen_setup"
/* The setup job's scratch folder (not /tmp/cigen: a release binary may be
 * installed there). */
#define CG_SETUP_SCRATCH "/tmp/cigen-select"
/* pipeline: cache: the file its key command writes */
#define CG_SETUP_CACHE_KEY CG_SETUP_SCRATCH "/cache.key"

/* Appends the setup config; `manifest` is the manifest's path as the
 * header names it, `sources` the sources' digest its header records with
 * the body's (as the main config's does: a hand edit is told apart). */
void cg_setup_render(const cg_manifest *m, const cg_fragment *frags, size_t nfrags, const char *manifest,
                     const char *sources, cg_strbuf *out);

#endif
