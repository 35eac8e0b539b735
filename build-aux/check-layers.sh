#!/bin/sh
# The layering rule of generator/ (docs/architecture.md):
#
#   base < io < lang < model < render < audit < cmd < main.c
#
# A file includes headers of its own folder and of folders to its left, never
# of a folder to its right; and no two modules include each other, directly
# or through others.  A module is name.c + name.h, with name_impl.h (what
# only its parts share) and its parts name_*.c beside a name_impl.h.  Only
# io/ and cmd/ touch files, and only cmd/ prints or starts threads: base/
# lang/ model/ render/ audit/ compute.  A line may be excused with the
# comment `layers: allowed` and the reason.
#
# With OBJ_DIR (the objects of GENERATOR_DIR's files, OBJ_DIR/layer/name.o)
# the calls are checked too, from what `nm` says each object defines and
# needs: no two modules call each other, directly or through others (an
# include cycle the headers do not show: a module serving callers that
# call back into it).
#
# Exit 1 with one line per violation.
#
#   build-aux/check-layers.sh [GENERATOR_DIR [OBJ_DIR]]
set -eu
dir=${1:-generator}
obj=${2:-}
layers="base io lang model render audit cmd"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# every quoted include, as FILE LINE INCLUDED
# shellcheck disable=SC2012 # generator/ names are plain
files=$(cd "$dir" && ls ./*.c ./*/*.c ./*/*.h 2>/dev/null | sed 's|^\./||')
# shellcheck disable=SC2086 # one word per file
(cd "$dir" && awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
        s = $0; sub(/^[^"]*"/, "", s); sub(/".*$/, "", s); print FILENAME, FNR, s }' $files) >"$tmp/includes"

# one awk for the rules on includes; module edges for tsort
# shellcheck disable=SC2012
(cd "$dir" && ls ./*/*.h | sed 's|^\./||') >"$tmp/headers"
awk -v dir="$dir" -v layers="$layers" -v edges="$tmp/edges" '
    BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
    FILENAME ~ /headers$/ { header[$1] = 1; next }
    function layer(path) { return index(path, "/") ? substr(path, 1, index(path, "/") - 1) : "main" }
    function r(x) { return (x in rank) ? rank[x] : 99 }
    function module(path) { sub(/\.[ch]$/, "", path); sub(/_impl$/, "", path); return path }
    {
        file = $1; line = $2; inc = $3; from = layer(file)
        if (!index(inc, "/")) {
            printf "%s/%s:%s: error: include \"%s\" without its folder (write \"layer/%s\")\n", dir, file, line, inc, inc
            bad = 1; next
        }
        if (!(inc in header)) {
            printf "%s/%s:%s: error: \"%s\" is not a header of %s/\n", dir, file, line, inc, dir
            bad = 1; next
        }
        to = layer(inc)
        if (r(to) > r(from)) {
            printf "%s/%s:%s: error: %s/ includes \"%s\": %s/ is above %s/ (rule: %s)\n", dir, file, line, from, inc, to, from, layers
            bad = 1
        }
        if (module(inc) != module(file)) print module(file), module(inc) > edges
    }
    END { exit bad }' "$tmp/headers" "$tmp/includes" || status=1
status=${status:-0}

# the pure layers: no file access, no printing, no threads
for f in "$dir"/base/*.c "$dir"/lang/*.c "$dir"/model/*.c "$dir"/render/*.c "$dir"/audit/*.c; do
    [ -f "$f" ] && echo "$f"
done >"$tmp/pure"
if [ -s "$tmp/pure" ]; then
    # shellcheck disable=SC2046
    grep -nE '(^|[^_a-z])(fopen|fdopen|open|openat|opendir|readdir|unlink|rename|mkdir|printf|fprintf|puts|fputs|fwrite|perror|pthread_create|getenv)[[:space:]]*\(' $(cat "$tmp/pure") |
        grep -v 'layers: allowed' | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/\*|\*)' |
        grep -v '__attribute__((format(printf' >"$tmp/calls" || true
    if [ -s "$tmp/calls" ]; then
        awk -F: '{ printf "%s:%s: error: file access, printing or a thread outside io/ and cmd/\n", $1, $2 }' "$tmp/calls"
        status=1
    fi
fi

# tsort names the modules of every include cycle on stderr
touch "$tmp/edges"
cycles=$(tsort "$tmp/edges" 2>&1 >/dev/null | sed -n 's/^tsort: //p' | grep -v 'input contains a loop' || true)
if [ -n "$cycles" ]; then
    echo "$dir: error: include cycle among these modules:"
    printf '%s\n' "$cycles" | sed 's/^/  /'
    status=1
fi
# the calls: each object's module (a part name_*.c is name's when a
# name_impl.h is beside it), the symbols it defines and those it needs
if [ -n "$obj" ]; then
    # (two nm runs over every object, one awk: on a busy machine a process
    # per object costs seconds)
    (cd "$dir" && ls ./*/*_impl.h ./*/*.c 2>/dev/null | sed 's|^\./||') >"$tmp/sources"
    # shellcheck disable=SC2086 # object paths are plain
    objs=$(cd "$obj" && ls ./*/*.o 2>/dev/null | sed 's|^\./||' | tr '\n' ' ')
    if [ -n "$objs" ]; then
        # shellcheck disable=SC2086
        (cd "$obj" && nm -A -g --defined-only $objs | sed 's/^/D /' && nm -A -u $objs | sed 's/^/U /') >"$tmp/nm"
    fi
    touch "$tmp/nm"
    awk 'FILENAME ~ /sources$/ {
             if ($1 ~ /_impl\.h$/) { b = $1; sub(/_impl\.h$/, "", b); impl[b] = 1 } else src[$1] = 1
             next }
         function module(o,    m, b) {
             sub(/\.o$/, "", o); m = o
             for (b in impl) if (o == b || index(o, b "_") == 1) m = b
             return m }
         { f = $2; sub(/:.*$/, "", f); c = f; sub(/\.o$/, ".c", c)
           if (!(c in src)) next    # an object of a file since removed
           print $1, $NF, module(f) }' "$tmp/sources" "$tmp/nm" >"$tmp/syms"
    awk '$1 == "D" { def[$2] = $3; next } { need[NR] = $2; from[NR] = $3 }
         END { for (i in need) if ((need[i] in def) && def[need[i]] != from[i]) print from[i], def[need[i]] }' \
        "$tmp/syms" | sort -u >"$tmp/calls"
    touch "$tmp/calls"
    cycles=$(tsort "$tmp/calls" 2>&1 >/dev/null | sed -n 's/^tsort: //p' | grep -v 'input contains a loop' | sort -u || true)
    if [ -n "$cycles" ]; then
        echo "$dir: error: call cycle among these modules (each calls the next, the last the first):"
        printf '%s\n' "$cycles" | sed 's/^/  /'
        status=1
    fi
fi
exit "$status"
