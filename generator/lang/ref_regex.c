#include "lang/ref_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"

/* What one regex may cost.  The gate takes at most MAX_SOURCE bytes and
 * MAX_DEPTH nested groups; PCRE2 compiles into at most 64K code units (its
 * link size) with at most COMPILE_HEAP bytes, and a match stops after
 * MATCH_LIMIT steps, DEPTH_LIMIT nested backtracks or HEAP_LIMIT_KIB of
 * backtracking frames: about a tenth of a second at worst, whatever the
 * regex and the name. */
#define MAX_SOURCE 4096
#define MAX_DEPTH 100
#define MAX_REPEAT 65535        /* PCRE2's largest count in {m,n} */
#define MAX_PATTERN 65536       /* bytes of the pattern handed to PCRE2 */
#define COMPILE_HEAP (16u << 20)
#define MATCH_LIMIT 1000000
#define DEPTH_LIMIT 100000
#define HEAP_LIMIT_KIB 65536

/* PCRE2 10.42 without UCP makes \S+ possessive before \v or \h, as if
 * they held only spaces, and \S+\v fails on "a" U+2029 (Java matches): its
 * optimizations are off, a match being bounded by MATCH_LIMIT anyway. */
#define OPTIMIZATIONS_OFF (PCRE2_NO_AUTO_POSSESS | PCRE2_NO_START_OPTIMIZE)

/* Java's line terminators, as the inside of a PCRE2 class. */
#define JAVA_EOL "\\n\\r\\x{85}\\x{2028}\\x{2029}"
/* Java's '.': any character but a line terminator (\x0B and \f are not). */
#define JAVA_DOT "[^" JAVA_EOL "]"
/* Java's '$' and '\Z' (no MULTILINE): the end, or before one line terminator
 * (\r\n being one) that ends the name, but not between \r and \n. */
#define JAVA_DOLLAR "(?=(?:\\r\\n|[" JAVA_EOL "])?\\z)(?!(?<=\\r)\\n)"
/* Java's \R: since Java 9 not atomic (\R\n matches \r\n). */
#define JAVA_LINEBREAK "(?:\\r\\n|[\\x0B\\f" JAVA_EOL "])"

bool cg_ref_is_regex(const char *value)
{
    size_t n = strlen(value);
    return n >= 2 && value[0] == '/' && value[n - 1] == '/';
}

/* The UTF-8 character at s[i] (i < n): its code point, and its length in
 * *len; -1 (length 1) for a byte that does not start one. */
static long utf8_at(const char *s, size_t n, size_t i, size_t *len)
{
    size_t k = cg_utf8_length(s + i);
    *len = 1;
    if (!k || i + k > n)
        return -1;
    long cp = (unsigned char)s[i] & (0xFF >> (k + (k > 1)));
    for (size_t j = 1; j < k; j++)
        cp = cp << 6 | (s[i + j] & 0x3F);
    *len = k;
    return cp;
}

/* The gate: reads a Java regex, refuses what Java refuses and what PCRE2
 * would read otherwise, and writes the rest as PCRE2 reads it the same. */
typedef struct gate {
    const char *s;
    size_t n, i;
    cg_strbuf *out, *why;
    unsigned groups;   /* capturing groups opened so far (Java numbers backreferences by them) */
    unsigned behind;   /* lookbehinds open around i */
    cg_strbuf names;   /* the named groups so far, each as <name> */
} gate;

static int fail(gate *G, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(gate *G, int kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cg_strbuf_adds(G->why, buf);
    return kind;
}

/* The 1-based character number of byte `at` in the value as a message
 * shows it, its opening '/' counted. */
static size_t charno(const gate *G, size_t at)
{
    size_t k = 2;
    for (size_t i = 0; i < at; i++)
        k += ((unsigned char)G->s[i] & 0xC0) != 0x80;
    return k;
}

/* A character as PCRE2 reads it as itself: letters and digits as they
 * are, other ASCII punctuation escaped, anything else by its code. */
static void emit_char(cg_strbuf *o, long cp)
{
    if (cp > ' ' && cp < 0x7F && !cg_isalnum((int)cp))
        cg_strbuf_addc(o, '\\');
    if (cp > ' ' && cp < 0x7F)
        cg_strbuf_addc(o, (char)cp);
    else
        cg_strbuf_addf(o, "\\x{%lx}", (unsigned long)cp);
}

/* The source character at G->i, read: its code point. */
static int next_char(gate *G, long *cp)
{
    size_t len;
    if ((*cp = utf8_at(G->s, G->n, G->i, &len)) < 0)
        return fail(G, CG_REGEX_UNSUPPORTED, "a byte that is not UTF-8 at character %zu", charno(G, G->i));
    G->i += len;
    return 0;
}

/* k hex digits at G->i (k = 0: one or more, up to '}'), into *cp. */
static int hex_digits(gate *G, size_t k, long *cp)
{
    size_t j = G->i;
    *cp = 0;
    while (j < G->n && cg_isxdigit(G->s[j]) && (k == 0 || j - G->i < k)) {
        int c = G->s[j++] | 32;
        *cp = *cp > 0x10FFFF ? *cp : *cp * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (j == G->i || (k && j - G->i < k))
        return -1;
    G->i = j;
    return 0;
}

enum { E_CHAR, E_ATOM, E_ANCHOR };

/* The group name in <> at s[at] (Java: a letter, then letters and digits):
 * its length with the <>, 0 when there is none; *seen: an earlier group has it. */
static size_t group_name(gate *G, size_t at, bool *seen)
{
    size_t j = at + 1;
    while (j < G->n && cg_isalnum(G->s[j]))
        j++;
    if (at >= G->n || G->s[at] != '<' || j == at + 1 || !cg_isalpha(G->s[at + 1]) || j >= G->n || G->s[j] != '>')
        return 0;
    cg_strbuf name = CG_STRBUF_INIT;
    cg_strbuf_add(&name, G->s + at, j + 1 - at);
    *seen = G->names.buf && strstr(G->names.buf, name.buf);
    cg_strbuf_release(&name);
    return j + 1 - at;
}

/* What letter escapes Java has that the gate refuses are. */
static const char *refused_escape(char c)
{
    switch (c) {
    case 'b': return "a word boundary: Java's own versions disagree on it beyond ASCII";
    case 'B': return "a non-word boundary: Java's own versions disagree on it beyond ASCII";
    case 'Q': return "quoting with \\Q...\\E: escape each character with '\\' instead";
    case 'p': case 'P': return "a Unicode property class";
    case 'X': return "a grapheme cluster matcher";
    case 'N': return "a character given by its name: write the character";
    default: return NULL;
    }
}

/* The escape at G->i ('\\'): a character (E_CHAR, *cp), or written to
 * G->out as PCRE2 reads it (E_ATOM: a class or a backreference; E_ANCHOR). */
static int escape(gate *G, bool in_class, int *kind, long *cp)
{
    size_t at = G->i;
    if (at + 1 >= G->n)
        return fail(G, CG_REGEX_INVALID, "a '\\' at the end escapes nothing");
    char c = G->s[at + 1];
    *kind = E_CHAR;
    G->i = at + 1;
    if ((unsigned char)c >= 0x80 || !cg_isalnum(c)) /* Java: a backslash before anything else is that character */
        return next_char(G, cp);
    G->i = at + 2;
    static const char controls[] = "t\tn\nr\rf\fa\ae\x1b";
    for (size_t k = 0; k + 1 < sizeof controls; k += 2)
        if (controls[k] == c) {
            *cp = (unsigned char)controls[k + 1];
            return 0;
        }
    int len = 2;
    switch (c) {
    case 'd': case 'D': case 'w': case 'W': case 's': case 'S': case 'h': case 'H': case 'v': case 'V':
        /* ASCII only in both (PCRE2 without UCP), \h and \v the same lists */
        cg_strbuf_addc(G->out, '\\');
        cg_strbuf_addc(G->out, c);
        *kind = E_ATOM;
        return 0;
    case '0': /* \0 and one to three octal digits, at most \0377 */
        if (G->i >= G->n || G->s[G->i] < '0' || G->s[G->i] > '7')
            return fail(G, CG_REGEX_INVALID, "'\\0' at character %zu is not followed by an octal digit",
                        charno(G, at));
        *cp = 0;
        for (int k = 0; k < 3 && G->i < G->n && G->s[G->i] >= '0' && G->s[G->i] <= '7'; k++) {
            if (k == 2 && *cp > 037)
                break;
            *cp = *cp * 8 + (G->s[G->i++] - '0');
        }
        return 0;
    case 'x':
    case 'u': {
        bool braces = c == 'x' && G->i < G->n && G->s[G->i] == '{';
        G->i += braces;
        if (hex_digits(G, braces ? 0 : c == 'x' ? 2 : 4, cp) != 0 || (braces && (G->i >= G->n || G->s[G->i++] != '}'))
            || *cp > 0x10FFFF)
            return fail(G, CG_REGEX_INVALID, "'\\%c' at character %zu is not followed by %s", c, charno(G, at),
                        c == 'u' ? "four hex digits" : "two hex digits or {a code point in hex}");
        if (*cp >= 0xD800 && *cp <= 0xDFFF)
            return fail(G, CG_REGEX_UNSUPPORTED, "'%.*s' (a UTF-16 surrogate: write the character)",
                        (int)(G->i - at), G->s + at);
        return 0;
    }
    case 'c': /* Java: the next character with bit 6 flipped */
        if (G->i >= G->n)
            return fail(G, CG_REGEX_INVALID, "'\\c' at the end names no control character");
        if (next_char(G, cp) != 0)
            return CG_REGEX_UNSUPPORTED;
        *cp ^= 64;
        return 0;
    }
    const char *what = refused_escape(c);
    if (what && (!in_class || strchr("QpPN", c)))
        return fail(G, CG_REGEX_UNSUPPORTED, "'\\%c' (%s)", c, what);
    if (in_class)
        return fail(G, CG_REGEX_INVALID, "'\\%c' is not an escape Java knows in a class", c);
    *kind = E_ANCHOR;
    switch (c) {
    case 'A': cg_strbuf_adds(G->out, "\\A"); return 0;
    case 'z': cg_strbuf_adds(G->out, "\\z"); return 0;
    case 'G': cg_strbuf_adds(G->out, "\\G"); return 0; /* where matching starts: the start */
    case 'Z': cg_strbuf_adds(G->out, JAVA_DOLLAR); return 0;
    }
    *kind = E_ATOM;
    if (c == 'R') {
        cg_strbuf_adds(G->out, JAVA_LINEBREAK);
        return 0;
    }
    if (c == 'k') {
        bool seen = false;
        size_t k = group_name(G, G->i, &seen);
        if (!k)
            return fail(G, CG_REGEX_INVALID, "'\\k' at character %zu is not followed by a group's <name>",
                        charno(G, at));
        len = (int)k + 2;
        G->i += k;
        if (!seen)
            return fail(G, CG_REGEX_INVALID, "'%.*s' names no group before it", len, G->s + at);
    } else if (cg_isdigit(c)) {
        /* Java: \1 to \9 always, and one more digit while the number stays
         * a group opened so far */
        unsigned ref = (unsigned)(c - '0');
        while (G->i < G->n && cg_isdigit(G->s[G->i]) && ref * 10 + (unsigned)(G->s[G->i] - '0') <= G->groups)
            ref = ref * 10 + (unsigned)(G->s[G->i++] - '0');
        len = (int)(G->i - at);
    } else {
        return fail(G, CG_REGEX_INVALID, "'\\%c' is not an escape Java knows", c);
    }
    if (G->behind) /* (Java refuses most, and PCRE2 wants a fixed length) */
        return fail(G, CG_REGEX_UNSUPPORTED, "'%.*s' (a backreference in a lookbehind)", len, G->s + at);
    cg_strbuf_adds(G->out, c == 'k' ? "\\k" : "\\g{");
    cg_strbuf_add(G->out, G->s + at + 2 - (c != 'k'), (size_t)len - 2 + (c != 'k'));
    if (c != 'k')
        cg_strbuf_addc(G->out, '}');
    return 0;
}

/* One member of a class at G->i: a character (*cp) or a class escape,
 * written (*cp = -1). */
static int class_member(gate *G, long *cp)
{
    char c = G->s[G->i];
    if (c == '[')
        return fail(G, CG_REGEX_UNSUPPORTED, "'[' inside a class at character %zu (a union of classes, or "
                    "write '\\[' for the character)", charno(G, G->i));
    if (c == '&' && G->i + 1 < G->n && G->s[G->i + 1] == '&')
        return fail(G, CG_REGEX_UNSUPPORTED, "'&&' in a class (an intersection of classes)");
    if (c != '\\')
        return next_char(G, cp);
    int kind, rc = escape(G, true, &kind, cp);
    if (rc == 0 && kind != E_CHAR)
        *cp = -1;
    return rc;
}

/* The class at G->i ('['), written with every member spelled out. */
static int class(gate *G)
{
    size_t open = G->i++;
    cg_strbuf_addc(G->out, '[');
    if (G->i < G->n && G->s[G->i] == '^') {
        G->i++;
        cg_strbuf_addc(G->out, '^');
    }
    /* a ']' first is itself, as in Java */
    for (bool first = true;; first = false) {
        if (G->i >= G->n)
            return fail(G, CG_REGEX_INVALID, "the class '[' at character %zu is never closed by ']'",
                        charno(G, open));
        if (G->s[G->i] == ']' && !first) {
            G->i++;
            break;
        }
        long lo, hi;
        int rc;
        size_t from = G->i;
        if ((rc = class_member(G, &lo)) != 0)
            return rc;
        if (lo < 0)
            continue;
        emit_char(G->out, lo);
        if (G->i + 1 < G->n && G->s[G->i] == '-' && G->s[G->i + 1] != ']') {
            G->i++;
            if ((rc = class_member(G, &hi)) != 0)
                return rc;
            if (hi < lo) {
                const char *what = hi < 0 ? "ends with a class, not a character" : "is backwards";
                return fail(G, CG_REGEX_INVALID, "the range '%.*s' in a class %s", (int)(G->i - from),
                            G->s + from, what);
            }
            cg_strbuf_addc(G->out, '-');
            emit_char(G->out, hi);
        }
    }
    cg_strbuf_addc(G->out, ']');
    return 0;
}

/* What a quantifier says: its counts differ, it may repeat more than once,
 * it may repeat nothing, it is possessive. */
typedef struct quant {
    bool variable, many, none, possessive;
} quant;

/* The quantifier at G->i (* + ? or {m} {m,} {m,n}, then ? or + for a lazy
 * or possessive one), written as it is, read into *q. */
static int quantifier(gate *G, quant *q)
{
    size_t at = G->i;
    char c = G->s[at];
    *q = (quant){true, c != '?', c != '+', false};
    if (c != '{') {
        G->i++;
        cg_strbuf_addc(G->out, c);
    } else {
        size_t j = at + 1;
        if (j >= G->n || !cg_isdigit(G->s[j]))
            return fail(G, CG_REGEX_INVALID, "'{' at character %zu does not start a repetition {m}, {m,} or "
                        "{m,n}; write '\\{' for the character", charno(G, at));
        unsigned long lo = 0, hi = 0, cap = 2147483647; /* Java counts in an int */
        bool comma = false, has_hi = false;
        for (; j < G->n && cg_isdigit(G->s[j]); j++)
            lo = lo > cap ? lo : lo * 10 + (unsigned long)(G->s[j] - '0');
        if (j < G->n && G->s[j] == ',') {
            comma = true;
            for (j++; j < G->n && cg_isdigit(G->s[j]); j++, has_hi = true)
                hi = hi > cap ? hi : hi * 10 + (unsigned long)(G->s[j] - '0');
        }
        if (j >= G->n || G->s[j] != '}')
            return fail(G, CG_REGEX_INVALID, "the repetition '{' at character %zu is not closed by '}'",
                        charno(G, at));
        int len = (int)(j + 1 - at);
        if (lo > cap || hi > cap)
            return fail(G, CG_REGEX_INVALID, "'%.*s' counts past %lu", len, G->s + at, cap);
        if (has_hi && hi < lo)
            return fail(G, CG_REGEX_INVALID, "'%.*s' repeats at least %lu and at most %lu times", len, G->s + at,
                        lo, hi);
        if (lo > MAX_REPEAT || hi > MAX_REPEAT)
            return fail(G, CG_REGEX_UNSUPPORTED, "'%.*s' (a repetition of more than %d times)", len, G->s + at,
                        MAX_REPEAT);
        *q = (quant){comma && (!has_hi || hi != lo), (comma && !has_hi) || lo > 1 || hi > 1, lo == 0, false};
        if (has_hi)
            cg_strbuf_addf(G->out, "{%lu,%lu}", lo, hi);
        else
            cg_strbuf_addf(G->out, comma ? "{%lu,}" : "{%lu}", lo);
        G->i = j + 1;
    }
    q->possessive = G->i < G->n && G->s[G->i] == '+';
    if (G->i < G->n && (G->s[G->i] == '?' || G->s[G->i] == '+'))
        cg_strbuf_addc(G->out, G->s[G->i++]);
    return 0;
}

enum { GROUP, LOOKAHEAD, LOOKBEHIND };

/* The group opening at G->i ('('), written; *kind says which. */
static int group(gate *G, int *kind)
{
    size_t at = G->i;
    char c = at + 2 < G->n ? G->s[at + 2] : 0;
    char d = at + 3 < G->n ? G->s[at + 3] : 0;
    *kind = GROUP;
    if (at + 1 >= G->n || G->s[at + 1] != '?') {
        G->groups++;
        G->i++;
        cg_strbuf_addc(G->out, '(');
        return 0;
    }
    int len = 3;
    if (c == '<' && (d == '=' || d == '!'))
        len = 4, *kind = LOOKBEHIND;
    else if (c == '=' || c == '!')
        *kind = LOOKAHEAD;
    else if (c == '<' && cg_isalpha(d)) {
        bool seen = false;
        size_t k = group_name(G, at + 2, &seen);
        if (!k)
            return fail(G, CG_REGEX_INVALID, "the group name at character %zu is not letters and digits closed "
                        "by '>'", charno(G, at + 3));
        if (seen)
            return fail(G, CG_REGEX_INVALID, "the group name '%.*s' is given twice", (int)k - 2, G->s + at + 3);
        len = (int)k + 2;
        cg_strbuf_add(&G->names, G->s + at + 2, k);
        G->groups++;
    } else if (c != ':' && c != '>') {
        if (c && strchr("idmsuxcU-)", c))
            return fail(G, CG_REGEX_UNSUPPORTED, "'(?%c' (inline flags)", c);
        return fail(G, CG_REGEX_INVALID, "'(?' at character %zu starts no group Java knows", charno(G, at));
    }
    cg_strbuf_add(G->out, G->s + at, (size_t)len);
    G->i = at + (size_t)len;
    return 0;
}

int cg_regex_java_to_pcre2(const char *src, size_t n, cg_strbuf *out, cg_strbuf *why)
{
    gate G = {src, n, 0, out, why, 0, 0, CG_STRBUF_INIT};
    size_t start = out->len;
    /* what precedes: a quantifier needs an atom, and Java's repeated
     * anchors and quantifiers mean what PCRE2 refuses or reads otherwise */
    enum { NOTHING, ATOM, GROUP_ATOM, QUANTIFIED, ANCHOR } prev = NOTHING;
    /* per open group: where it opened, what kind it is, whether it holds
     * '|' or a repetition of a variable count (for Java it is then not
     * deterministic: repeated in a lookbehind, Java finds no obvious
     * maximum length), whether an alternative so far can match nothing,
     * and how many atoms of the current one cannot */
    size_t open_at[MAX_DEPTH + 1], solid[MAX_DEPTH + 1];
    int kind[MAX_DEPTH + 1];
    bool nondet[MAX_DEPTH + 1], hollow[MAX_DEPTH + 1];
    /* of the last atom: it cannot match nothing; a group's nondet */
    bool last_solid = false, last_nondet = false;
    int d = 0, rc = 0;
    nondet[0] = hollow[0] = false;
    solid[0] = 0;
    if (n > MAX_SOURCE)
        rc = fail(&G, CG_REGEX_UNSUPPORTED, "more than %d bytes (cigen's limit on a regex)", MAX_SOURCE);
    while (rc == 0 && G.i < n) {
        size_t at = G.i;
        char c = src[at];
        long cp;
        int k = E_CHAR;
        if (c == '(') {
            if (d == MAX_DEPTH) {
                rc = fail(&G, CG_REGEX_UNSUPPORTED, "groups nested more than %d deep", MAX_DEPTH);
            } else if ((rc = group(&G, &k)) == 0) {
                open_at[++d] = at;
                kind[d] = k;
                nondet[d] = hollow[d] = false;
                solid[d] = 0;
                G.behind += k == LOOKBEHIND;
                prev = NOTHING;
            }
            continue;
        }
        if (c == ')') {
            if (d == 0) {
                rc = fail(&G, CG_REGEX_INVALID, "')' at character %zu closes no group", charno(&G, at));
                break;
            }
            last_nondet = kind[d] == GROUP && nondet[d];
            last_solid = kind[d] == GROUP && !hollow[d] && solid[d] > 0;
            G.behind -= kind[d--] == LOOKBEHIND;
            nondet[d] = nondet[d] || last_nondet;
            solid[d] += last_solid;
            G.i++;
            cg_strbuf_addc(out, ')');
            prev = GROUP_ATOM;
            continue;
        }
        if (c == '|' || c == '^' || c == '$') {
            G.i++;
            cg_strbuf_adds(out, c == '$' ? JAVA_DOLLAR : c == '^' ? "^" : "|");
            prev = c == '|' ? NOTHING : ANCHOR;
            if (c == '|') {
                nondet[d] = true;
                hollow[d] = hollow[d] || solid[d] == 0;
                solid[d] = 0;
            }
            continue;
        }
        if (c == '*' || c == '+' || c == '?' || c == '{') {
            quant q;
            /* Java repeats nothing for a '{' with no atom (`{2}`, `a|{2}b`,
             * a{2}{3}): a pattern it takes, which PCRE2 reads otherwise */
            if ((prev == NOTHING || prev == QUANTIFIED) && c == '{') {
                size_t mark = out->len;
                rc = quantifier(&G, &q); /* a '{' Java refuses: why */
                out->len = mark;
                if (rc == 0)
                    rc = fail(&G, CG_REGEX_UNSUPPORTED, "'{' at character %zu (a repetition of nothing%s)",
                              charno(&G, at), prev == QUANTIFIED ? ", right after another" : "");
            } else if (prev == NOTHING)
                rc = fail(&G, CG_REGEX_INVALID, "'%c' at character %zu has nothing before it to repeat", c,
                          charno(&G, at));
            else if (prev == ANCHOR)
                rc = fail(&G, CG_REGEX_UNSUPPORTED, "'%c' at character %zu (a repetition of an anchor)", c,
                          charno(&G, at));
            else if (prev == QUANTIFIED) /* a*? took its '?' already: a*??, a*?+ */
                rc = fail(&G, CG_REGEX_INVALID, "'%c' at character %zu repeats a repetition", c, charno(&G, at));
            else if ((rc = quantifier(&G, &q)) != 0)
                ;
            /* Java ends a repetition where a pass matched nothing, PCRE2
             * goes on with its count */
            else if (q.many && !last_solid)
                rc = fail(&G, CG_REGEX_UNSUPPORTED, "'%.*s' at character %zu (a repetition of what can match "
                          "nothing: Java and PCRE2 end it differently)", (int)(G.i - at), src + at, charno(&G, at));
            /* Java makes each pass of a possessive group atomic, PCRE2 all of them */
            else if (q.possessive && prev == GROUP_ATOM)
                rc = fail(&G, CG_REGEX_UNSUPPORTED, "'%.*s' at character %zu (a possessive repetition of a group)",
                          (int)(G.i - at), src + at, charno(&G, at));
            else if (G.behind && prev == GROUP_ATOM && last_nondet && !q.possessive)
                rc = fail(&G, CG_REGEX_INVALID, "'%.*s' at character %zu repeats a group holding '|' or a "
                          "repetition of a variable count, in a lookbehind (Java finds no obvious maximum length)",
                          (int)(G.i - at), src + at, charno(&G, at));
            if (rc == 0) {
                nondet[d] = nondet[d] || q.variable;
                if (q.none && last_solid)
                    solid[d]--;
            }
            prev = QUANTIFIED;
            continue;
        }
        /* an atom */
        last_solid = true;
        if (c == '.') {
            G.i++;
            cg_strbuf_adds(out, JAVA_DOT);
        } else if (c == '[') {
            rc = class(&G);
        } else if (c == '\\') {
            if ((rc = escape(&G, false, &k, &cp)) == 0 && k == E_CHAR)
                emit_char(out, cp);
            /* a backreference matches nothing when its group did */
            last_solid = k == E_CHAR || (k == E_ATOM && at + 1 < n && src[at + 1] != 'k' && !cg_isdigit(src[at + 1]));
        } else if ((rc = next_char(&G, &cp)) == 0) {
            emit_char(out, cp);
        }
        prev = k == E_ANCHOR ? ANCHOR : ATOM;
        solid[d] += last_solid;
    }
    if (rc == 0 && d > 0)
        rc = fail(&G, CG_REGEX_INVALID, "the group '(' at character %zu is never closed by ')'",
                  charno(&G, open_at[d]));
    cg_strbuf_release(&G.names);
    if (rc != 0) {
        out->len = start;
        if (out->buf)
            out->buf[start] = '\0';
    }
    return rc;
}

/* The memory of one compilation, counted: PCRE2 gets none past COMPILE_HEAP
 * (it then fails cleanly).  Only the compilation counts: `limit` is 0 once
 * it is done, and the allocator only reads it from then on. */
typedef struct compile_mem {
    size_t used, limit;
} compile_mem;

static void *mem_alloc(size_t n, void *data)
{
    compile_mem *m = data;
    if (m->limit) {
        if (n > m->limit - m->used)
            return NULL;
        m->used += n;
    }
    return malloc(n);
}

static void mem_free(void *p, void *data)
{
    (void)data;
    free(p);
}

struct cg_ref_value {
    bool is_regex;
    pcre2_code *code;
    pcre2_match_context *mctx;
    compile_mem mem;
    char text[]; /* the value as written */
};

/* Compiles the PCRE2 pattern into v; 0, or PCRE2's reason in why. */
static int compile(cg_ref_value *v, const char *pattern, size_t len, cg_strbuf *why)
{
    v->mem = (compile_mem){0, COMPILE_HEAP};
    pcre2_general_context *gc = pcre2_general_context_create(mem_alloc, mem_free, &v->mem);
    pcre2_compile_context *cc = gc ? pcre2_compile_context_create(gc) : NULL;
    int errcode = PCRE2_ERROR_NOMEMORY;
    PCRE2_SIZE erroff;
    if (cc) {
        pcre2_set_max_pattern_length(cc, MAX_PATTERN);
        pcre2_set_parens_nest_limit(cc, MAX_DEPTH + 4); /* JAVA_DOLLAR nests 2 more */
        v->code = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_NEVER_UCP | PCRE2_NEVER_BACKSLASH_C |
                                PCRE2_ANCHORED | PCRE2_ENDANCHORED | OPTIMIZATIONS_OFF, &errcode, &erroff, cc);
    }
    pcre2_compile_context_free(cc);
    pcre2_general_context_free(gc);
    v->mem.limit = 0;
    if (!v->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(errcode, msg, sizeof msg);
        cg_strbuf_addf(why, "%s", (const char *)msg);
        return -1;
    }
    if (!(v->mctx = pcre2_match_context_create(NULL)))
        cg_die_oom();
    pcre2_set_match_limit(v->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(v->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(v->mctx, HEAP_LIMIT_KIB);
    return 0;
}

cg_ref_value *cg_ref_value_new(const char *value, const char *kind, const cg_pos *pos, cg_error *err)
{
    size_t n = strlen(value);
    cg_ref_value *v = cg_xmalloc(sizeof *v + n + 1);
    memset(v, 0, sizeof *v);
    memcpy(v->text, value, n + 1);
    v->is_regex = cg_ref_is_regex(value);
    if (!v->is_regex)
        return v;
    cg_strbuf pattern = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    int rc = cg_regex_java_to_pcre2(value + 1, n - 2, &pattern, &why);
    if (rc == 0 && compile(v, pattern.buf ? pattern.buf : "", pattern.len, &why) != 0)
        rc = CG_REGEX_LIMIT;
    if (rc == CG_REGEX_INVALID && err)
        cg_error_at(err, pos, "the %s filter %s is not a valid regular expression: %s (CircleCI reads it as a Java "
                    "regex, and Java refuses it too)", kind, value, why.buf);
    else if (rc == CG_REGEX_LIMIT && err)
        cg_error_at(err, pos, "the %s filter %s cannot be evaluated by cigen's regex engine: PCRE2 says \"%s\" "
                    "(CircleCI reads it as a Java regex, but cigen evaluates branch and tag filters itself (list "
                    "--branch, select, special-PR checks) with PCRE2, within limits that keep any regex's cost "
                    "bounded)", kind, value, why.buf);
    else if (rc != 0 && err)
        cg_error_at(err, pos, "the %s filter %s uses %s, which cigen cannot evaluate: CircleCI reads it as a Java "
                    "regex, but cigen evaluates branch and tag filters itself (list --branch, select, special-PR "
                    "checks) with PCRE2, and refuses what PCRE2 would read otherwise than Java: inline flags, "
                    "\\b \\B, \\p{..}, \\X, \\N{..}, \\Q...\\E, a class inside a class or &&, a repetition of an "
                    "anchor, of nothing or of what can match nothing, a possessive group", kind, value, why.buf);
    cg_strbuf_release(&pattern);
    cg_strbuf_release(&why);
    if (rc != 0) {
        cg_ref_value_free(v);
        return NULL;
    }
    return v;
}

void cg_ref_value_free(cg_ref_value *v)
{
    if (v) {
        pcre2_match_context_free(v->mctx);
        pcre2_code_free(v->code);
    }
    free(v);
}

int cg_ref_value_match(const cg_ref_value *v, const char *name)
{
    if (!v->is_regex)
        return strcmp(v->text, name) == 0;
    size_t n = strlen(name), i = 0, len;
    while (i < n && utf8_at(name, n, i, &len) >= 0)
        i += len;
    cg_strbuf fixed = CG_STRBUF_INIT;
    if (i < n) { /* not UTF-8 (git allows it): each stray byte U+FFFD, as Java decodes it */
        for (cg_strbuf_add(&fixed, name, i); i < n; i += len) {
            bool stray = utf8_at(name, n, i, &len) < 0;
            cg_strbuf_add(&fixed, stray ? "\xEF\xBF\xBD" : name + i, stray ? 3 : len);
        }
        name = fixed.buf;
        n = fixed.len;
    }
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        cg_die_oom();
    int rc = pcre2_match(v->code, (PCRE2_SPTR)name, n, 0, 0, md, v->mctx);
    pcre2_match_data_free(md);
    cg_strbuf_release(&fixed);
    return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* A walk over the filters of a doc: each /regex/ checked once. */
typedef struct walk {
    const cg_doc *doc;
    bool templated;      /* a value with a placeholder is known only once rendered */
    cg_map seen;         /* values already checked (borrowed from the doc) */
    cg_error *err;
} walk;

static int check_value(walk *W, const char *path, json_t *v, const char *kind)
{
    const char *s = json_string_value(v);
    if (!s || !cg_ref_is_regex(s) || (W->templated && strstr(s, "{{")) || cg_map_put_new(&W->seen, s, (void *)s))
        return 0;
    cg_pos pos = cg_doc_where(W->doc, path);
    cg_ref_value *rv = cg_ref_value_new(s, kind, &pos, W->err);
    cg_ref_value_free(rv);
    return rv ? 0 : -1;
}

/* A value or a list of values. */
static int check_values(walk *W, const char *path, json_t *v, const char *kind)
{
    if (!json_is_array(v))
        return check_value(W, path, v, kind);
    cg_strbuf ip = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
        cg_path_join_index(&ip, path, i);
        rc = check_value(W, ip.buf, json_array_get(v, i), kind);
    }
    cg_strbuf_release(&ip);
    return rc;
}

/* A key, or the same key made optional ("branches?") in a template. */
static bool key_is(const char *key, const char *name)
{
    size_t n = strlen(name);
    return strncmp(key, name, n) == 0 && (key[n] == '\0' || (key[n] == '?' && key[n + 1] == '\0'));
}

static int check_filters(walk *W, const char *path, json_t *filters)
{
    const char *key, *sub;
    json_t *v, *x;
    int rc = 0;
    cg_strbuf kp = CG_STRBUF_INIT, sp = CG_STRBUF_INIT;
    json_object_foreach(filters, key, v) {
        const char *kind = key_is(key, "branches") ? "branch" : key_is(key, "tags") ? "tag" : NULL;
        if (!kind)
            continue;
        cg_path_join_key(&kp, path, key);
        if (!json_is_object(v)) {
            rc = check_values(W, kp.buf, v, kind);
        } else {
            json_object_foreach(v, sub, x) {
                if (!key_is(sub, "only") && !key_is(sub, "ignore"))
                    continue;
                cg_path_join_key(&sp, kp.buf, sub);
                if ((rc = check_values(W, sp.buf, x, kind)) != 0)
                    break;
            }
        }
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&kp);
    cg_strbuf_release(&sp);
    return rc;
}

/* The `filters:` of each entry of a workflow's `jobs` at path. */
static int check_entries(walk *W, const char *path, json_t *jobs)
{
    cg_strbuf ep = CG_STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(jobs) && rc == 0; i++) {
        json_t *e = json_array_get(jobs, i);
        void *it = json_is_object(e) ? json_object_iter(e) : NULL;
        json_t *args = it ? json_object_iter_value(it) : NULL;
        json_t *f = json_is_object(args) ? json_object_get(args, "filters") : NULL;
        if (!json_is_object(f))
            continue;
        cg_path_join_index(&ep, path, i);
        cg_path_push_key(&ep, json_object_iter_key(it));
        cg_path_push_key(&ep, "filters");
        rc = check_filters(W, ep.buf, f);
    }
    cg_strbuf_release(&ep);
    return rc;
}

/* The entries and the triggers' filters of each workflow at path. */
static int check_workflows(walk *W, const char *path, json_t *workflows)
{
    const char *name;
    json_t *wf;
    int rc = 0;
    cg_strbuf p = CG_STRBUF_INIT;
    json_object_foreach(workflows, name, wf) {
        if (!json_is_object(wf))
            continue;
        cg_path_join_key(&p, path, name);
        cg_path_push_key(&p, "jobs");
        if ((rc = check_entries(W, p.buf, json_object_get(wf, "jobs"))) != 0)
            break;
        /* a scheduled workflow's branches: triggers: [{schedule: {filters: ...}}] */
        json_t *triggers = json_object_get(wf, "triggers");
        for (size_t i = 0; i < json_array_size(triggers) && rc == 0; i++) {
            json_t *sched = json_object_get(json_array_get(triggers, i), "schedule");
            json_t *f = json_object_get(sched, "filters");
            if (!json_is_object(f))
                continue;
            cg_path_join_key(&p, path, name);
            cg_path_push_key(&p, "triggers");
            cg_path_push_index(&p, i);
            cg_path_push_key(&p, "schedule");
            cg_path_push_key(&p, "filters");
            rc = check_filters(W, p.buf, f);
        }
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&p);
    return rc;
}

static int run_walk(const cg_doc *doc, bool templated, cg_error *err, int (*check)(walk *, const char *, json_t *),
                    const char *path, json_t *v)
{
    walk W = {doc, templated, {0}, err};
    cg_map_init(&W.seen);
    int rc = check(&W, path, v);
    cg_map_release(&W.seen);
    return rc;
}

int cg_ref_filters_check(const cg_doc *doc, const char *path, json_t *filters, bool templated, cg_error *err)
{
    return json_is_object(filters) ? run_walk(doc, templated, err, check_filters, path, filters) : 0;
}

int cg_ref_entries_check(const cg_doc *doc, const char *path, json_t *jobs, cg_error *err)
{
    return run_walk(doc, false, err, check_entries, path, jobs);
}

int cg_ref_workflows_check(const cg_doc *doc, const char *path, json_t *workflows, cg_error *err)
{
    return run_walk(doc, false, err, check_workflows, path, workflows);
}

void cg_ref_cache_init(cg_ref_cache *c)
{
    memset(c, 0, sizeof *c);
    cg_map_init(&c->index);
}

void cg_ref_cache_release(cg_ref_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].text);
        cg_ref_value_free(c->v[i].value);
    }
    free(c->v);
    cg_map_release(&c->index);
    memset(c, 0, sizeof *c);
}

int cg_ref_cache_match(cg_ref_cache *c, const char *value, const char *name)
{
    if (!cg_ref_is_regex(value))
        return strcmp(value, name) == 0;
    uintptr_t k1 = (uintptr_t)cg_map_get(&c->index, value);
    if (!k1) {
        cg_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v);
        c->v[c->n] = (cg_ref_cached){cg_xstrdup(value), cg_ref_value_new(value, NULL, NULL, NULL)};
        k1 = ++c->n;
        cg_map_put(&c->index, c->v[k1 - 1].text, (void *)k1);
    }
    const cg_ref_value *v = c->v[k1 - 1].value;
    return v ? cg_ref_value_match(v, name) : -1;
}
