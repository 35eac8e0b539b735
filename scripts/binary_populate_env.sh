#!/usr/bin/env bash
# binary_populate_env.sh: turn one binary configuration into the env file that the later
# steps of the job source. Run it before the other binary_*.sh steps (binary_checkout.sh
# may run before it).
#
# Reads:
#   BUILD_ENVIRONMENT        required: "<package> <python> <cuda> [<devtoolset>]", e.g.
#                            "manywheel 3.7m cu100 devtoolset7" (the job's build_environment parameter)
#                              package:    manywheel (Linux pip) | conda | libtorch | wheel (macOS pip)
#                              python:     3.Y or 3.Ym, Y in 5..8 (conda and wheel drop the "m")
#                              cuda:       cpu | cuNN | cuNNN (cu90 = CUDA 9.0, cu100 = 10.0); Linux only
#                              devtoolset: devtoolset3 (old C++ ABI) | devtoolset7 (C++11 ABI); Linux only
#   LIBTORCH_VARIANT         required iff package is libtorch: shared-with-deps, shared-without-deps,
#                            static-with-deps or static-without-deps
#   BINARY_BUILD_KIND        nightly (default) | release
#   PYTORCH_RELEASE_VERSION  required for release, e.g. 1.4.0 (ignored, with a warning, for nightly)
#   NIGHTLY_BASE_VERSION     nightly version prefix (default 1.4.0)
#   BINARY_OS                linux | macos (default: from uname -s)
#   BINARY_DATE              YYYYMMDD (default: today in UTC; for tests and rebuilds)
#   BUILDER_ROOT, PYTORCH_ROOT, MINICONDA_ROOT
#                            absolute paths (defaults $HOME/builder, $HOME/pytorch, $HOME/miniconda3)
#   BINARY_ENV_FILE          the env file (default $HOME/project/env)
#
# Writes BINARY_ENV_FILE, atomically (temporary file + rename), as `export NAME='value'` lines for:
#   PACKAGE_TYPE DESIRED_PYTHON DESIRED_CUDA CUDA_VERSION DESIRED_DEVTOOLSET LIBTORCH_VARIANT
#   BUILD_PYTHONLESS OS DATE PYTORCH_BUILD_VERSION PYTORCH_BUILD_NUMBER OVERRIDE_PACKAGE_VERSION
#   PIP_UPLOAD_FOLDER TORCH_CONDA_BUILD_FOLDER ANACONDA_USER USE_CXX11_ABI PYTORCH_FINAL_PACKAGE_DIR
#   BUILDER_ROOT PYTORCH_ROOT MINICONDA_ROOT
# Version: nightly = ${NIGHTLY_BASE_VERSION}.dev${DATE}, plus the local suffix "+cpu" for manywheel
# CPU builds; release = PYTORCH_RELEASE_VERSION. USE_CXX11_ABI is 1 for devtoolset7, 0 otherwise on
# Linux, empty on macOS.
# Bad input: one error line on stderr, exit 1, and the env file is left as it was.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

# --- parse and validate; nothing is written before all of this passed ---
require_var BUILD_ENVIRONMENT "set by the job's build_environment parameter"
if [[ ! $BUILD_ENVIRONMENT =~ ^[[:alnum:]._\ -]*$ ]]; then
  die "BUILD_ENVIRONMENT may only hold letters, digits, '.', '_', '-' and spaces, got $(printf '%q' "$BUILD_ENVIRONMENT")"
fi
read -r -a words <<<"$BUILD_ENVIRONMENT"
if ((${#words[@]} < 3 || ${#words[@]} > 4)); then
  die "BUILD_ENVIRONMENT must be '<package> <python> <cuda> [<devtoolset>]', got '$BUILD_ENVIRONMENT' (${#words[@]} words)"
fi
package=${words[0]}
python=${words[1]}
cuda=${words[2]}
devtoolset=${words[3]:-}

if [[ -n "${BINARY_OS:-}" ]]; then
  os=$BINARY_OS
  [[ $os == linux || $os == macos ]] || die "BINARY_OS must be linux or macos, got '$os'"
else
  case $(uname -s) in
    Linux) os=linux ;;
    Darwin) os=macos ;;
    *) die "unsupported OS '$(uname -s)' (set BINARY_OS to linux or macos)" ;;
  esac
fi

case $package in
  manywheel) [[ $os == linux ]] || die "package 'manywheel' is Linux-only (macOS pip packages are 'wheel')" ;;
  wheel) [[ $os == macos ]] || die "package 'wheel' is macOS-only (Linux pip packages are 'manywheel')" ;;
  conda | libtorch) ;;
  *) die "unknown package '$package' in BUILD_ENVIRONMENT (expected manywheel, conda, libtorch or wheel)" ;;
esac

if [[ $python == 2.* ]]; then
  die "Python 2 is not supported (BUILD_ENVIRONMENT has python '$python'); use 3.5 to 3.8"
elif [[ ! $python =~ ^3\.[5-8]m?$ ]]; then
  die "bad python '$python' in BUILD_ENVIRONMENT (expected 3.Y or 3.Ym with Y in 5..8)"
fi
# conda and the macOS Pythons have no "m" ABI tag in their version; Linux pip/libtorch keep it.
case $package in
  conda | wheel) desired_python=${python%m} ;;
  *) desired_python=$python ;;
esac

if [[ $cuda == cpu ]]; then
  cuda_version=cpu
elif [[ $cuda =~ ^cu([1-9][0-9]?)([0-9])$ ]]; then
  cuda_version="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
  [[ $os == linux ]] || die "cuda '$cuda' in BUILD_ENVIRONMENT: CUDA builds are Linux-only (macOS uses cpu)"
else
  die "bad cuda '$cuda' in BUILD_ENVIRONMENT (expected cpu or cu<major><minor>, e.g. cu90, cu100)"
fi

case $devtoolset in
  '' | devtoolset3 | devtoolset7) ;;
  *) die "bad devtoolset '$devtoolset' in BUILD_ENVIRONMENT (expected devtoolset3 or devtoolset7)" ;;
esac
if [[ $os == macos ]]; then
  [[ -z $devtoolset ]] || die "devtoolset '$devtoolset' in BUILD_ENVIRONMENT: devtoolsets are Linux-only"
  use_cxx11_abi=''
elif [[ $devtoolset == devtoolset7 ]]; then
  use_cxx11_abi=1
else
  use_cxx11_abi=0
fi

variant=${LIBTORCH_VARIANT:-}
if [[ $package == libtorch ]]; then
  case $variant in
    shared-with-deps | shared-without-deps | static-with-deps | static-without-deps) ;;
    '') die "LIBTORCH_VARIANT is not set (required for libtorch; set by the job's libtorch_variant parameter)" ;;
    *) die "bad LIBTORCH_VARIANT '$variant' (expected shared-with-deps, shared-without-deps, static-with-deps or static-without-deps)" ;;
  esac
  build_pythonless=1
elif [[ -n $variant ]]; then
  die "LIBTORCH_VARIANT='$variant' is set but package is '$package' (only libtorch has variants)"
else
  build_pythonless=''
fi

kind=${BINARY_BUILD_KIND:-nightly}
case $kind in
  nightly | release) ;;
  *) die "BINARY_BUILD_KIND must be nightly or release, got '$kind'" ;;
esac

if [[ -n "${BINARY_DATE:-}" ]]; then
  date=$BINARY_DATE
  [[ $date =~ ^(19|20)[0-9][0-9](0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])$ ]] ||
    die "bad BINARY_DATE '$date' (expected YYYYMMDD, e.g. 20200131)"
else
  date=$(date -u +%Y%m%d)
fi

if [[ $kind == release ]]; then
  require_var PYTORCH_RELEASE_VERSION "required when BINARY_BUILD_KIND=release; set by the release workflow"
  [[ $PYTORCH_RELEASE_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+((a|b|rc)[0-9]+)?$ ]] ||
    die "bad PYTORCH_RELEASE_VERSION '$PYTORCH_RELEASE_VERSION' (expected X.Y.Z, optionally with aN, bN or rcN)"
  version=$PYTORCH_RELEASE_VERSION
  pip_upload_folder=''
  conda_build_folder="pytorch-$version"
  anaconda_user=pytorch
else
  if [[ -n "${PYTORCH_RELEASE_VERSION:-}" ]]; then
    warn "PYTORCH_RELEASE_VERSION=$PYTORCH_RELEASE_VERSION ignored: this is a nightly build (set BINARY_BUILD_KIND=release for a release)"
  fi
  base=${NIGHTLY_BASE_VERSION:-1.4.0}
  [[ $base =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "bad NIGHTLY_BASE_VERSION '$base' (expected X.Y.Z)"
  version="$base.dev$date"
  if [[ $package == manywheel && $cuda == cpu ]]; then
    version="$version+cpu"
  fi
  pip_upload_folder='nightly/'
  conda_build_folder=pytorch-nightly
  anaconda_user=pytorch-nightly
fi

if [[ $os == linux ]]; then
  final_pkg_dir=/final_pkgs
else
  final_pkg_dir=$HOME/workspace/final_pkgs
fi

builder_root=${BUILDER_ROOT:-$(default_builder_root)}
pytorch_root=${PYTORCH_ROOT:-$(default_pytorch_root)}
miniconda_root=${MINICONDA_ROOT:-$(default_miniconda_root)}
require_absolute() {
  [[ $2 == /* ]] || die "$1 must be an absolute path, got '$2'"
}
require_absolute BUILDER_ROOT "$builder_root"
require_absolute PYTORCH_ROOT "$pytorch_root"
require_absolute MINICONDA_ROOT "$miniconda_root"

# --- write the env file atomically ---
# quote VALUE: VALUE as a single-quoted shell word.
quote() {
  local rest=$1 out='' q="'"
  while [[ $rest == *"$q"* ]]; do
    out="$out${rest%%"$q"*}'\\''"
    rest=${rest#*"$q"}
  done
  printf "'%s%s'" "$out" "$rest"
}
emit() {
  printf 'export %s=%s\n' "$1" "$(quote "$2")"
}

env_file=$(env_file_path)
env_dir=$(dirname "$env_file")
mkdir -p "$env_dir" || die "cannot create the env file's folder $env_dir"
tmp=$(mktemp "$env_dir/.env.XXXXXX") || die "cannot create a temporary file in $env_dir"
add_cleanup "$tmp"
{
  echo "# Written by binary_populate_env.sh for BUILD_ENVIRONMENT='$BUILD_ENVIRONMENT'; do not edit."
  emit PACKAGE_TYPE "$package"
  emit DESIRED_PYTHON "$desired_python"
  emit DESIRED_CUDA "$cuda"
  emit CUDA_VERSION "$cuda_version"
  emit DESIRED_DEVTOOLSET "$devtoolset"
  emit LIBTORCH_VARIANT "$variant"
  emit BUILD_PYTHONLESS "$build_pythonless"
  emit OS "$os"
  emit DATE "$date"
  emit PYTORCH_BUILD_VERSION "$version"
  emit PYTORCH_BUILD_NUMBER 1
  emit OVERRIDE_PACKAGE_VERSION "$version"
  emit PIP_UPLOAD_FOLDER "$pip_upload_folder"
  emit TORCH_CONDA_BUILD_FOLDER "$conda_build_folder"
  emit ANACONDA_USER "$anaconda_user"
  emit USE_CXX11_ABI "$use_cxx11_abi"
  emit PYTORCH_FINAL_PACKAGE_DIR "$final_pkg_dir"
  emit BUILDER_ROOT "$builder_root"
  emit PYTORCH_ROOT "$pytorch_root"
  emit MINICONDA_ROOT "$miniconda_root"
} >"$tmp" || die "cannot write $tmp"
chmod 644 "$tmp"
mv -f "$tmp" "$env_file" || die "cannot move $tmp to $env_file"

echo "$SCRIPT_NAME: wrote $env_file: $os $package python $desired_python $cuda${devtoolset:+ $devtoolset}${variant:+ $variant}, $kind $version"
sed -n 's/^export /  /p' "$env_file"
