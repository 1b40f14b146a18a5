#!/usr/bin/env bash
# `jobmon diagnose` on real archived TSDBs: 2-node
# `sbatch --diag=on` jobs with the fake trainer on the dev cluster, whose
# exporters read per-job fake procfs/sysfs trees (exporter_arg=--procfs,
# --sysfs) that fault_tree.py evolves: baseline noise plus one fault each
# (ECC UE on node2 GPU 1, RDMA port down with retransmits on node2 bnxt_re1
# port 1, TCP retransmits only inside checkpoint windows, I/O pressure on
# node1, a thermal ramp with clock drop and slower steps on node1 GPU 0, a
# frozen exporter tree on node2, and two jobs of which one has more runnable
# processes everywhere), and three jobs that fail as the first playbooks
# expect: a hang (the fake trainer's --hang-at; the trees show busy-wait GPUs
# once no step came for 3 s, and the job is cancelled ~20 s after its last step), a
# JAX heartbeat accusation of node2 while its GPUs trained (a false positive)
# and a host OOM kill on node2 after its MemAvailable fell toward zero. Their
# diag dirs name the job log (manifest job_log), so diagnose triages it and
# auto-selects the playbook. All jobs run at once; each archive is checked twice:
# the fault is in the TSDB where it was injected and nowhere else (a
# read-only Prometheus on the unpacked archive), and each playbook's verdict
# and findings from `jobmon diagnose --json`. Needs root. One line per
# check, then "N passed, N failed"; cleanup on every path.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" JOBMON="" PROMQ="" FAULT_TREE=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    --promq) PROMQ=$2; shift 2 ;;
    --fault-tree) FAULT_TREE=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --jobmon PATH --promq PATH --fault-tree PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$JOBMON" && -x "$PROMQ" && -f "$FAULT_TREE" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
JOBMON=$(realpath "$JOBMON") PROMQ=$(realpath "$PROMQ") FAULT_TREE=$(realpath "$FAULT_TREE")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-dg-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-dg-scratch-XXXXXX)
TREES=$STATE/trees
OUR_PIDS=()
teardown() {
  local pid
  for pid in "${OUR_PIDS[@]}"; do stop_pid "$pid"; done
  teardown_cluster jobmon-dg
}
trap teardown EXIT

STEPS=200
echo "# devcluster up: 2 nodes, exporters reading $TREES/<job>/<node>/{proc,sys}"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "10.211.$((RANDOM % 200 + 20))" --plugin "$PLUGIN" \
  --timeout 90 --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$TREES/%j/%n/sys exporter_arg=--procfs=$TREES/%j/%n/proc"; then
  echo "FAIL - devcluster up"; echo "0 passed, 1 failed"; exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
cat >"$JOBS/train.sh" <<EOS
#!/bin/bash
srun -l $FAKE_TRAINER --steps $STEPS --step-seconds 0.2 --compile-seconds 3 --seed 7 \
  --tensorboard-dir "\$JOBMON_DIAG_DIR/tensorboard/%n" "\$@"
sleep 4  # a few more scrapes of the last step and the idle GPUs
EOS
chmod +x "$JOBS/train.sh"

# submit NAME SCENARIO "FAULT_TREE ARGS" TRAINER ARGS...: a held 2-node job,
# its trees built by a fault_tree.py of ours, then released. Sets job[NAME].
declare -A job
submit() {
  local name=$1 scenario=$2 fault_args=$3 id
  shift 3
  id=$(cd "$JOBS" && sbatch --parsable --hold -N2 --diag=on -o "$JOBS/$name-%j.log" "$JOBS/train.sh" "$@")
  id=${id%%;*}
  job[$name]=$id
  # shellcheck disable=SC2086 # fault_args are words
  /usr/bin/python3 "$FAULT_TREE" run "$TREES/$id" --nodes node1,node2 --scenario "$scenario" \
    --log "$JOBS/$name-$id.log" --steps "$STEPS" --seconds 240 --ready "$SCRATCH/ready-$name" \
    $fault_args >"$SCRATCH/fault-$name.log" 2>&1 &
  OUR_PIDS+=($!)
}
echo "# 11 jobs at once, one fault each"
submit ecc ecc "--fault-at-step 80"
submit rdma rdma "--fault-at-step 80"
submit tcp tcp-checkpoint "--checkpoint-every 50" --checkpoint-every 50 --checkpoint-seconds 3
submit io io-pressure "--fault-at-step 80" --slow-from 90 --slow-factor 1.5
submit thermal thermal "--fault-at-step 60" --slow-from 100 --slow-factor 1.6
submit ghost ghost "--fault-at-step 80"
submit base baseline ""
submit procs procs-high "" --slow-from 1 --slow-factor 1.2
# Every rank stops after step 99 and spins; cancelled below.
submit hang baseline "" --hang-at 100
# Rank 0 accuses rank 1 (node2) at step 150 (~33 s in) with a 10 s timeout:
# the heartbeats "stopped" ~23 s in, mid-training.
submit hbfp baseline "" --heartbeat-timeout-at 150 --heartbeat-timeout-seconds 10
# node2's memory falls from step 125 (~3 s to the floor, the kernel's kill
# there), the trainer's OOM lines at step 150.
submit oom oom "--fault-at-step 125" --oom-at 150
for name in "${!job[@]}"; do
  check "fault tree of $name (job ${job[$name]}) built" wait_for 30 test -s "$SCRATCH/ready-$name"
  scontrol release "${job[$name]}"
done
HANG_LOG=$JOBS/hang-${job[hang]}.log
# The hang: cancelled ~20 s after both ranks' last step (99), as an operator
# would. The playbook judges the later half of [last step, end]; the trees
# spin from ~3.5 s after the step (fault_tree.py's 3-s stall, its 0.5-s
# poll), so the later half starts ~6.5 s into the spin: slack for a loaded
# machine's late tree.
(wait_for 150 bash -c "grep -qs '^0: completed step: 99,' $HANG_LOG && grep -qs '^1: completed step: 99,' $HANG_LOG" &&
  sleep 20 && echo "# scancel the hung job ${job[hang]}" && scancel "${job[hang]}") &
OUR_PIDS+=($!)
all_archived() {
  local name
  for name in "${!job[@]}"; do
    [[ "$(checks field "$JOBS/jobmon-diag-${job[$name]}/manifest.json" state 2>/dev/null)" == archived ]] || return 1
  done
}
check "every job ends and is archived within 4 minutes" wait_for 240 all_archived
for pid in "${OUR_PIDS[@]}"; do stop_pid "$pid"; done
OUR_PIDS=()
for name in "${!job[@]}"; do
  [[ $name == hang || $name == hbfp || $name == oom ]] && continue
  check "$name: the trainer ran all $STEPS steps on both ranks" bash -c \
    "grep -q '^0: completed step: $((STEPS - 1)),' $JOBS/$name-${job[$name]}.log && grep -q '^1: completed step: $((STEPS - 1)),' $JOBS/$name-${job[$name]}.log"
done

check "hang: both ranks stopped after step 99" bash -c \
  "grep -q '^0: completed step: 99,' $HANG_LOG && ! grep -q 'completed step: 100,' $HANG_LOG"
check "hbfp: rank 0 accused task 1 of stopping heartbeats" \
  grep -q '^0: /job:jax_worker/replica:0/task:1$' "$JOBS/hbfp-${job[hbfp]}.log"
check "oom: rank 1 OOM-killed at step 150" bash -c \
  "grep -q '^1: Out of memory: Killed process' $JOBS/oom-${job[oom]}.log && grep -q '^1: completed step: 149,' $JOBS/oom-${job[oom]}.log"

echo "# the faults are in the TSDBs, where they were injected only"
printf 'global:\n  scrape_interval: 1h\n' >"$SCRATCH/empty.yml"
PROM_PID="" URL="" T=""
# open_tsdb NAME: a read-only Prometheus on NAME's unpacked archive; T = its
# newest sample (at "now" the series are stale: the targets went away).
open_tsdb() {
  local dir=$SCRATCH/tsdb-$1 port
  [[ -n "$PROM_PID" ]] && stop_pid "$PROM_PID"
  mkdir -p "$dir" && tar --zstd -xf "$JOBS/jobmon-diag-${job[$1]}/tsdb.tar.zst" -C "$dir"
  port=$(free_loopback_port)
  prometheus --config.file="$SCRATCH/empty.yml" --storage.tsdb.path="$dir/prometheus" \
    --web.listen-address="127.0.0.1:$port" >"$dir.log" 2>&1 &
  PROM_PID=$!
  OUR_PIDS=("$PROM_PID")
  URL=http://127.0.0.1:$port
  wait_for 30 "$PROMQ" "$URL" 'vector(1)' >/dev/null 2>&1
  T=$(checks tsdb-max-time "$URL")
}
# series QUERY: the labels of the answer at T, space-separated, sorted.
series() { "$PROMQ" "$URL" "$1" --time "${T:-0}" | sed 's/ [^ ]*$//' | tr '\n' ' ' | sed 's/ $//'; }
value() { "$PROMQ" "$URL" "$1" --time "${T:-0}" | awk '{print $2}'; }

open_tsdb ecc
check "ecc: umc UE rose on node2 GPU 1 only" test \
  "$(series 'count by (host, gpu) (increase(hw_gpu_ras_umc_ue_total[10m]) > 0)')" == '{gpu="1",host="node2"}'
open_tsdb rdma
check "rdma: port state 0 on node2 bnxt_re1 port 1 only" test \
  "$(series 'count by (host, device, port) (min_over_time(hw_rdma_port_state[10m]) == 0)')" == '{device="bnxt_re1",host="node2",port="1"}'
check "rdma: retransmits on that port only" test \
  "$(series 'count by (host, device, port) (increase(hw_rdma_tx_retx_pkts_total[10m]) > 100)')" == '{device="bnxt_re1",host="node2",port="1"}'
open_tsdb tcp
check "tcp: retransmit bursts on both hosts" test \
  "$(series 'count by (host) (max_over_time(rate(hw_tcp_retransmits_total[3s])[10m:1s]) > 50)')" == '{host="node1"} {host="node2"}'
# The checkpoints at steps 50, 100, 150 take 3 s each: 9 s of bursts, each
# widened by the 3 s rate window, of a job of ~45 s (retransmits all along
# would count ~40).
bursty=$(value 'count_over_time((rate(hw_tcp_retransmits_total{host="node1"}[3s]) > 50)[10m:1s])')
check "tcp: bursts cover $bursty s: the checkpoint windows' 9 s (+ the rate window)" checks between 6 "${bursty:-0}" 24
open_tsdb io
check "io: PSI some above 30% on node1 only" test \
  "$(series 'count by (host) (max_over_time(hw_io_pressure_some_pct[10m]) > 30)')" == '{host="node1"}'
check "io: step time rose (tb_perf_step_time_seconds max > 1.3x min)" test -n \
  "$(series 'max_over_time(tb_perf_step_time_seconds{host="node1"}[10m]) > 1.3 * min_over_time(tb_perf_step_time_seconds{host="node1"}[10m])')"
open_tsdb thermal
check "thermal: above 95 C on node1 GPU 0 only" test \
  "$(series 'count by (host, gpu) (max_over_time(hw_gpu_temperature_celsius[10m]) > 95)')" == '{gpu="0",host="node1"}'
# Samples at 1400 MHz, not the window's minimum: whether the idle clock of
# the compile phase was scraped depends on how fast the job started.
check "thermal: sclk at 1400 MHz on node1 GPU 0 only" test \
  "$(series 'count by (host, gpu) (count_over_time((hw_gpu_clock_mhz{type="sclk"} == 1400)[10m:1s]))')" == '{gpu="0",host="node1"}'
open_tsdb ghost
check "ghost: power unchanged over the last 15 s on node2's GPUs only" test \
  "$(series 'count by (host) (changes(hw_gpu_power_watts[15s]) == 0)')" == '{host="node2"}'
check "ghost: and changing before the freeze there" test \
  "$(series 'count by (host) (changes(hw_gpu_power_watts[40s] offset 15s) > 3)')" == '{host="node1"} {host="node2"}'
open_tsdb base
base_procs=$(value 'avg(avg_over_time(hw_procs_running[10m]))')
open_tsdb procs
procs_procs=$(value 'avg(avg_over_time(hw_procs_running[10m]))')
check "procs: runnable processes ${procs_procs:-?} vs ${base_procs:-?} in the baseline job" \
  checks compare "${procs_procs:-0}" '>' "$(awk -v b="${base_procs:-99}" 'BEGIN {print b + 10}')"
check "procs: higher on every host" test \
  "$(series 'count by (host) (min_over_time(hw_procs_running[10m]) > 15)')" == '{host="node1"} {host="node2"}'
open_tsdb hang
check "hang: GPUs busy (>85%) at near-idle power (<250 W) for 5+ s on both hosts" test \
  "$(series 'count by (host) (count_over_time((hw_gpu_utilization_percent > 85 and on (host, gpu) hw_gpu_power_watts < 250)[10m:1s]) > 5)')" == '{host="node1"} {host="node2"}'
open_tsdb oom
check "oom: MemAvailable fell below 5% of its high on node2 only" test \
  "$(series 'count by (host) (min_over_time(hw_mem_available_bytes[10m]) < 0.05 * max_over_time(hw_mem_available_bytes[10m]))')" == '{host="node2"}'
check "oom: oom_kill rose on node2 only" test \
  "$(series 'count by (host) (increase(hw_oom_kills_total[10m]) > 0)')" == '{host="node2"}'
stop_pid "$PROM_PID"
OUR_PIDS=()

echo "# jobmon diagnose: each playbook's verdict"
if ! "$JOBMON" --help 2>&1 | grep -qE '^ +diagnose '; then
  echo "FAIL - jobmon diagnose: not in this build (the TSDB checks above still ran)"
  failed=$((failed + 1))
  finish
  exit
fi
# diagnose NAME ARGS...: `jobmon diagnose` on NAME's diag dir; prints the
# path of its JSON (kept with its stderr in $SCRATCH, for a failed run).
diagnose() {
  local name=$1 file tag
  shift
  tag=${2:-auto}  # the playbook's (or the compared dir's) name
  file=$SCRATCH/diagnose-$name-${tag##*/}.json
  "$JOBMON" diagnose "$JOBS/jobmon-diag-${job[$name]}" "$@" --json >"$file" 2>"${file%.json}.err"
  echo "$file"
}
no_item() { checks expect "$1" "$2 present" && ! checks any "$@"; }  # the list is there, no item matches
pb() { checks playbook "$@"; }
pb_any() { checks playbook-any "$@"; }
pb_none() { checks playbook-none "$@"; }

out=$(diagnose ecc --playbook hardware)
check "ecc: hardware verdict hardware-fault" pb "$out" hardware "verdict == hardware-fault"
check "ecc: ecc-uncorrectable on node2 GPU 1" pb_any "$out" hardware anomalies "code == ecc-uncorrectable" "host == node2" "gpu == 1"
check "ecc: no ecc-uncorrectable elsewhere" pb_none "$out" hardware anomalies "code == ecc-uncorrectable" "host != node2"

out=$(diagnose rdma --playbook network)
check "rdma: network verdict rdma-port-down" pb "$out" network "verdict == rdma-port-down"
check "rdma: rdma-port-down on node2 bnxt_re1" pb_any "$out" network anomalies "code == rdma-port-down" "host == node2" "device startswith bnxt_re1"
check "rdma: rdma-retransmits on node2 bnxt_re1" pb_any "$out" network anomalies "code == rdma-retransmits" "host == node2" "device startswith bnxt_re1"
check "rdma: nothing on bnxt_re0" pb_none "$out" network anomalies "code in rdma-port-down|rdma-retransmits" "device startswith bnxt_re0"
out=$(diagnose rdma --playbook hardware)
check "rdma: hardware sees rdma-port-down on node2" pb_any "$out" hardware anomalies "code == rdma-port-down" "host == node2"

out=$(diagnose tcp --playbook network)
check "tcp: no tcp-retransmits finding outside checkpoints" pb_none "$out" network anomalies "code == tcp-retransmits"
check "tcp: tcp-retransmits-checkpoint-only, as info" pb_any "$out" network anomalies "code == tcp-retransmits-checkpoint-only"
check "tcp: network verdict healthy" pb "$out" network "verdict == healthy"

out=$(diagnose io --playbook training)
check "io: training verdict a slowdown" pb "$out" training "verdict in step-time-increase|throughput-regression"
check "io: io-pressure on node1 in the contention checklist" pb_any "$out" training anomalies "code == io-pressure" "host == node1"
check "io: no io-pressure on node2" pb_none "$out" training anomalies "code == io-pressure" "host == node2"

out=$(diagnose thermal --playbook training)
check "thermal: training root cause thermal-high on node1" pb "$out" training "root_cause.code == thermal-high" "root_cause.host == node1"
check "thermal: clock-drop in the chain" pb_any "$out" training chain "code == clock-drop"
check "thermal: step-time-increase in the chain" pb_any "$out" training chain "code == step-time-increase"
out=$(diagnose thermal --playbook gpu)
check "thermal: gpu verdict anomalous" pb "$out" gpu "verdict == anomalous"
check "thermal: thermal-high on node1 GPU 0" pb_any "$out" gpu anomalies "code == thermal-high" "host == node1" "gpu == 0"
check "thermal: clock-drop on node1 GPU 0" pb_any "$out" gpu anomalies "code == clock-drop" "host == node1" "gpu == 0"

out=$(diagnose ghost --playbook gpu)
check "ghost: observability ghost-data on node2" checks any "$out" observability.problems "code == ghost-data" "host == node2"
check "ghost: no ghost-data on node1" no_item "$out" observability.problems "code == ghost-data" "host == node1"

out=$(diagnose base --playbook gpu)
check "baseline: gpu verdict healthy" pb "$out" gpu "verdict == healthy"
check "baseline: no observability problem" checks expect "$out" "observability.problems == []"

out=$(diagnose procs --compare "$JOBS/jobmon-diag-${job[base]}")
check "comparison: root cause procs-running" checks expect "$out" "comparison.root_cause.code == procs-running"


# Triage calls a stall before a cancel a hang past the one stall rule's
# max(k x p99 step, [stall] min_stall) (default 1 minute): this job hung
# for ~20 s.
printf '[stall]\nmin_stall = "10s"\n' >"$SCRATCH/jobmon.toml"
out=$(diagnose hang --playbook hang --config "$SCRATCH/jobmon.toml")
check "hang: the job log found and triaged (class hang)" checks expect "$out" "context.triage.primary_class == hang"
check "hang: hang verdict busy-wait-hang" pb "$out" hang "verdict == busy-wait-hang"
check "hang: util-high-power-idle on node1" pb_any "$out" hang anomalies "code == util-high-power-idle" "host == node1"
check "hang: util-high-power-idle on node2" pb_any "$out" hang anomalies "code == util-high-power-idle" "host == node2"
out=$(diagnose hang --config "$SCRATCH/jobmon.toml")
check "hang: auto selection runs the hang playbook first ($(checks playbooks "$out" | tr '\n' ' '))" \
  test "$(checks playbooks "$out" | head -1)" == hang
check "hang: auto, busy-wait-hang" pb "$out" hang "verdict == busy-wait-hang"

out=$(diagnose hbfp --playbook heartbeat)
check "hbfp: triage names the accused host node2" checks expect "$out" "context.triage.accused_hosts.0 == node2"
read -r hb_stop job_start job_end < <(checks field "$out" context.triage.heartbeat_stop context.job_range.start context.job_range.end)
check "hbfp: heartbeat stop (crash - 10 s) ${hb_stop:-?} inside the job (${job_start:-?}..${job_end:-?})" \
  checks between "${job_start:-1}" "${hb_stop:-0}" "${job_end:-0}"
check "hbfp: heartbeat verdict false-positive" pb "$out" heartbeat "verdict == false-positive"
out=$(diagnose hbfp)
check "hbfp: auto selection runs the heartbeat playbook" pb "$out" heartbeat "verdict == false-positive"

out=$(diagnose oom --playbook oom)
check "oom: oom verdict sudden-spike (a fall of seconds)" pb "$out" oom "verdict == sudden-spike"
check "oom: oom-kill on node2" pb_any "$out" oom anomalies "code == oom-kill" "host == node2"
check "oom: no oom-kill elsewhere" pb_none "$out" oom anomalies "code == oom-kill" "host != node2"
check "oom: host-memory-spike on node2" pb_any "$out" oom anomalies "code == host-memory-spike" "host == node2"
check "oom: no memory finding on node1" pb_none "$out" oom anomalies "code in host-memory-spike|host-memory-ramp" "host == node1"
out=$(diagnose oom)
check "oom: auto selection runs the oom playbook" pb "$out" oom "verdict == sudden-spike"

finish
