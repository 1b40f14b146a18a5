#pragma once
// The stall rule (docs/monitor.md, "Progress and incidents"), one for the monitor's
// tracker, the triage projection and `jobmon status`: no step for longer than
//   max(k x the p99 step interval, min_stall)
// is a stall; while the last step is a checkpoint step the threshold is at
// least the checkpoint's expected pause (learned from the job's earlier
// checkpoints, else a first-checkpoint grace). Pure.

#include <cstdint>
#include <optional>
#include <string>

namespace jobmon::triage {

struct StallRule {
  double k = 5.0;                               // times the p99 of recent step intervals
  double min_stall_seconds = 60;                // never call a stall sooner
  double checkpoint_grace_factor = 1.5;         // times the longest checkpoint pause seen so far
  double first_checkpoint_grace_seconds = 600;  // before any checkpoint pause was seen
};

struct StallInputs {
  std::optional<double> step_interval;  // p99 of recent intervals; nullopt: no steady steps yet
  bool at_checkpoint = false;           // the last step is a checkpoint step
  std::optional<double> longest_checkpoint_pause;
};

struct StallLimit {
  double seconds = 0;
  bool checkpoint_grace = false;  // the last step is a checkpoint step (grace considered)
  std::string reason;             // which term of the rule set `seconds`
};

StallLimit StallThreshold(const StallRule& rule, const StallInputs& inputs);

// Whether `step` saves a checkpoint under the log's checkpoint period.
bool IsCheckpointStep(int64_t step, std::optional<int64_t> period);

}  // namespace jobmon::triage
