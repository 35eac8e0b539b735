#include "lang/yaml_scalar.h"

#include <stdbool.h>
#include <string.h>

#include "base/util.h"

static bool all_of(const char *s, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!memchr(set, s[i], strlen(set)))
            return false;
    return true;
}

static bool has_digit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cg_isdigit((unsigned char)s[i]))
            return true;
    return false;
}

static bool is_one_of(const char *s, size_t n, const char *const *words, size_t nwords)
{
    char first = n ? s[0] : '\0'; /* most scalars are ruled out here, before strlen */
    for (size_t i = 0; i < nwords; i++)
        if (words[i][0] == first && strlen(words[i]) == n && memcmp(words[i], s, n) == 0)
            return true;
    return false;
}

/* [0-9][0-9_]*(:[0-5]?[0-9])+ — YAML 1.1 base-60 numbers; returns the length
 * matched from the start (0 when no match). */
static size_t sexagesimal_prefix(const char *s, size_t n)
{
    size_t i = 0;
    if (i >= n || !cg_isdigit((unsigned char)s[i]))
        return 0;
    while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
        i++;
    size_t groups = 0;
    while (i < n && s[i] == ':') {
        size_t j = i + 1, d = 0;
        while (j < n && cg_isdigit((unsigned char)s[j]) && d < 2)
            j++, d++;
        if (d == 0 || (d == 2 && s[i + 1] > '5'))
            return 0;
        i = j;
        groups++;
    }
    return groups ? i : 0;
}

static bool is_int(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    if (n == 0)
        return false;
    if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        return all_of(s + 2, n - 2, "01_");
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return all_of(s + 2, n - 2, "0123456789abcdefABCDEF_");
    if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        return all_of(s + 2, n - 2, "01234567_");
    if (cg_isdigit((unsigned char)s[0]) && all_of(s, n, "0123456789_"))
        return true;
    return sexagesimal_prefix(s, n) == n;
}

static bool is_float(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    if (n == 0)
        return false;
    static const char *const special[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
    if (is_one_of(s, n, special, CG_ARRAY_LEN(special)))
        return true;
    size_t sx = sexagesimal_prefix(s, n);
    if (sx && sx < n && s[sx] == '.')
        return sx + 1 == n || all_of(s + sx + 1, n - sx - 1, "0123456789_");
    /* mantissa [0-9_]*(.[0-9_]*)? with a digit, then an optional exponent */
    size_t i = 0;
    bool dot = false, exp = false;
    while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
        i++;
    if (i < n && s[i] == '.') {
        dot = true;
        i++;
        while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
            i++;
    }
    if (!has_digit(s, i))
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '-' || s[j] == '+'))
            j++;
        if (j >= n || !all_of(s + j, n - j, "0123456789"))
            return false;
        exp = true;
        i = n;
    }
    return i == n && (dot || exp);
}

/* YAML 1.1 timestamps start with a date: [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}. */
static bool is_timestamp(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && i < 4 && cg_isdigit((unsigned char)s[i]))
        i++;
    if (i != 4 || i >= n || s[i] != '-')
        return false;
    size_t j = ++i;
    while (i < n && i - j < 2 && cg_isdigit((unsigned char)s[i]))
        i++;
    if (i == j || i >= n || s[i] != '-')
        return false;
    j = ++i;
    while (i < n && i - j < 2 && cg_isdigit((unsigned char)s[i]))
        i++;
    return i > j;
}

cg_scalar_type cg_yaml_resolve(const char *s, size_t n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    static const char *const bools[] = {
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF"};
    static const char *const others[] = {"<<", "="};
    bool numeric_start = n && (cg_isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.');
    if (n > 5 && !numeric_start)
        return CG_T_STR; /* longer than any null or bool word, and not a number */
    if (is_one_of(s, n, nulls, CG_ARRAY_LEN(nulls)))
        return CG_T_NULL;
    if (is_one_of(s, n, bools, CG_ARRAY_LEN(bools)))
        return CG_T_BOOL;
    if (is_one_of(s, n, others, CG_ARRAY_LEN(others)))
        return CG_T_OTHER;
    if (n == 0 || !(cg_isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
        return CG_T_STR;
    if (is_int(s, n))
        return CG_T_INT;
    if (is_float(s, n))
        return CG_T_FLOAT;
    if (is_timestamp(s, n))
        return CG_T_OTHER;
    return CG_T_STR;
}

/* Bytes that a plain scalar cannot carry and a double-quoted one must escape:
 * C0 controls, DEL, C1 controls (NEL, U+0085, among them), U+2028, U+2029,
 * the BOM and the non-characters U+FFFE and U+FFFF. */
size_t cg_yaml_special_char(const unsigned char *s, size_t n)
{
    if (s[0] < 0x20 || s[0] == 0x7F)
        return 1;
    if (n >= 2 && s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
        return 2;
    if (n >= 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9))
        return 3;
    if (n >= 3 && s[0] == 0xEF && ((s[1] == 0xBB && s[2] == 0xBF) || (s[1] == 0xBF && s[2] >= 0xBE)))
        return 3;
    return 0;
}

bool cg_yaml_plain_safe(const char *s, size_t n)
{
    if (n == 0 || s[0] == ' ' || s[n - 1] == ' ' || s[n - 1] == ':')
        return false;
    static const char indicators[] = ",[]{}#&*!|>'\"%@`?:";
    if (memchr(indicators, s[0], sizeof indicators - 1))
        return false;
    if (s[0] == '-' && (n == 1 || s[1] == ' '))
        return false;
    if (n >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F) { /* printable ASCII: only ": " and " #" matter */
            if ((c == ':' && i + 1 < n && s[i + 1] == ' ') || (c == '#' && i > 0 && s[i - 1] == ' '))
                return false;
            continue;
        }
        if (c == '\t' || cg_yaml_special_char((const unsigned char *)s + i, n - i))
            return false;
    }
    /* SnakeYAML (CircleCI's parser; PyYAML's resolver) reads [-+]?.[0-9_]+
     * with an optional exponent as a float even without a digit ("._"),
     * and then fails to build it: quoted */
    size_t i = s[0] == '-' || s[0] == '+';
    if (i + 1 < n && s[i] == '.' && (cg_isdigit((unsigned char)s[i + 1]) || s[i + 1] == '_')) {
        i++;
        while (i < n && (cg_isdigit((unsigned char)s[i]) || s[i] == '_'))
            i++;
        if (i + 2 < n && (s[i] == 'e' || s[i] == 'E') && (s[i + 1] == '-' || s[i + 1] == '+') &&
            all_of(s + i + 2, n - i - 2, "0123456789"))
            i = n;
        if (i == n)
            return false;
    }
    return cg_yaml_resolve(s, n) == CG_T_STR;
}

void cg_yaml_quote(cg_strbuf *out, const char *s, size_t n)
{
    cg_strbuf_addc(out, '"');
    for (size_t i = 0; i < n; i++) {
        const unsigned char *u = (const unsigned char *)s + i;
        size_t sp = cg_yaml_special_char(u, n - i);
        if (s[i] == '"' || s[i] == '\\') {
            cg_strbuf_addc(out, '\\');
            cg_strbuf_addc(out, s[i]);
        } else if (sp == 0) {
            cg_strbuf_addc(out, s[i]);
        } else if (sp == 1) {
            switch (s[i]) {
            case '\n': cg_strbuf_adds(out, "\\n"); break;
            case '\t': cg_strbuf_adds(out, "\\t"); break;
            case '\r': cg_strbuf_adds(out, "\\r"); break;
            default: cg_strbuf_addf(out, "\\x%02X", *u); break;
            }
        } else {
            if (sp == 2 && u[1] == 0x85)
                cg_strbuf_adds(out, "\\N");
            else if (sp == 2)
                cg_strbuf_addf(out, "\\x%02X", u[1]);
            else if (u[0] == 0xEF)
                cg_strbuf_addf(out, "\\u%s", u[1] == 0xBB ? "FEFF" : u[2] == 0xBE ? "FFFE" : "FFFF");
            else
                cg_strbuf_adds(out, u[2] == 0xA8 ? "\\L" : "\\P");
            i += sp - 1;
        }
    }
    cg_strbuf_addc(out, '"');
}
