#!/bin/sh
# The layering rule of generator/ (docs/architecture.md):
#
#   base < io < lang < model < render < check < cmd < main.c
#
# A file includes headers of its own folder and of folders to its left, never
# of a folder to its right; and no two modules (name.c + name.h) include each
# other, directly or through others.  Only io/ and cmd/ touch files, and only
# cmd/ prints or starts threads (io/'s background writer is started by cmd/):
# base/ lang/ model/ render/ check/ compute.  A line may be excused with the
# comment `layers: allowed` and the reason.  Exit 1 with one line per
# violation.
#
#   build-aux/check-layers.sh [GENERATOR_DIR]
set -eu
dir=${1:-generator}
layers="base io lang model render check cmd"

rank() {
    r=0
    for l in $layers; do
        [ "$l" = "$1" ] && { echo $r; return; }
        r=$((r + 1))
    done
    echo 99   # main.c and anything outside a layer: the top
}

status=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in "$dir"/*.c "$dir"/*/*.c "$dir"/*/*.h; do
    [ -f "$f" ] || continue
    rel=${f#"$dir"/}
    case $rel in */*) from=${rel%%/*} ;; *) from=main ;; esac
    mod=${rel%.*}
    # include lines: `#include "layer/name.h"`
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
        n=${line%%:*}
        inc=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
        case $inc in
        */*) to=${inc%%/*} ;;
        *) echo "$f:$n: error: include \"$inc\" without its folder (write \"layer/$inc\")"; echo x >>"$edges.bad"; continue ;;
        esac
        if [ ! -f "$dir/$inc" ]; then
            echo "$f:$n: error: \"$inc\" is not a header of $dir/"; echo x >>"$edges.bad"; continue
        fi
        if [ "$(rank "$to")" -gt "$(rank "$from")" ]; then
            echo "$f:$n: error: $from/ includes \"$inc\": $to/ is above $from/ (rule: $layers)"
            echo x >>"$edges.bad"
        fi
        target=${inc%.*}
        [ "$target" = "$mod" ] || echo "$mod $target" >>"$edges"
    done
done
# the pure layers: no file access, no printing, no threads
for f in "$dir"/base/*.c "$dir"/lang/*.c "$dir"/model/*.c "$dir"/render/*.c "$dir"/check/*.c; do
    [ -f "$f" ] || continue
    grep -nE '(^|[^_a-z])(fopen|fdopen|open|openat|opendir|readdir|unlink|rename|mkdir|printf|fprintf|puts|fputs|fwrite|perror|pthread_create|getenv)[[:space:]]*\(' "$f" |
        grep -v 'layers: allowed' | grep -vE '^[0-9]+:[[:space:]]*(/\*|\*)' |
        grep -vE '__attribute__\(\(format\(printf' |
        while IFS= read -r line; do
            printf "%s:%s: error: file access, printing or a thread outside io/ and cmd/\n" "$f" "${line%%:*}"
            echo x >>"$edges.bad"
        done
done
if [ -s "$edges.bad" ] 2>/dev/null; then status=1; fi
rm -f "$edges.bad"
# tsort names the modules of every include cycle on stderr
cycles=$(tsort "$edges" 2>&1 >/dev/null | sed -n 's/^tsort: //p' | grep -v 'input contains a loop' || true)
if [ -n "$cycles" ]; then
    echo "$dir: error: include cycle among these modules:"
    printf '%s\n' "$cycles" | sed 's/^/  /'
    status=1
fi
exit $status
