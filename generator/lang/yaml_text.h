/* yaml_text — the checks cigen makes on a YAML file's bytes before libyaml
 * reads them: UTF-8 only (no byte-order mark, no UTF-16), no control
 * characters or NUL bytes, and none of the line breaks that libyaml (YAML
 * 1.1) counts but cigen's positions do not (a lone CR, NEL, U+2028,
 * U+2029), each reported at its line and column.
 */
#ifndef CIGEN_YAML_TEXT_H
#define CIGEN_YAML_TEXT_H

#include <stddef.h>

#include "base/diag.h"

/* 0, or -1 after recording the first problem of text[0..len) in err
 * (`file` names it in the message; borrowed). */
int cg_yaml_check_text(const char *file, const char *text, size_t len, cg_error *err);

#endif
