/* cron — the schedule of a CircleCI scheduled workflow (`triggers:
 * - schedule: cron:`), checked as CircleCI checks it before accepting a
 * config: five fields (minute hour day-of-month month day-of-week), each a
 * comma-separated list of `*`, a value, a range `a-b`, either with a step
 * `/n` (n >= 1); months may be named JAN-DEC and days SUN-SAT (any case).
 * Values must be in range (minute 0-59, hour 0-23, day 1-31, month 1-12,
 * day of week 0-6) and a range must not run backwards.  Quartz's `?`, `L`,
 * `W`, `#` and the `@daily` shorthands are not cron's and are refused.
 */
#ifndef CIGEN_CRON_H
#define CIGEN_CRON_H

#include "base/strbuf.h"

/* 0 when `cron` is valid; else -1 with the reason in `why` (appended, one
 * lowercase phrase naming the field and the value, without the expression). */
int cg_cron_check(const char *cron, cg_strbuf *why);

#endif
