#pragma once
// Bounded-memory statistics over a job's step lines: whatever the number of
// steps, state is O(window).

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "jobmon/common/percentile.h"

namespace jobmon::triage {

inline constexpr int64_t kWarmupSteps = 5;    // reference step 5: skip steps 0-4 after the first
inline constexpr size_t kRecentWindow = 100;  // median/p99 over recent non-checkpoint steps
inline constexpr size_t kTgsWindow = 10;      // tgs-degradation: the last 10 steps

struct StepPoint {
  int64_t step = 0;
  double seconds = 0;
  uint64_t line = 0;
};

class StepSeries {
 public:
  // Steps must increase; a step at or below the last one is counted as a
  // repeat (another task, or a restart) and ignored.
  // (`seconds` by reference: an optional copied into a register stalls on
  // its flag's one-byte store, rank_progress.h.)
  void Add(int64_t step, const std::optional<double>& seconds, uint64_t line, bool checkpoint_step);

  uint64_t count() const { return count_; }
  uint64_t repeats() const { return repeats_; }
  std::optional<StepPoint> first() const { return first_; }
  std::optional<StepPoint> last() const { return last_; }
  bool has_seconds() const { return timed_ > 0; }
  double total_seconds() const { return total_seconds_; }

  // The median steps between two recorded lines (a job that logs every
  // 100 steps: 100): the stall bound is judged in lines, not steps.
  double StepsPerLine() const;
  // Mean step time after warmup (all steps if there are only warmup steps).
  std::optional<double> SteadyStepSeconds() const;
  std::optional<double> RecentMedian() const;
  std::optional<double> RecentP99() const;
  // Mean of the last kTgsWindow non-checkpoint steps over the steady mean
  // before them; nullopt with too few steps.
  std::optional<double> TailSlowdown() const;

 private:
  uint64_t count_ = 0, repeats_ = 0, timed_ = 0;
  std::optional<StepPoint> first_, last_;
  double total_seconds_ = 0;
  double steady_sum_ = 0, warmup_sum_ = 0;
  uint64_t steady_count_ = 0, warmup_count_ = 0;
  std::deque<double> recent_;     // non-checkpoint, post-warmup
  std::deque<double> step_gaps_;  // steps between recorded lines, the last kRecentWindow
  double steady_noncheckpoint_sum_ = 0;
  uint64_t steady_noncheckpoint_count_ = 0;
};

// Callers say triage::Percentile; the one definition is common/percentile.h.
using jobmon::Percentile;

}  // namespace jobmon::triage
