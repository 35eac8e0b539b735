#!/usr/bin/env bash
# binary_update_htmls.sh: the update_s3_htmls job. Regenerates the index pages of the S3
# buckets (e.g. whl/nightly/cu100/torch_nightly.html) with builder's cron/update_s3_htmls.sh,
# after installing awscli into Miniconda. Needs binary_checkout.sh first; no env file.
#
# Reads:  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  from the CircleCI context; never printed
#         BUILDER_ROOT    builder checkout (default $HOME/builder)
#         MINICONDA_ROOT  (default $HOME/miniconda3)
#         BINARY_DRY_RUN  1 = print the commands instead of running them
# Writes: MINICONDA_ROOT; the HTML files in S3 (through builder).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

require_var AWS_ACCESS_KEY_ID "$FROM_CONTEXT"
require_var AWS_SECRET_ACCESS_KEY "$FROM_CONTEXT"
entry=${BUILDER_ROOT:-$(default_builder_root)}/cron/update_s3_htmls.sh
[[ -f $entry ]] || is_dry_run || die "$entry not found (BUILDER_ROOT; run binary_checkout.sh first)"
ensure_conda_tool awscli
run bash "$entry"
