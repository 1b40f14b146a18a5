// Step alignment and steady-state statistics for the comparison
// (docs/diagnose.md, Comparing two jobs steps 2, 3 and 5).

#include <algorithm>
#include <cmath>
#include <map>

#include "compare/compare.h"

namespace jobmon::diagnose {

namespace {

std::pair<int64_t, int64_t> StepBounds(const std::vector<StepTime>& steps) {
  auto [lo, hi] = std::minmax_element(steps.begin(), steps.end(),
                                      [](const auto& x, const auto& y) { return x.step < y.step; });
  return {lo->step, hi->step};
}

}  // namespace

std::optional<StepOverlap> OverlapSteps(const std::vector<StepTime>& a,
                                        const std::vector<StepTime>& b, int64_t warmup) {
  if (a.empty() || b.empty()) return std::nullopt;
  auto [first_a, last_a] = StepBounds(a);
  auto [first_b, last_b] = StepBounds(b);
  int64_t first = std::max(first_a, first_b);
  int64_t last = std::min(last_a, last_b);
  if (first > last) return std::nullopt;
  // The reference: steady state "typically 5-10 steps after the later job's
  // first step"; a short overlap keeps at least half of itself.
  int64_t skip = std::clamp<int64_t>(warmup, 0, (last - first + 1) / 2);
  return StepOverlap{first + skip, last, skip};
}

std::optional<SteadyState> SteadyStateOf(const std::vector<Series>& series,
                                         const DiagnoseContext& context) {
  // Per timestamp (to the millisecond: range queries share their grid) the
  // mean across series, so that the spread is over time, not across hosts.
  std::map<int64_t, std::pair<double, int>> by_time;
  std::map<std::string, std::pair<double, int>> by_host;
  for (const auto& s : series) {
    for (const auto& sample : s.samples) {
      if (std::isnan(sample.value) || context.InCheckpoint(sample.time)) continue;
      auto& t = by_time[std::llround(sample.time * 1000)];
      t.first += sample.value;
      ++t.second;
      std::string host = s.Label("host");
      if (!host.empty()) {
        auto& h = by_host[host];
        h.first += sample.value;
        ++h.second;
      }
    }
  }
  if (by_time.empty()) return std::nullopt;
  SteadyState out;
  double sum = 0;
  std::vector<double> means;
  for (const auto& [time, acc] : by_time) {
    means.push_back(acc.first / acc.second);
    sum += means.back();
  }
  out.samples = means.size();
  out.mean = sum / static_cast<double>(means.size());
  if (means.size() > 1) {
    double squares = 0;
    for (double m : means) squares += (m - out.mean) * (m - out.mean);
    out.stddev = std::sqrt(squares / static_cast<double>(means.size() - 1));
  }
  for (const auto& [host, acc] : by_host) out.per_host[host] = acc.first / acc.second;
  return out;
}

bool Diverges(const SteadyState& a, const SteadyState& b, double min_abs, double min_rel) {
  double delta = std::fabs(b.mean - a.mean);
  // A persistent gap stands out of both jobs' variation over time; a one-off
  // spike raises the variation instead (docs/diagnose.md, "The workflow", step 5).
  double noise = std::sqrt((a.stddev * a.stddev + b.stddev * b.stddev) / 2);
  double scale = std::max(std::fabs(a.mean), std::fabs(b.mean));
  return delta > 2 * noise && delta >= min_abs && delta >= min_rel * scale && delta > 0;
}

std::vector<std::string> HostsCarryingDelta(const SteadyState& low, const SteadyState& high) {
  double delta = high.mean - low.mean;
  std::vector<std::string> out;
  for (const auto& [host, value] : high.per_host) {
    auto same = low.per_host.find(host);
    double base = same == low.per_host.end() ? low.mean : same->second;
    if (value - base >= 0.5 * delta) out.push_back(host);
  }
  return out;
}

}  // namespace jobmon::diagnose
