#!/usr/bin/env bash
# binary_macos_build.sh: build this configuration's package on the macOS executor, then test it
# (macOS has no separate test job): install Miniconda, run builder's
# $BUILDER_ROOT/conda/build_pytorch.sh (conda) or $BUILDER_ROOT/wheel/build_wheel.sh (wheel,
# libtorch), move the package into PYTORCH_FINAL_PACKAGE_DIR, then binary_package_check.sh built.
#
# Reads:  the env file (BINARY_ENV_FILE, default $HOME/project/env), from binary_populate_env.sh:
#         OS, PACKAGE_TYPE, DESIRED_PYTHON, DESIRED_CUDA, BUILDER_ROOT, PYTORCH_ROOT,
#         MINICONDA_ROOT, PYTORCH_FINAL_PACKAGE_DIR, and the rest of it for builder
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: MINICONDA_ROOT, the package(s) in PYTORCH_FINAL_PACKAGE_DIR ($HOME/workspace/final_pkgs).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

load_env_file
for name in OS PACKAGE_TYPE DESIRED_PYTHON DESIRED_CUDA BUILDER_ROOT PYTORCH_ROOT MINICONDA_ROOT PYTORCH_FINAL_PACKAGE_DIR; do
  require_var "$name" "$FROM_ENV_FILE"
done
[[ $OS == macos ]] || die "this is the macOS build, but the env file is for OS '$OS' (use binary_linux_build.sh)"

case $PACKAGE_TYPE in
  conda) entry=conda/build_pytorch.sh ;;
  wheel | libtorch) entry=wheel/build_wheel.sh ;;
  *) die "PACKAGE_TYPE '$PACKAGE_TYPE' is not built on macOS (expected conda, wheel or libtorch)" ;;
esac

"$SCRIPTS_DIR/binary_install_miniconda.sh"
export PATH="$MINICONDA_ROOT/bin:$PATH"
build_package "$entry"
"$SCRIPTS_DIR/binary_package_check.sh" built
