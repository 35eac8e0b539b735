/* targets — the fuzz targets of cigen, as plain functions.
 *
 * Each takes arbitrary bytes and returns 0.  It never fails on bad input
 * (bad input must give an error, nothing else); it aborts only when cigen
 * breaks a promise the target checks (an invariant, a round trip).  The same
 * functions run under libFuzzer (tests/fuzz/libfuzzer.c, `make fuzz`) and in
 * the check suite, which replays every file of tests/fuzz/regressions/ and
 * tests/fuzz/corpus/ through them (tests/check_robust.c).
 *
 *   cg_fuzz_yaml      the YAML loader (cg_doc_parse) on the bytes; when they
 *                     load: every position lookup, and a round trip through
 *                     the writer (cg_yw_value) that must load to an equal tree
 *   cg_fuzz_pipeline  a whole project: the bytes are files, each introduced
 *                     by a line "%% PATH" (see targets.c), written into one
 *                     scratch folder per process, then cg_project_load and
 *                     cg_project_render
 *   cg_fuzz_diff      the check comparison: the two halves of the bytes are
 *                     the committed and the generated text; the hunks of
 *                     cg_diff_compute, and the text of cg_diff_unified, must
 *                     turn the first into the second
 */
#ifndef CIGEN_FUZZ_TARGETS_H
#define CIGEN_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

int cg_fuzz_yaml(const uint8_t *data, size_t size);
int cg_fuzz_pipeline(const uint8_t *data, size_t size);
int cg_fuzz_diff(const uint8_t *data, size_t size);

/* The scratch folder of cg_fuzz_pipeline is removed at exit; call this to
 * remove it earlier (the check suite does, after its replays). */
void cg_fuzz_pipeline_cleanup(void);

typedef int (*cg_fuzz_fn)(const uint8_t *data, size_t size);

/* "yaml", "pipeline", "diff" -> the function; NULL when unknown. */
cg_fuzz_fn cg_fuzz_target(const char *name);

#endif
