#!/usr/bin/env bash
# binary_run_in_docker.sh SCRIPT: run SCRIPT with bash inside $DOCKER_IMAGE (docker run --rm),
# with the project, builder, the workspace's packages and the env file mounted:
#   PYTORCH_ROOT -> /pytorch, BUILDER_ROOT -> /builder, $BINARY_WORKSPACE/final_pkgs -> /final_pkgs,
#   the env file -> /env (BINARY_ENV_FILE=/env, sourced before SCRIPT runs), this scripts/
#   folder -> /ci_scripts (read-only), SCRIPT -> /run_in_docker.sh.
# In /env, PYTORCH_ROOT, BUILDER_ROOT and PYTORCH_FINAL_PACKAGE_DIR point at the mounts.
# CUDA configurations (DESIRED_CUDA other than cpu) get --runtime=nvidia.
#
# Reads:  DOCKER_IMAGE      required (set by the job's docker_image parameter)
#         the env file      BINARY_ENV_FILE, default $HOME/project/env: DESIRED_CUDA,
#                           PYTORCH_ROOT, BUILDER_ROOT (from binary_populate_env.sh)
#         BINARY_WORKSPACE  the attached workspace (default $HOME/workspace)
#         BINARY_DRY_RUN    1 = print the docker commands instead of running them
# Writes: $BINARY_WORKSPACE/final_pkgs (created if missing); whatever SCRIPT writes there.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

(($# == 1)) || usage_error "usage: binary_run_in_docker.sh SCRIPT"
script=$(abs_path "$1")
[[ -f $script ]] || die "script '$1' not found"
require_var DOCKER_IMAGE "set by the job's docker_image parameter"
load_env_file
require_var DESIRED_CUDA "$FROM_ENV_FILE"
require_var PYTORCH_ROOT "$FROM_ENV_FILE"
require_var BUILDER_ROOT "$FROM_ENV_FILE"
final_pkgs=$(abs_path "${BINARY_WORKSPACE:-$HOME/workspace}/final_pkgs")

# The container's env file: the job's, with the paths as seen inside the container.
docker_env=$(mktemp "${TMPDIR:-/tmp}/binary_docker_env.XXXXXX")
add_cleanup "$docker_env"
{
  cat "$(env_file_path)"
  echo "# Paths inside the container (added by binary_run_in_docker.sh):"
  echo "export PYTORCH_ROOT='/pytorch' BUILDER_ROOT='/builder' PYTORCH_FINAL_PACKAGE_DIR='/final_pkgs'"
} >"$docker_env"
chmod 644 "$docker_env"

args=(run --rm)
if [[ $DESIRED_CUDA != cpu ]]; then
  args+=(--runtime=nvidia)
fi
args+=(
  -v "$(abs_path "$PYTORCH_ROOT"):/pytorch"
  -v "$(abs_path "$BUILDER_ROOT"):/builder"
  -v "$final_pkgs:/final_pkgs"
  -v "$docker_env:/env:ro"
  -v "$SCRIPTS_DIR:/ci_scripts:ro"
  -v "$script:/run_in_docker.sh:ro"
  -e BINARY_ENV_FILE=/env
  "$DOCKER_IMAGE"
  bash -c 'set -euo pipefail; source /env; exec bash /run_in_docker.sh'
)

run mkdir -p "$final_pkgs"
retry 3 docker pull "$DOCKER_IMAGE"
echo "$SCRIPT_NAME: running $1 in $DOCKER_IMAGE"
run docker "${args[@]}"
