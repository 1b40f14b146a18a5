#pragma once
// Two jobs side by side (docs/diagnose.md, "Comparing two jobs"): the
// config differences from both logs' headers, the step-aligned overlap after
// warmup, steady-state averages over it outside checkpoint windows for
// Playbook 7's contention checklist on both jobs, and the root cause: the
// first family that differs beyond its noise and is not explained by a
// config difference. Rendered in docs/diagnose.md's step-8 format.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose {

// ---- (1) config from a log's header -------------------------------------

struct ConfigValue {
  std::string value;
  std::string source;  // the print format it came from: "PASSTHROUGH_ARGS", "Config param", ...
};
using ConfigMap = std::map<std::string, ConfigValue>;

// The first `max_lines` lines of a log (the reference: "first ~30 lines";
// launchers and framework dumps push it further): `KEY=value` lines (job
// script env, HF TrainingArguments' `key=value,` lines), PASSTHROUGH_ARGS'
// `k=v` tokens, MaxText's `Config param k: v`, `--flag value` / `--flag=value`
// of torchrun/srun/python command lines, argparse `Namespace(k=v, ...)`,
// Lightning's hparams `"k":  v`. Rank prefixes ("0: ", "[default0]:") are
// stripped. The first occurrence of a key wins.
ConfigMap ParseConfigHeader(std::string_view log_text, size_t max_lines = 200);

// Keys that differ (or are present in one only), sorted; keys naming the job
// rather than its config (job id, coordinator address, start time, log dir)
// are left out.
std::vector<ConfigDifference> DiffConfig(const ConfigMap& a, const ConfigMap& b);

// ---- (2) the overlapping steps ------------------------------------------

struct StepOverlap {
  int64_t first_step = 0, last_step = 0;  // inclusive, warmup already skipped
  int64_t warmup_skipped = 0;
};
// Steps both jobs ran, starting `warmup` steps after the later job's first
// step (the reference: 5-10); the warmup shrinks for short overlaps so that
// at least half of the overlap remains. nullopt when the jobs share no step.
std::optional<StepOverlap> OverlapSteps(const std::vector<StepTime>& a,
                                        const std::vector<StepTime>& b, int64_t warmup = 10);

// ---- (3) steady state ---------------------------------------------------

struct SteadyState {
  double mean = 0;
  double stddev = 0;  // over time of the across-series mean: persistent gap vs spike
  size_t samples = 0;
  std::map<std::string, double> per_host;  // mean per host label
};
// Over `series` (one per host / GPU / device): per timestamp the mean across
// series, then mean and standard deviation over time; samples inside
// checkpoint windows of `context` are left out. nullopt when no sample.
std::optional<SteadyState> SteadyStateOf(const std::vector<Series>& series,
                                         const DiagnoseContext& context);

// Beyond noise: |b - a| > 2 * sqrt((sd_a^2 + sd_b^2) / 2), and at least
// `min_abs` and `min_rel` of the larger mean.
bool Diverges(const SteadyState& a, const SteadyState& b, double min_abs, double min_rel);

// Hosts of the higher job whose own mean exceeds the other job's (same host
// when both ran on it, else the other job's mean) by at least half the delta.
// All hosts: a uniform delta (software-level leak or extra processes);
// some: a per-node delta (background processes, node allocation).
std::vector<std::string> HostsCarryingDelta(const SteadyState& low, const SteadyState& high);

// ---- the comparison ------------------------------------------------------

Comparison Compare(PromSource& a, const DiagnoseContext& ca, PromSource& b,
                   const DiagnoseContext& cb, std::string_view log_header_a,
                   std::string_view log_header_b);

// The reference's step-8 format: "## Comparing two jobs: A vs B", config
// differences, overlapping step range, metric comparison, root cause.
std::string RenderComparisonMarkdown(const Comparison& comparison);
nlohmann::json ComparisonToJson(const Comparison& comparison);

}  // namespace jobmon::diagnose
