#!/usr/bin/env bash
# `jobmon triage LOG` reads the Ray worker logs a job left in its diag dir
# (<diag dir>/ray-logs[/<node>]/, common/include/jobmon/common/diag_dir.h)
# without --ray-logs: the Ray stand-in's actor death (tests/fixtures/ray)
# is explained by the dead worker's own stderr (a segfault) only when they
# are read. The diag dir is the plugin's default one beside the log.
set -uo pipefail
jobmon=$1 fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The primary class (jobmon triage's exit code says a failure was found).
primary() {
  "$jobmon" triage --json --no-slurm "$tmp/slurm-77.out" >"$tmp/report.json" 2>"$tmp/err"
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["primary_failure"])' \
    "$tmp/report.json"
}
cp "$fixtures/ray-actor-died-session.log" "$tmp/slurm-77.out" || exit 1
without=$(primary)
[[ "$without" == actor-fail ]] || { echo "FAIL: without worker logs: $without"; exit 1; }
mkdir -p "$tmp/jobmon-diag-77/ray-logs/node2" || exit 1
cp "$fixtures"/ray-actor-died-session.ray-logs/*-3907.* "$tmp/jobmon-diag-77/ray-logs/node2/" &&
  cp "$fixtures"/ray-actor-died-session.ray-logs/*-4211.* "$tmp/jobmon-diag-77/ray-logs/" || exit 1
with=$(primary)
[[ "$with" == signal-kill ]] || { echo "FAIL: with the diag dir's worker logs: $with"; cat "$tmp/err"; exit 1; }
grep -q "with Ray's worker logs in $tmp/jobmon-diag-77/ray-logs" "$tmp/err" ||
  { echo "FAIL: no line saying which worker logs were read"; cat "$tmp/err"; exit 1; }
echo "PASS: actor-fail alone, signal-kill with the diag dir's worker logs (node subdir and top)"
