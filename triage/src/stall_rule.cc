#include "jobmon/triage/stall_rule.h"

#include <algorithm>

namespace jobmon::triage {

StallLimit StallThreshold(const StallRule& rule, const StallInputs& inputs) {
  StallLimit limit;
  double scaled = inputs.step_interval ? rule.k * *inputs.step_interval : 0;
  limit.seconds = std::max(scaled, rule.min_stall_seconds);
  limit.reason = scaled > rule.min_stall_seconds ? "k x p99 step interval"
                 : inputs.step_interval          ? "min_stall (above k x p99)"
                                                 : "min_stall (no steady steps yet)";
  if (inputs.at_checkpoint) {
    // The pause after a checkpoint step is the save, not a hang.
    double grace = inputs.longest_checkpoint_pause
                       ? rule.checkpoint_grace_factor * *inputs.longest_checkpoint_pause
                       : rule.first_checkpoint_grace_seconds;
    if (grace > limit.seconds) {
      limit.seconds = grace;
      limit.reason = inputs.longest_checkpoint_pause
                         ? "checkpoint grace (learned from earlier checkpoints)"
                         : "checkpoint grace (first checkpoint)";
    }
    limit.checkpoint_grace = true;
  }
  return limit;
}

bool IsCheckpointStep(int64_t step, std::optional<int64_t> period) {
  return period && *period > 0 && step > 0 && step % *period == 0;
}

}  // namespace jobmon::triage
