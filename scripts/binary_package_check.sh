#!/usr/bin/env bash
# binary_package_check.sh MODE: install a package of this configuration into a clean Python
# (or unzip libtorch) and check it with builder's scripts.
#   MODE=built      the package just built, from PYTORCH_FINAL_PACKAGE_DIR; then
#                   $BUILDER_ROOT/check_binary.sh, and for Python packages $BUILDER_ROOT/run_tests.sh
#                   (run from PYTORCH_ROOT, as it expects; libtorch has no Python to test)
#   MODE=published  the package published for PYTORCH_BUILD_VERSION, installed the way a user
#                   would (pip -f the download.pytorch.org index, conda -c ANACONDA_USER, or the
#                   libtorch zip); then $BUILDER_ROOT/smoke_test.sh
# Runs inside the test image on Linux (binary_linux_test.sh and binary_smoke_test.sh start it
# through binary_run_in_docker.sh) and directly on macOS (binary_macos_build.sh, binary_smoke_test.sh).
#
# Reads:  the env file (BINARY_ENV_FILE, default $HOME/project/env): PACKAGE_TYPE, DESIRED_PYTHON,
#         DESIRED_CUDA, CUDA_VERSION, USE_CXX11_ABI, LIBTORCH_VARIANT, PYTORCH_BUILD_VERSION,
#         PIP_UPLOAD_FOLDER, ANACONDA_USER, PYTORCH_FINAL_PACKAGE_DIR, BUILDER_ROOT, PYTORCH_ROOT,
#         MINICONDA_ROOT, OS
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: a conda environment "binary_check" (conda and macOS packages), a temporary folder.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

mode=${1:-}
[[ $# -eq 1 && ($mode == built || $mode == published) ]] ||
  usage_error "usage: binary_package_check.sh built|published"
load_env_file
for name in PACKAGE_TYPE DESIRED_PYTHON DESIRED_CUDA CUDA_VERSION PYTORCH_BUILD_VERSION \
  ANACONDA_USER PYTORCH_FINAL_PACKAGE_DIR BUILDER_ROOT PYTORCH_ROOT MINICONDA_ROOT OS; do
  require_var "$name" "$FROM_ENV_FILE"
done
require_set PIP_UPLOAD_FOLDER "$FROM_ENV_FILE"
require_set USE_CXX11_ABI "$FROM_ENV_FILE"
if [[ $PACKAGE_TYPE == libtorch ]]; then
  require_var LIBTORCH_VARIANT "$FROM_ENV_FILE"
fi
workdir=$(mktemp -d "${TMPDIR:-/tmp}/binary_check.XXXXXX")
add_cleanup "$workdir"

# --- a clean Python to install into ---
use_conda_env() {
  if [[ $OS == macos ]]; then
    export PATH="$MINICONDA_ROOT/bin:$PATH"
  fi
  retry 3 conda create -yq -n binary_check "python=${DESIRED_PYTHON%m}"
  if is_dry_run; then
    dry_note "source activate binary_check"
    return 0
  fi
  local base
  base=$(conda info --base)
  # conda's activate scripts do not survive `set -u`.
  set +u
  # shellcheck source=/dev/null
  source "$base/bin/activate" binary_check
  set -u
}
use_manylinux_python() {
  # The manylinux images have /opt/python/cp37-cp37m ... (no "m" from Python 3.8 on).
  local digits=${DESIRED_PYTHON//[^0-9]/} abi=''
  if ((${digits#3} < 8)); then
    abi=m
  fi
  echo "$SCRIPT_NAME: using /opt/python/cp$digits-cp$digits$abi"
  export PATH="/opt/python/cp$digits-cp$digits$abi/bin:$PATH"
  run python --version
}
case $PACKAGE_TYPE in
  conda | wheel) use_conda_env ;;
  manywheel) use_manylinux_python ;;
  libtorch) ;;
  *) die "unknown PACKAGE_TYPE '$PACKAGE_TYPE' ($FROM_ENV_FILE)" ;;
esac

# --- install ---
if [[ $USE_CXX11_ABI == 1 ]]; then
  libtorch_zip="libtorch-cxx11-abi-$LIBTORCH_VARIANT-$PYTORCH_BUILD_VERSION.zip"
else
  libtorch_zip="libtorch-$LIBTORCH_VARIANT-$PYTORCH_BUILD_VERSION.zip"
fi
if [[ $PIP_UPLOAD_FOLDER == nightly/ ]]; then
  pip_index="https://download.pytorch.org/whl/nightly/$DESIRED_CUDA/torch_nightly.html"
else
  pip_index="https://download.pytorch.org/whl/torch_stable.html"
fi
if [[ $DESIRED_CUDA == cpu ]]; then
  conda_cuda=(cpuonly)
else
  conda_cuda=("cudatoolkit=$CUDA_VERSION")
fi
if [[ $mode == built ]]; then
  # builder also leaves a "-latest" copy of libtorch zips; test the versioned one.
  list=$(find_packages "$PYTORCH_FINAL_PACKAGE_DIR" "$PACKAGE_TYPE")
  pkg=''
  while IFS= read -r file; do
    case $file in
      *-latest*) ;;
      *) pkg=${pkg:-$file} ;;
    esac
  done <<<"$list"
  [[ -n $pkg ]] || die "no versioned $PACKAGE_TYPE package found in $PYTORCH_FINAL_PACKAGE_DIR"
  echo "$SCRIPT_NAME: installing $pkg"
  case $PACKAGE_TYPE in
    conda)
      retry 3 conda install -yq numpy future pyyaml
      run conda install -yq --offline "$pkg"
      ;;
    manywheel | wheel) retry 3 pip install -q "$pkg" ;;
    libtorch) run unzip -q "$pkg" -d "$workdir" ;;
  esac
else
  echo "$SCRIPT_NAME: installing the published $PACKAGE_TYPE $PYTORCH_BUILD_VERSION"
  case $PACKAGE_TYPE in
    conda) retry 3 conda install -yq -c "$ANACONDA_USER" "pytorch==$PYTORCH_BUILD_VERSION" "${conda_cuda[@]}" ;;
    manywheel | wheel) retry 3 pip install -q --pre "torch==$PYTORCH_BUILD_VERSION" -f "$pip_index" ;;
    libtorch)
      retry 3 curl -fsSL -o "$workdir/libtorch.zip" \
        "https://download.pytorch.org/libtorch/$PIP_UPLOAD_FOLDER$DESIRED_CUDA/$libtorch_zip"
      run unzip -q "$workdir/libtorch.zip" -d "$workdir"
      ;;
  esac
fi

# --- check ---
# check_binary.sh expects to run in the unzipped libtorch folder; run_tests.sh in the project root.
if [[ $PACKAGE_TYPE == libtorch ]]; then
  run cd "$workdir/libtorch"
fi
if [[ $mode == built ]]; then
  run "$BUILDER_ROOT/check_binary.sh"
  if [[ $PACKAGE_TYPE != libtorch ]]; then
    run cd "$PYTORCH_ROOT"
    run "$BUILDER_ROOT/run_tests.sh" "$PACKAGE_TYPE" "$DESIRED_PYTHON" "$DESIRED_CUDA"
  fi
else
  run "$BUILDER_ROOT/smoke_test.sh"
fi
echo "$SCRIPT_NAME: $PACKAGE_TYPE $DESIRED_PYTHON $DESIRED_CUDA ($mode) passed"
