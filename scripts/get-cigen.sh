#!/usr/bin/env bash
# get-cigen.sh: puts cigen into a CI job in seconds. Takes a pinned release's static binary
# (downloaded once, its SHA-256 checked) or, when none is pinned or the download fails, builds
# the vendored sources (make static) once; either is kept in CIGEN_HOME, the folder CircleCI's
# save_cache stores and restore_cache brings back, so a warm job only checks the binary.
#
#   get-cigen.sh            get cigen; print its path on stdout
#   get-cigen.sh --key F    write the cache key's contents to F (the version and checksum
#                           pinned, or the vendored sources' digest), for {{ checksum "F" }}
#
# Reads:  CIGEN_VERSION  the release to use (MAJOR.MINOR.PATCH); with CIGEN_SHA256 and CIGEN_URL
#         CIGEN_SHA256   the SHA-256 of that release's cigen-VERSION-linux-x86_64 (pinned: a
#                        download that does not match is refused)
#         CIGEN_URL      where that binary is (https://, http://, file://); @VERSION@ is replaced
#         CIGEN_SRC      the vendored cigen sources (a folder with cigen's Makefile), built when
#                        nothing is pinned or the download fails; needs gcc, make and the -dev
#                        packages, which are installed with apt-get (through sudo) when missing
#         CIGEN_HOME     the cache folder (default ~/.cache/cigen)
#         CIGEN_LINK     also link the binary there (e.g. /usr/local/bin/cigen; optional)
# Writes: CIGEN_HOME/cigen and CIGEN_HOME/key (what the binary is: a release and its checksum,
#         or the digest of the sources it was built from); CIGEN_LINK; with --key, F
set -euo pipefail

home=${CIGEN_HOME:-${HOME:?HOME is not set}/.cache/cigen}
version=${CIGEN_VERSION:-}
sha=${CIGEN_SHA256:-}
url=${CIGEN_URL:-}
src=${CIGEN_SRC:-}
say() { printf 'get-cigen: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 2
}

if [ -n "$version" ] || [ -n "$sha" ] || [ -n "$url" ]; then
  if [ -z "$version" ] || [ -z "$sha" ] || [ -z "$url" ]; then
    die "a pinned release needs CIGEN_VERSION, CIGEN_SHA256 and CIGEN_URL together"
  fi
  [[ $sha =~ ^[0-9a-f]{64}$ ]] || die "CIGEN_SHA256 '$sha' is not a SHA-256 in hex"
  url=${url//@VERSION@/$version}
fi
[ -n "$url" ] || [ -n "$src" ] || die "set CIGEN_VERSION, CIGEN_SHA256 and CIGEN_URL (a release), or CIGEN_SRC (vendored sources), or both"

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# the digest of what a build of the vendored sources reads: the sources, the
# Makefile, VERSION and build-aux (never tests or docs: they do not change the binary)
sources_digest() {
  (
    cd "$src"
    find Makefile VERSION build-aux generator -type f \( -name '*.[ch]' -o -name '*.sh' -o -name Makefile -o -name VERSION \) -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
  )
}

# the cache key: the release pinned, else the vendored sources' digest
want_key() {
  if [ -n "$url" ]; then
    printf 'release %s %s\n' "$version" "$sha"
  else
    printf 'sources %s\n' "$(sources_digest)"
  fi
}
if [ -n "$src" ] && { [ ! -f "$src/Makefile" ] || [ ! -d "$src/generator" ]; }; then
  die "CIGEN_SRC '$src' does not hold cigen's sources"
fi

if [ "${1:-}" = "--key" ]; then
  [ -n "${2:-}" ] || die "--key needs a file"
  want_key >"$2"
  exit 0
fi
[ $# -eq 0 ] || die "unknown argument '$1' (get-cigen.sh [--key FILE])"

mkdir -p "$home"
finish() {
  if [ -n "${CIGEN_LINK:-}" ]; then
    ln -sf "$home/cigen" "$CIGEN_LINK" 2>/dev/null || sudo ln -sf "$home/cigen" "$CIGEN_LINK" ||
      die "cannot link $CIGEN_LINK"
  fi
  printf '%s\n' "$home/cigen"
  exit 0
}

# 1. warm: the cache holds a binary made from what is pinned now (the release,
# or else the vendored sources as they are now); its bytes are checked
if [ -x "$home/cigen" ] && [ -f "$home/key" ]; then
  read -r kind a b c <"$home/key" || true
  got=$(sha256 "$home/cigen")
  if [ "$kind" = release ] && [ -n "$url" ] && [ "$a $b $c" = "$version $sha $got" ] && [ "$got" = "$sha" ]; then
    say "cigen $version from the cache (sha256 checked)"
    finish
  fi
  if [ "$kind" = sources ] && [ -n "$src" ] && [ "$b" = "$got" ] && [ "$a" = "$(sources_digest)" ]; then
    say "cigen built from the vendored sources, from the cache (sources unchanged)"
    finish
  fi
  say "the cached cigen is not the one pinned now: getting it again"
fi
rm -f "$home/cigen" "$home/key"

# 2. the pinned release, downloaded and checked
if [ -n "$url" ]; then
  tmp="$home/cigen.download.$$"
  if curl -fsSL --retry 3 --connect-timeout 10 -o "$tmp" "$url"; then
    got=$(sha256 "$tmp")
    if [ "$got" = "$sha" ]; then
      chmod 755 "$tmp"
      mv "$tmp" "$home/cigen"
      printf 'release %s %s %s\n' "$version" "$sha" "$got" >"$home/key"
      say "cigen $version downloaded from $url (sha256 checked)"
      finish
    fi
    say "the download from $url has sha256 $got, not the pinned $sha: refused"
  else
    say "cannot download $url"
  fi
  rm -f "$tmp"
  [ -n "$src" ] || die "no cigen: the download failed and no CIGEN_SRC to build"
  say "building the vendored sources instead"
fi

# 3. the vendored sources, built static (so the cached binary runs in any image)
need=()
command -v make >/dev/null 2>&1 || need+=(make)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
for pc in yaml-0.1:libyaml-dev jansson:libjansson-dev nettle:nettle-dev libpcre2-8:libpcre2-dev; do
  command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "${pc%%:*}" || need+=("${pc#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  say "installing ${need[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
make -s --no-print-directory -C "$src" -j"$(nproc 2>/dev/null || echo 2)" build/cigen-static >&2
cp "$src/build/cigen-static" "$home/cigen.new"
mv "$home/cigen.new" "$home/cigen"
printf 'sources %s %s\n' "$(sources_digest)" "$(sha256 "$home/cigen")" >"$home/key"
say "cigen built from the vendored sources in $src"
finish
