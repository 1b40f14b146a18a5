// Playbook 5 (tsdb-diagnosis.md, "GPU Health Check"): temperature, power,
// clocks, VRAM, utilization and the error counters of every GPU, reported
// in the reference's "GPU Health Summary" format.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gpu_error_counters.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/diagnose/query_helpers.h"
#include "playbook_util.h"

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
constexpr double kClockDropFraction = 0.85;  // "sudden drop": below 85% of its own median
constexpr double kVramHighFraction = 0.95;   // ">95% = risk of GPU OOM"
constexpr double kUtilLowPercent = 80;       // "<80% during training"

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
  const TimeRange range = context.window.seconds() > 0 ? context.window : context.job_range;
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
       playbook::Range(source, result, "hw_gpu_temperature_celsius", range, context)) {
    seen.See(s.labels);
    for (const auto& sample : s.samples) temp.Add(sample.value);
    auto stats = StatsOf(s);
    if (!stats || stats->max <= kTempConcernC) continue;
    const bool throttling = stats->max > kTempThrottleC;
    add(MakeFinding("thermal-high", throttling ? Severity::kCritical : Severity::kWarning,
                    "hw_gpu_temperature_celsius", s.labels, stats->max, "C",
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
  std::map<std::string, std::pair<double, Labels>> power_median;
  for (const Series& s : playbook::Range(source, result, "hw_gpu_power_watts", range, context)) {
    seen.See(s.labels);
    std::vector<double> values;
    ForSteady(s, steady, context, [&](const Sample& x) {
      values.push_back(x.value);
      power.Add(x.value);
    });
    if (!values.empty()) power_median[Key(s.labels)] = {playbook::Median(values), s.labels};
  }
  if (!power_median.empty()) {
    std::vector<double> medians;
    for (const auto& [key, m] : power_median) medians.push_back(m.first);
    const double baseline = playbook::Median(medians);
    auto [lo, hi] =
        std::minmax_element(power_median.begin(), power_median.end(),
                            [](auto& a, auto& b) { return a.second.first < b.second.first; });
    const double spread = hi->second.first - lo->second.first;
    lines.push_back(fmt::format("Power: min {:.0f}W max {:.0f}W avg {:.0f}W spread: {:.0f}W",
                                power.min, power.max, power.avg(), spread));
    if (baseline > 0 && spread > kPowerSpreadFraction * baseline) {
      // The outlier is the GPU farther from the baseline.
      const auto& odd = baseline - lo->second.first > hi->second.first - baseline ? *lo : *hi;
      add(MakeFinding("power-spread", Severity::kWarning, "hw_gpu_power_watts", odd.second.second,
                      spread, "W", std::nullopt,
                      fmt::format("steady-state power spread {:.0f}W across GPUs (>{:.0f}% of the "
                                  "job's {:.0f}W baseline); outlier {} at {:.0f}W",
                                  spread, 100 * kPowerSpreadFraction, baseline,
                                  Where(odd.second.second), odd.second.first)));
    }
  }

  // 3. Core clock: a run below 85% of the GPU's own steady median.
  MinMaxAvg clock;
  double nominal = 0;
  for (const Series& s :
       playbook::Range(source, result, R"(hw_gpu_clock_max_mhz{type="sclk"})", range, context)) {
    if (auto st = StatsOf(s)) nominal = std::max(nominal, st->max);
  }
  for (const Series& s :
       playbook::Range(source, result, R"(hw_gpu_clock_mhz{type="sclk"})", range, context)) {
    seen.See(s.labels);
    ForSteady(s, steady, context, [&](const Sample& x) { clock.Add(x.value); });
    auto median = playbook::SteadyMedian(s, steady, context);
    if (!median || *median <= 0) continue;
    const double low = kClockDropFraction * *median;
    auto outside = [&](double t) { return !steady.Contains(t) || context.InCheckpoint(t); };
    auto run = playbook::LongestRun(
        s, [&](double v) { return v < low; }, outside);
    if (!run || run->samples < 2) continue;
    auto onset = playbook::Onset(
        s, [&](double v) { return v < low; }, [&](double v) { return v < 0.97 * *median; },
        outside);
    double lowest = *median;
    for (const auto& x : s.samples) {
      if (x.time >= run->start && x.time <= run->end) lowest = std::min(lowest, x.value);
    }
    add(MakeFinding("clock-drop", Severity::kWarning, "hw_gpu_clock_mhz", s.labels, lowest, "MHz",
                    onset ? onset : run->start,
                    fmt::format("{} core clock dropped to {:.0f}MHz from its {:.0f}MHz median "
                                "outside checkpoints ({} to {})",
                                Where(s.labels), lowest, *median, At(run->start), At(run->end))));
  }
  if (clock.n) {
    lines.push_back(fmt::format("Core clock: min {:.0f}MHz max {:.0f}MHz (nominal: {:.0f}MHz)",
                                clock.min, clock.max, nominal > 0 ? nominal : clock.max));
  }

  // 4. VRAM: the highest used/total of each GPU.
  std::map<std::string, double> totals;
  for (const Series& s :
       playbook::Range(source, result, "hw_gpu_vram_total_bytes", range, context)) {
    if (auto st = StatsOf(s)) totals[Key(s.labels)] = st->max;
  }
  double peak_fraction = 0, peak_used = 0, peak_total = 0;
  for (const Series& s :
       playbook::Range(source, result, "hw_gpu_vram_used_bytes", range, context)) {
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
      add(MakeFinding("vram-high", Severity::kWarning, "hw_gpu_vram_used_bytes", s.labels,
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
       playbook::Range(source, result, "hw_gpu_utilization_percent", range, context)) {
    seen.See(s.labels);
    ForSteady(s, steady, context, [&](const Sample& x) { util.Add(x.value); });
    auto median = playbook::SteadyMedian(s, steady, context);
    if (!median || *median >= kUtilLowPercent || context.steps.empty()) continue;
    add(MakeFinding("util-low", Severity::kWarning, "hw_gpu_utilization_percent", s.labels, *median,
                    "%", std::nullopt,
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
  SetRootCauseAndChain(result);
  if (!seen.anomalous.empty()) {
    result.next_steps.push_back(
        "Drain nodes with uncorrectable or fatal errors; watch GPUs with "
        "correctable errors, thermal excursions or clock drops.");
  }
  return result;
}

}  // namespace jobmon::diagnose
