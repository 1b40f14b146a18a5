#include "jobmon/triage/step_filter.h"

#include <algorithm>

#include "jobmon/triage/progress_template.h"

namespace jobmon::triage {
namespace {

// One template, as the progress learner defines it (progress_template.h).
bool OneTemplate(std::string_view a, std::string_view b) {
  const auto first = MaskLine(a), second = MaskLine(b);
  return first && second && first->shape == second->shape;
}

}  // namespace

bool StepFilter::Globalize(StepSample& sample) {
  const int64_t raw = sample.step;
  int64_t global = 0;
  if (sample.epoch) {
    const int64_t epoch = *sample.epoch;
    if (raw == 0) counter_base_ = 0;  // the loop prints its counter from 0
    if (sample.total_steps) epoch_steps_ = sample.total_steps;
    if (!last_epoch_) epoch_base_ = (epoch == 1 || (sample.epochs && epoch >= 1)) ? 1 : 0;
    if (!last_epoch_ || epoch != *last_epoch_) {
      const int64_t seen = max_in_epoch_ - counter_base_ + 1;  // steps of the epoch that ended
      if (last_epoch_ && epoch == *last_epoch_ + 1 && !epoch_steps_ && seen > 0)
        epoch_steps_ = seen;
      int64_t offset = 0;
      if (epoch_steps_ && !__builtin_mul_overflow(std::max<int64_t>(0, epoch - epoch_base_),
                                                  *epoch_steps_, &offset)) {
        epoch_offset_ = offset;
      } else if (last_epoch_ && epoch > *last_epoch_ && seen > 0) {
        epoch_offset_ += seen;
      } else if (last_epoch_) {
        epoch_offset_ = 0;  // back to an earlier epoch with nothing to place it by
      }
      last_epoch_ = epoch;
      max_in_epoch_ = -1;
    }
    max_in_epoch_ = std::max(max_in_epoch_, raw);
    if (__builtin_add_overflow(epoch_offset_, std::max<int64_t>(0, raw - counter_base_), &global))
      return false;
    // The printed total is the epoch's; the run's only with the epochs planned.
    sample.total_steps.reset();
    int64_t run_total = 0;
    if (sample.epochs && epoch_steps_ &&
        !__builtin_mul_overflow(*sample.epochs, *epoch_steps_, &run_total)) {
      sample.total_steps = run_total;
    }
  } else {
    if (sample.total_steps && raw == *sample.total_steps) one_based_ = true;  // "30 of 30"
    if (last_raw_ && raw < *last_raw_ && sample.total_steps &&
        *last_raw_ >= *sample.total_steps - 1) {
      // A counter that restarts after reaching its total: the next epoch's.
      epoch_offset_ += *sample.total_steps;
      epoch_steps_ = *sample.total_steps;
    }
    last_raw_ = raw;
    if (__builtin_add_overflow(epoch_offset_, std::max<int64_t>(0, raw - (one_based_ ? 1 : 0)),
                               &global))
      return false;
    if (epoch_steps_) sample.total_steps.reset();  // the bar's total is an epoch's
  }
  sample.step = global;
  const bool forward = !previous_global_ || global > *previous_global_;
  previous_global_ = global;
  return forward;
}

std::span<const StepFilter::Accepted> StepFilter::Offer(StepProfile profile, StepSample sample,
                                                        uint64_t line, std::string_view text) {
  ready_.clear();
  // Globalised where it is kept: a sample globalised apart and then copied
  // in stalled on store forwarding at every lead rank's step line (perf
  // annotate).
  auto emit = [&](const StepSample& s, uint64_t at, std::string_view what) {
    Accepted& out = ready_.emplace_back(Accepted{s, at, what, false});
    const bool forward = Globalize(out.sample);
    out.activity = forward && max_global_ && out.sample.step <= *max_global_;
    if (!max_global_ || out.sample.step > *max_global_) max_global_ = out.sample.step;
  };
  if (profile == StepProfile::kHuggingFace && sample.total_steps) {
    if (!tqdm_total_) tqdm_total_ = sample.total_steps;
    if (*tqdm_total_ != *sample.total_steps) {
      // Another bar (an evaluation's, an outer epoch bar's): no training
      // step, but the job is busy while it moves forward.
      std::pair<int64_t, int64_t> position{sample.step, *sample.total_steps};
      bool moved = !other_bar_ || position.second != other_bar_->second ||
                   position.first > other_bar_->first;
      other_bar_ = position;
      if (!moved || !max_global_) return {};
      sample.step = *max_global_;
      ready_.push_back({sample, line, text, true});
      return ready_;
    }
  }
  if (profile == StepProfile::kLearned) {
    // A learned counter whose first value is 1 counts from 1, as a plain
    // loop's does (the generic profile's offset below).
    if (!learned_offset_) learned_offset_ = sample.step == 1 && !sample.epoch ? 1 : 0;
    sample.step -= *learned_offset_;
  }
  if (profile != StepProfile::kGeneric) {
    emit(sample, line, text);
    return ready_;
  }
  if (generic_confirmed_) {
    sample.step -= generic_offset_;
    emit(sample, line, text);
    return ready_;
  }
  // Increasing in position: a counter within an epoch may restart when the
  // epoch moves on.
  auto before = [](const StepSample& a, const StepSample& b) {
    if (a.epoch && b.epoch && *a.epoch != *b.epoch) return *a.epoch < *b.epoch;
    return a.step < b.step;
  };
  if (!pending_.empty() && !before(pending_.back().sample, sample)) {
    pending_.clear();  // not increasing: start over from here
  }
  pending_.push_back({sample, line, std::string(text.substr(0, 64))});
  const bool one_template = pending_.size() == 2 && OneTemplate(pending_[0].text, pending_[1].text);
  if (pending_.size() < static_cast<size_t>(kGenericMinSamples) && !one_template) return {};
  generic_confirmed_ = true;
  // A loop counting from 1 (with no epoch, which places the counter itself).
  generic_offset_ = pending_.front().sample.step == 1 && !pending_.front().sample.epoch ? 1 : 0;
  released_ = std::move(pending_);
  pending_.clear();
  for (size_t i = 0; i < released_.size(); ++i) {
    Held& held = released_[i];
    held.sample.step -= generic_offset_;
    bool current = i + 1 == released_.size();
    emit(held.sample, held.line, current ? text : std::string_view(held.text));
  }
  return ready_;
}

int64_t StepFilter::printed_offset(StepProfile profile) const {
  // Globalize's own shift: a position's counter from 1 ("epoch 1/1 step
  // 1/40"), a counter up to its total ("40 of 40"); then the profile's.
  const int64_t position = last_epoch_ ? counter_base_ : one_based_ ? 1 : 0;
  switch (profile) {
    case StepProfile::kGeneric:
      return position + generic_offset_;
    case StepProfile::kLearned:
      return position + learned_offset_.value_or(0);
    // Their parsers keep the count done less one (step_lines.cc: Megatron's
    // iteration, a bar's "60/400", DeepSpeed's steps); Lightning's with an
    // epoch field leaves the shift to the position.
    case StepProfile::kMegatron:
    case StepProfile::kHuggingFace:
    case StepProfile::kDeepSpeed:
      return position + 1;
    case StepProfile::kLightning:
      return last_epoch_ ? position : position + 1;
    default:
      return position;
  }
}

void StepFilter::RestoreGeneric(int64_t offset) {
  generic_confirmed_ = true;
  generic_offset_ = offset;
  pending_.clear();
}

}  // namespace jobmon::triage
