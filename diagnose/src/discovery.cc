#include "discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "jobmon/common/metric_names.h"
#include "jobmon/triage/triage.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {

namespace {

// The reference's family prefixes (step 3's listing), in its order.
constexpr const char* kPrefixes[] = {"hw_gpu_", "hw_tcp_", "hw_rdma_",  "hw_io_",    "hw_mem_",
                                     "hw_oom_", "hw_net_", "hw_procs_", "hw_dmesg_", "tb_"};

std::vector<std::string> Sorted(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

Discovery Discover(PromSource& source, const DiscoveryInputs& inputs) {
  Discovery d;
  d.tsdb_range = inputs.tsdb_range;
  d.job_range = inputs.tsdb_range;
  auto names = source.LabelValues("__name__", inputs.tsdb_range);
  if (names.ok()) {
    d.families = Sorted(names.value());
  } else {
    d.errors.push_back("metric names: " + names.error().message);
  }
  auto hosts = source.LabelValues("host", inputs.tsdb_range);
  if (hosts.ok()) {
    d.hosts = Sorted(hosts.value());
  } else {
    d.errors.push_back("host label values: " + hosts.error().message);
  }

  // timestamp(up) answers each scrape's own time (up itself would answer the
  // query's grid), so its extremes bound the job's data exactly: the
  // cross-check reads tb_step at the very end.
  DiagnoseContext step_context;
  step_context.scrape_interval_seconds = inputs.scrape_interval_seconds;
  const double step = StepFor(inputs.tsdb_range, step_context);
  std::map<std::string, HostLastScrape> last;
  auto stamps = source.QueryRange("timestamp(up)", inputs.tsdb_range, step);
  if (stamps.ok()) {
    std::optional<double> first, final;
    for (const Series& s : stamps.value()) {
      last[s.Label("host")];
      for (const Sample& sample : s.samples) {
        first = std::min(first.value_or(sample.value), sample.value);
        final = std::max(final.value_or(sample.value), sample.value);
      }
    }
    if (first) d.job_range = {*first, *final};
  } else {
    d.errors.push_back("timestamp(up): " + stamps.error().message);
  }
  auto up = source.QueryRange("up", inputs.tsdb_range, step);
  if (up.ok()) {
    for (const Series& s : up.value()) {
      HostLastScrape& h = last[s.Label("host")];
      for (const Sample& sample : s.samples) {
        if (sample.value == 1) h.last_up = std::max(h.last_up.value_or(sample.time), sample.time);
      }
    }
  } else {
    d.errors.push_back("up: " + up.error().message);
  }
  auto collectors = source.QueryRange(
      fmt::format("max by (host) ({})", metric_names::kCollectorSuccess), inputs.tsdb_range, step);
  if (collectors.ok()) {
    for (const Series& s : collectors.value()) {
      if (!s.samples.empty()) last[s.Label("host")].last_collector = s.samples.back().time;
    }
  } else {
    d.errors.push_back(std::string(metric_names::kCollectorSuccess) + ": " +
                       collectors.error().message);
  }
  for (auto& [host, h] : last) {
    if (host.empty()) continue;
    h.host = host;
    d.last_scrape.push_back(h);
    // A host only `up` names (its exporter never answered) is still a host.
    if (!std::binary_search(d.hosts.begin(), d.hosts.end(), host)) {
      d.hosts.insert(std::lower_bound(d.hosts.begin(), d.hosts.end(), host), host);
    }
  }
  return d;
}

void ApplyDiscovery(const Discovery& discovery, const DiscoveryInputs& inputs,
                    DiagnoseContext& context) {
  context.families = discovery.families;
  context.hosts = discovery.hosts;
  context.tsdb_range = discovery.tsdb_range;
  context.job_range = discovery.job_range;
  context.window = discovery.job_range;
  context.expected_hosts = inputs.expected_hosts;
  context.scrape_interval_seconds = inputs.scrape_interval_seconds;
}

std::string DescribeDiscovery(const Discovery& discovery) {
  std::string groups;
  for (const char* prefix : kPrefixes) {
    auto n = std::count_if(discovery.families.begin(), discovery.families.end(),
                           [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
    if (n == 0) continue;
    groups += fmt::format("{}{}* {}", groups.empty() ? "" : ", ", prefix, n);
  }
  return fmt::format("{} families{}, {} host{}, {} of data", discovery.families.size(),
                     groups.empty() ? "" : " (" + groups + ")", discovery.hosts.size(),
                     discovery.hosts.size() == 1 ? "" : "s",
                     triage::FormatDuration(std::max(0.0, discovery.job_range.seconds())));
}

}  // namespace jobmon::diagnose
