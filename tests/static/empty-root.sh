#!/usr/bin/env bash
# Runs a cigen binary in an empty root: a folder holding only the binary and a
# copy of the embedded default project, entered with chroot (as root) or with
# `unshare --map-root-user` (as anyone else, where user namespaces are allowed).
# No libc, no loader, no /tmp, no /proc, no environment: a binary that needs
# anything from the machine fails here.
#
#   tests/static/empty-root.sh build/cigen-static
#
# Checks: --version names the VERSION file's version; check finds the committed
# outputs in sync; generate rewrites config.yml and the diagrams byte for byte;
# list, lint and coverage run; graph draws a diagram.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:?usage: empty-root.sh CIGEN-BINARY}"
[ -x "$bin" ] || { echo "empty-root: error: '$bin' is not an executable" >&2; exit 2; }

root="$(mktemp -d "${TMPDIR:-/tmp}/cigen-empty-root.XXXXXX")"
trap 'rm -rf "$root"' EXIT
cp "$bin" "$root/cigen"
mkdir "$root/p"
( cd "$src" && cp -r cigen.yml config.yml diagrams dimensions templates verbatim-sources "$root/p/" )
rm -f "$root/p/diagrams/"*.svg

chroot="$(command -v chroot || echo /usr/sbin/chroot)"
if [ "$(id -u)" -eq 0 ]; then
  enter=("$chroot" "$root")
elif unshare --map-root-user true 2>/dev/null; then
  enter=("$(command -v unshare)" --map-root-user "$chroot" "$root")
else
  echo "empty-root: error: needs root (chroot) or unprivileged user namespaces (unshare --map-root-user)" >&2
  exit 2
fi
run() { env -i "${enter[@]}" /cigen "$@"; }

fail=0
expect() { # expect STATUS DESCRIPTION -- ARGS...
  local want=$1 what=$2 got=0
  shift 3
  run "$@" >"$root/out" 2>"$root/err" || got=$?
  if [ "$got" -ne "$want" ]; then
    echo "empty-root: FAIL: $what: exit $got, wanted $want" >&2
    sed 's/^/  | /' "$root/out" "$root/err" >&2
    fail=1
  fi
}

expect 0 "--version" -- --version
version="$(cat "$src/VERSION")"
grep -qx "cigen $version" "$root/out" || { echo "empty-root: FAIL: --version printed '$(cat "$root/out")', not 'cigen $version'" >&2; fail=1; }
expect 0 "check of the committed default" -- -C /p check
cp "$root/p/config.yml" "$root/config.yml.committed"
mkdir "$root/dot.committed" && cp "$root/p/diagrams/"*.dot "$root/dot.committed/"
rm "$root/p/config.yml" "$root/p/diagrams/"*.dot
expect 0 "generate from scratch" -- -C /p generate
cmp "$root/p/config.yml" "$root/config.yml.committed" || { echo "empty-root: FAIL: generated config.yml differs" >&2; fail=1; }
for f in "$root/dot.committed/"*.dot; do
  cmp "$f" "$root/p/diagrams/${f##*/}" || { echo "empty-root: FAIL: diagram ${f##*/} differs" >&2; fail=1; }
done
expect 0 "list" -- -C /p list --where os=macos
grep -q '^binary_macos_wheel_3_8_cpu_build ' "$root/out" || { echo "empty-root: FAIL: list lacks binary_macos_wheel_3_8_cpu_build" >&2; fail=1; }
expect 0 "lint --strict" -- -C /p --strict lint
expect 0 "coverage" -- -C /p coverage
expect 0 "graph" -- -C /p graph --workflow ci
grep -q '^digraph' "$root/out" || { echo "empty-root: FAIL: graph wrote no digraph" >&2; fail=1; }
# a drifted config: exit 1 and a report, not a crash
printf '# drift\n' >> "$root/p/config.yml"
expect 1 "check of a drifted config" -- -C /p check

if [ $fail -ne 0 ]; then
  exit 1
fi
echo "empty-root: $bin passed in an empty root ($(stat -c %s "$bin") bytes; entered with ${enter[0]##*/})"
