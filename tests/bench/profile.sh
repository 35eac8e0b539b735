#!/usr/bin/env bash
# Profiles cigen on a synthetic project (make bench-profile): callgrind for
# instructions (inclusive and self, per function) and massif for the heap
# (peak and the allocation sites that hold it), for `generate` (no previous
# output) and `check` (in sync).  The raw files stay in
# $BENCH_DIR/profile-<size>/ for callgrind_annotate, kcachegrind or ms_print.
#
# Environment: as run.sh, plus BENCH_PROFILE_SIZE (1k, 10k, 100k or a shard
# count; default 100k, which takes a few minutes under valgrind) and
# BENCH_PROFILE_TOP (lines per table, default 25).
set -u -o pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${CIGEN_SRCDIR:-$(cd "$here/../.." && pwd)}
CIGEN=${CIGEN:-$srcdir/build/cigen}
GENPROJ=${GENPROJ:-$srcdir/build/bench/genproj}
BENCH_DIR=${BENCH_DIR:-$srcdir/build/bench}
size=${BENCH_PROFILE_SIZE:-100k}
top=${BENCH_PROFILE_TOP:-25}

die() { echo "profile: error: $*" >&2; exit 2; }
command -v valgrind >/dev/null || die "valgrind is missing: apt-get install valgrind"
[ -x "$CIGEN" ] || die "no cigen binary at $CIGEN (run make first)"
[ -x "$GENPROJ" ] || die "no project generator at $GENPROJ"

case $size in
1k) shards=4 ;; 10k) shards=41 ;; 100k) shards=412 ;; 1m) shards=4115 ;;
*[0-9]) shards=$size ;;
*) die "unknown size '$size'" ;;
esac
mkdir -p "$BENCH_DIR" && BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
out=$BENCH_DIR/profile-$size
proj=$out/project
rm -rf "$out" && mkdir -p "$out" || die "cannot create $out"
"$GENPROJ" "$proj" "$shards" >/dev/null || die "genproj failed"
"$CIGEN" -C "$proj" generate || die "generate failed"

# callgrind_annotate lists a function once per spelling of its file: keep the
# first, drop the object name.
tidy() { sed -e 's# \[[^]]*\]$##' -e 's#[^ ]*/generator/#generator/#' | awk '!seen[$NF]++'; }

for op in generate check; do
    echo "== $op, $size jobs"
    [ "$op" = generate ] && rm -f "$proj/config.yml"
    valgrind -q --tool=callgrind --callgrind-out-file="$out/callgrind.$op.out" \
        "$CIGEN" -q -C "$proj" "$op" || die "$op failed under callgrind"
    total=$(callgrind_annotate --auto=no "$out/callgrind.$op.out" | awk '/PROGRAM TOTALS/ { print $1; exit }')
    echo "-- instructions: $total"
    echo "-- inclusive (top $top below main)"
    callgrind_annotate --auto=no --inclusive=yes "$out/callgrind.$op.out" | tidy |
        awk '/\(below main\)|libc-start|ld-linux|0x0000/ { next } /^ *[0-9,]+ +\( *[0-9.]+%\)/' | head -n "$top"
    echo "-- self (top $top)"
    callgrind_annotate --auto=no "$out/callgrind.$op.out" | tidy |
        awk '/PROGRAM TOTALS/ { next } /^ *[0-9,]+ +\( *[0-9.]+%\)/' | head -n "$top"

    [ "$op" = generate ] && rm -f "$proj/config.yml"
    valgrind -q --tool=massif --massif-out-file="$out/massif.$op.out" \
        "$CIGEN" -q -C "$proj" "$op" || die "$op failed under massif"
    peak=$(awk -F= '/^mem_heap_B=/ { h = $2 } /^mem_heap_extra_B=/ { if (h + $2 > m) m = h + $2 } END { print m }' "$out/massif.$op.out")
    outb=$(stat -c %s "$proj/config.yml")
    echo "-- heap peak: $peak bytes ($(awk "BEGIN { printf \"%.2f\", $peak / $outb }")x config.yml, $outb bytes)"
    echo "-- held at the peak (allocation sites above 2%, four levels of callers)"
    ms_print --threshold=2 "$out/massif.$op.out" |
        awk 'BEGIN { want = -1 }
             /Detailed snapshots:/ { if (match($0, /[0-9]+ \(peak\)/)) want = substr($0, RSTART, RLENGTH - 7) + 0 }
             /^ *[0-9]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+$/ { cur = $1 + 0; on = 0 }
             cur == want && /heap allocation functions/ { on = 1; next }
             on && match($0, /->/) && RSTART <= 7 && !/below ms_print/ { print }' | cut -c1-160
done
echo "raw profiles: $out"
echo "note: valgrind does not emulate SHA-NI, so digest.c runs its portable SHA-256 here (about 30% of the"
echo "instructions at 100k); on hardware with SHA-NI it is about 3% of the time (perf record)."
