#!/usr/bin/env bash
# The performance benchmark (make bench).
#
# For each size, writes a synthetic project (tests/bench/genproj.c) into
# $BENCH_DIR/<size>/ and times, with the median of several runs:
#   generate   `cigen generate` with no previous output (config.yml removed)
#   check      `cigen check` with the output in sync
#   list       `cigen list --json > /dev/null`
#   graph-tree `cigen graph --tree matrix --max-nodes 0 > /dev/null` and
#   graph-workflow  `... --workflow nightly ...`, when cigen has `graph`
# Wall time is measured around `/usr/bin/time -f '%e %M'`, which gives the
# peak RSS (the largest over the runs); MB means MiB (2^20 bytes) throughout.
# Then the floors (`cat config.yml > /dev/null`, and for generate writing the
# same bytes to a new file with fsync), the scaling exponent between
# the two largest sizes, the embedded default (hyperfine when installed), and
# the targets, each PASS or FAIL.  The exit status is 0 unless a command
# failed: a missed target is a finding, not a broken build.
#
# Environment: CIGEN (the binary), GENPROJ (the project generator), BENCH_DIR
# (scratch folder), CIGEN_SRCDIR (the repository), BENCH_SIZES (default
# "1k 10k 100k 1m"), BENCH_RUNS (runs per op below 1M, default 5),
# BENCH_RUNS_1M (default 3).
set -u -o pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${CIGEN_SRCDIR:-$(cd "$here/../.." && pwd)}
CIGEN=${CIGEN:-$srcdir/build/cigen}
GENPROJ=${GENPROJ:-$srcdir/build/bench/genproj}
BENCH_DIR=${BENCH_DIR:-$srcdir/build/bench}
SIZES=${BENCH_SIZES:-1k 10k 100k 1m}
RUNS=${BENCH_RUNS:-5}
RUNS_1M=${BENCH_RUNS_1M:-3}

die() { echo "bench: error: $*" >&2; exit 2; }

[ -x "$CIGEN" ] || die "no cigen binary at $CIGEN (run make first)"
[ -x "$GENPROJ" ] || die "no project generator at $GENPROJ"
if [ ! -x /usr/bin/time ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bench: installing GNU time" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null ||
            die "apt-get install time failed"
    else
        die "/usr/bin/time is missing: apt-get install time"
    fi
fi
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
tmp=$BENCH_DIR/tmp
rm -rf "$tmp" && mkdir -p "$tmp" || die "cannot create $tmp"

# Shards per size: genproj writes 243 jobs per shard.
shards_of() {
    case $1 in
    1k) echo 4 ;; 10k) echo 41 ;; 100k) echo 412 ;; 1m) echo 4115 ;;
    *[0-9]) echo "$1" ;;             # a raw shard count, for experiments
    *) die "unknown size '$1' (1k, 10k, 100k, 1m or a shard count)" ;;
    esac
}

calc() { awk "BEGIN { printf \"$1\n\", $2 }"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
max() { printf '%s\n' "$@" | sort -g | tail -n 1; }
bytes_of() { # total size of the files and folders given (missing ones count 0)
    local t=0 f
    for f in "$@"; do
        [ -e "$f" ] && t=$((t + $(find "$f" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')))
    done
    echo "$t"
}

# run1 OUT CMD...: one timed run; sets T (wall seconds), RSS (KiB), CPU
# (user+sys seconds) and ST (exit status).  stdout goes to OUT.
run1() {
    local out=$1; shift
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$@" >"$out" 2>"$tmp/stderr"
    ST=$?
    local t1=$EPOCHREALTIME
    T=$(calc '%.4f' "$t1 - $t0")
    local e m u s
    read -r e m u s < <(tail -n 1 "$tmp/time")
    RSS=$m
    CPU=$(calc '%.3f' "$u + $s")
}

# timeit OP RUNS PREP CMD...: median wall, max RSS, median CPU over RUNS runs;
# PREP (a function name or :) runs before each.  Sets MED, MAXRSS, MEDCPU.
timeit() {
    local op=$1 runs=$2 prep=$3; shift 3
    local ts=() rs=() cs=() i
    for ((i = 0; i < runs; i++)); do
        $prep
        run1 "$tmp/stdout" "$@"
        if [ "$ST" != 0 ]; then
            echo "bench: $op failed (exit $ST): $*" >&2
            cat "$tmp/stderr" >&2
            return 1
        fi
        ts+=("$T"); rs+=("$RSS"); cs+=("$CPU")
    done
    MED=$(median "${ts[@]}")
    MAXRSS=$(max "${rs[@]}")
    MEDCPU=$(median "${cs[@]}")
}

# report OP JOBS OUT_BYTES: the bench line.
report() {
    local op=$1 jobs=$2 bytes=$3
    local mb; mb=$(calc '%.2f' "$bytes / 1048576")
    printf 'bench op=%s jobs=%s seconds=%s jobs_per_s=%s out_mb=%s mb_per_s=%s peak_rss_mb=%s\n' \
        "$op" "$jobs" "$(calc '%.3f' "$MED")" "$(calc '%.0f' "$jobs / $MED")" "$mb" \
        "$(calc '%.1f' "$mb / $MED")" "$(calc '%.1f' "$MAXRSS / 1024")"
}

has_graph=0 graph_max_nodes=0
if "$CIGEN" graph --help >"$tmp/graph-help" 2>&1; then
    has_graph=1
    grep -q -- --max-nodes "$tmp/graph-help" && graph_max_nodes=1
fi

echo "bench env cores=$(nproc) loadavg=$(cut -d" " -f1-3 /proc/loadavg | tr " " ,) $("$CIGEN" --version 2>/dev/null | tr " " =)"
failed=0
declare -A SEC RSSK OUTB CPUS NJOBS
sizes_done=()
for size in $SIZES; do
    shards=$(shards_of "$size")
    dir=$BENCH_DIR/$size
    runs=$RUNS
    [ "$size" = 1m ] && runs=$RUNS_1M
    rm -rf "$dir"
    "$GENPROJ" "$dir" "$shards" >"$tmp/genproj" || die "genproj failed for $size"
    expect=$(sed -n 's/.*jobs=\([0-9]*\).*/\1/p' "$tmp/genproj")

    # one untimed run: warms the page cache, checks the job count
    "$CIGEN" -C "$dir" generate >"$tmp/first" 2>&1 || { cat "$tmp/first" >&2; die "generate failed for $size"; }
    jobs=$(sed -n 's/^cigen: [^:]*: \([0-9]*\) jobs\{0,1\} in .*/\1/p' "$tmp/first")
    [ "$jobs" = "$expect" ] || echo "bench: warning: $size: cigen made ${jobs:-?} jobs, genproj expected $expect" >&2
    NJOBS[$size]=$jobs
    fresh() { rm -rf "$dir/config.yml" "$dir/diagrams"; }

    timeit generate "$runs" fresh "$CIGEN" -q -C "$dir" generate || { failed=1; continue; }
    outb=$(bytes_of "$dir/config.yml" "$dir/diagrams")
    report generate "$jobs" "$outb"
    SEC[$size,generate]=$MED RSSK[$size,generate]=$MAXRSS OUTB[$size,generate]=$outb CPUS[$size,generate]=$MEDCPU

    timeit check "$runs" : "$CIGEN" -q -C "$dir" check || { failed=1; continue; }
    report check "$jobs" "$outb"
    SEC[$size,check]=$MED RSSK[$size,check]=$MAXRSS CPUS[$size,check]=$MEDCPU

    timeit list "$runs" : "$CIGEN" -C "$dir" list --json || { failed=1; continue; }
    listb=$(wc -c <"$tmp/stdout")
    report list "$jobs" "$listb"
    SEC[$size,list]=$MED RSSK[$size,list]=$MAXRSS CPUS[$size,list]=$MEDCPU

    # the diagrams, drawn in full (no --max-nodes cut-off): the tree and the
    # nightly workflow's job graph, as DOT on stdout
    if [ "$has_graph" = 1 ]; then
        for g in tree workflow; do
            if [ $g = tree ]; then gargs=(--tree matrix); else gargs=(--workflow nightly); fi
            [ "$graph_max_nodes" = 1 ] && gargs+=(--max-nodes 0)
            if timeit graph-$g "$runs" : "$CIGEN" -C "$dir" graph "${gargs[@]}"; then
                report graph-$g "$jobs" "$(wc -c <"$tmp/stdout")"
                SEC[$size,graph-$g]=$MED RSSK[$size,graph-$g]=$MAXRSS CPUS[$size,graph-$g]=$MEDCPU
            else
                failed=1
            fi
        done
    else
        echo "bench op=graph jobs=$jobs skipped (this cigen has no graph command)"
    fi

    # the floor: reading the same bytes from the page cache
    cs=()
    for ((i = 0; i < runs; i++)); do
        run1 /dev/null cat "$dir/config.yml"
        cs+=("$T")
    done
    cat_s=$(median "${cs[@]}")
    SEC[$size,cat]=$cat_s
    line="bench floor=cat jobs=$jobs seconds=$(calc '%.4f' "$cat_s") mb_per_s=$(calc '%.0f' "$outb / 1048576 / $cat_s")"
    for op in generate check list graph-tree graph-workflow; do
        [ -n "${SEC[$size,$op]:-}" ] && line+=" ${op}_x=$(calc '%.1f' "${SEC[$size,$op]} / $cat_s")"
    done
    echo "$line"
    # a second floor for generate, which must write a fresh file: the same
    # bytes written to a new file and fsync'd, as cigen's atomic write does
    cs=()
    for ((i = 0; i < runs; i++)); do
        rm -f "$dir/floor.tmp"
        run1 /dev/null dd if="$dir/config.yml" of="$dir/floor.tmp" bs=1M conv=fsync status=none
        cs+=("$T")
    done
    rm -f "$dir/floor.tmp"
    wr_s=$(median "${cs[@]}")
    SEC[$size,write]=$wr_s
    echo "bench floor=write jobs=$jobs seconds=$(calc '%.4f' "$wr_s") mb_per_s=$(calc '%.0f' "$outb / 1048576 / $wr_s") generate_x=$(calc '%.1f' "${SEC[$size,generate]} / $wr_s")"
    line="bench cpu jobs=$jobs"
    for op in generate check list graph-tree graph-workflow; do
        [ -n "${CPUS[$size,$op]:-}" ] && line+=" ${op}_cpu_s=${CPUS[$size,$op]} ${op}_other_s=$(calc '%.3f' "${SEC[$size,$op]} - ${CPUS[$size,$op]}")"
    done
    echo "$line"
    sizes_done+=("$size")
done

# scaling between the two largest sizes: t ~ n^k
if [ ${#sizes_done[@]} -ge 2 ]; then
    a=${sizes_done[-2]} b=${sizes_done[-1]}
    line="bench scaling jobs=${NJOBS[$a]}..${NJOBS[$b]}"
    for op in generate check list graph-tree graph-workflow; do
        if [ -n "${SEC[$a,$op]:-}" ] && [ -n "${SEC[$b,$op]:-}" ]; then
            line+=" $op=$(calc '%.3f' "log(${SEC[$b,$op]} / ${SEC[$a,$op]}) / log(${NJOBS[$b]} / ${NJOBS[$a]})")"
        fi
    done
    echo "$line"
fi

# hand-written fragments at scale: `generate` on a fragment of N jobs with
# flow mappings, each using one of N/4 anchors from keys of their own
# (which cigen moves before `jobs`), at 20k and 80k jobs, for the scaling
# exponent (quadratic passes over a fragment show here, not in the
# matrices above; the jobs are never run, so lint warns about each)
frag_project() { # DIR JOBS
    local d=$1 n=$2
    rm -rf "$d" && mkdir -p "$d"
    printf 'output: config.yml\nfragments: [setup.yml, big.yml]\nworkflows:\n  ci:\n    jobs: [setup]\nlimits: {max_config_bytes: 1000000000}\n' >"$d/cigen.yml"
    printf 'version: 2.1\njobs:\n  setup:\n    docker: [{image: cimg/base:stable}]\n    steps: [checkout]\n' >"$d/setup.yml"
    awk -v n="$n" 'BEGIN {
        h = int(n / 4)
        for (i = 0; i < h; i++) printf "env_%d: &env%d\n  K: \"%d\"\n", i, i, i
        print "jobs:"
        for (i = 0; i < n; i++)
            printf "  job_%d:\n    docker: [{image: \"cimg/base:%d\"}]\n    environment: *env%d\n    steps: [checkout, {run: echo %d}]\n", i, i, i % h, i
    }' >"$d/big.yml"
}
declare -A FRAG
for n in 20000 80000; do
    frag_project "$BENCH_DIR/fragment-$n" "$n"
    fs=()
    for ((i = 0; i < RUNS; i++)); do
        rm -f "$BENCH_DIR/fragment-$n/config.yml"
        run1 /dev/null "$CIGEN" -q -C "$BENCH_DIR/fragment-$n" generate
        [ "$ST" = 0 ] || { cat "$tmp/stderr" >&2; failed=1; break; }
        fs+=("$T")
    done
    [ ${#fs[@]} -gt 0 ] || continue
    FRAG[$n]=$(median "${fs[@]}")
    echo "bench op=fragment jobs=$n fragment_mb=$(calc '%.2f' "$(wc -c <"$BENCH_DIR/fragment-$n/big.yml") / 1048576") seconds=$(calc '%.3f' "${FRAG[$n]}")"
done

# the embedded default, in a scratch copy of the repository's project
def=$BENCH_DIR/default
rm -rf "$def" && mkdir -p "$def"
tar -C "$srcdir" --exclude=./build --exclude=./.git -cf - . | tar -C "$def" -xf - ||
    die "cannot copy the repository into $def"
"$CIGEN" -C "$def" generate >"$tmp/first" 2>&1 || { cat "$tmp/first" >&2; die "generate failed for the embedded default"; }
def_jobs=$(sed -n "s/^cigen: [^:]*: \([0-9]*\) jobs\{0,1\} in .*/\1/p" "$tmp/first")
declare -A DEF
# generate: config.yml removed first, so it is written (and fsync'd) as after
# an edit; generate-same: already up to date, nothing written; check: in sync
def_ops=(generate generate-same check)
for op in "${def_ops[@]}"; do
    cmd=${op%-same}
    prep=":"
    [ "$op" = generate ] && prep="rm -f $def/config.yml"
    "$CIGEN" -q -C "$def" generate >/dev/null 2>&1
    if command -v hyperfine >/dev/null; then
        how="hyperfine, 100 runs"
        hprep=()
        [ "$op" = generate ] && hprep=(--prepare "$prep")
        hyperfine -N --warmup 10 --runs 100 --style none "${hprep[@]}" --export-json "$tmp/h.json" \
            "$CIGEN -q -C $def $cmd" >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; failed=1; }
        DEF[$op]=$(sed -n 's/.*"median": *\([0-9.e+-]*\).*/\1/p' "$tmp/h.json" | head -n 1)
    else
        how="EPOCHREALTIME, 100 runs"
        ts=()
        for ((i = 0; i < 100; i++)); do
            $prep
            t0=$EPOCHREALTIME
            "$CIGEN" -q -C "$def" "$cmd" >/dev/null 2>&1 || failed=1
            t1=$EPOCHREALTIME
            ts+=("$(calc '%.6f' "$t1 - $t0")")
        done
        DEF[$op]=$(median "${ts[@]}")
    fi
    echo "bench default op=$op jobs=$def_jobs seconds=$(calc '%.4f' "${DEF[$op]:-0}") ms=$(calc '%.2f' "${DEF[$op]:-0} * 1000") ($how, median)"
done

# the targets
verdict() { # NAME VALUE LIMIT UNIT: PASS when VALUE < LIMIT
    awk -v n="$1" -v v="$2" -v l="$3" -v u="$4" 'BEGIN {
        printf "bench target %-44s %9s %-2s  limit %s %-2s  %s\n", n, v, u, l, u, (v + 0 < l + 0) ? "PASS" : "FAIL" }'
}
echo "bench env loadavg_at_end=$(cut -d" " -f1-3 /proc/loadavg | tr " " ,)"
echo "bench targets:"
verdict "default generate wall (writes config.yml)" "$(calc '%.2f' "${DEF[generate]:-1} * 1000")" 10 ms
verdict "default generate wall (up to date)" "$(calc '%.2f' "${DEF[generate-same]:-1} * 1000")" 10 ms
verdict "default check wall" "$(calc '%.2f' "${DEF[check]:-1} * 1000")" 10 ms
[ -n "${SEC[100k,generate]:-}" ] && verdict "100k jobs generate" "$(calc '%.3f' "${SEC[100k,generate]}")" 1 s
[ -n "${SEC[1m,generate]:-}" ] && verdict "1M jobs generate" "$(calc '%.3f' "${SEC[1m,generate]}")" 10 s
for size in "${sizes_done[@]}"; do
    [ "$size" = 100k ] || [ "$size" = 1m ] || continue
    for op in generate check; do
        verdict "$size $op peak RSS / output size" "$(calc '%.2f' "${RSSK[$size,$op]} * 1024 / ${OUTB[$size,generate]}")" 3 x
    done
done
if [ -n "${SEC[1m,generate]:-}" ] && [ -n "${SEC[10k,generate]:-}" ]; then
    verdict "time per job, 1M / 10k (generate)" \
        "$(calc '%.2f' "(${SEC[1m,generate]} / ${NJOBS[1m]}) / (${SEC[10k,generate]} / ${NJOBS[10k]})")" 1.3 x
fi
[ -n "${FRAG[20000]:-}" ] && [ -n "${FRAG[80000]:-}" ] &&
    verdict "big fragment scaling exponent, 20k..80k jobs" "$(calc '%.2f' "log(${FRAG[80000]} / ${FRAG[20000]}) / log(4)")" 1.3 ""
if [ ${#sizes_done[@]} -ge 1 ]; then
    big=${sizes_done[-1]}
    [ -n "${SEC[$big,generate]:-}" ] &&
        verdict "$big generate time / cat floor" "$(calc '%.1f' "${SEC[$big,generate]} / ${SEC[$big,cat]}")" 10 x
fi
rm -rf "$tmp"
exit "$failed"
