#!/usr/bin/env bash
# run-tests.sh: table-driven tests for the CI scripts in scripts/.
#
# Usage:
#   run-tests.sh            run every case; print "ok K name" or "FAIL K name" (with the details,
#                           indented) per case, then "N passed, M failed"; exit 1 if any failed
#   run-tests.sh --count    print the number of cases
#   run-tests.sh --list     print the name of every case, one a line, in order
#   run-tests.sh --name K   print the name of case K (0-based)
#   run-tests.sh --case K   run case K: exit 0 if it passes, else exit 1 with expected vs actual
#                           on stderr
#
# Cases, in this order:
#   1. populate_env.cases   (binary_populate_env.sh; the format is described at its top)
#   2. should_run_job.cases (should_run_job.sh; ditto)
#   3. generic cases: shellcheck -x of every scripts/*.sh and of this file (passes with a note
#      when shellcheck is not installed); strict mode and header of every script; the DRY_RUN_TABLE
#      below (each row: a dry run with a complete environment, and one with a required variable
#      removed); setup.sh; binary_common.sh refusing to run on its own.
# Every case gets a fresh `mktemp -d` folder (removed afterwards) that is also its $HOME. The
# scripts run with a clean environment (env -i) and, for dry runs, with tripwires on PATH in
# place of docker, git, curl, conda, pip, aws, anaconda ... that fail the case if called.
# Needs bash, coreutils, grep, sed and git; no docker, network, conda or circleci-agent.
set -euo pipefail
export LC_ALL=C

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$TESTS_DIR/../.." && pwd)
SCRIPTS=$REPO/scripts
POPULATE_CASES=$TESTS_DIR/populate_env.cases
SHOULD_RUN_CASES=$TESTS_DIR/should_run_job.cases
SELF=$TESTS_DIR/$(basename "${BASH_SOURCE[0]}")

# Every variable that binary_populate_env.sh must write.
REQUIRED_VARS="PACKAGE_TYPE DESIRED_PYTHON DESIRED_CUDA CUDA_VERSION DESIRED_DEVTOOLSET
  LIBTORCH_VARIANT BUILD_PYTHONLESS OS DATE PYTORCH_BUILD_VERSION PYTORCH_BUILD_NUMBER
  OVERRIDE_PACKAGE_VERSION PIP_UPLOAD_FOLDER TORCH_CONDA_BUILD_FOLDER ANACONDA_USER
  USE_CXX11_ABI PYTORCH_FINAL_PACKAGE_DIR BUILDER_ROOT PYTORCH_ROOT MINICONDA_ROOT"

# Sentinel credentials: dry runs get them, and no output may contain them.
SECRET_ENV=(AWS_ACCESS_KEY_ID=AKIA-SENTINEL-KEY-ID "AWS_SECRET_ACCESS_KEY=sentinel/secret+key value"
  CONDA_PYTORCHBOT_TOKEN=sentinel-conda-token-0123)

# Commands that a dry run must never call.
TRIPWIRES="docker git curl wget conda aws anaconda pip pip3 python python3 unzip circleci-agent sudo"

# DRY_RUN_TABLE: one row per dry run, six fields separated by "|":
#   script | populate inputs | script inputs | args | required variable | stdout must contain
# populate inputs  ";"-separated NAME=value for binary_populate_env.sh, run first (BINARY_DATE
#                  defaults to 20200101); "-" = no env file
# script inputs    ";"-separated NAME=value for the script (besides BINARY_DRY_RUN=1, the sentinel
#                  credentials, HOME, PATH, TMPDIR)
# args             the script's arguments (whitespace-separated)
# required var     "-", or a variable that the "missing" case removes (from the script's
#                  environment and the env file); the script must then fail naming it
# stdout           ";"-separated texts that stdout must contain; "!text" = must not contain
# @HOME@ and @TMP@ stand for the case's $HOME and temporary folder. The case creates
# @HOME@/workspace/final_pkgs/ with one fake package per type, and @TMP@/inner.sh.
DRY_RUN_TABLE=$(
  cat <<'EOF'
binary_checkout.sh | - | CIRCLE_SHA1=0123456789abcdef0123456789abcdef01234567;CIRCLE_REPOSITORY_URL=https://example.invalid/project.git | | CIRCLE_REPOSITORY_URL | git clone --quiet https://github.com/pytorch/builder.git @HOME@/builder;checkout --quiet --force main;git clone --quiet https://example.invalid/project.git @HOME@/pytorch;checkout --quiet --force 0123456789abcdef0123456789abcdef01234567;submodule update --init --recursive
binary_checkout.sh | - | BUILDER_REF=0a1b2c3d;BUILDER_ROOT=@TMP@/b | | - | @TMP@/b;checkout --quiet --force 0a1b2c3d;CIRCLE_SHA1 is not set
binary_install_miniconda.sh | - | | | - | Miniconda3-latest-;-b -p @HOME@/miniconda3;conda: @HOME@/miniconda3/bin/conda
binary_install_miniconda.sh | - | MINICONDA_ROOT=@TMP@/mc;MINICONDA_URL=https://example.invalid/Miniconda3-4.7.12-Linux-x86_64.sh | | - | Miniconda3-4.7.12;conda: @TMP@/mc/bin/conda
binary_run_in_docker.sh | BUILD_ENVIRONMENT=manywheel 3.7m cu100 devtoolset7 | DOCKER_IMAGE=pytorch/manylinux-cuda100 | @TMP@/inner.sh | DOCKER_IMAGE | docker run --rm --runtime=nvidia;-v @HOME@/pytorch:/pytorch;-v @HOME@/builder:/builder;-v @HOME@/workspace/final_pkgs:/final_pkgs;:/env:ro;-v @TMP@/inner.sh:/run_in_docker.sh:ro;pytorch/manylinux-cuda100
binary_run_in_docker.sh | BUILD_ENVIRONMENT=conda 3.7 cpu | DOCKER_IMAGE=pytorch/conda-cuda | @TMP@/inner.sh | - | docker run --rm -v;pytorch/conda-cuda;!--runtime=nvidia
binary_linux_build.sh | BUILD_ENVIRONMENT=conda 3.6 cu90 | | | DESIRED_CUDA | @HOME@/builder/conda/build_pytorch.sh;SKIP_ALL_TESTS=1;mkdir -p /final_pkgs;*.tar.bz2 /final_pkgs/
binary_linux_build.sh | BUILD_ENVIRONMENT=manywheel 3.6m cpu devtoolset7 | | | PYTORCH_FINAL_PACKAGE_DIR | manywheel/build_cpu.sh;*.whl /final_pkgs/
binary_linux_build.sh | BUILD_ENVIRONMENT=libtorch 3.7m cu100 devtoolset3;LIBTORCH_VARIANT=static-without-deps | | | PACKAGE_TYPE | manywheel/build.sh;*.zip /final_pkgs/
binary_linux_test.sh | BUILD_ENVIRONMENT=manywheel 3.7m cu100 | DOCKER_IMAGE=pytorch/manylinux-cuda100 | | DOCKER_IMAGE | exec bash /ci_scripts/binary_package_check.sh built;docker run --rm --runtime=nvidia
binary_linux_upload.sh | BUILD_ENVIRONMENT=manywheel 3.7m cpu | | | AWS_SECRET_ACCESS_KEY | conda install -yq awscli;aws s3 cp --acl public-read --no-progress @HOME@/workspace/final_pkgs/torch-fake.whl s3://pytorch/whl/nightly/cpu/
binary_linux_upload.sh | BUILD_ENVIRONMENT=conda 3.7 cu100 | | | CONDA_PYTORCHBOT_TOKEN | conda install -yq anaconda-client;upload --user pytorch-nightly --label main;@HOME@/workspace/final_pkgs/pytorch-fake.tar.bz2
binary_linux_upload.sh | BUILD_ENVIRONMENT=libtorch 3.7m cu100 devtoolset7;LIBTORCH_VARIANT=shared-with-deps;BINARY_BUILD_KIND=release;PYTORCH_RELEASE_VERSION=1.4.0 | | | AWS_ACCESS_KEY_ID | libtorch-fake.zip s3://pytorch/libtorch/cu100/
binary_macos_build.sh | BUILD_ENVIRONMENT=wheel 3.8 cpu;BINARY_OS=macos | | | DESIRED_PYTHON | @HOME@/builder/wheel/build_wheel.sh;conda create -yq -n binary_check python=3.8;pip install -q @HOME@/workspace/final_pkgs/torch-fake.whl;check_binary.sh;run_tests.sh wheel 3.8 cpu
binary_macos_build.sh | BUILD_ENVIRONMENT=libtorch 3.7 cpu;BINARY_OS=macos;LIBTORCH_VARIANT=shared-with-deps | | | MINICONDA_ROOT | wheel/build_wheel.sh;unzip -q @HOME@/workspace/final_pkgs/libtorch-fake.zip;check_binary.sh;!run_tests.sh
binary_macos_upload.sh | BUILD_ENVIRONMENT=conda 3.7 cpu;BINARY_OS=macos | | | CONDA_PYTORCHBOT_TOKEN | upload --user pytorch-nightly
binary_macos_upload.sh | BUILD_ENVIRONMENT=wheel 3.6 cpu;BINARY_OS=macos | | | AWS_ACCESS_KEY_ID | s3://pytorch/whl/nightly/cpu/
binary_smoke_test.sh | BUILD_ENVIRONMENT=manywheel 3.7m cu100 | DOCKER_IMAGE=pytorch/manylinux-cuda100 | | DOCKER_IMAGE | exec bash /ci_scripts/binary_package_check.sh published;docker run --rm --runtime=nvidia
binary_smoke_test.sh | BUILD_ENVIRONMENT=conda 3.7 cpu;BINARY_OS=macos | | | OS | conda install -yq -c pytorch-nightly pytorch==1.4.0.dev20200101 cpuonly;@HOME@/builder/smoke_test.sh
binary_package_check.sh | BUILD_ENVIRONMENT=manywheel 3.7m cpu | | published | PYTORCH_BUILD_VERSION | /opt/python/cp37-cp37m;pip install -q --pre torch==1.4.0.dev20200101+cpu -f https://download.pytorch.org/whl/nightly/cpu/torch_nightly.html;smoke_test.sh
binary_package_check.sh | BUILD_ENVIRONMENT=libtorch 3.7m cu90 devtoolset7;LIBTORCH_VARIANT=shared-with-deps | | published | LIBTORCH_VARIANT | https://download.pytorch.org/libtorch/nightly/cu90/libtorch-cxx11-abi-shared-with-deps-1.4.0.dev20200101.zip
binary_package_check.sh | BUILD_ENVIRONMENT=conda 3.6 cu100 | | built | - | conda install -yq --offline /final_pkgs/;check_binary.sh;run_tests.sh conda 3.6 cu100
binary_update_htmls.sh | - | | | AWS_SECRET_ACCESS_KEY | conda install -yq awscli;bash @HOME@/builder/cron/update_s3_htmls.sh
binary_upload_sizes.sh | - | BUILDER_ROOT=@TMP@/b | | AWS_ACCESS_KEY_ID | bash @TMP@/b/cron/upload_binary_sizes.sh
should_run_job.sh | - | ON_REQUEST=true;CIRCLE_BRANCH=feature/x;CIRCLE_JOB=binary_linux_conda_3_7_cpu_build | | CIRCLE_JOB | should_run_job: skip binary_linux_conda_3_7_cpu_build;circleci-agent step halt
setup.sh | - | COMMIT_MSG=Fix it [conda ci];CIRCLECI_DIR=@TMP@/ci | | - | @TMP@/ci/COMMIT_MSG;Fix it [conda ci]
EOF
)

# ------------------------------------------------------------------------------ helpers

CASE_KIND=()
CASE_ARG=()
CASE_NAME=()
add_case() {
  CASE_KIND+=("$1")
  CASE_ARG+=("$2")
  CASE_NAME+=("$3")
}

fail() {
  printf '%s\n' "$@" >&2
  exit 1
}

# trim TEXT: TEXT without leading and trailing white space; trim_to VAR TEXT: the same, into VAR.
trim_to() {
  local s=$2
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf -v "$1" '%s' "$s"
}
trim() {
  local t
  trim_to t "$1"
  printf '%s' "$t"
}

# is_assignment LINE: LINE is NAME=value.
is_assignment() {
  [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]
}

# subst TEXT: replace the placeholders @HOME@, @TMP@, @TODAY@ and @SP@.
subst() {
  local s=$1
  s=${s//@HOME@/$HOME}
  s=${s//@TMP@/$T}
  s=${s//@TODAY@/$(date -u +%Y%m%d)}
  s=${s//@SP@/ }
  printf '%s' "$s"
}

# new_tmp: a fresh temporary folder $T for this case, with HOME=$T/home.
new_tmp() {
  T=$(mktemp -d "${TMPDIR:-/tmp}/run-tests.XXXXXX")
  trap 'rm -rf "$T"' EXIT
  mkdir -p "$T/home" "$T/tmp" "$T/bin"
  export HOME=$T/home
}

# base_env: the clean environment every script runs with, in the array ENVV.
base_env() {
  ENVV=("PATH=$T/bin:$PATH" "HOME=$HOME" "TMPDIR=$T/tmp" "LC_ALL=C")
}

# run_script NAME ARGS...: run scripts/NAME with env -i "${ENVV[@]}"; sets STATUS, OUT, ERR.
run_script() {
  local name=$1
  shift
  STATUS=0
  env -i "${ENVV[@]}" bash "$SCRIPTS/$name" "$@" >"$T/stdout" 2>"$T/stderr" || STATUS=$?
  OUT=$(cat "$T/stdout")
  ERR=$(cat "$T/stderr")
}

show_output() {
  printf '  --- stdout:\n%s\n  --- stderr:\n%s\n' "$OUT" "$ERR"
}

expect_status() {
  if [[ $STATUS != "$1" ]]; then
    fail "expected exit status $1, got $STATUS" "$(show_output)"
  fi
}

expect_contains() { # WHERE TEXT
  local where=$1 text=$2 haystack
  if [[ $where == stdout ]]; then haystack=$OUT; else haystack=$ERR; fi
  if [[ $haystack != *"$text"* ]]; then
    fail "expected $where to contain: $text" "$(show_output)"
  fi
}

expect_not_contains() { # WHERE TEXT
  local where=$1 text=$2 haystack
  if [[ $where == stdout ]]; then haystack=$OUT; else haystack=$ERR; fi
  if [[ $haystack == *"$text"* ]]; then
    fail "expected $where not to contain: $text" "$(show_output)"
  fi
}

make_tripwires() {
  local cmd
  for cmd in $TRIPWIRES; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/tripwire.log"\nexit 97\n' "$cmd" "$T" >"$T/bin/$cmd"
    chmod +x "$T/bin/$cmd"
  done
}

expect_no_tripwire() {
  if [[ -s $T/tripwire.log ]]; then
    fail "a dry run called real commands:" "$(cat "$T/tripwire.log")" "$(show_output)"
  fi
}

expect_no_secrets() {
  local kv value
  for kv in "${SECRET_ENV[@]}"; do
    value=${kv#*=}
    if [[ $OUT == *"$value"* || $ERR == *"$value"* ]]; then
      fail "the output shows the value of ${kv%%=*}" "$(show_output)"
    fi
  done
}

# ------------------------------------------------------------------------------ case list

collect_cases() {
  local n=0 line name i row script populate var label f b t
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    if [[ $line == "== "* ]]; then
      add_case populate "$n" "populate_env: ${line#== }"
    fi
  done <"$POPULATE_CASES"

  n=0
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    trim_to t "$line"
    [[ -z $t || $line == \#* ]] && continue
    trim_to name "${line%%|*}"
    add_case should_run "$n" "should_run_job: $name"
  done <"$SHOULD_RUN_CASES"

  for f in "$SCRIPTS"/*.sh; do
    b=${f##*/}
    add_case shellcheck "scripts/$b" "shellcheck -x scripts/$b"
  done
  add_case shellcheck "tests/scripts/${SELF##*/}" "shellcheck -x tests/scripts/${SELF##*/}"
  for f in "$SCRIPTS"/*.sh; do
    b=${f##*/}
    add_case strict "$b" "strict mode and header: scripts/$b"
  done

  i=0
  while IFS= read -r row; do
    i=$((i + 1))
    IFS='|' read -r script populate _ _ var _ <<<"$row"
    trim_to script "$script"
    trim_to populate "$populate"
    trim_to var "$var"
    label=-
    if [[ $populate =~ BUILD_ENVIRONMENT=([^\;]*) ]]; then
      label=${BASH_REMATCH[1]}
      if [[ $populate == *BINARY_OS=macos* ]]; then label="macos $label"; fi
    fi
    add_case dry_run "$i" "dry run: $script [$label]"
    if [[ $var != - ]]; then
      add_case missing "$i" "missing $var fails: $script [$label]"
    fi
  done <<<"$DRY_RUN_TABLE"
  add_case dry_run_coverage - "every script but binary_common.sh and binary_populate_env.sh has a dry-run row"

  add_case setup_git - "setup.sh: writes the commit message of HEAD to COMMIT_MSG"
  add_case setup_roundtrip - "setup.sh + should_run_job.sh: a [conda ci] commit runs an on-request conda job"
  add_case common_alone - "binary_common.sh refuses to run on its own"
  add_case get_release - "get-cigen.sh: a pinned release from a file:// URL, checked, then from the cache without curl"
  add_case get_mismatch - "get-cigen.sh: a download whose sha256 is not the pinned one is refused"
  add_case get_sources - "get-cigen.sh: the vendored sources built once, again only when they change; --key"
}

# ------------------------------------------------------------------------------ case kinds

case_populate() {
  local start=$1 n=0 line section=inputs env_file='' exit_want=0 name value precreated=0
  local expects=()
  new_tmp
  base_env
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    ((n <= start)) && continue
    [[ $line == "== "* ]] && break
    [[ -z $(trim "$line") || $line == \#* ]] && continue
    if [[ $line == -- ]]; then
      section=expect
    elif [[ $section == inputs ]]; then
      case $line in
        '!existing-env-file') precreated=1 ;;
        '!uname '*)
          cat >"$T/bin/uname" <<EOF
#!/bin/sh
case "\$1" in -m) echo x86_64 ;; *) echo ${line#!uname } ;; esac
EOF
          chmod +x "$T/bin/uname"
          ;;
        *=*)
          is_assignment "$line" || fail "populate_env.cases:$n: cannot read input line: $line"
          value=$(subst "${line#*=}")
          ENVV+=("${line%%=*}=$value")
          if [[ ${line%%=*} == BINARY_ENV_FILE ]]; then env_file=$value; fi
          ;;
        *) fail "populate_env.cases:$n: cannot read input line: $line" ;;
      esac
    else
      case $line in
        'exit '*) exit_want=${line#exit } ;;
        'stdout '* | 'stderr '*) expects+=("$line") ;;
        *=*)
          is_assignment "$line" || fail "populate_env.cases:$n: cannot read expectation line: $line"
          expects+=("$line")
          ;;
        *) fail "populate_env.cases:$n: cannot read expectation line: $line" ;;
      esac
    fi
  done <"$POPULATE_CASES"
  env_file=${env_file:-$HOME/project/env}
  if ((precreated)); then
    mkdir -p "$(dirname "$env_file")"
    echo "export SENTINEL='from before'" >"$env_file"
  fi

  run_script binary_populate_env.sh
  expect_status "$exit_want"
  for line in ${expects[@]+"${expects[@]}"}; do
    case $line in
      'stdout '*) expect_contains stdout "$(subst "${line#stdout }")" ;;
      'stderr '*) expect_contains stderr "$(subst "${line#stderr }")" ;;
    esac
  done

  if [[ $exit_want != 0 ]]; then
    if [[ $(printf '%s\n' "$ERR" | wc -l) -ne 1 ]]; then
      fail "expected exactly one line on stderr" "$(show_output)"
    fi
    if ((precreated)); then
      [[ $(cat "$env_file") == "export SENTINEL='from before'" ]] ||
        fail "expected the existing env file $env_file to be unchanged, it holds:" "$(cat "$env_file")"
    elif [[ -e $env_file ]]; then
      fail "expected no env file after an error, but $env_file exists"
    fi
    if [[ -n $(find "$(dirname "$env_file")" -name '.env.*' 2>/dev/null) ]]; then
      fail "a temporary env file was left behind in $(dirname "$env_file")"
    fi
    return 0
  fi

  [[ -f $env_file ]] || fail "expected the env file $env_file to exist" "$(show_output)"
  if grep -v -E -e "^#" -e "^export [A-Z_][A-Z0-9_]*='.*'\$" "$env_file" >"$T/badlines"; then
    fail "lines of $env_file that are not comments or export NAME='...':" "$(cat "$T/badlines")"
  fi
  # Source the env file in a clean shell and dump NAME=value records (NUL-separated).
  local names=() expected_names=() expected_values=() actual
  for name in $REQUIRED_VARS; do names+=("$name"); done
  for line in ${expects[@]+"${expects[@]}"}; do
    if is_assignment "$line"; then
      expected_names+=("${line%%=*}")
      expected_values+=("$(subst "${line#*=}")")
      names+=("${line%%=*}")
    fi
  done
  # shellcheck disable=SC2016 # the script is for the inner bash
  env -i bash -c 'set -eu; source "$1"; shift
    for n in "$@"; do
      if [[ -n ${!n+x} ]]; then printf "%s=%s\0" "$n" "${!n}"; else printf "%s\0" "$n"; fi
    done' _ "$env_file" "${names[@]}" >"$T/dump" 2>"$T/dump.err" ||
    fail "sourcing $env_file under set -eu failed:" "$(cat "$T/dump.err")"
  lookup() { # NAME -> prints value, returns 1 when unset
    local rec
    while IFS= read -r -d '' rec; do
      if [[ $rec == "$1="* ]]; then
        printf '%s' "${rec#*=}"
        return 0
      fi
    done <"$T/dump"
    return 1
  }
  for name in $REQUIRED_VARS; do
    lookup "$name" >/dev/null || fail "the env file does not set $name:" "$(cat "$env_file")"
  done
  local i
  for ((i = 0; i < ${#expected_names[@]}; i++)); do
    actual=$(lookup "${expected_names[i]}") || actual='<unset>'
    if [[ $actual != "${expected_values[i]}" ]]; then
      fail "${expected_names[i]}: expected '${expected_values[i]}', got '$actual'" "--- env file:" "$(cat "$env_file")"
    fi
  done
  if ((precreated)) && grep -q SENTINEL "$env_file"; then
    fail "expected the existing env file to be replaced"
  fi
}

case_should_run() {
  local lineno=$1 line name expect on_request branch job msg args=() msg_file
  new_tmp
  base_env
  line=$(sed -n "${lineno}p" "$SHOULD_RUN_CASES")
  IFS='|' read -r name expect on_request branch job msg <<<"$line"
  expect=$(trim "$expect")
  on_request=$(trim "$on_request")
  branch=$(trim "$branch")
  job=$(trim "$job")
  msg=$(trim "$msg")
  [[ $on_request == - ]] || ENVV+=("ON_REQUEST=$on_request")
  [[ $branch == - ]] || ENVV+=("CIRCLE_BRANCH=$branch")
  case $job in
    -) ;;
    env:*)
      ENVV+=("CIRCLE_JOB=${job#env:}")
      job=${job#env:}
      ;;
    *) args+=("$job") ;;
  esac
  msg_file=$HOME/workspace/.circleci/COMMIT_MSG
  case $msg in
    '<none>') ;;
    '<empty>') mkdir -p "$(dirname "$msg_file")" && : >"$msg_file" ;;
    *) mkdir -p "$(dirname "$msg_file")" && printf '%s\n' "${msg//\\n/$'\n'}" >"$msg_file" ;;
  esac
  printf '#!/bin/sh\necho "$*" >>"%s/agent.log"\n' "$T" >"$T/bin/fake-agent"
  chmod +x "$T/bin/fake-agent"
  case $expect in
    run | skip | usage) ENVV+=("CIRCLECI_AGENT=$T/bin/fake-agent") && args=(--decide ${args[@]+"${args[@]}"}) ;;
    halt | proceed) ENVV+=("CIRCLECI_AGENT=$T/bin/fake-agent") ;;
    noagent) ENVV+=("CIRCLECI_AGENT=no-such-circleci-agent") ;;
    *) fail "should_run_job.cases:$lineno: unknown expectation '$expect'" ;;
  esac

  run_script should_run_job.sh ${args[@]+"${args[@]}"}
  local line_count
  line_count=$(printf '%s' "$OUT" | grep -c '^should_run_job: ' || true)
  case $expect in
    run | proceed)
      expect_status 0
      expect_contains stdout "should_run_job: run $job ("
      ;;
    skip)
      expect_status 1
      expect_contains stdout "should_run_job: skip $job ("
      ;;
    halt)
      expect_status 0
      expect_contains stdout "should_run_job: skip $job ("
      [[ $(cat "$T/agent.log" 2>/dev/null) == "step halt" ]] ||
        fail "expected circleci-agent to be called once with 'step halt'" "$(show_output)"
      ;;
    noagent)
      expect_status 1
      expect_contains stderr no-such-circleci-agent
      ;;
    usage)
      expect_status 2
      [[ -n $ERR ]] || fail "expected an error message on stderr" "$(show_output)"
      ;;
  esac
  if [[ $expect != usage && $line_count != 1 ]]; then
    fail "expected exactly one decision line on stdout" "$(show_output)"
  fi
  if [[ $expect != halt && -e $T/agent.log ]]; then
    fail "circleci-agent was called but should not have been: $(cat "$T/agent.log")" "$(show_output)"
  fi
}

case_shellcheck() {
  new_tmp
  if ! command -v shellcheck >/dev/null 2>&1; then
    echo "note: shellcheck is not installed; skipping $1" >&2
    return 0
  fi
  (cd "$REPO" && shellcheck -x "$1") >&2 || fail "shellcheck -x $1 failed (see above)"
}

case_strict() {
  local file=$SCRIPTS/$1 header
  new_tmp
  [[ $(head -n 1 "$file") == '#!/usr/bin/env bash' ]] || fail "$1: the first line is not '#!/usr/bin/env bash'"
  grep -qx 'set -euo pipefail' "$file" || fail "$1: no 'set -euo pipefail' line"
  header=$(sed -n '2,/^[^#]/p' "$file")
  [[ $header == "# $1"* ]] || fail "$1: the header comment should start with '# $1: what it does'"
  [[ $header == *Reads* && $header == *Writes* ]] || fail "$1: the header comment should say what it Reads and Writes"
  if [[ $1 == binary_common.sh ]]; then
    [[ ! -x $file ]] || fail "$1 is sourced, so it should not be executable"
  else
    [[ -x $file ]] || fail "$1 is not executable"
  fi
}

# dry_run_setup ROW MODE: prepare and run one row of DRY_RUN_TABLE (MODE = dry_run | missing).
case_dry_run() {
  local row mode=$2 script populate inputs args var expects item kv env_file
  local pop_env=() arglist=()
  row=$(sed -n "${1}p" <<<"$DRY_RUN_TABLE")
  IFS='|' read -r script populate inputs args var expects <<<"$row"
  script=$(trim "$script")
  populate=$(trim "$populate")
  inputs=$(trim "$inputs")
  args=$(trim "$args")
  var=$(trim "$var")
  expects=$(trim "$expects")
  new_tmp
  mkdir -p "$HOME/workspace/final_pkgs"
  touch "$HOME/workspace/final_pkgs/"{torch-fake.whl,pytorch-fake.tar.bz2,libtorch-fake.zip}
  printf '#!/usr/bin/env bash\necho inner\n' >"$T/inner.sh"

  if [[ $populate != - ]]; then
    base_env
    ENVV+=(BINARY_DATE=20200101)
    IFS=';' read -r -a pop_env <<<"$populate"
    for kv in "${pop_env[@]}"; do ENVV+=("$(subst "$(trim "$kv")")"); done
    run_script binary_populate_env.sh
    [[ $STATUS == 0 ]] || fail "binary_populate_env.sh failed while preparing the case" "$(show_output)"
  fi
  make_tripwires
  base_env
  ENVV+=(BINARY_DRY_RUN=1 BINARY_RETRY_SLEEP=0 "${SECRET_ENV[@]}")
  if [[ -n $inputs ]]; then
    IFS=';' read -r -a pop_env <<<"$inputs"
    for kv in "${pop_env[@]}"; do ENVV+=("$(subst "$(trim "$kv")")"); done
  fi
  if [[ $mode == missing ]]; then
    local kept=()
    for kv in "${ENVV[@]}"; do
      [[ $kv == "$var="* ]] || kept+=("$kv")
    done
    ENVV=("${kept[@]}")
    env_file=$HOME/project/env
    if [[ -f $env_file ]]; then
      grep -v "^export $var=" "$env_file" >"$T/env.new" || true
      mv "$T/env.new" "$env_file"
    fi
  fi
  read -r -a arglist <<<"$(subst "$args")"
  run_script "$script" ${arglist[@]+"${arglist[@]}"}
  expect_no_tripwire
  expect_no_secrets
  if [[ -n $(ls -A "$T/tmp") ]]; then
    fail "temporary files were left behind in TMPDIR:" "$(ls -A "$T/tmp")"
  fi
  if [[ $mode == missing ]]; then
    [[ $STATUS != 0 ]] || fail "expected a failure without $var, got exit 0" "$(show_output)"
    expect_contains stderr "$var"
    return 0
  fi
  expect_status 0
  IFS=';' read -r -a pop_env <<<"$expects"
  for item in ${pop_env[@]+"${pop_env[@]}"}; do
    item=$(subst "$(trim "$item")")
    if [[ $item == !* ]]; then
      expect_not_contains stdout "${item#!}"
    else
      expect_contains stdout "$item"
    fi
  done
}

case_dry_run_coverage() {
  local f b covered
  new_tmp
  covered=$(cut -d'|' -f1 <<<"$DRY_RUN_TABLE")
  for f in "$SCRIPTS"/*.sh; do
    b=$(basename "$f")
    [[ $b == binary_common.sh || $b == binary_populate_env.sh ]] && continue
    [[ $b == get-cigen.sh ]] && continue # its own cases (get_*) run it for real
    grep -qx "$b *" <<<"$covered" || fail "scripts/$b has no row in DRY_RUN_TABLE of run-tests.sh"
  done
}

case_setup_git() {
  new_tmp
  local ci=$T/ci
  mkdir -p "$ci"
  git -C "$ci" init -q
  printf 'x\n' >"$ci/file"
  git -C "$ci" add file
  git -C "$ci" -c user.name=test -c user.email=test@example.invalid -c commit.gpgsign=false \
    commit -q -m 'Fix the smoke tests [smoke ci]' -m 'Second paragraph.'
  base_env
  ENVV+=("CIRCLECI_DIR=$ci")
  run_script setup.sh
  expect_status 0
  local want=$'Fix the smoke tests [smoke ci]\n\nSecond paragraph.'
  [[ $(cat "$ci/COMMIT_MSG") == "$want" ]] ||
    fail "expected COMMIT_MSG to hold:" "$want" "got:" "$(cat "$ci/COMMIT_MSG")"
  expect_contains stdout "$ci/COMMIT_MSG"
}

case_setup_roundtrip() {
  new_tmp
  base_env
  ENVV+=("CIRCLECI_DIR=$HOME/workspace/.circleci" "COMMIT_MSG=Conda fix [CONDA CI]")
  run_script setup.sh
  expect_status 0
  base_env
  ENVV+=(ON_REQUEST=true CIRCLE_BRANCH=pull/123)
  run_script should_run_job.sh --decide binary_macos_conda_3_7_cpu_build
  expect_status 0
  expect_contains stdout "should_run_job: run binary_macos_conda_3_7_cpu_build (commit message has [conda ci])"
  run_script should_run_job.sh --decide binary_macos_wheel_3_7_cpu_build
  expect_status 1
}

case_common_alone() {
  new_tmp
  base_env
  run_script binary_common.sh
  expect_status 2
  expect_contains stderr "binary_common.sh: error:"
}

# get-cigen.sh: a fake release (a script that says its version) and its checksum
get_setup() {
  new_tmp
  base_env
  printf '#!/bin/sh\necho "cigen 9.8.7"\n' >"$T/cigen-9.8.7-linux-x86_64"
  chmod +x "$T/cigen-9.8.7-linux-x86_64"
  REL_SHA=$(sha256sum "$T/cigen-9.8.7-linux-x86_64" | cut -d' ' -f1)
  ENVV+=("CIGEN_VERSION=9.8.7" "CIGEN_URL=file://$T/cigen-@VERSION@-linux-x86_64")
}

case_get_release() {
  get_setup
  ENVV+=("CIGEN_SHA256=$REL_SHA" "CIGEN_LINK=$T/bin/cigen")
  run_script get-cigen.sh
  expect_status 0
  [[ $OUT == "$HOME/.cache/cigen/cigen" ]] || fail "stdout: '$OUT'"
  expect_contains stderr "downloaded from file://$T/cigen-9.8.7-linux-x86_64 (sha256 checked)"
  [[ $("$T/bin/cigen") == "cigen 9.8.7" ]] || fail "the linked cigen does not run"
  # warm: curl is never called
  printf '#!/bin/sh\necho curl called >&2; exit 99\n' >"$T/bin/curl"
  chmod +x "$T/bin/curl"
  run_script get-cigen.sh
  expect_status 0
  expect_contains stderr "cigen 9.8.7 from the cache (sha256 checked)"
  # a cached binary that changed is not trusted: it is fetched again (here: curl fails)
  echo tampered >>"$HOME/.cache/cigen/cigen"
  run_script get-cigen.sh
  expect_status 2
  expect_contains stderr "the cached cigen is not the one pinned now"
  [[ ! -e $HOME/.cache/cigen/cigen ]] || fail "the tampered binary was kept"
}

case_get_mismatch() {
  get_setup
  ENVV+=("CIGEN_SHA256=$(printf '%064d' 0)")
  run_script get-cigen.sh
  expect_status 2
  expect_contains stderr "not the pinned 0000"
  expect_contains stderr "no CIGEN_SRC to build"
  [[ ! -e $HOME/.cache/cigen/cigen ]] || fail "a refused download was kept"
}

case_get_sources() {
  new_tmp
  base_env
  # a stand-in for cigen's sources: its Makefile counts the builds
  mkdir -p "$T/src/generator" "$T/src/build-aux"
  echo 'int x;' >"$T/src/generator/a.c"
  echo 1.0.0 >"$T/src/VERSION"
  printf 'build/cigen-static: generator/a.c\n\tmkdir -p build && printf "#!/bin/sh\\necho built\\n" > $@ && chmod +x $@ && echo x >> builds\n' >"$T/src/Makefile"
  ENVV+=("CIGEN_SRC=$T/src")
  for tool in pkg-config cc; do printf '#!/bin/sh\nexit 0\n' >"$T/bin/$tool" && chmod +x "$T/bin/$tool"; done
  run_script get-cigen.sh --key "$T/key"
  expect_status 0
  grep -Eq '^sources [0-9a-f]{64}$' "$T/key" || fail "key: $(cat "$T/key")"
  run_script get-cigen.sh
  expect_status 0
  expect_contains stderr "built from the vendored sources in $T/src"
  [[ $("$OUT") == built ]] || fail "the built cigen does not run"
  run_script get-cigen.sh
  expect_status 0
  expect_contains stderr "from the cache (sources unchanged)"
  [[ $(wc -l <"$T/src/builds") -eq 1 ]] || fail "built $(wc -l <"$T/src/builds") times, not once"
  echo 'int y;' >>"$T/src/generator/a.c"
  cp "$T/key" "$T/key.old"
  run_script get-cigen.sh --key "$T/key"
  ! cmp -s "$T/key" "$T/key.old" || fail "--key did not change with the sources"
  run_script get-cigen.sh
  expect_status 0
  [[ $(wc -l <"$T/src/builds") -eq 2 ]] || fail "a source change did not rebuild"
}

run_case() {
  local k=$1
  case ${CASE_KIND[k]} in
    populate) case_populate "${CASE_ARG[k]}" ;;
    should_run) case_should_run "${CASE_ARG[k]}" ;;
    shellcheck) case_shellcheck "${CASE_ARG[k]}" ;;
    strict) case_strict "${CASE_ARG[k]}" ;;
    dry_run) case_dry_run "${CASE_ARG[k]}" dry_run ;;
    missing) case_dry_run "${CASE_ARG[k]}" missing ;;
    dry_run_coverage) case_dry_run_coverage ;;
    setup_git) case_setup_git ;;
    setup_roundtrip) case_setup_roundtrip ;;
    common_alone) case_common_alone ;;
    get_release) case_get_release ;;
    get_mismatch) case_get_mismatch ;;
    get_sources) case_get_sources ;;
  esac
}

# ------------------------------------------------------------------------------ main

check_index() {
  if [[ ! $1 =~ ^[0-9]+$ ]] || (($1 >= ${#CASE_KIND[@]})); then
    echo "run-tests.sh: error: no case '$1' (cases are numbered 0..$((${#CASE_KIND[@]} - 1)))" >&2
    exit 2
  fi
}

collect_cases
case ${1:-} in
  --count) echo "${#CASE_KIND[@]}" ;;
  --list) printf '%s\n' "${CASE_NAME[@]}" ;;
  --name)
    check_index "${2:-}"
    echo "${CASE_NAME[$2]}"
    ;;
  --case)
    check_index "${2:-}"
    run_case "$2"
    ;;
  '')
    passed=0
    failed=0
    details=$(mktemp "${TMPDIR:-/tmp}/run-tests.details.XXXXXX")
    trap 'rm -f "$details"' EXIT
    for ((k = 0; k < ${#CASE_KIND[@]}; k++)); do
      if bash "$SELF" --case "$k" >/dev/null 2>"$details"; then
        echo "ok $k ${CASE_NAME[k]}"
        passed=$((passed + 1))
      else
        echo "FAIL $k ${CASE_NAME[k]}"
        sed 's/^/    /' "$details"
        failed=$((failed + 1))
      fi
    done
    echo "$passed passed, $failed failed"
    ((failed == 0))
    ;;
  -h | --help) sed -n '2,11s/^# \{0,1\}//p' "$SELF" ;;
  *)
    echo "run-tests.sh: error: unknown argument '$1' (see --help)" >&2
    exit 2
    ;;
esac
