#!/usr/bin/env bash
# setup.sh: the `setup` job's helper. Writes the commit message of HEAD to COMMIT_MSG in the
# .circleci folder, which the job then persists to the workspace, so that later jobs can run
# should_run_job.sh without a checkout.
#
# Reads:  CIRCLECI_DIR    the .circleci folder (default: the parent of this scripts/ folder)
#         COMMIT_MSG      if set (even empty), used instead of `git log -1 --format=%B` (tests)
#         BINARY_DRY_RUN  1 = print what would be written, write nothing
# Writes: $CIRCLECI_DIR/COMMIT_MSG (atomically)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

dir=${CIRCLECI_DIR:-$(cd "$SCRIPTS_DIR/.." && pwd)}
if [[ -n "${COMMIT_MSG+x}" ]]; then
  msg=$COMMIT_MSG
else
  msg=$(git -C "$dir" log -1 --format=%B) ||
    die "cannot read the commit message of HEAD in $dir (is it a git checkout? set COMMIT_MSG to override)"
fi
target=$dir/COMMIT_MSG

if is_dry_run; then
  dry_note "write $target:"
else
  mkdir -p "$dir"
  tmp=$(mktemp "$dir/.COMMIT_MSG.XXXXXX")
  add_cleanup "$tmp"
  printf '%s\n' "$msg" >"$tmp"
  chmod 644 "$tmp"
  mv -f "$tmp" "$target"
  echo "$SCRIPT_NAME: wrote $target:"
fi
printf '%s\n' "$msg" | sed 's/^/  | /'
