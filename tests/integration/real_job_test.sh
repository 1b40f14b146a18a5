#!/usr/bin/env bash
# slurm_job_monitor following real PyTorch jobs (Debian's python3-torch,
# DDP over gloo, 2 nodes, launched with srun) on the dev cluster, with no
# jobmon-specific log format and no step configuration: the program prints
# `step N loss X` (tests/fixtures/real/pytorch/train_ddp.py). The monitor
# selects the jobs by name. Checks:
# - a --diag job of 3 ranks on 2 nodes (srun -l, every rank printing its
#   steps; node1 holds tasks 0 and 1) where rank 2 (node2) sleeps after step
#   30's all-reduce, rank 1 then blocks opening a FIFO nobody writes (a read
#   of a hung filesystem) and rank 0 waits in the collective: a hang incident
#   opens within the stall bound after the last step, its alert carries the
#   triage of the real log, names rank 2 and its node, and says what each
#   rank waits on in the kernel, from the exporters' job_processes collector
#   (scontrol listpids: the dev cluster has no job cgroup);
# - the healthy twin (no --diag), COMPLETED with exit code 0, gets no
#   firing alert;
# - a --diag job that starts (the stand-in of) Ray (docs/ray.md): Ray's
#   nodes on both hosts (contrib/fake-ray/fake_ray_node.py, Ray 2.32's
#   gauges and discovery file, in a per-job temp dir named by the plugin's
#   ray_discovery=%j pattern), its driver printing the actors' steps as Ray
#   forwards them; the second actor stops: Ray's series are in the job's
#   Prometheus labelled with each node, the hang alert names that actor and
#   its host, and after scancel the archive holds Ray's series.
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
RAY_NODE=$(realpath "$HERE/../../contrib/fake-ray/fake_ray_node.py")
RAY_DRIVER=$(realpath "$HERE/../../contrib/fake-ray/fake_ray_driver.py")
PROMQ=$HERE/promq.py
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "FAIL - $PY has torch with gloo (scripts/install-deps.sh installs python3-torch)"; echo "0 passed, 1 failed"; exit 1; }

STATE=$(mktemp -d /tmp/jobmon-real-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-real-scratch-XXXXXX)
SUBNET=10.213.$((RANDOM % 200 + 20))
MONITOR_PID=""
MIN_STALL=8 POLL=1
MPORT=$(free_loopback_port)

FIFO=""

teardown() {
  stop_pid "$MONITOR_PID"
  # The rank blocked on the FIFO: a writer that opens and closes it lets
  # its open return (bounded: with no reader left the open would wait).
  # shellcheck disable=SC2016 # expanded by the inner bash
  [[ -n "$FIFO" && -p "$FIFO" ]] && timeout 2 bash -c 'exec 3>"$1"' _ "$FIFO" 2>/dev/null
  # Our jobs, by id, so no rank outlives the cluster.
  local id
  for id in ${hang:-} ${healthy:-} ${ray:-}; do scancel "$id" 2>/dev/null; done
  [[ -n "${hang:-}${healthy:-}${ray:-}" ]] && wait_for 30 bash -c "! squeue -h 2>/dev/null | grep -q ."
  [[ -n "${RPORT_PID:-}" ]] && stop_pid "$RPORT_PID"
  teardown_cluster jobmon-real
}
trap teardown EXIT

echo "# devcluster up: 2 nodes on $SUBNET.0/24, the plugin for the --diag jobs"
# Ray's temp dir per job, as a user on a shared node would start it
# (ray start --temp-dir); the head's exporter reads its discovery file.
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --plugin-args "scrape_interval=1s ray_discovery=$STATE/jobs/ray-%j/prom_metrics_service_discovery.json"; then
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
[stall]
k = 5
min_stall = "${MIN_STALL}s"
startup_grace = "120s"
EOF
"$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
MONITOR_PID=$!

# submit NAME PORT "SBATCH-ARGS" "SRUN-ARGS" TRAIN-ARGS...: the batch script
# a user would write.
submit() {
  local name=$1 port=$2 sbatch_args=$3 srun_args=$4
  shift 4
  cat >"$JOBS/$name.sbatch" <<EOS
#!/bin/bash
first=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR=\$(scontrol show node "\$first" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
export MASTER_PORT=$port GLOO_SOCKET_IFNAME=eth0
srun --kill-on-bad-exit=1 $srun_args $PY $TRAIN $*
EOS
  # shellcheck disable=SC2086 # the options are words
  sbatch --parsable --no-requeue $sbatch_args -t 10 -J "realjob-$name" \
    -o "$JOBS/$name.log" -D "$JOBS" "$JOBS/$name.sbatch" | tr -cd 0-9
}
sql() { sqlite_rows "$DB" "$1"; }
has_incident() { [[ -n "$(sql "SELECT id FROM incidents WHERE job_id=$1 AND class LIKE '$2'")" ]]; }
# alerts JOB STATUS: the classes of that job's alerts with that status
alerts() { checks select "$ALERTS" class "job_id == $1" "status == $2"; }

# Rank 2 (alone on node2) sleeps after step 30's all-reduce, before printing
# it; rank 1 prints step 30, then opens the FIFO at the start of step 31;
# rank 0 prints step 30 and waits in step 31's all-reduce (the process
# group's timeout is far away). The FIFO is in the job's working dir and
# nobody writes it.
FIFO=$JOBS/hung-fs.fifo
mkfifo "$FIFO"
hang=$(submit hang 29611 "-N 2 -n 3 --ntasks-per-node=2 --diag=on" "-l" --steps 400 \
  --step-sleep 0.3 --print-rank all --hang-at 30 --hang-rank 2 --hang-after-reduce \
  --block-fifo-at 31 --block-fifo-rank 1 --block-fifo "$FIFO" --pg-timeout 900)
healthy=$(submit healthy 29612 "-N 2 --ntasks-per-node=1" "" --steps 30 --step-sleep 0.2)

# The Ray job: a Ray node on each host (the head's also writes Ray's
# discovery file into the job's Ray temp dir), then the driver on the head,
# whose second actor (on node2) stops at step 30.
cat >"$JOBS/ray-node.sh" <<EOS
#!/bin/bash
me=\$(scontrol show node "\$SLURMD_NODENAME" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
args=()
[[ \$SLURM_NODEID == 0 ]] && args=(--discovery-file "\$RAY_TEMP_DIR/prom_metrics_service_discovery.json" --targets "\$1")
exec $PY $RAY_NODE --listen "\$me:44211" --gpus 2 --seconds 300 "\${args[@]}"
EOS
cat >"$JOBS/ray.sbatch" <<EOS
#!/bin/bash
addr() { scontrol show node "\$1" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p'; }
mapfile -t nodes < <(scontrol show hostnames "\$SLURM_JOB_NODELIST")
head_ip=\$(addr "\${nodes[0]}") worker_ip=\$(addr "\${nodes[1]}")
export RAY_TEMP_DIR=$JOBS/ray-\$SLURM_JOB_ID
mkdir -p "\$RAY_TEMP_DIR"
srun --overlap -N 2 --ntasks-per-node=1 bash $JOBS/ray-node.sh "\$head_ip:44211,\$worker_ip:44211" &
$PY $RAY_DRIVER --scenario actor-hang --head-ip "\$head_ip" --worker-ip "\$worker_ip" \\
  --steps 400 --fault-at 30 --step-sleep 0.3
EOS
ray=$(sbatch --parsable --no-requeue -N 2 --diag=on -t 10 -J realjob-ray -o "$JOBS/ray.log" \
  -D "$JOBS" "$JOBS/ray.sbatch" | tr -cd 0-9)
echo "# jobs: hang=$hang healthy=$healthy ray=$ray"

check "the selected jobs are tracked" wait_for 60 bash -c \
  "$(declare -f sql sqlite_rows checks); [[ -n \"\$(sql 'SELECT job_id FROM jobs WHERE job_id=$hang')\" && -n \"\$(sql 'SELECT job_id FROM jobs WHERE job_id=$healthy')\" ]]"
check "the hang job's exporters run on both nodes" wait_for 60 bash -c \
  "[[ -s '$JOBS/jobmon-diag-$hang/targets/node1.json' && -s '$JOBS/jobmon-diag-$hang/targets/node2.json' ]]"
check "the real job's plain 'step N' lines are followed" wait_for 120 bash -c \
  "$(declare -f sql sqlite_rows checks); [[ \"\$(sql 'SELECT last_step FROM progress WHERE job_id=$hang')\" -ge 10 ]]"
check "a hang incident opens for the stuck ranks" wait_for 120 has_incident "$hang" 'hang%'
IFS='|' read -r latency last_step class p99 summary < <(sql "SELECT i.opened_at - p.last_step_time, p.last_step, i.class, p.p99_interval, i.summary FROM incidents i JOIN progress p USING (job_id) WHERE i.job_id=$hang AND i.class LIKE 'hang%' ORDER BY i.id LIMIT 1")
# The daemon's own threshold, max(k x p99, min_stall), plus a poll and two
# of its longest cycles (checks.py stall-bound).
read -r stated bound < <(checks stall-bound "$summary" "$POLL" "http://127.0.0.1:$MPORT/metrics" 5 "$p99" "$MIN_STALL")
echo "# $class opened ${latency}s after the last step ($last_step) was read; its stated threshold ${stated:-?}s (p99 ${p99}s), bound ${bound:-?}s"
# Rank 0's last line is "step 30" (the program counts from 1); jobmon counts
# steps from 0 in the monitor and triage alike (triage/step_filter), so 29.
check "the last step followed is rank 0's last" test "$last_step" = 29
check "the threshold it states is max(k x p99, min_stall)" test -n "$stated"
check "the incident opens after that threshold, within it + poll interval + two of its longest cycles" \
  checks between "${stated:-$MIN_STALL}" "$latency" "${bound:-0}"
check "its alert fires" wait_for 20 bash -c "$(declare -f alerts checks); alerts $hang firing | grep -q '^hang'"
report=$(checks first-value "$ALERTS" report "job_id == $hang" "class startswith hang")
check "the alert carries the triage of the real log (its last step)" grep -q 'step.*30\|30.*step' <<<"$report"
check "the triage quotes the real log's own lines" grep -q 'loss' <<<"$report"

# What each node's exporter says of the job's processes right now (its
# task label from scontrol listpids), and what that costs it.
for node in node1 node2; do
  addr=$(checks field "$JOBS/jobmon-diag-$hang/targets/$node.json" 0.targets.0)
  scrape=$(checks http-get "http://$addr/metrics")
  echo "# $node's exporter ($addr):"
  grep '^hw_job_process_info{' <<<"$scrape" | sed 's/^/#   /'
  grep '^hw_collector_duration_seconds{collector="job_processes"' <<<"$scrape" | sed 's/^/#   /'
done
summary=$(checks first-value "$ALERTS" summary "job_id == $hang" "status == firing" "class startswith hang")
evidence=$(checks first-value "$ALERTS" evidence "job_id == $hang" "status == firing" "class startswith hang")
echo "# alert summary: $summary"
grep -o '"ranks: [^"]*"' <<<"$evidence" | sed 's/^/# alert evidence: /'
# rank_wait TASK: the alert's evidence line for that task's processes.
rank_wait() { grep -o "\"ranks: task $1 on [^\"]*\"" <<<"$evidence"; }
check "the alert names rank 2 and its node as the rank that stopped first" \
  grep -qE 'rank 2 \(task 2 on node2\) stopped first: at step [0-9]+, 1 step behind the other 2 ranks' <<<"$summary"
check "the sleeping rank (task 2 on node2) waits in a nanosleep" \
  grep -qE '^"ranks: task 2 on node2: python3 pid [0-9]+ S in [a-z_]*nanosleep' <<<"$(rank_wait 2)"
check "the FIFO reader (task 1 on node1) waits for a writer" \
  grep -qE '^"ranks: task 1 on node1: python3 pid [0-9]+ S in (wait_for_partner|fifo_open|[a-z_]*pipe_read)' <<<"$(rank_wait 1)"
check "rank 0 (task 0 on node1) waits in the collective" \
  grep -qE '^"ranks: task 0 on node1: python3 pid [0-9]+ S in [a-z_]*(futex|epoll|poll)' <<<"$(rank_wait 0)"

check "jobmon status names the hang" bash -c \
  "'$JOBMON' status $hang --config '$SCRATCH/jobmon.toml' | grep -q 'hang'"

# The chart: the firing carries it (the notify file's "chart" field, as the
# webhook's), and `jobmon status --html` writes it into a self-contained
# report that headless Chromium shows with the stall marked
# (tests/unit/cli/html_report_check.py). JOBMON_KEEP_REPORT=DIR keeps both.
checks first-value "$ALERTS" chart.data "job_id == $hang" "status == firing" \
  "class startswith hang" | base64 -d >"$SCRATCH/chart.png" 2>/dev/null
check "the firing alert carries the chart, a PNG" grep -q PNG <(head -c 8 "$SCRATCH/chart.png")
check "jobmon status --html writes the report" \
  "$JOBMON" status "$hang" --config "$SCRATCH/jobmon.toml" --html "$SCRATCH/report.html"
base64 -w0 "$SCRATCH/chart.png" >"$SCRATCH/chart.b64"
check "the report holds the alert's chart" grep -qF -f "$SCRATCH/chart.b64" "$SCRATCH/report.html"
check "headless Chromium shows the report, the chart and its stall marker" \
  /usr/bin/python3 "$HERE/../unit/cli/html_report_check.py" --html "$SCRATCH/report.html" \
  --screenshot "$SCRATCH/report.png"
if [[ -n ${JOBMON_KEEP_REPORT:-} ]]; then
  cp "$SCRATCH/report.html" "$SCRATCH/report.png" "$JOBMON_KEEP_REPORT/"
fi

check "the healthy twin ends COMPLETED" wait_for 180 bash -c \
  "$(declare -f job_done); job_done $healthy"
check "Slurm says COMPLETED 0:0" bash -c \
  "scontrol -o show job $healthy | grep -q 'JobState=COMPLETED .*ExitCode=0:0'"
check "the daemon runs 5 cycles after the end" \
  counter_grows 30 "http://127.0.0.1:$MPORT/metrics" jobmon_monitor_polls_total 5
check "the healthy twin got no firing alert" test -z "$(alerts "$healthy" firing)"
check "the healthy twin got no incident" test -z "$(sql "SELECT class FROM incidents WHERE job_id=$healthy")"

echo "# the Ray job"
RAY_DIAG=$JOBS/jobmon-diag-$ray
check "Ray job: its manifest is written" wait_for 30 test -s "$RAY_DIAG/manifest.json"
RAY_PORT=$(checks field "$RAY_DIAG/manifest.json" prometheus.port 2>/dev/null || echo 0)
ray_query() { ip netns exec "$DEVCLUSTER_TAG-node1" "$PROMQ" "http://127.0.0.1:$RAY_PORT" "$1" 2>/dev/null; }
ray_on_both() {
  [[ "$(ray_query 'count by (host, jobmon_source) (ray_node_gpus_utilization)')" == \
    $'{host="node1",jobmon_source="ray"} 2\n{host="node2",jobmon_source="ray"} 2' ]]
}
check "Ray job: Ray's GPU series in the job's Prometheus, 2 GPUs on node1 and on node2" \
  wait_for 60 ray_on_both
ray_query 'ray_node_gpus_utilization' | sed 's/^/# /'
check "Ray job: a hang incident opens" wait_for 120 has_incident "$ray" 'hang%'
check "Ray job: its alert fires" wait_for 20 bash -c "$(declare -f alerts checks); alerts $ray firing | grep -q '^hang'"
summary=$(checks first-value "$ALERTS" summary "job_id == $ray" "status == firing" "class startswith hang")
echo "# Ray alert summary: $summary"
worker_ip=$(scontrol show node node2 | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
check "Ray job: the alert names the actor that stopped first and its host" \
  grep -qE "RayTrainWorker pid=3907 on (node2|$worker_ip)[ ,(].*stopped first: at step [0-9]+, 1 step behind" <<<"$summary"
check "jobmon status names the Ray actor" bash -c \
  "'$JOBMON' status $ray --config '$SCRATCH/jobmon.toml' | grep -q 'RayTrainWorker pid=3907'"
scancel "$ray"
check "Ray job: ends after scancel" wait_for 60 job_done "$ray"
ray_archived() { [[ "$(checks field "$RAY_DIAG/manifest.json" state 2>/dev/null)" == archived ]]; }
check "Ray job: its TSDB is archived" wait_for 60 ray_archived
mkdir -p "$SCRATCH/ray-restore"
tar --zstd -xf "$RAY_DIAG/tsdb.tar.zst" -C "$SCRATCH/ray-restore"
printf 'global:\n  scrape_interval: 1h\n' >"$SCRATCH/empty.yml"
RPORT=$(free_loopback_port)
prometheus --config.file="$SCRATCH/empty.yml" --storage.tsdb.path="$SCRATCH/ray-restore/prometheus" \
  --web.listen-address="127.0.0.1:$RPORT" >"$SCRATCH/ray-restore.log" 2>&1 &
RPORT_PID=$!
archived_ray() {
  "$PROMQ" "http://127.0.0.1:$RPORT" 'count by (host) (last_over_time(ray_node_gpus_utilization[1h]))' |
    grep -c '^{host="node[12]"} 2$' | grep -qx 2
}
check "Ray job: the archive holds Ray's series of both nodes" wait_for 30 archived_ray
stop_pid "$RPORT_PID"
RPORT_PID=""
# The exporters here have no GPU collector (no GPU on the dev cluster):
# jobmon diagnose reads the GPUs' state from Ray's series instead.
"$JOBMON" diagnose "$RAY_DIAG" --playbook gpu --json >"$SCRATCH/ray-diagnose.json" 2>"$SCRATCH/ray-diagnose.err"
check "Ray job: jobmon diagnose says Ray's series stand in for the exporter's GPU series" \
  grep -q "Ray's stand in: .*hw_gpu_utilization_percent from ray_node_gpus_utilization" \
  <(checks field "$SCRATCH/ray-diagnose.json" warnings)
gpu_summary=$(checks field "$SCRATCH/ray-diagnose.json" playbooks.0.summary)
echo "# Ray job, diagnose's gpu playbook: ${gpu_summary//$'\n'/; }"
check "Ray job: the gpu playbook sees both nodes' GPUs, their utilisation and memory from Ray" \
  grep -qz 'GPU Health Summary (2 nodes, 4 GPUs).*VRAM: 75% used.*Utilization: min 97% max 97%' <<<"$gpu_summary"

scancel "$hang"
check "the hang job ends after scancel" wait_for 60 job_done "$hang"
check "the daemon is still running" kill -0 "$MONITOR_PID"
echo "# real_job_live took ${SECONDS}s up to its teardown"
finish
