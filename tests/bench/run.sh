#!/usr/bin/env bash
# The performance benchmark (make bench): cigen on the configs CircleCI
# accepts, each operation's time against what a Python generator pays only
# to read the same config with PyYAML's C loader.
#
# Projects, each copied into $BENCH_DIR/<name>/:
#   default        the embedded default project (the repository's cigen.yml)
#   example-NAME   each project of examples/
#   shard-N        the default with its tree repeated under a `shard`
#                  dimension of N values (tests/bench/shard.py): about 94 KB
#                  of config.yml a shard, 85 shards just under CircleCI's
#                  8 MB (`limits: max_config_bytes`, 8 MiB)
# Operations, the median of BENCH_RUNS runs (wall and CPU seconds):
#   generate       `cigen generate` with config.yml and the diagrams removed
#   generate-same  `cigen generate` with everything already up to date
#   check          `cigen check` in sync
#   check-drift    `cigen check` after a template edit changed every job of
#                  a template (the default's Linux builds: their docker
#                  image; exits 1, the report kept in
#                  $BENCH_DIR/report-<name>.txt)
#   lint           `cigen lint`
#   list           `cigen list --json`
# and the floors: `pyyaml`, PyYAML's C loader reading config.yml
# (yaml.load(f, Loader=yaml.CSafeLoader), timed inside Python: the
# interpreter's start left out), and on the shards, where jsonnet is
# installed, `jsonnet` (a jsonnet program writing as many workflow entries
# as JSON; interpreter included).  One line per project and operation:
#   bench project=P op=OP jobs=J config_mb=M seconds=S cpu_s=C vs_pyyaml=X
# (vs_pyyaml: CPU seconds over PyYAML's) and at the end the target: at the
# largest shard, check and generate each at most a tenth of the PyYAML
# read, in CPU seconds (wall time on a shared machine measures the other
# jobs; PASS or FAIL; a miss is a finding, not a failure: the exit status
# is 0 unless a command failed).
#
# Environment: CIGEN (the binary), BENCH_DIR (scratch folder), CIGEN_SRCDIR
# (the repository), BENCH_SHARDS (default "10 40 85"), BENCH_RUNS
# (default 5).
set -u -o pipefail
export LC_ALL=C
# an older cigen kept stamps of in-sync checks: never let one answer here
export CIGEN_CACHE_DIR=off

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${CIGEN_SRCDIR:-$(cd "$here/../.." && pwd)}
CIGEN=${CIGEN:-$srcdir/build/cigen}
BENCH_DIR=${BENCH_DIR:-$srcdir/build/bench}
SHARDS=${BENCH_SHARDS:-10 40 85}
RUNS=${BENCH_RUNS:-5}

die() { echo "bench: error: $*" >&2; exit 2; }
[ -x "$CIGEN" ] || die "no cigen binary at $CIGEN (run make first)"
python3 -c 'import yaml; yaml.CSafeLoader' 2>/dev/null ||
    die "PyYAML with its C loader is missing: apt-get install python3-yaml"
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
echo "bench env cigen=$CIGEN cores=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg)"

# the default project's files (what cigen.yml names, and its outputs)
copy_default() {
    rm -rf "$1" && mkdir -p "$1" &&
        (cd "$srcdir" && cp -r cigen.yml config.yml dimensions templates verbatim-sources diagrams "$1"/)
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# time_op PREP CMD: median wall and CPU seconds of RUNS runs of CMD (in the
# project folder), PREP run untimed before each; sets WALL and CPU
time_op() {
    local prep=$1 cmd=$2 i t
    : >"$BENCH_DIR/wall" && : >"$BENCH_DIR/cpu"
    for ((i = 0; i < RUNS; i++)); do
        eval "$prep" >/dev/null 2>&1
        t=$( { TIMEFORMAT='%R %U %S'; time eval "$cmd" >/dev/null 2>&1; } 2>&1 | tail -1)
        echo "$t" | awk '{ print $1 }' >>"$BENCH_DIR/wall"
        echo "$t" | awk '{ print $2 + $3 }' >>"$BENCH_DIR/cpu"
    done
    WALL=$(median <"$BENCH_DIR/wall")
    CPU=$(median <"$BENCH_DIR/cpu")
}

# a jsonnet program writing n workflow entries of the default's shape
jsonnet_floor() {
    local n=$1 f=$BENCH_DIR/entries.jsonnet
    cat >"$f" <<'EOF'
local n = std.parseInt(std.extVar('n'));
{ workflows: { nightly: { jobs: [
  { binary_linux_build: { name: 'binary_linux_manywheel_' + std.toString(i) + '_build',
      build_environment: 'manywheel 3.7m cu100', docker_image: 'pytorch/manylinux-cuda100',
      requires: ['setup'], filters: { branches: { only: ['main'] } } } }
  for i in std.range(1, n) ] } } }
EOF
    time_op "" "jsonnet --ext-str n=$n '$f' >/dev/null"
}

report() { # report PROJECT OP JOBS MB
    awk -v p="$1" -v op="$2" -v j="$3" -v mb="$4" -v s="$WALL" -v c="$CPU" -v y="${PYYAML:-0}" 'BEGIN {
        printf "bench project=%s op=%s jobs=%s config_mb=%.2f seconds=%.3f cpu_s=%.3f", p, op, j, mb, s, c
        if (y > 0) printf " vs_pyyaml=%.3f", c / y
        printf "\n" }'
}

bench_project() { # bench_project NAME DIR
    local name=$1 dir=$2 jobs mb tpl
    "$CIGEN" -q -C "$dir" generate >/dev/null 2>&1 || die "$name: generate failed"
    "$CIGEN" -q -C "$dir" check >/dev/null 2>&1 || die "$name: not in sync after generate"
    jobs=$("$CIGEN" -C "$dir" list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    mb=$(awk -v b="$(wc -c <"$dir/$(awk '/^output:/ { print $2 }' "$dir/cigen.yml")")" 'BEGIN { print b / 1048576 }')
    local out=$dir/$(awk '/^output:/ { print $2 }' "$dir/cigen.yml")
    WALL=$(python3 -c '
import statistics, sys, time, yaml
ts = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); c = time.process_time()
    with open(sys.argv[1]) as f:
        yaml.load(f, Loader=yaml.CSafeLoader)
    ts.append((time.perf_counter() - t, time.process_time() - c))
print(statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts))' "$out" "$RUNS")
    CPU=${WALL#* } WALL=${WALL% *}
    PYYAML=$CPU
    report "$name" pyyaml "$jobs" "$mb"
    time_op "rm -rf '$out' '$dir/diagrams'" "'$CIGEN' -q -C '$dir' generate"
    report "$name" generate "$jobs" "$mb"
    [ "$name" = "shard-$LAST" ] && GEN_TOP=$CPU
    time_op "" "'$CIGEN' -q -C '$dir' generate"
    report "$name" generate-same "$jobs" "$mb"
    time_op "" "'$CIGEN' -q -C '$dir' check"
    report "$name" check "$jobs" "$mb"
    [ "$name" = "shard-$LAST" ] && CHECK_TOP=$CPU
    time_op "" "'$CIGEN' -C '$dir' lint"
    report "$name" lint "$jobs" "$mb"
    time_op "" "'$CIGEN' -C '$dir' list --json"
    report "$name" list "$jobs" "$mb"
    # a template edit: the first placeholder value of a build template
    # (else of the first template) gets a suffix, in every job it writes
    tpl=$( (ls "$dir"/templates/*build*.yml "$dir"/templates/*.yml 2>/dev/null) | head -1)
    if [ -n "$tpl" ]; then
        cp "$tpl" "$BENCH_DIR/tpl.orig"
        sed -i '0,/: "{{ \([a-z_]*\) }}"/s//: "{{ \1 }}-x"/' "$tpl"
        if ! cmp -s "$tpl" "$BENCH_DIR/tpl.orig" && "$CIGEN" -C "$dir" lint >/dev/null 2>&1; then
            time_op "" "'$CIGEN' -C '$dir' check"
            "$CIGEN" -C "$dir" check >"$BENCH_DIR/report-$name.txt" 2>&1
            report "$name" check-drift "$jobs" "$mb"
        fi
        cp "$BENCH_DIR/tpl.orig" "$tpl"
    fi
    if command -v jsonnet >/dev/null && [ "${name#shard-}" != "$name" ]; then
        jsonnet_floor "$jobs"
        report "$name" jsonnet "$jobs" "$mb"
    fi
}

LAST=$(echo "$SHARDS" | awk '{ print $NF }')
copy_default "$BENCH_DIR/default" || die "cannot copy the default project"
bench_project default "$BENCH_DIR/default"
for ex in "$srcdir"/examples/*/; do
    ex=$(basename "$ex")
    rm -rf "$BENCH_DIR/example-$ex" && cp -r "$srcdir/examples/$ex" "$BENCH_DIR/example-$ex"
    bench_project "example-$ex" "$BENCH_DIR/example-$ex"
done
for n in $SHARDS; do
    copy_default "$BENCH_DIR/shard-$n" && python3 "$here/shard.py" "$BENCH_DIR/shard-$n" "$n" ||
        die "cannot shard the default"
    bench_project "shard-$n" "$BENCH_DIR/shard-$n"
done
awk -v g="${GEN_TOP:-0}" -v c="${CHECK_TOP:-0}" -v y="$PYYAML" -v n="$LAST" 'BEGIN {
    printf "bench target shard-%s generate %.3f cpu s <= pyyaml/10 %.3f s: %s\n", n, g, y / 10, g <= y / 10 ? "PASS" : "FAIL"
    printf "bench target shard-%s check %.3f cpu s <= pyyaml/10 %.3f s: %s\n", n, c, y / 10, c <= y / 10 ? "PASS" : "FAIL" }'
echo "bench env load=$(cut -d' ' -f1-3 /proc/loadavg)"
