#include "lang/yaml_snake.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

/* Walks text forward, keeping a byte offset with its line and column (the
 * column in characters, as libyaml's marks and cigen's messages count). */
typedef struct cursor {
    const unsigned char *s;
    size_t len, at;
    size_t index;     /* characters before at (libyaml's mark.index) */
    uint32_t line, col; /* 1-based */
} cursor;

static size_t char_len(unsigned char c)
{
    return c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
}

static void step(cursor *c)
{
    unsigned char ch = c->s[c->at];
    size_t n = char_len(ch);
    c->at = c->at + n <= c->len ? c->at + n : c->len;
    c->index++;
    if (ch == '\n') {
        c->line++;
        c->col = 1;
    } else {
        c->col++;
    }
}

/* Moves the cursor to libyaml's mark (forward only: a mark behind it is
 * reached again from the start). */
static void seek(cursor *c, const yaml_mark_t *m)
{
    if (m->index < c->index)
        *c = (cursor){c->s, c->len, 0, 0, 1, 1};
    while (c->index < m->index && c->at < c->len)
        step(c);
}

static int refuse(cg_error *err, const char *file, const cursor *c, const char *what)
{
    return cg_error_at(err, &(cg_pos){file, c->line, c->col},
                       "%s; CircleCI's YAML parser (SnakeYAML) refuses it, though libyaml reads it", what);
}

static const char tab_msg[] = "tab character where YAML expects the next item: use spaces";

/* The text between two tokens: spaces, comments and line breaks.  A tab
 * there is refused, except right after a plain scalar before the line ends
 * (SnakeYAML reads it as the scalar's trailing blanks). */
static int check_gap(cursor *c, size_t end, bool after_plain, const char *file, cg_error *err)
{
    bool comment = false, broke = false;
    while (c->at < end) {
        unsigned char ch = c->s[c->at];
        if (ch == '\n' || ch == '\r') {
            comment = false;
            broke = true;
        } else if (!comment && ch == '#') {
            comment = true;
        } else if (!comment && ch == '\t' && (broke || !after_plain)) {
            return refuse(err, file, c, tab_msg);
        }
        step(c);
    }
    return 0;
}

/* A plain scalar: a continuation line led by a tab (SnakeYAML ends the
 * scalar there and finds no token at the tab), a merge key `<<` that is not
 * a key, a float without a digit. */
static int check_plain(cursor *c, size_t end, bool is_key, const char *file, cg_error *err)
{
    const unsigned char *s = c->s + c->at;
    size_t n = end - c->at;
    if (!is_key && n == 2 && s[0] == '<' && s[1] == '<')
        return refuse(err, file, c, "'<<' is YAML 1.1's merge key, which may only be a mapping's key: quote it");
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    if (i + 1 < n && s[i] == '.' && s[i + 1] == '_') {
        size_t j = i + 1;
        while (j < n && s[j] == '_')
            j++;
        bool ok = j == n;
        if (!ok && j + 2 < n && (s[j] == 'e' || s[j] == 'E') && (s[j + 1] == '-' || s[j + 1] == '+')) {
            size_t k = j + 2;
            while (k < n && s[k] >= '0' && s[k] <= '9')
                k++;
            ok = k == n;
        }
        if (ok)
            return refuse(err, file, c, "this plain scalar is a YAML 1.1 float without a digit: quote it");
    }
    bool broke = false;
    while (c->at < end) {
        unsigned char ch = c->s[c->at];
        if (ch == '\n')
            broke = true;
        else if (ch == '\t' && broke)
            return refuse(err, file, c, "tab character leading a line of a plain scalar: use spaces");
        else if (ch != ' ' && ch != '\r')
            broke = false;
        step(c);
    }
    return 0;
}

/* A double-quoted scalar: escapes SnakeYAML does not know. */
static int check_double(cursor *c, size_t end, const char *file, cg_error *err)
{
    while (c->at < end) {
        if (c->s[c->at] == '\\' && c->at + 1 < end) {
            unsigned char e = c->s[c->at + 1];
            if (e == '/' || e == '\t')
                return refuse(err, file, c, e == '/' ? "escape \"\\/\": write '/' alone"
                                                      : "escape of a tab character: write \"\\t\"");
            step(c);
        }
        step(c);
    }
    return 0;
}

/* A block scalar's header: its indicators, then a space or the line's end;
 * then spaces only before a comment. */
static int check_block_header(cursor *c, const char *file, cg_error *err)
{
    step(c); /* | or > */
    while (c->at < c->len && (c->s[c->at] == '-' || c->s[c->at] == '+' || (c->s[c->at] >= '0' && c->s[c->at] <= '9')))
        step(c);
    unsigned char ch = c->at < c->len ? c->s[c->at] : '\n';
    if (ch != ' ' && ch != '\n' && ch != '\r')
        return refuse(err, file, c, ch == '#' ? "a comment right after a block scalar's indicator: put a space "
                                                "before '#'"
                                              : "tab character after a block scalar's indicator: use spaces");
    while (c->at < c->len && c->s[c->at] != '\n' && c->s[c->at] != '#') {
        if (c->s[c->at] == '\t')
            return refuse(err, file, c, tab_msg);
        step(c);
    }
    return 0;
}

int cg_yaml_check_snake(const char *file, const char *text, size_t len, cg_error *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return cg_error_at(err, &(cg_pos){file, 0, 0}, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    cursor c = {(const unsigned char *)text, len, 0, 0, 1, 1};
    bool after_plain = false, key = false;
    int rc = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_token_t t;
        if (!yaml_parser_scan(&parser, &t))
            break; /* libyaml's own errors are said by the loader */
        done = t.type == YAML_STREAM_END_TOKEN;
        if (t.type != YAML_STREAM_START_TOKEN) {
            cursor start = c;
            seek(&start, &t.start_mark);
            if (start.at >= c.at)
                rc = check_gap(&c, start.at, after_plain, file, err);
            else
                c = start; /* a simple key's tokens come before the ones already seen */
        }
        cursor end = c;
        if (rc == 0 && !done)
            seek(&end, &t.end_mark);
        if (rc == 0 && t.type == YAML_SCALAR_TOKEN) {
            if (t.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                rc = check_plain(&c, end.at, key, file, err);
            else if (t.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
                rc = check_double(&c, end.at, file, err);
            else if (t.data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                     t.data.scalar.style == YAML_FOLDED_SCALAR_STYLE)
                rc = check_block_header(&c, file, err);
        } else if (rc == 0 && (t.type == YAML_VERSION_DIRECTIVE_TOKEN || t.type == YAML_TAG_DIRECTIVE_TOKEN)) {
            cursor d = c;
            while (rc == 0 && d.at < end.at) {
                if (d.s[d.at] == '\t')
                    rc = refuse(err, file, &d, "tab character in a directive: use spaces");
                step(&d);
            }
        }
        after_plain = t.type == YAML_SCALAR_TOKEN && t.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        key = t.type == YAML_KEY_TOKEN;
        if (rc == 0 && end.at >= c.at)
            c = end;
        yaml_token_delete(&t);
    }
    yaml_parser_delete(&parser);
    return rc;
}
