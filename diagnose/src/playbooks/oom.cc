// Playbook 3 (docs/diagnose.md, "OOM playbook"): each host's memory
// trajectory (memory_trajectory.h), the OOM kills in the job's window,
// and what I/O and VRAM did around the worst point.
#include <fmt/format.h>

#include <algorithm>

#include "jobmon/common/metric_names.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbooks/kit.h"
#include "playbooks/memory_trajectory.h"

namespace jobmon::diagnose {
namespace {

using playbook::MakeFinding;
using playbook::MemoryShape;

// A quarter of the starting headroom gone is a trend worth naming; a
// checkpoint dip only matters when it nearly reaches the limit
// ("Memory spikes during checkpoint saves are not OOM precursors unless
// they push the host to its limit").
constexpr double kSignificantFraction = 0.25;
constexpr double kAtLimitFraction = 0.9;
// "10-20+ blocked processes" per checkpoint-writing node; the monitor's 10%.
constexpr double kManyBlocked = 10;
constexpr double kHighIoPressure = 10;

struct HostMemory {
  std::string host;
  playbook::MemoryTrajectory trajectory;
  double kills = 0;
  std::optional<double> first_kill;
};

}  // namespace

PlaybookResult RunOomPlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = result.analysis_type = "oom";
  playbook::Queries q(source, result);
  const TimeRange job{context.job_range.start,
                      context.triage.crash_time.value_or(context.job_range.end)};
  const double step = StepFor(job, context);
  const double spike_span = std::max(60.0, 3 * step);

  std::map<std::string, HostMemory> hosts;
  auto memory = q.Range(metric_names::kMemAvailableBytes, job, step);
  for (const auto& s : memory) {
    HostMemory& h = hosts[s.Label("host")];
    h.host = s.Label("host");
    h.trajectory = playbook::ClassifyMemory(s, context, spike_span);
  }
  // The kernel counts the kill when it happens; the exporter's next scrapes
  // carry it, which may be after the log's failure line (the crash time):
  // kills are counted a few scrapes past it, within the job's data.
  const TimeRange kills{job.start,
                        std::min(context.job_range.end,
                                 job.end + std::max(3 * context.scrape_interval_seconds, step))};
  const std::string kills_query = IncreaseExpr(metric_names::kOomKillsTotal, kills);
  for (const auto& s : q.Instant(kills_query, kills.end)) {
    if (s.samples.empty() || s.samples.back().value < 0.5) continue;
    hosts[s.Label("host")].host = s.Label("host");
    hosts[s.Label("host")].kills = s.samples.back().value;
  }
  if (std::any_of(hosts.begin(), hosts.end(), [](auto& h) { return h.second.kills > 0; })) {
    for (const auto& s : q.Range(RateExpr(metric_names::kOomKillsTotal, context), kills, step)) {
      hosts[s.Label("host")].first_kill = FirstTimeAbove(s, 0);
    }
  }

  EvidenceTable table;
  table.title = "Host memory trajectory and OOM kills";
  table.query = std::string(metric_names::kMemAvailableBytes) + "; " + kills_query;
  const HostMemory* worst = nullptr;
  std::vector<std::string> affected, killed;
  for (const auto& [host, h] : hosts) {
    const auto& t = h.trajectory;
    table.rows.push_back(
        {host, "",
         fmt::format("available {} -> {} ({:.0f}% of the headroom used), {:.0f} OOM kills",
                     playbook::FormatBytes(t.start_available),
                     playbook::FormatBytes(t.min_available), 100 * t.consumed_fraction, h.kills),
         ToString(t.shape)});
    if (h.kills > 0) {
      killed.push_back(host);
      result.anomalies.push_back(MakeFinding(
          "oom-kill", Severity::kCritical, metric_names::kOomKillsTotal, host, h.kills, "count",
          h.first_kill,
          fmt::format("{}: {:.0f} OOM kills{}", host, h.kills,
                      h.first_kill ? " from " + playbook::FormatTime(*h.first_kill) : "")));
    }
    const bool checkpoint = t.shape == MemoryShape::kCheckpointSpikes;
    const bool significant =
        h.kills > 0 || (checkpoint ? t.consumed_fraction >= kAtLimitFraction
                                   : t.consumed_fraction >= kSignificantFraction);
    if (checkpoint && t.recovered_episodes > 0) {
      result.anomalies.push_back(MakeFinding(
          "checkpoint-step", Severity::kInfo, metric_names::kMemAvailableBytes, host,
          t.start_available - t.min_available, "bytes", t.onset,
          fmt::format("{}: memory dips at checkpoint saves ({} recovered), deepest {} at {}", host,
                      t.recovered_episodes,
                      playbook::FormatBytes(t.start_available - t.min_available),
                      playbook::FormatTime(t.peak_time))));
    }
    if (!significant || t.shape == MemoryShape::kFlat) continue;
    affected.push_back(host);
    if (!checkpoint) {
      const bool ramp = t.shape == MemoryShape::kGradualRamp;
      result.anomalies.push_back(
          MakeFinding(ramp ? "host-memory-ramp" : "host-memory-spike", Severity::kWarning,
                      metric_names::kMemAvailableBytes, host, t.start_available - t.min_available,
                      "bytes", t.onset,
                      fmt::format("{}: {} of memory taken {} from {} to {}", host,
                                  playbook::FormatBytes(t.start_available - t.min_available),
                                  ramp ? "gradually" : "suddenly", playbook::FormatTime(t.onset),
                                  playbook::FormatTime(t.peak_time))));
    }
    if (!worst || h.kills > worst->kills ||
        (h.kills == worst->kills && t.consumed_fraction > worst->trajectory.consumed_fraction)) {
      worst = &h;
    }
  }
  result.evidence.push_back(std::move(table));

  // What else moved up to the worst point: I/O (a checkpoint write) and VRAM (a D2H copy).
  if (worst) {
    const auto& t = worst->trajectory;
    const TimeRange around{t.onset - spike_span, t.peak_time + spike_span};
    const std::string sel = HostSelector({worst->host});
    EvidenceTable io;
    io.title = fmt::format("{} from {} to {}", worst->host, playbook::FormatTime(around.start),
                           playbook::FormatTime(around.end));
    struct Gauge {
      const char *family, *code, *unit;
      double threshold;
    };
    const Gauge gauges[] = {{metric_names::kIoPressureFullPct, "io-pressure", "%", kHighIoPressure},
                            {metric_names::kProcsBlocked, "procs-blocked", "count", kManyBlocked},
                            {metric_names::kMemDirtyBytes, "", "bytes", 0},
                            {metric_names::kMemWritebackBytes, "", "bytes", 0},
                            {metric_names::kGpuVramUsedBytes, "", "bytes", 0}};
    for (const auto& g : gauges) {
      std::string query = fmt::format("{}{{{}}}", g.family, sel);
      io.query += (io.query.empty() ? "" : "; ") + query;
      auto answer = q.Range(query, around, step);  // ByHost points into it
      auto values = playbook::Values(playbook::ByHost(answer)[worst->host]);
      if (values.empty()) continue;
      double peak = *std::max_element(values.begin(), values.end());
      bool bytes = std::string_view(g.family).ends_with("_bytes");
      io.rows.push_back(
          {worst->host, "",
           fmt::format("{} peak {}", g.family,
                       bytes ? playbook::FormatBytes(peak) : fmt::format("{:.1f}", peak)),
           ""});
      if (*g.code && peak >= g.threshold) {
        result.anomalies.push_back(MakeFinding(
            g.code, Severity::kInfo, g.family, worst->host, peak, g.unit, t.onset,
            fmt::format("{}: {} peaked at {:.1f} as memory fell", worst->host, g.family, peak)));
      }
    }
    result.evidence.push_back(std::move(io));
  }

  const std::string scope =
      affected.size() == hosts.size() && affected.size() > 1
          ? "all hosts at once (a data-pipeline issue or XLA recompilation, not one save)"
          : fmt::format("{} of {} hosts ({})", affected.size(), hosts.size(),
                        playbook::Join(affected));
  if (hosts.empty()) {
    result.verdict = "undetermined";
    result.summary = "No host memory series (hw_mem_available_bytes) or OOM-kill counters.";
  } else if (!worst) {
    result.verdict = "no-oom-evidence";
    result.summary = fmt::format(
        "No OOM kills and no memory growth on {} hosts; memory dips at checkpoint saves recovered.",
        hosts.size());
    result.next_steps = {"Look elsewhere for the cause of death (--playbook hardware)"};
  } else {
    const auto& t = worst->trajectory;
    result.verdict = t.shape == MemoryShape::kCheckpointSpikes ? "checkpoint-oom"
                     : t.shape == MemoryShape::kSuddenSpike    ? "sudden-spike"
                                                               : "gradual-ramp";
    result.summary = fmt::format(
        "Memory on {} went {}: available {} -> {} ({:.0f}% of the headroom) from {} to {}; {} "
        "OOM kills. Affected: {}.",
        worst->host, ToString(t.shape), playbook::FormatBytes(t.start_available),
        playbook::FormatBytes(t.min_available), 100 * t.consumed_fraction,
        playbook::FormatTime(t.onset), playbook::FormatTime(t.peak_time), worst->kills, scope);
    if (result.verdict == "checkpoint-oom") {
      result.next_steps = {
          "Checkpoint saves from DP replica 0 need ~2x the model size in host "
          "RAM: use more hosts per replica or async/sharded checkpointing"};
    } else if (result.verdict == "sudden-spike") {
      result.next_steps = {"Check what ran at the spike: data loading burst, XLA recompilation"};
    } else {
      result.next_steps = {
          "A leak: Python objects, data pipeline buffers or the XLA "
          "compilation cache growing; profile host memory over steps"};
    }
  }
  SetRootCauseAndChain(result);
  result.correlation = fmt::format(
      "Triage class '{}'; the OOM playbook says {}{}.", context.triage.primary_class,
      result.verdict, killed.empty() ? "" : " (kills on " + playbook::Join(killed) + ")");
  return result;
}

}  // namespace jobmon::diagnose
