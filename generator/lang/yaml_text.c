#include "lang/yaml_text.h"

#include <stdbool.h>
#include <stdint.h>

/* Decodes one UTF-8 sequence; returns its length, or 0 when invalid. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) {
        len = 2; v = c & 0x1F; min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3; v = c & 0x0F; min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4; v = c & 0x07; min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

/* YAML's printable set (YAML 1.1 §5.1). */
static bool yaml_printable(uint32_t cp)
{
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0x7E) ||
           cp == 0x85 || (cp >= 0xA0 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD && cp != 0xFEFF) ||
           (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* Text saved as UTF-16 without a BOM: ASCII with every other byte NUL. */
static bool utf16_without_bom(const unsigned char *s, size_t len)
{
    size_t n = len < 64 ? len & ~(size_t)1 : 64, zero_odd = 0, zero_even = 0;
    for (size_t i = 0; i < n; i += 2) {
        zero_even += s[i] == 0;
        zero_odd += s[i + 1] == 0;
    }
    return n >= 4 && (zero_odd == n / 2 || zero_even == n / 2);
}

int cg_yaml_check_text(const char *file, const char *text, size_t len, cg_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
        return cg_error_at(err, &(cg_pos){file, 1, 1},
                           "file starts with a byte-order mark (U+FEFF); save it as UTF-8 without a BOM");
    if (len >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) || (s[0] == 0xFE && s[1] == 0xFF)))
        return cg_error_at(err, &(cg_pos){file, 1, 1},
                           "file is UTF-16; cigen reads UTF-8 only");
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (n == 0)
            return cg_error_at(err, &(cg_pos){file, line, col},
                               "invalid UTF-8 byte 0x%02X; cigen reads UTF-8 text only", s[i]);
        if (!yaml_printable(cp)) {
            if (cp == 0 && utf16_without_bom(s, len))
                return cg_error_at(err, &(cg_pos){file, 1, 1},
                                   "file is UTF-16 (without a byte-order mark); cigen reads UTF-8 only");
            if (cp == 0)
                return cg_error_at(err, &(cg_pos){file, line, col},
                                   "NUL byte in file; is it a binary file?");
            if (cp == 0xFEFF)
                return cg_error_at(err, &(cg_pos){file, line, col},
                                   "byte-order mark (U+FEFF) in the middle of the file");
            return cg_error_at(err, &(cg_pos){file, line, col},
                               "control character U+%04X is not allowed in YAML", (unsigned)cp);
        }
        /* libyaml (YAML 1.1) breaks lines at these too; cigen's positions
         * count LF only, so refuse them rather than report wrong lines. */
        if (cp == '\r' && !(i + 1 < len && s[i + 1] == '\n'))
            return cg_error_at(err, &(cg_pos){file, line, col},
                               "carriage return (CR) without a line feed; YAML reads it as a line break; "
                               "save the file with LF line endings");
        if (cp == 0x85 || cp == 0x2028 || cp == 0x2029)
            return cg_error_at(err, &(cg_pos){file, line, col},
                               "%s U+%04X is a line break in YAML 1.1 (what libyaml reads); remove it, or write it "
                               "as \"\\%c\" in a double-quoted string",
                               cp == 0x85 ? "next line" : cp == 0x2028 ? "line separator" : "paragraph separator",
                               (unsigned)cp, cp == 0x85 ? 'N' : cp == 0x2028 ? 'L' : 'P');
        if (cp == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
        i += n;
    }
    return 0;
}
