#pragma once
// The stall rule (docs/monitor.md, "Progress and incidents"), one for the
// monitor's tracker, the triage projection and `jobmon status`, with one set
// of defaults and one configuration table (`[stall]` in jobmon.toml): no
// progress for longer than
//   max(k x the p99 step time, min_stall) + the job's logging period
// (or max(k x the p99 gap between progress lines, min_stall) where the lines
// state no step time) is a stall. While the last step is a checkpoint step,
// or the job announced a phase (evaluation, checkpoint save or load, a data
// loader's restart), the bound is at least that phase's expected length:
// learned from the job's own earlier phases of that kind, else a generous
// first-phase grace. A phase that never ends is still a stall. Pure.

#include <cstdint>
#include <optional>
#include <string>

namespace jobmon::triage {

struct StallRule {
  double k = 5.0;                               // times the p99 step time (or gap)
  double min_stall_seconds = 60;                // never call a stall sooner
  double startup_grace_seconds = 1800;          // no first step yet (compile, data loading)
  double checkpoint_grace_factor = 1.5;         // times the longest checkpoint pause seen so far
  double first_checkpoint_grace_seconds = 600;  // before any checkpoint pause was seen
  double phase_grace_factor = 1.5;              // times the longest earlier phase of its kind
  double first_phase_grace_seconds = 900;       // the first phase of a kind
};

// What a job announced it is doing between steps (phase_lines.h).
enum class PhaseKind { kEvaluation, kCheckpointSave, kCheckpointLoad, kDataLoader };
inline constexpr int kPhaseKindCount = 4;
const char* ToString(PhaseKind kind);

struct StallInputs {
  std::optional<double> step_interval;  // p99 rhythm; nullopt: no steady steps yet
  bool at_checkpoint = false;           // the last step is a checkpoint step
  std::optional<double> longest_checkpoint_pause;
  // Where the progress lines state their own step time: the bound is
  // k x its p99 (step_interval) plus one logging period, the p99 gap
  // between progress lines, which output delivered in bursts also stretches.
  std::optional<double> logging_period;
  // An announced phase in force: since how long (seconds before the last
  // progress it started, 0 when it started at it) and what was learned.
  std::optional<PhaseKind> phase;
  double phase_started_after_progress = 0;
  std::optional<double> longest_phase;  // of this kind, in this job
};

struct StallLimit {
  double seconds = 0;
  bool checkpoint_grace = false;  // the last step is a checkpoint step (grace considered)
  bool phase_grace = false;       // an announced phase set the bound
  std::string reason;             // which term of the rule set `seconds`
};

StallLimit StallThreshold(const StallRule& rule, const StallInputs& inputs);

// Whether `step` saves a checkpoint under the log's checkpoint period.
bool IsCheckpointStep(int64_t step, std::optional<int64_t> period);

}  // namespace jobmon::triage
