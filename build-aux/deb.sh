#!/usr/bin/env bash
# The Debian package (make deb): build/cigen_VERSION_ARCH.deb.
#
#   build-aux/deb.sh BUILD
#
# Builds from the release tarball (make dist), unpacked in BUILD/deb, with
# `dpkg-buildpackage -us -uc -b` (its .deb lands next to the unpacked tree,
# inside BUILD, never beside the checkout), runs `make check` as the package's
# test unless DEB_BUILD_OPTIONS has nocheck, then lintian: any error fails.
# Needs dpkg-dev, debhelper, fakeroot and lintian (apt-get install -y
# dpkg-dev debhelper fakeroot lintian) and the build dependencies of
# debian/control.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
case $build in /*) ;; *) build="$src/$build" ;; esac

version="$(cat "$src/VERSION")"
deb_version="$(sed -n '1s/^cigen (\([^)]*\)).*/\1/p' "$src/debian/changelog")"
if [ "$deb_version" != "$version" ]; then
  echo "deb: error: debian/changelog is at '$deb_version', VERSION at '$version' (docs/releasing.md)" >&2
  exit 2
fi
for tool in dpkg-buildpackage dh fakeroot lintian; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "deb: error: '$tool' is missing: apt-get install -y dpkg-dev debhelper fakeroot lintian" >&2
    exit 2
  }
done

"$src/build-aux/dist.sh" "$build" >/dev/null
work="$build/deb"
rm -rf "$work"
mkdir -p "$work"
tar -xzf "$build/cigen-$version.tar.gz" -C "$work"
arch="$(dpkg --print-architecture)"
( cd "$work/cigen-$version" && dpkg-buildpackage -us -uc -b ) > "$work/build.log" 2>&1 || {
  tail -40 "$work/build.log" >&2
  echo "deb: error: dpkg-buildpackage failed (the whole log: $work/build.log)" >&2
  exit 1
}
deb="cigen_${version}_${arch}.deb"
# lintian: errors fail the build; warnings are shown
lintian --no-tag-display-limit "$work/cigen_${version}_${arch}.changes" > "$work/lintian.log" 2>&1 || true
cat "$work/lintian.log"
if grep -q '^E: ' "$work/lintian.log"; then
  echo "deb: error: lintian reports errors" >&2
  exit 1
fi
cp "$work/$deb" "$build/$deb"
echo "deb: $build/$deb ($(stat -c %s "$build/$deb") bytes)"
