#!/usr/bin/env bash
# binary_checkout.sh: check out the builder repository, and make sure the project checkout is
# at the commit being built, so that every job of a nightly builds the exact same commit.
# It may run before binary_populate_env.sh (it uses the same default locations).
#
# Reads:
#   BUILDER_REPO           default https://github.com/pytorch/builder.git
#   BUILDER_REF            branch, tag or commit of builder (default main, its default branch;
#                          set a commit here to pin builder for a release)
#   BUILDER_ROOT           where builder goes (default $HOME/builder)
#   PYTORCH_ROOT           the project checkout (default $HOME/pytorch)
#   CIRCLE_SHA1            the commit to build (set by CircleCI); when unset the project
#                          checkout is left alone
#   CIRCLE_REPOSITORY_URL  the project's repository (set by CircleCI); needed only when
#                          PYTORCH_ROOT is not a checkout yet
#   BINARY_DRY_RUN         1 = print the commands instead of running them
# Writes: BUILDER_ROOT (clone, 3 attempts), PYTORCH_ROOT (clone or fetch, checkout, submodules).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

builder_repo=${BUILDER_REPO:-https://github.com/pytorch/builder.git}
builder_ref=${BUILDER_REF:-main}
builder_root=${BUILDER_ROOT:-$(default_builder_root)}
pytorch_root=${PYTORCH_ROOT:-$(default_pytorch_root)}
sha=${CIRCLE_SHA1:-}

# missing_or_empty DIR: DIR does not exist or has nothing in it.
missing_or_empty() {
  [[ ! -e $1 ]] || [[ -d $1 && -z "$(ls -A "$1")" ]]
}

# --- builder ---
if [[ -d $builder_root/.git ]]; then
  echo "$SCRIPT_NAME: updating builder in $builder_root to $builder_ref"
  retry 3 git -C "$builder_root" fetch --quiet origin "$builder_ref"
  run git -C "$builder_root" checkout --quiet --force FETCH_HEAD
elif missing_or_empty "$builder_root"; then
  echo "$SCRIPT_NAME: cloning $builder_repo ($builder_ref) into $builder_root"
  # git removes the folder it created when a clone fails, so a retry starts clean.
  retry 3 git clone --quiet "$builder_repo" "$builder_root"
  run git -C "$builder_root" checkout --quiet --force "$builder_ref"
else
  die "BUILDER_ROOT=$builder_root exists but is not a git checkout; remove it or set BUILDER_ROOT elsewhere"
fi

# --- the project, at CIRCLE_SHA1 ---
if [[ -z $sha ]]; then
  echo "$SCRIPT_NAME: CIRCLE_SHA1 is not set; leaving $pytorch_root as it is"
  exit 0
fi
if [[ -d $pytorch_root/.git ]]; then
  if is_dry_run || ! git -C "$pytorch_root" cat-file -e "$sha^{commit}" 2>/dev/null; then
    retry 3 git -C "$pytorch_root" fetch --quiet origin "$sha"
  fi
elif missing_or_empty "$pytorch_root"; then
  require_var CIRCLE_REPOSITORY_URL "set by CircleCI; needed to clone the project into PYTORCH_ROOT=$pytorch_root"
  echo "$SCRIPT_NAME: cloning $CIRCLE_REPOSITORY_URL into $pytorch_root"
  retry 3 git clone --quiet "$CIRCLE_REPOSITORY_URL" "$pytorch_root"
else
  die "PYTORCH_ROOT=$pytorch_root exists but is not a git checkout; remove it or set PYTORCH_ROOT elsewhere"
fi
echo "$SCRIPT_NAME: checking out $sha in $pytorch_root"
run git -C "$pytorch_root" checkout --quiet --force "$sha"
retry 3 git -C "$pytorch_root" submodule update --init --recursive --quiet
if ! is_dry_run; then
  head=$(git -C "$pytorch_root" rev-parse HEAD)
  want=$(git -C "$pytorch_root" rev-parse "$sha^{commit}")
  [[ $head == "$want" ]] || die "$pytorch_root is at $head, not at CIRCLE_SHA1=$sha"
  echo "$SCRIPT_NAME: $pytorch_root is at $head"
fi
