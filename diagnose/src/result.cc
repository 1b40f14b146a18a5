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

void SetRootCauseAndChain(PlaybookResult& result) {
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
  if (timed.empty()) {
    if (!result.anomalies.empty()) result.root_cause = result.anomalies.front();
    return;
  }
  result.root_cause = timed.front();
  result.chain.assign(timed.begin() + 1, timed.end());
}

}  // namespace jobmon::diagnose
