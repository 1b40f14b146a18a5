#include "observability.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "jobmon/common/metric_names.h"
#include "jobmon/triage/triage.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {

namespace {

constexpr double kReferenceGhostSeconds = 300;  // "same value for >5 min"
constexpr const char* kFamily = "observability";

std::string Duration(const TimeRange& r) { return triage::FormatDuration(r.seconds()); }

bool Overlaps(const TimeRange& a, const TimeRange& b) {
  return a.start <= b.end && b.start <= a.end;
}

struct Checker {
  Checker(PromSource& s, const DiagnoseContext& c) : source(s), context(c) {}
  PromSource& source;
  const DiagnoseContext& context;
  ObservabilityResult result;
  double step = 0;
  double gap = 0;
  double ghost = 0;
  std::map<std::string, std::vector<TimeRange>> gaps_by_host;
  std::map<std::string, std::vector<TimeRange>> down_by_host;

  std::vector<Series> Range(const std::string& promql) {
    auto answer = source.QueryRange(promql, context.job_range, step);
    if (answer.ok()) return std::move(answer.value());
    result.errors.push_back(fmt::format("{}: {}", promql, answer.error().message));
    return {};
  }

  void Add(std::string code, Severity severity, std::string host, std::optional<TimeRange> range,
           std::string text, std::string untrusted_family = "") {
    Finding f;
    f.code = std::move(code);
    f.severity = severity;
    f.family = kFamily;
    f.host = host;
    if (range) {
      f.time = range->start;
      f.value = range->seconds();
      f.unit = "s";
    }
    f.text = std::move(text);
    if (range && !untrusted_family.empty()) {
      result.untrusted.push_back({host, untrusted_family, *range, f.code + ": " + f.text});
    }
    result.problems.push_back(std::move(f));
  }

  // Hosts missing, and gaps: from the times of `up` samples (timestamp(up)
  // gives the sample's own time at each step, so a gap shows even where
  // the query's lookback repeats the last value).
  void CheckPresence() {
    for (const std::string& host : context.expected_hosts) {
      if (!std::binary_search(context.hosts.begin(), context.hosts.end(), host)) {
        Add("host-missing", Severity::kCritical, host, std::nullopt,
            fmt::format("{} is one of the job's nodes but has no series in the TSDB (its exporter "
                        "never answered a scrape)",
                        host));
      }
    }
    for (const Series& s : Range("timestamp(up)")) {
      const std::string host = s.Label("host");
      std::vector<double> times;
      for (const Sample& sample : s.samples) times.push_back(sample.value);
      std::sort(times.begin(), times.end());
      times.erase(std::unique(times.begin(), times.end()), times.end());
      for (const TimeRange& g : Gaps(times, context.job_range, gap)) {
        gaps_by_host[host].push_back(g);
        const bool edge = g.start <= context.job_range.start || g.end >= context.job_range.end;
        // Nodes start and stop their exporters apart (prolog, epilog, the
        // targets file's refresh): a short absence at an edge is normal.
        if (edge && g.seconds() <= std::max({gap, 60.0, 12 * context.scrape_interval_seconds})) {
          continue;
        }
        if (edge) {
          Add("host-missing", Severity::kWarning, host, g,
              fmt::format("{} has no samples for {} at the job's {} ({:.0f} to {:.0f}): present "
                          "only part of the job",
                          host, Duration(g), g.start <= context.job_range.start ? "start" : "end",
                          g.start, g.end),
              "*");
        } else {
          Add("gap", Severity::kWarning, host, g,
              fmt::format("{} has no samples for {} ({:.0f} to {:.0f}), more than {} without a "
                          "scrape",
                          host, Duration(g), g.start, g.end, triage::FormatDuration(gap)),
              "*");
        }
      }
    }
  }

  // One or two failed scrapes (a timeout on a loaded node) are not an
  // exporter down or a collector failing: 3 in a row are.
  bool Transient(const TimeRange& r) const {
    return r.seconds() < 2 * context.scrape_interval_seconds;
  }

  void CheckExporterDown() {
    for (const Series& s : Range("up")) {
      const std::string host = s.Label("host");
      for (const TimeRange& r : RunsWhere(
               s, [](double v) { return v == 0; }, gap)) {
        down_by_host[host].push_back(r);
        if (Transient(r)) continue;
        Add("exporter-down", Severity::kWarning, host, r,
            fmt::format("up == 0 on {} for {} from {:.0f}: Prometheus could not scrape its "
                        "exporter",
                        host, Duration(r), r.start),
            "*");
      }
    }
  }

  void CheckFamilies() {
    auto any = [&](std::initializer_list<const char*> prefixes) {
      return std::any_of(context.families.begin(), context.families.end(), [&](const auto& f) {
        return std::any_of(prefixes.begin(), prefixes.end(),
                           [&](const char* p) { return f.rfind(p, 0) == 0; });
      });
    };
    struct Want {
      std::initializer_list<const char*> prefixes;
      const char* name;
      const char* why;
    };
    const Want wants[] = {
        {{"hw_gpu_"}, "hw_gpu_*", "no GPU metrics: the GPU collector never succeeded"},
        {{"hw_tcp_", "hw_net_"}, "hw_tcp_*/hw_net_*", "no network metrics"},
        {{"tb_"},
         "tb_*",
         "no training metrics: no TensorBoard event file was found (normal until the first "
         "summary is written)"},
    };
    for (const Want& want : wants) {
      if (any(want.prefixes)) continue;
      Finding f;
      f.code = "family-missing";
      f.severity = Severity::kWarning;
      f.family = kFamily;
      f.text = fmt::format("{}: {}", want.name, want.why);
      result.problems.push_back(std::move(f));
    }
  }

  void CheckCollectors() {
    for (const Series& s : Range(metric_names::kCollectorSuccess)) {
      const std::string host = s.Label("host"), collector = s.Label("collector");
      for (const TimeRange& r : RunsWhere(
               s, [](double v) { return v == 0; }, gap)) {
        if (Transient(r)) continue;
        Add("collector-failing", Severity::kWarning, host, r,
            fmt::format("collector {} on {} failed for {} ({:.0f} to {:.0f}): its metrics are "
                        "missing or stale there",
                        collector, host, Duration(r), r.start, r.end),
            "collector:" + collector);
      }
    }
  }

  // A flat run while the host was scraped (no gap, up == 1): the exporter
  // served stale values Prometheus stamped afresh.
  bool Scraped(const std::string& host, const TimeRange& r) {
    for (const auto* ranges : {&gaps_by_host[host], &down_by_host[host]}) {
      for (const TimeRange& bad : *ranges) {
        if (Overlaps(bad, r)) return false;
      }
    }
    return true;
  }

  void CheckScrapes() {
    std::map<std::string, std::vector<TimeRange>> frozen_scrape;
    for (const Series& s : Range(metric_names::kScrapeDurationSeconds)) {
      const std::string host = s.Label("host");
      for (const TimeRange& r : RunsWhere(
               s, [](double v) { return v > kSlowScrapeSeconds; }, gap)) {
        auto stats = StatsOf(s, r);
        Add("scrape-slow", Severity::kWarning, host, r,
            fmt::format("hw_scrape_duration_seconds on {} above {:.0f} s for {} from {:.0f} (max "
                        "{:.1f} s): a collector runs slow or times out",
                        host, kSlowScrapeSeconds, Duration(r), r.start, stats ? stats->max : 0));
      }
      // A measured duration never repeats exactly: flat is ghost data alone.
      for (const TimeRange& r : FlatRuns(s, ghost)) {
        if (!Scraped(host, r)) continue;
        frozen_scrape[host].push_back(r);
        Add("ghost-data", Severity::kCritical, host, r,
            fmt::format("hw_scrape_duration_seconds on {} held the same value for {} ({:.0f} to "
                        "{:.0f}) while up == 1: the exporter's collection was stuck and every hw_* "
                        "sample there is ghost data",
                        host, Duration(r), r.start, r.end),
            "hw_*");
      }
    }
    for (const Series& s : Range(metric_names::kCollectorDurationSeconds)) {
      const std::string host = s.Label("host"), collector = s.Label("collector");
      for (const TimeRange& r : FlatRuns(s, ghost)) {
        if (!Scraped(host, r)) continue;
        bool covered = std::any_of(frozen_scrape[host].begin(), frozen_scrape[host].end(),
                                   [&](const TimeRange& f) { return Overlaps(f, r); });
        if (covered) continue;
        Add("ghost-data", Severity::kCritical, host, r,
            fmt::format("hw_collector_duration_seconds of collector {} on {} held the same value "
                        "for {} ({:.0f} to {:.0f}) while up == 1: that collector's data is stale",
                        collector, host, Duration(r), r.start, r.end),
            "collector:" + collector);
      }
    }
    CheckPower(frozen_scrape);
  }

  // GPU power under load never holds the exact same wattage; a flat GPU is
  // ghost data when a healthy host's power moved over the same time
  // (reference: "Compare the suspect host against a healthy host").
  void CheckPower(std::map<std::string, std::vector<TimeRange>>& frozen_scrape) {
    auto series = Range(metric_names::kGpuPowerWatts);
    std::map<std::string, std::vector<std::pair<std::string, TimeRange>>> flat;  // host -> runs
    std::set<std::string> hosts;
    for (const Series& s : series) {
      hosts.insert(s.Label("host"));
      for (const TimeRange& r : FlatRuns(s, ghost))
        flat[s.Label("host")].push_back({s.Label("gpu"), r});
    }
    for (const auto& [host, runs] : flat) {
      std::set<std::string> reported;
      for (const auto& run : runs) {
        // Named copies, not a structured binding: lambdas below capture them
        // (clang before 16 cannot capture bindings).
        const std::string& gpu = run.first;
        const TimeRange& r = run.second;
        if (!Scraped(host, r) || reported.count(gpu)) continue;
        // A healthy host: another host with a GPU not flat over this run.
        bool healthy_elsewhere = false;
        for (const Series& other : series) {
          if (other.Label("host") == host) continue;
          auto stats = StatsOf(other, r);
          if (stats && stats->count > 1 && stats->max != stats->min) healthy_elsewhere = true;
        }
        bool scrape_frozen = std::any_of(frozen_scrape[host].begin(), frozen_scrape[host].end(),
                                         [&](const TimeRange& f) { return Overlaps(f, r); });
        if (scrape_frozen || !healthy_elsewhere) continue;  // reported above, or no contrast
        reported.insert(gpu);
        Add("ghost-data", Severity::kCritical, host, r,
            fmt::format("hw_gpu_power_watts of GPU {} on {} held the same value for {} ({:.0f} to "
                        "{:.0f}) while up == 1 and other hosts' power moved: ghost data",
                        gpu.empty() ? "?" : gpu, host, Duration(r), r.start, r.end),
            "hw_gpu_*");
      }
    }
  }
};

}  // namespace

double GhostMinSeconds(const DiagnoseContext& context, double query_step) {
  // 12 scrapes, not a minute: a dev cluster's 1 s scrapes and a job of a
  // minute still show a frozen exporter; a healthy GPU's power never
  // repeats 12 readings exactly (and power needs a healthy host to compare).
  const double floor = 12 * context.scrape_interval_seconds;
  double seconds =
      std::clamp(context.job_range.seconds() / 4, floor, std::max(floor, kReferenceGhostSeconds));
  return std::max(seconds, 3 * query_step);
}

double GapSeconds(const DiagnoseContext& context, double query_step) {
  return std::max(3 * context.scrape_interval_seconds, 2 * query_step);
}

std::vector<TimeRange> FlatRuns(const Series& series, double min_seconds) {
  std::vector<TimeRange> out;
  const auto& v = series.samples;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1].value == v[i].value) ++j;
    if (v[j].time - v[i].time > min_seconds) out.push_back({v[i].time, v[j].time});
    i = j + 1;
  }
  return out;
}

std::vector<TimeRange> RunsWhere(const Series& series, const std::function<bool(double)>& match,
                                 double max_spacing) {
  std::vector<TimeRange> out;
  std::optional<TimeRange> run;
  double previous = -INFINITY;
  for (const Sample& s : series.samples) {
    const bool hit = match(s.value);
    if (run && (!hit || s.time - previous > max_spacing)) {
      out.push_back(*run);
      run.reset();
    }
    if (hit) {
      if (!run) run = TimeRange{s.time, s.time};
      run->end = s.time;
    }
    previous = s.time;
  }
  if (run) out.push_back(*run);
  return out;
}

std::vector<TimeRange> Gaps(const std::vector<double>& sample_times, const TimeRange& within,
                            double max_gap) {
  std::vector<TimeRange> out;
  double previous = within.start;
  for (double t : sample_times) {
    if (t < within.start || t > within.end) continue;
    if (t - previous > max_gap) out.push_back({previous, t});
    previous = t;
  }
  if (within.end - previous > max_gap) out.push_back({previous, within.end});
  return out;
}

ObservabilityResult CheckObservability(PromSource& source, const DiagnoseContext& context) {
  Checker c(source, context);
  // About one point a minute for a day-long job, one per scrape for short ones.
  c.step = StepFor(context.job_range, context, 1440);
  c.gap = GapSeconds(context, c.step);
  c.ghost = GhostMinSeconds(context, c.step);
  c.CheckPresence();
  c.CheckExporterDown();
  c.CheckFamilies();
  c.CheckCollectors();
  c.CheckScrapes();
  return std::move(c.result);
}

}  // namespace jobmon::diagnose
