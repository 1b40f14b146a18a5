#!/usr/bin/env bash
# Integration test of the --diag lifecycle on the real dev cluster (Debian's
# slurmctld, slurmd, munge, Prometheus; 2 nodes in network namespaces):
# per-job Prometheus on the head node's loopback, exporters on the nodes'
# private addresses, the archive after the job, two jobs sharing a head
# node, and every fail-open case. Needs root. One line per check, then
# "N passed, N failed"; the cluster and every process the test started are
# cleaned up even on failure.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER="" PROMQ=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    --promq) PROMQ=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH --promq PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" && -x "$PROMQ" ]] || { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
PROMQ=$(realpath "$PROMQ")  # executable, #!/usr/bin/python3
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WAIT_FOR_POLL=0.2

STATE=$(mktemp -d /tmp/jobmon-lc-XXXXXX)
SUBNET=10.204.$((RANDOM % 200 + 20))
SCRATCH=$(mktemp -d /tmp/jobmon-lc-scratch-XXXXXX)
OUR_PIDS=()

TEST_USER="" SERVICE_USER=""
teardown() {
  local pid fifo
  for pid in "${OUR_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  # A reader stuck on a FIFO the test planted (a failing epilog) is let go.
  if [[ -d "$STATE/jobs" ]]; then
    while IFS= read -r fifo; do
      # shellcheck disable=SC2016 # $1 is the inner shell's
      timeout 2 bash -c 'exec 3>"$1"' _ "$fifo" 2>/dev/null
    done < <(find "$STATE/jobs" -type p 2>/dev/null)
  fi
  teardown_cluster jobmon-lc
  [[ -n "$TEST_USER" ]] && userdel "$TEST_USER" 2>/dev/null
  [[ -n "$SERVICE_USER" ]] && userdel "$SERVICE_USER" 2>/dev/null
  return 0
}
trap teardown EXIT

echo "# devcluster up: 2 nodes on $SUBNET.0/24"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90 \
  --plugin-args "scrape_interval=1s exporter_arg=--sysfs=$STATE/jobs/gpu-%n"; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
TAG=$DEVCLUSTER_TAG JOBS=$DEVCLUSTER_JOBS
BASE_LINE=$(cat "$STATE/etc/plugstack.line")
in_node() { local node=$1; shift; ip netns exec "$TAG-$node" "$@"; }
plugin_args() {  # the plugstack.conf line with extra arguments (read per job)
  echo "optional $BASE_LINE $*" >"$STATE/etc/plugstack.conf"
}
job_id() { local out=$1; out=${out%%;*}; echo "${out//[^0-9]/}"; }
nodes_idle() { [[ "$(sinfo -h -N -o '%N %t' | sort -u | grep -c ' idle$')" -eq 2 ]]; }
manifest() { checks field "$@"; }  # manifest FILE PATH...: values of manifest.json
no_wildcard_listener_of_ours() {  # in every namespace, our daemons bind concrete addresses
  local node
  for node in node1 node2; do
    if in_node "$node" ss -ltnpH | grep -E 'prometheus|jobmon-export' | awk '{print $4}' |
      grep -qE '^(0\.0\.0\.0|\*|\[::\]):'; then
      return 1
    fi
  done
}
processes_of() { pgrep -f -- "$1" | grep -v "^$$\$" || true; }

printf 'global:\n  scrape_interval: 1h\n' >"$SCRATCH/empty.yml"
cat >"$JOBS/train.sh" <<EOS
#!/bin/bash
echo "env: JOBMON_DIAG_DIR=\$JOBMON_DIAG_DIR JOBMON_PROMETHEUS=\$JOBMON_PROMETHEUS JOBMON_PROMETHEUS_NODE=\$JOBMON_PROMETHEUS_NODE"
srun -l $FAKE_TRAINER --steps 120 --step-seconds 0.1 --seed 7 --gpu-sysfs $JOBS/gpu-%n \
  --gpu-interval 0.5 --tensorboard-dir "\$JOBMON_DIAG_DIR/tensorboard/%n"
# Stay until the test has looked (bounded), so the last steps are scraped.
for i in \$(seq 1 600); do [[ -e $JOBS/release-\$SLURM_JOB_ID ]] && break; sleep 0.1; done
EOS
chmod +x "$JOBS/train.sh"

echo "# a 2-node --diag=on job with the fake trainer, its owner letting a hang be requeued"
out=$(cd "$JOBS" && sbatch --parsable -N2 --diag=on --diag-on-hang=requeue -o "$JOBS/main-%j.log" "$JOBS/train.sh" 2>&1)
main=$(job_id "$out")
DIAG=$JOBS/jobmon-diag-$main
check "manifest.json appears in the diag dir beside the job's output" wait_for 20 test -s "$DIAG/manifest.json"
PORT=$(manifest "$DIAG/manifest.json" prometheus.port 2>/dev/null || echo 0)
echo "# job $main: Prometheus on node1 127.0.0.1:$PORT"
check "Prometheus port from 9190 upwards" test "$PORT" -ge 9190
check "manifest: the owner's --diag-on-hang (requeue)" test "$(manifest "$DIAG/manifest.json" on_hang)" == requeue
check "sbatch refuses a --diag-on-hang it does not know, before the job exists" bash -c \
  "! (cd $JOBS && sbatch --diag=on --diag-on-hang=reboot --wrap true) 2>$SCRATCH/bad-on-hang.err && grep -q 'invalid --diag-on-hang value' $SCRATCH/bad-on-hang.err"
check "manifest: head node, nodes, tunnel command" test \
  "$(manifest "$DIAG/manifest.json" head_node nodes tunnel_command state)" == \
  "node1 [\"node1\", \"node2\"] ssh -N -L $PORT:127.0.0.1:$PORT node1 running"
LIVE=$(manifest "$DIAG/manifest.json" tsdb_dir 2>/dev/null)
check "the live TSDB is on node1's local disk (tsdb_dir), not in the shared diag dir" test \
  "$LIVE" == "$STATE/tsdb/node1/$main" -a ! -e "$DIAG/prometheus"
check "the live TSDB dir is 0700 and the job user's, under root-owned parents" test \
  "$(stat -c '%a %U' "$LIVE" "$STATE/tsdb/node1" 2>/dev/null | tr '\n' ' ')" == "700 root 755 root "
answers() { in_node node1 "$PROMQ" "http://127.0.0.1:$PORT" 'vector(1)' >/dev/null; }
check "Prometheus answers on node1's loopback" wait_for 20 answers
check "not from node2's namespace (its loopback)" bash -c "! ip netns exec $TAG-node2 $PROMQ http://127.0.0.1:$PORT vector\(1\) 2>/dev/null"
check "not on node1's private address" bash -c "! ip netns exec $TAG-node2 $PROMQ http://$SUBNET.11:$PORT vector\(1\) 2>/dev/null"
both_up() { [[ "$(in_node node1 "$PROMQ" "http://127.0.0.1:$PORT" 'up == 1' | grep -c 'host=')" -eq 2 ]]; }
check "both exporter targets have up == 1" wait_for 30 both_up
series_for_both() { [[ "$(in_node node1 "$PROMQ" "http://127.0.0.1:$PORT" "count by (host) ($1)" | wc -l)" -eq 2 ]]; }
check "hw_gpu_power_watts for both hosts (fake GPU sysfs)" wait_for 20 series_for_both hw_gpu_power_watts
check "hw_procs_running for both hosts" wait_for 10 series_for_both hw_procs_running
check "tb_step for both hosts (TensorBoard events in \$JOBMON_DIAG_DIR)" wait_for 30 series_for_both tb_step
check "exporters bound to each node's private address" bash -c \
  "ip netns exec $TAG-node1 ss -ltnpH | grep jobmon-export | grep -q ' $SUBNET.11:94' &&
   ip netns exec $TAG-node2 ss -ltnpH | grep jobmon-export | grep -q ' $SUBNET.12:94'"
check "no wildcard listener of ours in any namespace" no_wildcard_listener_of_ours
check "promtool check config accepts the generated prometheus.yml" promtool check config "$DIAG/prometheus.yml"
check "the job's output has one [diag] line with head node, port and tunnel" test \
  "$(grep -c "^\[diag\] Prometheus for job $main on node1 at 127.0.0.1:$PORT (tunnel: ssh -N -L $PORT:127.0.0.1:$PORT node1)" "$JOBS/main-$main.log")" -eq 1
check "JOBMON_DIAG_DIR, JOBMON_PROMETHEUS(_NODE) in the job's environment" \
  grep -q "^env: JOBMON_DIAG_DIR=$DIAG JOBMON_PROMETHEUS=http://127.0.0.1:$PORT JOBMON_PROMETHEUS_NODE=node1\$" "$JOBS/main-$main.log"
trained() { grep -q '^0: completed step: 119,' "$JOBS/main-$main.log"; }
wait_for 60 trained
final_step_scraped() {  # both nodes' exporters scraped at the log's last step
  [[ -n "$(in_node node1 "$PROMQ" "http://127.0.0.1:$PORT" 'count(tb_step == 119) == 2' 2>/dev/null)" ]]
}
check "Prometheus has scraped step 119 on both nodes" wait_for 30 final_step_scraped
touch "$JOBS/release-$main"
check "the job ends" wait_for 60 job_done "$main"
check "the job completed with exit 0" bash -c "scontrol -o show job $main | grep -q 'JobState=COMPLETED.*ExitCode=0:0'"
archived() { [[ "$(manifest "$DIAG/manifest.json" state 2>/dev/null)" == archived ]]; }
check "manifest state becomes archived" wait_for 60 archived
check "no process of ours left on any node" wait_for 10 test -z "$(processes_of "$DIAG")"
check "tsdb.tar.zst exists and its sha256 matches the manifest" test \
  "$(sha256sum "$DIAG/tsdb.tar.zst" | cut -d' ' -f1)" == "$(manifest "$DIAG/manifest.json" archive.sha256)"
check "the archive is in the diag dir and the local TSDB is gone (keep_tsdb=off)" wait_for 20 test \
  -s "$DIAG/tsdb.tar.zst" -a ! -e "$LIVE" -a ! -e "$DIAG/prometheus"
check "manifest records the Prometheus version" test \
  "$(manifest "$DIAG/manifest.json" versions.prometheus)" == "$(prometheus --version 2>&1 | head -1 | awk '{print $3}')"
check "both nodes idle again" wait_for 20 nodes_idle
last_step=$(grep -o '^0: completed step: [0-9]*' "$JOBS/main-$main.log" | tail -1 | grep -o '[0-9]*$')
mkdir -p "$SCRATCH/restore"
tar --zstd -xf "$DIAG/tsdb.tar.zst" -C "$SCRATCH/restore"
RPORT=$(free_loopback_port)
prometheus --config.file="$SCRATCH/empty.yml" --storage.tsdb.path="$SCRATCH/restore/prometheus" \
  --web.listen-address="127.0.0.1:$RPORT" >"$SCRATCH/restore.log" 2>&1 &
OUR_PIDS+=($!)
restored_step() { "$PROMQ" "http://127.0.0.1:$RPORT" 'last_over_time(tb_step{host="node1"}[1h])' | grep -q " $last_step\$"; }
check "a Prometheus on the unpacked archive returns tb_step = $last_step, the log's last step" wait_for 30 restored_step
kill "${OUR_PIDS[-1]}" 2>/dev/null

echo "# two --diag=on jobs sharing the head node; the epilog does not wait for the archive (epilog_wait=0s)"
plugin_args epilog_wait=0s
cat >"$JOBS/hold.sh" <<EOS
#!/bin/bash
for i in \$(seq 1 600); do [[ -e $JOBS/release-\$SLURM_JOB_ID ]] && break; sleep 0.1; done
EOS
chmod +x "$JOBS/hold.sh"
a=$(job_id "$(cd "$JOBS" && sbatch --parsable -N1 -w node1 --diag=on -o "$JOBS/hold-%j.log" "$JOBS/hold.sh")")
b=$(job_id "$(cd "$JOBS" && sbatch --parsable -N1 -w node1 --diag=on -o "$JOBS/hold-%j.log" "$JOBS/hold.sh")")
check "both manifests written" wait_for 30 test -s "$JOBS/jobmon-diag-$a/manifest.json" -a -s "$JOBS/jobmon-diag-$b/manifest.json"
pa=$(manifest "$JOBS/jobmon-diag-$a/manifest.json" prometheus.port 2>/dev/null)
pb=$(manifest "$JOBS/jobmon-diag-$b/manifest.json" prometheus.port 2>/dev/null)
check "different Prometheus ports ($pa, $pb)" test -n "$pa" -a -n "$pb" -a "$pa" != "$pb"
check "both answer, each with its own TSDB" bash -c \
  "ip netns exec $TAG-node1 $PROMQ http://127.0.0.1:$pa vector\(1\) >/dev/null &&
   ip netns exec $TAG-node1 $PROMQ http://127.0.0.1:$pb vector\(1\) >/dev/null &&
   test -d $STATE/tsdb/node1/$a -a -d $STATE/tsdb/node1/$b"
touch "$JOBS/release-$a" "$JOBS/release-$b"
check "both end" wait_for 60 bash -c "! squeue -h -j $a,$b 2>/dev/null | grep -q ."
check "the epilog left archiving to the detached archiver" wait_for 20 \
  grep -q "\[diag\] job $a: archiving continues in the background" "$STATE/log/slurmd-node1.log"
both_archived() {
  [[ "$(manifest "$JOBS/jobmon-diag-$a/manifest.json" state)" == archived &&
     "$(manifest "$JOBS/jobmon-diag-$b/manifest.json" state)" == archived ]]
}
check "which recorded both archives in their manifests" wait_for 60 both_archived
# Root's jobs: the archiver (root) removes the dirs too; a user's archiver
# only empties them and the next prolog sweeps (lifecycle_test).
check "the detached archivers emptied or removed both local TSDBs" bash -c \
  "test -z \"\$(ls -A $STATE/tsdb/node1/$a $STATE/tsdb/node1/$b 2>/dev/null)\""
plugin_args

echo "# remote_write to a central store (a Prometheus receiver in node2's namespace)"
mkdir -p "$SCRATCH/central"
ip netns exec "$TAG-node2" prometheus --config.file="$SCRATCH/empty.yml" --storage.tsdb.path="$SCRATCH/central" \
  --web.listen-address="$SUBNET.12:19090" --web.enable-remote-write-receiver >"$SCRATCH/central.log" 2>&1 &
OUR_PIDS+=($!)
CLUSTER=$(scontrol show config | awk '$1 == "ClusterName" {print $3}')
install -m 0640 /dev/null "$SCRATCH/rw-token" && echo "jobmon-test-token" >"$SCRATCH/rw-token"
plugin_args "remote_write=http://$SUBNET.12:19090/api/v1/write remote_write_bearer_file=$SCRATCH/rw-token"
rw=$(job_id "$(cd "$JOBS" && sbatch --parsable -N1 -w node1 --diag=on -o "$JOBS/rw-%j.log" "$JOBS/hold.sh")")
received() {
  ip netns exec "$TAG-node2" "$PROMQ" "http://$SUBNET.12:19090" \
    "up{slurm_job_id=\"$rw\",host=\"node1\",cluster=\"$CLUSTER\",user=\"root\"}" | grep -q ' 1$'
}
check "the central store receives the job's series, labelled with job id, cluster ($CLUSTER) and user" wait_for 40 received
check "prometheus.yml names the token file, not the token" bash -c \
  "grep -q 'credentials_file: \"$SCRATCH/rw-token\"' $JOBS/jobmon-diag-$rw/prometheus.yml && ! grep -q jobmon-test-token $JOBS/jobmon-diag-$rw/prometheus.yml"
check "no local TSDB dir of the detached archivers' jobs is left" test ! -e "$STATE/tsdb/node1/$a" -a ! -e "$STATE/tsdb/node1/$b"
touch "$JOBS/release-$rw"
wait_for 60 job_done "$rw"
chmod 0644 "$SCRATCH/rw-token"
rw=$(job_id "$(cd "$JOBS" && sbatch --parsable --wait -N1 -w node1 --diag=on -o "$JOBS/rw-%j.log" --wrap 'echo job-ran')")
check "a world-readable token: remote_write off, the manifest says why, the job ran" bash -c \
  "grep -q 'remote_write off: .*rw-token: mode 0644' $JOBS/jobmon-diag-$rw/manifest.json && ! grep -q remote_write: $JOBS/jobmon-diag-$rw/prometheus.yml && grep -q '^job-ran$' $JOBS/rw-$rw.log"
kill "${OUR_PIDS[-1]}" 2>/dev/null
plugin_args

echo "# a job without --diag starts nothing"
plain=$(job_id "$(cd "$JOBS" && sbatch --parsable --wait -N2 -o "$JOBS/plain-%j.log" --wrap 'srun true')")
check "no diag dir, no run dir, no [diag] line" bash -c \
  "test ! -e $JOBS/jobmon-diag-$plain && test ! -e $STATE/jobmon-run/node1/$plain && ! grep -q '\[diag\]' $JOBS/plain-$plain.log"

echo "# fail-open: the job runs to its exit code, the node returns to idle, one [diag] line says why"
fail_open() {  # fail_open NAME EXPECTED_TEXT EXIT_CODE plugin args...
  local name=$1 expected=$2 code=$3 id out rc
  shift 3
  plugin_args "$@"
  out=$(cd "$JOBS" && timeout 120 sbatch --parsable --wait -N2 --diag=on -o "$JOBS/fo-%j.log" \
    --wrap "srun true; sleep 2; echo job-ran; exit $code" 2>&1)
  rc=$?
  id=$(job_id "$out")
  check "$name: the job exits with its own code ($code)" test "$rc" -eq "$code"
  check "$name: the job ran" grep -q '^job-ran$' "$JOBS/fo-$id.log"
  check "$name: both nodes idle, none drained" wait_for 20 nodes_idle
  check "$name: [diag] line says: $expected" grep -qF "$expected" "$JOBS/fo-$id.log"
  # This cluster's diag dir: another dev cluster on the machine has its own jobmon-diag-N.
  check "$name: nothing of ours left running" wait_for 10 test -z "$(processes_of "$JOBS/jobmon-diag-$id")"
}
fail_open "Prometheus missing" "no Prometheus: /nonexistent/prometheus is not an executable" 0 \
  prometheus=/nonexistent/prometheus
in_node node1 /usr/bin/python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1", 9390)); s.listen(); time.sleep(300)' &
OUR_PIDS+=($!)
sleep 0.5
fail_open "port range exhausted" "no Prometheus: no free port in 9390-9390 on 127.0.0.1" 3 \
  prometheus_port=9390 port_tries=1
kill "${OUR_PIDS[-1]}" 2>/dev/null
fail_open "diag dir unwritable" "diag dir unwritable" 0 "diag_dir=/proc/jobmon-diag-%j"
fail_open "no private address" "no exporter: no cluster-private address" 0 private_cidrs=192.0.2.0/24
plugin_args exporter=/bin/false exporter_restarts=1
out=$(cd "$JOBS" && timeout 120 sbatch --parsable --wait -N1 -w node1 --diag=on -o "$JOBS/crash-%j.log" \
  --wrap "sleep 5; echo job-ran; exit 0" 2>&1)
rc=$?
crash=$(job_id "$out")
check "exporter crashing: the job exits 0" test "$rc" -eq 0
check "exporter crashing: both nodes idle, none drained" wait_for 20 nodes_idle
check "exporter crashing: a [diag] line in slurmd's log says it gave up" wait_for 20 \
  grep -q "\[diag\] job $crash node node1: exporter crashed repeatedly" "$STATE/log/slurmd-node1.log"
crash_noted() { manifest "$JOBS/jobmon-diag-$crash/manifest.json" degraded | grep -q 'exporter crashed repeatedly'; }
check "exporter crashing: the manifest lists it as degraded" wait_for 20 crash_noted
plugin_args bogus=1
out=$(cd "$JOBS" && timeout 60 sbatch --parsable --wait -N1 --diag=on -o "$JOBS/bogus-%j.log" --wrap "echo job-ran" 2>&1)
rc=$?
bogus=$(job_id "$out")
check "unknown plugstack argument: the job exits 0" test "$rc" -eq 0
check "unknown plugstack argument: one clear error in slurmd's log" \
  grep -q "\[diag\] unknown plugstack.conf argument 'bogus'" "$STATE/log/slurmd-node1.log"
check "unknown plugstack argument: nothing started" test ! -e "$JOBS/jobmon-diag-$bogus"
plugin_args

echo "# an unprivileged user's job; then a symlink planted where its next diag dir goes"
TEST_USER=jmit$$
if useradd --system --no-create-home --shell /usr/sbin/nologin "$TEST_USER"; then
  as_user() { runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" "$@"; }
  UDIR=$JOBS/user-$TEST_USER
  mkdir -p "$UDIR" && chown "$TEST_USER:" "$UDIR"
  out=$(cd "$UDIR" && as_user sbatch --parsable --wait -N2 --diag=on -o "$UDIR/run-%j.out" \
    --wrap "srun $FAKE_TRAINER --steps 20 --step-seconds 0.1 --tensorboard-dir \$JOBMON_DIAG_DIR/tensorboard/%n; sleep 2" 2>&1)
  rc=$?
  uj=$(job_id "$out")
  UDIAG=$UDIR/jobmon-diag-$uj
  check "user job: exits 0" test "$rc" -eq 0
  user_archived() { [[ "$(manifest "$UDIAG/manifest.json" state 2>/dev/null)" == archived ]]; }
  check "user job: archived" wait_for 60 user_archived
  check "user job: its local TSDB is gone after the archive" wait_for 20 test ! -e "$STATE/tsdb/node1/$uj"
  check "user job: diag dir, manifest and archive belong to the user" test \
    "$(stat -c %U "$UDIAG" "$UDIAG/manifest.json" "$UDIAG/tsdb.tar.zst" | sort -u)" == "$TEST_USER"
  uid=$(id -u "$TEST_USER")
  owners=$(tar --zstd --numeric-owner -tvf "$UDIAG/tsdb.tar.zst" | awk '{print $2}' | cut -d/ -f1 | sort -u)
  check "user job: the TSDB in the archive was written by the user's Prometheus (uid $uid)" \
    test "$owners" == "$uid"
  ROOT_ONLY=$SCRATCH/root-only
  mkdir -p "$ROOT_ONLY" && chmod 0700 "$ROOT_ONLY"
  held=$(job_id "$(cd "$UDIR" && as_user sbatch --parsable --hold -N1 --diag=on -o "$UDIR/run-%j.out" --wrap 'echo job-ran')")
  as_user ln -s "$ROOT_ONLY" "$UDIR/jobmon-diag-$held"
  scontrol release "$held"
  check "symlinked diag dir: the job still runs" wait_for 60 job_done "$held"
  check "symlinked diag dir: nothing was written into the root-only target" test -z "$(ls -A "$ROOT_ONLY")"
  check "symlinked diag dir: [diag] says the diag dir is unwritable" grep -q 'diag dir unwritable' "$UDIR/run-$held.out"
  check "symlinked diag dir: the job's own output is there" grep -q '^job-ran$' "$UDIR/run-$held.out"
  check "symlinked diag dir: both nodes idle" wait_for 20 nodes_idle

  echo "# the user plants hostile files in its own diag dir; the epilog (root) neither leaks, hangs nor exhausts"
  SECRET=$SCRATCH/root-only-secret  # $SCRATCH is root's, 0700
  echo "TOPSECRET-$$-jobmon" >"$SECRET"
  chmod 0600 "$SECRET"
  hostile_job() {  # hostile_job NAME COMMANDS: a 1-node job of the user on node1; sets hj, HDIAG
    local out
    out=$(cd "$UDIR" && timeout 120 runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" \
      sbatch --parsable --wait -N1 -w node1 --diag=on -o "$UDIR/$1-%j.out" \
      --wrap "$2; echo job-ran" 2>&1)
    hj=$(job_id "$out")
    HDIAG=$UDIR/jobmon-diag-$hj
  }
  plugin_args epilog_wait=0s
  hostile_job detached "sleep 1"
  dj=$hj
  dj_archived() { [[ "$(manifest "$HDIAG/manifest.json" state 2>/dev/null)" == archived ]]; }
  check "user job, detached archiver: archived" wait_for 60 dj_archived
  check "user job, detached archiver: its local TSDB is emptied (the dir is in a root-owned parent)" \
    test -d "$STATE/tsdb/node1/$dj" -a -z "$(ls -A "$STATE/tsdb/node1/$dj" 2>/dev/null)"
  plugin_args
  ended_or_archived() { [[ "$(manifest "$HDIAG/manifest.json" state 2>/dev/null)" =~ ^(ended|archived)$ ]]; }
  hostile_job secret "ln -s $SECRET \$JOBMON_DIAG_DIR/logs/degraded-x.txt"
  check "degraded note linked to a root-only file: the job ran" grep -q '^job-ran$' "$UDIR/secret-$hj.out"
  check "the next job's prolog swept the emptied local TSDB dir" test ! -e "$STATE/tsdb/node1/$dj"
  check "degraded note linked to a root-only file: the epilog finished the manifest" wait_for 60 ended_or_archived
  check "degraded note linked to a root-only file: the secret is not in manifest.json" \
    bash -c "test -s $HDIAG/manifest.json && ! grep -q TOPSECRET $HDIAG/manifest.json"
  check "degraded note linked to a root-only file: the manifest says it was refused" \
    grep -q 'x: degraded note not read: .*refused' "$HDIAG/manifest.json"
  check "degraded note linked to a root-only file: both nodes idle" wait_for 20 nodes_idle

  hostile_job fifo "rm -f \$JOBMON_DIAG_DIR/manifest.json; mkfifo \$JOBMON_DIAG_DIR/manifest.json"
  check "manifest.json a FIFO: the job ran" grep -q '^job-ran$' "$UDIR/fifo-$hj.out"
  check "manifest.json a FIFO: the job ends (the epilog did not hang)" wait_for 60 job_done "$hj"
  check "manifest.json a FIFO: both nodes idle" wait_for 20 nodes_idle
  check "manifest.json a FIFO: slurmd's log says it was refused" \
    grep -q "\[diag\] job $hj: .*manifest.json: refused: a FIFO" "$STATE/log/slurmd-node1.log"

  hostile_job zero "ln -s /dev/zero \$JOBMON_DIAG_DIR/logs/degraded-zero.txt"
  check "degraded note linked to /dev/zero: the job ends" wait_for 60 job_done "$hj"
  check "degraded note linked to /dev/zero: the epilog finished the manifest" wait_for 60 ended_or_archived
  check "degraded note linked to /dev/zero: the manifest says it was refused" \
    grep -q 'zero: degraded note not read: .*refused' "$HDIAG/manifest.json"
  check "degraded note linked to /dev/zero: both nodes idle" wait_for 20 nodes_idle
  slurmd_rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$(cut -d' ' -f1 "$STATE/pids/slurmd-node1")/status"; }
  check "degraded note linked to /dev/zero: slurmd's memory is sane ($(slurmd_rss_kib) KiB)" \
    test "$(slurmd_rss_kib)" -lt $((256 * 1024))

  echo "# a non-root job whose exporter keeps crashing (the supervisor runs as the user)"
  plugin_args exporter=/bin/false exporter_restarts=1
  hostile_job crash "sleep 5"
  check "user's exporter crashing: the job ran" grep -q '^job-ran$' "$UDIR/crash-$hj.out"
  user_crash_noted() { manifest "$HDIAG/manifest.json" degraded | grep -q 'exporter crashed repeatedly'; }
  check "user's exporter crashing: the manifest lists it as degraded" wait_for 30 user_crash_noted
  check "user's exporter crashing: both nodes idle" wait_for 20 nodes_idle
  plugin_args

  echo "# service_user: the exporter runs as another user; its log is the job user's"
  SERVICE_USER=jmsv$$
  if useradd --system --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"; then
    plugin_args "service_user=$SERVICE_USER"
    hostile_job svc "sleep 4"
    LOG=$HDIAG/logs/exporter-node1.log
    check "service_user: the job ran" grep -q '^job-ran$' "$UDIR/svc-$hj.out"
    check "service_user: the exporter served (its log, owned by the job's user)" bash -c \
      "grep -q 'jobmon-exporter: serving http://' $LOG && test \"\$(stat -c %U $LOG)\" == $TEST_USER"
    check "service_user: nothing degraded" test "$(manifest "$HDIAG/manifest.json" degraded)" == "[]"
    # The user plants a symlink to a file of the service user where the log goes.
    VICTIM=$SCRATCH/service-owned.log
    install -o "$SERVICE_USER" -m 0600 /dev/null "$VICTIM"
    chmod 0711 "$SCRATCH"
    held=$(job_id "$(cd "$UDIR" && as_user sbatch --parsable --hold -N1 -w node1 --diag=on -o "$UDIR/svc-%j.out" --wrap 'sleep 2; echo job-ran')")
    as_user mkdir -p "$UDIR/jobmon-diag-$held/logs"
    as_user ln -s "$VICTIM" "$UDIR/jobmon-diag-$held/logs/exporter-node1.log"
    scontrol release "$held"
    check "service_user, symlinked log: the job ends" wait_for 60 job_done "$held"
    check "service_user, symlinked log: the service user's file was not appended to" test ! -s "$VICTIM"
    check "service_user, symlinked log: [diag] says the log was refused" \
      grep -q 'exporter log: .*refused: a symlink' "$UDIR/svc-$held.out"
    check "service_user, symlinked log: the exporter still ran (target published)" \
      test -s "$UDIR/jobmon-diag-$held/targets/node1.json"
    chmod 0700 "$SCRATCH"
    plugin_args
  else
    echo "FAIL - useradd $SERVICE_USER"
    failed=$((failed + 1))
    SERVICE_USER=""
  fi
else
  echo "FAIL - useradd $TEST_USER"
  failed=$((failed + 1))
  TEST_USER=""
fi

finish
