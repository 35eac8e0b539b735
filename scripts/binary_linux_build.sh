#!/usr/bin/env bash
# binary_linux_build.sh: build this configuration's package. Runs inside the build docker image
# (docker executor, e.g. pytorch/manylinux-cuda100 or pytorch/conda-cuda), after
# binary_checkout.sh and binary_populate_env.sh.
# Builder entry points: conda -> $BUILDER_ROOT/conda/build_pytorch.sh; manywheel and libtorch ->
# $BUILDER_ROOT/manywheel/build.sh (build_cpu.sh for cpu). Builder writes into a staging folder;
# the packages are then moved into PYTORCH_FINAL_PACKAGE_DIR, which the job persists.
#
# Reads:  the env file (BINARY_ENV_FILE, default $HOME/project/env), from binary_populate_env.sh:
#         OS, PACKAGE_TYPE, DESIRED_PYTHON, DESIRED_CUDA, BUILDER_ROOT, PYTORCH_ROOT,
#         PYTORCH_FINAL_PACKAGE_DIR, and the rest of it for builder
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: the package(s) in PYTORCH_FINAL_PACKAGE_DIR (/final_pkgs).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

load_env_file
for name in OS PACKAGE_TYPE DESIRED_PYTHON DESIRED_CUDA BUILDER_ROOT PYTORCH_ROOT PYTORCH_FINAL_PACKAGE_DIR; do
  require_var "$name" "$FROM_ENV_FILE"
done
[[ $OS == linux ]] || die "this is the Linux build, but the env file is for OS '$OS' (use binary_macos_build.sh)"

case $PACKAGE_TYPE in
  conda) entry=conda/build_pytorch.sh ;;
  manywheel | libtorch)
    if [[ $DESIRED_CUDA == cpu ]]; then
      entry=manywheel/build_cpu.sh
    else
      entry=manywheel/build.sh
    fi
    ;;
  *) die "PACKAGE_TYPE '$PACKAGE_TYPE' is not built on Linux (expected conda, manywheel or libtorch)" ;;
esac
build_package "$entry"
