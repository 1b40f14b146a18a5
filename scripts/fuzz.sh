#!/usr/bin/env bash
# Builds the libFuzzer targets (in build/asan: the unit tests' tree, see
# scripts/build.sh) and runs each from seeds taken from the test fixtures. A
# crash fails the script and leaves the reproducer in build/asan/crashes/
# (add it to tests/fuzz/regressions/ once fixed).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   exploratory: random seed, bounded time (default 15 s)
#   scripts/fuzz.sh --ci                   the test command's run: every reproducer in
#                                          tests/fuzz/regressions/ replayed, then fixed-seed
#                                          fuzzing for $JOBMON_FUZZ_SECONDS (default 90) in all,
#                                          shared evenly by the targets
# Longer runs by hand, e.g. an hour per target: scripts/fuzz.sh 3600
set -euo pipefail
mode="time"
seconds=15
if [[ "${1:-}" == --ci ]]; then
  mode=ci
elif [[ -n "${1:-}" ]]; then
  seconds=$1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
on_error_say_where
mkdir -p build
run_logged build/fuzz-build.log scripts/build.sh asan
bin=build/asan/tests/fuzz
work=$(mktemp -d /tmp/jobmon-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
crashes=build/asan/crashes
mkdir -p "$crashes"

# Seeds: fixture logs, their lines, hostlists, a real event file, the
# shipped config, a target file and recorded squeue --json and sinfo --json output.
mkdir -p "$work"/{triage,steps,hostlist,tfevents,exposition,monitor,promjson}
# Prometheus's answers as captured from the real server.
cp tests/fixtures/prometheus_api/*.json tests/fixtures/prometheus_api/*.txt "$work/promjson/"
# The monitor's inputs, tagged with the selector byte of fuzz_monitor_inputs.
{ printf '\x00'; cat etc/jobmon.toml; } >"$work/monitor/config"
{ printf '\x01'; printf '[{"targets": ["10.1.0.11:9400"], "labels": {"host": "node1"}}]'; } >"$work/monitor/targets"
{ printf '\x02'; cat tests/fixtures/slurm/squeue-json.json; } >"$work/monitor/squeue"
{ printf '\x03'; cat tests/fixtures/slurm/sinfo-json.json; } >"$work/monitor/sinfo"
cp tests/fixtures/exporter/basic.prom "$work/exposition/"
cp tests/fixtures/logs/*.log tests/fuzz/regressions/triage-* "$work/triage/"
i=0
for log in tests/fixtures/logs/{megatron-profile,torchtitan-profile,hf-tqdm-profile,healthy-with-noise}.log; do
  while IFS= read -r line; do
    i=$((i + 1))
    printf '%s' "$line" >"$work/steps/$i"
  done < <(grep -m 5 -E 'step|iteration|it\]' "$log")
done
cp tests/fuzz/regressions/steps-* "$work/steps/"
cp tests/fuzz/regressions/monitor-* "$work/monitor/"
for expression in 'node[01-04,7],gpu-a[1-2]' 'rack[1-2]-n[1-2]' 'n[001-010,100]' 'login'; do
  i=$((i + 1))
  printf '%s' "$expression" >"$work/hostlist/$i"
done
build/asan/contrib/fake-trainer/fake-trainer --steps 5 --step-seconds 0 --tensorboard-dir "$work/tfevents" \
  --host seed >/dev/null

targets=(fuzz_triage_log:triage:65536 fuzz_step_lines:steps:512 fuzz_hostlist:hostlist:256
  fuzz_tfevents:tfevents:8192 fuzz_exposition:exposition:16384 fuzz_monitor_inputs:monitor:16384
  fuzz_prom_json:promjson:65536)
# The reproducers of fixed crashes, by the target they were found with
# (tests/fuzz/regressions/README): each runs once, whatever the time budget.
declare -A regressions=([fuzz_triage_log]=triage- [fuzz_step_lines]=steps- [fuzz_monitor_inputs]=monitor-)
# Two targets at a time (one per core of the machines this runs on); each
# target is one process.
parallel=$(nproc)
((parallel <= 2)) || parallel=2
if [[ $mode == ci ]]; then
  total=${JOBMON_FUZZ_SECONDS:-90}
  [[ $total =~ ^[0-9]+$ ]] || die "JOBMON_FUZZ_SECONDS must be whole seconds, got '$total'"
  # Wall time: the targets share $total seconds, $parallel at once.
  seconds=$((total * parallel / ${#targets[@]}))
  ((seconds > 0)) || seconds=1
fi

# fuzz_target NAME CORPUS MAX_LEN: its regressions, then fuzzing; what it
# says goes to $work/NAME.out, and its exit status says whether it crashed.
fuzz_target() {
  local name=$1 corpus=$2 max_len=$3 budget runs
  local common=(-max_len="$max_len" -rss_limit_mb=2048 -timeout=20 -artifact_prefix="$crashes/$name-")
  if [[ -n "${regressions[$name]:-}" ]]; then
    mapfile -t reproducers < <(find tests/fuzz/regressions -name "${regressions[$name]}*" -type f | sort)
    if ! "$bin/$name" "${common[@]}" "${reproducers[@]}" >"$work/$name-regressions.log" 2>&1; then
      echo "FAIL: $name crashed on a regression reproducer"
      tail -n 40 "$work/$name-regressions.log"
      return 1
    fi
    echo "ok: $name replayed ${#reproducers[@]} regression reproducers"
  fi
  if [[ $mode == ci ]]; then
    budget=(-seed=1 -max_total_time="$seconds")
  else
    budget=(-max_total_time="$seconds")
  fi
  echo "fuzzing $name for ${seconds}s (seeds: $(find "$work/$corpus" -type f | wc -l))"
  if ! "$bin/$name" "$work/$corpus" "${budget[@]}" "${common[@]}" -print_final_stats=1 \
      >"$work/$name.log" 2>&1; then
    echo "FAIL: $name crashed; reproducer in $crashes/"
    tail -n 40 "$work/$name.log"
    return 1
  fi
  runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$work/$name.log" | grep -oE '[0-9]+$')
  echo "ok: $name, $runs inputs, no crash"
}

echo "fuzzing ${#targets[@]} targets, $parallel at a time, ${seconds}s each"
running=0
for target in "${targets[@]}"; do
  IFS=: read -r name corpus max_len <<<"$target"
  if ((running == parallel)); then
    wait -n || true  # one target done (each is bounded by its budget); its status is in its .rc
    running=$((running - 1))
  fi
  { rc=0; fuzz_target "$name" "$corpus" "$max_len" >"$work/$name.out" 2>&1 || rc=$?; echo "$rc" >"$work/$name.rc"; } &
  running=$((running + 1))
done
wait
status=0
for target in "${targets[@]}"; do
  name=${target%%:*}
  cat "$work/$name.out"
  [[ "$(cat "$work/$name.rc" 2>/dev/null)" == 0 ]] || status=1
done
exit $status
