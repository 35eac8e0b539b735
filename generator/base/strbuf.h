/* strbuf — a growable byte buffer.
 *
 * Invariants: `buf` is always NUL-terminated (so it can be used as a C string
 * when it holds no NUL bytes); `len` counts the bytes before that NUL.  A
 * zeroed strbuf (CG_STRBUF_INIT) is a valid empty buffer.  Allocation failure
 * aborts the program (cg_xmalloc), so appends never fail.
 */
#ifndef CIGEN_STRBUF_H
#define CIGEN_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct cg_strbuf {
    char *buf;
    size_t len;
    size_t cap;
} cg_strbuf;

#define CG_STRBUF_INIT {NULL, 0, 0}

void cg_strbuf_init(cg_strbuf *sb);
/* Frees the contents; the struct may be reused after cg_strbuf_init. */
void cg_strbuf_release(cg_strbuf *sb);
void cg_strbuf_reset(cg_strbuf *sb);
/* Makes room for `extra` more bytes (and the NUL). */
void cg_strbuf_grow_slow(cg_strbuf *sb, size_t extra);
static inline void cg_strbuf_grow(cg_strbuf *sb, size_t extra)
{
    if (!(sb->cap && extra < sb->cap - sb->len)) /* the appends of rendering: mostly inline */
        cg_strbuf_grow_slow(sb, extra);
}

static inline void cg_strbuf_add(cg_strbuf *sb, const void *data, size_t len)
{
    cg_strbuf_grow(sb, len);
    if (len)
        memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

static inline void cg_strbuf_addc(cg_strbuf *sb, char c)
{
    cg_strbuf_grow(sb, 1);
    sb->buf[sb->len++] = c;
    sb->buf[sb->len] = '\0';
}

void cg_strbuf_adds(cg_strbuf *sb, const char *s);
void cg_strbuf_addspaces(cg_strbuf *sb, size_t n);
void cg_strbuf_addf(cg_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cg_strbuf_vaddf(cg_strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void cg_strbuf_truncate(cg_strbuf *sb, size_t len);
/* The buffer as a C string ("" when never written to); still owned by sb. */
const char *cg_strbuf_str(const cg_strbuf *sb);
/* Hands the heap string to the caller (free() it) and empties sb. */
char *cg_strbuf_detach(cg_strbuf *sb, size_t *len);

/* Appends s as one single-quoted POSIX shell word ('it'\''s'). */
void cg_strbuf_add_shell_quoted(cg_strbuf *sb, const char *s);
/* Appends s for a YAML comment line: each character cg_line_breaker()
 * (base/text.h) finds is written as an escape (\u009B; \xFF for a byte that
 * is not UTF-8), so the line stays one printable line. */
void cg_strbuf_add_comment_text(cg_strbuf *out, const char *s);

#endif
