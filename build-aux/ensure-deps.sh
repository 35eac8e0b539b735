#!/usr/bin/env bash
# Make sure the build dependencies of cigen are present.
#
#   build-aux/ensure-deps.sh [--with-tests]
#
# cigen needs libyaml, jansson, nettle (SHA-256) and PCRE2 (branch and tag
# /regex/ filters), found with pkg-config; its tests also need check (and a
# JDK for the test against java.util.regex, which .ci/run installs).  When
# something is missing and we run as root on a Debian/Ubuntu machine, the
# packages are installed with apt-get; otherwise we stop and print the exact
# command to run.  Graphviz is optional and never installed here.
set -euo pipefail

want_tests=0
[ "${1:-}" = "--with-tests" ] && want_tests=1

modules=(yaml-0.1 jansson nettle libpcre2-8)
packages=(libyaml-dev libjansson-dev nettle-dev libpcre2-dev)
if [ $want_tests -eq 1 ]; then
  modules+=(check)
  packages+=(check)
fi

missing=()
if ! command -v pkg-config >/dev/null 2>&1; then
  missing=("${packages[@]}" pkg-config)
else
  for i in "${!modules[@]}"; do
    pkg-config --exists "${modules[$i]}" || missing+=("${packages[$i]}")
  done
fi
[ ${#missing[@]} -eq 0 ] && exit 0

# pkg-config is needed to find the others, so always ask for it too.
case " ${missing[*]} " in *" pkg-config "*) ;; *) missing+=(pkg-config) ;; esac

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "cigen: installing build dependencies: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "${missing[@]}" >&2
  exit 0
fi

echo "cigen: missing build dependencies: ${missing[*]}" >&2
if command -v apt-get >/dev/null 2>&1; then
  echo "cigen: install them with: sudo apt-get install -y ${missing[*]}" >&2
else
  echo "cigen: install the development packages of libyaml (0.2), jansson (2.x), nettle (3.x), PCRE2 (10.x)$( [ $want_tests -eq 1 ] && echo ' and check') and pkg-config with your package manager" >&2
fi
exit 1
