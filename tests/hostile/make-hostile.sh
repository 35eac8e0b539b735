#!/bin/sh
# Writes one hostile project into DIR: inputs of issue 21's class 3 (bounded
# cost) that cigen must refuse up front, naming the limit, or process in
# near-linear time.  Not a timed test: tests/bad holds small cases of the
# refusals; this script makes the full-size inputs to measure by hand, e.g.
#
#   tests/hostile/make-hostile.sh excludes /tmp/h && time build/cigen -C /tmp/h generate
#
# Usage: tests/hostile/make-hostile.sh KIND DIR, where KIND is
#   cells-phases   990,000 cells x 64 phases in a 4 KB tree
#   workflows      600,000 cells x 3 phases, each landing in 64 workflows
#   excludes       100,000 cells and 20,000 exclude patterns of plain values
#   globs          the same with glob patterns (refused: limits.max_filter_tests)
#   pairwise       a pairwise tier over 300,000 cells
#   fragments      10,000 fragments of one job each
#   fragments-anchors  the same, each job merging an anchor of the first one
#   diff           a one-word template edit that changes every entry of a
#                  40,000-cell config (run `check` after it)
#   long-line      a committed config.yml holding one 50 MB line (run `check`)
#   many-vars      40,000 variables, each with placeholders, over 4 cells
#                  (a placeholder's position was found for every one, reading
#                  the tree from its start: 20 s; now only for an error)
#   many-dims      one cell of 40,000 one-value dimensions (1 MB tree)
#   long-names     10,000 cells, each with a 512 KB job name (5 GB of names:
#                  refused naming limits: max_name_bytes, not run out of memory)
set -eu
kind=$1
dir=$2
mkdir -p "$dir"

# vals PREFIX N: a flow list of N values PREFIX0 ... PREFIX<N-1>
vals() {
    awk -v p="$1" -v n="$2" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "%s%s%d", i ? ", " : "", p, i; printf "]" }'
}

jobs_fragment() {
    cat >"$dir/jobs.yml" <<'YAML'
version: 2.1
jobs:
  setup:
    docker: [{image: cimg/base:stable}]
    steps: [checkout]
  run:
    parameters:
      cell: {type: string}
    docker: [{image: cimg/base:stable}]
    steps:
      - run: echo << parameters.cell >>
YAML
    printf 'run:\n  cell: "{{ cell }}"\n' >"$dir/t.yml"
}

manifest() { # manifest WORKFLOW...
    {
        printf 'output: config.yml\nregenerate: cigen generate\nfragments: [jobs.yml]\ntrees: [tree.yml]\nworkflows:\n'
        for w in "$@"; do
            printf '  %s:\n    jobs: [setup]\n' "$w"
        done
    } >"$dir/cigen.yml"
}

case $kind in
long-names)
    jobs_fragment
    manifest main
    {
        printf 'dimensions: [a, b]\nworkflows: [main]\ntree:\n  - a: ["'
        head -c 524288 /dev/zero | tr '\0' x
        printf '"]\n    b: %s\nphases:\n  build: {template: t.yml, requires: [setup]}\n' "$(vals b 10000)"
    } >"$dir/tree.yml"
    printf 'run:\n  cell: "{{ b }}"\n' >"$dir/t.yml"
    ;;
cells-phases)
    jobs_fragment
    manifest main
    {
        printf 'dimensions: [a, b, c]\nworkflows: [main]\ntree:\n'
        printf '  - a: %s\n    b: %s\n    c: %s\nphases:\n' "$(vals a 99)" "$(vals b 100)" "$(vals c 100)"
        i=0
        while [ $i -lt 64 ]; do
            printf '  p%d: {template: t.yml}\n' $i
            i=$((i + 1))
        done
    } >"$dir/tree.yml"
    ;;
workflows)
    jobs_fragment
    ws=$(awk 'BEGIN { for (i = 0; i < 64; i++) printf "w%d ", i }')
    # shellcheck disable=SC2086
    manifest $ws
    {
        printf 'dimensions: [a, b, c]\nworkflows: [%s]\ntree:\n' "$(echo $ws | sed 's/ /, /g')"
        printf '  - a: %s\n    b: %s\n    c: %s\nphases:\n' "$(vals a 60)" "$(vals b 100)" "$(vals c 100)"
        printf '  build: {template: t.yml, requires: [setup]}\n  test: {template: t.yml, requires: [build]}\n'
        printf '  upload: {template: t.yml, requires: [test]}\n'
    } >"$dir/tree.yml"
    ;;
excludes | globs)
    jobs_fragment
    manifest main
    {
        printf 'dimensions: [a, b]\nworkflows: [main]\n'
        printf 'tree:\n  - a: %s\n    b: %s\nexclude:\n' "$(vals a 100)" "$(vals b 1000)"
        if [ "$kind" = excludes ]; then
            awk 'BEGIN { for (i = 0; i < 20000; i++) printf "  - {a: a%d, b: b%d}\n", i % 100, (i * 7) % 1000 }'
        else
            awk 'BEGIN { for (i = 0; i < 20000; i++) printf "  - {a: \"a%d*\", b: \"b%d?\"}\n", i % 100, (i * 7) % 1000 }'
        fi
        printf 'phases:\n  build: {template: t.yml, requires: [setup]}\n'
    } >"$dir/tree.yml"
    ;;
pairwise)
    jobs_fragment
    printf 'output: config.yml\nregenerate: cigen generate\nfragments: [jobs.yml]\ntrees: [tree.yml]\nworkflows:\n  main:\n    tier: pr\n    jobs: [setup]\n' >"$dir/cigen.yml"
    {
        printf 'dimensions: [a, b, c, d]\nworkflows: [main]\ntiers:\n  pr:\n    pairwise: [a, b, c, d]\ntree:\n'
        printf '  - a: %s\n    b: %s\n    c: %s\n    d: %s\n' "$(vals a 30)" "$(vals b 20)" "$(vals c 25)" "$(vals d 20)"
        printf 'phases:\n  build: {template: t.yml, requires: [setup]}\n'
    } >"$dir/tree.yml"
    ;;
fragments | fragments-anchors)
    mkdir -p "$dir/f"
    {
        printf 'output: config.yml\nregenerate: cigen generate\nfragments:\n'
        i=0
        while [ $i -lt 10000 ]; do
            printf '  - f/j%d.yml\n' $i
            i=$((i + 1))
        done
        printf 'workflows:\n  main:\n    jobs: [j0]\n'
    } >"$dir/cigen.yml"
    if [ "$kind" = fragments ]; then
        awk -v d="$dir/f" 'BEGIN { for (i = 0; i < 10000; i++) {
            f = d "/j" i ".yml"
            printf "%sjobs:\n  j%d:\n    docker: [{image: cimg/base:stable}]\n    steps: [checkout]\n", i ? "" : "version: 2.1\n", i > f
            close(f) } }'
    else
        printf 'version: 2.1\nexecutors:\n  base: &base\n    docker: [{image: cimg/base:stable}]\njobs:\n  j0:\n    <<: *base\n    steps: [checkout]\n' >"$dir/f/j0.yml"
        awk -v d="$dir/f" 'BEGIN { for (i = 1; i < 10000; i++) {
            f = d "/j" i ".yml"
            printf "jobs:\n  j%d:\n    <<: *base\n    steps: [checkout]\n", i > f
            close(f) } }'
    fi
    ;;
diff)
    jobs_fragment
    manifest main
    {
        printf 'dimensions: [a, b]\nworkflows: [main]\ntree:\n'
        printf '  - a: %s\n    b: %s\n' "$(vals a 200)" "$(vals b 200)"
        printf 'phases:\n  build: {template: t.yml, requires: [setup]}\n'
    } >"$dir/tree.yml"
    cigen=${CIGEN:-build/cigen}
    "$cigen" -C "$dir" generate >/dev/null
    printf 'run:\n  cell: "x{{ cell }}"\n' >"$dir/t.yml"
    ;;
long-line)
    jobs_fragment
    manifest main
    printf 'dimensions: [a]\nworkflows: [main]\ntree:\n  - a: [x, y]\nphases:\n  build: {template: t.yml, requires: [setup]}\n' >"$dir/tree.yml"
    awk 'BEGIN { printf "# "; s = "0123456789abcdef"; for (i = 0; i < 12; i++) s = s s; for (i = 0; i < 800; i++) printf "%s", s; printf "\n" }' >"$dir/config.yml"
    ;;
many-vars)
    jobs_fragment
    manifest main
    {
        printf 'dimensions: [a, b]\nworkflows: [main]\nvars:\n'
        awk 'BEGIN { for (i = 0; i < 40000; i++) printf "  v%d: \"{{ a }}-{{ b }}-%d\"\n", i, i }'
        printf 'tree:\n  - a: [x, y]\n    b: [p, q]\nphases:\n  build: {template: t.yml, requires: [setup]}\n'
    } >"$dir/tree.yml"
    ;;
many-dims)
    jobs_fragment
    manifest main
    {
        printf 'dimensions: %s\nworkflows: [main]\ntree:\n  - ' "$(vals d 40000)"
        awk 'BEGIN { for (i = 0; i < 40000; i++) printf "%sd%d: v%d\n", i ? "    " : "", i, i }'
        printf 'phases:\n  build: {template: t.yml, requires: [setup]}\n'
    } >"$dir/tree.yml"
    ;;
*)
    echo "unknown kind '$kind'" >&2
    exit 2
    ;;
esac
