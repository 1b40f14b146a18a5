#include "jobmon/monitor/divergence.h"

#include <fmt/format.h>

#include <algorithm>

#include "jobmon/common/iso_time.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/common/power_judgement.h"

namespace jobmon::monitor {
namespace {

// Utilisation at or under power::kIdleUtilizationPercent, after training
// above kBusyFrom: idle.
constexpr double kBusyFrom = 50;

void Earliest(std::optional<HostDivergence>& best, const std::string& host, double at,
              std::string how) {
  if (!best || at < best->at) best = HostDivergence{host, at, std::move(how)};
}

}  // namespace

std::vector<HostDivergence> FirstDivergence(const MetricWindow& window, double training_from,
                                            double training_until, double at, double stale_after) {
  const auto baselines = window.Baselines(at, training_from, training_until, stale_after);
  // A host's own change can show a scrape before the last step was read.
  const double since = training_until - stale_after;
  std::vector<HostDivergence> out;
  for (const std::string& host : window.hosts()) {
    std::optional<HostDivergence> first;
    const auto seen = window.LastSeen(host, at);
    if (!seen || at - *seen > stale_after) {
      if (seen && *seen >= since) Earliest(first, host, *seen, "exporter silent since then");
    }
    if (auto d = window.UninterruptibleSince(host); d && *d >= since && *d <= at) {
      Earliest(first, host, *d, "a job process in D state");
    }
    const auto baseline = baselines.find(host);
    const std::optional<double> power =
        baseline == baselines.end() ? std::nullopt : baseline->second.power;
    if (power && *power > 0) {
      for (const auto& [gpu, points] : window.PointsOf(host, metric_names::kGpuPowerWatts)) {
        for (const auto& [t, watts] : points) {
          if (t < since || t > at) continue;
          if (watts < power::kIdleFraction * *power) {
            Earliest(first, host, t,
                     fmt::format("GPU {} at {:.0f} W, under half its training {:.0f} W", gpu, watts,
                                 *power));
            break;
          }
        }
      }
    }
    for (const auto& [gpu, points] : window.PointsOf(host, metric_names::kGpuUtilizationPercent)) {
      bool busy = false;
      for (const auto& [t, percent] : points) {
        if (t < since) {
          busy = percent >= kBusyFrom;
          continue;
        }
        if (t > at) break;
        if (busy && percent <= power::kIdleUtilizationPercent) {
          Earliest(first, host, t, fmt::format("GPU {} idle ({:.0f}% busy)", gpu, percent));
          break;
        }
        busy = busy || percent >= kBusyFrom;
      }
    }
    if (first) out.push_back(std::move(*first));
  }
  std::sort(out.begin(), out.end(), [](const HostDivergence& a, const HostDivergence& b) {
    return a.at != b.at ? a.at < b.at : a.host < b.host;
  });
  return out;
}

std::string DescribeDivergence(const std::vector<HostDivergence>& diverged, size_t hosts,
                               double same_moment) {
  if (diverged.empty()) return "";
  const size_t training = hosts > diverged.size() ? hosts - diverged.size() : 0;
  const HostDivergence& first = diverged.front();
  const bool apart = diverged.size() > 1 && diverged[1].at - first.at >= same_moment;
  if (!apart && training == 0) return "";  // all at once: nothing tells them apart
  std::string line =
      fmt::format("first divergence: {} at {} ({})", first.host, FormatIsoUtc(first.at), first.how);
  if (diverged.size() > 1) {
    const HostDivergence& next = diverged[1];
    line += fmt::format(", {:.0f} s before {} ({})", next.at - first.at, next.host, next.how);
    if (diverged.size() > 2) line += fmt::format(" and {} more", diverged.size() - 2);
  }
  if (training > 0) {
    line += fmt::format("; {} other host{} still look{} like training", training,
                        training == 1 ? "" : "s", training == 1 ? "s" : "");
  }
  return line;
}

}  // namespace jobmon::monitor
