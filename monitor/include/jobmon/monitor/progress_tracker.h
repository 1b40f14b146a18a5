#pragma once
// Per-job progress against expectation (DESIGN.md "Progress and incidents"):
// starting (no step yet, startup grace) -> training -> stalled by the one
// stall rule (triage::StallThreshold): max(k * p99_step_time, min_stall),
// with extra grace after a checkpoint step, learned from the job's own
// earlier checkpoint pauses. Pure: fed with observations and a clock value,
// so it is tested without waiting.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/triage/stall_rule.h"

namespace jobmon::monitor {

struct StallPolicy {
  double k = 5.0;                        // times the p99 of recent step intervals
  double min_stall_seconds = 60;         // never call a stall sooner
  double startup_grace_seconds = 1800;   // no first step yet (compile, data loading)
  double checkpoint_grace_factor = 1.5;  // times the longest pause after a checkpoint seen so far
  double first_checkpoint_grace_seconds = 600;  // before any checkpoint pause was seen

  // The part the one stall rule (triage/stall_rule.h) applies once a step came.
  triage::StallRule rule() const {
    return {k, min_stall_seconds, checkpoint_grace_factor, first_checkpoint_grace_seconds};
  }
};

enum class Phase { kStarting, kTraining, kStalled };
const char* ToString(Phase phase);

struct ProgressState {
  Phase phase = Phase::kStarting;
  std::optional<int64_t> last_step;
  std::optional<double> last_step_time;  // when it was observed (unix seconds)
  double idle_seconds = 0;               // now - last step (or - start when starting)
  double threshold_seconds = 0;          // the stall threshold in force now
  std::optional<double> median_interval, p99_interval;
  bool checkpoint_grace = false;  // the threshold includes checkpoint grace
  std::optional<int64_t> expected_step_now;
  std::string threshold_reason;  // e.g. "5 x p99 1.02s < min_stall 60s"
  // Throughput against the run's own early steady state: the median of the
  // first kBaselineSteps intervals after warmup, and of the last kRecentSteps.
  std::optional<double> baseline_interval, recent_interval;
  std::optional<double> slowdown;  // recent / baseline, once both exist
};

class ProgressTracker {
 public:
  ProgressTracker(StallPolicy policy, double job_start_time)
      : policy_(policy), start_time_(job_start_time) {}

  // A step finished, observed at `observed_at`; `step_seconds` is the step
  // time the line itself reports (MaxText, Megatron), which is exact where
  // the observation time is only as fine as the poll. Steps at or below the
  // highest seen (other tasks printing the same step) only confirm progress.
  // True when the step was new progress.
  bool OnStep(int64_t step, double observed_at, std::optional<double> step_seconds = {});
  // "Config param checkpoint_period: N" (or learned from checkpoint lines).
  void SetCheckpointPeriod(int64_t period) { checkpoint_period_ = period; }
  // A checkpoint was saved at `step`.
  void OnCheckpoint(int64_t step) { last_checkpoint_step_ = step; }

  ProgressState Evaluate(double now) const;

  // After a daemon restart: what was persisted (last step and its time, the
  // interval statistics, what was learned about checkpoints).
  void Restore(int64_t last_step, double last_step_time, std::optional<double> median,
               std::optional<double> p99, std::optional<int64_t> checkpoint_period,
               std::optional<double> longest_checkpoint_pause,
               std::optional<double> baseline_interval = {},
               std::optional<double> recent_interval = {});
  std::optional<int64_t> checkpoint_period() const { return checkpoint_period_; }

  std::optional<double> longest_checkpoint_pause() const { return longest_checkpoint_pause_; }
  size_t interval_count() const { return intervals_.size(); }

  static constexpr size_t kWindow = 200;
  static constexpr int64_t kWarmupSteps = 5;
  static constexpr size_t kBaselineSteps = 20;
  static constexpr size_t kRecentSteps = 10;

 private:
  bool IsCheckpointStep(int64_t step) const;
  void AddInterval(double seconds);

  StallPolicy policy_;
  double start_time_;
  std::optional<int64_t> first_step_, last_step_;
  std::optional<double> last_time_;
  std::deque<double> intervals_;  // seconds per step, post-warmup, not after checkpoints
  std::vector<double> baseline_;  // the first kBaselineSteps of them
  std::deque<double> recent_;     // the last kRecentSteps after the baseline
  std::optional<double> longest_checkpoint_pause_;
  std::optional<int64_t> checkpoint_period_;
  std::optional<int64_t> last_checkpoint_step_;
};

}  // namespace jobmon::monitor
