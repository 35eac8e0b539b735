#!/bin/sh
# Writes a project whose config.yml is about 4 MB (18,000 jobs) into DIR:
# big enough to be streamed in several one-megabyte chunks, small enough
# for a unit test.  Usage: tests/big-project.sh DIR
set -eu
dir=$1
mkdir -p "$dir/dimensions" "$dir/templates" "$dir/verbatim-sources"
cat >"$dir/cigen.yml" <<'YAML'
output: config.yml
diagrams: diagrams
regenerate: cigen generate
fragments: [verbatim-sources/jobs.yml]
trees: [dimensions/big.yml]
workflows:
  ci:
    max_jobs: 100000
    jobs: [setup]
YAML
cat >"$dir/verbatim-sources/jobs.yml" <<'YAML'
version: 2.1
jobs:
  setup:
    docker: [{image: cimg/base:stable}]
    steps: [checkout]
  build:
    parameters:
      a: {type: string}
      b: {type: string}
      c: {type: string}
      note: {type: string}
    docker: [{image: cimg/base:stable}]
    steps:
      - run: echo << parameters.note >>
YAML
# values: "x01", ..., "x<n-1>", "x00"
vals() {
    printf '['
    i=1
    while [ "$i" -lt "$1" ]; do
        printf '"%s%02d", ' "$2" "$i"
        i=$((i + 1))
    done
    printf '"%s00"]' "$2"
}
cat >"$dir/dimensions/big.yml" <<YAML
dimensions: [a, b, c]
job_name: {pattern: "build_{{ a }}_{{ b }}_{{ c }}"}
workflows: [ci]
tree:
  - a: $(vals 30 a)
    b: $(vals 30 b)
    c: $(vals 20 c)
phases:
  build: {template: templates/build.yml, requires: [setup]}
YAML
cat >"$dir/templates/build.yml" <<'YAML'
build:
  a: "{{ a }}"
  b: "{{ b }}"
  c: "{{ c }}"
  note: "a note that makes the config big: {{ a }}/{{ b }}/{{ c }}, {{ c }}/{{ b }}/{{ a }}"
YAML
