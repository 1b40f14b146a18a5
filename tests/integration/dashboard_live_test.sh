#!/usr/bin/env bash
# contrib/grafana/jobmon-job.json and contrib/prometheus/jobmon-rules.yml on
# real data: two 2-node `sbatch --diag=on` jobs
# with the fake trainer on the dev cluster, their exporters reading
# fault_tree.py's fake procfs/sysfs (amdgpu with RAS and AER, bnxt_re RDMA
# counters), one with node2 bnxt_re1 port 1 going down, one with umc
# uncorrectable errors on node2 GPU 1. On each archived TSDB (a read-only
# Prometheus on the unpacked archive): dashboard_check.py runs every
# panel's query over the job's time range and every rule's expression; then
# the RDMA and GPU-error alert expressions select the injected port / GPU
# and nothing else. Needs root. One line per check, then "N passed, N
# failed"; cleanup on every path.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" PROMQ="" FAULT_TREE="" DASHBOARD="" RULES=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --promq) PROMQ=$2; shift 2 ;;
    --fault-tree) FAULT_TREE=$2; shift 2 ;;
    --dashboard) DASHBOARD=$2; shift 2 ;;
    --rules) RULES=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --promq PATH --fault-tree PATH --dashboard JSON --rules YML" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$PROMQ" && -f "$FAULT_TREE" && -f "$DASHBOARD" && -f "$RULES" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
PROMQ=$(realpath "$PROMQ") FAULT_TREE=$(realpath "$FAULT_TREE") DASHBOARD=$(realpath "$DASHBOARD") RULES=$(realpath "$RULES")
CHECKER=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/dashboard_check.py
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-db-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-db-scratch-XXXXXX)
TREES=$STATE/trees
OUR_PIDS=()
teardown() {
  local pid
  for pid in "${OUR_PIDS[@]}"; do stop_pid "$pid"; done
  teardown_cluster jobmon-db
}
trap teardown EXIT

STEPS=150
echo "# devcluster up: 2 nodes, exporters reading $TREES/<job>/<node>/{proc,sys}"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "10.212.$((RANDOM % 200 + 20))" --plugin "$PLUGIN" \
  --timeout 90 --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$TREES/%j/%n/sys exporter_arg=--procfs=$TREES/%j/%n/proc"; then
  echo "FAIL - devcluster up"; echo "0 passed, 1 failed"; exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
# Checkpoints every 50 steps: the dirty/writeback and step-time panels see
# them; the trainer logs loss, grad norm, step time and throughput.
cat >"$JOBS/train.sh" <<EOS
#!/bin/bash
srun -l $FAKE_TRAINER --steps $STEPS --step-seconds 0.2 --compile-seconds 3 --seed 11 \
  --checkpoint-every 50 --checkpoint-seconds 2 --tensorboard-dir "\$JOBMON_DIAG_DIR/tensorboard/%n"
sleep 4  # a few more scrapes of the last step and the idle GPUs
EOS
chmod +x "$JOBS/train.sh"

declare -A job
submit() {  # submit NAME SCENARIO: a held 2-node job, its fault trees, released
  local name=$1 scenario=$2 id
  id=$(cd "$JOBS" && sbatch --parsable --hold -N2 --diag=on -o "$JOBS/$name-%j.log" "$JOBS/train.sh")
  id=${id%%;*}
  job[$name]=$id
  /usr/bin/python3 "$FAULT_TREE" run "$TREES/$id" --nodes node1,node2 --scenario "$scenario" \
    --log "$JOBS/$name-$id.log" --steps "$STEPS" --seconds 180 --ready "$SCRATCH/ready-$name" \
    --fault-at-step 60 --checkpoint-every 50 >"$SCRATCH/fault-$name.log" 2>&1 &
  OUR_PIDS+=($!)
}
submit rdma rdma
submit ecc ecc
for name in "${!job[@]}"; do
  check "fault tree of $name (job ${job[$name]}) built" wait_for 30 test -s "$SCRATCH/ready-$name"
  scontrol release "${job[$name]}"
done
all_archived() {
  local name
  for name in "${!job[@]}"; do
    [[ "$(checks field "$JOBS/jobmon-diag-${job[$name]}/manifest.json" state 2>/dev/null)" == archived ]] || return 1
  done
}
check "both jobs end and are archived within 3 minutes" wait_for 180 all_archived
for pid in "${OUR_PIDS[@]}"; do stop_pid "$pid"; done
OUR_PIDS=()

printf 'global:\n  scrape_interval: 1h\n' >"$SCRATCH/empty.yml"
PROM_PID="" URL="" T=""
open_tsdb() {  # open_tsdb NAME: a read-only Prometheus on NAME's unpacked archive
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
# rule_expr ALERT: the expression of ALERT in the rules file.
rule_expr() {
  /usr/bin/python3 -c 'import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        if r.get("alert") == sys.argv[2]: print(r["expr"])' "$RULES" "$1"
}
# series QUERY: the answer's label sets at T, space-separated, sorted. The
# alert expressions are asked over the job's last 10 minutes, every second
# (a subquery: at T the series are stale, the targets gone), and counted by
# the labels the alert names (every scraped series also has job, instance).
series() { "$PROMQ" "$URL" "$1" --time "${T:-0}" | sed 's/ [^ ]*$//' | tr '\n' ' ' | sed 's/ $//'; }

echo "# the dashboard's panels and the rules on job ${job[rdma]}'s TSDB"
open_tsdb rdma
# The job's own Prometheus has no cluster/slurm_job_id labels on its series
# (external labels): those variables resolve to nothing there, and "All".
/usr/bin/python3 "$CHECKER" "$DASHBOARD" "$URL" --rules "$RULES" --step 2 --rate-interval 10s \
  --optional-var cluster --optional-var slurm_job_id | tee "$SCRATCH/dashboard-check.log"
check "every panel's query returns series, every rule evaluates (dashboard_check.py)" \
  test "${PIPESTATUS[0]}" -eq 0
check "the host variable names both nodes" grep -q "variable host: 2 values \['node1', 'node2'\]" "$SCRATCH/dashboard-check.log"
check "JobmonRdmaPortDown's expression selected node2 bnxt_re1 port 1 only, during the job" test \
  "$(series "count by (host, device, port) (count_over_time(($(rule_expr JobmonRdmaPortDown))[10m:1s]))")" == '{device="bnxt_re1",host="node2",port="1"}'
check "JobmonGpuUncorrectableErrors's expression selected nothing in the RDMA job" test \
  -z "$(series "count_over_time(($(rule_expr JobmonGpuUncorrectableErrors))[10m:1s])")"

echo "# job ${job[ecc]}: uncorrectable errors on node2 GPU 1"
open_tsdb ecc
check "JobmonGpuUncorrectableErrors's expression selected node2 GPU 1 (umc) only, during the job" test \
  "$(series "count by (host, gpu, block) (count_over_time(($(rule_expr JobmonGpuUncorrectableErrors))[10m:1s]))")" == '{block="umc",gpu="1",host="node2"}'
check "JobmonRdmaPortDown's expression selected nothing in the ECC job" test \
  -z "$(series "count_over_time(($(rule_expr JobmonRdmaPortDown))[10m:1s])")"
/usr/bin/python3 "$CHECKER" "$DASHBOARD" "$URL" --step 2 --rate-interval 10s \
  --optional-var cluster --optional-var slurm_job_id >"$SCRATCH/dashboard-check-ecc.log"
check "every panel's query returns series on the ECC job's TSDB too" test $? -eq 0
grep '^FAIL' "$SCRATCH/dashboard-check-ecc.log"
stop_pid "$PROM_PID"
OUR_PIDS=()

# The central store's view: both jobs' samples with the labels remote_write
# adds (slurm_job_id, cluster, user), imported into one TSDB (promtool), the
# dashboard pointed at one job by its variables, the alert expressions
# keeping the jobs apart though both ran on node1 and node2.
echo "# a central store holding both jobs (slurm_job_id, cluster, user labels)"
inputs=()
for name in "${!job[@]}"; do
  promtool tsdb dump "$SCRATCH/tsdb-$name/prometheus" >"$SCRATCH/dump-$name" 2>"$SCRATCH/dump-$name.err"
  inputs+=("$SCRATCH/dump-$name:slurm_job_id=${job[$name]},cluster=dev,user=root")
done
range=$(/usr/bin/python3 "$(dirname "$CHECKER")/tsdb_relabel.py" "$SCRATCH/central.om" "${inputs[@]}")
check "both jobs' samples exported for the store" test -n "$range"
import_store() { promtool tsdb create-blocks-from openmetrics "$SCRATCH/central.om" "$SCRATCH/central" >"$1" 2>&1; }
check "promtool imports them" import_store "$SCRATCH/central-import.log"
port=$(free_loopback_port)
prometheus --config.file="$SCRATCH/empty.yml" --storage.tsdb.path="$SCRATCH/central" \
  --web.listen-address="127.0.0.1:$port" >"$SCRATCH/central.log" 2>&1 &
PROM_PID=$!
OUR_PIDS=("$PROM_PID")
URL=http://127.0.0.1:$port T=${range#* }
wait_for 30 "$PROMQ" "$URL" 'vector(1)' >/dev/null 2>&1
# shellcheck disable=SC2086 # range is "START END"
/usr/bin/python3 "$CHECKER" "$DASHBOARD" "$URL" --rules "$RULES" --step 2 --rate-interval 10s \
  --start ${range% *} --end ${range#* } --var "slurm_job_id=${job[rdma]}" --var cluster=dev \
  >"$SCRATCH/dashboard-check-central.log"
check "central store, job ${job[rdma]} selected: every panel returns series, every rule evaluates" test $? -eq 0
grep '^FAIL' "$SCRATCH/dashboard-check-central.log"
check "central store: the slurm_job_id variable names both jobs" \
  grep -qE "variable slurm_job_id: 2 values \['(${job[rdma]}|${job[ecc]})', '(${job[rdma]}|${job[ecc]})'\]" \
  "$SCRATCH/dashboard-check-central.log"
check "central store: JobmonRdmaPortDown selected job ${job[rdma]}'s node2 bnxt_re1 port 1 only" test \
  "$(series "count by (slurm_job_id, host, device, port) (count_over_time(($(rule_expr JobmonRdmaPortDown))[10m:1s]))")" \
  == "{device=\"bnxt_re1\",host=\"node2\",port=\"1\",slurm_job_id=\"${job[rdma]}\"}"
check "central store: JobmonGpuUncorrectableErrors selected job ${job[ecc]}'s node2 GPU 1 only" test \
  "$(series "count by (slurm_job_id, host, gpu) (count_over_time(($(rule_expr JobmonGpuUncorrectableErrors))[10m:1s]))")" \
  == "{gpu=\"1\",host=\"node2\",slurm_job_id=\"${job[ecc]}\"}"
stop_pid "$PROM_PID"
OUR_PIDS=()

finish
