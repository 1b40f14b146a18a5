#!/usr/bin/env bash
# From alert to recovery on the real dev cluster (docs/recovery.md): real
# PyTorch DDP jobs (Debian's python3-torch, gloo, srun; 3 ranks on 3 of 4 nodes,
# tests/fixtures/real/pytorch/train_ddp.py with a checkpoint every 10 steps
# and --resume-latest), slurm_job_monitor with [recovery] allowing requeue.
# In each job rank 2 (the third node) stops at step 30 in its first run only (a
# requeued run has SLURM_RESTART_COUNT=1): spinning on the CPU (a busy-wait)
# in the first job, in uninterruptible sleep (state D) in the second, asleep
# in the other two; its peers wait in the all-reduce, where no
# signal handler runs, so no checkpoint comes and the job resumes from its
# last periodic one. Checks:
# - the job that chose --diag-on-hang=requeue: the hang alert, then the
#   checkpoint signal after the grace period; the daemon SIGKILLed and
#   restarted while the job should checkpoint neither signals again nor
#   skips the requeue; the job is requeued without that node, resumes from
#   its checkpoint on three others and completes; each step is a follow-up
#   alert; the time from the hang to training again, split into detection,
#   grace, checkpoint wait, requeue and restart;
# - its twin whose rank waits in state D: the same steps, the same outcome;
# - its twin with the default (notify): the alert, nothing done;
# - its twin that chose requeue but was held (`jobmon hold`): nothing done.
# Needs root. Everything it started is stopped even on failure.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" MONITOR="" JOBMON=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --monitor PATH --jobmon PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$MONITOR" && -x "$JOBMON" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN")
MONITOR=$(realpath "$MONITOR") JOBMON=$(realpath "$JOBMON")
TRAIN=$(realpath "$HERE/../fixtures/real/pytorch/train_ddp.py")
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "FAIL - $PY has torch with gloo (scripts/install-deps.sh installs python3-torch)"; echo "0 passed, 1 failed"; exit 1; }

STATE=$(mktemp -d /tmp/jobmon-rec-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-rec-scratch-XXXXXX)
SUBNET=10.214.$((RANDOM % 200 + 20))
MONITOR_PID=""
MIN_STALL=8 POLL=1 GRACE=3 CHECKPOINT_WAIT=10
MPORT=$(free_loopback_port)

teardown() {
  stop_pid "$MONITOR_PID"
  # The rank in state D waits for its child, which waits for a writer of the
  # FIFO: a writer that opens and closes it ends both waits (bounded).
  # shellcheck disable=SC2016 # expanded by the inner bash
  [[ -p "${JOBS:-/nonexistent}/dstate.fifo" ]] && timeout 2 bash -c 'exec 3>"$1"' _ "$JOBS/dstate.fifo" 2>/dev/null
  local id
  for id in ${requeue:-} ${dstate:-} ${notify:-} ${held:-}; do scancel "$id" 2>/dev/null; done
  [[ -n "${requeue:-}${dstate:-}${notify:-}${held:-}" ]] && wait_for 30 bash -c "! squeue -h 2>/dev/null | grep -q ."
  teardown_cluster jobmon-rec
}
trap teardown EXIT

echo "# devcluster up: 4 nodes on $SUBNET.0/24"
# cred_expire 15 s (Slurm's default 120): a requeued job may start again after it.
if ! "$DEVCLUSTER" up --nodes 4 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --cred-expire 15; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
DB=$SCRATCH/monitor.db ALERTS=$SCRATCH/alerts.jsonl MLOG=$SCRATCH/monitor.log
export DB ALERTS CHECKS  # for the helpers run under bash -c
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
jobmon_binary = "$JOBMON"
cluster = "devcluster"
state_db = "$DB"
api_socket = "$SCRATCH/monitor.sock"  # not /run/jobmon: clusters run side by side
poll_interval = "${POLL}s"
slurm_poll_interval = "2s"
slurm_timeout = "5s"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$ALERTS"
diagnose_at_end = false
[stall]
k = 5
min_stall = "${MIN_STALL}s"
startup_grace = "120s"
[recovery]
allowed = ["requeue"]
classes = ["hang"]
grace = "${GRACE}s"
checkpoint_wait = "${CHECKPOINT_WAIT}s"
EOF
start_monitor() {
  "$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
  MONITOR_PID=$!
}
start_monitor

# submit NAME PORT ON_HANG [TRAIN_ARG...]: a 3-node --diag job of 3 ranks,
# the batch script a user would write; its output appended across requeues.
submit() {
  local name=$1 port=$2 on_hang=$3
  shift 3
  mkdir -p "$JOBS/ckpt-$name"
  cat >"$JOBS/$name.sbatch" <<EOS
#!/bin/bash
first=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR=\$(scontrol show node "\$first" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
export MASTER_PORT=$port GLOO_SOCKET_IFNAME=eth0
echo "run \${SLURM_RESTART_COUNT:-0} on \$SLURM_JOB_NODELIST"
srun --kill-on-bad-exit=1 -l $PY $TRAIN --steps 60 --step-sleep 0.3 --print-rank all \\
  --hang-at 30 --hang-rank 2 --hang-after-reduce --fault-attempts 1 --checkpoint-on-signal \\
  --pg-timeout 900 \\
  --ckpt-dir $JOBS/ckpt-$name --ckpt-every 10 --ckpt-pause 0.01 --resume-latest $*
EOS
  sbatch --parsable --requeue --open-mode=append -N 3 --ntasks-per-node=1 -t 10 \
    --diag=on --diag-on-hang="$on_hang" -J "rec-$name" -o "$JOBS/$name.log" -D "$JOBS" \
    "$JOBS/$name.sbatch" | tr -cd 0-9
}
sql() { sqlite_rows "$DB" "$1"; }
steps_of() { sql "SELECT r.step FROM recovery_steps r WHERE r.job_id=$1 ORDER BY r.id" | tr '\n' ' '; }
step_at() { sql "SELECT r.at FROM recovery_steps r WHERE r.job_id=$1 AND r.step='$2' ORDER BY r.id LIMIT 1"; }
has_step() { [[ " $(steps_of "$1")" == *" $2 "* ]]; }
export -f sql sqlite_rows checks steps_of has_step

mkfifo "$JOBS/dstate.fifo"
requeue=$(submit requeue 29711 requeue --hang-kind busy)
dstate=$(submit dstate 29714 requeue --hang-kind d-state --hang-fifo "$JOBS/dstate.fifo")
notify=$(submit notify 29712 notify)
held=$(submit held 29713 requeue)
echo "# jobs: requeue=$requeue dstate=$dstate notify=$notify held=$held"
tracked() { [[ -n "$(sql "SELECT job_id FROM jobs WHERE job_id=$1")" ]]; }
check "the monitor follows the four --diag jobs" wait_for 60 bash -c \
  "$(declare -f tracked); tracked $requeue && tracked $dstate && tracked $notify && tracked $held"
check "jobmon hold: the owner holds the fourth job's recovery" "$JOBMON" hold "$held" --config "$SCRATCH/jobmon.toml"
check "the four jobs run on 3 nodes" wait_for 60 bash -c \
  "[[ \$(squeue -h -t R -j $requeue,$dstate,$notify,$held -o %D | grep -c '^3\$') -eq 4 ]]"

third_of() { scontrol show hostnames "$(squeue -h -j "$1" -o %N)" | sed -n 3p; }
third=$(third_of "$requeue") dstate_third=$(third_of "$dstate")

check "requeue job: a hang incident opens" wait_for 120 bash -c \
  "[[ -n \"\$(sql \"SELECT id FROM incidents WHERE job_id=$requeue AND class LIKE 'hang%'\")\" ]]"
IFS='|' read -r opened class hosts_json last_step_time <<<"$(sql "SELECT i.opened_at, i.class, i.evidence_json, p.last_step_time FROM incidents i JOIN progress p USING (job_id) WHERE i.job_id=$requeue ORDER BY i.id LIMIT 1")"
echo "# requeue job: $class opened at $opened"
check "D-state job: a hang incident opens" wait_for 60 bash -c \
  "[[ -n \"\$(sql \"SELECT id FROM incidents WHERE job_id=$dstate AND class LIKE 'hang%'\")\" ]]"
# Its last step before the hang, read while it hangs (a resumed run moves it).
ds_last_step_time=$(sql "SELECT last_step_time FROM progress WHERE job_id=$dstate")
culprit=$(grep -o '"hosts":\["node[0-9]*"\]' <<<"$hosts_json" | grep -o 'node[0-9]*')
check "the incident names the node where rank 2 stopped first (the job's third, $third)" \
  test -n "$culprit" -a "$culprit" == "$third"
check "the checkpoint signal goes after the grace period" wait_for 30 has_step "$requeue" signal
echo "# SIGKILL to the daemon while the job should checkpoint; restarted"
kill -KILL "$MONITOR_PID"
wait "$MONITOR_PID" 2>/dev/null
start_monitor
check "the job is requeued without $culprit" wait_for 60 has_step "$requeue" requeue
# requeued_and_resumed WHO JOB NAME CULPRIT: the recovery steps of a job whose
# rank stopped on CULPRIT, then its second run without that node, resumed from
# its last checkpoint, to the end. Slurm may start a requeued run only after
# cred_expire and its next scheduling pass (once over 100 s here).
requeued_and_resumed() {
  local who=$1 job=$2 name=$3 culprit=$4 second
  check "$who: signal once, the checkpoint wait ran out, requeue, done" wait_for 60 bash -c \
    "[[ \"\$(steps_of $job)\" == 'signal checkpoint-timeout requeue done ' ]]"
  check "$who: Slurm requeued it once, $culprit excluded" bash -c \
    "scontrol -o show job $job | grep -q 'Restarts=1' && scontrol -o show job $job | grep -q 'ExcNodeList=$culprit '"
  check "$who: its second run starts" wait_for 180 grep -q '^run 1 on ' "$JOBS/$name.log"
  second=$(sed -n 's/^run 1 on //p' "$JOBS/$name.log" | head -1)
  echo "# $who: second run on $second"
  check "$who: on three nodes, $culprit not among them" bash -c \
    "[[ \$(scontrol show hostnames '$second' | wc -l) -eq 3 ]] && ! scontrol show hostnames '$second' | grep -qx '$culprit'"
  check "$who: it resumes from its last checkpoint" wait_for 60 \
    grep -qE 'resumed from .*ckpt_0000[23]0.pt at step [23]0' "$JOBS/$name.log"
  check "$who: completes, COMPLETED 0:0" wait_for 120 bash -c \
    "scontrol -o show job $job | grep -q 'JobState=COMPLETED .*ExitCode=0:0'"
}
requeued_and_resumed "requeue job" "$requeue" requeue "$culprit"
check "the log's last step is 60" grep -q 'rank 0 step 60 loss' "$JOBS/requeue.log"
check "both runs' TSDB archives are kept (the first as tsdb.run0.tar.zst)" wait_for 60 bash -c \
  "[[ -s $JOBS/jobmon-diag-$requeue/tsdb.run0.tar.zst && -s $JOBS/jobmon-diag-$requeue/tsdb.tar.zst ]]"
check "each step went out as a follow-up of the incident" bash -c \
  "[[ \"\$(checks select '$ALERTS' recovery_step 'job_id == $requeue' 'recovery != ' | tr '\n' ' ')\" == 'signal checkpoint-timeout requeue done ' ]]"

# times JOB LAST_STEP_TIME: the time from its hang to training again, split;
# its first hang incident's closing time (empty while open).
times() {
  local last_step=$2 opened signal_at requeue_at started closed
  IFS='|' read -r opened closed <<<"$(sql "SELECT opened_at, closed_at FROM incidents WHERE job_id=$1 AND class LIKE 'hang%' ORDER BY id LIMIT 1")"
  signal_at=$(step_at "$1" signal) requeue_at=$(step_at "$1" requeue)
  # The second run's start, as Slurm has it (whole seconds, local time).
  started=$(date -d "$(scontrol -o show job "$1" | sed -n 's/.* StartTime=\([^ ]*\).*/\1/p')" +%s)
  echo "# job $1, from the hang to training again (s): detection $(awk "BEGIN{print $opened - $last_step}")," \
    "grace $(awk "BEGIN{print $signal_at - $opened}"), checkpoint wait $(awk "BEGIN{print $requeue_at - $signal_at}")," \
    "requeue (to the second run's start) $(awk "BEGIN{print $started - $requeue_at}")," \
    "restart (to the first step: the incident resumed) $(awk "BEGIN{print ${closed:-0} - $started}")," \
    "total $(awk "BEGIN{print ${closed:-0} - $last_step}")" >&2
  echo "$closed"
}
check "the incident closed when training resumed" test -n "$(times "$requeue" "$last_step_time")"

# The twin whose rank 2 waits in state D.
IFS='|' read -r ds_class ds_evidence <<<"$(sql "SELECT class, evidence_json FROM incidents WHERE job_id=$dstate AND class LIKE 'hang%' ORDER BY id LIMIT 1")"
check "D-state job: classed hang/io-wait (the exporters see the rank in state D)" test "$ds_class" == hang/io-wait
ds_culprit=$(grep -o '"hosts":\["node[0-9]*"\]' <<<"$ds_evidence" | grep -o 'node[0-9]*')
check "D-state job: the incident names the node where rank 2 stopped ($dstate_third)" \
  test -n "$ds_culprit" -a "$ds_culprit" == "$dstate_third"
requeued_and_resumed "D-state job" "$dstate" dstate "$ds_culprit"
check "D-state job: the incident closed when training resumed" wait_for 30 bash -c \
  "$(declare -f times step_at); [[ -n \$(times $dstate $ds_last_step_time 2>/dev/null) ]]"
times "$dstate" "$ds_last_step_time" >/dev/null
check "the daemon counts the steps of both" bash -c \
  "checks http-get http://127.0.0.1:$MPORT/metrics | grep -q 'jobmon_monitor_recovery_steps_total{step=\"requeue\"} 2'"

check "notify twin: its hang alerted" bash -c \
  "[[ -n \"\$(sql \"SELECT id FROM incidents WHERE job_id=$notify AND class LIKE 'hang%'\")\" ]]"
check "notify twin: nothing done (no step recorded, still running, never requeued)" bash -c \
  "[[ -z \"\$(steps_of $notify)\" ]] && scontrol -o show job $notify | grep -q 'JobState=RUNNING.*Restarts=0'"
check "held twin: its hang alerted" bash -c \
  "[[ -n \"\$(sql \"SELECT id FROM incidents WHERE job_id=$held AND class LIKE 'hang%'\")\" ]]"
check "held twin: held, nothing done" bash -c \
  "[[ \"\$(steps_of $held)\" == 'held ' ]] && scontrol -o show job $held | grep -q 'JobState=RUNNING.*Restarts=0'"
"$JOBMON" status "$requeue" --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/status-requeue.json"
check "jobmon status: the owner's choice and each step taken" bash -c \
  "[[ \"\$(checks field '$SCRATCH/status-requeue.json' on_hang incidents.0.recovery.0.step incidents.0.recovery.2.step)\" == 'requeue signal requeue' ]]"
"$JOBMON" status "$held" --config "$SCRATCH/jobmon.toml" >"$SCRATCH/status-held.txt"
check "jobmon status: the held job says so" grep -q 'on a hang: requeue (the owner.s --diag-on-hang); held' "$SCRATCH/status-held.txt"
check "the daemon is still running" kill -0 "$MONITOR_PID"
echo "# recovery_live took ${SECONDS}s up to its teardown"
finish
