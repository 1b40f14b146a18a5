#!/usr/bin/env bash
# What production does to slurm_job_monitor, as faults on the real dev
# cluster (2 nodes, --diag=on jobs of the fake trainer with fake GPU sysfs
# trees), with the shipped Slurm settings (slurm_timeout 10 s, 3 retries):
#   1. the webhook receiver answers HTTP 500 at first: the hang's alert
#      arrives within the outbox's backoff after it recovers;
#   2. the daemon is SIGKILLed right after a job hung, before it could say
#      so: restarted, it classifies the hang as it would have
#      (hang/busy-wait: the training baseline is in the state database);
#      the receiver is down at that moment;
#   3. slurmctld is stopped for longer than slurm_timeout (22.05's squeue
#      then exits 0 with "errors" and no jobs) while a job hangs and another
#      trains to its end: no job is ended, no incident resolved, the outage
#      is noted in `jobmon status`, alerted once and resolved; after it, the
#      job that ended meanwhile has its real final state.
# Prints the figures (alert delays, outage length). Needs root. One line per
# check, then "N passed, N failed"; everything it started is stopped.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" MONITOR="" JOBMON="" RECEIVER=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    --receiver) RECEIVER=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --monitor PATH --jobmon PATH --receiver PY" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$MONITOR" && -x "$JOBMON" && -f "$RECEIVER" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
MONITOR=$(realpath "$MONITOR") JOBMON=$(realpath "$JOBMON") RECEIVER=$(realpath "$RECEIVER")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-out-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-out-scratch-XXXXXX)
SUBNET=10.214.$((RANDOM % 200 + 20))
MONITOR_PID="" HOOK_PID=""
teardown() {
  stop_pid "$MONITOR_PID"
  stop_pid "$HOOK_PID"
  teardown_cluster jobmon-out  # devcluster down stops slurmctld by its recorded pid, if it runs
}
trap teardown EXIT

echo "# devcluster up: 2 nodes on $SUBNET.0/24"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%j-%n"; then
  echo "FAIL - devcluster up"; echo "0 passed, 1 failed"; exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
DB=$SCRATCH/monitor.db MLOG=$SCRATCH/monitor.log HOOK_LOG=$SCRATCH/webhook.jsonl
MPORT=$(free_loopback_port) HOOK_PORT=$(free_loopback_port)
export DB CHECKS HOOK_LOG
sql() { checks sql "$DB" "$1"; }
incidents() { sql "SELECT class, state FROM incidents WHERE job_id=$1 ORDER BY id"; }
has_incident() { incidents "$1" | grep -q "^$2|"; }
submit() {  # submit NAME TRAINER-ARGS...: a 2-node --diag=on job; prints its id
  local name=$1
  shift
  (cd "$JOBS" && sbatch --parsable -N2 --diag=on -J "$name" -o "$JOBS/%j-$name.log" \
    --wrap "srun -K0 -l $FAKE_TRAINER --gpu-sysfs $JOBS/gpu-%j-%n --gpu-interval 0.5 --seed 11 $*") |
    tr -cd 0-9
}
hook_delivered() {  # hook_delivered JOB STATUS [CLASS]: deliveries the receiver acknowledged
  checks count "$HOOK_LOG" "status == 200" "body.job_id == $1" "body.status == $2" ${3:+"body.class == $3"}
}

# The shipped Slurm settings: slurm_timeout and slurm_retries are not set.
# Polled every 2 s (not 30 s) and the outage alerted after 20 s (not 300 s),
# so that the test takes minutes.
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
jobmon_binary = "$JOBMON"
cluster = "dev"
state_db = "$DB"
api_socket = ""
poll_interval = "1s"
stale_after = "4s"
metrics_listen = "127.0.0.1:$MPORT"
slurm_poll_interval = "2s"
slurm_outage_alert = "20s"
[stall]
k = 5
min_stall = "8s"
startup_grace = "90s"
[alerts]
max_backoff = "4s"
[[alerts.webhook]]
name = "hook"
url = "http://127.0.0.1:$HOOK_PORT/hook"
EOF
start_monitor() {
  "$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
  MONITOR_PID=$!
}
start_monitor
check "the daemon serves /metrics" wait_for 15 bash -c \
  "$(declare -f checks); checks http-get http://127.0.0.1:$MPORT/metrics | grep -q jobmon_monitor_slurm_reachable"

hang=$(submit hang --steps 600 --step-seconds 0.3 --hang-at 80)
echo "# jobs: hang=$hang"
check "the job is followed" wait_for 60 bash -c \
  "$(declare -f sql checks); [[ -n \"\$(sql 'SELECT job_id FROM jobs WHERE job_id=$hang')\" ]]"

# 2. SIGKILL as soon as the hung job's last step (79) is in its log, before
# the daemon could judge the stall; restarted 3 s later.
check "the hang job reaches its last step" wait_for 90 grep -q '^0: completed step: 79,' "$JOBS/$hang-hang.log"
# 1. The webhook receiver comes up now, answering HTTP 500 for 25 s.
FAIL_UNTIL=$(($(date +%s) + 25))
/usr/bin/python3 "$RECEIVER" --port "$HOOK_PORT" --log "$HOOK_LOG" --fail-until "$FAIL_UNTIL" &
HOOK_PID=$!
kill -KILL "$MONITOR_PID"
wait "$MONITOR_PID" 2>/dev/null
echo "# daemon SIGKILLed at the hang's start; restarting it in 3 s"
sleep 3
start_monitor
check "after the restart: hang/busy-wait, as without the restart" wait_for 60 has_incident "$hang" hang/busy-wait
check "no plain 'hang' instead" bash -c "! incidents $hang | grep -q '^hang|'"

# 1 (cont.): the receiver was down when the alert was first sent.
check "the receiver refused deliveries while down (HTTP 500)" wait_for 30 bash -c \
  "$(declare -f checks); [[ \$(checks count '$HOOK_LOG' 'status == 500') -ge 1 ]]"
check "the firing reaches the receiver once it is back" wait_for 40 bash -c \
  "$(declare -f hook_delivered checks); [[ \$(hook_delivered $hang firing hang/busy-wait) -ge 1 ]]"
first_ok=$(checks first-value "$HOOK_LOG" received_at "status == 200" "body.job_id == $hang")
echo "# figure: receiver back at $FAIL_UNTIL, the hang's firing delivered at ${first_ok:-never} (max_backoff 4 s)"
check "delivered within the backoff (max_backoff 4 s + a poll) of the receiver's recovery" \
  checks compare "${first_ok:-1e12}" '<=' "$((FAIL_UNTIL + 6))"

# 3. The controller stops while 'hang' hangs and 'steady' trains on to its
# end (30 s of steps): Slurm cannot say it ended until it answers again.
steady=$(submit steady --steps 100 --step-seconds 0.3)
echo "# jobs: steady=$steady"
check "steady is followed and trains" wait_for 60 bash -c \
  "$(declare -f sql checks); [[ -n \"\$(sql 'SELECT last_step FROM progress WHERE job_id=$steady AND last_step >= 5')\" ]]"
echo "# slurmctld stopped for 70 s (past slurm_timeout 10 s x 3 retries)"
OUT_AT=$(date +%s)
"$DEVCLUSTER" ctld-stop --state "$STATE"
check "the daemon says Slurm does not answer" wait_for 60 grep -q 'slurm_unreachable' "$MLOG"
check "/metrics: slurm_reachable 0" wait_for 40 bash -c \
  "$(declare -f checks); checks compare \"\$(checks metric-value http://127.0.0.1:$MPORT/metrics jobmon_monitor_slurm_reachable)\" == 0"
check "the outage is alerted once (monitor/slurm-unreachable)" wait_for 60 bash -c \
  "$(declare -f hook_delivered checks); [[ \$(hook_delivered 0 firing monitor/slurm-unreachable) -ge 1 ]]"
"$JOBMON" status "$hang" --config "$SCRATCH/jobmon.toml" >"$SCRATCH/status-outage.txt" 2>&1
check "jobmon status notes the outage" grep -q 'note: Slurm has not answered the monitor since' "$SCRATCH/status-outage.txt"
sleep $((OUT_AT + 70 - $(date +%s)))
check "during the outage: no job ended" test -z "$(sql "SELECT job_id FROM jobs WHERE ended_at IS NOT NULL AND job_id IN ($hang, $steady)")"
check "during the outage: the hang's incident is still open" test "$(incidents "$hang")" = "hang/busy-wait|open"
check "during the outage: nothing resolved for the hang" test "$(hook_delivered "$hang" resolved)" -eq 0
"$DEVCLUSTER" ctld-start --state "$STATE"
BACK_AT=$(date +%s)
echo "# figure: slurmctld down for $((BACK_AT - OUT_AT)) s"
check "the daemon sees Slurm again" wait_for 60 grep -q 'slurm_reachable_again' "$MLOG"
check "the outage alert is resolved" wait_for 30 bash -c \
  "$(declare -f hook_delivered checks); [[ \$(hook_delivered 0 resolved monitor/slurm-unreachable) -eq 1 ]]"
check "the outage was alerted exactly once" test "$(hook_delivered 0 firing monitor/slurm-unreachable)" -eq 1
check "steady ended meanwhile: its real final state (COMPLETED), not RUNNING?" wait_for 60 bash -c \
  "$(declare -f sql checks); [[ \"\$(sql 'SELECT slurm_state FROM jobs WHERE job_id=$steady AND ended_at IS NOT NULL')\" == COMPLETED ]]"
check "steady: no incident (its end during the outage was not taken for a node death)" \
  test -z "$(incidents "$steady")"
scancel "$hang"
check "the hang's incident closes only now, when it is cancelled (ended)" wait_for 60 bash -c \
  "$(declare -f sql checks); [[ \"\$(sql 'SELECT close_reason FROM incidents WHERE job_id=$hang')\" == ended ]]"
check "the state database is intact" test "$(sql 'PRAGMA integrity_check')" = ok
check "no duplicate delivery shown twice" checks sums-equal "$HOOK_LOG" headers.Idempotency-Key shown 1

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
