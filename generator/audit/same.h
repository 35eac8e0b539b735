/* same — do two YAML documents mean the same data?
 *
 * What `cigen import` proves: the config generated from the sources it
 * wrote means what the imported config means.  Both documents are read as
 * loaded (lang/yamlload.h: aliases and merge keys expanded), mappings
 * compared as sets of keys, sequences item by item in order, and scalars by
 * what a YAML 1.1 reader makes of them: a plain `3.10` is the number 3.1, a
 * quoted "3.10" the string "3.10", and the two differ.  A plain scalar whose
 * reading is not a plain string (a number, a boolean, null, a timestamp) is
 * compared by its type and its value, and only equals one of the same type.
 *
 * Pure: nothing is printed.
 */
#ifndef CIGEN_SAME_H
#define CIGEN_SAME_H

#include <stddef.h>

#include "base/strbuf.h"
#include "lang/yamlload.h"

/* The number of differences between the documents a and b (0: the same
 * data).  The first max_lines of them are appended to report (the
 * caller's), one a line: the path (a JSON pointer, "" for the root) and
 * what differs, naming a's side `a_name` and b's `b_name`. */
size_t cg_yaml_same(const cg_doc *a, const char *a_name, const cg_doc *b, const char *b_name,
                    cg_strbuf *report, size_t max_lines);

#endif
