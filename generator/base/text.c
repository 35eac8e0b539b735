#include "base/text.h"

#include <stdint.h>
#include <string.h>

bool cg_streq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool cg_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool cg_is_name(const char *s)
{
    if (!*s || !(cg_isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!cg_isnamechar((unsigned char)*s))
            return false;
    return true;
}

int cg_parse_limit(const char *s, long max, long *out)
{
    if (!*s)
        return -1;
    long n = 0;
    bool big = false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        int d = *p - '0';
        if (big || n > (max - d) / 10)
            big = true;
        else
            n = n * 10 + d;
    }
    if (big)
        return -2;
    if (n <= 0)
        return -1;
    *out = n;
    return 0;
}

size_t cg_utf8_length(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (n == 2 && c < 0xC2) || c > 0xF4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] >= 0x90))
        return 0;
    return n;
}

const char *cg_line_breaker(const char *s, size_t *len)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = cg_utf8_length((const char *)p);
        bool bad = n == 0 || (*p < 0x20 && *p != '\t') || *p == 0x7f ||
                   (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) /* C1, NEL among them */ ||
                   (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) /* U+2028, U+2029 */ ||
                   (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) /* U+FEFF */ ||
                   (p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe) /* U+FFFE, U+FFFF */;
        if (bad) {
            if (len)
                *len = n ? n : 1;
            return (const char *)p;
        }
        p += n;
    }
    return NULL;
}

const char *cg_bidi_control(const char *s, size_t *len)
{
    for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
        /* U+200E/F: E2 80 8E/8F; U+202A..E: E2 80 AA..AE; U+2066..9: E2 81 A6..A9;
         * U+061C: D8 9C */
        bool three = u[0] == 0xe2 && ((u[1] == 0x80 && (u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xaa && u[2] <= 0xae))) ||
                                      (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9));
        bool two = u[0] == 0xd8 && u[1] == 0x9c;
        if (three || two) {
            if (len)
                *len = three ? 3 : 2;
            return (const char *)u;
        }
    }
    return NULL;
}

const char *cg_name_breaker(const char *s)
{
    size_t n = 0;
    const char *at = cg_line_breaker(s, &n), *tab = strchr(s, '\t');
    if (tab && (!at || tab < at))
        return "a tab";
    if (!at)
        return cg_bidi_control(s, NULL) ? "a Unicode control that reorders displayed text (U+061C, U+200E/F, "
                                          "U+202A..U+202E, U+2066..U+2069)" : NULL;
    const unsigned char *p = (const unsigned char *)at;
    if (n == 1 && *p >= 0x80)
        return "a byte that is not UTF-8";
    if (*p == '\n' || *p == '\r' || *p == '\v' || *p == '\f' || (p[0] == 0xc2 && p[1] == 0x85) ||
        (p[0] == 0xe2 && p[1] == 0x80))
        return "a line break"; /* LF, CR, VT, FF, NEL, U+2028, U+2029 */
    if (*p < 0x20 || *p == 0x7f || p[0] == 0xc2)
        return "a control character";
    return "a character YAML does not allow"; /* U+FEFF, U+FFFE, U+FFFF */
}

size_t cg_blank_char(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        return 1;
    if (p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
        return 2;
    if (p[0] == 0xe1 && ((p[1] == 0x9a && p[2] == 0x80) || (p[1] == 0xa0 && p[2] == 0x8e)))
        return 3; /* U+1680, U+180E */
    if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0x80 && p[2] <= 0x8b) || p[2] == 0xa8 || p[2] == 0xa9 ||
                                         p[2] == 0xaf))
        return 3; /* U+2000..U+200B, U+2028, U+2029, U+202F */
    if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f)
        return 3; /* U+205F */
    if ((p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) || (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf))
        return 3; /* U+3000, U+FEFF */
    return 0;
}

bool cg_blank_name(const char *s)
{
    size_t n;
    while (*s && (n = cg_blank_char(s)) != 0)
        s += n;
    return *s == '\0';
}

size_t cg_count_newlines(const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t count = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        w ^= ones * '\n'; /* newline bytes become zero */
        uint64_t zero = ~(((w & ~highs) + ~highs) | w) & highs; /* exactly the zero bytes */
        /* one bit per zero byte, moved to the byte's low bit; the multiply
         * sums the eight bytes into the top one (at most 8: no carry), which
         * needs no popcount instruction (or libgcc's slow fallback) */
        count += (size_t)(((zero >> 7) * ones) >> 56);
    }
    for (; i < n; i++)
        count += s[i] == '\n';
    return count;
}

size_t cg_edit_distance(const char *a, const char *b, size_t max)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > max)
        return max + 1;
    if (la > 64 || lb > 64)
        return max + 1;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        size_t best = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev[j - 1] + cost;
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            cur[j] = v;
            if (v < best)
                best = v;
        }
        if (best > max)
            return max + 1;
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

const char *cg_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word);
    size_t max = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    const char *best = NULL;
    size_t best_d = max + 1;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i] || cg_streq(candidates[i], word))
            continue;
        size_t d = cg_edit_distance(word, candidates[i], max);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

/* Whether the line at s (n bytes to the end of the text) is one of git's
 * conflict markers: seven '<', '|' or '>' at its start, then a space or
 * its end. */
static bool is_marker(const char *s, size_t n)
{
    if (n < 7 || (s[0] != '<' && s[0] != '>' && s[0] != '|'))
        return false;
    for (int i = 1; i < 7; i++)
        if (s[i] != s[0])
            return false;
    return n == 7 || s[7] == ' ' || s[7] == '\n' || s[7] == '\r';
}

/* The line (1-based) of the first of git's conflict markers in text, or 0. */
size_t cg_conflict_marker_line(const char *text, size_t len)
{
    size_t line = 1;
    for (size_t i = 0; i < len; line++) {
        if (is_marker(text + i, len - i))
            return line;
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break;
        i = (size_t)(nl - text) + 1;
    }
    return 0;
}

const char *cg_branch_name_problem(const char *s)
{
    size_t n = strlen(s);
    if (!n)
        return "it is empty";
    if (s[0] == '-')
        return "it starts with '-'";
    if (cg_streq(s, "@") || cg_streq(s, "HEAD"))
        return "it is '@' or 'HEAD'";
    if (s[0] == '/' || s[n - 1] == '/' || strstr(s, "//"))
        return "it starts or ends with '/', or holds '//'";
    if (s[n - 1] == '.')
        return "it ends with '.'";
    if (strstr(s, ".."))
        return "it holds '..'";
    if (strstr(s, "@{"))
        return "it holds '@{'";
    for (const char *c = s; *c; c++) {
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            return "it holds a space or a control character";
        if (strchr("~^:?*[\\'\"", *c))
            return "it holds one of ~ ^ : ? * [ \\ or a quote";
        /* each '/'-separated part: not starting with '.', not ending with ".lock" */
        if ((c == s || c[-1] == '/') && *c == '.')
            return "a part of it starts with '.'";
        if ((c[1] == '/' || !c[1]) && c - s >= 4 && memcmp(c - 4, ".lock", 5) == 0)
            return "a part of it ends with '.lock'";
    }
    if (cg_bidi_control(s, NULL))
        return "it holds a Unicode control that reorders text";
    if (cg_line_breaker(s, NULL))
        return "it holds a character YAML cannot print on one line";
    return NULL;
}
