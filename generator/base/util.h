/* util — the umbrella of base/'s small modules, for files that use several:
 *
 *   base/alloc.h    allocation that cannot fail (cg_xmalloc, cg_grow, ...)
 *   base/text.h     ASCII classes, string predicates, typo suggestions
 *   base/hash.h     cg_hash
 *   base/map.h      cg_map, cg_index (string-keyed hash tables)
 *   base/pool.h     cg_pool, cg_arena (region allocators)
 *   base/threads.h  cg_threads_allowed
 *
 * A new file may include just the header it needs.
 */
#ifndef CIGEN_UTIL_H
#define CIGEN_UTIL_H

#include "base/alloc.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/pool.h"
#include "base/text.h"
#include "base/threads.h"

#endif
