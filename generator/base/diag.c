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

/* The length of the valid UTF-8 sequence at p (2 to 4), or 0; it reads no
 * byte past p[avail - 1] (a line is not NUL-terminated). */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    size_t n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 4 && p[0] == 0xf0 && p[1] < 0x90) ||
        (n == 4 && p[0] == 0xf4 && p[1] > 0x8f) || (n == 3 && p[0] == 0xed && p[1] > 0x9f))
        return 0; /* overlong, beyond U+10FFFF, a surrogate */
    return n;
}

void cg_escape_line(cg_strbuf *sb, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    while (p < end) {
        if (*p == '\t' || (*p >= 0x20 && *p < 0x7f)) {
            cg_strbuf_addc(sb, (char)*p++);
            continue;
        }
        size_t n = *p < 0x80 ? 0 : utf8_len(p, (size_t)(end - p));
        if (n) {
            /* C1 controls (U+0080..U+009F) and the line breaks U+2028/9 */
            unsigned cp = n == 2 ? ((p[0] & 0x1fu) << 6 | (p[1] & 0x3fu)) : 0;
            bool ctl = (n == 2 && cp < 0xa0) || (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9));
            /* and the controls that reorder text: a message shows what
             * the value holds, never text reordered by it */
            char one[4] = {0};
            memcpy(one, p, n < 4 ? n : 3);
            size_t bl = 0;
            bool bidi = n <= 3 && cg_bidi_control(one, &bl) == one && bl == n;
            if (ctl || bidi)
                cg_strbuf_addf(sb, "\\u%04x", n == 2 ? (unsigned)((p[0] & 0x1fu) << 6 | (p[1] & 0x3fu))
                                                      : (unsigned)((p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 |
                                                                   (p[2] & 0x3fu)));
            else
                cg_strbuf_add(sb, (const char *)p, n);
            p += n;
            continue;
        }
        /* a control character, or a byte that is not UTF-8 */
        cg_strbuf_addf(sb, *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : "\\x%02x", *p);
        p++;
    }
}

void cg_add_tabs_shown(cg_strbuf *sb, const char *s)
{
    for (; *s; s++)
        if (*s == '\t')
            cg_strbuf_adds(sb, "\\t");
        else
            cg_strbuf_addc(sb, *s);
}

/* One line, whatever the values in it hold: no escape sequence, line break
 * or other control character reaches the terminal or a log, so a value can
 * neither forge a line ("x.yml:1:1: error: ...") nor recolour the terminal;
 * they are written \x1b, \n, \u009b. */
static void format_line(cg_strbuf *sb, const cg_pos *pos, const char *kind, const char *text)
{
    cg_strbuf line = CG_STRBUF_INIT;
    if (pos->file)
        cg_pos_format(&line, pos);
    else
        cg_strbuf_adds(&line, "cigen: ");
    cg_strbuf_adds(&line, kind);
    cg_strbuf_adds(&line, text ? text : "");
    cg_escape_line(sb, line.buf, line.len);
    cg_strbuf_release(&line);
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

/* cg_error_at and cg_error_plain: the first error wins, later ones are
 * only counted as dropped. */
static int error_first(cg_error *e, const cg_pos *pos, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static int error_first(cg_error *e, const cg_pos *pos, const char *fmt, va_list ap)
{
    if (e->set) {
        e->dropping = true;
        return -1;
    }
    error_set(e, pos, fmt, ap);
    return -1;
}

int cg_error_at(cg_error *e, const cg_pos *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_first(e, pos, fmt, ap);
    va_end(ap);
    return -1;
}

int cg_error_plain(cg_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_first(e, NULL, fmt, ap);
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
