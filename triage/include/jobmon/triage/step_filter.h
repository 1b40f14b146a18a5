#pragma once
// Which parsed step lines count as a job's training steps. The triage
// scanner and the monitor's JobProgress both feed every parsed sample
// through one StepFilter, so the same line gives the same step in both:
//  - the generic profile (a plain loop's "step N") counts only after
//    kGenericMinSamples increasing samples from task 0 or an unlabelled
//    line, or two that differ only in their numbers (one template: a run
//    that logged every 20th step and failed after its second such line);
//    the held samples are then released in order. A loop whose first
//    counter is 1 (like Megatron's iterations) is shifted to 0-based, so
//    "step 1" first is no restore from a checkpoint; so is a learned
//    progress line's (progress_template.h);
//  - tqdm bars (kHuggingFace): the training bar is the first bar with a
//    total (HF Trainer's is max_steps); a bar with another total (an
//    evaluation loop's, an outer epoch bar's) is not a training step, but
//    its moving forward is the job's activity;
//  - progress is a position, not one number: "epoch E step N" lines give
//    the global step E x steps-per-epoch + N (the epoch's steps printed,
//    else learned from the epoch before); a counter that restarts after
//    reaching its total (an epoch's inner bar) continues from the total;
//    one that goes back without (a restart from a checkpoint) is a replay:
//    its steps move forward again, but below the highest (`activity`).

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
    StepSample sample;      // step: the run's global step; total_steps: the run's
    uint64_t line = 0;      // the caller's line number or id
    std::string_view text;  // the line (a held one: its first 64 bytes)
    // The position moved forward but is no training step of the run: a
    // validation bar, a replay after a restart. Keeps the job live.
    bool activity = false;
  };

  // `sample` parsed from `text` (line `line`) by `profile`'s parser. Returns
  // the samples to record now, in line order: none while the generic
  // profile waits for confirmation or for a bar that is not training's.
  // The views stay valid until the next call.
  std::span<const Accepted> Offer(StepProfile profile, StepSample sample, uint64_t line,
                                  std::string_view text);

  // 1 when the loop counted from 1 (its printed numbers are shifted), else 0.
  int64_t generic_offset() const { return generic_offset_; }
  // What `profile`'s kept steps were shifted by (a loop counting from 1):
  // add it to show a step as the program printed it.
  int64_t printed_offset(StepProfile profile) const;
  // A restarted follower on a log whose loop was confirmed before.
  void RestoreGeneric(int64_t offset);

 private:
  // `sample`'s step and total as the run's; false when it did not move forward.
  bool Globalize(StepSample& sample);

  struct Held {
    StepSample sample;
    uint64_t line;
    std::string text;
  };
  std::vector<Accepted> ready_;
  std::vector<Held> pending_, released_;  // pending: at most kGenericMinSamples
  bool generic_confirmed_ = false;
  int64_t generic_offset_ = 0;
  std::optional<int64_t> learned_offset_;  // the learned profile's, from its first sample
  std::optional<int64_t> tqdm_total_;
  std::optional<std::pair<int64_t, int64_t>> other_bar_;  // last (done, total) of another bar
  // The composite position: the last raw (epoch, counter) and the global
  // step at the start of the current epoch.
  std::optional<int64_t> last_epoch_, last_raw_, epoch_steps_, max_global_, previous_global_;
  int64_t epoch_base_ = 0, counter_base_ = 1, epoch_offset_ = 0, max_in_epoch_ = -1;
  bool one_based_ = false;  // a single counter printed up to its total
};

}  // namespace jobmon::triage
