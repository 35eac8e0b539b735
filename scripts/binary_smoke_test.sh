#!/usr/bin/env bash
# binary_smoke_test.sh: the smoke job. Installs the published package of this configuration and
# version (PYTORCH_BUILD_VERSION, i.e. today's nightly unless BINARY_DATE says otherwise) the
# way a user would, and runs builder's smoke_test.sh: binary_package_check.sh published.
# On Linux that runs inside DOCKER_IMAGE through binary_run_in_docker.sh; on macOS directly,
# with Miniconda installed first.
#
# Reads:  the env file (BINARY_ENV_FILE, default $HOME/project/env): OS, PACKAGE_TYPE,
#         DESIRED_PYTHON, DESIRED_CUDA, MINICONDA_ROOT and what binary_package_check.sh reads
#         DOCKER_IMAGE    required on Linux (set by the job's docker_image parameter)
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: on macOS MINICONDA_ROOT; a temporary script on Linux.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

load_env_file
for name in OS PACKAGE_TYPE DESIRED_PYTHON DESIRED_CUDA; do
  require_var "$name" "$FROM_ENV_FILE"
done
echo "$SCRIPT_NAME: smoke testing the published $OS $PACKAGE_TYPE $DESIRED_PYTHON $DESIRED_CUDA"
if [[ $OS == linux ]]; then
  require_var DOCKER_IMAGE "set by the job's docker_image parameter"
  inner=$(mktemp "${TMPDIR:-/tmp}/binary_smoke_test.XXXXXX")
  add_cleanup "$inner"
  write_docker_script "$inner" published
  "$SCRIPTS_DIR/binary_run_in_docker.sh" "$inner"
else
  require_var MINICONDA_ROOT "$FROM_ENV_FILE"
  "$SCRIPTS_DIR/binary_install_miniconda.sh"
  "$SCRIPTS_DIR/binary_package_check.sh" published
fi
