#!/usr/bin/env bash
# scripts/install-deps.sh with apt-get and dpkg-query replaced by stand-ins:
# exit status and policy-rc.d handling when the file is there before
# (Debian's container images ship one) and when it is not, when packages
# are missing, and when apt-get fails. No real package is touched.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d /tmp/install-deps-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/unit/scripts/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# dpkg-query stand-in: a package is installed when it is listed in $STANDIN/installed.
cat >"$work/dpkg-query" <<'EOS'
#!/usr/bin/env bash
package=${!#}
grep -qx "$package" "$STANDIN/installed" 2>/dev/null && printf 'install ok installed'
exit 0
EOS
# apt-get stand-in: logs its calls and whether a policy file existed during
# the install; fails on request; an install marks its packages installed.
cat >"$work/apt-get" <<'EOS'
#!/usr/bin/env bash
echo "$*" >>"$STANDIN/calls"
case $1 in
  update) exit "${STANDIN_UPDATE_RC:-0}" ;;
  install)
    if [[ -e $JOBMON_POLICY_RC ]]; then echo present >>"$STANDIN/policy-during-install"; fi
    if [[ ${STANDIN_INSTALL_RC:-0} -ne 0 ]]; then
      echo "E: Unable to locate package (stand-in)" >&2
      exit "$STANDIN_INSTALL_RC"
    fi
    for arg in "${@:2}"; do [[ $arg == -* ]] || echo "$arg" >>"$STANDIN/installed"; done ;;
esac
EOS
chmod +x "$work/dpkg-query" "$work/apt-get"

# run CASE [ENV...]: a fresh stand-in state, then install-deps; sets rc and out.
run() {
  export STANDIN=$work/$1
  shift
  mkdir -p "$STANDIN"
  : >"$STANDIN/installed"
  rc=0
  out=$(env "$@" JOBMON_APT_GET="$work/apt-get" JOBMON_DPKG_QUERY="$work/dpkg-query" \
    JOBMON_POLICY_RC="$STANDIN/policy-rc.d" STANDIN="$STANDIN" \
    "$root/scripts/install-deps.sh" 2>&1) || rc=$?
}
image_policy() {
  mkdir -p "$work/$1"
  printf '#!/bin/sh\n# the image'"'"'s own\nexit 101\n' >"$work/$1/policy-rc.d"
  touch -d '2020-01-01' "$work/$1/policy-rc.d"
  stat -c '%Y %s' "$work/$1/policy-rc.d"
}

# 1. Packages missing, no policy file before: one is made for the install, removed after, exit 0.
run absent
check "missing packages, no policy before: exit 0" test "$rc" -eq 0
check "  a policy file existed during the install" test -s "$STANDIN/policy-during-install"
check "  the policy file it created is removed" test ! -e "$STANDIN/policy-rc.d"
check "  'apt-get update' then 'apt-get install' ran" grep -q '^update' "$STANDIN/calls"

# 2. Packages missing, the image's policy file present: exit 0 (the reported bug), file untouched.
before=$(image_policy present)
run present
check "missing packages, image's policy present: exit 0 (was 1)" test "$rc" -eq 0
check "  the image's policy file is left as it was" test "$(stat -c '%Y %s' "$STANDIN/policy-rc.d")" = "$before"
check "  install ran with a policy in place" test -s "$STANDIN/policy-during-install"

# 3. Everything present: exit 0 without calling apt-get.
export STANDIN=$work/all
mkdir -p "$STANDIN"
# listed PACKAGE_LIST: the packages of one list (DEMO_PACKAGES, TEST_PACKAGES).
listed() {
  sed -n "/^$1=(\$/,/^)/p" "$root/scripts/install-deps.sh" | grep -v '^ *#' | tr ' ' '\n' |
    grep -E '^[a-z0-9][a-z0-9.+-]+$'
}
{ listed DEMO_PACKAGES && listed TEST_PACKAGES; } >"$STANDIN/installed"
rc=0
out=$(JOBMON_APT_GET="$work/apt-get" JOBMON_DPKG_QUERY="$work/dpkg-query" \
  JOBMON_POLICY_RC="$STANDIN/policy-rc.d" "$root/scripts/install-deps.sh" 2>&1) || rc=$?
check "all packages present: exit 0" test "$rc" -eq 0
check "  and apt-get not called" test ! -e "$STANDIN/calls"
check "  and says so" grep -q 'packages present' <<<"$out"

# 4. apt-get install fails: non-zero, a message, our policy removed, the image's kept.
run install-fails STANDIN_INSTALL_RC=100
check "apt-get install fails: non-zero exit" test "$rc" -ne 0
check "  with a message naming the failure" grep -q "error: 'apt-get install' failed (exit 100)" <<<"$out"
check "  the policy file it created is removed" test ! -e "$STANDIN/policy-rc.d"
before=$(image_policy install-fails-present)
run install-fails-present STANDIN_INSTALL_RC=100
check "apt-get install fails with the image's policy: non-zero" test "$rc" -ne 0
check "  the image's policy file is left as it was" test "$(stat -c '%Y %s' "$STANDIN/policy-rc.d")" = "$before"

# 5. apt-get update fails: non-zero with a message, no install attempted.
run update-fails STANDIN_UPDATE_RC=100
check "apt-get update fails: non-zero exit" test "$rc" -ne 0
check "  with a message" grep -q "error: 'apt-get update' failed" <<<"$out"
check "  and no install attempted" bash -c "! grep -q '^install' '$STANDIN/calls'"

# 6. --demo: the demo's packages only; a wrong option is refused.
export STANDIN=$work/demo
mkdir -p "$STANDIN"
: >"$STANDIN/installed"
rc=0
out=$(JOBMON_APT_GET="$work/apt-get" JOBMON_DPKG_QUERY="$work/dpkg-query" \
  JOBMON_POLICY_RC="$STANDIN/policy-rc.d" "$root/scripts/install-deps.sh" --demo 2>&1) || rc=$?
check "--demo: exit 0" test "$rc" -eq 0
check "  installs the demo's packages (Slurm, Prometheus, the build)" bash -c \
  "grep -qx slurmctld '$STANDIN/installed' && grep -qx prometheus '$STANDIN/installed' && grep -qx cmake '$STANDIN/installed'"
check "  and none of the tests' own (PyTorch, Chromium, clang)" bash -c \
  "! grep -qxE 'python3-torch|chromium|clang-14' '$STANDIN/installed'"
check "  exactly the demo list" test "$(sort "$STANDIN/installed")" = "$(listed DEMO_PACKAGES | sort)"
rc=0
"$root/scripts/install-deps.sh" --bogus >/dev/null 2>&1 || rc=$?
check "an unknown option: exit 2" test "$rc" -eq 2

echo "$passed passed, $failed failed"
((failed == 0))
