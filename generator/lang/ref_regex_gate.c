/* ref_regex_gate — the gate of lang/ref_regex: reads a Java regex, refuses
 * what Java refuses and what PCRE2 would read otherwise, and writes the rest
 * so that PCRE2 reads it as Java does (cg_regex_java_to_pcre2). */
#include "lang/ref_regex.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The gate's limits: a regex of at most MAX_SOURCE bytes and MAX_DEPTH
 * nested groups (ref_regex.c gives PCRE2 two more, for JAVA_DOLLAR's). */
#define MAX_SOURCE 4096
#define MAX_DEPTH 100
#define MAX_REPEAT 65535        /* PCRE2's largest count in {m,n} */

/* Java's line terminators, as the inside of a PCRE2 class. */
#define JAVA_EOL "\\n\\r\\x{85}\\x{2028}\\x{2029}"
/* Java's '.': any character but a line terminator (\x0B and \f are not). */
#define JAVA_DOT "[^" JAVA_EOL "]"
/* Java's '$' and '\Z' (no MULTILINE): the end, or before one line terminator
 * (\r\n being one) that ends the name, but not between \r and \n. */
#define JAVA_DOLLAR "(?=(?:\\r\\n|[" JAVA_EOL "])?\\z)(?!(?<=\\r)\\n)"
/* Java's \R: since Java 9 not atomic (\R\n matches \r\n). */
#define JAVA_LINEBREAK "(?:\\r\\n|[\\x0B\\f" JAVA_EOL "])"

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

int cg_regex_java_to_pcre2(const char *src, size_t n, cg_strbuf *out, cg_strbuf *why, bool *units_behind)
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
    /* where the last atom starts in out, and whether it is \R */
    size_t atom_at = 0;
    bool atom_r = false;
    int d = 0, rc = 0;
    if (units_behind)
        *units_behind = false;
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
                /* Java counts a lookbehind's length in UTF-16 units unless a
                 * character past U+FFFF is written from it on */
                for (size_t j = at; units_behind && k == LOOKBEHIND && j <= n; j++)
                    if (j == n || (unsigned char)src[j] >= 0xF0) {
                        *units_behind = *units_behind || j == n;
                        break;
                    }
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
                /* Java repeats \R as one atom: each pass takes \r\n whole */
                if (atom_r && prev == ATOM)
                    out->buf[atom_at + 2] = '>';
                nondet[d] = nondet[d] || q.variable;
                if (q.none && last_solid)
                    solid[d]--;
            }
            prev = QUANTIFIED;
            continue;
        }
        /* an atom */
        last_solid = true;
        atom_at = out->len;
        atom_r = c == '\\' && at + 1 < n && src[at + 1] == 'R';
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
