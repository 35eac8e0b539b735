/* yaml_snake — what SnakeYAML (1.33: the parser CircleCI reads config.yml
 * with) refuses in text libyaml reads.  cigen copies a fragment's bytes into
 * config.yml, so exit 0 must mean CircleCI can read them; these are refused
 * at their line and column:
 *
 *   - a tab where SnakeYAML looks for the next token (it skips spaces only):
 *     after `key:`, `-`, `?`, `,`, `[`, `{`, an anchor, a tag, a quoted
 *     scalar, `---` or `...`, before a comment, leading a line of a flow
 *     collection or of a plain scalar's continuation, alone on a line;
 *     a tab right after a plain scalar (before the line ends) is read as
 *     part of it, and a tab inside a comment or a quoted or block scalar is
 *     text, so those stay;
 *   - a tab in a directive (`%YAML<TAB>1.1`);
 *   - a block scalar's header followed by anything but a space or the line's
 *     end (`|#c`, `|<TAB>`, `>-<TAB># c`), or a tab before its comment;
 *   - the escapes `\/` and `\<TAB>` in a double-quoted scalar;
 *   - plain scalars SnakeYAML resolves to a type it cannot build: `<<`
 *     anywhere but as a mapping's key (the merge key), and a float with no
 *     digit (`._`, `-.__e+1`).
 *
 * tests/check_snake.c holds a random-YAML differential against SnakeYAML
 * itself (where a JDK and libyaml-snake-java are installed).
 */
#ifndef CIGEN_YAML_SNAKE_H
#define CIGEN_YAML_SNAKE_H

#include <stddef.h>

#include "base/diag.h"

/* 0, or -1 after recording the first of the above in text[0..len) (text
 * libyaml has read without an error; `file` names it in the message). */
int cg_yaml_check_snake(const char *file, const char *text, size_t len, cg_error *err);

#endif
