#include "jobmon/monitor/store_query.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/store_labels.h"
#include "jobmon/common/whole_number.h"
#include "jobmon/monitor/metric_window.h"

namespace jobmon::monitor {

std::string StoreEvidenceQuery(const std::vector<uint32_t>& job_ids, const std::string& cluster,
                               double range_seconds, StoreFamilies families) {
  std::string names;
  if (families == StoreFamilies::kTensorBoardStep) {
    names = metric_names::kTbStep;
  } else {
    names = "up";
    for (const std::string& name : WindowInputNames()) names += "|" + name;
  }
  std::string ids;
  for (uint32_t id : job_ids) ids += (ids.empty() ? "" : "|") + std::to_string(id);
  std::string selector =
      fmt::format("{{__name__=~\"{}\",{}=~\"{}\"", names, store_labels::kJobId, ids);
  if (!cluster.empty()) selector += "," + store_labels::Matcher(store_labels::kCluster, cluster);
  const long range = std::max(1L, static_cast<long>(std::ceil(range_seconds)));
  return selector + fmt::format("}}[{}s]", range);
}

bool NeedsStoreEvidence(const ProgressState& state, bool heartbeat_pending) {
  // Before a first step a stall is hang/startup, judged without the window.
  return heartbeat_pending || (state.phase == Phase::kStalled && state.last_step.has_value());
}

namespace {

// hw_job_processes and hw_job_process_* (common/metric_names.h).
constexpr std::string_view kJobProcessPrefix = "hw_job_process";

std::optional<uint32_t> JobIdOf(const std::string& text) { return WholeNumber<uint32_t>(text); }

// WindowLimits over an answer: each job's hosts and each host's GPU labels
// admitted so far.
class Admission {
 public:
  explicit Admission(const WindowLimits& limits) : limits_(limits) {}
  bool Admit(uint32_t job, const std::string& host, const std::string* gpu) {
    auto& hosts = jobs_[job];
    auto it = hosts.find(host);
    if (it == hosts.end()) {
      if (host.size() > kMaxStoreHostBytes || hosts.size() >= limits_.max_hosts) return false;
      it = hosts.emplace(host, std::set<std::string>()).first;
    }
    if (!gpu || it->second.count(*gpu)) return true;
    if (gpu->size() > kMaxGpuLabelBytes || it->second.size() >= limits_.max_gpus_per_host) {
      return false;
    }
    it->second.insert(*gpu);
    return true;
  }

 private:
  const WindowLimits& limits_;
  std::map<uint32_t, std::map<std::string, std::set<std::string>>> jobs_;  // job -> host -> GPUs
};

// A series of a job the scope does not allow: another user's, or a host
// that is not one of the job's nodes.
bool OutOfScope(const StoreScopes* scopes, uint32_t job, const std::string& host,
                const diagnose::Series& s) {
  if (!scopes) return false;
  auto scope = scopes->find(job);
  if (scope == scopes->end()) return false;
  if (!scope->second.user.empty() && s.Label(store_labels::kUser) != scope->second.user)
    return true;
  return !scope->second.hosts.empty() && !scope->second.hosts.count(host);
}

}  // namespace

StoreScrapes GroupStoreSeries(const std::vector<diagnose::Series>& series,
                              const WindowLimits& limits, const StoreScopes* scopes) {
  struct Building {
    std::optional<bool> up;
    Exposition samples;
  };
  // job -> host -> time (ms) -> scrape
  std::map<uint32_t, std::map<std::string, std::map<int64_t, Building>>> building;
  Admission admission(limits);
  for (const diagnose::Series& s : series) {
    auto job = JobIdOf(s.Label(store_labels::kJobId));
    const std::string host = s.Label(kStoreHostLabel);
    const std::string name = s.Label("__name__");
    if (!job || host.empty() || name.empty()) continue;
    if (OutOfScope(scopes, *job, host, s)) continue;
    auto gpu = s.labels.find("gpu");
    if (!admission.Admit(*job, host, gpu == s.labels.end() ? nullptr : &gpu->second)) continue;
    // Only the labels MetricWindow reads: each point is copied into its
    // scrape, and the remote_write labels (job, instance, user, cluster...)
    // made those copies most of store mode's CPU (a benchmark at 2,000 jobs).
    Sample sample;
    sample.name = name;
    for (const char* key : {"gpu", "type"}) {
      if (auto it = s.labels.find(key); it != s.labels.end())
        sample.labels.emplace(key, it->second);
    }
    if (name.starts_with(kJobProcessPrefix)) {
      // What the job's processes wait on (MetricWindow::ReadProcesses).
      for (const char* key : {"pid", "comm", "state", "wchan", "task"}) {
        if (auto it = s.labels.find(key); it != s.labels.end())
          sample.labels.emplace(key, it->second);
      }
    }
    auto& hosts = building[*job][host];
    for (const diagnose::Sample& point : s.samples) {
      if (!std::isfinite(point.value)) continue;
      Building& b = hosts[std::llround(point.time * 1000)];
      if (name == "up") {
        b.up = point.value >= 1;
      } else {
        sample.value = point.value;
        b.samples.samples.push_back(sample);
      }
    }
  }
  StoreScrapes out;
  for (auto& [job, hosts] : building) {
    for (auto& [host, times] : hosts) {
      auto& scrapes = out[job][host];
      for (auto& [ms, b] : times) {
        StoreScrape scrape;
        scrape.t = static_cast<double>(ms) / 1000;
        scrape.ok = b.up.value_or(true);
        if (scrape.ok) scrape.samples = std::move(b.samples);
        scrapes.push_back(std::move(scrape));
      }
    }
  }
  return out;
}

size_t FeedStoreAnswer(MetricWindow& window,
                       const std::map<std::string, std::vector<StoreScrape>>& hosts, double since,
                       MetricWindow::Keep keep) {
  const bool replace = keep != MetricWindow::Keep::kLacking;
  size_t fed = 0;
  for (const auto& [host, scrapes] : hosts) {
    if (replace) window.ForgetSince(host, since);
    for (const StoreScrape& scrape : scrapes) {
      if (scrape.t <= since) continue;
      if (scrape.ok) {
        window.AddScrape(host, scrape.t, scrape.samples, keep);
      } else if (replace) {
        window.AddFailedScrape(host, scrape.t);
      }
      ++fed;
    }
  }
  return fed;
}

std::optional<MetricWindow::Latest> NewestTensorBoardStep(
    const std::map<std::string, std::vector<StoreScrape>>& hosts, double since) {
  // A window of its own, not the job's: feeding that would replace the
  // span's evidence with an answer that has no other family.
  MetricWindow steps;
  FeedStoreAnswer(steps, hosts, since);
  return steps.LatestOf(metric_names::kTbStep);
}

}  // namespace jobmon::monitor
