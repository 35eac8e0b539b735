#!/usr/bin/env bash
# binary_macos_upload.sh: upload the package that binary_macos_build.sh persisted to the
# workspace (PYTORCH_FINAL_PACKAGE_DIR, $HOME/workspace/final_pkgs on macOS).
#   conda:            anaconda upload --user $ANACONDA_USER (token CONDA_PYTORCHBOT_TOKEN)
#   wheel:            aws s3 cp --acl public-read to s3://pytorch/whl/${PIP_UPLOAD_FOLDER}${DESIRED_CUDA}/
#   libtorch:         aws s3 cp --acl public-read to s3://pytorch/libtorch/${PIP_UPLOAD_FOLDER}${DESIRED_CUDA}/
#
# Reads:  the env file (BINARY_ENV_FILE, default $HOME/project/env): OS, PACKAGE_TYPE, DESIRED_CUDA,
#         PIP_UPLOAD_FOLDER, ANACONDA_USER, PYTORCH_FINAL_PACKAGE_DIR, MINICONDA_ROOT
#         CONDA_PYTORCHBOT_TOKEN (conda) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (wheel,
#         libtorch): from the CircleCI context; never printed
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: nothing locally but Miniconda (see binary_install_miniconda.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

load_env_file
require_var OS "$FROM_ENV_FILE"
require_var PYTORCH_FINAL_PACKAGE_DIR "$FROM_ENV_FILE"
[[ $OS == macos ]] || die "this is the macOS upload, but the env file is for OS '$OS' (use binary_linux_upload.sh)"
upload_packages "$PYTORCH_FINAL_PACKAGE_DIR"
