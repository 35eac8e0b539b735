#!/usr/bin/env bash
# binary_upload_sizes.sh: records the sizes of the published binaries with builder's
# cron/upload_binary_sizes.sh (which queries conda and S3), after installing awscli into
# Miniconda and putting conda on PATH. Needs binary_checkout.sh first; no env file.
#
# Reads:  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  from the CircleCI context; never printed
#         BUILDER_ROOT    builder checkout (default $HOME/builder)
#         MINICONDA_ROOT  (default $HOME/miniconda3)
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: MINICONDA_ROOT; the size records in S3 (through builder).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

require_var AWS_ACCESS_KEY_ID "$FROM_CONTEXT"
require_var AWS_SECRET_ACCESS_KEY "$FROM_CONTEXT"
entry=${BUILDER_ROOT:-$(default_builder_root)}/cron/upload_binary_sizes.sh
[[ -f $entry ]] || is_dry_run || die "$entry not found (BUILDER_ROOT; run binary_checkout.sh first)"
ensure_conda_tool awscli
run bash "$entry"
