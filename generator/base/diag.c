#include "base/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void cg_diag_release(cg_diag *d)
{
    free(d->message);
    for (size_t i = 0; i < d->nnotes; i++)
        free(d->notes[i].text);
    free(d->notes);
    memset(d, 0, sizeof *d);
}

void cg_diag_note(cg_diag *d, const cg_pos *pos, const char *text)
{
    d->notes = cg_xrealloc(d->notes, (d->nnotes + 1) * sizeof *d->notes);
    d->notes[d->nnotes++] = (cg_note){pos ? *pos : (cg_pos){0}, cg_xstrdup(text)};
}

void cg_pos_format(cg_strbuf *sb, const cg_pos *pos)
{
    if (!pos || !pos->file)
        return;
    cg_strbuf_adds(sb, pos->file);
    if (pos->line) {
        cg_strbuf_addf(sb, ":%u", (unsigned)pos->line);
        if (pos->col)
            cg_strbuf_addf(sb, ":%u", (unsigned)pos->col);
    }
    cg_strbuf_adds(sb, ": ");
}

static void format_line(cg_strbuf *sb, const cg_pos *pos, const char *kind, const char *text)
{
    if (pos->file)
        cg_pos_format(sb, pos);
    else
        cg_strbuf_adds(sb, "cigen: ");
    cg_strbuf_adds(sb, kind);
    cg_strbuf_adds(sb, text ? text : "");
}

void cg_diag_format(const cg_diag *d, cg_strbuf *out)
{
    format_line(out, &d->pos, d->severity == CG_SEV_ERROR ? "error: " : "warning: ", d->message);
    for (size_t i = 0; i < d->nnotes; i++) {
        cg_strbuf_addc(out, '\n');
        format_line(out, &d->notes[i].pos, "note: ", d->notes[i].text);
    }
}

static char *vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static char *vformat(const char *fmt, va_list ap)
{
    cg_strbuf sb = CG_STRBUF_INIT;
    cg_strbuf_vaddf(&sb, fmt, ap);
    return cg_strbuf_detach(&sb, NULL);
}

void cg_error_init(cg_error *e)
{
    e->set = false;
    e->dropping = false;
    e->pos = (cg_pos){0};
    memset(&e->diag, 0, sizeof e->diag);
    cg_strbuf_init(&e->text);
}

void cg_error_release(cg_error *e)
{
    cg_diag_release(&e->diag);
    cg_strbuf_release(&e->text);
    cg_error_init(e);
}

static void error_set(cg_error *e, const cg_pos *pos, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

static void error_set(cg_error *e, const cg_pos *pos, const char *fmt, va_list ap)
{
    e->set = true;
    e->dropping = false;
    if (pos)
        e->pos = *pos;
    cg_diag_release(&e->diag);
    e->diag.severity = CG_SEV_ERROR;
    e->diag.pos = pos ? *pos : (cg_pos){0};
    e->diag.message = vformat(fmt, ap);
    cg_strbuf_reset(&e->text);
    cg_diag_format(&e->diag, &e->text);
}

int cg_error_at(cg_error *e, const cg_pos *pos, const char *fmt, ...)
{
    if (e->set) {
        e->dropping = true;
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    error_set(e, pos, fmt, ap);
    va_end(ap);
    return -1;
}

int cg_error_plain(cg_error *e, const char *fmt, ...)
{
    if (e->set) {
        e->dropping = true;
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    error_set(e, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

void cg_error_note(cg_error *e, const cg_pos *pos, const char *fmt, ...)
{
    if (!e->set || e->dropping)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *text = vformat(fmt, ap);
    va_end(ap);
    cg_diag_note(&e->diag, pos, text);
    free(text);
    cg_strbuf_reset(&e->text);
    cg_diag_format(&e->diag, &e->text);
}

void cg_warnings_init(cg_warnings *w)
{
    w->v = NULL;
    w->count = 0;
    cg_strbuf_init(&w->text);
}

void cg_warnings_release(cg_warnings *w)
{
    for (unsigned i = 0; i < w->count; i++)
        cg_diag_release(&w->v[i]);
    free(w->v);
    cg_strbuf_release(&w->text);
    w->v = NULL;
    w->count = 0;
}

void cg_warn_at(cg_warnings *w, const cg_pos *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_diag d = {CG_SEV_WARNING, pos ? *pos : (cg_pos){0}, vformat(fmt, ap), NULL, 0};
    va_end(ap);
    w->v = cg_xrealloc(w->v, (w->count + 1) * sizeof *w->v);
    w->v[w->count++] = d;
    cg_diag_format(&d, &w->text);
    cg_strbuf_addc(&w->text, '\n');
}
