#pragma once
// What a GPU's power says about it, relative to the job's own training
// baseline (tsdb-diagnosis.md, Playbook 1 "Key thresholds" gives MI355X
// watts: ~900 W training, ~300 W busy-wait, ~260 W idle; as fractions of
// the baseline they hold for AMD, NVIDIA and the fake trainer alike). The
// numbers are the monitor's live stall classifier's
// (monitor/src/stall_classifier.cc), so a finished job's diagnosis and the
// live alert judge a hang the same way.

#include <optional>
#include <vector>

namespace jobmon::diagnose {

inline constexpr double kActivePowerFraction = 0.7;    // >= this of the baseline: computing
inline constexpr double kIdlePowerFraction = 0.5;      // < this: idle or spinning
inline constexpr double kBusyUtilizationPercent = 90;  // a spinning GPU reports "busy"
inline constexpr double kDeadWatts = 5;                // a GPU (or node) gone
// An idle floor is only usable when training lifts power well above it.
inline constexpr double kMinBaselineOverFloor = 1.2;
// Scrapes of training needed before a baseline means anything (the
// monitor's MetricWindow::kMinBaselineScrapes).
inline constexpr size_t kMinBaselineSamples = 5;

enum class PowerState { kDead, kActive, kBusyWait, kIdle, kBetween, kUnknown };
const char* ToString(PowerState state);

// Power as a fraction of the training baseline, above the idle floor when
// one is known and usable; nullopt without a baseline.
std::optional<double> PowerFraction(double power, std::optional<double> baseline,
                                    std::optional<double> idle_floor = std::nullopt);

// The monitor's Judge() without its exporter and process signals.
PowerState JudgePower(double utilization_percent, double power_watts,
                      std::optional<double> baseline,
                      std::optional<double> idle_floor = std::nullopt);

// The training baseline from power samples taken while the job trained:
// their median, nullopt with fewer than kMinBaselineSamples.
std::optional<double> TrainingBaseline(std::vector<double> training_samples);

}  // namespace jobmon::diagnose
