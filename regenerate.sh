#!/usr/bin/env bash
# Regenerate config.yml and the diagrams from their sources (see README.md).
#
#   ./regenerate.sh             write config.yml and diagrams/
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

cmd=generate
if [ "${1:-}" = "--check" ]; then
  cmd=check
  shift
fi
exec "$here/build/cigen" -C "$here" "$cmd" "$@"
