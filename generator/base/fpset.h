/* fpset — a set of 64-bit hashes kept compact, to find two that are equal.
 *
 * For a duplicate check over more names than are worth keeping (the walk of
 * model/walk.c: one hash per job of a matrix): each hash is cut to its top
 * CG_FPSET_BITS bits (a fingerprint), and the fingerprints are kept sorted,
 * 2^CG_FPSET_RUN_LOG (16,384) at a time, as Elias-Fano runs: 34 bits (4.25
 * bytes) each instead of 8, plus one buffer of 16,384 hashes (128 KB) being
 * filled.  Nothing is looked up on the way; cg_fpset_twins merges the runs
 * once at the end.
 *
 * Two names may share a fingerprint without being equal (for n names, about
 * n^2 / 2^47 such pairs: 0.8% of the time at a million names): a caller
 * checks the twins it is given by name, another way.
 */
#ifndef CIGEN_FPSET_H
#define CIGEN_FPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CG_FPSET_BITS 46
#define CG_FPSET_RUN_LOG 14

typedef struct cg_fpset_run cg_fpset_run;

typedef struct cg_fpset {
    uint64_t *buf;             /* the fingerprints not yet in a run */
    size_t nbuf;
    cg_fpset_run *runs;
    size_t nruns, cap;
} cg_fpset;

void cg_fpset_init(cg_fpset *s);
void cg_fpset_release(cg_fpset *s);
/* The fingerprint of hash h: its top CG_FPSET_BITS bits. */
uint64_t cg_fpset_key(uint64_t h);
/* Adds the fingerprint of hash h. */
void cg_fpset_add(cg_fpset *s, uint64_t h);
/* The fingerprints added more than once (twins): how many there are, but
 * max + 1 when there are more than max; the first min(n, max), smallest
 * first, into out.  Reads the set without changing what it holds (the
 * buffer is sorted in place). */
size_t cg_fpset_twins(cg_fpset *s, uint64_t *out, size_t max);

#endif
