#pragma once
// What a GPU's power says about it, relative to the job's own training
// baseline: the one judgement behind the live stall classifier
// (monitor/src/verdicts/stall_classifier.cc), the heartbeat classifier and every
// diagnosis playbook (diagnose/src/playbooks/), so a live alert and a
// finished job's diagnosis call a hang the same way. The thresholds and why
// they are fractions of the baseline, not vendor watts: docs/diagnose.md,
// "Hang playbook".

#include <cstddef>
#include <optional>
#include <vector>

namespace jobmon::power {

inline constexpr double kActiveFraction = 0.7;         // >= this of the baseline: computing
inline constexpr double kIdleFraction = 0.5;           // < this: idle or spinning
inline constexpr double kBusyUtilizationPercent = 90;  // a spinning GPU reports "busy"
inline constexpr double kDeadWatts = 5;                // a GPU (or node) gone
// An idle floor is only usable when training lifts power well above it.
inline constexpr double kMinBaselineOverFloor = 1.2;
// Scrapes of training needed before a baseline means anything.
inline constexpr size_t kMinBaselineSamples = 5;
// PSI "some" I/O pressure (percent) at which a host's I/O is worth naming.
inline constexpr double kHighIoPressurePercent = 10;
// Utilisation at or under this: a GPU does no work (a context may be open).
inline constexpr double kIdleUtilizationPercent = 5;

// Where a stall's power is judged from: the later half of [from, to], so the
// hung step's own compute (training power, then the spin) stays out; a
// stall is declared after several step times.
inline double LaterHalfStart(double from, double to) { return from + (to - from) / 2; }

enum class PowerState { kDead, kActive, kBusyWait, kIdle, kBetween, kUnknown };
const char* ToString(PowerState state);

// Power as a fraction of the training baseline, above the idle floor when
// one is known and usable; nullopt without a baseline.
std::optional<double> PowerFraction(double power, std::optional<double> baseline,
                                    std::optional<double> idle_floor = std::nullopt);

// Dead below kDeadWatts; else by PowerFraction: active, idle or busy-wait
// (idle-level power while busy), between the two, or unknown without a
// baseline. The monitor adds its exporter and NVIDIA signals on top.
PowerState JudgePower(double utilization_percent, double power_watts,
                      std::optional<double> baseline,
                      std::optional<double> idle_floor = std::nullopt);

// The training baseline from power samples taken while the job trained:
// their median (nearest rank), nullopt with fewer than kMinBaselineSamples.
std::optional<double> TrainingBaseline(std::vector<double> training_samples);

}  // namespace jobmon::power
