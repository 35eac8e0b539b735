#!/usr/bin/env bash
# should_run_job.sh: decide whether a CircleCI job runs, and stop it (successfully) if not.
#
# Usage: should_run_job.sh [--decide] [JOB]
#   JOB       the job name (default $CIRCLE_JOB)
#   --decide  only print the decision; exit 0 = run, 1 = skip (for tests and scripts)
# Without --decide: on run it exits 0; on skip it calls `circleci-agent step halt` (which ends the
# job as successful) and exits 0, or fails (exit 1) if circleci-agent is not there.
# Exit 2 on bad usage (no job name, unknown option, bad ON_REQUEST).
#
# Reads:
#   ON_REQUEST       true | false (default false). A default job always runs; an on-request job
#                    runs only on the branches main, master, nightly and release/*, or when the
#                    commit message says "[ci all]" or "[<word> ci]" where <word> is the job name
#                    or one of its "_"-separated parts ("[conda ci]", "[cu100 ci]"), any case.
#   CIRCLE_BRANCH    the branch (set by CircleCI; unset for tag builds)
#   CIRCLE_JOB       the job name when JOB is not given (set by CircleCI)
#   COMMIT_MSG_FILE  default $HOME/workspace/.circleci/COMMIT_MSG (written by setup.sh);
#                    a missing file counts as an empty message
#   CIRCLECI_AGENT   the circleci-agent command (default circleci-agent; for tests)
#   BINARY_DRY_RUN   1 = print the halt command instead of running it
# Writes: one line on stdout: "should_run_job: run|skip <job> (<reason>)".
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=binary_common.sh
source "$(dirname "$0")/binary_common.sh"

decide_only=0
job=''
while (($#)); do
  case $1 in
    --decide) decide_only=1 ;;
    -h | --help)
      sed -n '2,9s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    -*) usage_error "unknown option '$1' (usage: should_run_job.sh [--decide] [JOB])" ;;
    *)
      [[ -z $job ]] || usage_error "too many arguments (usage: should_run_job.sh [--decide] [JOB])"
      job=$1
      ;;
  esac
  shift
done
job=${job:-${CIRCLE_JOB:-}}
[[ -n $job ]] || usage_error "no job name: pass it as the first argument or set CIRCLE_JOB (set by CircleCI)"
on_request=${ON_REQUEST:-false}
[[ $on_request == true || $on_request == false ]] ||
  usage_error "ON_REQUEST must be true or false, got '$on_request' (set by the job's on_request parameter)"

lower() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]'
}

# is_part WORD: WORD is the whole (lower-cased) job name or one of its "_"-separated parts.
is_part() {
  local part parts
  [[ $1 == "$job_lower" ]] && return 0
  IFS=_ read -r -a parts <<<"$job_lower"
  for part in ${parts[@]+"${parts[@]}"}; do
    [[ $1 == "$part" ]] && return 0
  done
  return 1
}

# decide: set $reason; return 0 to run, 1 to skip.
decide() {
  local branch=${CIRCLE_BRANCH:-} msg_file msg='' rest word
  local re_all='\[[[:space:]]*ci[[:space:]]+all[[:space:]]*\]'
  local re_word='\[[[:space:]]*([[:alnum:]_.-]+)[[:space:]]+ci[[:space:]]*\]'
  if [[ $on_request == false ]]; then
    reason="default job"
    return 0
  fi
  case $branch in
    main | master | nightly | release/*)
      reason="branch $branch"
      return 0
      ;;
  esac
  msg_file=${COMMIT_MSG_FILE:-$HOME/workspace/.circleci/COMMIT_MSG}
  if [[ -f $msg_file ]]; then
    msg=$(lower "$(cat "$msg_file")")
  fi
  if [[ $msg =~ $re_all ]]; then
    reason="commit message has [ci all]"
    return 0
  fi
  job_lower=$(lower "$job")
  rest=$msg
  while [[ $rest =~ $re_word ]]; do
    word=${BASH_REMATCH[1]}
    if is_part "$word"; then
      reason="commit message has [$word ci]"
      return 0
    fi
    rest=${rest#*"${BASH_REMATCH[0]}"}
  done
  reason="on-request job; not asked for by branch '${branch:-<none>}' or the commit message"
  return 1
}

if decide; then
  echo "should_run_job: run $job ($reason)"
  exit 0
fi
echo "should_run_job: skip $job ($reason)"
if ((decide_only)); then
  exit 1
fi
agent=${CIRCLECI_AGENT:-circleci-agent}
if ! is_dry_run && ! command -v "$agent" >/dev/null 2>&1; then
  die "cannot stop the job: '$agent' not found (it exists only inside CircleCI jobs; use --decide elsewhere)"
fi
run "$agent" step halt
