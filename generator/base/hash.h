/* hash — the one hash function of cigen's tables (cg_map, cg_index, the
 * diff's line hashes, the diagrams' hash sets). */
#ifndef CIGEN_HASH_H
#define CIGEN_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit hash, eight bytes at a time; stable across machines, used for
 * hash tables only. */
uint64_t cg_hash(const void *data, size_t len);

#endif
