#!/usr/bin/env bash
# contrib/systemd/slurm_job_monitor.service (or the unit given as $1) with
# systemd's own tools: `systemd-analyze verify` says nothing about it, its
# offline exposure score stays low, the hardening the daemon was checked
# against is there, and every path the daemon writes by default (the API
# socket, the state database) is writable under its ProtectSystem=strict.
# No systemd needs to run: verify and security --offline read the file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
unit=${1:-$root/contrib/systemd/slurm_job_monitor.service}
# The offline exposure score of the unit as reviewed: 2.7 (systemd 252).
max_exposure=3.0
# shellcheck source=tests/unit/scripts/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd_unit_test: systemd-analyze not found (package systemd; scripts/install-deps.sh installs it)" >&2
  exit 1
fi
work=$(mktemp -d /tmp/systemd-unit-test-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Every value of KEY in [Service], in order; an empty assignment resets the
# list (systemd's rule for list settings; for a single setting the last wins).
values() {
  awk -v key="$1" '
    /^[[:space:]]*\[/ { in_service = ($0 ~ /^[[:space:]]*\[Service\]/); next }
    !in_service || /^[[:space:]]*[#;]/ { next }
    {
      eq = index($0, "="); if (!eq) next
      k = substr($0, 1, eq - 1); gsub(/[[:space:]]/, "", k)
      if (k != key) next
      v = substr($0, eq + 1); gsub(/^[[:space:]]+|[[:space:]]+$/, "", v)
      if (v == "") { n = 0; delete all; next }
      all[++n] = v
    }
    END { for (i = 1; i <= n; i++) print all[i] }' "$unit"
}
last() { values "$1" | tail -n 1; }
words() { values "$1" | tr ' ' '\n' | sed '/^$/d'; }
has_word() { words "$1" | grep -qx -- "$2"; }
is() { test "$(last "$1")" = "$2"; }
# A quoted default from a C++ header: `std::string NAME = "VALUE";`.
default_of() { sed -n "s/.*std::string $2 = \"\([^\"]*\)\".*/\1/p" "$root/$1" | head -n 1; }

# 1. systemd-analyze verify: silent, exit 0. It checks that ExecStart's
# program exists, so the copy it reads runs a stand-in with the same arguments.
printf '#!/bin/sh\n' >"$work/slurm_job_monitor"
chmod 0755 "$work/slurm_job_monitor"
sed -E "s#^ExecStart=(/usr/sbin/slurm_job_monitor)([[:space:]]|\$)#ExecStart=$work/slurm_job_monitor\\2#" "$unit" \
  >"$work/slurm_job_monitor.service"
rc=0
verify=$(cd "$work" && systemd-analyze verify --man=no ./slurm_job_monitor.service 2>&1) || rc=$?
[[ -z $verify ]] || printf '%s\n' "$verify" | sed 's/^/     verify: /'
check "systemd-analyze verify: exit 0" test "$rc" -eq 0
check "systemd-analyze verify: no warning (unknown key, bad value, missing program)" test -z "$verify"

# 2. The exposure score systemd computes offline.
security=$(cd "$work" && SYSTEMD_COLORS=0 systemd-analyze security --offline=true \
  ./slurm_job_monitor.service 2>&1) || true
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$security")
echo "     exposure score: ${score:-none} (at most $max_exposure)"
check "systemd-analyze security --offline: exposure at most $max_exposure" \
  awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s != "" && s + 0 <= m + 0) }'

# 3. The regression: the default API socket's directory is writable under
# ProtectSystem=strict (the old unit had no RuntimeDirectory, and
# /run/jobmon/monitor.sock could not be created). Whatever the code's default
# becomes, its directory must be a RuntimeDirectory (or a ReadWritePath).
writable_under_unit() { # PATH: a file the daemon creates
  local dir
  dir=$(dirname "$1")
  local entry
  while read -r entry; do
    [[ -n $entry ]] || continue
    [[ $dir == "/run/$entry" || $dir == /run/$entry/* ]] && return 0
  done < <(words RuntimeDirectory)
  while read -r entry; do
    [[ -n $entry ]] || continue
    entry=${entry#-}
    [[ $dir == "$entry" || $dir == $entry/* ]] && return 0
  done < <(words ReadWritePaths)
  while read -r entry; do
    [[ -n $entry ]] || continue
    [[ $dir == "/var/lib/$entry" || $dir == /var/lib/$entry/* ]] && return 0
  done < <(words StateDirectory)
  return 1
}
api_socket=$(default_of monitor/include/jobmon/monitor/monitor_config.h api_socket)
state_db=$(default_of monitor/include/jobmon/monitor/monitor_config.h state_db)
check "the code's defaults were found (api_socket '$api_socket', state_db '$state_db')" \
  test -n "$api_socket" -a -n "$state_db"
check "api_socket_unwritable_under_protect_system: $api_socket's directory is a RuntimeDirectory" \
  writable_under_unit "$api_socket"
check "state_db_unwritable_under_protect_system: $state_db's directory is writable" \
  writable_under_unit "$state_db"
mode=$(last RuntimeDirectoryMode)
others_search() { [[ $1 =~ ^0?[0-7]{3}$ ]] && ((8#$1 & 1)); }
check "RuntimeDirectoryMode ($mode) lets every user reach the socket (o+x)" others_search "$mode"
# The plugin's run_dir shares /run/jobmon on a host that is also a compute
# node: stopping the monitor must not delete the running jobs' state there.
run_dir=$(default_of spank/lifecycle/plugin_config.h run_dir)
shared=no
while read -r entry; do
  [[ -n $entry && ($run_dir == "/run/$entry" || $run_dir == /run/$entry/*) ]] && shared=yes
done < <(words RuntimeDirectory)
if [[ $shared == yes ]]; then
  check "plugin's run_dir ($run_dir) is below the RuntimeDirectory: RuntimeDirectoryPreserve=yes" \
    is RuntimeDirectoryPreserve yes
fi

# 4. The hardening (README): each setting as the daemon was checked against.
for setting in NoNewPrivileges=yes ProtectSystem=strict ProtectKernelLogs=yes \
  ProtectKernelModules=yes ProtectKernelTunables=yes ProtectControlGroups=yes \
  RestrictNamespaces=yes RestrictSUIDSGID=yes LockPersonality=yes \
  SystemCallArchitectures=native SystemCallErrorNumber=EPERM; do
  check "$setting" is "${setting%%=*}" "${setting#*=}"
done
check "SystemCallFilter=@system-service" is SystemCallFilter @system-service
check "CapabilityBoundingSet is set (root otherwise keeps every capability)" \
  test -n "$(words CapabilityBoundingSet)"
known_caps=$(systemd-analyze capability 2>/dev/null | awk 'NR > 1 { print toupper($1) }')
while read -r cap; do
  [[ -n $cap ]] || continue
  check "  $cap is a capability systemd knows" grep -qx -- "$cap" <<<"$known_caps"
done < <(words CapabilityBoundingSet)
for cap in CAP_SETUID CAP_SETGID CAP_KILL; do
  check "  keeps $cap (setfsuid, the diagnose child as the job's user, stopping it)" \
    has_word CapabilityBoundingSet "$cap"
done
# Unset, the bounding set is every capability: then none of these holds.
lacks_cap() { test -n "$(words CapabilityBoundingSet)" && ! has_word CapabilityBoundingSet "$1"; }
for cap in CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_SYS_MODULE CAP_NET_ADMIN CAP_DAC_OVERRIDE \
  CAP_DAC_READ_SEARCH CAP_CHOWN CAP_FOWNER CAP_SETPCAP; do
  check "  not $cap" lacks_cap "$cap"
done
# What the daemon and its children call must be in the filter's groups.
expand() {
  systemd-analyze syscall-filter "$1" | sed -e 's/^[[:space:]]*//' -e '/^#/d' -e '/^$/d' |
    tail -n +2 | while read -r name; do
    if [[ $name == @* ]]; then expand "$name"; else echo "$name"; fi
  done
}
allowed=$(expand @system-service | sort -u)
for call in setfsuid setfsgid setgroups setgid setuid kill prctl execve close_range memfd_create \
  setrlimit eventfd2 getsockopt; do
  check "  @system-service allows $call" grep -qx -- "$call" <<<"$allowed"
done
for family in AF_UNIX AF_INET AF_INET6 AF_NETLINK; do
  check "RestrictAddressFamilies allows $family" has_word RestrictAddressFamilies "$family"
done

echo "systemd_unit_test: $passed passed, $failed failed ($unit)"
[[ $failed -eq 0 ]]
