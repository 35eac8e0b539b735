/* threads — whether cigen may start helper threads. */
#ifndef CIGEN_THREADS_H
#define CIGEN_THREADS_H

#include <stdbool.h>

/* False when CIGEN_TEST_NO_THREADS is set: the tests take the path cigen
 * follows when it cannot start a thread (the same work, on one thread). */
bool cg_threads_allowed(void);
/* Puts the calling thread at the lowest priority (Linux: nice 19 for this
 * thread alone): for work that should use only what other threads leave
 * idle.  It cannot be raised back without privileges.  Best effort. */
void cg_thread_yield_priority(void);

#endif
