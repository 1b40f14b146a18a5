#include "jobmon/monitor/progress_tracker.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "jobmon/triage/stall_rule.h"
#include "jobmon/triage/step_series.h"

namespace jobmon::monitor {

const char* ToString(Phase phase) {
  switch (phase) {
    case Phase::kStarting:
      return "starting";
    case Phase::kTraining:
      return "training";
    case Phase::kStalled:
      return "stalled";
  }
  return "unknown";
}

bool ProgressTracker::IsCheckpointStep(int64_t step) const {
  if (last_checkpoint_step_ && *last_checkpoint_step_ == step) return true;
  return triage::IsCheckpointStep(step, checkpoint_period_);
}

void ProgressTracker::AddInterval(double seconds) {
  intervals_.push_back(seconds);
  while (intervals_.size() > kWindow) intervals_.pop_front();
  if (baseline_.size() < kBaselineSteps) {
    baseline_.push_back(seconds);
    return;
  }
  recent_.push_back(seconds);
  while (recent_.size() > kRecentSteps) recent_.pop_front();
}

bool ProgressTracker::OnStep(int64_t step, double observed_at, std::optional<double> step_seconds) {
  if (last_step_ && step <= *last_step_) return false;
  if (!first_step_) first_step_ = step;
  if (last_step_ && last_time_) {
    double gap = observed_at - *last_time_;
    int64_t steps = step - *last_step_;
    if (gap >= 0 && steps > 0) {
      if (IsCheckpointStep(*last_step_) || (steps == 1 && IsCheckpointStep(step))) {
        // The pause around a checkpoint step is the checkpoint's, not a
        // training step's: it teaches the grace, not the p99.
        longest_checkpoint_pause_ =
            std::max({longest_checkpoint_pause_.value_or(0), gap, step_seconds.value_or(0)});
      } else if (*last_step_ - *first_step_ >= kWarmupSteps) {
        if (step_seconds && *step_seconds >= 0 && steps == 1) {
          AddInterval(*step_seconds);
        } else {
          double per_step = gap / static_cast<double>(steps);
          for (int64_t i = 0; i < std::min<int64_t>(steps, 16); ++i) AddInterval(per_step);
        }
      }
    }
  }
  last_step_ = step;
  last_time_ = observed_at;
  return true;
}

void ProgressTracker::Restore(int64_t last_step, double last_step_time,
                              std::optional<double> median, std::optional<double> p99,
                              std::optional<int64_t> checkpoint_period,
                              std::optional<double> longest_checkpoint_pause,
                              std::optional<double> baseline_interval,
                              std::optional<double> recent_interval) {
  first_step_ = last_step - kWarmupSteps;  // past warmup: new intervals count
  last_step_ = last_step;
  last_time_ = last_step_time;
  intervals_.clear();
  // A window whose median and p99 are the persisted ones.
  if (median) intervals_.assign(99, *median);
  if (p99) intervals_.push_back(*p99);
  baseline_.clear();
  recent_.clear();
  if (baseline_interval) baseline_.assign(kBaselineSteps, *baseline_interval);
  if (recent_interval) recent_.assign(kRecentSteps, *recent_interval);
  checkpoint_period_ = checkpoint_period;
  longest_checkpoint_pause_ = longest_checkpoint_pause;
}

ProgressState ProgressTracker::Evaluate(double now) const {
  ProgressState state;
  state.last_step = last_step_;
  state.last_step_time = last_time_;
  if (!last_step_) {
    state.idle_seconds = std::max(0.0, now - start_time_);
    state.threshold_seconds = policy_.startup_grace_seconds;
    state.threshold_reason = "startup grace (no step yet)";
    state.phase = state.idle_seconds > state.threshold_seconds ? Phase::kStalled : Phase::kStarting;
    return state;
  }
  state.idle_seconds = std::max(0.0, now - *last_time_);
  std::vector<double> values(intervals_.begin(), intervals_.end());
  if (!values.empty()) {
    state.median_interval = triage::Percentile(values, 0.5);
    state.p99_interval = triage::Percentile(values, 0.99);
  }
  triage::StallLimit limit = triage::StallThreshold(
      policy_.rule(),
      {state.p99_interval, IsCheckpointStep(*last_step_), longest_checkpoint_pause_});
  state.threshold_seconds = limit.seconds;
  state.threshold_reason = limit.reason;
  state.checkpoint_grace = limit.checkpoint_grace;
  if (state.median_interval && *state.median_interval > 0) {
    state.expected_step_now =
        *last_step_ + static_cast<int64_t>(std::floor(state.idle_seconds / *state.median_interval));
  }
  if (baseline_.size() == kBaselineSteps) {
    state.baseline_interval = triage::Percentile(baseline_, 0.5);
    if (recent_.size() == kRecentSteps) {
      state.recent_interval =
          triage::Percentile(std::vector<double>(recent_.begin(), recent_.end()), 0.5);
      if (*state.baseline_interval > 0) {
        state.slowdown = *state.recent_interval / *state.baseline_interval;
      }
    }
  }
  state.phase = state.idle_seconds > state.threshold_seconds ? Phase::kStalled : Phase::kTraining;
  return state;
}

}  // namespace jobmon::monitor
