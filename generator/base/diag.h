/* diag — source positions and diagnostics: the first error, and warnings.
 *
 * Every stage reports problems as `file:line:col: error: message` (lines and
 * columns 1-based, file relative to the project folder).  Like jansson's
 * json_error_t, a cg_error keeps the FIRST error recorded: later layers may
 * report again without hiding the root cause.  Notes ("first defined here")
 * attach to the error they follow and are dropped with it.
 */
#ifndef CIGEN_DIAG_H
#define CIGEN_DIAG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"

typedef struct cg_pos {
    const char *file; /* display path, owned by whoever loaded the file */
    uint32_t line;    /* 1-based; 0 = whole file */
    uint32_t col;     /* 1-based; 0 = whole line */
} cg_pos;

/* One diagnostic: an error, a warning (or a lint finding, which adds its
 * code and place in the config: audit/lint.h), with the notes that follow
 * it.  Every stage reports through this type; cg_diag_format() is the one
 * place that turns it into text. */
typedef enum cg_severity { CG_SEV_ERROR, CG_SEV_WARNING } cg_severity;

typedef struct cg_note {
    cg_pos pos;
    char *text;          /* owned */
} cg_note;

typedef struct cg_diag {
    cg_severity severity;
    cg_pos pos;          /* file NULL: not about a source file ("cigen: error: ...") */
    char *message;       /* owned */
    cg_note *notes;      /* owned */
    size_t nnotes;
} cg_diag;

void cg_diag_release(cg_diag *d);
/* Appends a note to d (pos may be NULL). */
void cg_diag_note(cg_diag *d, const cg_pos *pos, const char *text);
/* "file:line:col: error: message" and a "...: note: text" line per note,
 * separated by newlines, without a final one. */
void cg_diag_format(const cg_diag *d, cg_strbuf *out);

/* The first error of a stage's run. */
typedef struct cg_error {
    bool set;
    bool dropping;  /* the last error was dropped: drop its notes too */
    cg_pos pos;
    cg_diag diag;   /* the error and its notes */
    cg_strbuf text; /* diag, formatted (cg_diag_format), for printing */
} cg_error;
void cg_error_init(cg_error *e);
void cg_error_release(cg_error *e);
/* Records an error unless one is already recorded.  Always returns -1. */
int cg_error_at(cg_error *e, const cg_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends a note line to the error just recorded. */
void cg_error_note(cg_error *e, const cg_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error that is not about a source file ("cigen: error: ..."). */
int cg_error_plain(cg_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends text[0..len) to sb as one printable line: control characters
 * (C0, DEL, C1), line breaks (also U+2028, U+2029) and bytes that are not
 * UTF-8 are written as escapes (\n, \r, \x1b, \u009b); tab is kept.
 * Every error, note and warning goes through it. */
void cg_escape_line(cg_strbuf *sb, const char *text, size_t len);
/* Appends s with each tab written as \t, for a value quoted in a message
 * because of what it holds (cg_escape_line keeps tabs, and escapes the
 * rest when the message is formatted). */
void cg_add_tabs_shown(cg_strbuf *sb, const char *s);

/* Formats "file:line:col: " (omitting zero parts) into sb. */
void cg_pos_format(cg_strbuf *sb, const cg_pos *pos);

/* Warnings, printed in the order they were found. */
typedef struct cg_warnings {
    cg_diag *v;     /* [count] */
    unsigned count;
    cg_strbuf text; /* each formatted (cg_diag_format), a line each */
} cg_warnings;

void cg_warnings_init(cg_warnings *w);
void cg_warnings_release(cg_warnings *w);
void cg_warn_at(cg_warnings *w, const cg_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
