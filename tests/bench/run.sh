#!/usr/bin/env bash
# The performance benchmark (make bench).
#
# For each size, writes a synthetic project (tests/bench/genproj.c) into
# $BENCH_DIR/<size>/ and times, with the median of several runs:
#   generate        `cigen generate` with no previous output (config.yml removed)
#   check           `cigen check` with the output in sync, after a first check
#                   left its stamp (what a contributor's repeated check costs)
#   check-full      the same with no stamp (CIGEN_CACHE_DIR=off): a full check,
#                   what CI's first check on a fresh clone costs
#   check-hand      `cigen check` after one line of config.yml was edited by hand
#   check-template  `cigen check` after a template was edited (every Linux build
#                   job changes); both drifted checks exit 1, their reports are
#                   kept in $BENCH_DIR/report-SIZE-KIND.txt
#   list            `cigen list --json`
#   graph-tree      `cigen graph --tree matrix --max-nodes 0 --collapse none` and
#   graph-workflow  `... --workflow nightly ...`, when cigen has `graph`
#   lint, coverage  `cigen lint`, `cigen coverage` (exits 1: pairs are missing)
#   explain         `cigen explain` of one Linux build job
# Wall time is measured around `/usr/bin/time -f '%e %M'`, which gives the
# peak RSS (the largest over the runs); MB means MiB (2^20 bytes) throughout.
# One line per size and operation:
#   bench op=OP jobs=N seconds=S jobs_per_s=J out_mb=O peak_rss_mb=R rss_x=X
# where rss_x is the peak RSS over the larger of the operation's input (the
# sources; for check the committed outputs it compares) and its output (what
# it writes or prints; for lint the config it renders and lints), and cfg_x
# the peak RSS over the size of the config.yml the sources make (the matrix).
# Then per size the floors, measured in the same run: `cat config.yml`
# (check's) and `cp config.yml NEW && sha256sum NEW` (generate's); the
# scaling exponent between the two largest sizes, the embedded default
# (hyperfine when installed), and the targets, each PASS or FAIL.  The exit
# status is 0 unless a command failed: a missed target is a finding, not a
# broken build.
#
# Environment: CIGEN (the binary), GENPROJ (the project generator), BENCH_DIR
# (scratch folder), CIGEN_SRCDIR (the repository), BENCH_SIZES (default
# "1k 10k 100k 1m"), BENCH_RUNS (runs per op below 1M, default 5),
# BENCH_RUNS_1M (default 3), BENCH_RUNS_1M_NEW (at 1M, for the drifted
# checks, lint, coverage and explain: default 1, to keep the run short).
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
RUNS_1M_NEW=${BENCH_RUNS_1M_NEW:-1}  # at 1M: the drifted checks, lint, coverage, explain

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
# hyperfine times the embedded default (a shell loop adds the cost of bash's
# own fork to every run: on a loaded VM, several milliseconds); optional
if ! command -v hyperfine >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench: installing hyperfine" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null 2>&1 ||
        echo "bench: hyperfine could not be installed: the default is timed from a shell loop" >&2
fi
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
tmp=$BENCH_DIR/tmp
rm -rf "$tmp" && mkdir -p "$tmp" || die "cannot create $tmp"
# check's stamps (cigen check --help) go here, not to the user's cache
export CIGEN_CACHE_DIR=$BENCH_DIR/stamps
rm -rf "$CIGEN_CACHE_DIR"

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

# timeit OP RUNS PREP OKST CMD...: median wall, max RSS, median CPU over RUNS
# runs; PREP (a function name or :) runs before each; OKST is the exit status
# expected (a drifted check exits 1).  Sets MED, MAXRSS, MEDCPU.
timeit() {
    local op=$1 runs=$2 prep=$3 okst=$4; shift 4
    local ts=() rs=() cs=() i
    for ((i = 0; i < runs; i++)); do
        $prep
        run1 "$tmp/stdout" "$@"
        if [ "$ST" != "$okst" ]; then
            echo "bench: $op failed (exit $ST, expected $okst): $*" >&2
            head -c 2000 "$tmp/stderr" >&2
            return 1
        fi
        ts+=("$T"); rs+=("$RSS"); cs+=("$CPU")
    done
    MED=$(median "${ts[@]}")
    MAXRSS=$(max "${rs[@]}")
    MEDCPU=$(median "${cs[@]}")
}

# report OP JOBS OUT_BYTES REF_BYTES [EXTRA]: the bench line.  OUT is what
# the operation produces or compares; REF the larger of its input and its
# output, which its peak RSS is measured against (rss_x).
report() {
    local op=$1 jobs=$2 bytes=$3 ref=$4 extra=${5:-}
    local mb; mb=$(calc '%.2f' "$bytes / 1048576")
    printf 'bench op=%s jobs=%s seconds=%s jobs_per_s=%s out_mb=%s peak_rss_mb=%s rss_x=%s cfg_x=%s%s\n' \
        "$op" "$jobs" "$(calc '%.3f' "$MED")" "$(calc '%.0f' "$jobs / $MED")" "$mb" \
        "$(calc '%.1f' "$MAXRSS / 1024")" "$(calc '%.2f' "$MAXRSS * 1024 / $ref")" \
        "$(calc '%.2f' "$MAXRSS * 1024 / ${CFGB[$size]:-$ref}")" "$extra"
}

has_graph=0 graph_max_nodes=0 graph_collapse=0
if "$CIGEN" graph --help >"$tmp/graph-help" 2>&1; then
    has_graph=1
    grep -q -- --max-nodes "$tmp/graph-help" && graph_max_nodes=1
    grep -q -- '--collapse none' "$tmp/graph-help" && graph_collapse=1
fi

echo "bench env cores=$(nproc) loadavg=$(cut -d" " -f1-3 /proc/loadavg | tr " " ,) $("$CIGEN" --version 2>/dev/null | tr " " =)"
# the process floor of RSS: what `cigen --version` peaks at (the binary and
# its libraries); an RSS limit below it cannot be met by any operation
run1 /dev/null "$CIGEN" --version
RSS_FLOOR=$RSS
echo "bench floor process_rss_kb=$RSS_FLOOR"
failed=0
declare -A SEC RSSK REFB CPUS NJOBS CFGB
sizes_done=()
OPS=(generate check check-full check-hand check-template list graph-tree graph-workflow lint coverage explain)
for size in $SIZES; do
    shards=$(shards_of "$size")
    dir=$BENCH_DIR/$size
    runs=$RUNS xruns=$RUNS
    [ "$size" = 1m ] && runs=$RUNS_1M xruns=$RUNS_1M_NEW
    rm -rf "$dir" "$dir-hand" "$dir-template"
    "$GENPROJ" "$dir" "$shards" >"$tmp/genproj" || die "genproj failed for $size"
    jobs=$(sed -n 's/.*jobs=\([0-9]*\).*/\1/p' "$tmp/genproj")
    NJOBS[$size]=$jobs
    srcb=$(bytes_of "$dir")   # the sources, before anything is generated

    # one untimed run: warms the page cache
    "$CIGEN" -C "$dir" generate >"$tmp/first" 2>&1 || { cat "$tmp/first" >&2; die "generate failed for $size"; }
    fresh() { rm -rf "$dir/config.yml" "$dir/diagrams"; }

    CFGB[$size]=$(bytes_of "$dir/config.yml")
    timeit generate "$runs" fresh 0 "$CIGEN" -q -C "$dir" generate || { failed=1; continue; }
    cfgb=$(bytes_of "$dir/config.yml")
    outb=$(bytes_of "$dir/config.yml" "$dir/diagrams")
    CFGB[$size]=$cfgb
    report generate "$jobs" "$outb" "$((outb > srcb ? outb : srcb))"
    SEC[$size,generate]=$MED RSSK[$size,generate]=$MAXRSS REFB[$size,generate]=$((outb > srcb ? outb : srcb)) CPUS[$size,generate]=$MEDCPU

    # record OP OUT_BYTES REF_BYTES [EXTRA]: after a timeit
    record() {
        report "$1" "$jobs" "$2" "$3" "${4:-}"
        SEC[$size,$1]=$MED RSSK[$size,$1]=$MAXRSS REFB[$size,$1]=$3 CPUS[$size,$1]=$MEDCPU
    }
    bigger() { echo $(($1 > $2 ? $1 : $2)); }

    # check in sync: its input is the committed outputs; first untimed, so
    # that the timed ones may use its stamp; then with no stamp at all
    "$CIGEN" -q -C "$dir" check >/dev/null 2>&1
    if timeit check "$runs" : 0 "$CIGEN" -q -C "$dir" check; then
        record check "$outb" "$(bigger "$outb" "$srcb")"
    else failed=1; fi
    if timeit check-full "$runs" : 0 env CIGEN_CACHE_DIR=off "$CIGEN" -q -C "$dir" check; then
        record check-full "$outb" "$(bigger "$outb" "$srcb")"
    else failed=1; fi

    # drifted checks, in copies of the project: one line of config.yml edited
    # by hand (a job's argument, in the middle of the file), and one template
    # edited (every Linux build's `arch` argument changes)
    cp -r "$dir" "$dir-hand" && cp -r "$dir" "$dir-template" || die "cannot copy $dir"
    total=$(wc -l <"$dir/config.yml")
    line=$(awk -v mid=$((total / 2)) 'NR >= mid && /^ +shard: s[0-9]+$/ { print NR; exit }' "$dir/config.yml")
    sed -i "${line}s/\$/x/" "$dir-hand/config.yml"
    sed -i 's/^  arch: "{{ arch }}"$/  arch: "{{ arch }}-v2"/' "$dir-template/templates/linux_build.yml"
    grep -q 'arch }}-v2' "$dir-template/templates/linux_build.yml" || die "the template edit did not apply"
    for kind in hand template; do
        if timeit check-$kind "$xruns" : 1 "$CIGEN" -C "$dir-$kind" check; then
            cp "$tmp/stdout" "$BENCH_DIR/report-$size-$kind.txt"
            record check-$kind "$outb" "$(bigger "$outb" "$srcb")" \
                " report_bytes=$(wc -c <"$tmp/stdout") vs_check_x=$(calc '%.2f' "$MED / ${SEC[$size,check-full]:-1}")"
        else failed=1; fi
    done
    rm -rf "$dir-hand" "$dir-template"

    if timeit list "$runs" : 0 "$CIGEN" -C "$dir" list --json; then
        listb=$(wc -c <"$tmp/stdout")
        record list "$listb" "$(bigger "$listb" "$srcb")"
    else failed=1; fi

    # the diagrams, drawn in full (no --max-nodes cut-off, nothing collapsed): the tree and the
    # nightly workflow's job graph, as DOT on stdout
    if [ "$has_graph" = 1 ]; then
        for g in tree workflow; do
            if [ $g = tree ]; then gargs=(--tree matrix); else gargs=(--workflow nightly); fi
            [ "$graph_max_nodes" = 1 ] && gargs+=(--max-nodes 0)
            # whole: no dimension drawn as counts to fit a screen
            [ "$graph_collapse" = 1 ] && gargs+=(--collapse none)
            if timeit graph-$g "$runs" : 0 "$CIGEN" -C "$dir" graph "${gargs[@]}"; then
                dotb=$(wc -c <"$tmp/stdout")
                record graph-$g "$dotb" "$(bigger "$dotb" "$srcb")"
            else failed=1; fi
        done
    else
        echo "bench op=graph jobs=$jobs skipped (this cigen has no graph command)"
    fi

    # lint renders the config to lint it: the config counts as its output
    if timeit lint "$xruns" : 0 "$CIGEN" -q -C "$dir" lint; then
        record lint "$cfgb" "$(bigger "$cfgb" "$srcb")"
    else failed=1; fi
    # coverage exits 1 when a pair is missing, as in this project
    if timeit coverage "$xruns" : 1 "$CIGEN" -C "$dir" coverage; then
        covb=$(wc -c <"$tmp/stdout")
        record coverage "$covb" "$(bigger "$covb" "$srcb")"
    else failed=1; fi
    job=$(awk '/^ +name: linux_.*_build$/ { print $2; exit }' "$dir/config.yml")
    if timeit explain "$xruns" : 0 "$CIGEN" -C "$dir" explain "$job"; then
        expb=$(wc -c <"$tmp/stdout")
        record explain "$expb" "$(bigger "$expb" "$srcb")"
    else failed=1; fi

    # the floors, in the same run: reading the committed config (cat), for
    # check; copying the same bytes into a new file and hashing them
    # (cp + sha256sum), for generate
    cs=() ws=()
    for ((i = 0; i < runs; i++)); do
        run1 /dev/null cat "$dir/config.yml"
        cs+=("$T")
        rm -f "$dir/floor.tmp"
        run1 /dev/null sh -c 'cp "$1" "$2" && sha256sum "$2"' floor "$dir/config.yml" "$dir/floor.tmp"
        ws+=("$T")
    done
    rm -f "$dir/floor.tmp"
    SEC[$size,cat]=$(median "${cs[@]}") SEC[$size,write]=$(median "${ws[@]}")
    echo "bench floor jobs=$jobs cat_s=$(calc '%.4f' "${SEC[$size,cat]}") cp_sha256_s=$(calc '%.4f' "${SEC[$size,write]}") generate_x=$(calc '%.2f' "${SEC[$size,generate]} / ${SEC[$size,write]}") check_x=$(calc '%.2f' "${SEC[$size,check]:-0} / ${SEC[$size,cat]}")"
    line="bench cpu jobs=$jobs"
    for op in "${OPS[@]}"; do
        [ -n "${CPUS[$size,$op]:-}" ] && line+=" ${op}_cpu_s=${CPUS[$size,$op]}"
    done
    echo "$line"
    sizes_done+=("$size")
done

# scaling between the two largest sizes: t ~ n^k
if [ ${#sizes_done[@]} -ge 2 ]; then
    a=${sizes_done[-2]} b=${sizes_done[-1]}
    line="bench scaling jobs=${NJOBS[$a]}..${NJOBS[$b]}"
    for op in "${OPS[@]}"; do
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
# an edit; generate-same: already up to date, nothing written (the warm-up
# runs leave a stamp); generate-same-full: the same with no stamp; check: in
# sync (answered by the stamp); check-full: in sync, with no stamp
# exec-floor: /bin/true, timed the same way: what starting any process costs
# on this machine, which the 10 ms targets include
def_ops=(exec-floor generate generate-same generate-same-full check check-full)
for op in "${def_ops[@]}"; do
    cmd=${op%-same*}
    run=("$CIGEN" -q -C "$def" "$cmd")
    [ "$op" = exec-floor ] && run=(/bin/true)
    [ "$op" = check-full ] && run=(env CIGEN_CACHE_DIR=off "$CIGEN" -q -C "$def" check)
    [ "$op" = generate-same-full ] && run=(env CIGEN_CACHE_DIR=off "$CIGEN" -q -C "$def" generate)
    prep=":"
    [ "$op" = generate ] && prep="rm -f $def/config.yml"
    "$CIGEN" -q -C "$def" generate >/dev/null 2>&1
    if command -v hyperfine >/dev/null; then
        how="hyperfine, 100 runs"
        hprep=()
        [ "$op" = generate ] && hprep=(--prepare "$prep")
        hyperfine -N --warmup 10 --runs 100 --style none "${hprep[@]}" --export-json "$tmp/h.json" \
            "${run[*]}" >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; failed=1; }
        DEF[$op]=$(sed -n 's/.*"median": *\([0-9.e+-]*\).*/\1/p' "$tmp/h.json" | head -n 1)
    else
        how="EPOCHREALTIME, 100 runs"
        ts=()
        for ((i = 0; i < 100; i++)); do
            $prep
            t0=$EPOCHREALTIME
            "${run[@]}" >/dev/null 2>&1 || failed=1
            t1=$EPOCHREALTIME
            ts+=("$(calc '%.6f' "$t1 - $t0")")
        done
        DEF[$op]=$(median "${ts[@]}")
    fi
    echo "bench default op=$op jobs=$def_jobs seconds=$(calc '%.4f' "${DEF[$op]:-0}") ms=$(calc '%.2f' "${DEF[$op]:-0} * 1000") ($how, median)"
done

# the targets
verdict() { # NAME VALUE LIMIT UNIT [NOTE]: PASS when VALUE <= LIMIT
    awk -v n="$1" -v v="$2" -v l="$3" -v u="$4" -v note="${5:-}" 'BEGIN {
        printf "bench target %-52s %9s %-2s  limit %s %-2s  %s%s\n", n, v, u, l, u, (v + 0 <= l + 0) ? "PASS" : "FAIL",
            note == "" ? "" : "  (" note ")" }'
}
echo "bench env loadavg_at_end=$(cut -d" " -f1-3 /proc/loadavg | tr " " ,)"
echo "bench targets:"
verdict "default generate wall (writes config.yml)" "$(calc '%.2f' "${DEF[generate]:-1} * 1000")" 10 ms
verdict "default generate wall (up to date)" "$(calc '%.2f' "${DEF[generate-same]:-1} * 1000")" 10 ms
verdict "default generate wall (up to date, no stamp)" "$(calc '%.2f' "${DEF[generate-same-full]:-1} * 1000")" 10 ms
verdict "default check wall" "$(calc '%.2f' "${DEF[check]:-1} * 1000")" 10 ms
verdict "default check wall, no stamp" "$(calc '%.2f' "${DEF[check-full]:-1} * 1000")" 10 ms
[ -n "${SEC[100k,generate]:-}" ] && verdict "100k jobs generate" "$(calc '%.3f' "${SEC[100k,generate]}")" 1 s
[ -n "${SEC[1m,generate]:-}" ] && verdict "1M jobs generate" "$(calc '%.3f' "${SEC[1m,generate]}")" 10 s
for size in "${sizes_done[@]}"; do
    [ "$size" = 100k ] || [ "$size" = 1m ] || continue
    verdict "$size generate / floor (cp + sha256sum)" "$(calc '%.2f' "${SEC[$size,generate]} / ${SEC[$size,write]}")" 3 x
    [ -n "${SEC[$size,check]:-}" ] &&
        verdict "$size check in sync / floor (cat)" "$(calc '%.2f' "${SEC[$size,check]} / ${SEC[$size,cat]}")" 5 x
    [ -n "${SEC[$size,check-full]:-}" ] &&
        verdict "$size check in sync, no stamp / floor (cat)" "$(calc '%.2f' "${SEC[$size,check-full]} / ${SEC[$size,cat]}")" 5 x "it renders the whole config to compare it"
    for kind in hand template; do
        [ -n "${SEC[$size,check-$kind]:-}" ] && [ -n "${SEC[$size,check-full]:-}" ] || continue
        verdict "$size check-$kind time / check in sync, no stamp" "$(calc '%.2f' "${SEC[$size,check-$kind]} / ${SEC[$size,check-full]}")" 1.5 x
        verdict "$size check-$kind peak RSS / config.yml" "$(calc '%.2f' "${RSSK[$size,check-$kind]} * 1024 / ${CFGB[$size]}")" 2 x
    done
    for op in "${OPS[@]}"; do
        [ -n "${RSSK[$size,$op]:-}" ] || continue
        note=""
        [ "$(calc '%d' "(2 * ${REFB[$size,$op]} < $RSS_FLOOR * 1024)")" = 1 ] &&
            note="the limit, $(calc '%.0f' "2 * ${REFB[$size,$op]} / 1024") KB, is below the process floor of $RSS_FLOOR KB"
        verdict "$size $op peak RSS / max(input, output)" "$(calc '%.2f' "${RSSK[$size,$op]} * 1024 / ${REFB[$size,$op]}")" 2 x "$note"
    done
done
if [ -n "${NJOBS[1m]:-}" ] && [ -n "${NJOBS[10k]:-}" ]; then
    for op in "${OPS[@]}"; do
        [ -n "${SEC[1m,$op]:-}" ] && [ -n "${SEC[10k,$op]:-}" ] || continue
        verdict "time per job, 1M / 10k ($op)" \
            "$(calc '%.2f' "(${SEC[1m,$op]} / ${NJOBS[1m]}) / (${SEC[10k,$op]} / ${NJOBS[10k]})")" 1.2 x
    done
fi
[ -n "${FRAG[20000]:-}" ] && [ -n "${FRAG[80000]:-}" ] &&
    verdict "big fragment scaling exponent, 20k..80k jobs" "$(calc '%.2f' "log(${FRAG[80000]} / ${FRAG[20000]}) / log(4)")" 1.3 ""
# the README's table (README.md, "Speed"): one row per size and operation
echo "bench table (README.md):"
echo "| jobs | operation | seconds | jobs/s | peak RSS | RSS / max(input, output) | ratio |"
echo "|---|---|---|---|---|---|---|"
for size in "${sizes_done[@]}"; do
    for op in "${OPS[@]}"; do
        [ -n "${SEC[$size,$op]:-}" ] || continue
        ratio=""
        case $op in
        generate) ratio="$(calc '%.1f' "${SEC[$size,generate]} / ${SEC[$size,write]}")x cp+sha256sum" ;;
        check | check-full) ratio="$(calc '%.1f' "${SEC[$size,$op]} / ${SEC[$size,cat]}")x cat" ;;
        check-*) ratio="$(calc '%.2f' "${SEC[$size,$op]} / ${SEC[$size,check-full]:-1}")x check-full" ;;
        esac
        printf '| %s | %s | %s | %s | %s MB | %s | %s |\n' "$(printf "%'d" "${NJOBS[$size]}")" "$op" \
            "$(calc '%.3f' "${SEC[$size,$op]}")" "$(calc '%.0f' "${NJOBS[$size]} / ${SEC[$size,$op]}")" \
            "$(calc '%.0f' "${RSSK[$size,$op]} / 1024")" "$(calc '%.2f' "${RSSK[$size,$op]} * 1024 / ${REFB[$size,$op]}")" "$ratio"
    done
done
rm -rf "$tmp"
exit "$failed"
