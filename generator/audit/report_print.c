/* Printing a report (audit/report.h): the summary, the readable lines and
 * the JSON. */
#include "audit/report.h"

#include <stdarg.h>
#include <stdlib.h>

#include "base/diag.h"

void cg_matrix_summary(const cg_matrix *m, cg_strbuf *out)
{
    bool any = false;
    if (m->nadded) {
        cg_strbuf_addf(out, "+%zu job%s", m->nadded, m->nadded == 1 ? "" : "s");
        any = true;
    }
    if (m->nremoved) {
        cg_strbuf_addf(out, "%s-%zu job%s", any ? ", " : "", m->nremoved, m->nremoved == 1 ? "" : "s");
        any = true;
    }
    if (m->nchanged) {
        cg_strbuf_addf(out, "%s%zu changed", any ? ", " : "", m->nchanged);
        any = true;
    }
    if (!any && m->ndefinitions)
        cg_strbuf_addf(out, "%zu definition%s changed", m->ndefinitions, m->ndefinitions == 1 ? "" : "s");
    else if (!any)
        cg_strbuf_adds(out, "no job added, removed or changed");
}

static void put_line(cg_strbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void names(cg_strbuf *out, char **v, size_t n)
{
    size_t show_n = n < 3 ? n : 3;
    cg_strbuf line = CG_STRBUF_INIT;
    cg_strbuf_adds(&line, "      ");
    for (size_t i = 0; i < show_n; i++)
        cg_strbuf_addf(&line, "%s%s", i ? ", " : "", v[i]);
    if (n > show_n)
        cg_strbuf_addf(&line, " and %zu more", n - show_n);
    put_line(out, "%s", cg_strbuf_str(&line));
    cg_strbuf_release(&line);
}

void cg_matrix_print(const cg_matrix *m, size_t max_lines, cg_strbuf *out)
{
    if (!m->valid) {
        cg_strbuf_addf(out, "jobs: cannot compare: %s\n", m->problem ? m->problem : "unknown");
        return;
    }
    if (!m->nadded && !m->nremoved && !m->nchanged && !m->ndefinitions) {
        cg_strbuf_adds(out, "jobs: none added, removed or changed (the order of entries, comments, formatting or the header differ)\n");
        return;
    }
    cg_strbuf_adds(out, "jobs: ");
    cg_matrix_summary(m, out);
    cg_strbuf_addc(out, '\n');
    cg_matrix_print_groups(m, max_lines > 1 ? max_lines - 1 : max_lines, out);
}

/* One line of the report, as printed: escaped as messages are (the values
 * come from the committed file, which a pull request may write: a value
 * cannot forge a line or drive the terminal), cut at CG_DIFF_MAX_WIDTH
 * bytes. */
static void put_line(cg_strbuf *out, const char *fmt, ...)
{
    cg_strbuf line = CG_STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(&line, fmt, ap);
    va_end(ap);
    size_t n = line.len, shown = n;
    if (shown > CG_DIFF_MAX_WIDTH) {
        shown = CG_DIFF_MAX_WIDTH;
        while (shown > 0 && ((unsigned char)line.buf[shown] & 0xC0) == 0x80 && CG_DIFF_MAX_WIDTH - shown < 4)
            shown--;
    }
    cg_escape_line(out, cg_strbuf_str(&line), shown);
    if (shown < n)
        cg_strbuf_addf(out, " ... (%zu more bytes)", n - shown);
    cg_strbuf_addc(out, '\n');
    cg_strbuf_release(&line);
}

/* The lines group g takes to print. */
static size_t group_lines(const cg_group *g)
{
    if (g->kind == '~' && g->n == 1)
        return 1;
    if (g->kind != '~' && !g->label)
        return (g->n < 10 ? g->n : 10) + (g->n > 10);
    return 2;
}

void cg_matrix_print_groups(const cg_matrix *m, size_t max_lines, cg_strbuf *out)
{
    size_t ngroups = m->ngroups < CG_REPORT_MAX_GROUPS ? m->ngroups : CG_REPORT_MAX_GROUPS;
    /* within max_lines, the line saying what is left out included */
    size_t lines = 1;
    for (size_t i = 0; max_lines && i < ngroups; i++) {
        lines += group_lines(&m->groups[i]);
        if (lines > max_lines && i + 1 < m->ngroups) {
            ngroups = i;
            break;
        }
    }
    for (size_t i = 0; i < ngroups; i++) {
        const cg_group *g = &m->groups[i];
        if (g->kind == '~' && g->n == 1) {
            put_line(out, "  ~ %s: %s", g->jobs[0], g->label);
            continue;
        }
        if (g->kind == '~') {
            put_line(out, "  ~%zu jobs: %s%s%s%s", g->n, g->label, g->why ? " (" : "",
                           g->why ? g->why : "", g->why ? ")" : "");
        } else if (!g->label) {
            for (size_t k = 0; k < g->n && k < 10; k++)
                put_line(out, "  %c %s", g->kind, g->jobs[k]);
            if (g->n > 10)
                put_line(out, "  %c ... and %zu more", g->kind, g->n - 10);
            continue;
        } else {
            put_line(out, "  %c%zu job%s: %s", g->kind, g->n, g->n == 1 ? "" : "s",
                           g->label ? g->label : "(no single dimension value explains them)");
        }
        names(out, g->jobs, g->n);
    }
    if (ngroups < m->ngroups) {
        size_t jobs = 0;
        for (size_t i = ngroups; i < m->ngroups; i++)
            jobs += m->groups[i].n;
        cg_strbuf_addf(out, "  ... and %zu more groups (%zu jobs) not shown; --json lists them all\n",
                       m->ngroups - ngroups, jobs);
    }
    size_t ndefs = m->ndefinitions < CG_REPORT_MAX_GROUPS ? m->ndefinitions : CG_REPORT_MAX_GROUPS;
    for (size_t i = 0; i < ndefs; i++)
        put_line(out, "  definition %s", m->definitions[i]);
    if (ndefs < m->ndefinitions)
        cg_strbuf_addf(out, "  ... and %zu more definitions not shown\n", m->ndefinitions - ndefs);
}

static json_t *str_array(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *opt_string(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *cg_matrix_json(const cg_matrix *m)
{
    json_t *o = json_object();
    if (!m->valid) {
        json_object_set_new(o, "error", json_string(m->problem ? m->problem : "unknown"));
        return o;
    }
    json_object_set_new(o, "added", str_array(m->added, m->nadded));
    json_object_set_new(o, "removed", str_array(m->removed, m->nremoved));
    json_t *ch = json_array();
    for (size_t i = 0; i < m->nchanged; i++) {
        json_t *c = json_object(), *fields = json_array();
        json_object_set_new(c, "name", json_string(m->changed[i].name));
        for (size_t f = 0; f < m->changed[i].n; f++) {
            json_t *x = json_object();
            json_object_set_new(x, "field", json_string(m->changed[i].v[f].field));
            json_object_set_new(x, "before", opt_string(m->changed[i].v[f].before));
            json_object_set_new(x, "after", opt_string(m->changed[i].v[f].after));
            json_array_append_new(fields, x);
        }
        json_object_set_new(c, "changes", fields);
        json_array_append_new(ch, c);
    }
    json_object_set_new(o, "changed", ch);
    json_t *gs = json_array();
    for (size_t i = 0; i < m->ngroups; i++) {
        const cg_group *g = &m->groups[i];
        json_t *x = json_object();
        json_object_set_new(x, "kind", json_string(g->kind == '+' ? "added" : g->kind == '-' ? "removed" : "changed"));
        json_object_set_new(x, "count", json_integer((json_int_t)g->n));
        if (g->kind == '~') {
            json_object_set_new(x, "change", json_string(g->label));
            json_object_set_new(x, "by", opt_string(g->why));
        } else {
            json_object_set_new(x, "by", opt_string(g->label));
        }
        json_object_set_new(x, "jobs", str_array(g->jobs, g->n));
        json_array_append_new(gs, x);
    }
    json_object_set_new(o, "groups", gs);
    json_object_set_new(o, "definitions", str_array(m->definitions, m->ndefinitions));
    return o;
}
