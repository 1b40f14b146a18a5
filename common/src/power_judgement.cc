#include "jobmon/common/power_judgement.h"

#include <algorithm>
#include <utility>

#include "jobmon/common/percentile.h"

namespace jobmon::power {

const char* ToString(PowerState state) {
  switch (state) {
    case PowerState::kDead:
      return "dead (0 W)";
    case PowerState::kActive:
      return "training-level power";
    case PowerState::kBusyWait:
      return "busy at idle-level power (busy-wait)";
    case PowerState::kIdle:
      return "idle";
    case PowerState::kBetween:
      return "between idle and training power";
    case PowerState::kUnknown:
      return "no training baseline";
  }
  return "unknown";
}

std::optional<double> PowerFraction(double power, std::optional<double> baseline,
                                    std::optional<double> idle_floor) {
  if (!baseline || *baseline <= 0) return std::nullopt;
  double floor = idle_floor.value_or(0);
  if (floor <= 0 || *baseline < kMinBaselineOverFloor * floor) return power / *baseline;
  return std::max(0.0, power - floor) / (*baseline - floor);
}

PowerState JudgePower(double utilization_percent, double power_watts,
                      std::optional<double> baseline, std::optional<double> idle_floor) {
  if (power_watts < kDeadWatts) return PowerState::kDead;
  auto fraction = PowerFraction(power_watts, baseline, idle_floor);
  if (!fraction) return PowerState::kUnknown;
  if (*fraction >= kActiveFraction) return PowerState::kActive;
  if (*fraction < kIdleFraction) {
    return utilization_percent >= kBusyUtilizationPercent ? PowerState::kBusyWait
                                                          : PowerState::kIdle;
  }
  return PowerState::kBetween;
}

std::optional<double> TrainingBaseline(std::vector<double> training_samples) {
  if (training_samples.size() < kMinBaselineSamples) return std::nullopt;
  return Percentile(std::move(training_samples), 0.5);
}

}  // namespace jobmon::power
