#include "base/diag.h"

#include <stdarg.h>

void cg_error_init(cg_error *e)
{
    e->set = false;
    e->dropping = false;
    e->pos = (cg_pos){0};
    cg_strbuf_init(&e->text);
}

void cg_error_release(cg_error *e)
{
    cg_strbuf_release(&e->text);
    cg_error_init(e);
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

static void add_line(cg_strbuf *sb, const cg_pos *pos, const char *kind, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static void add_line(cg_strbuf *sb, const cg_pos *pos, const char *kind, const char *fmt, va_list ap)
{
    if (pos && pos->file)
        cg_pos_format(sb, pos);
    else
        cg_strbuf_adds(sb, "cigen: ");
    cg_strbuf_adds(sb, kind);
    cg_strbuf_vaddf(sb, fmt, ap);
}

int cg_error_at(cg_error *e, const cg_pos *pos, const char *fmt, ...)
{
    if (e->set) {
        e->dropping = true;
        return -1;
    }
    e->set = true;
    e->dropping = false;
    if (pos)
        e->pos = *pos;
    va_list ap;
    va_start(ap, fmt);
    add_line(&e->text, pos, "error: ", fmt, ap);
    va_end(ap);
    return -1;
}

int cg_error_plain(cg_error *e, const char *fmt, ...)
{
    if (e->set) {
        e->dropping = true;
        return -1;
    }
    e->set = true;
    e->dropping = false;
    va_list ap;
    va_start(ap, fmt);
    add_line(&e->text, NULL, "error: ", fmt, ap);
    va_end(ap);
    return -1;
}

void cg_error_note(cg_error *e, const cg_pos *pos, const char *fmt, ...)
{
    if (!e->set || e->dropping)
        return;
    cg_strbuf_addc(&e->text, '\n');
    va_list ap;
    va_start(ap, fmt);
    add_line(&e->text, pos, "note: ", fmt, ap);
    va_end(ap);
}

void cg_warnings_init(cg_warnings *w)
{
    cg_strbuf_init(&w->text);
    w->count = 0;
}

void cg_warnings_release(cg_warnings *w)
{
    cg_strbuf_release(&w->text);
    w->count = 0;
}

void cg_warn_at(cg_warnings *w, const cg_pos *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_line(&w->text, pos, "warning: ", fmt, ap);
    va_end(ap);
    cg_strbuf_addc(&w->text, '\n');
    w->count++;
}
