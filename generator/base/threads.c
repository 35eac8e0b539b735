/* threads (base/threads.h).  _GNU_SOURCE for syscall(): a thread's own id. */
#define _GNU_SOURCE
#include "base/threads.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

bool cg_threads_allowed(void)
{
    return getenv("CIGEN_TEST_NO_THREADS") == NULL; /* layers: allowed (a test switch, read-only) */
}

void cg_thread_yield_priority(void)
{
#if defined(__linux__) && defined(SYS_gettid)
    /* on Linux, PRIO_PROCESS with a thread id sets that thread's nice */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
}
