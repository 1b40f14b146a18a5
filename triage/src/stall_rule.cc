#include "jobmon/triage/stall_rule.h"

#include <fmt/format.h>

#include <algorithm>

namespace jobmon::triage {

const char* ToString(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kEvaluation:
      return "evaluation";
    case PhaseKind::kCheckpointSave:
      return "checkpoint save";
    case PhaseKind::kCheckpointLoad:
      return "checkpoint load";
    case PhaseKind::kDataLoader:
      return "data loader start";
  }
  return "phase";
}

StallLimit StallThreshold(const StallRule& rule, const StallInputs& inputs) {
  StallLimit limit;
  double scaled = inputs.step_interval ? rule.k * *inputs.step_interval : 0;
  limit.seconds = std::max(scaled, rule.min_stall_seconds);
  limit.reason = scaled > rule.min_stall_seconds ? "k x p99 step interval"
                 : inputs.step_interval          ? "min_stall (above k x p99)"
                                                 : "min_stall (no steady steps yet)";
  if (inputs.logging_period && *inputs.logging_period > 0) {
    limit.seconds += *inputs.logging_period;
    limit.reason += fmt::format(" + logging period {:.3g}s", *inputs.logging_period);
  }
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
  if (inputs.phase) {
    // The phase's own bound, counted from when it was announced.
    const double bound = inputs.longest_phase ? rule.phase_grace_factor * *inputs.longest_phase
                                              : rule.first_phase_grace_seconds;
    const double grace = inputs.phase_started_after_progress + bound;
    if (grace > limit.seconds) {
      limit.seconds = grace;
      limit.reason = fmt::format("in {}: {}", ToString(*inputs.phase),
                                 inputs.longest_phase ? "learned from the job's earlier ones"
                                                      : "first of its kind (first_phase_grace)");
      limit.phase_grace = true;
    }
  }
  return limit;
}

bool IsCheckpointStep(int64_t step, std::optional<int64_t> period) {
  return period && *period > 0 && step > 0 && step % *period == 0;
}

}  // namespace jobmon::triage
