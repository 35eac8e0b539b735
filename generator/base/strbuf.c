#include "base/strbuf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void cg_strbuf_init(cg_strbuf *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void cg_strbuf_release(cg_strbuf *sb)
{
    free(sb->buf);
    cg_strbuf_init(sb);
}

void cg_strbuf_reset(cg_strbuf *sb)
{
    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

void cg_strbuf_grow_slow(cg_strbuf *sb, size_t extra)
{
    if (extra >= SIZE_MAX / 2 - sb->len)
        cg_die_oom();
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap *= 2;
    bool fresh = sb->buf == NULL;
    sb->buf = cg_xrealloc(sb->buf, cap);
    sb->cap = cap;
    if (fresh)
        sb->buf[0] = '\0';
}

void cg_strbuf_adds(cg_strbuf *sb, const char *s)
{
    cg_strbuf_add(sb, s, strlen(s));
}

void cg_strbuf_addspaces(cg_strbuf *sb, size_t n)
{
    cg_strbuf_grow(sb, n);
    memset(sb->buf + sb->len, ' ', n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void cg_strbuf_vaddf(cg_strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, cp);
    va_end(cp);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        cg_strbuf_add(sb, small, (size_t)n);
        return;
    }
    cg_strbuf_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void cg_strbuf_addf(cg_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void cg_strbuf_truncate(cg_strbuf *sb, size_t len)
{
    if (len < sb->len) {
        sb->len = len;
        sb->buf[len] = '\0';
    }
}

const char *cg_strbuf_str(const cg_strbuf *sb)
{
    return sb->buf ? sb->buf : "";
}

char *cg_strbuf_detach(cg_strbuf *sb, size_t *len)
{
    if (!sb->buf)
        cg_strbuf_grow(sb, 0);
    char *s = sb->buf;
    if (len)
        *len = sb->len;
    cg_strbuf_init(sb);
    return s;
}

void cg_strbuf_add_shell_quoted(cg_strbuf *sb, const char *s)
{
    cg_strbuf_addc(sb, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            cg_strbuf_adds(sb, "'\\''");
        else
            cg_strbuf_addc(sb, *s);
    }
    cg_strbuf_addc(sb, '\'');
}

void cg_strbuf_add_comment_text(cg_strbuf *out, const char *s)
{
    const char *bad;
    size_t blen = 0;
    while ((bad = cg_line_breaker(s, &blen))) {
        cg_strbuf_add(out, s, (size_t)(bad - s));
        const unsigned char *u = (const unsigned char *)bad;
        if (blen == 1)
            cg_strbuf_addf(out, "\\x%02X", *u); /* ASCII, or a byte that is not UTF-8 */
        else if (blen == 2)
            cg_strbuf_addf(out, "\\u%04X", (unsigned)(((u[0] & 0x1F) << 6) | (u[1] & 0x3F)));
        else
            cg_strbuf_addf(out, "\\u%04X", (unsigned)(((u[0] & 0x0F) << 12) | ((u[1] & 0x3F) << 6) | (u[2] & 0x3F)));
        s = bad + blen;
    }
    cg_strbuf_adds(out, s);
}
