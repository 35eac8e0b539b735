#!/usr/bin/env bash
# binary_common.sh: helpers shared by the binary_*.sh scripts. Source it, don't run it:
#   # shellcheck source-path=SCRIPTDIR
#   # shellcheck source=binary_common.sh
#   source "$(dirname "$0")/binary_common.sh"
#
# Reads:  BINARY_DRY_RUN      1 = print commands (prefixed "[dry-run]") instead of running them
#         BINARY_ENV_FILE     env file written by binary_populate_env.sh (default $HOME/project/env)
#         BINARY_RETRY_SLEEP  seconds between retries (default 10)
#         AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, CONDA_PYTORCHBOT_TOKEN
#                             only so that their values are masked in printed commands
# Writes: nothing. Defines die, usage_error, warn, require_var, require_set, is_dry_run,
#         dry_note, run, retry, add_cleanup, abs_path, env_file_path, load_env_file,
#         default_*_root, package_glob, find_packages, build_package, ensure_conda_tool,
#         upload_packages, write_docker_script.
# Keep it bash 3.2 compatible: it also runs on the macOS executors.
set -euo pipefail

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "binary_common.sh: error: this file is sourced by the other scripts; it does nothing on its own" >&2
  exit 2
fi

SCRIPT_NAME=$(basename "$0")
SCRIPTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FROM_ENV_FILE="written by binary_populate_env.sh into the env file; run that step first"
FROM_CONTEXT="comes from the CircleCI context of the upload jobs; run the job with that context"

die() {
  printf '%s: error: %s\n' "$SCRIPT_NAME" "$*" >&2
  exit 1
}

usage_error() {
  printf '%s: error: %s\n' "$SCRIPT_NAME" "$*" >&2
  exit 2
}

warn() {
  printf '%s: warning: %s\n' "$SCRIPT_NAME" "$*" >&2
}

# require_var NAME WHO: NAME must be set and non-empty; WHO says what sets it.
require_var() {
  if [[ -z "${!1:-}" ]]; then
    die "$1 is not set ($2)"
  fi
}

# require_set NAME WHO: NAME must be set, but may be empty.
require_set() {
  if [[ -z "${!1+x}" ]]; then
    die "$1 is not set ($2)"
  fi
}

is_dry_run() {
  [[ "${BINARY_DRY_RUN:-0}" == 1 ]]
}

dry_note() {
  printf '[dry-run] %s\n' "$(mask_secrets "$*")"
}

# mask_secrets TEXT: TEXT with the values of the credential variables replaced by ***.
mask_secrets() {
  local text=$1 name value quoted mask='***'
  for name in AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY CONDA_PYTORCHBOT_TOKEN; do
    value=${!name:-}
    if [[ -n "$value" ]]; then
      printf -v quoted '%q' "$value"
      text=${text//"$value"/$mask}
      text=${text//"$quoted"/$mask}
    fi
  done
  printf '%s' "$text"
}

# run CMD ARGS...: run the command, or print it when BINARY_DRY_RUN=1.
run() {
  if is_dry_run; then
    local line
    printf -v line '%q ' "$@"
    dry_note "${line% }"
  else
    "$@"
  fi
}

# retry ATTEMPTS CMD ARGS...: run (see above) the command until it succeeds.
retry() {
  local attempts=$1 n=1
  shift
  until run "$@"; do
    if ((n >= attempts)); then
      warn "giving up after $attempts attempts: $1"
      return 1
    fi
    warn "attempt $n/$attempts failed: $1; retrying in ${BINARY_RETRY_SLEEP:-10}s"
    sleep "${BINARY_RETRY_SLEEP:-10}"
    n=$((n + 1))
  done
}

# Temporary files and directories to remove when the script exits.
CLEANUP_PATHS=()
add_cleanup() {
  CLEANUP_PATHS+=("$1")
}
cleanup() {
  if ((${#CLEANUP_PATHS[@]})); then
    rm -rf -- "${CLEANUP_PATHS[@]}"
  fi
}
trap cleanup EXIT

# abs_path PATH: PATH made absolute against the current directory (no filesystem access).
abs_path() {
  case $1 in
    /*) printf '%s' "$1" ;;
    *) printf '%s/%s' "$PWD" "$1" ;;
  esac
}

# Default locations, shared by binary_populate_env.sh and the scripts that may run before it.
default_builder_root() { printf '%s' "$HOME/builder"; }
default_pytorch_root() { printf '%s' "$HOME/pytorch"; }
default_miniconda_root() { printf '%s' "$HOME/miniconda3"; }

env_file_path() {
  printf '%s' "${BINARY_ENV_FILE:-$HOME/project/env}"
}

# load_env_file: source the env file written by binary_populate_env.sh.
load_env_file() {
  local file
  file=$(env_file_path)
  if [[ ! -f "$file" ]]; then
    die "env file $file not found (BINARY_ENV_FILE; written by binary_populate_env.sh, which must run first)"
  fi
  # shellcheck source=/dev/null
  source "$file"
}

# package_glob PACKAGE_TYPE: file pattern of the packages that builder produces.
package_glob() {
  case $1 in
    conda) printf '%s' '*.tar.bz2' ;;
    manywheel | wheel) printf '%s' '*.whl' ;;
    libtorch) printf '%s' '*.zip' ;;
    *) die "unknown PACKAGE_TYPE '$1' (expected manywheel, conda, libtorch or wheel)" ;;
  esac
}

# find_packages DIR PACKAGE_TYPE: print the matching package files in DIR, one a line.
# Fails if there are none (in a dry run it prints the pattern instead).
find_packages() {
  local dir=$1 glob found=0 file
  glob=$(package_glob "$2")
  for file in "$dir"/$glob; do
    if [[ -f "$file" ]]; then
      printf '%s\n' "$file"
      found=1
    fi
  done
  if ((found == 0)); then
    if is_dry_run; then
      printf '%s\n' "$dir/$glob"
    else
      die "no $2 package ($glob) found in $dir"
    fi
  fi
}

# build_package ENTRY: run builder's ENTRY script (relative to BUILDER_ROOT) with its output
# going to a fresh staging folder, then move the packages into PYTORCH_FINAL_PACKAGE_DIR,
# so that only packages of this build end up there.
build_package() {
  local entry=$BUILDER_ROOT/$1 staging pkg list
  if [[ ! -f "$entry" ]] && ! is_dry_run; then
    die "builder entry point $entry not found (BUILDER_ROOT=$BUILDER_ROOT; run binary_checkout.sh first)"
  fi
  staging=$(mktemp -d "${TMPDIR:-/tmp}/binary_build.XXXXXX")
  add_cleanup "$staging"
  echo "$SCRIPT_NAME: building $PACKAGE_TYPE python $DESIRED_PYTHON $DESIRED_CUDA with $entry"
  run env PYTORCH_FINAL_PACKAGE_DIR="$staging" SKIP_ALL_TESTS=1 bash "$entry"
  run mkdir -p "$PYTORCH_FINAL_PACKAGE_DIR"
  if is_dry_run; then
    dry_note "mv $staging/$(package_glob "$PACKAGE_TYPE") $PYTORCH_FINAL_PACKAGE_DIR/"
    return 0
  fi
  list=$(find_packages "$staging" "$PACKAGE_TYPE")
  while IFS= read -r pkg; do
    mv -f -- "$pkg" "$PYTORCH_FINAL_PACKAGE_DIR/"
    echo "$SCRIPT_NAME: built $PYTORCH_FINAL_PACKAGE_DIR/$(basename "$pkg")"
  done <<<"$list"
}

# ensure_conda_tool PACKAGE...: install Miniconda (binary_install_miniconda.sh) and the given
# packages into its base environment, and put it first on PATH.
ensure_conda_tool() {
  "$SCRIPTS_DIR/binary_install_miniconda.sh"
  MINICONDA_ROOT=${MINICONDA_ROOT:-$(default_miniconda_root)}
  export PATH="$MINICONDA_ROOT/bin:$PATH"
  retry 3 conda install -yq "$@"
}

# upload_packages DIR: upload this configuration's packages from DIR (conda: anaconda.org;
# pip and libtorch: S3). Needs the env file loaded and the context's credentials.
upload_packages() {
  local dir=$1 dest token_file pkg list
  local pkgs=()
  require_var PACKAGE_TYPE "$FROM_ENV_FILE"
  require_var DESIRED_CUDA "$FROM_ENV_FILE"
  case $PACKAGE_TYPE in
    conda)
      require_var CONDA_PYTORCHBOT_TOKEN "$FROM_CONTEXT"
      require_var ANACONDA_USER "$FROM_ENV_FILE"
      ;;
    manywheel | wheel | libtorch)
      require_var AWS_ACCESS_KEY_ID "$FROM_CONTEXT"
      require_var AWS_SECRET_ACCESS_KEY "$FROM_CONTEXT"
      require_set PIP_UPLOAD_FOLDER "$FROM_ENV_FILE"
      ;;
  esac
  list=$(find_packages "$dir" "$PACKAGE_TYPE")
  while IFS= read -r pkg; do
    pkgs+=("$pkg")
  done <<<"$list"

  case $PACKAGE_TYPE in
    conda)
      ensure_conda_tool anaconda-client
      # The token goes through a private file (anaconda -t accepts a path), never the command line.
      if is_dry_run; then
        token_file='<token file>'
      else
        token_file=$(mktemp "${TMPDIR:-/tmp}/binary_upload.XXXXXX")
        add_cleanup "$token_file"
        chmod 600 "$token_file"
        printf '%s' "$CONDA_PYTORCHBOT_TOKEN" >"$token_file"
      fi
      for pkg in "${pkgs[@]}"; do
        echo "$SCRIPT_NAME: uploading $pkg to anaconda.org/$ANACONDA_USER"
        retry 3 anaconda -t "$token_file" upload --user "$ANACONDA_USER" --label main --no-progress --force "$pkg"
      done
      ;;
    manywheel | wheel | libtorch)
      if [[ $PACKAGE_TYPE == libtorch ]]; then
        dest="s3://pytorch/libtorch/${PIP_UPLOAD_FOLDER}${DESIRED_CUDA}/"
      else
        dest="s3://pytorch/whl/${PIP_UPLOAD_FOLDER}${DESIRED_CUDA}/"
      fi
      # aws reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment.
      ensure_conda_tool awscli
      for pkg in "${pkgs[@]}"; do
        echo "$SCRIPT_NAME: uploading $pkg to $dest"
        retry 3 aws s3 cp --acl public-read --no-progress "$pkg" "$dest"
      done
      ;;
  esac
}

# write_docker_script FILE MODE: the small script that binary_run_in_docker.sh runs in the
# container; it checks the package with binary_package_check.sh (mounted at /ci_scripts).
write_docker_script() {
  cat >"$1" <<EOF
#!/usr/bin/env bash
# Written by $SCRIPT_NAME; run inside the docker image by binary_run_in_docker.sh.
set -euo pipefail
exec bash /ci_scripts/binary_package_check.sh $2
EOF
  echo "$SCRIPT_NAME: script to run in docker ($1):"
  sed 's/^/  | /' "$1"
}
