#include "jobmon/diagnose/context.h"

#include <algorithm>

namespace jobmon::diagnose {

bool DiagnoseContext::HasFamily(const std::string& name) const {
  return std::find(families.begin(), families.end(), name) != families.end();
}

bool DiagnoseContext::InCheckpoint(double time) const {
  return std::any_of(checkpoints.begin(), checkpoints.end(),
                     [&](const CheckpointWindow& c) { return c.range.Contains(time); });
}

std::optional<double> DiagnoseContext::TimeOfStep(int64_t step) const {
  for (const auto& s : steps) {
    if (s.step >= step) return s.time;
  }
  return std::nullopt;
}

}  // namespace jobmon::diagnose
