#include "jobmon/diagnose/result.h"

#include <algorithm>

namespace jobmon::diagnose {

const char* ToString(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

int CausalRank(const std::string& code) {
  if (code == "clock-drop") return 1;
  if (code == "power-drop" || code == "power-spread" || code == "power-idle" ||
      code == "util-low" || code == "util-high-power-idle")
    return 2;
  if (code == "step-time-increase" || code == "throughput-drop") return 3;
  return 0;
}

namespace {

// A GPU's own clock or power symptom dated before a cause on the same GPU
// (its temperature crossing the thermal threshold): the symptom's onset is
// a relative change, seen as the ramp begins, the cause's a threshold,
// crossed later in the same ramp. Within this long the cause explains it.
constexpr double kGpuCauseLagSeconds = 30;

bool SameGpu(const Finding& a, const Finding& b) {
  return !a.gpu.empty() && a.host == b.host && a.gpu == b.gpu;
}

// Moves each GPU cause ahead of the symptoms of its own GPU it explains.
void CausesBeforeTheirGpuSymptoms(std::vector<Finding>& timed, double lag) {
  for (size_t i = 0; i < timed.size(); ++i) {
    const int rank = CausalRank(timed[i].code);
    if (rank != 1 && rank != 2) continue;
    for (size_t j = i + 1; j < timed.size() && *timed[j].time - *timed[i].time <= lag; ++j) {
      if (CausalRank(timed[j].code) == 0 && SameGpu(timed[i], timed[j])) {
        std::rotate(timed.begin() + static_cast<std::ptrdiff_t>(i),
                    timed.begin() + static_cast<std::ptrdiff_t>(j),
                    timed.begin() + static_cast<std::ptrdiff_t>(j) + 1);
        break;
      }
    }
  }
}

}  // namespace

void SetRootCauseAndChain(PlaybookResult& result, double same_time_seconds) {
  result.root_cause.reset();
  result.chain.clear();
  std::vector<Finding> timed;
  for (const auto& f : result.anomalies) {
    if (f.time) timed.push_back(f);
  }
  // Stable: findings at the same time keep the playbook's order (its most
  // telling first).
  std::stable_sort(timed.begin(), timed.end(),
                   [](const Finding& a, const Finding& b) { return *a.time < *b.time; });
  // Within one step of the earliest of a group the times cannot order the
  // findings: the cause goes first.
  for (auto group = timed.begin(); group != timed.end();) {
    auto end = std::find_if(group, timed.end(), [&](const Finding& f) {
      return *f.time - *group->time > same_time_seconds;
    });
    std::stable_sort(group, end, [](const Finding& a, const Finding& b) {
      return CausalRank(a.code) < CausalRank(b.code);
    });
    group = end;
  }
  CausesBeforeTheirGpuSymptoms(timed, std::max(kGpuCauseLagSeconds, same_time_seconds));
  if (timed.empty()) {
    if (!result.anomalies.empty()) result.root_cause = result.anomalies.front();
    return;
  }
  result.root_cause = timed.front();
  result.chain.assign(timed.begin() + 1, timed.end());
}

}  // namespace jobmon::diagnose
