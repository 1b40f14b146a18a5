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

STATE=$(mktemp -d /tmp/jobmon-alerts-XXXXXX)
SCRATCH=$(mktemp -d /tmp/jobmon-alerts-scratch-XXXXXX)
passed=0 failed=0
MONITOR_PID="" AM_PID="" HOOK_PID="" TG_PID="" TRAINER_PIDS=""
TOKEN="tok-$RANDOM$RANDOM-never-logged"
TG_TOKEN="$RANDOM$RANDOM:tg-bot-token-never-logged"

check() {
  local what=$1
  shift
  if "$@"; then echo "ok   - $what"; passed=$((passed + 1)); else echo "FAIL - $what"; failed=$((failed + 1)); fi
}
stop_pid() {  # stop_pid PID: a process this test started
  [[ -n "$1" ]] || return 0
  kill -TERM "$1" 2>/dev/null
  local _
  for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
teardown() {
  local pid
  for pid in $TRAINER_PIDS; do kill -CONT "$pid" 2>/dev/null; done
  stop_pid "$MONITOR_PID"
  stop_pid "$HOOK_PID"
  stop_pid "$AM_PID"
  stop_pid "$TG_PID"
  if [[ $failed -gt 0 && -d "$SCRATCH" ]]; then
    local kept=/tmp/jobmon-alerts-failed-$$
    mkdir -p "$kept" && cp -a "$SCRATCH"/. "$kept"/
    echo "# kept the logs in $kept"
  fi
  "$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1 || true
  rm -rf "$SCRATCH"
}
trap teardown EXIT
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "# devcluster up"
if ! "$DEVCLUSTER" up --nodes 1 --state "$STATE" --subnet "10.207.$((RANDOM % 200 + 20))" --no-plugin --timeout 90; then
  echo "FAIL - devcluster up"; echo "0 passed, 1 failed"; exit 1
fi
eval "$("$DEVCLUSTER" env --state "$STATE")"
AM_PORT=$(free_port) HOOK_PORT=$(free_port) MPORT=$(free_port) TG_PORT=$(free_port)
HOOK_LOG=$SCRATCH/webhook.jsonl MLOG=$SCRATCH/monitor.log ALERTS=$SCRATCH/alerts.jsonl
TG_LOG=$SCRATCH/telegram.jsonl
export AM_PORT HOOK_LOG TG_LOG

echo "# the Telegram Bot API stub on 127.0.0.1:$TG_PORT"
/usr/bin/python3 "$TELEGRAM" --port "$TG_PORT" --token "$TG_TOKEN" --log "$TG_LOG" --flood-every 2 &
TG_PID=$!
cat >"$SCRATCH/tg_probe.py" <<'EOF'
# tg_probe.py PORT TOKEN CASE: a request the real Bot API rejects; exit 0 if the stub does too.
import json, sys, time, urllib.error, urllib.parse, urllib.request
port, token, case = sys.argv[1:4]
def post(method, data, ctype, tok=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/bot{tok or token}/{method}",
                                     data=data, headers={"Content-Type": ctype})
    try:
        return urllib.request.urlopen(request, timeout=5).read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()
form = "application/x-www-form-urlencoded"
time.sleep(0.4)  # outside the stub's flood window
if case == "long":
    out, want = post("sendMessage", json.dumps({"chat_id": "9", "text": "x" * 4097}).encode(),
                     "application/json"), "message is too long"
elif case == "entity":
    out, want = post("sendMessage", urllib.parse.urlencode(
        {"chat_id": "8", "parse_mode": "HTML", "text": "a & b"}).encode(), form), "can't parse entities"
elif case == "nodoc":
    out, want = post("sendDocument", urllib.parse.urlencode(
        {"chat_id": "7", "document": "report"}).encode(), form), "there is no document"
else:
    out, want = post("sendMessage", b"chat_id=1&text=x", form, tok="1:wrong"), "Unauthorized"
sys.exit(0 if want in out else 1)
EOF
tg_probe() { /usr/bin/python3 "$SCRATCH/tg_probe.py" "$TG_PORT" "$TG_TOKEN" "$1" 2>/dev/null; }
check "stub: a message over 4096 characters is rejected" wait_for 10 tg_probe long
check "stub: a bare & in HTML is rejected" tg_probe entity
check "stub: sendDocument without a multipart file is rejected" tg_probe nodoc
check "stub: another token is unauthorized" tg_probe token

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
am_alerts() {  # the active alerts of job $1 as "alertname class severity"
  /usr/bin/python3 -c "
import json, urllib.request
alerts = json.load(urllib.request.urlopen('http://127.0.0.1:$AM_PORT/api/v2/alerts', timeout=3))
for a in alerts:
    l = a['labels']
    if l.get('job_id') == '$1' and a['status']['state'] == 'active':
        print(l['alertname'], l['class'], l['severity'], l['cluster'], a['annotations'].get('summary', '')[:60].replace(' ', '_'))"
}
check "Alertmanager answers on loopback" wait_for 20 bash -c "$(declare -f am_alerts); am_alerts 0 >/dev/null 2>&1"

cat >"$SCRATCH/secrets.toml" <<EOF
hook_token = "$TOKEN"
tg_token = "$TG_TOKEN"
EOF
chmod 0644 "$SCRATCH/secrets.toml"
cat >"$SCRATCH/jobmon.toml" <<EOF
[monitor]
cluster = "dev"
state_db = "$SCRATCH/monitor.db"
poll_interval = "1s"
slurm_poll_interval = "2s"
metrics_listen = "127.0.0.1:$MPORT"
notify_file = "$ALERTS"
[monitor.stall]
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
TRAINER_PIDS=$(for p in $(pgrep -x fake-trainer); do
  tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$job" && echo "$p"; done)
echo "# SIGSTOP to the job's trainer (pid ${TRAINER_PIDS//$'\n'/ })"
for p in $TRAINER_PIDS; do kill -STOP "$p"; done
check "Alertmanager shows the hang: alertname, class, severity, cluster labels and the summary" \
  wait_for 30 bash -c "$(declare -f am_alerts); am_alerts $job | grep -q '^TrainingJobHang hang critical dev Job_$job'"
check "the webhook's failures are retried with backoff" wait_for 10 grep -q 'alert_delivery_failed.*hook' "$MLOG"
sleep 6  # several Alertmanager re-sends (every 2 s)
check "re-sends do not duplicate the alert in Alertmanager" test "$(am_alerts "$job" | wc -l)" -eq 1
/usr/bin/python3 "$RECEIVER" --port "$HOOK_PORT" --log "$HOOK_LOG" &
HOOK_PID=$!
hook_events() {  # hook_events JOB STATUS: deliveries of that event
  [[ -f "$HOOK_LOG" ]] || { echo 0; return; }
  /usr/bin/python3 -c "
import json, sys
n = 0
for line in open('$HOOK_LOG'):
    r = json.loads(line)
    b = r['body']
    if b and b.get('job_id') == int(sys.argv[1]) and b.get('status') == sys.argv[2]: n += 1
print(n)" "$1" "$2"
}
tg_sent() {  # tg_sent METHOD PYTHON-CONDITION-ON-r: accepted calls matching
  /usr/bin/python3 -c "
import json, sys
n = 0
for line in open('$TG_LOG'):
    r = json.loads(line)
    if r['method'] == sys.argv[1] and 'rejected' not in r and eval(sys.argv[2]): n += 1
print(n)" "$1" "$2"
}
check "Telegram: the firing reaches both chats, in thread 7, as valid HTML" wait_for 20 bash -c \
  "$(declare -f tg_sent); [[ \$(tg_sent sendMessage \"'FIRING Job $job' in r['text'] and str(r['message_thread_id']) == '7'\") -eq 2 ]]"
check "the webhook, once up, receives the firing" wait_for 20 bash -c "$(declare -f hook_events); [[ \$(hook_events $job firing) -ge 1 ]]"
check "with the bearer token and the idempotency key" /usr/bin/python3 -c "
import json
for line in open('$HOOK_LOG'):
    r = json.loads(line)
    if r['body'].get('job_id') == $job:
        h = r['headers']
        assert h['Authorization'] == 'Bearer $TOKEN', h
        assert h['Idempotency-Key'] == 'dev/$job/hang/1/firing', h
        assert r['body']['idempotency_key'] == h['Idempotency-Key']
        break
else:
    raise SystemExit(1)"

echo "# SIGCONT: the job resumes"
for p in $TRAINER_PIDS; do kill -CONT "$p"; done
check "Alertmanager: the alert is resolved (no longer active)" wait_for 30 bash -c "$(declare -f am_alerts); [[ -z \"\$(am_alerts $job)\" ]]"
check "the webhook receives the resolve" wait_for 20 bash -c "$(declare -f hook_events); [[ \$(hook_events $job resolved) -ge 1 ]]"
check "each event was delivered to the webhook once" \
  test "$(hook_events "$job" firing) $(hook_events "$job" resolved)" = "1 1"

echo "# SIGKILL while a delivery is in flight"
stop_pid "$HOOK_PID"
/usr/bin/python3 "$RECEIVER" --port "$HOOK_PORT" --log "$HOOK_LOG" --delay 4 &
HOOK_PID=$!
sleep 1
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
check "with the same idempotency key, so the receiver shows it once" /usr/bin/python3 -c "
import json, collections
keys = collections.Counter()
shown = collections.Counter()
for line in open('$HOOK_LOG'):
    r = json.loads(line)
    k = r['headers'].get('Idempotency-Key')
    keys[k] += 1
    shown[k] += r['shown']
second = 'dev/$job/hang/2/firing'
assert keys[second] >= 2, keys
assert all(v == 1 for v in shown.values()), shown"
for p in $TRAINER_PIDS; do kill -CONT "$p"; done

echo "# a job that fails: the triage report goes to Telegram as a document"
failing=$(cd "$DEVCLUSTER_JOBS" && sbatch --parsable -N1 -J failing -o "$DEVCLUSTER_JOBS/%j.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 100 --step-seconds 0.1 --nccl-timeout-at 5" | tr -cd 0-9)
check "Telegram: triage-$failing.md sent to both chats (multipart, text/markdown)" wait_for 60 bash -c \
  "$(declare -f tg_sent); [[ \$(tg_sent sendDocument \"r['document']['filename'] == 'triage-$failing.md' and r['document']['content_type'] == 'text/markdown' and '#' in r['document']['head']\") -eq 2 ]]"
check "... after the failure message naming the class" bash -c \
  "$(declare -f tg_sent); [[ \$(tg_sent sendMessage \"'Job $failing' in r['text'] and 'ended/nccl-timeout' in r['text']\") -eq 2 ]]"

echo "# jobmon alert test"
"$JOBMON" alert test --config "$SCRATCH/jobmon.toml" --evidence-lines 300 --json >"$SCRATCH/alert-test.json"
rc=$?
check "jobmon alert test: every receiver delivered (exit 0)" test "$rc" -eq 0
check "... the webhook, Alertmanager and the file" /usr/bin/python3 -c "
import json
r = {x['receiver']: x['delivered'] for x in json.load(open('$SCRATCH/alert-test.json'))['results']}
assert r == {'hook': True, 'am': True, 'tg': True, 'file:$ALERTS': True}, r"
check "Telegram: the long test alert was split, every part within 4096 characters" /usr/bin/python3 -c "
import json
parts = [json.loads(l) for l in open('$TG_LOG')]
test = [p for p in parts if p['method'] == 'sendMessage' and 'rejected' not in p and p['chat_id'] == '-1001'
        and ('jobmon-alert-test' in p['text'] or 'evidence line' in p['text'])]
assert len(test) >= 3, len(test)
assert all(p['visible_length'] <= 4096 for p in test)
assert any('evidence line 299' in p['text'] for p in test)"
check "Telegram: flood control (429 retry_after) was hit and honoured" /usr/bin/python3 -c "
import json
parts = [json.loads(l) for l in open('$TG_LOG')]
assert any(p.get('rejected', '').startswith('Too Many Requests') for p in parts)
assert not any(p.get('rejected', '').startswith('Bad Request') and p['chat_id'] in ('-1001', '4242') for p in parts)"
check "Alertmanager shows the test alert" wait_for 10 bash -c \
  "$(declare -f am_alerts); am_alerts 0 | grep -q '^JobmonTestAlert test warning'"

echo "# no secret anywhere"
"$JOBMON" status "$job" --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/status.json" 2>&1
"$JOBMON" list --config "$SCRATCH/jobmon.toml" --json >"$SCRATCH/list.json" 2>&1
check "the token is in no log, alert, report or --json output" bash -c \
  "! grep -rlF -e '$TOKEN' -e '$TG_TOKEN' '$MLOG' '$ALERTS' '$SCRATCH/status.json' '$SCRATCH/list.json' '$SCRATCH/alert-test.json' '$SCRATCH/refused.log' '$SCRATCH/refused-test.log'"
check "nor in the state database" bash -c "! grep -qaF -e '$TOKEN' -e '$TG_TOKEN' '$SCRATCH/monitor.db' '$SCRATCH/monitor.db-wal' 2>/dev/null"
check "Alertmanager and the daemon listen on loopback only" bash -c \
  "! (ss -ltnpH | grep -E 'pid=($AM_PID|$MONITOR_PID|$TG_PID),' | awk '{print \$4}' | grep -vq '^127\.0\.0\.1:')"
scancel "$job" 2>/dev/null
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
