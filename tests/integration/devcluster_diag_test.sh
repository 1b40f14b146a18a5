#!/usr/bin/env bash
# Integration test on the real dev cluster (Debian's slurmctld, slurmd,
# munge; 2 nodes in network namespaces): the --diag option end to end and a
# clean teardown. Needs root. Prints one line per check and a closing
# "N passed, N failed" line; the cluster is torn down even on failure.
set -uo pipefail

DEVCLUSTER="" PLUGIN="" FAKE_TRAINER=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --fake-trainer) FAKE_TRAINER=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --plugin SO --fake-trainer PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$PLUGIN" && -x "$FAKE_TRAINER" ]] || { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (network namespaces, Slurm daemons)" >&2; exit 2; }
# Jobs run in their own working directory: every path must be absolute.
DEVCLUSTER=$(realpath "$DEVCLUSTER") PLUGIN=$(realpath "$PLUGIN") FAKE_TRAINER=$(realpath "$FAKE_TRAINER")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=$(mktemp -d /tmp/jobmon-it-XXXXXX)
SUBNET=10.202.$((RANDOM % 200 + 20))
SCRATCH=$(mktemp -d /tmp/jobmon-it-logs-XXXXXX)

teardown() {  # down twice, as the test does
  teardown_cluster jobmon-it
  "$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1 || true
}
trap teardown EXIT

cluster_processes() {  # daemons and step daemons whose command line or environment names a state dir
  local pid name
  for pid in $(for name in slurmctld slurmd slurmstepd munged; do pgrep -x "$name"; done); do
    if grep -qa -- "$1" "/proc/$pid/cmdline" "/proc/$pid/environ" 2>/dev/null; then echo "$pid"; fi
  done
}

echo "# a failed up cleans up after itself"
FAILED_STATE=$(mktemp -d /tmp/jobmon-it-failed-XXXXXX)
failed_out=$("$DEVCLUSTER" up --state "$FAILED_STATE" --subnet 10.203.$((RANDOM % 200 + 20)) --no-plugin --timeout 0 2>&1)
failed_rc=$?
check "up with a 0 s timeout fails" test "$failed_rc" -ne 0
check "the failure shows the daemons' log tails" grep -q -- '----- tail of' <<<"$failed_out"
check "the failed up left no daemon" test -z "$(cluster_processes "$FAILED_STATE")"
check "the failed up left no state dir" test ! -e "$FAILED_STATE"
check "down after a failed up is harmless" "$DEVCLUSTER" down --state "$FAILED_STATE"

echo "# devcluster up: 2 nodes on $SUBNET.0/24, state $STATE"
if ! "$DEVCLUSTER" up --nodes 2 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN" --timeout 90; then
  echo "FAIL - devcluster up"
  echo "0 passed, 1 failed"
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
TAG=$DEVCLUSTER_TAG
JOBS=$DEVCLUSTER_JOBS

check "sinfo shows 2 idle nodes" \
  test "$(sinfo -h -N -o '%N %t' | sort -u | grep -c ' idle$')" -eq 2
check "each node has its own address in its own namespace" bash -c \
  "ip netns exec $TAG-node1 ip -4 -o addr show eth0 | grep -q ' $SUBNET.11/24' &&
   ip netns exec $TAG-node2 ip -4 -o addr show eth0 | grep -q ' $SUBNET.12/24' &&
   ip netns exec $TAG-node1 ip -o link show lo | grep -q 'UP'"
for tool in sbatch salloc srun; do
  check "$tool --help lists --diag" bash -c "$tool --help | grep -q -- '--diag=on|off'"
done
second_out=$("$DEVCLUSTER" up --state "$STATE" --subnet 10.203.0 2>&1)
second_rc=$?
check "a second cluster on the same state dir is refused" test "$second_rc" -ne 0
check "the refusal says why" grep -q 'already uses state dir' <<<"$second_out"
check "the refused start left the running cluster alone" \
  test "$(sinfo -h -N -o '%N %t' | sort -u | grep -c ' idle$')" -eq 2

bad_out=$(sbatch --diag=maybe --wrap true 2>&1)
bad_rc=$?
check "--diag=maybe is rejected at submission" test "$bad_rc" -ne 0
check "the rejection names the value and the choices" \
  grep -q "invalid --diag value 'maybe': expected 'on' or 'off'" <<<"$bad_out"

echo "# 2-node --diag=on job running srun fake-trainer on both nodes"
on_out=$(cd "$JOBS" && timeout 180 sbatch --wait --parsable -N2 --diag=on -o "$JOBS/on-%j.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 12 --step-seconds 0.05 --seed 5 --gpu-sysfs $JOBS/gpu-%n" 2>&1)
on_rc=$?
on_job=${on_out%%;*}
on_job=${on_job//[^0-9]/}
echo "# job $on_job exited $on_rc"
check "--diag=on job exits 0" test "$on_rc" -eq 0
check "both tasks reached the last step" bash -c \
  "grep -q '^0: completed step: 11,' '$JOBS/on-$on_job.log' && grep -q '^1: completed step: 11,' '$JOBS/on-$on_job.log'"
check "tasks ran on node1 and node2" bash -c \
  "grep -q '^0: \[fake-trainer\] task 0 on host node1' '$JOBS/on-$on_job.log' &&
   grep -q '^1: \[fake-trainer\] task 1 on host node2' '$JOBS/on-$on_job.log'"
check "JOB SUMMARY says SUCCESS" grep -q '^0: Status: SUCCESS (exit 0)$' "$JOBS/on-$on_job.log"
check "fake GPU sysfs written on both nodes" bash -c \
  "test -s '$JOBS/gpu-node1/class/drm/card0/device/gpu_busy_percent' &&
   test -s '$JOBS/gpu-node2/class/drm/card1/device/hwmon/hwmon1/power1_average'"
for node in node1 node2; do
  for line in "node $node: exporter started" "node $node: stopped (exporter terminated"; do
    # The epilog runs after sbatch --wait returns; give it a moment.
    check "[diag] '$line' for job $on_job" bash -c \
      "for i in \$(seq 1 100); do grep -qF '[diag] job $on_job $line' \
       '$STATE/log/slurmd-$node.log' && exit 0; sleep 0.2; done; exit 1"
  done
done

echo "# the same job without --diag"
off_out=$(cd "$JOBS" && timeout 180 sbatch --wait --parsable -N2 -o "$JOBS/off-%j.log" \
  --wrap "srun -l $FAKE_TRAINER --steps 4 --step-seconds 0.05" 2>&1)
off_rc=$?
off_job=${off_out%%;*}
off_job=${off_job//[^0-9]/}
check "job without --diag exits 0" test "$off_rc" -eq 0
check "its epilog has finished (the job left squeue)" wait_for 30 job_done "$off_job"
check "without --diag nothing is logged for job $off_job" bash -c \
  "! grep -q '\[diag\] job $off_job ' '$STATE'/log/slurmd-*.log"
echo "# job with --diag=off"
offx_out=$(cd "$JOBS" && timeout 180 sbatch --wait --parsable -N1 --diag=off -o "$JOBS/offx-%j.log" --wrap "true" 2>&1)
offx_job=${offx_out%%;*}
offx_job=${offx_job//[^0-9]/}
check "its epilog has finished (the job left squeue)" wait_for 30 job_done "$offx_job"
check "--diag=off logs nothing for job $offx_job" bash -c \
  "! grep -q '\[diag\] job $offx_job ' '$STATE'/log/slurmd-*.log"

echo "# devcluster down, twice"
check "devcluster down succeeds" "$DEVCLUSTER" down --state "$STATE"
check "devcluster down again succeeds" "$DEVCLUSTER" down --state "$STATE"
leftover=$(cluster_processes "$STATE")
check "no slurm or munge process of this cluster is left" test -z "$leftover"
[[ -z "$leftover" ]] || ps -o pid,args -p "${leftover//$'\n'/,}"
check "no network namespace of this cluster is left" bash -c "! ip netns list | grep -q '^$TAG-'"
check "no link of this cluster is left" bash -c "! ip -o link show | grep -q ': $TAG'"
check "no mount of this cluster is left" bash -c "! grep -q -e '$TAG' -e '$STATE' /proc/self/mountinfo"
check "state dir removed" test ! -e "$STATE"
finish
