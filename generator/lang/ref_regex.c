#include "lang/ref_regex.h"

#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lang/yaml_path.h"

/* regcomp expands counted repetitions: ((a{1000}){1000}){1000} takes it
 * seconds and gigabytes before failing.  A pattern whose repetitions
 * multiply out past this many atoms is refused instead. */
#define MAX_EXPANDED 100000u
/* ... and it costs about the square of the optional copies in a row, more
 * for larger atoms (a{0,n}: 6 GB at n = 20000, 18 MB at 1000; .{0,1000}:
 * 119 MB): the optional copies, multiplied out, each weighed as its atom
 * plus 20, are held to this (a{0,500}: 6 MB; .{0,238}; (a|b|...|z){0,223}) */
#define MAX_OPTIONAL 10500u
#define MAX_DEPTH 100

/* One non-ASCII character of a UTF-8 name, as bytes (any lead byte and its
 * continuation bytes; names are valid UTF-8). */
#define MB_ANY "[\xC2-\xDF][\x80-\xBF]|[\xE0-\xEF][\x80-\xBF]{2}|[\xF0-\xF4][\x80-\xBF]{3}"
/* The same without the line terminators Java's '.' does not match:
 * U+0085 (C2 85), U+2028 (E2 80 A8) and U+2029 (E2 80 A9). */
#define MB_DOT "\xC2[\x80-\x84\x86-\xBF]|[\xC3-\xDF][\x80-\xBF]|[\xE0\xE1\xE3-\xEF][\x80-\xBF]{2}|" \
               "\xE2[\x81-\xBF][\x80-\xBF]|\xE2\x80[\x80-\xA7\xAA-\xBF]|[\xF0-\xF4][\x80-\xBF]{3}"

bool cg_ref_is_regex(const char *value)
{
    size_t n = strlen(value);
    return n >= 2 && value[0] == '/' && value[n - 1] == '/';
}

/* What one class matches: some ASCII characters, and every non-ASCII
 * character or none.  Classes are spelled out as explicit bytes, so that
 * negation and \D, \W, \S inside a class work like Java's. */
typedef struct cset {
    bool in[128];      /* in[0] unused: no name holds a NUL */
    bool non_ascii;
} cset;

static void set_range(cset *s, int lo, int hi)
{
    for (int c = lo; c <= hi; c++)
        s->in[c] = true;
}

static void set_negate(cset *s)
{
    for (int c = 1; c < 128; c++)
        s->in[c] = !s->in[c];
    s->non_ascii = !s->non_ascii;
}

/* \d \w \s (Java's ASCII classes) or their negations \D \W \S, added to s. */
static void set_add_class(cset *s, char k)
{
    cset t = {{false}, false};
    switch (k | 32) {
    case 'd':
        set_range(&t, '0', '9');
        break;
    case 'w':
        set_range(&t, '0', '9');
        set_range(&t, 'A', 'Z');
        set_range(&t, 'a', 'z');
        t.in['_'] = true;
        break;
    default: /* s: [ \t\n\x0B\f\r] */
        set_range(&t, '\t', '\r');
        t.in[' '] = true;
        break;
    }
    if (k >= 'A' && k <= 'Z')
        set_negate(&t);
    for (int c = 1; c < 128; c++)
        s->in[c] |= t.in[c];
    s->non_ascii |= t.non_ascii;
}

/* A POSIX bracket expression of the ASCII part of s (not empty): ']' goes
 * first, '-' last and '^' anywhere but first, the only places POSIX reads
 * them as themselves; nothing else is special inside brackets. */
static void emit_bracket(cg_strbuf *o, const cset *s)
{
    bool rb = s->in[']'], caret = s->in['^'], dash = s->in['-'], others = rb;
    for (int c = 1; c < 128 && !others; c++)
        others = s->in[c] && c != '^' && c != '-';
    if (caret && !others && !dash) {
        cg_strbuf_adds(o, "\\^");
        return;
    }
    cg_strbuf_addc(o, '[');
    if (rb)
        cg_strbuf_addc(o, ']');
    if (caret && !others) { /* [-^]: a first '-' is itself too */
        cg_strbuf_adds(o, "-^");
        caret = dash = false;
    }
    for (int c = 1; c < 128; c++) {
        if (!s->in[c] || c == ']' || c == '^' || c == '-')
            continue;
        int e = c;
        while (e + 1 < 128 && s->in[e + 1] && e + 1 != ']' && e + 1 != '^' && e + 1 != '-')
            e++;
        cg_strbuf_addc(o, (char)c);
        if (e > c + 1)
            cg_strbuf_addc(o, '-');
        if (e > c)
            cg_strbuf_addc(o, (char)e);
        c = e;
    }
    if (caret)
        cg_strbuf_addc(o, '^');
    if (dash)
        cg_strbuf_addc(o, '-');
    cg_strbuf_addc(o, ']');
}

/* A class as one atom; `mb` spells the non-ASCII characters it matches. */
/* Writes set s (mb: the non-ASCII characters it takes, MB_ANY or MB_DOT);
 * returns what it costs regcomp as atoms of MAX_EXPANDED: a bracket is
 * one, the non-ASCII alternatives (six brackets, some repeated) count 24. */
static uint64_t emit_set(cg_strbuf *o, const cset *s, const char *mb)
{
    bool ascii = false;
    for (int c = 1; c < 128 && !ascii; c++)
        ascii = s->in[c];
    if (!s->non_ascii) {
        if (ascii)
            emit_bracket(o, s);
        else
            cg_strbuf_adds(o, "[^\x01-\xFF]"); /* nothing: only a NUL, which no name holds */
        return 1;
    }
    cg_strbuf_addc(o, '(');
    if (ascii) {
        emit_bracket(o, s);
        cg_strbuf_addc(o, '|');
    }
    cg_strbuf_adds(o, mb);
    cg_strbuf_addc(o, ')');
    return 24;
}

static void emit_literal(cg_strbuf *o, unsigned char c)
{
    if (strchr(".[()*+?{|^$\\", c))
        cg_strbuf_addc(o, '\\');
    cg_strbuf_addc(o, (char)c);
}

typedef struct tr {
    const char *s;
    size_t n, i;
    cg_strbuf *why;
} tr;

static int fail(tr *T, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(tr *T, int kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cg_strbuf_adds(T->why, buf);
    return kind;
}

/* The 1-based character number of byte `at` in the value as a message
 * shows it, its opening '/' counted. */
static size_t charno(const tr *T, size_t at)
{
    size_t k = 2;
    for (size_t i = 0; i < at; i++)
        k += ((unsigned char)T->s[i] & 0xC0) != 0x80;
    return k;
}

/* The bytes of the UTF-8 character starting at byte i. */
static size_t utf8_len(const tr *T, size_t i)
{
    unsigned char c = (unsigned char)T->s[i];
    size_t k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return i + k <= T->n ? k : T->n - i;
}

/* What the letter escapes Java has and POSIX has not are. */
static const char *unsupported_escape(char c)
{
    switch (c) {
    case 'b': return "a word boundary";
    case 'B': return "a non-word boundary";
    case 'A': return "the start of input: write ^";
    case 'z': case 'Z': return "the end of input: write $";
    case 'G': return "the end of the previous match";
    case 'Q': case 'E': return "quoting with \\Q...\\E: escape each character with '\\' instead";
    case 'p': case 'P': return "a Unicode property class";
    case 'k': return "a named backreference";
    case 'x': case 'u': case 'c': case 'N': return "a character given by its code: write the character";
    case 'h': case 'H': case 'v': case 'V': return "a horizontal or vertical whitespace class";
    case 'R': return "a line break matcher";
    case 'X': return "a grapheme cluster matcher";
    case '0': return "an octal escape: write the character";
    default: return cg_isdigit(c) ? "a backreference" : NULL;
    }
}

enum { CH_CLASS = -1, CH_NON_ASCII = -2 };

/* The escape at T->i ('\\'): a character (*ch), a class added to *set
 * (*ch = CH_CLASS), or a non-ASCII character, which is itself and is left
 * for the caller to read (*ch = CH_NON_ASCII). */
static int escape(tr *T, cset *set, int *ch)
{
    size_t at = T->i;
    if (at + 1 >= T->n)
        return fail(T, CG_REGEX_INVALID, "a '\\' at the end escapes nothing");
    unsigned char c = (unsigned char)T->s[at + 1];
    T->i = at + 2;
    if (c >= 0x80) {
        T->i = at + 1;
        *ch = CH_NON_ASCII;
        return 0;
    }
    if (strchr("dDwWsS", c)) {
        set_add_class(set, (char)c);
        *ch = CH_CLASS;
        return 0;
    }
    static const char controls[] = "t\tn\nr\rf\fa\ae\x1b";
    for (size_t k = 0; k + 1 < sizeof controls; k += 2)
        if (controls[k] == c) {
            *ch = (unsigned char)controls[k + 1];
            return 0;
        }
    /* Java: a backslash before anything but a letter or a digit is that
     * character itself */
    if (!cg_isalnum(c)) {
        *ch = c;
        return 0;
    }
    const char *what = unsupported_escape((char)c);
    if (what)
        return fail(T, CG_REGEX_UNSUPPORTED, "'\\%c' (%s)", c, what);
    return fail(T, CG_REGEX_INVALID, "'\\%c' is not an escape Java knows", c);
}

/* One member of a class at T->i: a character (*ch) or a class escape added
 * to set (*ch = CH_CLASS). */
static int class_member(tr *T, cset *set, int *ch)
{
    unsigned char c = (unsigned char)T->s[T->i];
    if (c == '[')
        return fail(T, CG_REGEX_UNSUPPORTED, "'[' inside a class at character %zu (a union of classes, or "
                    "write '\\[' for the character)", charno(T, T->i));
    if (c == '&' && T->i + 1 < T->n && T->s[T->i + 1] == '&')
        return fail(T, CG_REGEX_UNSUPPORTED, "'&&' in a class (an intersection of classes)");
    if (c == '\\') {
        int rc = escape(T, set, ch);
        if (rc != 0 || *ch != CH_NON_ASCII)
            return rc;
        c = (unsigned char)T->s[T->i];
    }
    if (c >= 0x80)
        return fail(T, CG_REGEX_UNSUPPORTED, "the non-ASCII character '%.*s' in a class", (int)utf8_len(T, T->i),
                    T->s + T->i);
    T->i++;
    *ch = c;
    return 0;
}

/* The class at T->i ('['), into *out. */
static int class(tr *T, cset *out)
{
    size_t open = T->i++;
    bool neg = T->i < T->n && T->s[T->i] == '^';
    if (neg)
        T->i++;
    cset set = {{false}, false};
    /* a ']' first is itself, as in Java */
    for (bool first = true;; first = false) {
        if (T->i >= T->n)
            return fail(T, CG_REGEX_INVALID, "the class '[' at character %zu is never closed by ']'",
                        charno(T, open));
        if (T->s[T->i] == ']' && !first) {
            T->i++;
            break;
        }
        int lo, hi, rc;
        size_t from = T->i;
        if ((rc = class_member(T, &set, &lo)) != 0)
            return rc;
        if (lo == CH_CLASS)
            continue;
        if (T->i + 1 < T->n && T->s[T->i] == '-' && T->s[T->i + 1] != ']') {
            T->i++;
            cset ignored = {{false}, false};
            if ((rc = class_member(T, &ignored, &hi)) != 0)
                return rc;
            if (hi == CH_CLASS || hi < lo) {
                const char *what = hi == CH_CLASS ? "ends with a class, not a character" : "is backwards";
                return fail(T, CG_REGEX_INVALID, "the range '%.*s' in a class %s", (int)(T->i - from),
                            T->s + from, what);
            }
            set_range(&set, lo, hi);
        } else {
            set.in[lo] = true;
        }
    }
    if (neg)
        set_negate(&set);
    *out = set;
    return 0;
}

/* The quantifier at T->i (* + ? or {m} {m,} {m,n}), written to q; *times is
 * how many copies of its atom regcomp may make, *optional how many of
 * them are optional (a bounded n - m; one for '?', '*', '+' and {m,}),
 * *none whether it may take no copy at all (its minimum is 0). */
static int quantifier(tr *T, cg_strbuf *q, uint64_t *times, uint64_t *optional, bool *none)
{
    size_t at = T->i;
    char c = T->s[at];
    *optional = 0;
    if (c != '{') {
        T->i++;
        cg_strbuf_addc(q, c);
        *times = c == '+' ? 2 : 1;
        *optional = 1;
        *none = c != '+';
    } else {
        size_t j = at + 1;
        if (j >= T->n || !cg_isdigit(T->s[j]))
            return fail(T, CG_REGEX_INVALID, "'{' at character %zu does not start a repetition {m}, {m,} or "
                        "{m,n}; write '\\{' for the character", charno(T, at));
        unsigned long lo = 0, hi = 0;
        bool comma = false, has_hi = false;
        for (; j < T->n && cg_isdigit(T->s[j]); j++)
            lo = lo > RE_DUP_MAX ? lo : lo * 10 + (unsigned long)(T->s[j] - '0');
        if (j < T->n && T->s[j] == ',') {
            comma = true;
            for (j++; j < T->n && cg_isdigit(T->s[j]); j++, has_hi = true)
                hi = hi > RE_DUP_MAX ? hi : hi * 10 + (unsigned long)(T->s[j] - '0');
        }
        if (j >= T->n || T->s[j] != '}')
            return fail(T, CG_REGEX_INVALID, "the repetition '{' at character %zu is not closed by '}'",
                        charno(T, at));
        int len = (int)(j + 1 - at);
        if (has_hi && hi < lo)
            return fail(T, CG_REGEX_INVALID, "'%.*s' repeats at least %lu and at most %lu times", len, T->s + at,
                        lo, hi);
        if (lo > RE_DUP_MAX || hi > RE_DUP_MAX)
            return fail(T, CG_REGEX_UNSUPPORTED, "'%.*s' (a repetition of more than %d times)", len, T->s + at,
                        RE_DUP_MAX);
        if (has_hi)
            cg_strbuf_addf(q, "{%lu,%lu}", lo, hi);
        else
            cg_strbuf_addf(q, comma ? "{%lu,}" : "{%lu}", lo);
        *times = has_hi ? hi : comma ? lo + 1 : lo;
        *optional = has_hi ? hi - lo : comma;
        *none = lo == 0;
        T->i = j + 1;
    }
    if (*times == 0)
        *times = 1;
    /* Java's lazy form (*?) matches the same whole names as the greedy
     * one (only where a match ends differs, and a filter matches whole
     * names); the possessive one (*+) never backtracks, which ERE cannot say */
    if (T->i < T->n && T->s[T->i] == '?')
        T->i++;
    else if (T->i < T->n && T->s[T->i] == '+')
        return fail(T, CG_REGEX_UNSUPPORTED, "'%.*s' (a possessive quantifier)", (int)(T->i + 1 - at), T->s + at);
    return 0;
}

/* What `(?` at T->i starts: a non-capturing group (0) or a refusal. */
static int group_kind(tr *T)
{
    size_t at = T->i;
    char c = at + 2 < T->n ? T->s[at + 2] : 0;
    char d = at + 3 < T->n ? T->s[at + 3] : 0;
    const char *what = NULL;
    int len = 3;
    if (c == ':')
        return 0;
    if (c == '=')
        what = "a lookahead";
    else if (c == '!')
        what = "a negative lookahead";
    else if (c == '<' && (d == '=' || d == '!'))
        what = d == '=' ? "a lookbehind" : "a negative lookbehind", len = 4;
    else if (c == '<' && cg_isalpha(d))
        what = "a named group";
    else if (c == '>')
        what = "an atomic group";
    else if (c && strchr("idmsuxcU-)", c))
        what = "inline flags";
    if (what)
        return fail(T, CG_REGEX_UNSUPPORTED, "'%.*s' (%s)", len, T->s + at, what);
    return fail(T, CG_REGEX_INVALID, "'(?' at character %zu starts no group Java knows", charno(T, at));
}

int cg_regex_java_to_ere(const char *src, size_t n, cg_strbuf *ere, cg_strbuf *why)
{
    tr T = {src, n, 0, why};
    size_t start = ere->len;
    /* what precedes: a quantifier needs an atom, and Java's anchors and
     * repeated quantifiers mean what POSIX leaves undefined */
    enum { NOTHING, ATOM, QUANTIFIED, ANCHOR } prev = NOTHING;
    /* per open group: where it opened, the atoms of its content so far
     * (repetitions multiplied out) and of its last atom */
    size_t open_at[MAX_DEPTH + 1];
    uint64_t size[MAX_DEPTH + 1], last[MAX_DEPTH + 1];
    uint64_t osize[MAX_DEPTH + 1], olast[MAX_DEPTH + 1]; /* the same, of optional copies */
    bool anchored[MAX_DEPTH + 1], last_anchored[MAX_DEPTH + 1]; /* '^' or '$' in the content, the last atom */
    /* whether what is read can match nothing: per level, the atoms of the
     * current alternative that cannot (the last one's 1 or 0), and whether
     * an earlier alternative could */
    size_t nn[MAX_DEPTH + 1];
    int last_nn[MAX_DEPTH + 1];
    bool alt_empty[MAX_DEPTH + 1];
    int d = 0, rc = 0;
    size[0] = last[0] = osize[0] = olast[0] = 0;
    anchored[0] = last_anchored[0] = false;
    nn[0] = 0, last_nn[0] = 0, alt_empty[0] = false;
    cg_strbuf_adds(ere, "^(");
    while (rc == 0 && T.i < n) {
        size_t at = T.i;
        unsigned char c = (unsigned char)src[at];
        uint64_t atom = 1, oatom = 0; /* (oatom: the optional copies a closed group holds) */
        bool anchored_atom = false;   /* a closed group holding '^' or '$' */
        int atom_nn = 1;              /* 0: a closed group that can match nothing */
        if (c == '(') {
            if (at + 1 < n && src[at + 1] == '?' && (rc = group_kind(&T)) != 0)
                break;
            if (d == MAX_DEPTH) {
                rc = fail(&T, CG_REGEX_UNSUPPORTED, "groups nested more than %d deep", MAX_DEPTH);
                break;
            }
            T.i += at + 1 < n && src[at + 1] == '?' ? 3 : 1;
            open_at[++d] = at;
            size[d] = last[d] = osize[d] = olast[d] = 0;
            anchored[d] = last_anchored[d] = false;
            nn[d] = 0, last_nn[d] = 0, alt_empty[d] = false;
            cg_strbuf_addc(ere, '(');
            prev = NOTHING;
            continue;
        }
        if (c == ')') {
            if (d == 0) {
                rc = fail(&T, CG_REGEX_INVALID, "')' at character %zu closes no group", charno(&T, at));
                break;
            }
            atom = size[d] + 1;
            oatom = osize[d];
            atom_nn = !(alt_empty[d] || nn[d] == 0);
            anchored_atom = anchored[d--];
            anchored[d] = anchored[d] || anchored_atom;
            T.i++;
            cg_strbuf_addc(ere, ')');
        } else if (c == '|') {
            T.i++;
            cg_strbuf_addc(ere, '|');
            alt_empty[d] = alt_empty[d] || nn[d] == 0;
            nn[d] = 0, last_nn[d] = 0;
            prev = NOTHING;
            continue;
        } else if (c == '^' || c == '$') {
            T.i++;
            cg_strbuf_addc(ere, (char)c);
            anchored[d] = true;
            prev = ANCHOR;
            continue;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            /* Java repeats nothing for a '{' with no atom (`{2}`, `a|{2}b`,
             * a{2}{3}): a pattern it takes, which cigen does not */
            if ((prev == NOTHING || prev == QUANTIFIED) && c == '{') {
                cg_strbuf scratch = CG_STRBUF_INIT; /* (read only to tell it is a repetition) */
                uint64_t ignored, ignored_too;
                bool ignored_none;
                rc = quantifier(&T, &scratch, &ignored, &ignored_too, &ignored_none); /* a '{' Java refuses: why */
                cg_strbuf_release(&scratch);
                if (rc == 0)
                    rc = fail(&T, CG_REGEX_UNSUPPORTED, "'{' at character %zu (a repetition of nothing%s)",
                              charno(&T, at), prev == QUANTIFIED ? ", right after another" : "");
            } else if (prev == NOTHING)
                rc = fail(&T, CG_REGEX_INVALID, "'%c' at character %zu has nothing before it to repeat", c,
                          charno(&T, at));
            else if (prev == ANCHOR)
                rc = fail(&T, CG_REGEX_UNSUPPORTED, "'%c' at character %zu (a repetition of an anchor)", c,
                          charno(&T, at));
            else if (prev == QUANTIFIED) /* a*? took its '?' already: a*??, a*?+ */
                rc = fail(&T, CG_REGEX_INVALID, "'%c' at character %zu repeats a repetition", c, charno(&T, at));
            else if (last_anchored[d]) /* glibc matches (^a){2} on "aa", which Java does not */
                rc = fail(&T, CG_REGEX_UNSUPPORTED, "'%c' at character %zu (a repetition of a group holding '^' or "
                          "'$')", c, charno(&T, at));
            uint64_t times = 1, optional = 0;
            bool none = false;
            if (rc != 0 || (rc = quantifier(&T, ere, &times, &optional, &none)) != 0)
                break;
            /* an atom that can match nothing ((a*), (a|)) makes every copy optional */
            if (!last_nn[d] && optional < times)
                optional = times;
            if (none) {
                nn[d] -= last_nn[d];
                last_nn[d] = 0;
            }
            /* the optional copies in the repeated atom, times over, and its own */
            uint64_t ol = olast[d] * times + optional * (last[d] + 20);
            size[d] += last[d] * (times - 1);
            last[d] *= times;
            osize[d] += ol - olast[d];
            olast[d] = ol;
            prev = QUANTIFIED;
            if (size[d] > MAX_EXPANDED) {
                rc = fail(&T, CG_REGEX_UNSUPPORTED, "repetitions that multiply out to more than %u characters",
                          MAX_EXPANDED);
                break;
            }
            if (osize[d] > MAX_OPTIONAL) {
                rc = fail(&T, CG_REGEX_UNSUPPORTED, "optional repetitions ('?', {m,n}) that multiply out to more "
                          "than cigen's regex engine compiles quickly (e.g. a{0,500}, .{0,238})");
                break;
            }
            continue;
        } else if (c == '.') {
            cset dot = {{false}, true};
            set_range(&dot, 1, 127);
            dot.in['\n'] = dot.in['\r'] = false;
            T.i++;
            atom = emit_set(ere, &dot, MB_DOT);
        } else if (c == '[') {
            cset set;
            if ((rc = class(&T, &set)) != 0)
                break;
            atom = emit_set(ere, &set, MB_ANY);
        } else {
            int ch = c;
            cset set = {{false}, false};
            if (c == '\\' && (rc = escape(&T, &set, &ch)) != 0)
                break;
            if (ch == CH_CLASS) {
                atom = emit_set(ere, &set, MB_ANY);
            } else if (ch == CH_NON_ASCII || ch >= 0x80) {
                /* a group, so that a quantifier repeats the whole character */
                size_t k = utf8_len(&T, T.i);
                cg_strbuf_addc(ere, '(');
                cg_strbuf_add(ere, src + T.i, k);
                cg_strbuf_addc(ere, ')');
                T.i += k;
            } else {
                if (c != '\\')
                    T.i++;
                emit_literal(ere, (unsigned char)ch);
            }
        }
        /* an atom: a character, a class or a closed group */
        last[d] = atom;
        size[d] += atom;
        olast[d] = oatom;
        osize[d] += oatom;
        last_anchored[d] = anchored_atom;
        nn[d] += (size_t)atom_nn;
        last_nn[d] = atom_nn;
        prev = ATOM;
        if (size[d] > MAX_EXPANDED)
            rc = fail(&T, CG_REGEX_UNSUPPORTED, "more than %u characters once repetitions multiply out",
                      MAX_EXPANDED);
    }
    if (rc == 0 && d > 0)
        rc = fail(&T, CG_REGEX_INVALID, "the group '(' at character %zu is never closed by ')'",
                  charno(&T, open_at[d]));
    if (rc != 0) {
        ere->len = start;
        if (ere->buf)
            ere->buf[start] = '\0';
        return rc;
    }
    cg_strbuf_adds(ere, ")$");
    return 0;
}

struct cg_ref_value {
    bool is_regex;
    regex_t rx;
    char text[]; /* the value as written */
};

cg_ref_value *cg_ref_value_new(const char *value, const char *kind, const cg_pos *pos, cg_error *err)
{
    size_t n = strlen(value);
    cg_ref_value *v = cg_xmalloc(sizeof *v + n + 1);
    memcpy(v->text, value, n + 1);
    v->is_regex = cg_ref_is_regex(value);
    if (!v->is_regex)
        return v;
    cg_strbuf ere = CG_STRBUF_INIT, why = CG_STRBUF_INIT;
    int rc = cg_regex_java_to_ere(value + 1, n - 2, &ere, &why);
    if (rc == 0 && regcomp(&v->rx, ere.buf, REG_EXTENDED | REG_NOSUB) != 0) {
        rc = CG_REGEX_UNSUPPORTED;
        cg_strbuf_adds(&why, "more than cigen's regex engine can compile");
    }
    if (rc == CG_REGEX_INVALID && err)
        cg_error_at(err, pos, "the %s filter %s is not a valid regular expression: %s (CircleCI reads it as a Java "
                    "regex, and Java refuses it too)", kind, value, why.buf);
    else if (rc != 0 && err)
        cg_error_at(err, pos, "the %s filter %s uses %s, which cigen cannot evaluate: CircleCI reads it as a Java "
                    "regex, but cigen evaluates branch and tag filters itself (list --branch, select, special-PR "
                    "checks) and knows only the part of Java's syntax with a POSIX equivalent: characters, "
                    ". * + ? {m,n} | (...) (?:...) ^ $ [classes] \\d \\w \\s \\D \\W \\S", kind, value, why.buf);
    cg_strbuf_release(&ere);
    cg_strbuf_release(&why);
    if (rc != 0) {
        free(v);
        return NULL;
    }
    return v;
}

void cg_ref_value_free(cg_ref_value *v)
{
    if (v && v->is_regex)
        regfree(&v->rx);
    free(v);
}

bool cg_ref_value_match(const cg_ref_value *v, const char *name)
{
    return v->is_regex ? regexec(&v->rx, name, 0, NULL, 0) == 0 : strcmp(v->text, name) == 0;
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

static void walk_init(walk *W, const cg_doc *doc, bool templated, cg_error *err)
{
    *W = (walk){doc, templated, {0}, err};
    cg_map_init(&W->seen);
}

static int walk_end(walk *W, int rc)
{
    cg_map_release(&W->seen);
    return rc;
}

int cg_ref_filters_check(const cg_doc *doc, const char *path, json_t *filters, bool templated, cg_error *err)
{
    walk W;
    walk_init(&W, doc, templated, err);
    return walk_end(&W, json_is_object(filters) ? check_filters(&W, path, filters) : 0);
}

int cg_ref_entries_check(const cg_doc *doc, const char *path, json_t *jobs, cg_error *err)
{
    walk W;
    walk_init(&W, doc, false, err);
    return walk_end(&W, check_entries(&W, path, jobs));
}

int cg_ref_workflows_check(const cg_doc *doc, const char *path, json_t *workflows, cg_error *err)
{
    walk W;
    walk_init(&W, doc, false, err);
    const char *name;
    json_t *wf;
    int rc = 0;
    cg_strbuf p = CG_STRBUF_INIT;
    json_object_foreach(workflows, name, wf) {
        if (!json_is_object(wf))
            continue;
        cg_path_join_key(&p, path, name);
        cg_path_push_key(&p, "jobs");
        if ((rc = check_entries(&W, p.buf, json_object_get(wf, "jobs"))) != 0)
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
            rc = check_filters(&W, p.buf, f);
        }
        if (rc != 0)
            break;
    }
    cg_strbuf_release(&p);
    return walk_end(&W, rc);
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
