#!/usr/bin/env bash
# `jobmon check` against a real dev cluster's files: its plugstack.conf (the
# plugin's line as devcluster writes it), a jobmon.toml whose state_db is in
# a scratch dir, and Slurm reached through SLURM_CONF. Clean: exit 0; a
# broken plugin argument: exit 1 with the line named; the controller gone:
# exit 1 naming squeue. Needs root. The cluster is torn down on every path.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" JOBMON=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --jobmon PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$JOBMON" ]] || { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") JOBMON=$(realpath "$JOBMON")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-it-XXXXXX)
SUBNET=10.209.$((RANDOM % 200 + 20))
SCRATCH=$(mktemp -d /tmp/jobmon-it-check-XXXXXX)
trap 'teardown_cluster jobmon-check' EXIT

echo "# devcluster up: 1 node on $SUBNET.0/24, state $STATE"
if ! "$DEVCLUSTER" up --nodes 1 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"

mkdir -p "$SCRATCH/state"
cat >"$SCRATCH/jobmon.toml" <<TOML
[monitor]
jobmon_binary = "$JOBMON"
state_db = "$SCRATCH/state/state.db"
slurm_timeout = "5s"
TOML

run_check() {  # run_check PLUGSTACK: output in $SCRATCH/out, exit code in $rc
  "$JOBMON" check --config "$SCRATCH/jobmon.toml" --plugstack "$1" --monitor-user root \
    >"$SCRATCH/out" 2>&1
  rc=$?
  sed 's/^/#   /' "$SCRATCH/out"
}

echo "# the dev cluster's own files"
run_check "$STATE/etc/plugstack.conf"
check "jobmon check exits 0" test "$rc" -eq 0
check "it says there is no problem" grep -q '^jobmon check: no problems (' "$SCRATCH/out"

echo "# a broken plugin argument"
sed 's/$/ compression=42/' "$STATE/etc/plugstack.conf" >"$SCRATCH/plugstack.conf"
run_check "$SCRATCH/plugstack.conf"
check "jobmon check exits 1" test "$rc" -eq 1
check "the problem names the file, the line and the argument" \
  grep -qF "jobmon check: $SCRATCH/plugstack.conf:1: plugstack.conf argument compression=42" "$SCRATCH/out"
check "one problem in the summary" grep -q '^jobmon check: 1 problem (' "$SCRATCH/out"

echo "# the controller stopped"
check "devcluster ctld-stop" "$DEVCLUSTER" ctld-stop --state "$STATE"
run_check "$STATE/etc/plugstack.conf"
check "jobmon check exits 1" test "$rc" -eq 1
check "squeue's failure is named" grep -q '^jobmon check: Slurm: squeue ' "$SCRATCH/out"
finish
