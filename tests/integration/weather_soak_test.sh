#!/usr/bin/env bash
# The weather soak: slurm_job_monitor measured like a detector. On a 2-node
# dev cluster, healthy jobs and jobs that hang at a random step run side by
# side while production's weather is injected; the webhook receiver records
# every alert, and weather_soak.py prints the table (healthy job-hours
# watched, false firing alerts per class, hangs injected / caught, detection
# delay p50/p95/max against each job's bound, class accuracy, alerts
# delivered after the receiver's outage) and fails unless: no firing on a
# healthy job, every hang caught within its bound + one poll with the class
# it gets without weather, every alert delivered.
#
# Jobs of a wave (parameters drawn from the seed):
#   healthy  hf-eval          real PyTorch DDP (progress_train.py, gloo, CPU), HF Trainer's
#                             dicts and bar, evaluations and checkpoints announced in
#                             HF's own words (--announce: "***** Running Evaluation *****",
#                             "Saving model checkpoint to ...")
#            lightning-bursty Lightning's TQDMProgressBar through srun without -u and
#                             without PYTHONUNBUFFERED: the bar's \r updates wait in
#                             srun's line buffer, the log grows in bursts at each
#                             validation ("Validation DataLoader 0") and epoch end
#            megatron-sparse  Megatron's training_log every 10 iterations (~10 s apart),
#                             evaluation block and checkpoint pauses
#            ft-ckpt          the fake trainer (--diag, fake GPU sysfs): compile phase,
#                             checkpoint pauses of 3-5 s
#   hangs    ft-busywait      fake trainer --hang-at N: GPUs busy at low power
#                             (expected hang/busy-wait)
#            rank-asleep      one rank of a real DDP job sleeps before step G (a family
#                             drawn from plain-step-pause, logging-epoch-iter, bracketed,
#                             torchtitan); no --diag (expected hang)
#            eval-hang        one rank sleeps halfway through the evaluation that follows
#                             step G, after HF's announcement (expected hang)
#            rank-d-state     one rank in uninterruptible sleep (D, wchan kernel_clone:
#                             progress_train.py --hang-kind d-state), --diag so the
#                             exporters see it (expected hang/io-wait)
# Weather of a wave, at drawn times: a competing CPU-bound process (bounded
# by timeout, killed by pid), slow I/O (a writer fsyncing 4 MiB blocks on
# the filesystem of the logs and the state database), a SIGKILL of the
# daemon and its restart, the webhook receiver stopped (the outbox must
# deliver afterwards), slurmctld stopped with a SIGKILL and restart of the
# daemon inside the outage. Not injected (not possible on the dev cluster):
# CPU contention through the job's cgroup (TaskPlugin=task/none: jobs have
# no cgroup of their own; the competing process shares the host's CPUs with
# every node).
#
#   weather_soak_test.sh --devcluster PATH --plugin SO --fake-trainer PATH --monitor PATH
#                        --jobmon PATH --receiver PY [--long] [--no-weather]
#
# Short mode (default, ctest weather_soak_live): one wave of 150 s, about 4
# minutes in all. --long (or WEATHER_MODE=long; ctest weather_soak_bench,
# label bench): WEATHER_WAVES waves (default 10) of 240 s, about 50 minutes.
# --no-weather: the same jobs and hangs without weather, to see each hang's
# class in calm conditions. WEATHER_SEED=N replays a run's draws (printed
# first). WEATHER_KEEP=DIR keeps the schedule, the alerts and the daemon's
# log. Needs root; everything it started is stopped, even on failure.
set -euo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" MONITOR="" JOBMON="" RECEIVER=""
MODE=${WEATHER_MODE:-short} WEATHER=on
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    --receiver) RECEIVER=$2; shift 2 ;;
    --long) MODE=long; shift ;;
    --no-weather) WEATHER=off; shift ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --monitor PATH --jobmon PATH --receiver PY [--long] [--no-weather]" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$MONITOR" && -x "$JOBMON" && -f "$RECEIVER" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
MONITOR=$(realpath "$MONITOR") JOBMON=$(realpath "$JOBMON") RECEIVER=$(realpath "$RECEIVER")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
SOAK=$HERE/weather_soak.py
export CHECKS  # for the helpers run under bash -c
TRAIN=$(realpath "$HERE/../fixtures/real/progress/progress_train.py")
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed as d, tqdm; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "FAIL - $PY has torch with gloo and tqdm (scripts/install-deps.sh installs python3-torch python3-tqdm)"; exit 1; }

# The subnet is drawn before the seed takes over $RANDOM: 10.231.x is this
# script's alone (tests/integration/CMakeLists.txt).
SUBNET=10.231.$((RANDOM % 200 + 20))
SEED=${WEATHER_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$SEED
if [[ $MODE == long ]]; then
  WAVES=${WEATHER_WAVES:-10} WAVE_S=240
else
  WAVES=1 WAVE_S=150
fi
TRAIN_S=$((WAVE_S - 30))  # a healthy job's training time: it ends within its wave
POLL=1 K=5 MIN_STALL=10
echo "# weather soak: seed $SEED (WEATHER_SEED=$SEED replays it), $MODE mode, $WAVES wave(s) of ${WAVE_S}s, weather $WEATHER"

STATE=$(mktemp -d /tmp/jobmon-soak-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-soak-scratch-XXXXXX)
MONITOR_PID="" HOOK_PID="" WATCH_PID="" HOG_PID="" IO_PID="" CTLD_DOWN=0 JOBS=""
ALL_JOBS=()

teardown() {
  set +e
  trap - EXIT
  stop_pid "$MONITOR_PID"
  stop_pid "$HOOK_PID"
  stop_pid "$WATCH_PID"
  stop_pid "$HOG_PID"
  stop_pid "$IO_PID"
  ((CTLD_DOWN)) && "$DEVCLUSTER" ctld-start --state "$STATE" >/dev/null 2>&1
  # A rank in D state waits for its child, which waits for a writer of the
  # FIFO: a writer that opens and closes it ends both waits (bounded).
  local f id
  for f in "${JOBS:-/nonexistent}"/*.fifo; do
    # shellcheck disable=SC2016 # expanded by the inner bash
    [[ -p "$f" ]] && timeout 2 bash -c 'exec 3>"$1"' _ "$f" 2>/dev/null
  done
  for id in "${ALL_JOBS[@]}"; do scancel "$id" 2>/dev/null; done
  ((${#ALL_JOBS[@]})) && wait_for 30 bash -c "! squeue -h 2>/dev/null | grep -q ."
  if [[ -n ${WEATHER_KEEP:-} ]]; then
    mkdir -p "$WEATHER_KEEP" && cp -a "$SCRATCH"/*.jsonl "$SCRATCH"/*.log "$SCRATCH"/*.toml "$WEATHER_KEEP"/ 2>/dev/null
  fi
  teardown_cluster jobmon-soak
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "# devcluster up: 2 nodes on $SUBNET.0/24"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%j-%n"; then
  echo "FAIL - devcluster up"
  failed=1
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
CONF=$SCRATCH/jobmon.toml DB=$SCRATCH/monitor.db MLOG=$SCRATCH/monitor.log
NOTIFY=$SCRATCH/notify.jsonl HOOK_LOG=$SCRATCH/webhook.jsonl SCHED=$SCRATCH/schedule.jsonl
SPECS=$SCRATCH/watch.specs
MPORT=$(free_loopback_port) HOOK_PORT=$(free_loopback_port)
: >"$SPECS"

# The monitor's configuration, in one place: the stall rule's k, min_stall
# and grace, the poll. Test-scale thresholds (production: poll 10 s,
# min_stall 60 s), so that a hang is judged within a wave.
write_config() {
  cat >"$CONF" <<EOF
[monitor]
jobmon_binary = "$JOBMON"
cluster = "soak"
state_db = "$DB"
api_socket = "$SCRATCH/monitor.sock"
poll_interval = "${POLL}s"
slurm_poll_interval = "2s"
slurm_timeout = "3s"
slurm_retries = 2
slurm_outage_alert = "20s"
scrape_timeout = "1s"
stale_after = "4s"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$NOTIFY"
diagnose_at_end = false
[monitor.select]
name_regex = "soak-.*"
[stall]
k = $K
min_stall = "${MIN_STALL}s"
startup_grace = "120s"
first_checkpoint_grace = "20s"
# A hang inside a job's first evaluation is caught within a wave.
first_phase_grace = "30s"
[alerts]
max_backoff = "4s"
[[alerts.webhook]]
name = "hook"
url = "http://127.0.0.1:$HOOK_PORT/hook"
EOF
}

# record KEY=VALUE | KEY:=JSON ...: one JSON line of the schedule.
record() {
  "$PY" - "$@" >>"$SCHED" <<'EOP'
import json, sys
d = {}
for a in sys.argv[1:]:
    k, _, v = a.partition("=")
    if k.endswith(":"):
        d[k[:-1]] = json.loads(v)
        continue
    try:
        d[k] = int(v)
    except ValueError:
        try:
            d[k] = float(v)
        except ValueError:
            d[k] = v
print(json.dumps(d))
EOP
}
now_s() { echo "$EPOCHREALTIME"; }
# rand VAR LO HI: an integer drawn from the seed (no subshell, so the draws
# stay in order).
rand() { printf -v "$1" '%d' $(($2 + RANDOM % ($3 - $2 + 1))); }

start_monitor() {
  "$MONITOR" --config "$CONF" >>"$MLOG" 2>&1 &
  MONITOR_PID=$!
}
start_receiver() {
  "$PY" "$RECEIVER" --port "$HOOK_PORT" --log "$HOOK_LOG" &
  HOOK_PID=$!
}
write_config
start_receiver
start_monitor
"$PY" "$SOAK" watch "$SPECS" &
WATCH_PID=$!
RUN_T0=$(now_s)
record type=run seed="$SEED" mode="$MODE" waves="$WAVES" weather="$WEATHER" poll="$POLL" k="$K" \
  min_stall="$MIN_STALL" started="$RUN_T0" monitor="$MONITOR"
if ! wait_for 15 bash -c "$(declare -f checks); checks http-get http://127.0.0.1:$MPORT/metrics | grep -q jobmon_monitor_polls_total"; then
  echo "FAIL - the daemon serves /metrics"
  failed=1
  exit 1
fi

# submit_torch WAVE LABEL PORT DIAG(0|1) UNBUFFERED(0|1) ARGS...: a 2-node
# real DDP job (one task per node, srun, gloo), the batch script a user
# would write; prints its id.
submit_torch() {
  local wave=$1 label=$2 port=$3 diag=$4 unbuf=$5 name
  shift 5
  name=soak-w$wave-$label
  {
    cat <<'EOS'
#!/bin/bash
first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR=$(scontrol show node "$first" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
EOS
    echo "export MASTER_PORT=$port GLOO_SOCKET_IFNAME=eth0"
    if ((unbuf)); then echo "export PYTHONUNBUFFERED=1"; fi
    echo "srun --kill-on-bad-exit=1 $PY $TRAIN $*"
  } >"$JOBS/$name.sbatch"
  local diag_opt=()
  if ((diag)); then diag_opt=(--diag=on); fi
  sbatch --parsable --no-requeue -N 2 --ntasks-per-node=1 -t 30 "${diag_opt[@]}" -J "$name" \
    -o "$JOBS/$name.log" -D "$JOBS" "$JOBS/$name.sbatch" | tr -cd 0-9
}
# submit_fake WAVE LABEL TRAINER-ARGS...: a 2-node --diag=on fake-trainer
# job with fake GPU sysfs trees; prints its id.
submit_fake() {
  local wave=$1 label=$2 name
  shift 2
  name=soak-w$wave-$label
  (cd "$JOBS" && sbatch --parsable --no-requeue -N2 -t 30 --diag=on -J "$name" -o "$JOBS/$name.log" \
    --wrap "srun -K0 -l $FAKE_TRAINER --gpu-sysfs $JOBS/gpu-%j-%n --gpu-interval 0.5 --seed $((wave + 10)) $*") |
    tr -cd 0-9
}

# One weather action, run when due (the main shell, so that the daemon's
# pid stays known). Each start and end is recorded with its wall time.
weather() {
  local action=$1 arg=${2:-}
  case "$action" in
    cpu-hog)
      timeout "$arg" "$PY" -c 'while True: pass' &
      HOG_PID=$!
      record type=weather what=cpu-hog phase=start at="$(now_s)" detail="one CPU-bound process for ${arg}s (pid $HOG_PID; the host's 2 CPUs run both nodes)" ;;
    cpu-hog-end)
      stop_pid "$HOG_PID" || true
      HOG_PID=""
      record type=weather what=cpu-hog phase=end at="$(now_s)" ;;
    slow-io)
      # shellcheck disable=SC2016 # Python's own text
      timeout "$arg" "$PY" -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
block = os.urandom(4 << 20)
while True:
    for _ in range(16):  # 64 MiB, then over again
        os.write(fd, block)
        os.fsync(fd)
    os.lseek(fd, 0, os.SEEK_SET)' "$SCRATCH/slow-io.bin" &
      IO_PID=$!
      record type=weather what=slow-io phase=start at="$(now_s)" detail="4 MiB writes + fsync for ${arg}s (pid $IO_PID) beside the logs and the state db" ;;
    slow-io-end)
      stop_pid "$IO_PID" || true
      IO_PID=""
      rm -f "$SCRATCH/slow-io.bin"
      record type=weather what=slow-io phase=end at="$(now_s)" ;;
    monitor-kill)
      kill -KILL "$MONITOR_PID" 2>/dev/null || true
      wait "$MONITOR_PID" 2>/dev/null || true
      record type=weather what=monitor-sigkill phase=start at="$(now_s)" detail="$arg" ;;
    monitor-start)
      start_monitor
      record type=weather what=monitor-sigkill phase=end at="$(now_s)" detail="restarted (pid $MONITOR_PID)" ;;
    receiver-stop)
      stop_pid "$HOOK_PID" || true
      HOOK_PID=""
      record type=weather what=receiver-outage phase=start at="$(now_s)" ;;
    receiver-start)
      start_receiver
      record type=weather what=receiver-outage phase=end at="$(now_s)" ;;
    ctld-stop)
      "$DEVCLUSTER" ctld-stop --state "$STATE" </dev/null >/dev/null 2>&1 || true
      CTLD_DOWN=1
      record type=weather what=controller-outage phase=start at="$(now_s)" ;;
    ctld-start)
      "$DEVCLUSTER" ctld-start --state "$STATE" </dev/null >/dev/null 2>&1 || true
      CTLD_DOWN=0
      record type=weather what=controller-outage phase=end at="$(now_s)" ;;
  esac
}

# plan_weather PLAN: the wave's weather, "OFFSET ACTION [ARG]" lines, times
# drawn from the seed; every outage ends within the wave. Drawn with
# --no-weather too (then left unused), so that every wave's jobs and hangs
# are the same draws as with weather.
plan_weather() {
  local plan=$1 t d
  : >"$plan"
  local s=$((WAVE_S * 100 / 150))  # the short wave's offsets, stretched to the wave
  rand t $((10 * s / 100)) $((70 * s / 100)); rand d $((25 * s / 100)) $((40 * s / 100))
  printf '%s cpu-hog %s\n%s cpu-hog-end\n' "$t" "$d" $((t + d)) >>"$plan"
  rand t $((15 * s / 100)) $((75 * s / 100)); rand d $((20 * s / 100)) $((30 * s / 100))
  printf '%s slow-io %s\n%s slow-io-end\n' "$t" "$d" $((t + d)) >>"$plan"
  rand t $((25 * s / 100)) $((60 * s / 100))
  printf '%s monitor-kill while-training\n%s monitor-start\n' "$t" $((t + 2)) >>"$plan"
  rand t $((35 * s / 100)) $((70 * s / 100)); rand d $((25 * s / 100)) $((35 * s / 100))
  printf '%s receiver-stop\n%s receiver-start\n' "$t" $((t + d)) >>"$plan"
  rand t $((85 * s / 100)) $((95 * s / 100)); rand d $((35 * s / 100)) $((45 * s / 100))
  printf '%s ctld-stop\n%s monitor-kill during-controller-outage\n%s monitor-start\n%s ctld-start\n' \
    "$t" $((t + 12)) $((t + 15)) $((t + d)) >>"$plan"
  if [[ $WEATHER != on ]]; then : >"$plan"; fi
}

# add_job ID WAVE LABEL KIND FAMILY DIAG STEP_S LOG_INTERVAL [HANG-JSON]
add_job() {
  ALL_JOBS+=("$1")
  WAVE_JOBS+=("$1")
  record type=job job_id="$1" wave="$2" label="$3" kind="$4" family="$5" diag="$6" step_seconds="$7" \
    log_interval="$8" log="$JOBS/soak-w$2-$3.log" submitted="$(now_s)" hang:="${9:-null}"
  echo "#   job $1: soak-w$2-$3 ($5)"
}
hang_json() {  # hang_json KIND EXPECTED INJECT_FILE
  printf '{"kind": "%s", "expect": "%s", "inject_file": "%s"}' "$1" "$2" "$3"
}

run_wave() {
  local w=$1 id s n e g fam li hang_at ckpt
  local base=$((29700 + w * 20))
  WAVE_JOBS=() HANG_JOBS=() HEALTHY_JOBS=()
  echo "# wave $w: submitting"
  # Healthy: HF Trainer with its evaluation and checkpoint announcements.
  rand s 600 900
  n=$((TRAIN_S * 1000 / (s + 175) / 20 * 20))
  id=$(submit_torch "$w" hf-eval $((base + 1)) 0 1 --format hf-dicts --announce --epochs 1 --steps-per-epoch "$n" \
    --step-sleep "0.$s" --log-interval 10 --val-every 20 --val-sleep 0.2 --ckpt-every 40 --ckpt-pause 3 \
    --ckpt-dir "$JOBS/ckpt-w$w-hf" --seed "$((SEED % 1000 + w))")
  add_job "$id" "$w" hf-eval torch hf-dicts 0 "0.$s" 10
  HEALTHY_JOBS+=("$id")
  sleep 2
  # Healthy: Lightning's bar through srun, bursty.
  rand s 400 600
  e=$((TRAIN_S * 1000 / (20 * s + 2000)))
  id=$(submit_torch "$w" lightning-bursty $((base + 3)) 0 0 --format lightning-bar --epochs "$e" --steps-per-epoch 20 \
    --step-sleep "0.$s" --val-epoch --val-sleep 0.1 --ckpt-every 40 --ckpt-pause 2 --ckpt-dir "$JOBS/ckpt-w$w-lt")
  add_job "$id" "$w" lightning-bursty torch lightning-bar 0 "0.$s" 20
  HEALTHY_JOBS+=("$id")
  sleep 2
  # Healthy: Megatron's sparse training_log.
  rand s 800 999
  n=$((TRAIN_S * 1000 / (s + 70) / 10 * 10))
  id=$(submit_torch "$w" megatron-sparse $((base + 5)) 0 1 --format megatron-interval --epochs 1 --steps-per-epoch "$n" \
    --step-sleep "0.$s" --log-interval 10 --val-every 50 --ckpt-every 60 --ckpt-pause 3 --ckpt-dir "$JOBS/ckpt-w$w-mg")
  add_job "$id" "$w" megatron-sparse torch megatron-interval 0 "0.$s" 10
  HEALTHY_JOBS+=("$id")
  sleep 2
  # Healthy: the fake trainer with checkpoint pauses (GPU evidence).
  rand s 400 600
  rand ckpt 3 5
  n=$(((TRAIN_S - 5) * 1000 / (s + ckpt * 1000 / 30)))
  id=$(submit_fake "$w" ft-ckpt --steps "$n" --step-seconds "0.$s" --compile-seconds 5 --checkpoint-every 30 \
    --checkpoint-seconds "$ckpt")
  add_job "$id" "$w" ft-ckpt fake maxtext 1 "0.$s" 1
  HEALTHY_JOBS+=("$id")
  sleep 1
  # Hang: busy-wait (the fake trainer stops stepping at N, GPUs busy at low power).
  rand hang_at 60 110
  id=$(submit_fake "$w" ft-busywait --steps 2000 --step-seconds 0.5 --hang-at "$hang_at")
  add_job "$id" "$w" ft-busywait fake maxtext 1 0.5 1 \
    "$(hang_json busy-wait hang/busy-wait "$JOBS/soak-w$w-ft-busywait.inject")"
  printf '%s\t%s\t%s\n' "$JOBS/soak-w$w-ft-busywait.inject" "$JOBS/soak-w$w-ft-busywait.log" \
    "^0: completed step: $((hang_at - 1))," >>"$SPECS"
  HANG_JOBS+=("$id")
  sleep 1
  # Hang: a rank asleep, in a family drawn from four.
  local fams=(plain-step-pause:1 logging-epoch-iter:1 bracketed:5 torchtitan:10)
  rand n 0 3
  fam=${fams[n]%%:*} li=${fams[n]##*:}
  rand s 400 700
  rand g 40 90
  id=$(submit_torch "$w" rank-asleep $((base + 7)) 0 1 --format "$fam" --epochs 1 --steps-per-epoch 2000 \
    --step-sleep "0.$s" --log-interval "$li" --val-every 50 --ckpt-every 60 --ckpt-pause 2 \
    --ckpt-dir "$JOBS/ckpt-w$w-as" --hang-rank 1 --hang-at-step "$g" --hang-file "$JOBS/soak-w$w-rank-asleep.hang")
  add_job "$id" "$w" rank-asleep torch "$fam" 0 "0.$s" "$li" \
    "$(hang_json rank-asleep hang "$JOBS/soak-w$w-rank-asleep.hang")"
  HANG_JOBS+=("$id")
  sleep 2
  # Hang: inside an evaluation, after HF's announcement.
  rand s 500 700
  rand g 2 4
  id=$(submit_torch "$w" eval-hang $((base + 9)) 0 1 --format hf-dicts --announce --epochs 1 --steps-per-epoch 2000 \
    --step-sleep "0.$s" --log-interval 10 --val-every 20 --val-sleep 0.2 --ckpt-every 40 --ckpt-pause 3 \
    --ckpt-dir "$JOBS/ckpt-w$w-ev" --hang-rank 1 --hang-at-step $((g * 20)) --hang-in-eval \
    --hang-file "$JOBS/soak-w$w-eval-hang.hang")
  add_job "$id" "$w" eval-hang torch hf-dicts 0 "0.$s" 10 \
    "$(hang_json eval-hang hang "$JOBS/soak-w$w-eval-hang.hang")"
  HANG_JOBS+=("$id")
  sleep 2
  # Hang: a rank in D state (--diag: the exporters report the job's processes).
  fam=plain-step-pause
  rand n 0 1
  if ((n)); then fam=logging-epoch-iter; fi
  rand s 400 700
  rand g 40 90
  mkfifo "$JOBS/soak-w$w-d-state.fifo"
  id=$(submit_torch "$w" rank-d-state $((base + 11)) 1 1 --format "$fam" --epochs 1 --steps-per-epoch 2000 \
    --step-sleep "0.$s" --log-interval 1 --val-every 50 --ckpt-every 60 --ckpt-pause 2 \
    --ckpt-dir "$JOBS/ckpt-w$w-ds" --hang-rank 1 --hang-at-step "$g" --hang-kind d-state \
    --hang-fifo "$JOBS/soak-w$w-d-state.fifo" --hang-file "$JOBS/soak-w$w-rank-d-state.hang")
  add_job "$id" "$w" rank-d-state torch "$fam" 1 "0.$s" 1 \
    "$(hang_json d-state hang/io-wait "$JOBS/soak-w$w-rank-d-state.hang")"
  HANG_JOBS+=("$id")

  # The weather, as planned, while the jobs run.
  local t0 plan=$SCRATCH/weather-w$w.plan t action arg
  t0=${EPOCHREALTIME%.*}
  plan_weather "$plan"
  echo "# wave $w: weather plan (seconds from now): $(sort -n "$plan" | tr '\n' ';')"
  while read -r t action arg; do
    while ((${EPOCHREALTIME%.*} < t0 + t)); do sleep 0.2; done
    echo "# wave $w: +$((${EPOCHREALTIME%.*} - t0))s $action $arg"
    weather "$action" "$arg"
  done < <(sort -n "$plan")
  while ((${EPOCHREALTIME%.*} < t0 + WAVE_S)); do sleep 0.5; done

  # The wave's end: the hung jobs cancelled, the healthy ones finish.
  echo "# wave $w: cancelling the hung jobs, waiting for the healthy ones"
  for f in "$JOBS"/soak-w"$w"-*.fifo; do
    # shellcheck disable=SC2016 # expanded by the inner bash
    [[ -p "$f" ]] && { timeout 2 bash -c 'exec 3>"$1"' _ "$f" 2>/dev/null || true; }
  done
  for id in "${HANG_JOBS[@]}"; do scancel "$id" 2>/dev/null || true; done
  for id in "${HEALTHY_JOBS[@]}"; do
    if ! wait_for 60 job_done "$id"; then
      echo "#   healthy job $id still running ${WAVE_S}s + 60s after its wave began: cancelled"
      record type=cut job_id="$id" at="$(now_s)"
      scancel "$id" 2>/dev/null || true
    fi
  done
  for id in "${WAVE_JOBS[@]}"; do wait_for 30 job_done "$id" || true; done
  counter_grows 30 "http://127.0.0.1:$MPORT/metrics" jobmon_monitor_polls_total 5 || true
  local line st en state
  for id in "${WAVE_JOBS[@]}"; do
    line=$(scontrol -o show job "$id" 2>/dev/null || true)
    st=$(sed -n 's/.* StartTime=\([^ ]*\).*/\1/p' <<<"$line")
    en=$(sed -n 's/.* EndTime=\([^ ]*\).*/\1/p' <<<"$line")
    state=$(sed -n 's/.* JobState=\([^ ]*\).*/\1/p' <<<"$line")
    record type=times job_id="$id" start="$(date -d "$st" +%s 2>/dev/null || echo 0)" \
      end="$(date -d "$en" +%s 2>/dev/null || echo 0)" state="${state:-unknown}"
  done
}

for ((wave = 1; wave <= WAVES; wave++)); do
  run_wave "$wave"
done
# Every alert still in the outbox reaches the receiver (max_backoff 4 s).
sleep 8
record type=end at="$(now_s)"
echo "# the daemon's view: incidents (job|class|state|close reason|summary)"
checks sql "$DB" "SELECT job_id, class, state, close_reason, substr(summary, 1, 160) FROM incidents ORDER BY id" |
  sed 's/^/#   /' || true
if "$PY" "$SOAK" report --schedule "$SCHED" --webhook "$HOOK_LOG" --notify "$NOTIFY"; then
  passed=1
else
  failed=1
fi
echo "# weather soak took ${SECONDS}s up to its teardown (seed $SEED)"
finish
