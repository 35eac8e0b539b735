#include "lang/cron.h"

#include <stdbool.h>
#include <string.h>

#include "base/util.h"

typedef struct field {
    const char *name;
    unsigned lo, hi;
    const char *const *names; /* 3-letter names of lo, lo+1, ... (NULL: none) */
} field;

static const char *const months[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                     "JUL", "AUG", "SEP", "OCT", "NOV", "DEC", NULL};
static const char *const days[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", NULL};

static const field fields[5] = {
    {"minute", 0, 59, NULL},      {"hour", 0, 23, NULL},   {"day of the month", 1, 31, NULL},
    {"month", 1, 12, months},     {"day of the week", 0, 6, days},
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* A value at *s (digits, or a name of the field): its number, or -1 with why. */
static long value(const field *f, const char **s, const char *end, cg_strbuf *why)
{
    const char *p = *s;
    if (p < end && is_digit(*p)) {
        unsigned long n = 0;
        while (p < end && is_digit(*p)) {
            n = n * 10 + (unsigned long)(*p - '0');
            if (n > 1000)
                n = 1000;
            p++;
        }
        if (n < f->lo || n > f->hi) {
            cg_strbuf_addf(why, "%s %.*s is out of range (%u-%u)", f->name, (int)(p - *s), *s, f->lo, f->hi);
            return -1;
        }
        *s = p;
        return (long)n;
    }
    for (size_t i = 0; f->names && f->names[i]; i++) {
        if (end - p >= 3 && upper(p[0]) == f->names[i][0] && upper(p[1]) == f->names[i][1] &&
            upper(p[2]) == f->names[i][2] && (end - p == 3 || !cg_isalnum((unsigned char)p[3]))) {
            *s = p + 3;
            return (long)(f->lo + i);
        }
    }
    size_t n = 0;
    while (p + n < end && !strchr(",-/", p[n]))
        n++;
    if (n == 0)
        cg_strbuf_addf(why, "%s: a value is missing", f->name);
    else
        cg_strbuf_addf(why, "%s '%.*s' is not one of %u-%u%s", f->name, (int)n, p, f->lo, f->hi,
                       f->names == months ? " or JAN-DEC" : f->names == days ? " or SUN-SAT" : "");
    return -1;
}

/* One element of a field's list: *, *\/n, v, v-w, v-w/n. */
static int element(const field *f, const char *s, const char *end, cg_strbuf *why)
{
    long a, b;
    bool range = false;
    if (s < end && *s == '*') {
        s++;
        range = true;
    } else {
        if ((a = value(f, &s, end, why)) < 0)
            return -1;
        if (s < end && *s == '-') {
            s++;
            if ((b = value(f, &s, end, why)) < 0)
                return -1;
            if (b < a) {
                cg_strbuf_addf(why, "%s range %ld-%ld runs backwards", f->name, a, b);
                return -1;
            }
            range = true;
        }
    }
    if (s < end && *s == '/') {
        if (!range) {
            cg_strbuf_addf(why, "%s: a step ('/') follows '*' or a range (a-b), not a single value", f->name);
            return -1;
        }
        const char *d = ++s;
        unsigned long n = 0;
        while (s < end && is_digit(*s)) {
            n = n * 10 + (unsigned long)(*s - '0');
            if (n > 1000)
                n = 1000;
            s++;
        }
        if (s == d) {
            cg_strbuf_addf(why, "%s: a step ('/') needs a number", f->name);
            return -1;
        }
        if (n == 0) {
            cg_strbuf_addf(why, "%s: a step of 0 never advances", f->name);
            return -1;
        }
    }
    if (s < end) {
        cg_strbuf_addf(why, "%s: unexpected '%.*s'", f->name, (int)(end - s), s);
        return -1;
    }
    return 0;
}

int cg_cron_check(const char *cron, cg_strbuf *why)
{
    const char *p = cron;
    size_t nf = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (nf == 5) {
            nf++;
            break;
        }
        const field *f = &fields[nf++];
        /* the list: elements between commas, none empty */
        for (const char *e = start;;) {
            const char *c = memchr(e, ',', (size_t)(p - e));
            const char *ee = c ? c : p;
            if (ee == e) {
                cg_strbuf_addf(why, "%s: an empty item in its list", f->name);
                return -1;
            }
            if (element(f, e, ee, why) != 0)
                return -1;
            if (!c)
                break;
            e = c + 1;
        }
    }
    if (nf != 5) {
        cg_strbuf_addf(why, "a cron expression has 5 fields (minute hour day-of-month month day-of-week), "
                            "e.g. \"5 5 * * *\"; this one has %s%zu",
                       nf > 5 ? "more than " : "", nf > 5 ? (size_t)5 : nf);
        return -1;
    }
    return 0;
}
