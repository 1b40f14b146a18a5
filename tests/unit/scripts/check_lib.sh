# shellcheck shell=bash
# check WHAT CMD...: runs CMD, prints "ok   WHAT" or "FAIL WHAT" (stderr) and
# counts it in $passed / $failed; the unit test scripts' one way to check.
# Sourced, not run.
passed=0 failed=0
check() {
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $what"
  else
    failed=$((failed + 1))
    echo "FAIL $what" >&2
  fi
}
