#pragma once
// Per-job progress against expectation (docs/monitor.md, "Progress and incidents"):
// starting (no step yet, startup grace) -> training -> stalled by the one
// stall rule (triage::StallThreshold): max(k * p99 interval, min_stall),
// with extra grace after a checkpoint step, learned from the job's own
// earlier checkpoint pauses. The interval is the job's own rhythm: the time
// between its progress observations (a line every step or every 100 steps),
// not the time per step; the step time (for the expected step and the
// slowdown) is kept apart. Pure: fed with observations and a clock value,
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
  std::optional<double> last_step_time;      // when it was observed (unix seconds)
  double idle_seconds = 0;                   // now - last progress (or - start when starting)
  double threshold_seconds = 0;              // the stall threshold in force now
  std::optional<double> median_interval;     // seconds per step
  std::optional<double> p99_interval;        // between progress observations (the stall bound's)
  std::optional<double> last_activity_time;  // a forward move below the highest step
  bool checkpoint_grace = false;             // the threshold includes checkpoint grace
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
  // A progress line's own timing, before the poll's OnStep: the step time
  // it states (or its stamps give) and the gap since the previous stamped
  // progress line (at step `previous_step`). Where lines carry these, they
  // replace the poll's arrival times, which a backlog bunches together.
  void OnLineTiming(int64_t step, std::optional<double> step_seconds,
                    std::optional<double> stamp_gap, std::optional<int64_t> previous_step);
  // The job's rhythm as learned before its first step was followed (a
  // learned progress line's period): the bound until gaps are measured.
  void SetRhythmHint(double seconds) { rhythm_hint_ = seconds; }
  // The job's position moved forward without a new step (a validation bar,
  // a replay after a restart): it is live, and its rhythm counts.
  void OnActivity(double observed_at);
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
  std::optional<int64_t> last_step() const { return last_step_; }

  std::optional<double> longest_checkpoint_pause() const { return longest_checkpoint_pause_; }
  size_t interval_count() const { return intervals_.size(); }

  // Each new step and when it was observed, for the incident's chart: at
  // most kTrailPoints, thinned to every other point when full, so the whole
  // run stays drawn at a coarser grain. Not persisted: after a restart the
  // trail starts at the restored step.
  struct TrailPoint {
    double t = 0;
    int64_t step = 0;
  };
  const std::vector<TrailPoint>& trail() const { return trail_; }
  static constexpr size_t kTrailPoints = 1024;

  static constexpr size_t kWindow = 200;
  static constexpr int64_t kWarmupSteps = 5;
  static constexpr size_t kBaselineSteps = 20;
  static constexpr size_t kRecentSteps = 10;

 private:
  bool IsCheckpointStep(int64_t step) const;
  void AddStepSeconds(double seconds);
  void AddObservationGap(double seconds);
  triage::StallLimit Limit() const;  // the stall bound in force
  double LastProgressTime() const;

  StallPolicy policy_;
  double start_time_;
  std::optional<int64_t> first_step_, last_step_;
  std::optional<double> last_time_;      // of the last new step
  std::optional<double> last_observed_;  // of the last step or activity
  std::optional<double> last_activity_;
  size_t observations_ = 0;
  std::optional<int64_t> first_timed_step_;
  std::optional<double> first_observed_, longest_warmup_gap_, rhythm_hint_;
  // OnLineTiming gave this poll's step times / gaps.
  bool timed_seconds_ = false, timed_gaps_ = false;
  std::deque<double> intervals_;  // seconds per step, post-warmup, not after checkpoints
  std::deque<double> gaps_;       // between observations, post-warmup, not after checkpoints
  std::vector<double> baseline_;  // the first kBaselineSteps of them
  std::deque<double> recent_;     // the last kRecentSteps after the baseline
  std::optional<double> longest_checkpoint_pause_;
  std::optional<int64_t> checkpoint_period_;
  std::optional<int64_t> last_checkpoint_step_;
  std::vector<TrailPoint> trail_;
};

}  // namespace jobmon::monitor
