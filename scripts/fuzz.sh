#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each from seeds taken from the test
# fixtures. A crash fails the script and leaves the reproducer in
# build/fuzz/crashes/ (add it to tests/fuzz/regressions/ once fixed).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   exploratory: random seed, bounded time (default 15 s)
#   scripts/fuzz.sh --ci                   the test command's run: fixed seed and run counts,
#                                          so the same commit fuzzes the same inputs everywhere
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
run_logged build/fuzz-build.log scripts/build.sh fuzz
bin=build/fuzz/tests/fuzz
work=$(mktemp -d /tmp/jobmon-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p build/fuzz/crashes

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
for expression in 'node[01-04,7],gpu-a[1-2]' 'rack[1-2]-n[1-2]' 'n[001-010,100]' 'login'; do
  i=$((i + 1))
  printf '%s' "$expression" >"$work/hostlist/$i"
done
build/fuzz/contrib/fake-trainer/fake-trainer --steps 5 --step-seconds 0 --tensorboard-dir "$work/tfevents" \
  --host seed >/dev/null

status=0
# name:seed corpus:max input length:runs in --ci mode
for target in fuzz_triage_log:triage:65536:3000 fuzz_step_lines:steps:512:400000 \
  fuzz_hostlist:hostlist:256:30000 fuzz_tfevents:tfevents:8192:400000 \
  fuzz_exposition:exposition:16384:30000 fuzz_monitor_inputs:monitor:16384:30000 \
  fuzz_prom_json:promjson:65536:30000; do
  IFS=: read -r name corpus max_len runs <<<"$target"
  if [[ $mode == ci ]]; then
    budget=(-seed=1 -runs="$runs")
    echo "fuzzing $name: $runs runs, seed 1 (seeds: $(find "$work/$corpus" -type f | wc -l))"
  else
    budget=(-max_total_time="$seconds")
    echo "fuzzing $name for ${seconds}s (seeds: $(find "$work/$corpus" -type f | wc -l))"
  fi
  if ! "$bin/$name" "$work/$corpus" "${budget[@]}" -max_len="$max_len" -rss_limit_mb=2048 \
      -timeout=20 -print_final_stats=1 -artifact_prefix="build/fuzz/crashes/$name-" >"$work/$name.log" 2>&1; then
    echo "FAIL: $name crashed; reproducer in build/fuzz/crashes/"
    tail -n 40 "$work/$name.log"
    status=1
  else
    runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$work/$name.log" | grep -oE '[0-9]+$')
    echo "ok: $name, $runs inputs, no crash"
  fi
done
exit $status
