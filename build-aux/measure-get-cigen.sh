#!/usr/bin/env bash
# Measures the CI recipe (scripts/get-cigen.sh, then cigen's own step) the way
# a CI job meets it: each run in a fresh copy of a container-like root (a
# Debian root with curl, git and ca-certificates, as the cimg/base images
# have), entered with chroot; the release served from a loopback http server.
#
#   build-aux/measure-get-cigen.sh IMAGE-ROOT [vendored]
#
# IMAGE-ROOT: e.g. made with `debootstrap --variant=minbase bookworm ROOT`,
# then `chroot ROOT apt-get install -y --no-install-recommends curl
# ca-certificates git`.  Needs root, python3 (the http server), and
# build/cigen-static and build/cigen-VERSION.tar.gz (make static dist).
# Prints one line per run: the scenario and the seconds of each step.
# `vendored` also measures the fallback (no release: apt-get installs the
# compiler and -dev packages in the root, then make static), which needs the
# network and takes minutes.
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
image="${1:?usage: measure-get-cigen.sh IMAGE-ROOT [vendored]}"
image="$(cd "$image" && pwd)"
version="$(cat "$src/VERSION")"
work="$src/build/measure"
rm -rf "$work"
mkdir -p "$work/www"
cp "$src/build/cigen-static" "$work/www/cigen-$version-linux-x86_64"
sha="$(sha256sum "$work/www/cigen-$version-linux-x86_64" | cut -d' ' -f1)"
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >"$work/http.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && break; sleep 0.1; done

# fresh ROOT-NAME [CACHE-FROM]: a new container with the repository checked
# out (cigen's sources in .circleci, as in this repository's own CI), and the
# cache folder restored from an earlier run's root when given
fresh() {
  rm -rf "${work:?}/$1"
  cp -a "$image" "$work/$1"
  mkdir -p "$work/$1/repo/.circleci"
  tar -xzf "$src/build/cigen-$version.tar.gz" -C "$work/$1/repo/.circleci" --strip-components=1
  if [ -n "${2:-}" ]; then
    mkdir -p "$work/$1/root/.cache"
    cp -a "$work/$2/root/.cache/cigen" "$work/$1/root/.cache/cigen"
  fi
}
# job ROOT-NAME LABEL ENV...: get-cigen.sh, then the consistency check and the
# setup job's select, each timed inside the root
job() {
  local root=$1 label=$2
  shift 2
  # shellcheck disable=SC2016 # the script runs inside the root
  chroot "$work/$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root "$@" /bin/bash -c '
    set -e
    cd /repo
    t0=$(date +%s.%N)
    .circleci/scripts/get-cigen.sh --key /tmp/cigen.key
    t1=$(date +%s.%N)
    cigen=$(.circleci/scripts/get-cigen.sh 2>/tmp/get.err) || { cat /tmp/get.err >&2; exit 1; }
    t2=$(date +%s.%N)
    "$cigen" -C .circleci -q check >/dev/null
    t3=$(date +%s.%N)
    "$cigen" -C .circleci -q select --branch my-pr --message "[conda ci]" --changed a.c -o /tmp/c.yml
    t4=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v m="$(tail -1 /tmp/get.err)" \
      "BEGIN { printf \"key %.2f s, get-cigen %.2f s, check %.3f s, select %.3f s; %s\\n\", b - a, c - b, d - c, e - d, m }"
  ' | sed "s/^/$label: /"
}

rel=(CIGEN_VERSION="$version" CIGEN_SHA256="$sha" CIGEN_URL="http://127.0.0.1:$port/cigen-@VERSION@-linux-x86_64" CIGEN_SRC=.circleci)
fresh cold
job cold "release, cold (nothing cached: download + sha256)" "${rel[@]}"
fresh warm cold
job warm "release, warm (cache restored)" "${rel[@]}"
if [ "${2:-}" = vendored ]; then
  fresh vcold
  cp /etc/resolv.conf "$work/vcold/etc/resolv.conf"
  job vcold "vendored, cold (apt-get + make static)" CIGEN_SRC=.circleci
  fresh vwarm vcold
  job vwarm "vendored, warm (cache restored)" CIGEN_SRC=.circleci
fi
