# shellcheck shell=bash
# Shared helpers of the dev-cluster integration scripts (sourced, not run).
# Each script prints one line per check, then "N passed, N failed", and
# exits non-zero when any check failed. Assertions on JSON, JSON lines,
# the state database and numbers are checks.py's (tested by checks_test.py).

passed=0 failed=0
# The suite against a Slurm built by hand (installed under SLURM_PREFIX; CI
# keeps Debian's): its commands first on PATH, for the tests and devcluster.
[[ -n "${SLURM_PREFIX:-}" ]] && export PATH="$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:$PATH"
LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CHECKS=$LIB_DIR/checks.py

checks() { /usr/bin/python3 "$CHECKS" "$@"; }  # checks COMMAND ARGS...: see checks.py

check() {  # check "description" command...
  local what=$1
  shift
  if "$@"; then
    echo "ok   - $what"
    passed=$((passed + 1))
  else
    echo "FAIL - $what"
    failed=$((failed + 1))
  fi
}

# wait_for SECONDS command...: poll (every WAIT_FOR_POLL s, default 0.5)
# until it succeeds; one last try at the deadline.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || { "$@"; return; }
    sleep "${WAIT_FOR_POLL:-0.5}"
  done
}

# counter_grows SECONDS URL NAME N [LABEL=VALUE]...: waits until the counter
# NAME served at URL (/metrics; its samples with those labels, summed) has
# grown by N from its value now: so many daemon cycles, failed polls or
# received alerts, where a fixed sleep could only hope they had happened.
counter_grows() {
  local seconds=$1 url=$2 name=$3 n=$4 start now
  shift 4
  start=$(checks metric-sum "$url" "$name" "$@") || start=0
  now=$start
  local deadline=$((SECONDS + seconds))
  until awk -v a="$now" -v b="$start" -v n="$n" 'BEGIN { exit !(a - b >= n) }'; do
    if ((SECONDS >= deadline)); then
      echo "# $name went from $start to $now in ${seconds}s, not up by $n" >&2
      return 1
    fi
    sleep 0.5
    now=$(checks metric-sum "$url" "$name" "$@") || now=$start
  done
}

free_loopback_port() { checks free-port; }  # a TCP port free on 127.0.0.1 right now

stop_pid() {  # stop_pid PID: SIGTERM to a process this script started, 5 s, then SIGKILL
  local pid=$1 _
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

sqlite_rows() { checks sql "$1" "$2"; }  # sqlite_rows DB "SELECT ...": rows, '|' separated (read-only)

job_done() { ! squeue -h -j "$1" 2>/dev/null | grep -q .; }

# devcluster_env DEVCLUSTER STATE: export the cluster's KEY=VALUE settings
# (SLURM_CONF, DEVCLUSTER_JOBS, ...), read line by line rather than eval'd.
devcluster_env() {
  local line
  while IFS= read -r line; do
    line=${line#export }
    [[ $line == [A-Z_]*=* ]] && export "${line%%=*}=${line#*=}"
  done < <("$1" env --state "$2")
  [[ -n "${SLURM_CONF:-}" ]]
}

# teardown_cluster NAME: the end every script shares, after its own
# cleanup: on failure keep $SCRATCH and the jobs' logs in
# /tmp/NAME-failed-PID, take the cluster at $STATE down, remove $SCRATCH.
teardown_cluster() {
  if [[ $failed -gt 0 && -n "${SCRATCH:-}" && -d "$SCRATCH" ]]; then
    local kept=/tmp/$1-failed-$$
    mkdir -p "$kept" && cp -a "$SCRATCH"/. "$kept"/ && cp -a "${DEVCLUSTER_JOBS:-/nonexistent}"/*.log "$kept"/ 2>/dev/null
    echo "# kept the logs in $kept"
  fi
  "$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1 || true
  [[ -n "${SCRATCH:-}" ]] && rm -rf "$SCRATCH"
  return 0
}

finish() {  # the summary line and the exit status
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
