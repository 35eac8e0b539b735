#!/usr/bin/env bash
# Regenerate config.yml and the diagrams from their sources (see README.md).
#
#   ./regenerate.sh             write config.yml and diagrams/ (.dot; .svg too when
#                               Graphviz is installed)
#   ./regenerate.sh --check     exit 1 (with a report) when the committed outputs
#                               differ from what the sources produce
#   ./regenerate.sh ARGS...     other arguments go to `cigen generate` (or, after
#                               --check, to `cigen check`)
#
# Builds build/cigen first when it is missing or older than its sources.  Works
# from any folder; everything it reads and writes is relative to this file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

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

# Build output goes to stderr, so stdout is cigen's one summary line.
make -s --no-print-directory -C "$here" build/cigen >&2 || exit 2

if [ "${1:-}" = "--check" ]; then
  shift
  exec "$here/build/cigen" -C "$here" check "$@"
fi
"$here/build/cigen" -C "$here" generate "$@"

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
