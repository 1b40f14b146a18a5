#!/bin/bash
# Xid detection under kernel.dmesg_restrict=1 with an unprivileged job user,
# no Slurm: root opens /dev/kmsg (as the prolog does), then the privilege
# drop and jobmon-supervise -> jobmon-exporter --kmsg-fd N, the chain the
# prolog starts (SpawnDaemon's part of it: daemon_test). A control exporter
# of the same user without the descriptor must say it cannot read.
# The kernel cannot be made to print a real Xid; root writes one into the
# kernel log in the driver's format (NVIDIA/open-gpu-kernel-modules
# src/nvidia/src/kernel/gpu/rc/kernel_rc.c, XID_PRINT_WITH_ATTR).
# Restores the sysctl and removes the user on every way out.
set -euo pipefail

exporter="" supervise=""
while [ $# -gt 0 ]; do
  case "$1" in
    --exporter) exporter=$2; shift 2 ;;
    --supervise) supervise=$2; shift 2 ;;
    *) echo "usage: $0 --exporter PATH --supervise PATH" >&2; exit 2 ;;
  esac
done
if [ ! -x "$exporter" ] || [ ! -x "$supervise" ]; then echo "usage: $0 --exporter PATH --supervise PATH" >&2; exit 2; fi
exporter=$(realpath "$exporter") supervise=$(realpath "$supervise")  # the supervisor wants absolute paths
if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/kernel/dmesg_restrict ]; then
  echo "SKIP: needs root and a writable kernel.dmesg_restrict"
  exit 77
fi

sysctl_file=/proc/sys/kernel/dmesg_restrict
old_restrict=$(cat "$sysctl_file")
user="jmkmsg$$"
tmp=$(mktemp -d /tmp/jobmon-kmsg-test.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "$old_restrict" > "$sysctl_file"
  if id "$user" >/dev/null 2>&1; then userdel "$user" || true; fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*" >&2; for f in "$tmp"/*.log; do echo "--- $f" >&2; cat "$f" >&2; done; exit 1; }

echo 1 > "$sysctl_file"
useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
uid=$(id -u "$user")
gid=$(id -g "$user")
as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups)

# The premise: the job's user cannot open the kernel log itself.
if "${as_user[@]}" sh -c 'exec 3</dev/kmsg' 2>/dev/null; then
  fail "$user could open /dev/kmsg with dmesg_restrict=1"
fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
control_port=$(free_port)
# fd 7 is opened by root here, inherited through setpriv's setuid and both execs.
(
  exec 7</dev/kmsg
  exec "${as_user[@]}" "$supervise" --max-restarts 0 -- "$exporter" --kmsg-fd 7 \
    --listen "127.0.0.1:$port" --host kmsgtest --collectors dmesg
) > "$tmp/handed.log" 2>&1 &
pids+=($!)
"${as_user[@]}" "$exporter" --listen "127.0.0.1:$control_port" --host kmsgcontrol \
  --collectors dmesg > "$tmp/control.log" 2>&1 &
pids+=($!)

scrape() { curl -sf --max-time 2 "http://127.0.0.1:$1/metrics"; }
wait_for() {  # PORT REGEX
  for _ in $(seq 100); do
    if scrape "$1" | grep -Eq "$2"; then return 0; fi
    sleep 0.1
  done
  return 1
}
wait_for "$port" '^hw_dmesg_source\{source="inherited_fd",host="kmsgtest"\} 1' ||
  fail "the exporter does not say it reads the inherited descriptor"
wait_for "$control_port" '^hw_dmesg_source\{error="[^"]*/dev/kmsg: Operation not permitted[^"]*",source="none",host="kmsgcontrol"\} 1' ||
  fail "the control exporter does not say it cannot read the kernel log"
child=$(pgrep -P "${pids[0]}" -x jobmon-exporter || true)
[ -n "$child" ] || fail "no exporter under the supervisor"
[ "$(stat -c %u "/proc/$child")" = "$uid" ] || fail "the exporter does not run as $user"
wait_for "$port" '^hw_dmesg_gpu_errors_total\{host="kmsgtest"\} 0' || fail "no counter before the Xid"

echo '<3>NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.' > /dev/kmsg

wait_for "$port" '^hw_gpu_xid_errors_total\{xid="79",host="kmsgtest"\} 1$' ||
  fail "the Xid written to the kernel log was not counted: $(scrape "$port" | grep -E 'dmesg|xid')"
wait_for "$port" '^hw_dmesg_gpu_errors_total\{host="kmsgtest"\} 1$' || fail "hw_dmesg_gpu_errors_total"
scrape "$control_port" | grep -q '^hw_collector_success{collector="dmesg",host="kmsgcontrol"} 0' ||
  fail "the control exporter's dmesg collector reports success"
if scrape "$control_port" | grep -q hw_gpu_xid_errors_total; then
  fail "the control exporter counted an Xid it cannot read"
fi
echo "PASS: Xid 79 counted by $user's exporter under dmesg_restrict=1 through --kmsg-fd"
