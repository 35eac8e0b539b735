/* text — ASCII character classes, string predicates and typo suggestions.
 *
 * Character classes are ASCII-only on purpose: <ctype.h> depends on the
 * locale, and cigen's output must not.  Nothing here allocates: every
 * pointer returned points into an argument (borrowed, never freed).
 */
#ifndef CIGEN_TEXT_H
#define CIGEN_TEXT_H

#include <stdbool.h>
#include <stddef.h>

static inline bool cg_isdigit(int c) { return c >= '0' && c <= '9'; }
static inline bool cg_isalpha(int c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
static inline bool cg_isalnum(int c) { return cg_isdigit(c) || cg_isalpha(c); }
static inline bool cg_isxdigit(int c) { return cg_isdigit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f'); }
static inline bool cg_isspace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
/* Characters allowed in a dimension, variable or phase name. */
static inline bool cg_isnamechar(int c) { return cg_isalnum(c) || c == '_' || c == '-'; }

/* strcmp() == 0, where NULL equals only NULL. */
bool cg_streq(const char *a, const char *b);
bool cg_starts_with(const char *s, const char *prefix);
bool cg_is_name(const char *s);
/* A whole number for a limit, strictly: decimal digits only (no sign, no
 * space, nothing after), at least 1, at most `max`.  0 and *out, or -1
 * when it is not such a number, -2 when it is larger than max (an
 * overflow included: never clamped). */
int cg_parse_limit(const char *s, long max, long *out);
/* The length of the UTF-8 character at s (NUL-terminated), or 0 when it is
 * not one: overlong, a surrogate, past U+10FFFF, or cut short. */
size_t cg_utf8_length(const char *s);
/* The first character of s that a one-line YAML comment cannot hold, and
 * its length in bytes (len may be NULL); NULL when there is none.  That is
 * anything YAML does not call printable, and its line breaks: a C0 or C1
 * control character (LF, CR, NEL U+0085 among them), DEL, U+2028, U+2029,
 * U+FEFF, U+FFFE, U+FFFF, or a byte that is not UTF-8 (length 1).  Tab is
 * allowed.  The result points into s. */
const char *cg_line_breaker(const char *s, size_t *len);
/* The first Unicode control of s that reorders text as a terminal or a
 * web page shows it (the bidirectional formatting characters: U+061C,
 * U+200E/F, U+202A..U+202E, U+2066..U+2069), and its length in bytes (len
 * may be NULL); NULL when there is none.  A name holding one can show as
 * another name. */
const char *cg_bidi_control(const char *s, size_t *len);
/* Why s cannot be part of a job name, or NULL when it can: its first
 * character that cg_line_breaker() finds, or a tab, described ("a tab",
 * "a line break", "a control character", "a byte that is not UTF-8",
 * "a character YAML does not allow"), or a control that reorders text
 * (cg_bidi_control).  A static string. */
const char *cg_name_breaker(const char *s);
/* Whether s (UTF-8) is empty or holds only whitespace: ASCII spaces and
 * Unicode's (U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000) and the invisible U+180E, U+200B, U+FEFF.  A
 * job name like that shows as nothing. */
bool cg_blank_name(const char *s);
/* The length of the whitespace character cg_blank_name() counts at s, or 0. */
size_t cg_blank_char(const char *s);

/* Why s is not a branch name git would make (`git check-ref-format
 * --branch`), or NULL when it is one: a static string ("it starts with
 * '-'", "it holds '..'", ...).  Also refused, though git takes them: a
 * quote (the name is shown quoted), a character YAML cannot print on one
 * line (cg_line_breaker), and the Unicode controls that reorder text as a
 * terminal shows it (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069). */
const char *cg_branch_name_problem(const char *s);

/* The line (1-based) of the first of git's conflict markers in text
 * (seven '<', '|' or '>' at a line's start, then a space or the line's
 * end), or 0 when there is none. */
size_t cg_conflict_marker_line(const char *text, size_t len);

/* The number of '\n' bytes in s[0..n) (eight at a time). */
size_t cg_count_newlines(const char *s, size_t n);

/* Edit distance with an early cut-off: returns > max when farther. */
size_t cg_edit_distance(const char *a, const char *b, size_t max);
/* The candidate closest to `word` when it is a plausible typo, else NULL;
 * the result is one of candidates[] (borrowed). */
const char *cg_suggest(const char *word, const char *const *candidates, size_t n);

#endif
