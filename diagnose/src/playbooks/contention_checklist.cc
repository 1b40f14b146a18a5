#include "playbooks/contention_checklist.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "jobmon/common/metric_names.h"
#include "playbooks/gpu_error_counters.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose::playbook {
namespace {

using Test = std::function<bool(double value, double baseline)>;

struct Check {
  const char* row;
  const char* code;    // "": evidence only
  std::string family;  // the metric, with a selector where it needs one
  bool counter;        // read as rate()
  Test far;            // deviates enough to be a finding
  Test near;           // still part of the same excursion (its onset)
  bool checkpoint_expected;
  const char* unit;
  Severity severity = Severity::kWarning;
};

// The reference gives no numbers for most rows; these call a change at the
// anomaly a deviation only when it is large against the job's own steady
// state. TCP >10/s and GPU >90C are docs/diagnose.md's (Playbooks 5 and 6).
std::vector<Check> Checks() {
  auto rise = [](double factor, double delta) {
    return [=](double v, double b) { return v > b * factor && v > b + delta; };
  };
  auto drop = [](double factor) { return [=](double v, double b) { return v < b * factor; }; };
  return {
      {"CPU", "procs-running", metric_names::kProcsRunning, false, rise(1.5, 2), rise(1.2, 1),
       false, ""},
      {"CPU", "procs-blocked", metric_names::kProcsBlocked, false, rise(1, 5), rise(1, 2), true,
       ""},
      {"CPU", "", metric_names::kContextSwitchesTotal, true, rise(2, 0), rise(1.3, 0), false, "/s"},
      {"Network (TCP)", "tcp-retransmits", metric_names::kTcpRetransmitsTotal, true, rise(2, 10),
       rise(1.5, 2), true, "/s"},
      {"Network (TCP)", "tcp-aborts", metric_names::kTcpAbortOnTimeoutTotal, true, rise(1, 0),
       rise(1, 0), false, "/s", Severity::kCritical},
      {"Network (RDMA)", "rdma-retransmits", metric_names::kRdmaTxRetxPktsTotal, true, rise(2, 0),
       rise(1, 0), false, "/s"},
      {"Network (RDMA)", "rdma-ack-timeouts", metric_names::kRdmaTxAckTimeoutTotal, true,
       rise(1, 0), rise(1, 0), false, "/s"},
      {"Network (RDMA)", "rdma-congestion", metric_names::kRdmaRxCnpPktsTotal, true, rise(2, 0),
       rise(1.2, 0), false, "/s"},
      {"Storage I/O", "io-pressure", metric_names::kIoPressureFullPct, false, rise(1, 10),
       rise(1, 2), true, "%"},
      {"Storage I/O", "io-pressure", metric_names::kIoPressureSomePct, false, rise(1, 10),
       rise(1, 2), true, "%"},
      {"Storage I/O", "", metric_names::kMemDirtyBytes, false, rise(2, 1e8), rise(1.2, 0), true,
       "B"},
      {"Storage I/O", "", metric_names::kMemWritebackBytes, false, rise(2, 1e8), rise(1.2, 0), true,
       "B"},
      {"Memory", "host-memory-ramp", metric_names::kMemAvailableBytes, false, drop(0.75),
       drop(0.95), true, "B"},
      {"GPU thermal", "thermal-high", metric_names::kGpuTemperatureCelsius, false,
       [](double v, double b) { return v > b + 10 || v > 90; }, rise(1, 3), false, "C"},
      {"GPU thermal", "clock-drop", fmt::format(R"({}{{type="sclk"}})", metric_names::kGpuClockMhz),
       false, drop(0.9), drop(0.97), false, "MHz"},
      {"GPU thermal", "power-drop", metric_names::kGpuPowerWatts, false, drop(0.9), drop(0.97),
       false, "W"},
  };
}

struct Deviation {
  Labels labels;
  double baseline = 0, extreme = 0, score = -1;
  std::optional<double> onset;
  bool expected = false;  // only inside checkpoint windows
};

std::optional<Deviation> Worst(const std::vector<Series>& answer, const Check& check,
                               const DiagnoseContext& context, const ContentionWindows& w) {
  auto in_checkpoint = [&](double t) {
    return check.counter ? RateTouchesCheckpoint(t, context) : context.InCheckpoint(t);
  };
  std::optional<Deviation> worst;
  for (const Series& s : answer) {
    std::vector<double> before;
    for (const auto& x : s.samples) {
      if (w.baseline.Contains(x.time) && !in_checkpoint(x.time)) before.push_back(x.value);
    }
    if (before.empty()) continue;
    Deviation d{s.labels, Median(before), Median(before), 0, std::nullopt, false};
    // The largest deviation outside checkpoint windows [0], inside them [1].
    double score[2] = {-1, -1}, extreme[2] = {0, 0};
    for (const auto& x : s.samples) {
      if (!w.at.Contains(x.time) || !check.far(x.value, d.baseline)) continue;
      const int k = in_checkpoint(x.time) ? 1 : 0;
      const double dev = std::abs(x.value - d.baseline) / std::max(std::abs(d.baseline), 1e-9);
      if (dev > score[k]) score[k] = dev, extreme[k] = x.value;
    }
    const bool outside = score[0] >= 0;
    if (!outside && !(score[1] >= 0 && check.checkpoint_expected)) continue;
    d.expected = !outside;
    d.score = score[outside ? 0 : 1];
    d.extreme = extreme[outside ? 0 : 1];
    Series span{s.labels, {}};
    for (const auto& x : s.samples) {
      if (x.time >= w.baseline.start && x.time <= w.at.end) span.samples.push_back(x);
    }
    d.onset = Onset(
        span, [&](double v) { return check.far(v, d.baseline); },
        [&](double v) { return check.near(v, d.baseline); }, in_checkpoint);
    // A deviation outside checkpoints outranks an expected one.
    if (!worst || (worst->expected && !d.expected) ||
        (worst->expected == d.expected && d.score > worst->score)) {
      worst = d;
    }
  }
  return worst;
}

// The span at the step a long baseline allows, with the window around the
// anomaly at its own finer step (the scrape interval for all but very long
// rate windows): an excursion's onset is dated to the scrape, so a ramp
// that began a few scrapes before the slowdown is seen to precede it.
std::vector<Series> SpanFinerAtAnomaly(PromSource& source, PlaybookResult& result,
                                       const std::string& promql, const DiagnoseContext& context,
                                       const ContentionWindows& w) {
  const TimeRange span{w.baseline.start, w.at.end};
  auto coarse = Range(source, result, promql, span, context);
  if (coarse.empty() || StepFor(w.at, context) >= StepFor(span, context)) return coarse;
  auto fine = Range(source, result, promql, w.at, context);
  for (Series& s : coarse) {
    auto match = std::find_if(fine.begin(), fine.end(),
                              [&](const Series& f) { return f.labels == s.labels; });
    if (match == fine.end()) continue;
    std::vector<Sample> merged;
    for (const Sample& x : s.samples) {
      if (x.time < w.at.start) merged.push_back(x);
    }
    merged.insert(merged.end(), match->samples.begin(), match->samples.end());
    s.samples = std::move(merged);
  }
  return coarse;
}

}  // namespace

void RunContentionChecklist(PromSource& source, const DiagnoseContext& context,
                            const ContentionWindows& w, PlaybookResult& result) {
  EvidenceTable table{fmt::format("Contention checklist at {} (baseline {} to {})", At(w.at.start),
                                  At(w.baseline.start), At(w.baseline.end)),
                      "",
                      {}};
  const TimeRange span{w.baseline.start, w.at.end};
  for (const Check& check : Checks()) {
    std::string family = check.family;
    family = family.substr(0, family.find('{'));
    if (!Wanted(context, family)) continue;
    const std::string promql = check.counter ? RateExpr(check.family, context) : check.family;
    auto answer = SpanFinerAtAnomaly(source, result, promql, context, w);
    if (answer.empty()) continue;
    auto d = Worst(answer, check, context, w);
    if (!d) {
      table.rows.push_back({"", "", family, std::string(check.row) + ": no deviation"});
      continue;
    }
    const std::string numbers =
        fmt::format("{} {:.4g} -> {:.4g}{}", family, d->baseline, d->extreme, check.unit);
    table.rows.push_back(
        {d->labels.count("host") ? d->labels.at("host") : "",
         d->labels.count("gpu") ? d->labels.at("gpu") : "", numbers,
         std::string(check.row) + (d->expected ? ": only inside checkpoint windows (expected)"
                                               : ": deviates at the anomaly")});
    if (*check.code == 0) continue;
    // NFS retransmits during checkpoint writes have their own code.
    std::string code = check.code;
    if (d->expected && code == "tcp-retransmits") code = "tcp-retransmits-checkpoint-only";
    result.anomalies.push_back(
        MakeFinding(code, d->expected ? Severity::kInfo : check.severity, family, d->labels,
                    d->extreme, check.unit, d->onset,
                    fmt::format("{} ({}): {}{}{}", Where(d->labels), check.row, numbers,
                                d->onset ? ", from " + At(*d->onset) : "",
                                d->expected ? ", only during checkpoint writes: expected" : "")));
  }
  auto oom = IncreaseOver(source, result, metric_names::kOomKillsTotal, span);
  for (const Series& s : oom) {
    if (s.samples.empty() || s.samples.back().value <= 0) continue;
    table.rows.push_back(
        {s.Label("host"), "", fmt::format("+{:.0f}", s.samples.back().value), "Memory: OOM kills"});
    result.anomalies.push_back(MakeFinding(
        "oom-kill", Severity::kCritical, metric_names::kOomKillsTotal, s.labels,
        s.samples.back().value, "count", std::nullopt, Where(s.labels) + ": OOM killer invoked"));
  }
  auto errors = GpuErrorsOver(source, result, context, span);
  table.rows.push_back(
      {"", "",
       fmt::format("RAS {:.0f} CE / {:.0f} UE, PCIe {:.0f}/{:.0f}/{:.0f}", errors.ras_correctable,
                   errors.ras_uncorrectable, errors.pcie_correctable, errors.pcie_nonfatal,
                   errors.pcie_fatal),
       errors.findings.empty() ? "GPU hardware: no new errors"
                               : "GPU hardware: errors accumulating"});
  for (auto& f : errors.findings) result.anomalies.push_back(std::move(f));
  result.evidence.push_back(std::move(table));
}

}  // namespace jobmon::diagnose::playbook
