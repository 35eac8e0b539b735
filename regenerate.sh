#!/usr/bin/env bash
# Regenerate config.yml and the diagrams from their sources (see README.md).
#
#   ./regenerate.sh             write config.yml and diagrams/ (.dot; .svg too when
#                               Graphviz is installed)
#   ./regenerate.sh --check     exit 1 (with a report) when the committed outputs
#                               differ from what the sources produce
#   ./regenerate.sh ARGS...     other arguments go to `cigen generate` (or, after
#                               --check, to `cigen check`)
#   ./regenerate.sh --help      its usage
#
# Builds build/cigen first when it is missing or older than its sources, unless
# CIGEN_BIN names a cigen to run instead (CI's, from scripts/get-cigen.sh).
# Works from any folder; everything it reads and writes is relative to this file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  cat <<'EOF'
usage: ./regenerate.sh [--check] [ARGS...]

Regenerates config.yml and the diagrams from the sources cigen.yml names,
building build/cigen first when it is missing or older than its sources.

  ./regenerate.sh            write config.yml and diagrams/ (.svg pictures too
                             when Graphviz is installed)
  ./regenerate.sh --force    overwrite an output edited by hand, or one a merge
                             left with conflict markers
  ./regenerate.sh --check    exit 1 with a report when the committed outputs
                             differ from what the sources produce
  ./regenerate.sh ARGS...    other arguments go to `cigen generate` (after
                             --check, to `cigen check`): see
                             build/cigen generate --help, build/cigen check --help

CIGEN_BIN=FILE runs that cigen instead of building build/cigen (CI gets one
with scripts/get-cigen.sh).

Exit status: 0 written or in sync, 1 refused or out of sync, 2 error.
EOF
  exit 0
fi

cigen="$here/build/cigen"
if [ -n "${CIGEN_BIN:-}" ]; then
  cigen="$CIGEN_BIN"
else
need=()
command -v make >/dev/null 2>&1 || need+=(make)
command -v cc >/dev/null 2>&1 || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "regenerate.sh: installing ${need[*]}" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
  else
    echo "regenerate.sh: error: building cigen needs ${need[*]}; install with: sudo apt-get install -y ${need[*]}" >&2
    exit 2
  fi
fi

# Build output goes to stderr, so stdout is cigen's one summary line.  The
# first build compiles every file: one job per core.
make -s --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" -C "$here" build/cigen >&2 || exit 2
fi

if [ "${1:-}" = "--check" ]; then
  shift
  exec "$cigen" -C "$here" check "$@"
fi
"$cigen" -C "$here" generate "$@"

# Pictures of the diagrams, when Graphviz is installed. They are not committed
# (.gitignore): they are derived, large, and their bytes depend on the Graphviz
# version, so they could never be checked byte for byte like the .dot files.
# A picture whose diagram cigen no longer makes (a removed workflow) goes too.
for svg in "$here"/diagrams/*.svg; do
  [ -e "$svg" ] || continue
  [ -e "${svg%.svg}.dot" ] || rm -f "$svg"
done
if command -v dot >/dev/null 2>&1 && [ -d "$here/diagrams" ]; then
  for f in "$here"/diagrams/*.dot; do
    [ -e "$f" ] || continue
    svg="${f%.dot}.svg"
    if [ ! -e "$svg" ] || [ "$f" -nt "$svg" ]; then
      dot -Tsvg "$f" -o "$svg.tmp" 2>/dev/null && mv "$svg.tmp" "$svg" || rm -f "$svg.tmp"
    fi
  done
fi
