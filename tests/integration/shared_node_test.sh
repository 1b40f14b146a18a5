#!/usr/bin/env bash
# Two --diag=on jobs on one node of the dev cluster, 4 GPUs each of its 8
# (Slurm gres, devcluster --gpus 8), sharing one 8-GPU fake sysfs tree: one
# trains, one hangs in a busy-wait (100% util at idle-level power) while the
# other's GPUs stay at training power. Each exporter serves its job's 4 GPUs
# (hw_gpu_served, source "slurm"); slurm_job_monitor raises hang/busy-wait
# for the stuck job and nothing for the other. Needs root. One line per
# check, then "N passed, N failed"; everything it started is stopped by pid.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" MONITOR=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --monitor PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$MONITOR" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
MONITOR=$(realpath "$MONITOR")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-shared-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-shared-scratch-XXXXXX)
SUBNET=10.214.$((RANDOM % 200 + 20))
MONITOR_PID=""

teardown() {
  stop_pid "$MONITOR_PID"
  if [[ $failed -gt 0 ]]; then  # the controller's and nodes' logs too, kept by teardown_cluster
    mkdir -p "$SCRATCH/slurm-logs" && cp -a "$STATE"/log/. "$SCRATCH/slurm-logs"/ 2>/dev/null
  fi
  teardown_cluster jobmon-shared
}
trap teardown EXIT

echo "# devcluster up: 1 node with 8 GPUs (gres) on $SUBNET.0/24"
if ! "$DEVCLUSTER" up --nodes 1 --gpus 8 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" \
  --timeout 90 --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%n"; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
DB=$SCRATCH/monitor.db
MLOG=$SCRATCH/monitor.log
MPORT=$(free_loopback_port)
# Above the step-output gaps a loaded 2-core test machine shows (14 s seen).
MIN_STALL=15
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
cluster = "devcluster"
state_db = "$DB"
api_socket = "$SCRATCH/monitor.sock"  # not /run/jobmon: clusters run side by side
poll_interval = "1s"
slurm_poll_interval = "2s"
slurm_timeout = "3s"
slurm_retries = 2
scrape_timeout = "1s"
stale_after = "4s"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$SCRATCH/alerts.jsonl"
[stall]
k = 5
min_stall = "${MIN_STALL}s"
startup_grace = "60s"
first_checkpoint_grace = "20s"
EOF
"$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
MONITOR_PID=$!

sql() { sqlite_rows "$DB" "$1"; }
incidents() { sql "SELECT class, state FROM incidents WHERE job_id=$1 ORDER BY id"; }
has_incident() { incidents "$1" | grep -q "^$2|"; }
# submit NAME TRAINER-ARGS...: a 1-node --diag=on job with 4 of node1's GPUs;
# its trainer drives the GPUs Slurm gave it in the node's shared tree.
submit() {
  local name=$1
  shift
  (cd "$JOBS" && sbatch --parsable -N1 -w node1 --gres=gpu:4 --diag=on -J "$name" \
    -o "$JOBS/%j-$name.log" --wrap "echo gpus=\$SLURM_JOB_GPUS; srun -K0 -l $FAKE_TRAINER \
    --gpu-sysfs $JOBS/gpu-%n --gpus 8 --gpu-ids \${SLURM_STEP_GPUS:-\$SLURM_JOB_GPUS} \
    --gpu-interval 0.5 --seed 11 $*") | tr -cd 0-9
}
# served JOB: "gpu source" lines of the job's exporter's hw_gpu_served.
served() {
  local target=$JOBS/jobmon-diag-$1/targets/node1.json
  [[ -s "$target" ]] || return 1
  checks served-gpus "$target"
}
four_served() { [[ "$(served "$1" | grep -c ' slurm$')" -eq 4 ]]; }

train=$(submit train --steps 260 --step-seconds 0.3)
hang=$(submit hang --steps 400 --step-seconds 0.3 --hang-at 30)
echo "# jobs: train=$train hang=$hang"
check "both jobs run on node1 at once" wait_for 30 bash -c \
  "[[ \$(squeue -h -t R -w node1 -j $train,$hang | wc -l) -eq 2 ]]"
check "train's exporter serves 4 GPUs (source slurm)" wait_for 30 four_served "$train"
check "hang's exporter serves 4 GPUs (source slurm)" wait_for 30 four_served "$hang"
gpus_train=$(served "$train" | awk '$2 == "slurm" {print $1}' | sort -n | tr '\n' ' ')
gpus_hang=$(served "$hang" | awk '$2 == "slurm" {print $1}' | sort -n | tr '\n' ' ')
echo "# served: train={ $gpus_train} hang={ $gpus_hang}"
check "their GPUs are disjoint and cover the node's 8" test \
  "$(echo "$gpus_train$gpus_hang" | tr ' ' '\n' | grep . | sort -un | wc -l)" -eq 8
both_shared() { served "$train" | grep -qx 'shared 1' && served "$hang" | grep -qx 'shared 1'; }
check "each exporter says the node is shared" wait_for 30 both_shared
check "the trainers were given the same GPUs as the exporters" bash -c \
  "grep -q \"gpus=$(tr ' ' ',' <<<"${gpus_hang% }")\$\" $JOBS/$hang-hang.log"

# A job without --gres on the same node: no allocation, so its exporter
# serves every GPU and says so (source "all"), and the prolog logs why.
nogres=$(cd "$JOBS" && sbatch --parsable -N1 -w node1 --diag=on -J nogres -o "$JOBS/%j-nogres.log" \
  --wrap "sleep 15" | tr -cd 0-9)
all_served() { [[ "$(served "$nogres" | grep -c ' all$')" -eq 8 ]]; }
check "a job without --gres: its exporter serves all 8 GPUs (source all)" wait_for 30 all_served
check "and the prolog said why in slurmd's log" \
  grep -q "job $nogres node node1: GPUs: no GPU allocation" "$STATE/log/slurmd-node1.log"

check "hang: hang/busy-wait raised (judged by its own 4 GPUs)" wait_for 90 has_incident "$hang" hang/busy-wait
ev=$(sql "SELECT summary, evidence_json FROM incidents WHERE job_id=$hang AND class='hang/busy-wait'")
check "hang: evidence says the node is shared and host-level series are node-wide" \
  grep -q "node shared with other jobs: GPU figures are the job's 4 of the node's 8 GPUs" <<<"$ev"
check "train: the job completes" wait_for 90 job_done "$train"
# A step gap of the training job under machine load is judged slow-not-hung
# (its own GPUs at training power): that is the verdict "computing", not an
# incident of the other job's hang. Anything else fails.
# The rows are read first, so a failed read fails the check (it does not
# read as "no incident").
train_rows=$(incidents "$train") || train_rows="read failed"
hang_rows=$(incidents "$hang") || hang_rows="read failed"
only_class() { ! grep -v "^$1|" <<<"$2" | grep -q .; }  # only_class CLASS ROWS
check "train: no incident (none, or only slow-not-hung for a load gap)" \
  only_class slow-not-hung "$train_rows"
check "hang: no other class for the stuck job" only_class hang/busy-wait "$hang_rows"
scancel "$hang" 2>/dev/null
wait_for 30 job_done "$hang"
echo "# incidents: job|class|state|summary"
sql "SELECT job_id, class, state, summary FROM incidents ORDER BY id" | sed 's/^/#   /'
finish
