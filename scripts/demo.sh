#!/usr/bin/env bash
# The demo: a local dev cluster (real Slurm, 2 nodes in network namespaces),
# one 2-node --diag=on fake-trainer job, its output, then teardown.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
STATE=${JOBMON_DEMO_STATE:-/tmp/jobmon-demo}
DEVCLUSTER=$root/contrib/devcluster/devcluster

echo "== installing dependencies and building"
scripts/install-deps.sh
scripts/build.sh release >/dev/null

trap '"$DEVCLUSTER" down --state "$STATE"' EXIT
echo "== starting the dev cluster"
"$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet 10.201.0 --plugin build/release/spank/spank_diag.so
eval "$("$DEVCLUSTER" env --state "$STATE")"
sinfo -N

echo "== sbatch -N2 --diag=on: srun fake-trainer on both nodes"
cd "$DEVCLUSTER_JOBS"
job=$(sbatch --parsable -N2 --diag=on -o "$DEVCLUSTER_JOBS/demo-%j.log" \
  --wrap "srun -l $root/build/release/contrib/fake-trainer/fake-trainer --steps 20 --step-seconds 0.2 \
          --checkpoint-every 10 --checkpoint-seconds 0.3 --gpu-sysfs $DEVCLUSTER_JOBS/gpu-%n \
          --tensorboard-dir $DEVCLUSTER_JOBS")
echo "submitted job $job; following its output"
tail -n +1 -F --pid=$$ "$DEVCLUSTER_JOBS/demo-$job.log" 2>/dev/null &
tail_pid=$!
while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 1; done
sleep 1
kill "$tail_pid" 2>/dev/null || true
wait "$tail_pid" 2>/dev/null || true
echo
echo "== job $job: $(scontrol show job "$job" | grep -oE "(^| )(JobState|ExitCode|NodeList)=[^ ]+" | tr '\n' ' ')"
echo "== what the plugin logged (slurmd logs)"
sleep 1
grep -h '\[diag\]' "$DEVCLUSTER_STATE"/log/slurmd-*.log
echo "== TensorBoard event file written by rank 0"
ls -l "$DEVCLUSTER_JOBS"/events.out.tfevents.*

echo "== a second job that hangs at step 15; jobmon triage while it is stuck (Slurm says RUNNING)"
hang=$(sbatch --parsable -N2 -o "$DEVCLUSTER_JOBS/hang-%j.log" \
  --wrap "srun -l $root/build/release/contrib/fake-trainer/fake-trainer --steps 100 --step-seconds 0.1 --hang-at 15")
until grep -q '^0: completed step: 14,' "$DEVCLUSTER_JOBS/hang-$hang.log" 2>/dev/null; do sleep 0.5; done
sleep 4
"$root/build/release/monitor/cli/jobmon" triage "$DEVCLUSTER_JOBS/hang-$hang.log" --stall-min-seconds 2 || true
scancel "$hang"
while squeue -h -j "$hang" 2>/dev/null | grep -q .; do sleep 0.5; done
echo "== tearing down"
