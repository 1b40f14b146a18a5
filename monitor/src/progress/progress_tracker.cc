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

void ProgressTracker::AddStepSeconds(double seconds) {
  intervals_.push_back(seconds);
  while (intervals_.size() > kWindow) intervals_.pop_front();
  if (baseline_.size() < kBaselineSteps) {
    baseline_.push_back(seconds);
    return;
  }
  recent_.push_back(seconds);
  while (recent_.size() > kRecentSteps) recent_.pop_front();
}

triage::StallLimit ProgressTracker::Limit() const {
  // Before the job's rhythm is known, the longest gap of its warmup, a
  // learned line's period, else the wait for its first progress stand for it.
  std::optional<double> rhythm;
  if (!gaps_.empty())
    rhythm = triage::Percentile(std::vector<double>(gaps_.begin(), gaps_.end()), 0.99);
  if (!rhythm && longest_warmup_gap_) rhythm = longest_warmup_gap_;
  if (!rhythm && rhythm_hint_) rhythm = rhythm_hint_;
  if (!rhythm && first_observed_ && *first_observed_ > start_time_)
    rhythm = std::min(*first_observed_ - start_time_, policy_.startup_grace_seconds / policy_.k);
  return triage::StallThreshold(
      policy_.rule(),
      {rhythm, last_step_ && IsCheckpointStep(*last_step_), longest_checkpoint_pause_});
}

void ProgressTracker::AddObservationGap(double seconds) {
  // A gap that was a stall (past the bound in force) does not teach the
  // rhythm: each hang would raise the bar for the next.
  if (last_step_ && seconds > Limit().seconds) return;
  gaps_.push_back(seconds);
  while (gaps_.size() > kWindow) gaps_.pop_front();
}

double ProgressTracker::LastProgressTime() const {
  return std::max(last_time_.value_or(start_time_), last_activity_.value_or(start_time_));
}

void ProgressTracker::OnLineTiming(int64_t step, std::optional<double> step_seconds,
                                   std::optional<double> stamp_gap,
                                   std::optional<int64_t> previous_step) {
  if (!first_timed_step_) first_timed_step_ = step;
  if (step - *first_timed_step_ < kWarmupSteps && !(previous_step && first_step_)) return;
  const bool checkpoint = (previous_step && IsCheckpointStep(*previous_step)) ||
                          (previous_step && step == *previous_step + 1 && IsCheckpointStep(step));
  if (checkpoint) {
    longest_checkpoint_pause_ = std::max(
        {longest_checkpoint_pause_.value_or(0), stamp_gap.value_or(0), step_seconds.value_or(0)});
    timed_gaps_ = timed_gaps_ || stamp_gap.has_value();
    return;
  }
  if (step_seconds && *step_seconds > 0) {
    AddStepSeconds(*step_seconds);
    timed_seconds_ = true;
  }
  if (stamp_gap && *stamp_gap > 0) {
    AddObservationGap(*stamp_gap);
    timed_gaps_ = true;
  }
}

void ProgressTracker::OnActivity(double observed_at) {
  if (!last_step_) return;  // before the first step, the startup grace stands
  if (last_observed_ && observed_at > *last_observed_ && !IsCheckpointStep(*last_step_) &&
      observations_ >= 2) {
    AddObservationGap(observed_at - *last_observed_);
  }
  last_activity_ = observed_at;
  last_observed_ = observed_at;
  ++observations_;
}

bool ProgressTracker::OnStep(int64_t step, double observed_at, std::optional<double> step_seconds) {
  if (last_step_ && step <= *last_step_) return false;
  if (!first_step_) first_step_ = step;
  const bool timed_seconds = timed_seconds_, timed_gaps = timed_gaps_;
  timed_seconds_ = timed_gaps_ = false;
  if (last_step_ && last_time_) {
    double gap = observed_at - *last_time_;
    double since_observed = observed_at - last_observed_.value_or(*last_time_);
    int64_t steps = step - *last_step_;
    if (gap >= 0 && steps > 0) {
      if (IsCheckpointStep(*last_step_) || (steps == 1 && IsCheckpointStep(step))) {
        // The pause around a checkpoint step is the checkpoint's, not a
        // training step's: it teaches the grace, not the p99.
        longest_checkpoint_pause_ =
            std::max({longest_checkpoint_pause_.value_or(0), gap, step_seconds.value_or(0)});
      } else if (*last_step_ - *first_step_ >= kWarmupSteps || observations_ >= 2) {
        // The warmup is the first steps, or the first line of a job that
        // prints every N steps.
        if (since_observed > 0 && !timed_gaps) AddObservationGap(since_observed);
        if (timed_seconds) {
          // the lines' own step times are in already
        } else if (step_seconds && *step_seconds > 0) {
          AddStepSeconds(*step_seconds);
        } else if (gap > 0) {
          double per_step = gap / static_cast<double>(steps);
          for (int64_t i = 0; i < std::min<int64_t>(steps, 16); ++i) AddStepSeconds(per_step);
        }
      } else if (gap > 0) {
        longest_warmup_gap_ = std::max(longest_warmup_gap_.value_or(0), gap);
      }
    }
  }
  last_step_ = step;
  last_time_ = observed_at;
  last_observed_ = observed_at;
  if (!first_observed_) first_observed_ = observed_at;
  ++observations_;
  if (trail_.size() >= kTrailPoints) {
    // Every other point, the newest kept: the same span at half the grain.
    std::vector<TrailPoint> thinned;
    thinned.reserve(kTrailPoints / 2 + 1);
    for (size_t i = trail_.size() % 2; i < trail_.size(); i += 2) thinned.push_back(trail_[i]);
    trail_ = std::move(thinned);
  }
  trail_.push_back({observed_at, step});
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
  last_observed_ = last_step_time;
  observations_ = 2;
  trail_ = {{last_step_time, last_step}};
  intervals_.clear();
  gaps_.clear();
  // Windows whose median step time and p99 gap are the persisted ones.
  if (median) intervals_.assign(100, *median);
  if (p99) gaps_.assign(100, *p99);
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
  state.last_activity_time = last_activity_;
  state.idle_seconds = std::max(0.0, now - LastProgressTime());
  if (!intervals_.empty()) {
    state.median_interval =
        triage::Percentile(std::vector<double>(intervals_.begin(), intervals_.end()), 0.5);
  }
  if (!gaps_.empty()) {
    state.p99_interval = triage::Percentile(std::vector<double>(gaps_.begin(), gaps_.end()), 0.99);
  }
  triage::StallLimit limit = Limit();
  state.threshold_seconds = limit.seconds;
  state.threshold_reason = limit.reason;
  state.checkpoint_grace = limit.checkpoint_grace;
  if (state.median_interval && *state.median_interval > 0) {
    state.expected_step_now =
        *last_step_ +
        static_cast<int64_t>(std::floor((now - *last_time_) / *state.median_interval));
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
