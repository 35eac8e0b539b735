#include "cmd/summary.h"

#include <stdbool.h>

void cg_summary_line(const cg_matrix *m, cg_strbuf *out)
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

void cg_summary_print(const cg_matrix *m, cg_strbuf *out)
{
    if (!m->valid) {
        cg_strbuf_addf(out, "jobs: cannot compare: %s\n", m->problem ? m->problem : "unknown");
        return;
    }
    if (!m->nadded && !m->nremoved && !m->nchanged && !m->ndefinitions) {
        cg_strbuf_adds(out, "jobs: none added, removed or changed (comments, formatting or the header differ)\n");
        return;
    }
    cg_strbuf_adds(out, "jobs: ");
    cg_summary_line(m, out);
    cg_strbuf_addc(out, '\n');
    cg_matrix_print_groups(m, out);
}
