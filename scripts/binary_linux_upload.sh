#!/usr/bin/env bash
# binary_linux_upload.sh: upload the package that the build job persisted to the workspace.
#   conda:            anaconda upload --user $ANACONDA_USER (token CONDA_PYTORCHBOT_TOKEN)
#   manywheel:        aws s3 cp --acl public-read to s3://pytorch/whl/${PIP_UPLOAD_FOLDER}${DESIRED_CUDA}/
#   libtorch:         aws s3 cp --acl public-read to s3://pytorch/libtorch/${PIP_UPLOAD_FOLDER}${DESIRED_CUDA}/
# The upload client (anaconda-client or awscli) is installed into Miniconda first.
#
# Reads:  the env file (BINARY_ENV_FILE, default $HOME/project/env): PACKAGE_TYPE, DESIRED_CUDA,
#         PIP_UPLOAD_FOLDER, ANACONDA_USER, MINICONDA_ROOT
#         CONDA_PYTORCHBOT_TOKEN (conda) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (pip,
#         libtorch): from the CircleCI context; never printed
#         BINARY_WORKSPACE  the attached workspace holding final_pkgs/ (default $HOME/workspace)
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: nothing locally but Miniconda (see binary_install_miniconda.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

load_env_file
upload_packages "${BINARY_WORKSPACE:-$HOME/workspace}/final_pkgs"
