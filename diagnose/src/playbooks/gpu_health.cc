// Playbook 5 (docs/diagnose.md, "GPU health playbook"): temperature, power,
// clocks, VRAM, utilization and the error counters of every GPU, reported
// in docs/diagnose.md's "GPU Health Summary" format.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/percentile.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbooks/gpu_error_counters.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

using playbook::At;
using playbook::MakeFinding;
using playbook::Where;

constexpr double kTempConcernC = 90;    // ">90C = concern"
constexpr double kTempThrottleC = 100;  // ">100C = throttling"
// "Variance >50W across GPUs = investigate" is MI355X watts (~1000 W in
// training): 5% of the job's own training baseline, so NVIDIA, AMD and the
// fake trainer's GPUs are judged alike.
constexpr double kPowerSpreadFraction = 0.05;
constexpr double kPowerNoiseFactor = 3;       // deviations within 3 sigma are noise
constexpr double kMadToSigma = 1.4826;        // sigma of normal data from its MAD
constexpr size_t kMinGpusForSpread = 8;       // a node's worth: the MAD of fewer breaks down
constexpr double kMedianEfficiency = 1.2533;  // standard error of a median / of a mean
// "Sudden drop": below 85% of the GPU's high clock, its 90th percentile in
// steady state; a median would be the throttled clock itself once a
// throttle lasts over half the job.
constexpr double kClockDropFraction = 0.85;
constexpr double kClockBaselinePercentile = 0.9;
constexpr double kVramHighFraction = 0.95;  // ">95% = risk of GPU OOM"
constexpr double kUtilLowPercent = 80;      // "<80% during training"

struct MinMaxAvg {
  double min = 0, max = 0, sum = 0;
  size_t n = 0;
  void Add(double v) {
    min = n ? std::min(min, v) : v;
    max = n ? std::max(max, v) : v;
    sum += v;
    ++n;
  }
  double avg() const { return n ? sum / static_cast<double>(n) : 0; }
};

std::string Key(const Labels& l) {
  auto get = [&](const char* k) { return l.count(k) ? l.at(k) : std::string(); };
  return get("host") + ":" + get("gpu");
}

// Steady-state samples: inside the training range, outside checkpoints.
template <typename Fn>
void ForSteady(const Series& s, const TimeRange& steady, const DiagnoseContext& c, Fn fn) {
  for (const auto& sample : s.samples) {
    if (steady.Contains(sample.time) && !c.InCheckpoint(sample.time)) fn(sample);
  }
}

// A GPU's steady-state power samples.
struct GpuPower {
  Labels labels;
  std::vector<double> values;
};
struct PowerOutlier {
  Labels labels;
  double median = 0, noise = 0;
};
struct PowerSpread {
  double baseline = 0, spread = 0;  // median of the GPUs' medians; their max - min
  std::vector<PowerOutlier> outliers;
};

// Per-GPU power under load is noisy (tens of watts sample to sample), and a
// median of few samples (short jobs, 15 s scrapes) moves with it: a GPU is
// an outlier only when its steady median is off the cross-GPU median by
// more than the relative threshold and by more than kPowerNoiseFactor times
// the noise: the larger of its median's standard error (1.2533 x sigma /
// sqrt(n), sigma from the samples' MAD) and, with enough GPUs that the
// healthy ones are a clear majority (kMinGpusForSpread), the spread of the
// GPUs' medians (1.4826 x their MAD: silicon differs by a few percent).
PowerSpread JudgePowerSpread(const std::vector<GpuPower>& gpus) {
  PowerSpread out;
  std::vector<double> medians;
  for (const GpuPower& g : gpus) medians.push_back(playbook::Median(g.values));
  out.baseline = playbook::Median(medians);
  auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  out.spread = *hi - *lo;
  std::vector<double> deviations;
  for (double m : medians) deviations.push_back(std::abs(m - out.baseline));
  const double between =
      medians.size() >= kMinGpusForSpread ? kMadToSigma * MeanMedian(deviations) : 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::vector<double> spread;
    for (double v : gpus[i].values) spread.push_back(std::abs(v - medians[i]));
    const double sigma = kMadToSigma * playbook::Median(spread);
    const double standard_error =
        kMedianEfficiency * sigma / std::sqrt(static_cast<double>(gpus[i].values.size()));
    const double noise = std::max(standard_error, between);
    if (out.baseline > 0 && deviations[i] > kPowerSpreadFraction * out.baseline &&
        deviations[i] > kPowerNoiseFactor * noise) {
      out.outliers.push_back({gpus[i].labels, medians[i], noise});
    }
  }
  return out;
}

// The clock a GPU runs at when not throttled: the 90th percentile of its
// steady-state samples, which a throttle covering up to 90% of the job
// cannot drag down (its median can: thermal faults last). Not
// hw_gpu_clock_max_mhz: GPUs under a power cap legitimately run well below
// their top DPM level all job long.
std::optional<double> ClockBaseline(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const double clock = FloorIndexPercentile(std::move(values), kClockBaselinePercentile);
  if (clock <= 0) return std::nullopt;
  return clock;
}

struct Gpus {
  std::set<std::string> hosts, gpus;
  std::set<std::string> anomalous;
  void See(const Labels& l) {
    if (l.count("host")) hosts.insert(l.at("host"));
    if (l.count("gpu")) gpus.insert(Key(l));
  }
};

}  // namespace

PlaybookResult RunGpuHealthPlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = "gpu";
  result.analysis_type = "gpu-health";
  const TimeRange range = playbook::WindowOrJob(context);
  TimeRange steady = playbook::SteadyRange(context);
  steady = {std::max(steady.start, range.start), std::min(steady.end, range.end)};
  if (steady.seconds() <= 0) steady = range;
  Gpus seen;
  std::vector<std::string> lines;
  auto add = [&](Finding f) {
    if (f.severity != Severity::kInfo)
      seen.anomalous.insert(f.gpu.empty() ? f.host : f.host + ":" + f.gpu);
    result.anomalies.push_back(std::move(f));
  };

  // 1. Temperature: absolute thresholds, the same for every vendor.
  MinMaxAvg temp;
  for (const Series& s :
       playbook::Range(source, result, metric_names::kGpuTemperatureCelsius, range, context)) {
    seen.See(s.labels);
    for (const auto& sample : s.samples) temp.Add(sample.value);
    auto stats = StatsOf(s);
    if (!stats || stats->max <= kTempConcernC) continue;
    const bool throttling = stats->max > kTempThrottleC;
    add(MakeFinding("thermal-high", throttling ? Severity::kCritical : Severity::kWarning,
                    metric_names::kGpuTemperatureCelsius, s.labels, stats->max, "C",
                    FirstTimeAbove(s, kTempConcernC),
                    fmt::format("{} reached {:.0f}C (>{:.0f}C {})", Where(s.labels), stats->max,
                                throttling ? kTempThrottleC : kTempConcernC,
                                throttling ? "throttling" : "concern")));
  }
  if (temp.n) {
    lines.push_back(
        fmt::format("Temperature: min {:.0f}C max {:.0f}C avg {:.0f}C (threshold: {:.0f}C)",
                    temp.min, temp.max, temp.avg(), kTempConcernC));
  }

  // 2. Power: per-GPU steady medians against the job's own baseline.
  MinMaxAvg power;
  std::vector<GpuPower> gpu_power;
  for (const Series& s :
       playbook::Range(source, result, metric_names::kGpuPowerWatts, range, context)) {
    seen.See(s.labels);
    GpuPower g{s.labels, {}};
    ForSteady(s, steady, context, [&](const Sample& x) {
      g.values.push_back(x.value);
      power.Add(x.value);
    });
    if (!g.values.empty()) gpu_power.push_back(std::move(g));
  }
  if (!gpu_power.empty()) {
    PowerSpread p = JudgePowerSpread(gpu_power);
    lines.push_back(fmt::format("Power: min {:.0f}W max {:.0f}W avg {:.0f}W spread: {:.0f}W",
                                power.min, power.max, power.avg(), p.spread));
    for (const PowerOutlier& o : p.outliers) {
      add(MakeFinding(
          "power-spread", Severity::kWarning, metric_names::kGpuPowerWatts, o.labels,
          o.median - p.baseline, "W", std::nullopt,
          fmt::format("{} steady-state power {:.0f}W, {:+.0f}W from the {:.0f}W median of the "
                      "job's GPUs (beyond {:.0f}% and {:.0f}x the noise, {:.0f}W; spread "
                      "{:.0f}W)",
                      Where(o.labels), o.median, o.median - p.baseline, p.baseline,
                      100 * kPowerSpreadFraction, kPowerNoiseFactor, o.noise, p.spread)));
    }
  }

  // 3. Core clock: a run below 85% of the GPU's own high clock.
  MinMaxAvg clock;
  double nominal = 0;
  for (const Series& s : playbook::Range(
           source, result, fmt::format(R"({}{{type="sclk"}})", metric_names::kGpuClockMaxMhz),
           range, context)) {
    if (auto st = StatsOf(s)) nominal = std::max(nominal, st->max);
  }
  for (const Series& s : playbook::Range(
           source, result, fmt::format(R"({}{{type="sclk"}})", metric_names::kGpuClockMhz), range,
           context)) {
    seen.See(s.labels);
    std::vector<double> values;
    ForSteady(s, steady, context, [&](const Sample& x) {
      clock.Add(x.value);
      values.push_back(x.value);
    });
    auto high = ClockBaseline(values);
    if (!high) continue;
    const double low = kClockDropFraction * *high;
    auto outside = [&](double t) { return !steady.Contains(t) || context.InCheckpoint(t); };
    auto run = playbook::LongestRun(
        s, [&](double v) { return v < low; }, outside);
    if (!run || run->samples < 2) continue;
    auto onset = playbook::Onset(
        s, [&](double v) { return v < low; }, [&](double v) { return v < 0.97 * *high; }, outside);
    double lowest = *high;
    for (const auto& x : s.samples) {
      if (x.time >= run->start && x.time <= run->end) lowest = std::min(lowest, x.value);
    }
    add(MakeFinding(
        "clock-drop", Severity::kWarning, metric_names::kGpuClockMhz, s.labels, lowest, "MHz",
        onset ? onset : run->start,
        fmt::format("{} core clock dropped to {:.0f}MHz ({:.0f}% of its {:.0f}MHz steady-state "
                    "high, p{:.0f} outside checkpoints) from {} to {}",
                    Where(s.labels), lowest, 100 * lowest / *high, *high,
                    100 * kClockBaselinePercentile, At(run->start), At(run->end))));
  }
  if (clock.n) {
    lines.push_back(fmt::format("Core clock: min {:.0f}MHz max {:.0f}MHz (nominal: {:.0f}MHz)",
                                clock.min, clock.max, nominal > 0 ? nominal : clock.max));
  }

  // 4. VRAM: the highest used/total of each GPU.
  std::map<std::string, double> totals;
  for (const Series& s :
       playbook::Range(source, result, metric_names::kGpuVramTotalBytes, range, context)) {
    if (auto st = StatsOf(s)) totals[Key(s.labels)] = st->max;
  }
  double peak_fraction = 0, peak_used = 0, peak_total = 0;
  for (const Series& s :
       playbook::Range(source, result, metric_names::kGpuVramUsedBytes, range, context)) {
    auto total = totals.find(Key(s.labels));
    auto st = StatsOf(s);
    if (total == totals.end() || total->second <= 0 || !st) continue;
    const double fraction = st->max / total->second;
    if (fraction > peak_fraction) {
      peak_fraction = fraction;
      peak_used = st->max;
      peak_total = total->second;
    }
    if (fraction > kVramHighFraction) {
      add(MakeFinding("vram-high", Severity::kWarning, metric_names::kGpuVramUsedBytes, s.labels,
                      100 * fraction, "%", FirstTimeAbove(s, kVramHighFraction * total->second),
                      fmt::format("{} VRAM {:.1f}% used (>{:.0f}%: risk of GPU OOM)",
                                  Where(s.labels), 100 * fraction, 100 * kVramHighFraction)));
    }
  }
  if (peak_total > 0) {
    lines.push_back(fmt::format("VRAM: {:.0f}% used ({:.1f} GB / {:.1f} GB)", 100 * peak_fraction,
                                peak_used / 1e9, peak_total / 1e9));
  }

  // 9. Utilization: the steady median of each GPU during training.
  MinMaxAvg util;
  for (const Series& s :
       playbook::Range(source, result, metric_names::kGpuUtilizationPercent, range, context)) {
    seen.See(s.labels);
    ForSteady(s, steady, context, [&](const Sample& x) { util.Add(x.value); });
    auto median = playbook::SteadyMedian(s, steady, context);
    if (!median || *median >= kUtilLowPercent || context.steps.empty()) continue;
    add(MakeFinding("util-low", Severity::kWarning, metric_names::kGpuUtilizationPercent, s.labels,
                    *median, "%", std::nullopt,
                    fmt::format("{} utilization median {:.0f}% during training (<{:.0f}%: "
                                "underutilized)",
                                Where(s.labels), *median, kUtilLowPercent)));
  }
  if (util.n) {
    lines.push_back(fmt::format("Utilization: min {:.0f}% max {:.0f}% avg {:.0f}%", util.min,
                                util.max, util.avg()));
  }

  // 5-8. Error counters: what the job added.
  auto errors = playbook::GpuErrorsOver(source, result, context, range);
  for (auto& f : errors.findings) add(std::move(f));
  lines.push_back(fmt::format("RAS Errors: {:.0f} correctable, {:.0f} uncorrectable",
                              errors.ras_correctable, errors.ras_uncorrectable));
  lines.push_back(fmt::format("PCIe Errors: {:.0f} correctable, {:.0f} non-fatal, {:.0f} fatal",
                              errors.pcie_correctable, errors.pcie_nonfatal, errors.pcie_fatal));
  std::string odd;
  for (const auto& g : seen.anomalous) odd += (odd.empty() ? "" : ", ") + g;
  lines.push_back("Anomalous GPUs: " + (odd.empty() ? std::string("none") : odd));

  std::string summary =
      fmt::format("GPU Health Summary ({} nodes, {} GPUs)", seen.hosts.size(), seen.gpus.size());
  EvidenceTable table{"GPU Health Summary",
                      "hw_gpu_* over the job (steady state: outside "
                      "warmup and checkpoint windows)",
                      {}};
  for (const auto& line : lines) {
    summary += "\n" + line;
    auto colon = line.find(':');
    table.rows.push_back({"", "", line.substr(colon + 2), line.substr(0, colon)});
  }
  result.summary = summary;
  result.evidence.push_back(std::move(table));
  result.verdict = seen.anomalous.empty() ? "healthy" : "anomalous";
  if (seen.gpus.empty() && result.anomalies.empty()) {
    result.summary += "\nNo GPU series in the TSDB for this window.";
  }
  SetRootCauseAndChain(result, StepFor(range, context));
  if (!seen.anomalous.empty()) {
    result.next_steps.push_back(
        "Drain nodes with uncorrectable or fatal errors; watch GPUs with "
        "correctable errors, thermal excursions or clock drops.");
  }
  return result;
}

}  // namespace jobmon::diagnose
