#!/usr/bin/env bash
# slurm_job_monitor following real PyTorch jobs (Debian's python3-torch,
# DDP over gloo, 2 nodes, launched with srun) on the dev cluster, with no
# jobmon-specific log format and no step configuration: the program prints
# `step N loss X` (tests/fixtures/real/pytorch/train_ddp.py). The monitor
# selects the jobs by name (no --diag, so no system metrics). Checks:
# - one rank stops taking part in the collective (sleeps at step 30): a hang
#   incident opens within the stall bound after the last step, and its alert
#   carries the triage of the real log;
# - the healthy twin, COMPLETED with exit code 0, gets no firing alert.
# Needs root. Everything it started is stopped even on failure.
set -uo pipefail

DEVCLUSTER="" MONITOR="" JOBMON=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --monitor PATH --jobmon PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -x "$MONITOR" && -x "$JOBMON" ]] || { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
DEVCLUSTER=$(realpath "$DEVCLUSTER") MONITOR=$(realpath "$MONITOR") JOBMON=$(realpath "$JOBMON")
TRAIN=$(realpath "$HERE/../fixtures/real/pytorch/train_ddp.py")
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "FAIL - $PY has torch with gloo (scripts/install-deps.sh installs python3-torch)"; echo "0 passed, 1 failed"; exit 1; }

STATE=$(mktemp -d /tmp/jobmon-real-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-real-scratch-XXXXXX)
SUBNET=10.213.$((RANDOM % 200 + 20))
MONITOR_PID=""
MIN_STALL=8 POLL=1
MPORT=$(free_loopback_port)

teardown() {
  stop_pid "$MONITOR_PID"
  # Our jobs, by id, so no rank outlives the cluster.
  local id
  for id in ${hang:-} ${healthy:-}; do scancel "$id" 2>/dev/null; done
  [[ -n "${hang:-}${healthy:-}" ]] && wait_for 30 bash -c "! squeue -h 2>/dev/null | grep -q ."
  teardown_cluster jobmon-real
}
trap teardown EXIT

echo "# devcluster up: 2 nodes on $SUBNET.0/24, no plugin"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --no-plugin --timeout 90; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
DB=$SCRATCH/monitor.db ALERTS=$SCRATCH/alerts.jsonl MLOG=$SCRATCH/monitor.log
export DB ALERTS PY CHECKS  # for the helpers run under bash -c
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
jobmon_binary = "$JOBMON"
cluster = "devcluster"
state_db = "$DB"
api_socket = "$SCRATCH/monitor.sock"  # not /run/jobmon: clusters run side by side
poll_interval = "${POLL}s"
slurm_poll_interval = "2s"
slurm_timeout = "3s"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$ALERTS"
[monitor.select]
name_regex = "realjob-.*"
[monitor.stall]
k = 5
min_stall = "${MIN_STALL}s"
startup_grace = "120s"
EOF
"$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
MONITOR_PID=$!

# submit NAME PORT TRAIN-ARGS...: the batch script a user would write.
submit() {
  local name=$1 port=$2
  shift 2
  cat >"$JOBS/$name.sbatch" <<EOS
#!/bin/bash
first=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR=\$(scontrol show node "\$first" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
export MASTER_PORT=$port GLOO_SOCKET_IFNAME=eth0
srun --kill-on-bad-exit=1 $PY $TRAIN $*
EOS
  sbatch --parsable --no-requeue -N 2 --ntasks-per-node=1 -t 10 -J "realjob-$name" \
    -o "$JOBS/$name.log" -D "$JOBS" "$JOBS/$name.sbatch" | tr -cd 0-9
}
sql() { sqlite_rows "$DB" "$1"; }
has_incident() { [[ -n "$(sql "SELECT id FROM incidents WHERE job_id=$1 AND class LIKE '$2'")" ]]; }
# alerts JOB STATUS: the classes of that job's alerts with that status
alerts() { checks select "$ALERTS" class "job_id == $1" "status == $2"; }

# Rank 1 sleeps at step 30, outside the collective; rank 0 waits in the
# allreduce (the process group's timeout is far away).
hang=$(submit hang 29611 --steps 400 --step-sleep 0.3 --hang-at 30 --hang-rank 1 --pg-timeout 900)
healthy=$(submit healthy 29612 --steps 30 --step-sleep 0.2)
echo "# jobs: hang=$hang healthy=$healthy"

check "the selected jobs are tracked" wait_for 60 bash -c \
  "$(declare -f sql sqlite_rows checks); [[ -n \"\$(sql 'SELECT job_id FROM jobs WHERE job_id=$hang')\" && -n \"\$(sql 'SELECT job_id FROM jobs WHERE job_id=$healthy')\" ]]"
check "the real job's plain 'step N' lines are followed" wait_for 120 bash -c \
  "$(declare -f sql sqlite_rows checks); [[ \"\$(sql 'SELECT last_step FROM progress WHERE job_id=$hang')\" -ge 10 ]]"
check "a hang incident opens for the stuck rank" wait_for 120 has_incident "$hang" 'hang%'
row=$(sql "SELECT i.opened_at - p.last_step_time, p.last_step, i.class FROM incidents i JOIN progress p USING (job_id) WHERE i.job_id=$hang AND i.class LIKE 'hang%' ORDER BY i.id LIMIT 1")
IFS='|' read -r latency last_step class <<<"$row"
echo "# $class opened ${latency}s after the last step ($last_step) was read; bound max(k*p99, min_stall) + poll = $((MIN_STALL + POLL))s"
# The program counts from 1 (last line printed: "step 29"); jobmon counts
# steps from 0 in the monitor and triage alike (triage/step_filter), so 28.
check "the last step followed is the one before the stuck rank stopped" test "$last_step" = 28
check "the incident opens within the stall bound + poll interval (+2 s scheduling)" \
  checks between "$MIN_STALL" "$latency" $((MIN_STALL + POLL + 2))
check "its alert fires" wait_for 20 bash -c "$(declare -f alerts checks); alerts $hang firing | grep -q '^hang'"
report=$(checks first-value "$ALERTS" report "job_id == $hang" "class startswith hang")
check "the alert carries the triage of the real log (its last step)" grep -q 'step.*29\|29.*step' <<<"$report"
check "the triage quotes the real log's own lines" grep -q 'loss' <<<"$report"

check "jobmon status names the hang" bash -c \
  "'$JOBMON' status $hang --config '$SCRATCH/jobmon.toml' | grep -q 'hang'"

check "the healthy twin ends COMPLETED" wait_for 180 bash -c \
  "$(declare -f job_done); job_done $healthy"
check "Slurm says COMPLETED 0:0" bash -c \
  "scontrol -o show job $healthy | grep -q 'JobState=COMPLETED .*ExitCode=0:0'"
check "the daemon runs 5 cycles after the end" \
  counter_grows 30 "http://127.0.0.1:$MPORT/metrics" jobmon_monitor_polls_total 5
check "the healthy twin got no firing alert" test -z "$(alerts "$healthy" firing)"
check "the healthy twin got no incident" test -z "$(sql "SELECT class FROM incidents WHERE job_id=$healthy")"

scancel "$hang"
check "the hang job ends after scancel" wait_for 60 job_done "$hang"
check "the daemon is still running" kill -0 "$MONITOR_PID"
finish
