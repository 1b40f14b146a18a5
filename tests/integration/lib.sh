# shellcheck shell=bash
# Shared helpers of the dev-cluster integration scripts (sourced, not run).
# Each script prints one line per check, then "N passed, N failed", and
# exits non-zero when any check failed.

passed=0 failed=0

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

wait_for() {  # wait_for SECONDS command...: poll every 0.5 s until it succeeds
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

free_loopback_port() {  # a TCP port free on 127.0.0.1 right now
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_pid() {  # stop_pid PID: SIGTERM to a process this script started, 5 s, then SIGKILL
  local pid=$1 _
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

sqlite_rows() {  # sqlite_rows DB "SELECT ...": rows, '|' separated (read-only)
  /usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True, timeout=5)
for row in db.execute(sys.argv[2]): print('|'.join('' if v is None else str(v) for v in row))" "$1" "$2"
}

job_done() { ! squeue -h -j "$1" 2>/dev/null | grep -q .; }

finish() {  # the summary line and the exit status
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
