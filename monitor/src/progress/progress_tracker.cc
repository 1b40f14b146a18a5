#include "jobmon/monitor/progress_tracker.h"

#include <algorithm>
#include <cmath>
#include <utility>
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
  return triage::IsCheckpointStep(step, checkpoint_period_);
}

const ProgressTracker::IntervalFigures& ProgressTracker::Intervals() const {
  if (!interval_figures_) {
    IntervalFigures f;
    if (!intervals_.empty()) {
      std::vector<double> sorted(intervals_.begin(), intervals_.end());
      f.p50 = triage::Percentile(sorted, 0.5);
      f.p99 = triage::Percentile(std::move(sorted), 0.99);
    }
    interval_figures_ = f;
  }
  return *interval_figures_;
}

std::optional<double> ProgressTracker::GapP99() const {
  if (!gap_p99_) {
    gap_p99_.emplace();
    if (!gaps_.empty())
      *gap_p99_ = triage::Percentile(std::vector<double>(gaps_.begin(), gaps_.end()), 0.99);
  }
  return *gap_p99_;
}

const ProgressTracker::SlowdownFigures& ProgressTracker::Slowdown() const {
  if (!slowdown_figures_) slowdown_figures_ = ComputeSlowdown();
  return *slowdown_figures_;
}

void ProgressTracker::AddStepSeconds(double seconds, double at) {
  interval_figures_.reset();
  slowdown_figures_.reset();
  intervals_.push_back(seconds);
  while (intervals_.size() > kWindow) intervals_.pop_front();
  if (!baseline_closed_) {
    baseline_.push_back(seconds);
    baseline_seconds_ += seconds;
    // The early steady state spans a window of its own, as the recent one
    // does: twenty steps of a noisy node are no baseline.
    baseline_closed_ = (baseline_.size() >= static_cast<size_t>(slowdown_.min_steps) &&
                        baseline_seconds_ >= slowdown_.window_seconds) ||
                       baseline_.size() >= kMaxBaselineSteps;
    return;
  }
  recent_.push_back({at, seconds});
  while (!recent_.empty() && recent_.front().at < at - slowdown_.window_seconds)
    recent_.pop_front();
  while (recent_.size() > kMaxBaselineSteps) recent_.pop_front();
}

triage::StallLimit ProgressTracker::Limit() const {
  // The rhythm: the step time the lines state (plus one logging period:
  // the p99 gap between progress lines), else that gap alone. Before it is
  // known, the longest gap of the warmup, a learned line's period, else the
  // wait for the first progress stand for it.
  triage::StallInputs in;
  const std::optional<double> gap = GapP99();
  // The stated step time sets the bound only once the gaps between lines
  // are known well enough to be the logging period: until then a gap not
  // yet seen (a bar that reaches the log only at an epoch's end) would be
  // a false hang, and k x the gaps keeps the margin.
  if (stated_step_times_ && !intervals_.empty() && gap && gaps_.size() >= kMinGapsForStatedRhythm) {
    in.step_interval = Intervals().p99;
    in.logging_period = gap;
  } else {
    in.step_interval = gap;
  }
  if (!in.step_interval && longest_warmup_gap_) in.step_interval = longest_warmup_gap_;
  if (!in.step_interval && rhythm_hint_) in.step_interval = rhythm_hint_;
  if (!in.step_interval && first_observed_ && *first_observed_ > start_time_)
    in.step_interval =
        std::min(*first_observed_ - start_time_, rule_.startup_grace_seconds / rule_.k);
  in.at_checkpoint = last_step_ && IsCheckpointStep(*last_step_);
  in.longest_checkpoint_pause = longest_checkpoint_pause_;
  if (phase_) {
    in.phase = phase_->kind;
    in.phase_started_after_progress = std::max(0.0, phase_->since - LastProgressTime());
    in.longest_phase = longest_phase_[static_cast<size_t>(phase_->kind)];
    if (phase_->kind == triage::PhaseKind::kCheckpointSave && longest_checkpoint_pause_) {
      in.longest_phase = std::max(in.longest_phase.value_or(0), *longest_checkpoint_pause_);
    }
  }
  return triage::StallThreshold(rule_, in);
}

void ProgressTracker::AddObservationGap(double seconds) {
  // A gap that was a stall (past the bound in force) does not teach the
  // rhythm: each hang would raise the bar for the next.
  if (last_step_ && seconds > Limit().seconds) return;
  gap_p99_.reset();
  gaps_.push_back(seconds);
  while (gaps_.size() > kWindow) gaps_.pop_front();
}

double ProgressTracker::LastProgressTime() const {
  return std::max({last_time_.value_or(start_time_), last_activity_.value_or(start_time_),
                   watch_resumed_.value_or(start_time_)});
}

void ProgressTracker::OnPhase(triage::PhaseKind kind, double observed_at) {
  if (phase_ && phase_->kind == kind) return;  // the same phase, still announced
  if (phase_) ClosePhase(observed_at);
  phase_ = OpenPhase{kind, observed_at};
  phase_gap_ = true;
}

void ProgressTracker::OnPhaseEnd(double observed_at) {
  if (!phase_) return;
  ClosePhase(observed_at);
  // The time from here to the next step is training's: it teaches the rhythm.
  phase_gap_ = false;
  if (last_step_) last_activity_ = std::max(last_activity_.value_or(0), observed_at);
  last_observed_ = observed_at;
}

void ProgressTracker::ClosePhase(double at) {
  if (!phase_) return;
  auto& longest = longest_phase_[static_cast<size_t>(phase_->kind)];
  longest = std::max(longest.value_or(0), at - phase_->since);
  phase_.reset();
}

void ProgressTracker::OnBurst(double seconds) {
  if (phase_ || blind_gap_ || seconds <= 0) return;
  AddObservationGap(seconds);
}

void ProgressTracker::MarkBlind() {
  blind_ = true;
  blind_gap_ = true;
}

void ProgressTracker::OnWatched(double now) {
  if (!blind_) return;
  blind_ = false;
  watch_resumed_ = now;
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
  const double at = last_observed_.value_or(start_time_);
  if (step_seconds && *step_seconds > 0) {
    AddStepSeconds(*step_seconds, at);
    timed_seconds_ = true;
    stated_step_times_ = true;
  }
  // The gap that spans a phase or time nobody watched is neither's rhythm.
  if (stamp_gap && *stamp_gap > 0 && !phase_gap_ && !blind_gap_) {
    AddObservationGap(*stamp_gap);
    timed_gaps_ = true;
  }
}

void ProgressTracker::OnActivity(double observed_at) {
  if (!last_step_) return;  // before the first step, the startup grace stands
  if (last_observed_ && observed_at > *last_observed_ && !IsCheckpointStep(*last_step_) &&
      observations_ >= 2 && !phase_ && !blind_gap_) {
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
  // A step after a phase (an evaluation, a save) or after time nobody
  // watched ends it: its gap taught the phase, not the rhythm.
  const bool unusual_gap = phase_gap_ || blind_gap_;
  ClosePhase(observed_at);
  phase_gap_ = blind_gap_ = false;
  if (last_step_ && last_time_ && !unusual_gap) {
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
          AddStepSeconds(*step_seconds, observed_at);
          stated_step_times_ = true;
        } else if (gap > 0) {
          double per_step = gap / static_cast<double>(steps);
          for (int64_t i = 0; i < std::min<int64_t>(steps, 16); ++i)
            AddStepSeconds(per_step, observed_at);
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
                              std::optional<double> /*recent_interval*/, bool stated_step_times) {
  stated_step_times_ = stated_step_times;
  first_step_ = last_step - kWarmupSteps;  // past warmup: new intervals count
  last_step_ = last_step;
  last_time_ = last_step_time;
  last_observed_ = last_step_time;
  observations_ = 2;
  trail_ = {{last_step_time, last_step}};
  interval_figures_.reset();
  gap_p99_.reset();
  slowdown_figures_.reset();
  intervals_.clear();
  gaps_.clear();
  // Windows whose median step time and p99 gap are the persisted ones.
  if (median) intervals_.assign(100, *median);
  if (p99) gaps_.assign(100, *p99);
  baseline_.clear();
  recent_.clear();
  baseline_seconds_ = 0;
  baseline_closed_ = false;
  if (baseline_interval) {
    baseline_.assign(static_cast<size_t>(slowdown_.min_steps), *baseline_interval);
    baseline_closed_ = true;
  }
  // The recent window starts over: a slowdown is judged on a window watched.
  checkpoint_period_ = checkpoint_period;
  longest_checkpoint_pause_ = longest_checkpoint_pause;
  // Until the log was read up to date, the time since is nobody's.
  MarkBlind();
}

void ProgressTracker::EvaluateSlowdown(ProgressState& state) const {
  state.baseline_steps = baseline_.size();
  state.recent_steps = recent_.size();
  const SlowdownFigures& f = Slowdown();
  state.baseline_interval = f.baseline_interval;
  state.recent_interval = f.recent_interval;
  state.slowdown = f.slowdown;
  state.slowdown_significant = f.significant;
}

ProgressTracker::SlowdownFigures ProgressTracker::ComputeSlowdown() const {
  SlowdownFigures f;
  if (!baseline_closed_ || baseline_.empty()) return f;
  f.baseline_interval = triage::Percentile(baseline_, 0.5);
  // A window of minutes and of steps, both: a burst of slow steps after a
  // pause, or a busy minute, is not a slowdown.
  if (recent_.size() < static_cast<size_t>(slowdown_.min_steps)) return f;
  if (recent_.back().at - recent_.front().at < 0.8 * slowdown_.window_seconds) return f;
  std::vector<double> recent;
  recent.reserve(recent_.size());
  for (const TimedStep& s : recent_) recent.push_back(s.seconds);
  f.recent_interval = triage::Percentile(recent, 0.5);
  if (*f.baseline_interval <= 0) return f;
  f.slowdown = *f.recent_interval / *f.baseline_interval;
  f.significant = triage::Percentile(recent, 0.25) > triage::Percentile(baseline_, 0.75);
  return f;
}

ProgressState ProgressTracker::Evaluate(double now) const {
  ProgressState state;
  state.last_step = last_step_;
  state.last_step_time = last_time_;
  state.blind = blind_;
  if (phase_) {
    state.announced_phase = phase_->kind;
    state.phase_since = phase_->since;
  }
  if (!last_step_) {
    state.idle_seconds = std::max(0.0, now - std::max(start_time_, watch_resumed_.value_or(0)));
    state.threshold_seconds = rule_.startup_grace_seconds;
    state.threshold_reason = "startup grace (no step yet)";
    state.phase = state.idle_seconds > state.threshold_seconds && !blind_ ? Phase::kStalled
                                                                          : Phase::kStarting;
    return state;
  }
  state.last_activity_time = last_activity_;
  state.idle_seconds = std::max(0.0, now - LastProgressTime());
  state.median_interval = Intervals().p50;
  state.p99_interval = GapP99();
  triage::StallLimit limit = Limit();
  state.threshold_seconds = limit.seconds;
  state.threshold_reason = std::move(limit.reason);
  state.checkpoint_grace = limit.checkpoint_grace;
  if (state.median_interval && *state.median_interval > 0) {
    state.expected_step_now =
        *last_step_ +
        static_cast<int64_t>(std::floor((now - *last_time_) / *state.median_interval));
  }
  EvaluateSlowdown(state);
  state.phase =
      state.idle_seconds > state.threshold_seconds && !blind_ ? Phase::kStalled : Phase::kTraining;
  return state;
}

}  // namespace jobmon::monitor
