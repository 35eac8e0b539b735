/* yaml_scalar — the spelling of one YAML scalar: what a plain scalar means
 * to a parser, and how a string must be written to read back unchanged.
 *
 * The loader keeps every scalar as the text written (lang/yamlload.h); the
 * consumers that care whether a plain `true`, `4` or `~` is a boolean, a
 * number or null ask cg_yaml_resolve().  The answers cover YAML 1.1
 * (CircleCI reads config.yml with SnakeYAML, a YAML 1.1 parser) and 1.2.
 * Used by the loaders, by messages that quote a value, and by the writer
 * (render/yamlwrite.h).  Pure: no state; nothing allocated but the bytes
 * appended to the caller's cg_strbuf.
 */
#ifndef CIGEN_YAML_SCALAR_H
#define CIGEN_YAML_SCALAR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

typedef enum cg_scalar_type {
    CG_T_STR = 0,
    CG_T_NULL,
    CG_T_BOOL,
    CG_T_INT,
    CG_T_FLOAT,
    CG_T_OTHER /* timestamps, merge '<<', value '=' */
} cg_scalar_type;

/* How a PLAIN scalar with this text is read by YAML 1.1 or 1.2 parsers: the
 * "widest" non-string reading wins (CG_T_STR only when both read a string). */
cg_scalar_type cg_yaml_resolve(const char *s, size_t n);

/* True when `s` can be written plain and reads back as the same string. */
bool cg_yaml_plain_safe(const char *s, size_t n);

/* Appends `s` double-quoted with YAML escapes to out (the caller's). */
void cg_yaml_quote(cg_strbuf *out, const char *s, size_t n);

/* The length of the character at s (n bytes left, n >= 1) when it is one a
 * plain scalar cannot carry and a double-quoted one must escape; else 0. */
size_t cg_yaml_special_char(const unsigned char *s, size_t n);

#endif
