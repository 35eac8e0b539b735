#!/usr/bin/env bash
# The merge-driver benchmark (part of make bench; alone: make bench-merge).
#
# Builds a git repository of BENCH_MERGE_FILES other files (default 10000,
# in 100 folders) with a synthetic project (tests/bench/genproj.c,
# BENCH_MERGE_SHARDS shards, default 4: 972 jobs and its diagrams) in
# .circleci/, and two branches that both change the matrix (one adds a
# Python version, the other a CUDA version; the sources merge cleanly,
# config.yml and the diagrams conflict).  Times the whole `git merge` with
# `cigen -C .circleci merge-driver` set up for every output (the median of
# BENCH_RUNS runs, each from the same starting commit), checks that the
# merge left no conflict and that `cigen check` passes on the result, and
# prints
#   bench op=merge files=N jobs=J outputs=K conflicted=C seconds=S
#   bench floor op=merge-noop-driver seconds=F   (the same merge, driver `true`)
#   bench target merge (whole git merge, ...)  PASS or FAIL against 1 s
# Environment: as run.sh (CIGEN, GENPROJ, BENCH_DIR, BENCH_RUNS).
set -u -o pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${CIGEN_SRCDIR:-$(cd "$here/../.." && pwd)}
CIGEN=${CIGEN:-$srcdir/build/cigen}
GENPROJ=${GENPROJ:-$srcdir/build/bench/genproj}
BENCH_DIR=${BENCH_DIR:-$srcdir/build/bench}
RUNS=${BENCH_RUNS:-5}
FILES=${BENCH_MERGE_FILES:-10000}
SHARDS=${BENCH_MERGE_SHARDS:-4}
LIMIT=1

die() { echo "bench: error: $*" >&2; exit 2; }

[ -x "$CIGEN" ] || die "no cigen binary at $CIGEN (run make first)"
[ -x "$GENPROJ" ] || die "no project generator at $GENPROJ"
CIGEN=$(cd "$(dirname "$CIGEN")" && pwd)/$(basename "$CIGEN")
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
repo=$(cd "$BENCH_DIR" && pwd)/merge
rm -rf "$repo" && mkdir -p "$repo" && cd "$repo" || die "cannot create $repo"

# the rest of the repository: FILES small files in 100 folders
awk -v n="$FILES" 'BEGIN {
    for (i = 0; i < n; i++) {
        d = sprintf("src/m%02d", i % 100)
        if (i < 100) system("mkdir -p " d)
        f = sprintf("%s/f%05d.c", d, i)
        printf "int f%05d(void) { return %d; }\n", i, i > f
        close(f)
    }
}' || die "cannot write the repository's files"
"$GENPROJ" .circleci "$SHARDS" >/dev/null || die "genproj failed"

git init -q && git config user.email bench@example.com && git config user.name bench &&
    git config commit.gpgsign false && git config gc.auto 0 || die "git init failed"
printf '.circleci/config.yml merge=cigen\n.circleci/diagrams/*.dot merge=cigen\n' > .gitattributes
git config merge.cigen.name "regenerate cigen outputs"
git config merge.cigen.driver "$CIGEN -C .circleci merge-driver %O %A %B %P"
"$CIGEN" -q -C .circleci generate || die "generate failed on the base"
git add -A && git commit -qm base || die "commit failed"
main=$(git symbolic-ref --short HEAD)
tree=.circleci/dimensions/matrix.yml

# two branches that both change the matrix, on different lines
git checkout -qb python312 &&
    sed -i 's/python: \["3.7", "3.8", "3.9", "3.10", "3.11"\]/python: ["3.7", "3.8", "3.9", "3.10", "3.11", "3.12"]/' $tree &&
    "$CIGEN" -q -C .circleci generate && git commit -qam 'python 3.12' || die "branch python312 failed"
git checkout -q "$main" &&
    sed -i '0,/cuda: \[cpu, cu102, cu113\]$/s//cuda: [cpu, cu102, cu113, cu118]/' $tree &&
    "$CIGEN" -q -C .circleci generate && git commit -qam 'cuda 11.8' || die "branch $main failed"
start=$(git rev-parse HEAD)

files=$(git ls-files | wc -l)
jobs=$("$CIGEN" -C .circleci list 2>/dev/null | wc -l)
outputs=$(git ls-files .circleci/config.yml '.circleci/diagrams/*.dot' | wc -l)
conflicted=$(CIGEN_MERGE_DRIVER_NESTED=1 git merge-tree --write-tree --name-only --no-messages "$start" python312 | sed -n "2,\$p" | grep -c . || true)

times=()
for ((r = 0; r < RUNS; r++)); do
    git reset -q --hard "$start" || die "reset failed"
    t0=$EPOCHREALTIME
    git merge -q python312 -m merge >"$repo.out" 2>&1
    st=$?
    t1=$EPOCHREALTIME
    if [ $st != 0 ] || [ -n "$(git status --porcelain)" ]; then
        cat "$repo.out" >&2
        die "git merge did not resolve every output (status $st)"
    fi
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
done
"$CIGEN" -q -C .circleci check >/dev/null 2>&1 || die "cigen check fails after the merge"
grep -q 3.12 .circleci/config.yml && grep -q cu118 .circleci/config.yml ||
    die "the merged config.yml misses a side's change"

# the floor: the same merge with a driver that does nothing (keeps ours)
git config merge.cigen.driver true
floor=()
for ((r = 0; r < RUNS; r++)); do
    git reset -q --hard "$start" || die "reset failed"
    t0=$EPOCHREALTIME
    git merge -q python312 -m merge >/dev/null 2>&1 || die "git merge failed with a no-op driver"
    t1=$EPOCHREALTIME
    floor+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
done
git config merge.cigen.driver "$CIGEN -C .circleci merge-driver %O %A %B %P"

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
s=$(median "${times[@]}")
f=$(median "${floor[@]}")
echo "bench env loadavg=$(cut -d" " -f1-3 /proc/loadavg | tr " " ,)"
echo "bench op=merge files=$files jobs=$jobs outputs=$outputs conflicted=$conflicted seconds=$s runs=${times[*]}"
echo "bench floor op=merge-noop-driver seconds=$f (git's own part: the same merge, a driver that does nothing)"
awk -v v="$s" -v l="$LIMIT" 'BEGIN {
    printf "bench target %-44s %9s %-2s  limit %s %-2s  %s\n", "merge (whole git merge, 10k-file repository)", v, "s", l, "s", (v + 0 < l + 0) ? "PASS" : "FAIL" }'
rm -f "$repo.out"
