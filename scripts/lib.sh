# shellcheck shell=bash
# Sourced by the scripts the README names: every wait has a deadline and
# every failure says what broke, so a script never hangs or dies silently.

# die MESSAGE...: the script's name, the message, exit 1.
die() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}

# on_error_say_where: an ERR trap that names the failing line and command,
# for set -e scripts whose steps would otherwise fail without a word.
on_error_say_where() {
  trap 'echo "$(basename "$0"): failed at line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
}

# wait_for SECONDS WHAT COMMAND [ARGS...]: runs COMMAND every half second
# until it succeeds; after SECONDS, says what it waited for and returns 1.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "$(basename "$0"): gave up after ${seconds}s waiting for: $what" >&2
      return 1
    fi
    sleep 0.5
  done
}

# run_logged LOG COMMAND [ARGS...]: runs COMMAND with its output in LOG; on
# failure shows the log's last 80 lines (a build's errors) and returns its status.
run_logged() {
  local log=$1 status=0
  shift
  "$@" >"$log" 2>&1 || status=$?
  if ((status != 0)); then
    echo "$(basename "$0"): '$*' failed (exit $status); the last lines of $log:" >&2
    tail -n 80 "$log" >&2
  fi
  return "$status"
}
