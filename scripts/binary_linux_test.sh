#!/usr/bin/env bash
# binary_linux_test.sh: test the package built by the build job. Runs on a machine executor
# (with a GPU for CUDA configurations): writes a small script that runs
# binary_package_check.sh built (install the package from /final_pkgs with pip or conda, or
# unzip libtorch, then builder's check_binary.sh and run_tests.sh) and runs it in DOCKER_IMAGE
# through binary_run_in_docker.sh.
#
# Reads:  DOCKER_IMAGE    required (set by the job's docker_image parameter)
#         the env file (BINARY_ENV_FILE, default $HOME/project/env): PACKAGE_TYPE, OS and what
#         binary_run_in_docker.sh reads
#         BINARY_WORKSPACE  the attached workspace holding final_pkgs/ (default $HOME/workspace)
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: a temporary script (removed on exit).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

require_var DOCKER_IMAGE "set by the job's docker_image parameter"
load_env_file
require_var PACKAGE_TYPE "$FROM_ENV_FILE"
require_var OS "$FROM_ENV_FILE"
[[ $OS == linux ]] || die "this is the Linux test, but the env file is for OS '$OS' (macOS tests run in binary_macos_build.sh)"

inner=$(mktemp "${TMPDIR:-/tmp}/binary_linux_test.XXXXXX")
add_cleanup "$inner"
write_docker_script "$inner" built
"$SCRIPTS_DIR/binary_run_in_docker.sh" "$inner"
