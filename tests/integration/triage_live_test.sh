#!/usr/bin/env bash
# `jobmon triage` against real jobs on the dev cluster: Slurm's job state
# (scontrol) decides hanging vs unknown-death for a live job, a hang that is
# later cancelled keeps `hang` as its root cause, a completed job is clean,
# and a job id resolves under --outputs. Needs root; tears the cluster down
# even on failure. Prints one line per check and "N passed, N failed".
set -uo pipefail

DEVCLUSTER="" JOBMON="" FAKE_TRAINER=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --jobmon PATH --fake-trainer PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -x "$JOBMON" && -x "$FAKE_TRAINER" ]] || { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") JOBMON=$(realpath "$JOBMON") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-triage-it-XXXXXX)
trap 'teardown_cluster jobmon-triage-it' EXIT

# field FILE PATH...: values from a triage JSON report.
field() { checks field "$@"; }

echo "# devcluster up"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "10.205.$((RANDOM % 200 + 20))" --no-plugin --timeout 90; then
  echo "FAIL - devcluster up"; echo "0 passed, 1 failed"; exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
OUT=$DEVCLUSTER_JOBS/outputs
mkdir -p "$OUT"

echo "# a 2-node job that hangs at step 20"
hang_job=$(cd "$DEVCLUSTER_JOBS" && sbatch --parsable -N2 -o "$OUT/%j-hang.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 200 --step-seconds 0.1 --hang-at 20")
hang_log="$OUT/$hang_job-hang.log"
check "the job reaches step 19 on both tasks" wait_for 60 \
  bash -c "grep -q '^0: completed step: 19,' '$hang_log' 2>/dev/null && grep -q '^1: completed step: 19,' '$hang_log'"
# The stall's length is the scenario (nothing to wait for: the trainer
# keeps writing non-step lines): no step for 5 s, well past the 2 s
# stall threshold used below.
sleep 5
"$JOBMON" triage "$hang_log" --json --stall-min-seconds 2 >"$STATE/live.json"
live_rc=$?
check "live triage: exit code 4 (hanging)" test "$live_rc" -eq 4
check "live triage: Slurm state RUNNING from scontrol" test "$(field "$STATE/live.json" slurm_state)" = RUNNING
check "live triage: status hanging" test "$(field "$STATE/live.json" status)" = hanging
check "live triage: primary failure hang at step 19" \
  test "$(field "$STATE/live.json" primary_failure progress.last_step)" = "hang 19"
check "live triage: both ranks stopped at the same step" \
  grep -q "All 2 ranks stopped at the same step 19" <<<"$(checks lines "$STATE/live.json" findings)"
"$JOBMON" triage "$hang_log" --json --no-slurm --stall-min-seconds 2 >"$STATE/noslurm.json"
# Without Slurm the steps' silence decides: the log is still written, so
# the process lives and makes no progress (unknown-death only on
# positive evidence of an abrupt end).
check "without Slurm the same log is hanging (steps stopped, log still written)" \
  test "$(field "$STATE/noslurm.json" status)" = hanging

echo "# scancel it"
scancel "$hang_job"
check "the cancelled job leaves the queue" wait_for 60 job_done "$hang_job"
check "the job wrote its JOB SUMMARY" wait_for 10 grep -q 'Status: FAILED (exit 143)' "$hang_log"
"$JOBMON" triage "$hang_job" --outputs "$OUT" --json --stall-min-seconds 2 >"$STATE/cancelled.json"
cancelled_rc=$?
check "by job id under --outputs: exit code 6 (cancelled)" test "$cancelled_rc" -eq 6
check "cancelled after a hang: status cancelled, primary hang" \
  test "$(field "$STATE/cancelled.json" status primary_failure)" = "cancelled hang"

echo "# a job that completes"
ok_job=$(cd "$DEVCLUSTER_JOBS" && sbatch --parsable --wait -N2 -o "$OUT/%j-ok.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 30 --step-seconds 0.05 --checkpoint-every 10")
"$JOBMON" triage "$OUT/$ok_job-ok.log" --json >"$STATE/ok.json"
ok_rc=$?
check "completed job: exit code 0" test "$ok_rc" -eq 0
check "completed job: completed, no failure, 30/30 steps, last periodic checkpoint 20" \
  test "$(field "$STATE/ok.json" status primary_failure progress.last_step progress.last_periodic_checkpoint)" = "completed none 29 20"

echo "# triage --all over the outputs dir"
for job in "$hang_job-hang" "$ok_job-ok"; do
  mkdir -p "$OUT/$job" && ln -sfn "../$job.log" "$OUT/$job/log"
done
mkdir -p "$OUT/shared-checkpoints"
"$JOBMON" triage --all "$OUT" >"$STATE/all.txt"
all_rc=$?
check "--all: one line per job plus the header, shared dir skipped" test "$(wc -l <"$STATE/all.txt")" -eq 3
check "--all: worst first (the cancelled job before the completed one)" \
  bash -c "sed -n 2p '$STATE/all.txt' | grep -q '^cancelled' && sed -n 3p '$STATE/all.txt' | grep -q '^completed'"
check "--all: exit code of the worst job" test "$all_rc" -eq 6

"$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1
finish
