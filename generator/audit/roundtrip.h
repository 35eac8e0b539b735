/* roundtrip — does config.yml mean what cigen meant?
 *
 * The promise behind exit 0: the bytes cigen writes load (libyaml; one
 * document, no key twice in a mapping, at most one merge key in one) to the
 * data the model holds: each top-level section of the fragments (the same
 * section of several fragments combined), their verbatim workflows, and
 * every generated workflow entry as it was rendered (the job it runs, its
 * name, each argument, each scalar's text).  The model is rendered once more
 * with an observer that records the entries, and the result loaded and
 * compared.
 *
 * A check for tests and the fuzzer (tests/check_golden.c runs it on every
 * case that generates, tests/fuzz on every project it makes): it costs a
 * second render and a parse, which `generate` does not pay.
 */
#ifndef CIGEN_ROUNDTRIP_H
#define CIGEN_ROUNDTRIP_H

#include "base/diag.h"
#include "model/model.h"

/* 0 when the config rendered from m loads to what m means; -1 with what
 * differs in err (also when rendering fails: then err says why). */
int cg_roundtrip_check(const cg_model *m, cg_error *err);

#endif
