#pragma once
// Which parsed step lines count as a job's training steps. The triage
// scanner and the monitor's JobProgress both feed every parsed sample
// through one StepFilter, so the same line gives the same step in both:
//  - the generic profile (a plain loop's "step N") counts only after
//    kGenericMinSamples increasing samples from task 0 or an unlabelled
//    line; the held samples are then released in order. A loop whose first
//    counter is 1 (like Megatron's iterations) is shifted to 0-based, so
//    "step 1" first is no restore from a checkpoint;
//  - tqdm bars (kHuggingFace): the training bar is the first bar with a
//    total (HF Trainer's is max_steps); a bar with another total (an
//    evaluation loop's, when it is not nested) is not a training step.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {

class StepFilter {
 public:
  struct Accepted {
    StepSample sample;
    uint64_t line = 0;      // the caller's line number or id
    std::string_view text;  // the line (a held one: its first 64 bytes)
  };

  // `sample` parsed from `text` (line `line`) by `profile`'s parser. Returns
  // the samples to record now, in line order: none while the generic
  // profile waits for confirmation or for a bar that is not training's.
  // The views stay valid until the next call.
  std::span<const Accepted> Offer(StepProfile profile, StepSample sample, uint64_t line,
                                  std::string_view text);

  bool generic_confirmed() const { return generic_confirmed_; }
  // 1 when the loop counted from 1 (its printed numbers are shifted), else 0.
  int64_t generic_offset() const { return generic_offset_; }
  // A restarted follower on a log whose loop was confirmed before.
  void RestoreGeneric(int64_t offset);

 private:
  struct Held {
    StepSample sample;
    uint64_t line;
    std::string text;
  };
  std::vector<Accepted> ready_;
  std::vector<Held> pending_, released_;  // pending: at most kGenericMinSamples
  bool generic_confirmed_ = false;
  int64_t generic_offset_ = 0;
  std::optional<int64_t> tqdm_total_;
};

}  // namespace jobmon::triage
