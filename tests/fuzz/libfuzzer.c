/* The libFuzzer entry point for one target of targets.c, chosen when
 * compiling: -DCG_FUZZ_TARGET=cg_fuzz_yaml (see fuzz.mk). */
#include <stddef.h>
#include <stdint.h>

#include "targets.h"

#ifndef CG_FUZZ_TARGET
#error "define CG_FUZZ_TARGET, e.g. -DCG_FUZZ_TARGET=cg_fuzz_yaml"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return CG_FUZZ_TARGET(data, size);
}
