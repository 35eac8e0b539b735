#!/usr/bin/env bash
# binary_install_miniconda.sh: install Miniconda3 (Linux or macOS, by `uname -s`) unless it is
# already installed, check that conda runs, and print its path.
#
# Reads:  MINICONDA_ROOT  where to install (default $HOME/miniconda3; binary_populate_env.sh
#                         writes it to the env file)
#         MINICONDA_URL   installer to use (default: the latest Miniconda3 for this OS and CPU;
#                         set it to pin a version)
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: MINICONDA_ROOT; prints "conda: <path>".
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

root=${MINICONDA_ROOT:-$(default_miniconda_root)}
conda=$root/bin/conda

if [[ -x $conda ]]; then
  echo "$SCRIPT_NAME: Miniconda is already installed in $root"
elif [[ -e $root ]]; then
  die "MINICONDA_ROOT=$root exists but has no bin/conda; remove it or set MINICONDA_ROOT elsewhere"
else
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) platform=Linux-x86_64 ;;
    Linux/aarch64) platform=Linux-aarch64 ;;
    Darwin/x86_64) platform=MacOSX-x86_64 ;;
    Darwin/arm64) platform=MacOSX-arm64 ;;
    *) die "no Miniconda installer known for $(uname -s)/$(uname -m) (set MINICONDA_URL)" ;;
  esac
  url=${MINICONDA_URL:-https://repo.anaconda.com/miniconda/Miniconda3-latest-$platform.sh}
  installer=$(mktemp "${TMPDIR:-/tmp}/miniconda.XXXXXX")
  add_cleanup "$installer"
  echo "$SCRIPT_NAME: installing $url into $root"
  retry 3 curl -fsSL -o "$installer" "$url"
  run bash "$installer" -b -p "$root"
fi
run "$conda" --version
echo "conda: $conda"
