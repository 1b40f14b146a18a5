#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine, as root:
# dependencies, lint, unit tests under ASan/UBSan, integration tests on the
# real dev cluster, bounded fuzzing. Ends with a table of each step's wall
# time (also when a step fails): every change to this command is judged by it.
#
#   scripts/test.sh                 the whole suite (what CI runs)
#   JOBMON_FUZZ_SECONDS=S scripts/test.sh   fuzz S seconds in all instead of 90
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
on_error_say_where

readonly STEPS=7
step_names=() step_seconds=()
current="" current_start=0 suite_start=$SECONDS

# step N NAME: closes the previous step's timing, opens this one.
step() {
  end_step
  current=$2 current_start=$SECONDS
  echo
  echo "=== [$1/$STEPS] $2 ($(date +%T))"
}

end_step() {
  if [[ -n "$current" ]]; then
    step_names+=("$current")
    step_seconds+=($((SECONDS - current_start)))
  fi
  current=""
}

# The timing table, on every way out; a failed step is marked as such.
timing_table() {
  local status=$?
  local failed_step=$current
  end_step
  echo
  echo "=== timing (wall seconds, $(nproc) cores)"
  local i
  for i in "${!step_names[@]}"; do
    local mark=""
    [[ $status -ne 0 && "${step_names[$i]}" == "$failed_step" ]] && mark="  FAILED"
    printf '%6d s  %s%s\n' "${step_seconds[$i]}" "${step_names[$i]}" "$mark"
    [[ "${step_names[$i]}" == integration* ]] && suite_times
  done
  printf '%6d s  total (%d min %02d s)\n' $((SECONDS - suite_start)) \
    $(((SECONDS - suite_start) / 60)) $(((SECONDS - suite_start) % 60))
  return "$status"
}
trap timing_table EXIT

# Each integration suite's own wall time and result, from ctest's lines
# ("N/M Test #K: NAME ....   Passed   S sec"), longest first, under the step.
readonly INTEGRATION_LOG=build/release/integration-ctest.log
suite_times() {
  [[ -f $INTEGRATION_LOG ]] || return 0
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[ *]*([A-Za-z]+)[^0-9]*([0-9.]+) sec.*/\3 \1 \2/p' \
    "$INTEGRATION_LOG" | sort -rn |
    awk '{printf "        %6.0f s  %s%s\n", $1, $2, ($3 == "Passed" ? "" : "  " $3)}'
}

lint() {
  mapfile -t sources < <(git ls-files '*.cc' '*.h')
  clang-format --dry-run -Werror "${sources[@]}"
  echo "${#sources[@]} C++ files formatted"
  mapfile -t shell_scripts < <(git ls-files '*.sh' contrib/devcluster/devcluster .ci/run)
  shellcheck -x "${shell_scripts[@]}"
  echo "${#shell_scripts[@]} shell scripts clean"
}

step 1 "install dependencies"
scripts/install-deps.sh

step 2 "lint: clang-format (.clang-format), shellcheck"
lint

# One clang tree serves the unit tests and the fuzzers: every library is
# compiled once with ASan/UBSan and libFuzzer's coverage instrumentation
# (scripts/build.sh asan).
step 3 "build with ASan/UBSan (clang): unit tests and libFuzzer targets"
scripts/build.sh asan

# A 16 MiB quarantine (ASan's default: 256): building the pattern databases
# churns through more than that, and every fresh page of it cost page faults
# (a 1.4 s `jobmon triage` took 0.8 s). A use after free is still caught
# while the freed block is among the last 16 MiB freed. Allocation stacks of
# 5 frames (default 30): every malloc records one, and Hyperscan's compile at
# each `jobmon triage` start makes many (1.2 s of CPU down to 0.9 s); a
# report still names the allocating function and its callers.
step 4 "unit tests under ASan/UBSan"
(cd build/asan && ASAN_OPTIONS="quarantine_size_mb=16:malloc_context_size=5${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  ctest -L unit -j2 --output-on-failure --timeout 300)

step 5 "bounded fuzzing of the untrusted-input parsers (regressions replayed, then ${JOBMON_FUZZ_SECONDS:-90} s)"
scripts/fuzz.sh --ci

# -O1: the dev clusters need working binaries, not the last percent of
# speed, and gcc compiles the tree in three quarters of -O2's time; the
# package builds -O2 (scripts/build.sh release). Unity batches: as the
# demo's build, which this keeps compiling (a helper name two sources of
# one component share breaks it).
step 6 "release build at -O1 (gcc: SPANK plugin, tools, fake trainer; no unit tests: they ran in step 4)"
scripts/build.sh release -DJOBMON_BUILD_UNIT_TESTS=OFF -DJOBMON_DEBUG_INFO=OFF -DJOBMON_UNITY=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG"

# Two suites at a time, each on its own dev cluster (own state dir, subnet
# and slurmctld port); those that change what the whole machine shares run
# alone (RUN_SERIAL in tests/integration/CMakeLists.txt).
step 7 "integration tests on dev clusters, two at a time"
(cd build/release && ctest -L integration -j2 --output-on-failure --timeout 900) 2>&1 |
  tee "$INTEGRATION_LOG"

end_step
echo
echo "all tests passed"
