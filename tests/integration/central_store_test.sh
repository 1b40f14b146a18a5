#!/usr/bin/env bash
# slurm_job_monitor in store mode ([monitor] evidence = "store") on the real
# dev cluster: Debian's victoria-metrics, started by this script on the dev
# cluster's bridge address (an address of a bridge this test created, never
# 0.0.0.0), fed by every --diag job's Prometheus through the plugin's
# remote_write. The monitor gets no route to the exporters (cluster_cidrs
# excludes them) and scrapes nothing (jobmon_monitor_scrapes_total stays 0):
# the busy-wait scenario of monitor_test.sh (fake trainer: GPU util 100% at
# idle power, steps stalled) must be classified hang/busy-wait from the
# store's evidence alone; then the monitor is stopped once a second job
# has stalled (its last step read, the stall bound not reached) and started
# again: its classification right after the restart rests on the training
# baseline back-filled from the store when it stalls (a job's evidence is
# read only while a verdict needs it; a training job's is not). Last, the store stopped: a warning,
# no incident from a stale window. Needs root. One line per check, then "N passed, N failed";
# everything it started is stopped by pid on every path.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" MONITOR="" VM=/usr/bin/victoria-metrics VMAUTH=/usr/bin/vmauth
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --victoria-metrics) VM=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --monitor PATH [--victoria-metrics PATH]" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$MONITOR" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ -x "$VM" && -x "$VMAUTH" ]] || { echo "no $VM or $VMAUTH (apt-get install victoria-metrics; scripts/install-deps.sh)" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
MONITOR=$(realpath "$MONITOR")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-store-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-store-scratch-XXXXXX)
SUBNET=10.208.$((RANDOM % 200 + 20))
MONITOR_PID="" VM_PID="" AUTH_PID="" FORGER_PID=""

teardown() {
  stop_pid "$FORGER_PID"
  stop_pid "$MONITOR_PID"
  stop_pid "$AUTH_PID"
  stop_pid "$VM_PID"
  teardown_cluster jobmon-store
}
trap teardown EXIT

# The store listens on the bridge's address: the jobs' Prometheus (in the
# head node's namespace) reach it there, and so does the monitor.
VM_PORT=$(free_loopback_port)
STORE=http://$SUBNET.1:$VM_PORT
# Writes go through vmauth (README "Central store", the configuration
# tested here): one credential per user (the plugin's %u), each mapped to
# the store with extra_label=user=<that user>, so no user can write series
# under another user's `user` label. The jobs here are root's; mallory
# stands for any other user of the cluster.
AUTH_PORT=$(free_loopback_port)
WRITE=http://$SUBNET.1:$AUTH_PORT
mkdir -p "$SCRATCH/remote-write"
for user in root mallory; do
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$SCRATCH/remote-write/$user"
  chmod 0640 "$SCRATCH/remote-write/$user"
done
{
  echo "users:"
  for user in root mallory; do
    printf -- '- username: "%s"\n  password: "%s"\n  url_prefix: "%s/?extra_label=user=%s"\n' \
      "$user" "$(cat "$SCRATCH/remote-write/$user")" "$STORE" "$user"
  done
} >"$SCRATCH/vmauth.yml"
chmod 0600 "$SCRATCH/vmauth.yml"
echo "# devcluster up: 2 nodes on $SUBNET.0/24, remote_write to $WRITE (vmauth) -> $STORE"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%j-%n remote_write=$WRITE/api/v1/write remote_write_user=%u remote_write_password_file=$SCRATCH/remote-write/%u"; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
"$VM" -httpListenAddr "$SUBNET.1:$VM_PORT" -storageDataPath "$SCRATCH/vm" -retentionPeriod 1d \
  >"$SCRATCH/vm.log" 2>&1 &
VM_PID=$!
check "victoria-metrics answers on the bridge address" wait_for 20 checks http-get "$STORE/health"
"$VMAUTH" -httpListenAddr "$SUBNET.1:$AUTH_PORT" -auth.config "$SCRATCH/vmauth.yml" \
  >"$SCRATCH/vmauth.log" 2>&1 &
AUTH_PID=$!
check "vmauth answers on the bridge address" wait_for 20 checks http-get "$WRITE/health"
check "vmauth: a write without credentials is refused" bash -c \
  "$(declare -f checks); ! checks push-text '$WRITE/api/v1/import/prometheus' nobody /dev/null 'x 1'"
check "and listens there only" bash -c \
  "ss -ltnpH | grep 'pid=$VM_PID,' | awk '{print \$4}' | grep -qvx '$SUBNET.1:$VM_PORT' && exit 1; ss -ltnpH | grep -q 'pid=$VM_PID,'"

DB=$SCRATCH/monitor.db
MLOG=$SCRATCH/monitor.log
MPORT=$(free_loopback_port)
# Samples reach the store a few seconds late (remote_write batches up to 5 s):
# stale_after allows for it; the stall bound is above the restart's gap.
MIN_STALL=15
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
cluster = "devcluster"
state_db = "$DB"
poll_interval = "1s"
slurm_poll_interval = "2s"
slurm_timeout = "3s"
stale_after = "12s"
window = "10m"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$SCRATCH/alerts.jsonl"
api_socket = ""
diagnose_at_end = false
# No exporter is in here: the monitor has no route to the nodes' exporters.
cluster_cidrs = ["192.0.2.0/24"]
evidence = "store"
store_url = "$STORE"
# The plugin labels series with Slurm's ClusterName.
store_cluster = "jobmondev"
store_timeout = "3s"
[stall]
k = 5
min_stall = "${MIN_STALL}s"
startup_grace = "60s"
EOF
start_monitor() {
  "$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
  MONITOR_PID=$!
}
start_monitor
sql() { checks sql "$DB" "$1"; }
has_incident() { [[ -n "$(sql "SELECT id FROM incidents WHERE job_id=$1 AND class='$2'")" ]]; }
evidence_of() { sql "SELECT summary, evidence_json FROM incidents WHERE job_id=$1 AND class='$2'"; }
metric() { checks metric-value "http://127.0.0.1:$MPORT/metrics" "$1"; }
submit() {  # submit NAME TRAINER-ARGS...: a 2-node --diag=on job; prints its id
  local name=$1
  shift
  (cd "$JOBS" && sbatch --parsable -N2 --diag=on -J "$name" -o "$JOBS/%j-$name.log" \
    --wrap "srun -K0 -l $FAKE_TRAINER --gpu-sysfs $JOBS/gpu-%j-%n --gpu-interval 0.5 --seed 11 $*") |
    tr -cd 0-9
}
last_step() { sql "SELECT last_step FROM progress WHERE job_id=$1"; }
export DB CHECKS  # for the helpers run under bash -c

# 18 s of training: the job's Prometheus starts seconds after the first
# step, and a baseline needs 5 of its scrapes before the last one.
hang=$(submit hang --steps 400 --step-seconds 0.3 --hang-at 60)
echo "# job hang=$hang"
# Another user writes an advancing tb_step labelled as the job's (its id,
# its user, its node) through the store's proxy, once a second until the
# verdict (bounded): the proxy relabels it as mallory's, and the monitor
# counts only series with Slurm's user for the job, so the hang still shows.
(for i in $(seq 1 150); do
  checks push-text "$WRITE/api/v1/import/prometheus" mallory "$SCRATCH/remote-write/mallory" \
    "tb_step{slurm_job_id=\"$hang\",user=\"root\",host=\"node1\",cluster=\"jobmondev\"} $((1000 + i))" \
    >/dev/null 2>&1
  sleep 1
done) &
FORGER_PID=$!
check "busy-wait from the store: hang/busy-wait raised" wait_for 120 has_incident "$hang" hang/busy-wait
check "the forged tb_step reached the store, relabelled as mallory's" bash -c \
  "$(declare -f checks); checks http-get '$STORE/api/v1/series?match[]=tb_step%7Bslurm_job_id=%22$hang%22,user=%22mallory%22%7D' | grep -q mallory"
check "and no series of the job's carries user root with a forged step" bash -c \
  "$(declare -f checks); ! checks http-get '$STORE/api/v1/query?query=max(tb_step%7Bslurm_job_id=%22$hang%22,user=%22root%22%7D)%3E=1000' | grep -q '\"value\"'"
stop_pid "$FORGER_PID"
FORGER_PID=""
ev=$(evidence_of "$hang" hang/busy-wait)
for node in node1 node2; do
  check "busy-wait: $node's GPU util and power against its training baseline, from the store" \
    grep -qE "$node: GPU util 100%, power [0-9]+ W \([0-9]+% of its training baseline [0-9]+ W\)" <<<"$ev"
done
check "the store was queried" checks compare "$(metric jobmon_monitor_store_queries_total)" '>' 0
check "no exporter was scraped (jobmon_monitor_scrapes_total 0)" \
  checks compare "$(metric jobmon_monitor_scrapes_total)" == 0
check "the store's series carry the job's labels (user root, through vmauth)" bash -c \
  "$(declare -f checks); checks http-get '$STORE/api/v1/series?match[]=up%7Bslurm_job_id=%22$hang%22,cluster=%22jobmondev%22,user=%22root%22%7D' | grep -q '\"host\":\"node2\"'"

echo "# restart: the monitor stops once job 'again' has stalled, before it judges it"
again=$(submit again --steps 400 --step-seconds 0.3 --hang-at 60)
echo "# job again=$again"
# The last step (59) read and stored; the stall bound (${MIN_STALL}s) not reached.
check "the monitor reads 'again' up to its last step, 59" wait_for 90 bash -c \
  "$(declare -f sql last_step checks); [[ \$(last_step $again) == 59 ]]"
stop_pid "$MONITOR_PID"
MONITOR_PID=""
check "the monitor stopped (by pid) before judging the stall" \
  test -z "$(sql "SELECT id FROM incidents WHERE job_id=$again")"
restart_at=$(date +%s.%N)
start_monitor
check "after the restart, once 'again' stalls, its window is back-filled from the store" \
  wait_for $((MIN_STALL + 30)) grep -qE "store_backfill job=$again hosts=2 scrapes=[1-9][0-9]+" "$MLOG"
check "restart: 'again' classified hang/busy-wait" wait_for 60 has_incident "$again" hang/busy-wait
opened=$(sql "SELECT opened_at FROM incidents WHERE job_id=$again AND class='hang/busy-wait'")
check "restart: the incident opened after the restart" checks compare "${opened:-0}" '>' "$restart_at"
ev=$(evidence_of "$again" hang/busy-wait)
for node in node1 node2; do
  check "restart: $node judged against its training baseline (back-filled)" \
    grep -qE "$node: GPU util 100%, power [0-9]+ W \([0-9]+% of its training baseline" <<<"$ev"
done
check "restart: the first job's incident restored, not raised again" test \
  "$(sql "SELECT count(*) FROM incidents WHERE job_id=$hang")" = 1
check "restart: still no scrape" checks compare "$(metric jobmon_monitor_scrapes_total)" == 0

echo "# the store stopped: a warning, no incident judged from a stale window"
third=$(submit third --steps 400 --step-seconds 0.3 --hang-at 30)
echo "# job third=$third"
check "the monitor follows 'third' to step 10" wait_for 90 bash -c \
  "$(declare -f sql last_step checks); s=\$(last_step $third); [[ -n \$s && \$s -ge 10 ]]"
# Evidence is asked for only while a verdict needs it: not for a job in training.
check "a training job's evidence is not read from the store" \
  bash -c "! grep -q 'store_backfill job=$third ' '$MLOG'"
stop_pid "$VM_PID"
VM_PID=""
check "store unreachable: warned" wait_for 15 grep -q 'store_unreachable' "$MLOG"
check "store unreachable: the stall is raised as 'hang' without evidence" wait_for 60 has_incident "$third" hang
check "store unreachable: its summary says why" bash -c \
  "$(declare -f sql evidence_of checks); evidence_of $third hang | grep -q 'central store has not answered'"
check "store unreachable: no node-death from the silent store" test \
  -z "$(sql "SELECT id FROM incidents WHERE class='hang/node-death'")"
scancel "$hang" "$again" "$third" 2>/dev/null

echo "# incidents: job|class|opened after the last step read (s)|summary"
sql "SELECT i.job_id, i.class, round(i.opened_at - p.last_step_time, 1), i.summary
     FROM incidents i LEFT JOIN progress p USING (job_id) ORDER BY i.id" | sed 's/^/#   /'
finish
