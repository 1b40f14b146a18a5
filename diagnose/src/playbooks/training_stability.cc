// Playbook 7 (docs/diagnose.md, "Training playbook"): loss, gradient
// norms, step time, throughput and learning rate from the tb_* bridge, in
// steady state (warmup and checkpoint windows left out), then the
// contention checklist at the time a slowdown began.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "jobmon/diagnose/playbooks.h"
#include "playbooks/contention_checklist.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

using playbook::At;
using playbook::MakeFinding;

constexpr double kRegression = 0.10;      // ">10% drop from steady-state average"
constexpr double kCheckpointSpike = 1.5;  // a step this much slower inside a checkpoint window
constexpr double kLossSpikeFactor = 2;    // loss over twice its recent median
constexpr double kGradSpikeFactor = 3;    // grad norm over three times its recent median
constexpr size_t kRecent = 10;            // samples in the "recent median"
constexpr size_t kSustained = 3;          // samples for a regression to count
constexpr char kStalenessFill[] = "tb_metrics_plugin_staleness_fill";

// Real points only where the bridge marks synthetic fills; our exporter
// serves no such series, and then every point is real.
std::string TbExpr(const std::string& name, const DiagnoseContext& context) {
  if (context.HasFamily(kStalenessFill)) return name + " and " + kStalenessFill + " == 0";
  return name;
}

// The tb_* series with the most points (every host's exporter may serve it).
std::optional<Series> Tb(PromSource& source, PlaybookResult& result, const std::string& name,
                         const DiagnoseContext& context, const TimeRange& range) {
  if (!playbook::Wanted(context, name)) return std::nullopt;
  std::optional<Series> best;
  for (auto& s : playbook::Range(source, result, TbExpr(name, context), range, context)) {
    if (!best || s.samples.size() > best->samples.size()) best = std::move(s);
  }
  return best;
}

// A sample more than `factor` times the median of the `kRecent` before it
// (outside checkpoints): the first such, with its value.
std::optional<Sample> FirstSpike(const Series& s, double factor, const TimeRange& steady,
                                 const DiagnoseContext& context) {
  std::vector<double> recent;
  for (const auto& x : s.samples) {
    if (!steady.Contains(x.time) || context.InCheckpoint(x.time)) continue;
    if (recent.size() >= kRecent) {
      const double median = playbook::Median(recent);
      if (median > 0 && x.value > factor * median) return x;
      recent.erase(recent.begin());
    }
    recent.push_back(x.value);
  }
  return std::nullopt;
}

// The time of the first sample that starts kSustained samples in a row for
// which `holds` is true, passing over those `skip` rejects.
double FirstSustained(const Series& s, const std::function<bool(double)>& holds,
                      const std::function<bool(double)>& skip) {
  size_t in_row = 0;
  double start = 0;
  for (const auto& x : s.samples) {
    if (skip(x.time)) continue;
    if (!holds(x.value)) {
      in_row = 0;
      continue;
    }
    if (in_row++ == 0) start = x.time;
    if (in_row >= kSustained) return start;
  }
  return std::numeric_limits<double>::infinity();
}

struct Slowdown {
  double baseline = 0, extreme = 0;
  std::optional<double> onset;
  bool gradual = false;
};

// A sustained move of `sign` (+1 slower step time, -1 lower throughput)
// beyond 10% of the steady baseline (the first third of steady state).
std::optional<Slowdown> Regression(const Series& s, int sign, const TimeRange& steady,
                                   const DiagnoseContext& context) {
  std::vector<double> thirds[3];
  for (const auto& x : s.samples) {
    if (!steady.Contains(x.time) || context.InCheckpoint(x.time)) continue;
    int k = std::min(
        2, static_cast<int>(3 * (x.time - steady.start) / std::max(1.0, steady.seconds())));
    thirds[k].push_back(x.value);
  }
  if (thirds[0].empty()) return std::nullopt;
  Slowdown d;
  d.baseline = playbook::Median(thirds[0]);
  auto off = [&](double v, double fraction) {
    return sign * (v - d.baseline) > fraction * d.baseline;
  };
  auto skip = [&](double t) { return !steady.Contains(t) || context.InCheckpoint(t); };
  auto run = playbook::LongestRun(
      s, [&](double v) { return off(v, kRegression); }, skip);
  if (!run || run->samples < kSustained) return std::nullopt;
  double extreme = d.baseline;
  for (const auto& x : s.samples) {
    if (!skip(x.time) && sign * (x.value - extreme) > 0) extreme = x.value;
  }
  d.extreme = extreme;
  // Dated from the first sustained stretch (kSustained samples in a row,
  // checkpoint windows passed over), not from an isolated early sample: a
  // warmup step time still current at the first steady scrape.
  d.onset = playbook::Onset(
      s, [&](double v) { return off(v, kRegression); }, [&](double v) { return off(v, 0.03); },
      skip,
      FirstSustained(
          s, [&](double v) { return off(v, kRegression); }, skip));
  // "Gradual": the excursion took several samples to grow from 3% to 10%,
  // unlike a step change (a transient event) that crosses both at once.
  for (const auto& x : s.samples) {
    if (skip(x.time) || !off(x.value, kRegression)) continue;
    d.gradual = d.onset && x.time - *d.onset >= 2 * context.scrape_interval_seconds;
    break;
  }
  return d;
}

}  // namespace

PlaybookResult RunTrainingStabilityPlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = "training";
  result.analysis_type = "training-stability";
  const TimeRange range = playbook::WindowOrJob(context);
  const TimeRange steady = playbook::SteadyRange(context);
  auto step_time = Tb(source, result, "tb_perf_step_time_seconds", context, range);
  auto throughput = Tb(source, result, "tb_perf_per_device_tokens_per_sec", context, range);
  auto loss = Tb(source, result, "tb_learning_loss", context, range);
  auto grad = Tb(source, result, "tb_learning_grad_norm", context, range);
  auto raw_grad = Tb(source, result, "tb_learning_raw_grad_norm", context, range);
  auto lr = Tb(source, result, "tb_learning_current_learning_rate", context, range);
  auto moe = Tb(source, result, "tb_learning_moe_lb_loss", context, range);
  EvidenceTable table{
      "Training metrics (steady state, outside warmup and checkpoints)", "tb_*", {}};
  auto add_row = [&](const std::optional<Series>& s, const char* name) {
    auto stats = s ? StatsOf(*s, steady) : std::nullopt;
    table.rows.push_back({"", "",
                          stats ? fmt::format("min {:.4g} max {:.4g} last {:.4g}", stats->min,
                                              stats->max, stats->last)
                                : "absent",
                          name});
  };
  for (auto [s, name] : {std::pair{&step_time, "step time (s)"},
                         {&throughput, "tokens/s/device"},
                         {&loss, "loss"},
                         {&grad, "grad norm"},
                         {&raw_grad, "raw grad norm"},
                         {&lr, "learning rate"},
                         {&moe, "MoE load-balance loss"}}) {
    add_row(*s, name);
  }
  result.evidence.push_back(std::move(table));
  if (!step_time && !throughput && !loss) {
    result.verdict = "undetermined";
    result.summary = "No tb_* training metrics in the TSDB for this window.";
    return result;
  }

  std::vector<std::string> notes;
  bool loss_spike = false, grad_spike = false, checkpoint_spikes = false;
  if (loss) {
    if (auto x = FirstSpike(*loss, kLossSpikeFactor, steady, context)) {
      loss_spike = true;
      result.anomalies.push_back(MakeFinding(
          "loss-spike", Severity::kCritical, "tb_learning_loss", Labels{}, x->value, "", x->time,
          fmt::format("loss jumped to {:.4g} at {} (over {:.0f}x its recent median)", x->value,
                      At(x->time), kLossSpikeFactor)));
    }
  }
  for (auto* g : {&grad, &moe}) {
    if (!*g) continue;
    if (auto x = FirstSpike(**g, kGradSpikeFactor, steady, context)) {
      grad_spike = true;
      const std::string family =
          (*g)->Label("__name__").empty()
              ? (g == &grad ? "tb_learning_grad_norm" : "tb_learning_moe_lb_loss")
              : (*g)->Label("__name__");
      result.anomalies.push_back(
          MakeFinding("grad-spike", Severity::kWarning, family, Labels{}, x->value, "", x->time,
                      fmt::format("{} spiked to {:.4g} at {} (over {:.0f}x its recent median)",
                                  family, x->value, At(x->time), kGradSpikeFactor)));
    }
  }
  if (grad && raw_grad) {
    auto g = StatsOf(*grad, steady), r = StatsOf(*raw_grad, steady);
    if (g && r && g->mean > 0 && r->mean > 2 * g->mean)
      notes.push_back(
          "raw grad norm well above the clipped one: clipping is active, maybe too aggressive.");
  }

  std::optional<Slowdown> slower, drop;
  if (step_time) {
    slower = Regression(*step_time, +1, steady, context);
    auto base = playbook::SteadyMedian(*step_time, steady, context);
    size_t spikes = 0;
    for (const auto& x : step_time->samples) {
      if (base && context.InCheckpoint(x.time) && x.value > kCheckpointSpike * *base) ++spikes;
    }
    if (spikes > 0) {
      checkpoint_spikes = true;
      result.anomalies.push_back(MakeFinding(
          "checkpoint-step", Severity::kInfo, "tb_perf_step_time_seconds", Labels{},
          static_cast<double>(spikes), "count", std::nullopt,
          fmt::format(
              "{} slow step samples inside checkpoint windows: periodic checkpoint saves, expected",
              spikes)));
    }
  }
  if (throughput) drop = Regression(*throughput, -1, steady, context);
  if (slower) {
    result.anomalies.push_back(
        MakeFinding("step-time-increase", Severity::kWarning, "tb_perf_step_time_seconds", Labels{},
                    slower->extreme, "s", slower->onset,
                    fmt::format("step time rose from {:.3g}s to {:.3g}s{}{}", slower->baseline,
                                slower->extreme, slower->onset ? " from " + At(*slower->onset) : "",
                                slower->gradual ? ", gradually" : "")));
  }
  if (drop) {
    result.anomalies.push_back(
        MakeFinding("throughput-drop", Severity::kWarning, "tb_perf_per_device_tokens_per_sec",
                    Labels{}, drop->extreme, "tokens/s", drop->onset,
                    fmt::format("throughput fell {:.0f}% from {:.4g} to {:.4g} tokens/s/device{}",
                                100 * (1 - drop->extreme / drop->baseline), drop->baseline,
                                drop->extreme, drop->onset ? " from " + At(*drop->onset) : "")));
  }

  // The contention checklist at the slowdown's onset.
  std::optional<double> onset;
  for (const auto* d : {&slower, &drop}) {
    if (*d && (*d)->onset && (!onset || *(*d)->onset < *onset)) onset = (*d)->onset;
  }
  if (onset) {
    const double margin =
        std::max(context.rate_window_seconds, 4 * context.scrape_interval_seconds);
    playbook::ContentionWindows w{{steady.start, *onset - margin},
                                  {*onset - margin, std::min(range.end, *onset + margin)}};
    if (w.baseline.seconds() <= 0) w.baseline = {steady.start, *onset};
    playbook::RunContentionChecklist(source, context, w, result);
  }

  const bool gradual = (slower && slower->gradual) || (!slower && drop && drop->gradual);
  if (loss_spike) {
    result.verdict = "loss-divergence";
  } else if (grad_spike) {
    result.verdict = "grad-spike";
  } else if ((slower || drop) && gradual) {
    result.verdict = "step-time-increase";
  } else if (slower || drop) {
    result.verdict = "throughput-regression";
  } else {
    result.verdict = checkpoint_spikes ? "checkpoint-spikes-only" : "stable";
  }
  // Expected effects (checkpoint windows) are reported, never the cause.
  PlaybookResult ranked;
  for (const auto& f : result.anomalies) {
    if (f.severity != Severity::kInfo) ranked.anomalies.push_back(f);
  }
  // Findings within one query step of each other are not ordered by
  // their times: the cause leads (result.h, CausalRank).
  SetRootCauseAndChain(ranked, StepFor(range, context));
  result.root_cause = ranked.root_cause;
  result.chain = ranked.chain;
  result.summary = "Training: " + result.verdict + ".";
  if (result.root_cause && result.verdict != "stable" &&
      result.verdict != "checkpoint-spikes-only") {
    result.summary += " Earliest anomaly: " + result.root_cause->text + ".";
    for (const auto& f : result.chain) {
      result.summary += "\n  then: " + f.text;
    }
  }
  for (const auto& n : notes) result.summary += "\n" + n;
  return result;
}

}  // namespace jobmon::diagnose
