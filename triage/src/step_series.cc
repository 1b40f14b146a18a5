#include "jobmon/triage/step_series.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace jobmon::triage {

void StepSeries::Add(int64_t step, const std::optional<double>& seconds, uint64_t line,
                     bool checkpoint_step) {
  if (last_ && step <= last_->step) {
    ++repeats_;
    return;
  }
  ++count_;
  if (last_) {
    step_gaps_.push_back(static_cast<double>(step - last_->step));
    if (step_gaps_.size() > kRecentWindow) step_gaps_.pop_front();
  }
  StepPoint point{step, seconds.value_or(0), line};
  if (!first_) first_ = point;
  last_ = point;
  if (!seconds) return;
  ++timed_;
  total_seconds_ += *seconds;
  if (step - first_->step < kWarmupSteps) {
    warmup_sum_ += *seconds;
    ++warmup_count_;
    return;
  }
  steady_sum_ += *seconds;
  ++steady_count_;
  if (checkpoint_step) return;
  steady_noncheckpoint_sum_ += *seconds;
  ++steady_noncheckpoint_count_;
  recent_.push_back(*seconds);
  if (recent_.size() > kRecentWindow) recent_.pop_front();
}

double StepSeries::StepsPerLine() const {
  if (step_gaps_.empty()) return 1;
  return std::max(1.0, Percentile(std::vector<double>(step_gaps_.begin(), step_gaps_.end()), 0.5));
}

std::optional<double> StepSeries::SteadyStepSeconds() const {
  if (steady_count_ > 0) return steady_sum_ / static_cast<double>(steady_count_);
  if (warmup_count_ > 0) return warmup_sum_ / static_cast<double>(warmup_count_);
  return std::nullopt;
}

std::optional<double> StepSeries::RecentMedian() const {
  if (recent_.empty()) return std::nullopt;
  return Percentile({recent_.begin(), recent_.end()}, 0.5);
}

std::optional<double> StepSeries::RecentP99() const {
  if (recent_.empty()) return std::nullopt;
  return Percentile({recent_.begin(), recent_.end()}, 0.99);
}

std::optional<double> StepSeries::TailSlowdown() const {
  if (recent_.size() < kTgsWindow || steady_noncheckpoint_count_ < 2 * kTgsWindow) {
    return std::nullopt;
  }
  double tail = std::accumulate(recent_.end() - kTgsWindow, recent_.end(), 0.0);
  double before = (steady_noncheckpoint_sum_ - tail) /
                  static_cast<double>(steady_noncheckpoint_count_ - kTgsWindow);
  if (before <= 0) return std::nullopt;
  return (tail / static_cast<double>(kTgsWindow)) / before;
}

}  // namespace jobmon::triage
