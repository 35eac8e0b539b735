/* yaml_path — the paths that name a value in a loaded YAML file: JSON
 * pointers such as "/jobs/build/steps/0", with "~" and "/" in keys written
 * "~0" and "~1" (RFC 6901).  lang/yamlload.h keys positions by them.
 * Paths live in the caller's cg_strbuf.
 */
#ifndef CIGEN_YAML_PATH_H
#define CIGEN_YAML_PATH_H

#include <stddef.h>

#include "base/strbuf.h"

/* Path building: append "/<escaped key>" or "/<index>". */
void cg_path_push_key(cg_strbuf *path, const char *key);
void cg_path_push_index(cg_strbuf *path, size_t index);

/* out = path + "/<escaped key>" (or "/<index>"); out's old text is
 * dropped, its buffer reused (the caller releases it). */
void cg_path_join_key(cg_strbuf *out, const char *path, const char *key);
void cg_path_join_index(cg_strbuf *out, const char *path, size_t index);

#endif
