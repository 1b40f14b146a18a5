#include "jobmon/triage/step_filter.h"

namespace jobmon::triage {

std::span<const StepFilter::Accepted> StepFilter::Offer(StepProfile profile, StepSample sample,
                                                        uint64_t line, std::string_view text) {
  ready_.clear();
  if (profile == StepProfile::kHuggingFace && sample.total_steps) {
    if (!tqdm_total_) tqdm_total_ = sample.total_steps;
    if (*tqdm_total_ != *sample.total_steps) return {};
  }
  if (profile != StepProfile::kGeneric) {
    ready_.push_back({sample, line, text});
    return ready_;
  }
  if (generic_confirmed_) {
    sample.step -= generic_offset_;
    ready_.push_back({sample, line, text});
    return ready_;
  }
  auto task = TaskLabel(text);
  if (task && *task != 0) return {};
  if (!pending_.empty() && sample.step <= pending_.back().sample.step) {
    pending_.clear();  // not increasing: start over from here
  }
  pending_.push_back({sample, line, std::string(text.substr(0, 64))});
  if (pending_.size() < static_cast<size_t>(kGenericMinSamples)) return {};
  generic_confirmed_ = true;
  generic_offset_ = pending_.front().sample.step == 1 ? 1 : 0;
  released_ = std::move(pending_);
  pending_.clear();
  for (size_t i = 0; i < released_.size(); ++i) {
    Held& held = released_[i];
    held.sample.step -= generic_offset_;
    bool current = i + 1 == released_.size();
    ready_.push_back({held.sample, held.line, current ? text : std::string_view(held.text)});
  }
  return ready_;
}

void StepFilter::RestoreGeneric(int64_t offset) {
  generic_confirmed_ = true;
  generic_offset_ = offset;
  pending_.clear();
}

}  // namespace jobmon::triage
