#!/usr/bin/env bash
# Alerts from slurm_job_monitor on the real dev cluster: Debian's
# prometheus-alertmanager and a webhook receiver (webhook_receiver.py), both
# on loopback, behind the durable outbox. A fake-trainer job is paused
# (SIGSTOP) until the daemon raises a hang, then continued (SIGCONT) so it
# resumes. The webhook is down at first; the daemon is SIGKILLed while a
# delivery is in flight; secrets must never show up. Needs root. One line
# per check, then "N passed, N failed"; everything it started is stopped.
set -uo pipefail

DEVCLUSTER="" FAKE_TRAINER="" MONITOR="" JOBMON="" RECEIVER="" TELEGRAM=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --monitor) MONITOR=$2; shift 2 ;;
    --jobmon) JOBMON=$2; shift 2 ;;
    --receiver) RECEIVER=$2; shift 2 ;;
    --telegram-stub) TELEGRAM=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --fake-trainer PATH --monitor PATH --jobmon PATH --receiver PY --telegram-stub PY" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -x "$FAKE_TRAINER" && -x "$MONITOR" && -x "$JOBMON" && -f "$RECEIVER" && -f "$TELEGRAM" ]] ||
  { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
command -v prometheus-alertmanager >/dev/null || { echo "needs prometheus-alertmanager" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
MONITOR=$(realpath "$MONITOR") JOBMON=$(realpath "$JOBMON") RECEIVER=$(realpath "$RECEIVER")
TELEGRAM=$(realpath "$TELEGRAM")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-alerts-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-alerts-scratch-XXXXXX)
MONITOR_PID="" AM_PID="" HOOK_PID="" TG_PID="" TRAINER_PIDS=""
TOKEN="tok-$RANDOM$RANDOM-never-logged"
TG_TOKEN="$RANDOM$RANDOM:tg-bot-token-never-logged"

teardown() {
  local pid
  for pid in $TRAINER_PIDS; do kill -CONT "$pid" 2>/dev/null; done
  stop_pid "$MONITOR_PID"
  stop_pid "$HOOK_PID"
  stop_pid "$AM_PID"
  stop_pid "$TG_PID"
  teardown_cluster jobmon-alerts
}
trap teardown EXIT
echo "# devcluster up"
if ! "$DEVCLUSTER" up --nodes 1 --state "$STATE" --subnet "10.207.$((RANDOM % 200 + 20))" --no-plugin --timeout 90; then
  echo "FAIL - devcluster up"; echo "0 passed, 1 failed"; exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
AM_PORT=$(free_loopback_port) HOOK_PORT=$(free_loopback_port) MPORT=$(free_loopback_port) TG_PORT=$(free_loopback_port)
HOOK_LOG=$SCRATCH/webhook.jsonl MLOG=$SCRATCH/monitor.log ALERTS=$SCRATCH/alerts.jsonl
TG_LOG=$SCRATCH/telegram.jsonl
export AM_PORT HOOK_LOG TG_LOG CHECKS

echo "# the Telegram Bot API stub on 127.0.0.1:$TG_PORT"
/usr/bin/python3 "$TELEGRAM" --port "$TG_PORT" --token "$TG_TOKEN" --log "$TG_LOG" --flood-every 2 &
TG_PID=$!
tg_probe() { checks tg-probe "$TG_PORT" "$TG_TOKEN" "$1" 2>/dev/null; }
check "stub: a message over 4096 characters is rejected" wait_for 10 tg_probe long
check "stub: a bare & in HTML is rejected" tg_probe entity
check "stub: sendDocument without a multipart file is rejected" tg_probe nodoc
check "stub: another token is unauthorized" tg_probe token
check "stub: a reply to a message never sent is rejected" tg_probe reply

echo "# Alertmanager on 127.0.0.1:$AM_PORT"
cat >"$SCRATCH/am.yml" <<EOF
route:
  receiver: "null"
  group_wait: 1s
receivers:
  - name: "null"
EOF
prometheus-alertmanager --config.file="$SCRATCH/am.yml" --storage.path="$SCRATCH/am" \
  --web.listen-address="127.0.0.1:$AM_PORT" --cluster.listen-address= >"$SCRATCH/am.log" 2>&1 &
AM_PID=$!
am_alerts() { checks am-alerts "http://127.0.0.1:$AM_PORT" "$1"; }  # job $1's active alerts: "alertname class severity cluster summary"
check "Alertmanager answers on loopback" wait_for 20 bash -c "$(declare -f am_alerts checks); am_alerts 0 >/dev/null 2>&1"

cat >"$SCRATCH/secrets.toml" <<EOF
hook_token = "$TOKEN"
tg_token = "$TG_TOKEN"
EOF
chmod 0644 "$SCRATCH/secrets.toml"
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
jobmon_binary = "$JOBMON"
cluster = "dev"
state_db = "$SCRATCH/monitor.db"
api_socket = "$SCRATCH/monitor.sock"  # not /run/jobmon: clusters run side by side
poll_interval = "1s"
slurm_poll_interval = "2s"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$ALERTS"
[stall]
min_stall = "6s"
[monitor.select]
partitions = ["debug"]
[alerts]
secrets_file = "$SCRATCH/secrets.toml"
max_backoff = "2s"
[[alerts.webhook]]
name = "hook"
url = "http://127.0.0.1:$HOOK_PORT/hook"
bearer_token_secret = "hook_token"
[[alerts.alertmanager]]
name = "am"
url = "http://127.0.0.1:$AM_PORT"
resend_interval = "2s"
runbook_url = "https://runbooks.example/training-hang"
[[alerts.telegram]]
name = "tg"
url = "http://127.0.0.1:$TG_PORT"
bot_token_secret = "tg_token"
chat_ids = ["-1001", 4242]
message_thread_id = 7
min_interval = "0s"
EOF

echo "# secrets"
"$MONITOR" --config "$SCRATCH/jobmon.toml" --once >"$SCRATCH/refused.log" 2>&1
rc=$?
check "a 0644 secrets file: the daemon refuses to start (exit 2)" test "$rc" -eq 2
check "... and says why" grep -q 'readable by others (mode 0644)' "$SCRATCH/refused.log"
"$JOBMON" alert test --config "$SCRATCH/jobmon.toml" >"$SCRATCH/refused-test.log" 2>&1
check "jobmon alert test refuses it too" grep -q 'readable by others' "$SCRATCH/refused-test.log"
chmod 0600 "$SCRATCH/secrets.toml"

echo "# the daemon, with the webhook receiver down"
"$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
MONITOR_PID=$!
job=$(cd "$DEVCLUSTER_JOBS" && sbatch --parsable -N1 -J pausable -o "$DEVCLUSTER_JOBS/%j.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 3000 --step-seconds 0.2" | tr -cd 0-9)
log="$DEVCLUSTER_JOBS/$job.log"
check "the job trains (step 20)" wait_for 60 grep -q '^0: completed step: 20,' "$log"
# Job ids repeat across the dev clusters that run side by side: the job's
# SLURM_CONF names this cluster.
TRAINER_PIDS=$(for p in $(pgrep -x fake-trainer); do
  env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null)
  grep -qx "SLURM_JOB_ID=$job" <<<"$env" && grep -qxF "SLURM_CONF=$SLURM_CONF" <<<"$env" && echo "$p"; done)
echo "# SIGSTOP to the job's trainer (pid ${TRAINER_PIDS//$'\n'/ })"
for p in $TRAINER_PIDS; do kill -STOP "$p"; done
check "Alertmanager shows the hang: alertname, class, severity, cluster labels and the summary" \
  wait_for 30 bash -c "$(declare -f am_alerts checks); am_alerts $job | grep -q '^TrainingJobHang hang critical dev Job_$job'"
check "the webhook's failures are retried with backoff" wait_for 10 grep -q 'alert_delivery_failed.*hook' "$MLOG"
check "Alertmanager receives 3 re-sends (every 2 s)" counter_grows 30 \
  "http://127.0.0.1:$AM_PORT/metrics" alertmanager_alerts_received_total 3 status=firing
check "re-sends do not duplicate the alert in Alertmanager" test "$(am_alerts "$job" | wc -l)" -eq 1
/usr/bin/python3 "$RECEIVER" --port "$HOOK_PORT" --log "$HOOK_LOG" &
HOOK_PID=$!
hook_events() { checks count "$HOOK_LOG" "body.job_id == $1" "body.status == $2"; }  # hook_events JOB STATUS: deliveries of that event
tg_sent() { checks count "$TG_LOG" "method == $1" 'rejected absent' "${@:2}"; }  # tg_sent METHOD CONDITION...: accepted calls matching
check "Telegram: the firing reaches both chats, in thread 7, as valid HTML" wait_for 20 bash -c \
  "$(declare -f tg_sent checks); [[ \$(tg_sent sendMessage 'text contains FIRING Job $job' 'message_thread_id == 7') -eq 2 ]]"
check "Telegram: the firing's chart as a photo to both chats (a PNG within the API's limits)" \
  wait_for 20 bash -c "$(declare -f tg_sent checks); [[ \$(tg_sent sendPhoto \
  'photo.content_type == image/png' 'photo.filename == jobmon-$job-incident-1.png') -eq 2 ]]"
check "the webhook, once up, receives the firing" wait_for 20 bash -c "$(declare -f hook_events checks); [[ \$(hook_events $job firing) -ge 1 ]]"
check "with the bearer token and the idempotency key" checks first "$HOOK_LOG" "body.job_id == $job" -- \
  "headers.Authorization == Bearer $TOKEN" "headers.Idempotency-Key == dev/$job/hang/1/firing" \
  "body.idempotency_key == dev/$job/hang/1/firing"
check "the webhook's firing carries the chart as an attachment field" checks first "$HOOK_LOG" \
  "body.job_id == $job" -- "body.chart.content_type == image/png" "body.chart.encoding == base64" \
  "body.chart.filename == jobmon-$job-incident-1.png"

echo "# SIGCONT: the job resumes"
for p in $TRAINER_PIDS; do kill -CONT "$p"; done
check "Alertmanager: the alert is resolved (no longer active)" wait_for 30 bash -c "$(declare -f am_alerts checks); [[ -z \"\$(am_alerts $job)\" ]]"
check "the webhook receives the resolve" wait_for 20 bash -c "$(declare -f hook_events checks); [[ \$(hook_events $job resolved) -ge 1 ]]"
check "each event was delivered to the webhook once" \
  test "$(hook_events "$job" firing) $(hook_events "$job" resolved)" = "1 1"
# tg_replies CHAT: the resolution's message in CHAT replies to the firing's.
tg_replies() {
  local first
  first=$(checks first-value "$TG_LOG" message_id 'method == sendMessage' 'rejected absent' \
    "chat_id == $1" "text contains FIRING Job $job") &&
    [[ $(tg_sent sendMessage "chat_id == $1" "text contains RESOLVED Job $job" "reply_to == $first") -eq 1 ]]
}
check "Telegram: the resolution is a reply to the firing, in both chats" wait_for 20 bash -c \
  "$(declare -f tg_sent tg_replies checks); job=$job; tg_replies -1001 && tg_replies 4242"

echo "# SIGKILL while a delivery is in flight"
stop_pid "$HOOK_PID"
/usr/bin/python3 "$RECEIVER" --port "$HOOK_PORT" --log "$HOOK_LOG" --delay 4 &
HOOK_PID=$!
check "the slow webhook listens" wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HOOK_PORT"
for p in $TRAINER_PIDS; do kill -STOP "$p"; done
inflight() { grep -c '"status": "firing"' "$HOOK_LOG" 2>/dev/null | grep -q '^2$'; }
check "the second hang's firing reaches the (slow) webhook" wait_for 30 inflight
kill -KILL "$MONITOR_PID"
wait "$MONITOR_PID" 2>/dev/null
echo "# daemon killed before the webhook acknowledged; restarting it"
"$MONITOR" --config "$SCRATCH/jobmon.toml" >>"$MLOG" 2>&1 &
MONITOR_PID=$!
redelivered() { [[ "$(grep -c '"status": "firing"' "$HOOK_LOG")" -ge 3 ]]; }
check "after the restart the unacknowledged alert is delivered again" wait_for 30 redelivered
check "with the same idempotency key, so the receiver shows it once" bash -c \
  "$(declare -f checks); [[ \$(checks count '$HOOK_LOG' 'headers.Idempotency-Key == dev/$job/hang/2/firing') -ge 2 ]] &&
   checks sums-equal '$HOOK_LOG' headers.Idempotency-Key shown 1"
for p in $TRAINER_PIDS; do kill -CONT "$p"; done

echo "# a job that fails: the triage report goes to Telegram as a document"
failing=$(cd "$DEVCLUSTER_JOBS" && sbatch --parsable -N1 -J failing -o "$DEVCLUSTER_JOBS/%j.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 100 --step-seconds 0.1 --nccl-timeout-at 5" | tr -cd 0-9)
check "Telegram: triage-$failing.md sent to both chats (multipart, text/markdown)" wait_for 60 bash -c \
  "$(declare -f tg_sent checks); [[ \$(tg_sent sendDocument 'document.filename == triage-$failing.md' 'document.content_type == text/markdown' 'document.head contains #') -eq 2 ]]"
check "... after the failure message naming the class" bash -c \
  "$(declare -f tg_sent checks); [[ \$(tg_sent sendMessage 'text contains Job $failing' 'text contains ended/nccl-timeout') -eq 2 ]]"

echo "# jobmon alert test"
"$JOBMON" alert test --config "$SCRATCH/jobmon.toml" --evidence-lines 300 --json >"$SCRATCH/alert-test.json"
rc=$?
check "jobmon alert test: every receiver delivered (exit 0)" test "$rc" -eq 0
# First: Alertmanager keeps the test alert only until its endsAt (3 re-send intervals).
check "Alertmanager shows the test alert" wait_for 10 bash -c \
  "$(declare -f am_alerts checks); am_alerts 0 | grep -q '^JobmonTestAlert test warning'"
check "... the webhook, Alertmanager and the file" test \
  "$(checks mapping "$SCRATCH/alert-test.json" results receiver delivered)" = \
  "$(printf '%s\n' am=true "file:$ALERTS=true" hook=true tg=true)"
test_parts=('method == sendMessage' 'rejected absent' 'chat_id == -1001' 'text contains-any jobmon-alert-test|evidence line')
check "Telegram: the long test alert was split, every part within 4096 characters" bash -c \
  "$(declare -f checks); [[ \$(checks count '$TG_LOG' \"\${@}\") -ge 3 &&
   \$(checks count '$TG_LOG' \"\${@}\" 'visible_length > 4096') -eq 0 &&
   \$(checks count '$TG_LOG' \"\${@}\" 'text contains evidence line 299') -ge 1 ]]" _ "${test_parts[@]}"
check "Telegram: flood control (429 retry_after) was hit and honoured" bash -c \
  "$(declare -f checks); [[ \$(checks count '$TG_LOG' 'rejected startswith Too Many Requests') -ge 1 &&
   \$(checks count '$TG_LOG' 'rejected startswith Bad Request' 'chat_id in -1001|4242') -eq 0 ]]"

echo "# no secret anywhere"
"$JOBMON" status "$job" --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/status.json" 2>&1
"$JOBMON" list --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/list.json" 2>&1
check "the token is in no log, alert, report or --json output" bash -c \
  "! grep -rlF -e '$TOKEN' -e '$TG_TOKEN' '$MLOG' '$ALERTS' '$SCRATCH/status.json' '$SCRATCH/list.json' '$SCRATCH/alert-test.json' '$SCRATCH/refused.log' '$SCRATCH/refused-test.log'"
check "nor in the state database" bash -c "! grep -qaF -e '$TOKEN' -e '$TG_TOKEN' '$SCRATCH/monitor.db' '$SCRATCH/monitor.db-wal' 2>/dev/null"
check "Alertmanager and the daemon listen on loopback only" bash -c \
  "$(declare -f checks); ! (ss -ltnpH | checks listen-addresses --pid $AM_PID --pid $MONITOR_PID --pid $TG_PID | grep -vq '^127\.0\.0\.1:')"
scancel "$job" 2>/dev/null
finish
