#include "base/threads.h"

#include <stdlib.h>

bool cg_threads_allowed(void)
{
    return getenv("CIGEN_TEST_NO_THREADS") == NULL; /* layers: allowed (a test switch, read-only) */
}
