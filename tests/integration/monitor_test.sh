#!/usr/bin/env bash
# slurm_job_monitor on the real dev cluster (Debian's slurmctld, slurmd,
# munge, Prometheus; 2 nodes in network namespaces), with --diag=on jobs of
# the fake trainer and its fake GPU sysfs trees. The daemon scrapes the
# jobs' exporters over the namespaces' private addresses. Scenarios:
# healthy with compile and checkpoint pauses (no incident), busy-wait hang,
# node death, heartbeat false and true positive, slow run, daemon restart
# mid-incident, controller stopped for a minute, a log-only watched job,
# jobmon status/list/watch, SIGHUP, an unprivileged user's log replaced by a
# FIFO and by a symlink to a root-only file, SIGTERM. Needs root. One line per
# check, then "N passed, N failed"; everything it started is stopped even
# on failure.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" MONITOR="" JOBMON=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --monitor PATH --jobmon PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$MONITOR" && -x "$JOBMON" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
MONITOR=$(realpath "$MONITOR") JOBMON=$(realpath "$JOBMON")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-mon-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-mon-scratch-XXXXXX)
# The daemon's socket API, in a directory the test user reaches (SCRATCH is 0700).
API=$(mktemp -d /tmp/jobmon-mon-api-XXXXXX) && chmod 0755 "$API"
SUBNET=10.206.$((RANDOM % 200 + 20))
MONITOR_PID=""

teardown() {
  stop_pid "$MONITOR_PID"
  [[ -n "${TEST_USER:-}" ]] && userdel "$TEST_USER" 2>/dev/null
  teardown_cluster jobmon-mon
  rm -rf "$API"
}
trap teardown EXIT

echo "# devcluster up: 2 nodes on $SUBNET.0/24"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%j-%n"; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
JOBS=$DEVCLUSTER_JOBS
DB=$SCRATCH/monitor.db
ALERTS=$SCRATCH/alerts.jsonl
MLOG=$SCRATCH/monitor.log
MPORT=$(free_loopback_port)
POLL=1 MIN_STALL=8
export DB ALERTS JOBS MPORT CHECKS  # for the helpers run under bash -c

write_config() {  # write_config [extra TOML for [monitor]]
  cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
jobmon_binary = "$JOBMON"
cluster = "devcluster"
state_db = "$DB"
poll_interval = "${POLL}s"
slurm_poll_interval = "2s"
slurm_timeout = "3s"
slurm_retries = 2
scrape_timeout = "1s"
stale_after = "4s"
# The slow job's slowdown lasts 24 s: a window of seconds here (minutes
# in production, the shipped default).
slowdown_window = "6s"
slowdown_min_steps = 10
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$ALERTS"
api_socket = "$API/monitor.sock"
$1
[stall]
k = 5
min_stall = "${MIN_STALL}s"
startup_grace = "60s"
first_checkpoint_grace = "20s"
EOF
}
start_monitor() {
  "$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
  MONITOR_PID=$!
}
write_config ""
start_monitor
metrics() { checks http-get "http://127.0.0.1:$MPORT/metrics"; }
check "the daemon serves /metrics on 127.0.0.1" wait_for 10 bash -c "$(declare -f metrics checks); metrics | grep -q '^jobmon_monitor_jobs_tracked'"
listeners_of() { ss -ltnpH | checks listen-addresses --pid "$1"; }  # listeners_of PID: its local addresses
check "its listener is on loopback only" bash -c \
  "$(declare -f listeners_of checks); listeners_of $MONITOR_PID | grep -qv '^127\.0\.0\.1:' && exit 1; listeners_of $MONITOR_PID | grep -q ."

# sql "SELECT ...": rows of the daemon's database, '|' separated.
sql() { checks sql "$DB" "$1"; }
incidents() { sql "SELECT class, state FROM incidents WHERE job_id=$1 ORDER BY id"; }
has_incident() { incidents "$1" | grep -q "^$2|"; }
alert_count() {  # alert_count JOB STATUS [CLASS]
  checks count "$ALERTS" "job_id == $1" "status == $2" ${3:+"class == $3"}
}
evidence_of() {  # evidence_of JOB CLASS: evidence lines and summary of that incident
  sql "SELECT summary, evidence_json FROM incidents WHERE job_id=$1 AND class='$2'"
}
submit() {  # submit NAME TRAINER-ARGS...: a 2-node --diag=on job; prints its id
  local name=$1
  shift
  (cd "$JOBS" && sbatch --parsable -N2 --diag=on -J "$name" -o "$JOBS/%j-$name.log" \
    --wrap "srun -K0 -l $FAKE_TRAINER --gpu-sysfs $JOBS/gpu-%j-%n --gpu-interval 0.5 --seed 11 $*") |
    tr -cd 0-9
}
log_of() { echo "$JOBS/$1-$2.log"; }
tracked() { [[ -n "$(sql "SELECT job_id FROM jobs WHERE job_id=$1")" ]]; }
# kill_node2 JOB: node2's trainer (SIGKILL) and its exporter's supervisor,
# both started for this job (by the test's sbatch and the job's prolog).
kill_node2() {
  local job=$1 pid
  for pid in $(pgrep -x fake-trainer); do
    local env
    env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null)
    # Job ids repeat across the dev clusters that run side by side.
    if grep -qx "SLURM_JOB_ID=$job" <<<"$env" && grep -qx 'SLURM_PROCID=1' <<<"$env" &&
      grep -qxF "SLURM_CONF=$SLURM_CONF" <<<"$env"; then
      echo "# job $job: SIGKILL to node2's trainer (pid $pid)"
      kill -KILL "$pid"
    fi
  done
  read -r pid _ <"$STATE/jobmon-run/node2/$job/exporter.pid" &&
    echo "# job $job: SIGKILL to node2's exporter supervisor (pid $pid)" && kill -KILL "$pid"
}

echo "# wave 1: healthy, busy-wait hang, heartbeat false positive, slow, log-only"
healthy=$(submit healthy --steps 70 --step-seconds 0.3 --compile-seconds 4 --checkpoint-every 10 \
  --checkpoint-seconds 1.5 --sync-dir "$JOBS/sync-%j")
hang=$(submit hang --steps 400 --step-seconds 0.3 --hang-at 30)
hbfp=$(submit hbfp --steps 400 --step-seconds 0.3 --heartbeat-timeout-at 45 --heartbeat-timeout-seconds 10)
slow=$(submit slow --steps 130 --step-seconds 0.2 --slow-from 50 --slow-factor 1.5)
plain=$(cd "$JOBS" && sbatch --parsable -N1 -J plain -o "$JOBS/%j-plain.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 400 --step-seconds 0.3 --hang-at 20" | tr -cd 0-9)
# An array job: each task has its own id and writes its own log (%A_%a);
# task 1 is the one followed. Short, so it ends while the test runs.
array=$(cd "$JOBS" && sbatch --parsable -N1 -J arr --array=0-1 -o "$JOBS/arr-%A_%a.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 30 --step-seconds 0.2" | tr -cd 0-9)
task1=""
check "array: task 1 has a job id of its own" wait_for 20 bash -c \
  "[[ -n \"\$(squeue -h -t all -r -j ${array}_1 -o %A 2>/dev/null)\" ]]"
task1=$(squeue -h -t all -r -j "${array}_1" -o %A | head -1)
echo "# jobs: healthy=$healthy hang=$hang hbfp=$hbfp slow=$slow plain=$plain array=$array task1=$task1"
check "jobmon watch: the log-only job is requested" "$JOBMON" watch "$plain" --config "$SCRATCH/jobmon.toml"
check "jobmon watch: the array task too" "$JOBMON" watch "$task1" --config "$SCRATCH/jobmon.toml"
check "the --diag jobs are discovered from their manifests" wait_for 30 bash -c \
  "$(declare -f sql tracked checks); tracked $healthy && tracked $hang && tracked $hbfp && tracked $slow"
check "the watched job is tracked as 'watch'" wait_for 20 bash -c \
  "$(declare -f sql checks); [[ \"\$(sql 'SELECT source FROM jobs WHERE job_id=$plain')\" == watch ]]"

check "busy-wait: hang/busy-wait raised" wait_for 90 has_incident "$hang" hang/busy-wait
IFS='|' read -r latency last_step p99 summary < <(sql "SELECT i.opened_at - p.last_step_time, p.last_step, p.p99_interval, i.summary FROM incidents i JOIN progress p USING (job_id) WHERE i.job_id=$hang AND i.class='hang/busy-wait'")
# The threshold is the daemon's own, max(k x p99, min_stall): on a busy
# machine one late step raises the p99 above min_stall. The bound adds a
# poll and two of the daemon's longest cycles (checks.py stall-bound).
read -r stated bound < <(checks stall-bound "$summary" "$POLL" "http://127.0.0.1:$MPORT/metrics" 5 "$p99" "$MIN_STALL")
echo "# busy-wait detected ${latency}s after the last step ($last_step) was read; its stated threshold ${stated:-?}s (p99 ${p99}s), bound ${bound:-?}s"
check "busy-wait: the threshold it states is max(k x p99, min_stall)" test -n "$stated"
check "busy-wait: detected within that threshold + poll interval + two of its longest cycles" \
  checks compare "$latency" '<=' "${bound:-0}"
check "busy-wait: not before the threshold" checks compare "$latency" '>=' "${stated:-$MIN_STALL}"
check "busy-wait: the last step was 29" test "$last_step" = 29
ev=$(evidence_of "$hang" hang/busy-wait)
check "busy-wait: evidence gives node1's GPU util and power against its baseline" \
  grep -qE 'node1: GPU util 100%, power [0-9]+ W \([0-9]+% of its training baseline [0-9]+ W\)' <<<"$ev"
check "busy-wait: and node2's" \
  grep -qE 'node2: GPU util 100%, power [0-9]+ W \([0-9]+% of its training baseline [0-9]+ W\)' <<<"$ev"
check "busy-wait: one firing alert in the notifier file" test "$(alert_count "$hang" firing hang/busy-wait)" -eq 1

echo "# restart the daemon mid-incident (SIGKILL, as a crash)"
kill -KILL "$MONITOR_PID"
wait "$MONITOR_PID" 2>/dev/null
start_monitor
check "restarted daemon resumes the job from the store" wait_for 15 grep -q "job_restored job=$hang .*open_incident=hang/busy-wait" "$MLOG"
check "the restarted daemon runs 5 cycles" counter_grows 30 "http://127.0.0.1:$MPORT/metrics" jobmon_monitor_polls_total 5
check "restart: still one incident for the hang" test "$(incidents "$hang" | wc -l)" -eq 1
check "restart: still one firing alert" test "$(alert_count "$hang" firing)" -eq 1

check "heartbeat FP: heartbeat/false-positive raised" wait_for 60 has_incident "$hbfp" heartbeat/false-positive
ev=$(evidence_of "$hbfp" heartbeat/false-positive)
check "heartbeat FP: names the accused host node2" grep -q '"hosts":\["node2"\]' <<<"$ev"
# The job trained on pace until the accusation: scraped once a healthy
# interval for its baseline only (no utilization kept; docs/monitor.md).
check "heartbeat FP: TSDB values at accusation - timeout (10s)" \
  grep -qE 'node2 at accusation - timeout \(10s earlier\): exporter up, (GPU util [0-9]+%, )?power [0-9]+ W' <<<"$ev"
check "heartbeat FP: the log checklist's evidence lines" grep -q 'log: ' <<<"$ev"
check "heartbeat FP: the alert carries the triage report" bash -c \
  "grep '\"job_id\":$hbfp,' '$ALERTS' | grep '\"status\":\"firing\"' | grep -q 'Heartbeat-timeout checklist'"

check "slow: tgs-degradation reported" wait_for 60 has_incident "$slow" tgs-degradation
check "slow: no hang incident" bash -c "$(declare -f sql incidents checks); ! incidents $slow | grep -q '^hang'"
check "slow: the job completes" wait_for 60 job_done "$slow"

check "healthy: the job completes" wait_for 90 job_done "$healthy"
check "healthy (compile + checkpoint pauses 5x a step): zero incidents" test -z "$(incidents "$healthy")"
check "healthy: the daemon records the end (triage: completed)" wait_for 15 bash -c \
  "$(declare -f sql checks); [[ \"\$(sql 'SELECT final_status FROM jobs WHERE job_id=$healthy')\" == completed ]]"
ckpt=$(sql "SELECT longest_checkpoint_pause FROM progress WHERE job_id=$healthy")
echo "# healthy: longest checkpoint pause learned: ${ckpt}s"

check "log-only job: 'hang' raised without system evidence" wait_for 60 has_incident "$plain" hang
check "log-only: the summary says why there is no system evidence" bash -c \
  "$(declare -f sql evidence_of checks); evidence_of $plain hang | grep -q 'job without --diag'"

field() { checks field "$@"; }  # field FILE PATH...: values from a JSON report
check "array: task 1's own log is followed (arr-${array}_1.log)" wait_for 30 bash -c \
  "$(declare -f sql checks); [[ \"\$(sql 'SELECT log_path FROM jobs WHERE job_id=$task1')\" == $JOBS/arr-${array}_1.log ]]"
check "array: the task ends with Slurm's final state" wait_for 60 bash -c \
  "$(declare -f sql checks); [[ \"\$(sql 'SELECT slurm_state, ended_at IS NOT NULL FROM jobs WHERE job_id=$task1')\" == 'COMPLETED|1' ]]"
"$JOBMON" status "$task1" --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/status-array.json"
check "array: jobmon status says ended, Slurm COMPLETED" test \
  "$(field "$SCRATCH/status-array.json" state slurm_state)" = "ended COMPLETED"

echo "# jobmon status / list"
"$JOBMON" status "$hang" --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/status.json"
check "status --json: from the daemon, state incident, class hang/busy-wait" test \
  "$(field "$SCRATCH/status.json" source state class)" = "daemon incident hang/busy-wait"
check "status --json: root asked through the daemon's socket API" test \
  "$(field "$SCRATCH/status.json" daemon_source api_socket)" = "api $API/monitor.sock"
check "the API socket is 0666 in a 0755 directory" test "$(stat -c %a "$API/monitor.sock" "$API")" = "666
755"
check "status --json: last step 29, expected step beyond it, stall duration" \
  checks expect "$SCRATCH/status.json" 'progress.last_step == 29' 'progress.expected_step_now > 29' 'stall_seconds > 0'
check "status --json: Prometheus tunnel and the projection" \
  checks expect "$SCRATCH/status.json" 'prometheus.tunnel_command startswith ssh -N -L' 'projection.last_step == 29'
"$JOBMON" status "$hang" --config "$SCRATCH/jobmon.toml" >"$SCRATCH/status.txt"
check "status (text): incident with evidence, tunnel, projection table" bash -c \
  "grep -q 'hang/busy-wait \[open\]' $SCRATCH/status.txt && grep -q 'tunnel: ssh -N -L' $SCRATCH/status.txt && grep -q '| Steps completed (this run) |' $SCRATCH/status.txt"
"$JOBMON" status "$hang" --config "$SCRATCH/jobmon.toml" --db "$SCRATCH/none.db" --json >"$SCRATCH/status-log.json"
check "status without a daemon database: straight from the log, hanging" test \
  "$(field "$SCRATCH/status-log.json" source state progress.last_step)" = "log hanging 29"
"$JOBMON" list --config "$SCRATCH/jobmon.toml" >"$SCRATCH/list.txt"
check "list: the hung job with its incident" grep -qE "^$hang +hang .* hang/busy-wait\$" "$SCRATCH/list.txt"
"$JOBMON" list --all --json --config "$SCRATCH/jobmon.toml" >"$SCRATCH/list.json"
check "list --all --json: ended jobs too" \
  checks any "$SCRATCH/list.json" jobs "job_id == $healthy" 'ended == true'
check "status of an unknown job: exit 2 with a message" bash -c \
  "! '$JOBMON' status 999999 --config '$SCRATCH/jobmon.toml' 2>&1 >/dev/null | grep -q 'unknown' && exit 1; '$JOBMON' status 999999 --config '$SCRATCH/jobmon.toml' >/dev/null 2>&1; [[ \$? -eq 2 ]]"

scancel "$hang" "$hbfp" "$plain" 2>/dev/null
check "hang: cancelling the job closes its incident (ended) with a resolve" wait_for 30 bash -c \
  "$(declare -f alert_count checks); [[ \$(alert_count $hang resolved hang/busy-wait) -eq 1 ]]"

echo "# SIGHUP"
kill -HUP "$MONITOR_PID"
check "SIGHUP reloads the config" wait_for 5 grep -q 'config_reloaded' "$MLOG"
echo 'this is = = not toml' >>"$SCRATCH/jobmon.toml"
kill -HUP "$MONITOR_PID"
check "a broken config on SIGHUP is refused and the daemon keeps running" wait_for 5 bash -c \
  "grep -q 'config_reload_failed' '$MLOG' && kill -0 $MONITOR_PID"
write_config ""

echo "# wave 2: node death, heartbeat true positive, controller stopped for a minute"
death=$(submit death --steps 400 --step-seconds 0.3 --sync-dir "$JOBS/sync-%j" --collective-timeout 600)
hbtp=$(submit hbtp --steps 400 --step-seconds 0.3 --sync-dir "$JOBS/sync-%j" --collective-timeout 600 \
  --heartbeat-timeout-seconds 6)
steady=$(submit steady --steps 700 --step-seconds 0.3 --sync-dir "$JOBS/sync-%j")
echo "# jobs: death=$death hbtp=$hbtp steady=$steady"
at_step() { grep -q "^0: completed step: $2," "$(log_of "$1" "$3")" 2>/dev/null; }
check "node death / heartbeat TP jobs reach step 25" wait_for 90 bash -c \
  "$(declare -f at_step log_of); JOBS=$JOBS; at_step $death 25 death && at_step $hbtp 25 hbtp"
check "3 more cycles scrape both nodes at training power" \
  counter_grows 30 "http://127.0.0.1:$MPORT/metrics" jobmon_monitor_polls_total 3
kill_node2 "$death"
kill_node2 "$hbtp"
check "node death: hang/node-death raised" wait_for 60 has_incident "$death" hang/node-death
check "node death: it names node2 only" bash -c \
  "$(declare -f sql evidence_of checks); evidence_of $death hang/node-death | grep -q '\"hosts\":\[\"node2\"\]'"
check "heartbeat TP: heartbeat/true-positive raised" wait_for 60 has_incident "$hbtp" heartbeat/true-positive
check "heartbeat TP: names node2 and what the window saw" bash -c \
  "$(declare -f sql evidence_of checks); evidence_of $hbtp heartbeat/true-positive | grep -q 'node2 at the accusation: exporter'"

echo "# controller stopped while 'steady' trains, for 5 failed Slurm polls (past min_stall)"
"$DEVCLUSTER" ctld-stop --state "$STATE"
check "/metrics counts the failed Slurm polls" \
  counter_grows 90 "http://127.0.0.1:$MPORT/metrics" jobmon_monitor_slurm_poll_failures_total 5
check "the daemon warned that Slurm does not answer" grep -q 'slurm_unreachable' "$MLOG"
"$DEVCLUSTER" ctld-start --state "$STATE"
check "the daemon sees the controller again" wait_for 20 grep -q 'slurm_reachable_again' "$MLOG"
check "controller outage: no incident for the job that kept training" test -z "$(incidents "$steady")"
check "controller outage: the job was not taken for ended" test -z "$(sql "SELECT ended_at FROM jobs WHERE job_id=$steady")"
scancel "$death" "$hbtp" "$steady" 2>/dev/null
wait_for 60 bash -c "$(declare -f job_done); job_done $death && job_done $hbtp && job_done $steady"
# The hang job (cancelled in wave 1) has long been archived: its end-of-job
# diagnosis follows its incident through the outbox to the notifier file.
check "hang: the end-of-job diagnosis follows its incident (alert with diagnosis)" wait_for 60 bash -c \
  "$(declare -f checks); [[ \$(checks count \"\$ALERTS\" 'job_id == $hang' 'class == hang/busy-wait' 'diagnosis contains : ') -eq 1 ]]"
check "hang: jobmon status shows the diagnosis's verdict lines" bash -c \
  "'$JOBMON' status $hang --json --config '$SCRATCH/jobmon.toml' >'$SCRATCH/status-diag.json' && $(declare -f checks); checks field '$SCRATCH/status-diag.json' diagnosis | grep -Eq '^[a-z]+: [a-z-]+'"

echo "# wave 3: an unprivileged user turns the logs the daemon follows against it"
TEST_USER=jmmon$$
if useradd --system --no-create-home --shell /usr/sbin/nologin "$TEST_USER"; then
  as_user() { runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
  UDIR=$JOBS/user-$TEST_USER
  mkdir -p "$UDIR" && chown "$TEST_USER:" "$UDIR"
  SECRET=$SCRATCH/root-only-secret
  echo "0: completed step: 9999, seconds: 1.0 SECRET-$$" >"$SECRET" && chmod 0600 "$SECRET"
  user_job() {  # user_job NAME: a 1-node job of the test user that prints steps; its id
    (cd "$UDIR" && as_user sbatch --parsable -N1 -J "$1" -o "$UDIR/%j-$1.log" \
      --wrap "for i in \$(seq 0 600); do echo \"0: completed step: \$i, seconds: 0.3\"; sleep 0.3; done") |
      tr -cd 0-9
  }
  fifo_job=$(user_job fifo)
  link_job=$(user_job link)
  steady2=$(submit steady2 --steps 700 --step-seconds 0.3)
  echo "# jobs: fifo=$fifo_job link=$link_job steady2=$steady2 (user $TEST_USER)"
  "$JOBMON" watch "$fifo_job" --config "$SCRATCH/jobmon.toml" >/dev/null
  "$JOBMON" watch "$link_job" --config "$SCRATCH/jobmon.toml" >/dev/null
  check "user jobs: tracked from their logs" wait_for 30 bash -c \
    "$(declare -f sql tracked checks); tracked $fifo_job && tracked $link_job && tracked $steady2"
  step_of() { sql "SELECT last_step FROM progress WHERE job_id=$1"; }
  # Past step 0: the status below asks for progress, and a job read at its
  # first line has only step 0 (the check raced the jobs' start).
  check "user jobs: their logs are read (as the user)" wait_for 20 bash -c \
    "$(declare -f sql step_of checks); [[ \$(step_of $fifo_job) -gt 0 && \$(step_of $link_job) -gt 0 ]]"
  # The user sees their own jobs through the daemon's socket,
  # without the database (0640, the daemon's), and is refused others' jobs.
  install -m 0644 "$SCRATCH/jobmon.toml" "$API/user.toml"
  as_user "$JOBMON" status "$fifo_job" --config "$API/user.toml" --json >"$API/user-status.json" 2>"$API/user-status.err"
  check "a plain user: jobmon status of their own job, through the API" test \
    "$(field "$API/user-status.json" source daemon_source job_id)" = "daemon api $fifo_job"
  check "a plain user: their job's progress from the daemon" \
    checks expect "$API/user-status.json" 'progress.last_step > 0'
  as_user "$JOBMON" status "$steady2" --config "$API/user.toml" >/dev/null 2>"$API/user-other.err"
  user_rc=$?
  check "a plain user: another user's job is refused (exit 1) with a clear message" bash -c \
    "[[ $user_rc -eq 1 ]] && grep -q 'job $steady2 is not yours' '$API/user-other.err'"
  as_user "$JOBMON" list --all --json --config "$API/user.toml" >"$API/user-list.json"
  check "a plain user: jobmon list comes through the API" test "$(field "$API/user-list.json" source)" = api
  check "a plain user: jobmon list shows their two jobs only" test \
    "$(checks lines "$API/user-list.json" jobs | wc -l)" -eq 2
  check "a plain user: and their job is one of them" \
    checks any "$API/user-list.json" jobs "job_id == $fifo_job"
  as_user "$JOBMON" watch "$steady2" --config "$API/user.toml" >/dev/null 2>"$API/user-watch.err"
  user_rc=$?
  check "a plain user: watching another user's job is refused" bash -c \
    "[[ $user_rc -eq 1 ]] && grep -q 'is not yours' '$API/user-watch.err'"
  as_user "$JOBMON" list --db "$DB" --config "$API/user.toml" >/dev/null 2>&1
  user_rc=$?
  check "a plain user cannot read the database itself" test "$user_rc" -ne 0
  # The job keeps its open stdout; the path now names something else.
  as_user rm -f "$UDIR/$fifo_job-fifo.log" && as_user mkfifo "$UDIR/$fifo_job-fifo.log"
  as_user rm -f "$UDIR/$link_job-link.log" && as_user ln -s "$SECRET" "$UDIR/$link_job-link.log"
  check "FIFO log: refused with a warning, the daemon does not block" \
    wait_for 20 grep -q "log_unreadable job=$fifo_job .*FIFO" "$MLOG"
  check "symlink to a root-only file: refused" \
    wait_for 20 grep -q "log_unreadable job=$link_job .*symlink" "$MLOG"
  before=$(step_of "$steady2")
  check "the daemon keeps following the other job (past step $before)" \
    wait_for 20 bash -c "$(declare -f step_of sql checks); test \"\$(step_of $steady2)\" -gt ${before:-0}"
  check "the daemon still answers /metrics" bash -c "$(declare -f metrics checks); metrics | grep -q '^jobmon_monitor_jobs_tracked'"
  check "each refusal is warned once, not every cycle" test \
    "$(grep -c "log_unreadable job=$fifo_job " "$MLOG")" -eq 1
  check "the root-only file's content reached neither the database nor an alert" bash -c \
    "! grep -qa 'SECRET-$$' '$DB' '$DB-wal' '$ALERTS' '$MLOG' 2>/dev/null"
  check "and its step 9999 was never read" test "$(step_of "$link_job")" != 9999
  scancel "$fifo_job" "$link_job" "$steady2" 2>/dev/null
  wait_for 60 bash -c "$(declare -f job_done); job_done $fifo_job && job_done $link_job && job_done $steady2"
else
  echo "FAIL - useradd $TEST_USER"
  failed=$((failed + 1))
  TEST_USER=""
fi

echo "# wave 4: a daemon restarted as a hang began, with no baseline of its own (killed before"
echo "# it had saved one): the class from the job's own Prometheus, through its head node's exporter"
late=$(submit late --steps 400 --step-seconds 0.3 --hang-at 60)
late_log=$(log_of "$late" late)
echo "# jobs: late=$late"
check "late: tracked" wait_for 30 tracked "$late"
check "late: training (step 10 read by the daemon)" wait_for 60 bash -c \
  "$(declare -f sql checks); [[ \$(sql 'SELECT last_step FROM progress WHERE job_id=$late') -ge 10 ]]"
kill -KILL "$MONITOR_PID"
wait "$MONITOR_PID" 2>/dev/null
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM host_baselines WHERE job_id=?", (int(sys.argv[2]),))
db.commit()' "$DB" "$late"
check "late: the job hangs after step 59 while no daemon watches" \
  wait_for 60 grep -q "completed step: 59," "$late_log"
sleep 2
start_monitor
check "late: the restarted daemon takes the job's history from its Prometheus" \
  wait_for 30 grep -q "history_backfilled job=$late " "$MLOG"
check "late: hang/busy-wait, as without the restart" wait_for 60 has_incident "$late" hang/busy-wait
check "late: no plain hang was raised first" test -z "$(incidents "$late" | grep '^hang|')"
ev=$(evidence_of "$late" hang/busy-wait)
check "late: node1's power against the training baseline it did not scrape" \
  grep -qE 'node1: GPU util 100%, power [0-9]+ W \([0-9]+% of its training baseline [0-9]+ W\)' <<<"$ev"
scancel "$late" 2>/dev/null

echo "# SIGTERM"
kill -TERM "$MONITOR_PID"
check "SIGTERM: the daemon exits 0 within 5 s" bash -c \
  "for i in \$(seq 1 50); do kill -0 $MONITOR_PID 2>/dev/null || break; sleep 0.1; done; ! kill -0 $MONITOR_PID 2>/dev/null"
wait "$MONITOR_PID"
rc=$?
MONITOR_PID=""
check "SIGTERM: exit code 0 and a 'stopping' line" bash -c "[[ $rc -eq 0 ]] && grep -q 'stopping signal=SIGTERM' '$MLOG'"
check "no secrets or errors of the store in the daemon's log" bash -c "! grep -q 'state_store' '$MLOG'"

echo "# incidents: job|class|state|close reason|open for (s)|opened after the last step read (s)|summary"
sql "SELECT i.job_id, i.class, i.state, i.close_reason, round(i.closed_at - i.opened_at, 1),
            round(i.opened_at - p.last_step_time, 1), i.summary
     FROM incidents i LEFT JOIN progress p USING (job_id) ORDER BY i.id" | sed 's/^/#   /'
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
