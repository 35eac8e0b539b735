/* fpset — a set of 64-bit hashes kept compact, to find two that are equal.
 *
 * For a duplicate check over more names than are worth keeping (the walk of
 * model/walk.c: one hash per job of a matrix): each hash is cut to its top
 * CG_FPSET_BITS bits (a fingerprint), and the fingerprints are kept sorted,
 * 65,536 at a time, as Elias-Fano runs: 42 bits (5.25 bytes) each instead of
 * 8, plus one buffer of 65,536 hashes (512 KB) being filled.  Nothing is
 * looked up on the way; cg_fpset_has_twin merges the runs once at the end.
 *
 * Two names may share a fingerprint without being equal (for n names, a
 * chance of about n^2 / 2^57: 7e-6 at a million): a caller treats a twin as
 * "perhaps a duplicate" and finds out exactly another way.
 */
#ifndef CIGEN_FPSET_H
#define CIGEN_FPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_FPSET_BITS 56

typedef struct cg_fpset_run cg_fpset_run;

typedef struct cg_fpset {
    uint64_t *buf;             /* the fingerprints not yet in a run */
    size_t nbuf;
    cg_fpset_run *runs;
    size_t nruns, cap;
} cg_fpset;

void cg_fpset_init(cg_fpset *s);
void cg_fpset_release(cg_fpset *s);
/* Adds the fingerprint of hash h (its top CG_FPSET_BITS bits). */
void cg_fpset_add(cg_fpset *s, uint64_t h);
/* Whether two fingerprints added are equal.  Reads the set without
 * changing what it holds (the buffer is sorted in place). */
bool cg_fpset_has_twin(cg_fpset *s);

#endif
