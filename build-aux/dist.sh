#!/usr/bin/env bash
# The source tarball of a release (make dist, make distcheck).
#
#   build-aux/dist.sh BUILD            write BUILD/cigen-VERSION.tar.gz
#   build-aux/dist.sh --check BUILD    write it twice and compare the bytes, then
#                                      unpack it, build it with plain `make` and
#                                      check the outputs there
#
# The tarball holds the committed tree (git archive of HEAD) under
# cigen-VERSION/: the same commit gives the same bytes, whatever the machine,
# the clock, the umask or the user (git writes the commit's time as every
# file's, gzip -n leaves out the name and the time).  Uncommitted changes are
# not in it, and it says so.  NEWS.md must have a section for VERSION.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
[ "${1:-}" = "--check" ] && { check=1; shift; }
build="${1:-build}"
case $build in /*) ;; *) build="$src/$build" ;; esac
cd "$src"

version="$(cat VERSION)"
name="cigen-$version"
if ! printf '%s\n' "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$'; then
  echo "dist: error: VERSION '$version' is not MAJOR.MINOR.PATCH (docs/releasing.md)" >&2
  exit 2
fi
if ! grep -Eq "^## $version( |$)" NEWS.md; then
  echo "dist: error: NEWS.md has no section '## $version' (docs/releasing.md)" >&2
  exit 2
fi
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "dist: error: make dist needs the git checkout (it packs the committed tree)" >&2
  exit 2
fi
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "dist: note: uncommitted changes are not in the tarball (it holds HEAD, $(git rev-parse --short HEAD))" >&2
fi

mkdir -p "$build"
pack() { # pack FILE
  git -c core.autocrlf=false archive --format=tar --prefix="$name/" HEAD | gzip -n -9 > "$1.tmp"
  mv "$1.tmp" "$1"
}
out="$build/$name.tar.gz"
pack "$out"
echo "dist: $out ($(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -d' ' -f1))"
[ $check -eq 1 ] || exit 0

# the same bytes a second time
pack "$build/$name.again.tar.gz"
if ! cmp "$out" "$build/$name.again.tar.gz"; then
  echo "distcheck: FAIL: two runs of make dist differ" >&2
  exit 1
fi
rm -f "$build/$name.again.tar.gz"
echo "distcheck: two runs gave the same bytes"

# it builds with plain make, away from the checkout, and regenerates what is committed
dir="$build/distcheck"
rm -rf "$dir"
mkdir -p "$dir"
tar -xzf "$out" -C "$dir"
(
  cd "$dir/$name"
  [ ! -e .git ] || { echo "distcheck: FAIL: the tarball holds .git" >&2; exit 1; }
  make -s -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
  got="$(build/cigen --version)"
  [ "$got" = "cigen $version" ] || { echo "distcheck: FAIL: --version says '$got'" >&2; exit 1; }
  ./regenerate.sh --check
)
rm -rf "$dir"
echo "distcheck: $name.tar.gz builds with make and its outputs are in sync"
