#!/usr/bin/env bash
# The demo: a local dev cluster (real Slurm, 2 nodes in network namespaces),
# one 2-node --diag=on fake-trainer job, its output; then a job that hangs,
# caught by slurm_job_monitor and delivered to a local webhook receiver
# that prints the alert; then teardown.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
on_error_say_where
STATE=${JOBMON_DEMO_STATE:-/tmp/jobmon-demo}
DEVCLUSTER=$root/contrib/devcluster/devcluster

echo "== installing dependencies and building"
scripts/install-deps.sh --demo
mkdir -p "$STATE"
echo "(build output: $STATE/build.log)"
run_logged "$STATE/build.log" scripts/build.sh demo
BUILD=$root/build/demo

MONITOR_PID="" RECEIVER_PID=""
cleanup() {
  set +e  # everything below runs, whatever fails
  local pid
  for pid in $MONITOR_PID $RECEIVER_PID; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  "$DEVCLUSTER" down --state "$STATE"
}
trap cleanup EXIT
echo "== starting the dev cluster"
"$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet 10.201.0 --plugin "$BUILD/spank/spank_diag.so" \
  --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%n"
eval "$("$DEVCLUSTER" env --state "$STATE")"
sinfo -N
in_node1() { ip netns exec "$DEVCLUSTER_TAG-node1" "$@"; }

echo "== slurm_job_monitor, delivering to a local webhook receiver that prints what it gets"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
hook_port=$(free_port)
/usr/bin/python3 "$root/tests/integration/webhook_receiver.py" --port "$hook_port" \
  --log "$STATE/webhook.jsonl" --print &
RECEIVER_PID=$!
cat >"$STATE/jobmon.toml" <<EOC
[monitor]
cluster = "demo"
state_db = "$STATE/monitor.db"
poll_interval = "1s"
slurm_poll_interval = "2s"
metrics_listen = "127.0.0.1:$(free_port)"
notify_file = ""
[stall]
min_stall = "8s"
[[alerts.webhook]]
name = "local-receiver"
url = "http://127.0.0.1:$hook_port/alerts"
EOC
"$BUILD/monitor/daemon/slurm_job_monitor" --config "$STATE/jobmon.toml" 2>"$STATE/monitor.log" &
MONITOR_PID=$!
export JOBMON_CONFIG=$STATE/jobmon.toml
promq() { in_node1 "$root/tests/integration/promq.py" "http://127.0.0.1:$port" "$1"; }

echo "== sbatch -N2 --diag=on: srun fake-trainer on both nodes"
cd "$DEVCLUSTER_JOBS"
cat >demo.sh <<EOS
#!/bin/bash
srun -l $BUILD/contrib/fake-trainer/fake-trainer --steps 60 --step-seconds 0.2 \\
  --checkpoint-every 20 --checkpoint-seconds 0.6 --gpu-sysfs $DEVCLUSTER_JOBS/gpu-%n \\
  --tensorboard-dir "\$JOBMON_DIAG_DIR/tensorboard/%n"
# the demo queries the job's Prometheus before the job ends (at most 60 s)
for i in \$(seq 1 600); do [[ -e $DEVCLUSTER_JOBS/done-\$SLURM_JOB_ID ]] && break; sleep 0.1; done
EOS
chmod +x demo.sh
job=$(sbatch --parsable -N2 --diag=on -o "$DEVCLUSTER_JOBS/demo-%j.log" demo.sh)
diag=$DEVCLUSTER_JOBS/jobmon-diag-$job
stack_up() { [[ -s "$diag/manifest.json" ]] && grep -q '^\[diag\]' "$DEVCLUSTER_JOBS/demo-$job.log" 2>/dev/null; }
wait_for 120 "job $job to start and write its manifest and [diag] line" stack_up
echo "submitted job $job; the [diag] line in its output:"
grep '^\[diag\]' "$DEVCLUSTER_JOBS/demo-$job.log"
port=$(python3 -c "import json; print(json.load(open('$diag/manifest.json'))['prometheus']['port'])")
wait_for 120 "job $job to reach step 40" grep -qs '^0: completed step: 40,' "$DEVCLUSTER_JOBS/demo-$job.log"
echo "== live queries of the job's Prometheus (node1's loopback, port $port) at step 40"
for query in up tb_step 'hw_gpu_power_watts{gpu="0"}' 'hw_gpu_utilization_percent{gpu="0"}'; do
  echo "-- $query"
  promq "$query"
done
wait_for 120 "job $job to reach step 59" grep -qs '^0: completed step: 59,' "$DEVCLUSTER_JOBS/demo-$job.log"
sleep 2
touch "$DEVCLUSTER_JOBS/done-$job"
job_gone() { ! squeue -h -j "$1" 2>/dev/null | grep -q .; }
wait_for 120 "job $job to leave the queue" job_gone "$job"
echo "== job $job: $(scontrol -o show job "$job" | grep -oE "(^| )(JobState|ExitCode|NodeList)=[^ ]+" | tr '\n' ' ')"
archived() { python3 -c "import json,sys; sys.exit(json.load(open('$diag/manifest.json'))['state'] not in ('archived', 'archive_failed'))"; }
wait_for 120 "job $job's TSDB archive" archived
echo "== after the job: the archive and the manifest"
ls -l "$diag"
python3 -c "import json; m=json.load(open('$diag/manifest.json')); print('state:', m['state']); print('archive:', m['archive'])"
echo "sha256sum: $(sha256sum "$diag/tsdb.tar.zst")"
tar --zstd -tvf "$diag/tsdb.tar.zst" | head -5
echo "== what the plugin logged (slurmd logs)"
grep -h '\[diag\]' "$DEVCLUSTER_STATE"/log/slurmd-*.log

echo "== a second --diag=on job that hangs at step 40 (a busy-wait: GPUs at 100%, power at idle level)"
hang=$(sbatch --parsable -N2 --diag=on -o "$DEVCLUSTER_JOBS/hang-%j.log" \
  --wrap "srun -l $BUILD/contrib/fake-trainer/fake-trainer --steps 100 --step-seconds 0.2 --hang-at 40 --gpu-sysfs $STATE/jobs/gpu-%n --gpu-interval 0.5")
wait_for 120 "job $hang to reach step 39" grep -qs '^0: completed step: 39,' "$DEVCLUSTER_JOBS/hang-$hang.log"
echo "-- waiting for the monitor (stall threshold: max(5 x p99 step time, 8 s))"
wait_for 90 "slurm_job_monitor's alert for job $hang (see $STATE/monitor.log)" \
  grep -qs "\"job_id\": $hang" "$STATE/webhook.jsonl"
sleep 1
echo "== jobmon status $hang"
"$BUILD/cli/jobmon" status "$hang" --config "$STATE/jobmon.toml" >"$STATE/status.txt"
cat "$STATE/status.txt"
echo "== jobmon triage of the same log while it is stuck (Slurm says RUNNING)"
triage_rc=0
# The same config, so the same stall rule as the monitor's ([stall]).
"$BUILD/cli/jobmon" triage "$DEVCLUSTER_JOBS/hang-$hang.log" --config "$STATE/jobmon.toml" \
  >"$STATE/triage.txt" || triage_rc=$?
head -n 30 "$STATE/triage.txt"
echo "(jobmon triage exit code $triage_rc: 4 means hanging)"
scancel "$hang"
wait_for 120 "job $hang to leave the queue" job_gone "$hang"
sleep 3  # the monitor sees the end and sends the resolve
echo "== tearing down"
