#pragma once
// The shape of a host's memory over a job (docs/diagnose.md, Playbook 3
// "Interpretation"), from hw_mem_available_bytes (the exporter has no
// "used"): how much of the starting headroom went, how fast, and whether
// it came back after checkpoint saves. Pure, for unit tests.

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose::playbook {

enum class MemoryShape { kFlat, kGradualRamp, kSuddenSpike, kCheckpointSpikes };
const char* ToString(MemoryShape shape);

struct MemoryTrajectory {
  MemoryShape shape = MemoryShape::kFlat;
  double start_available = 0, min_available = 0;
  double consumed_fraction = 0;  // of the starting headroom, at the worst
  double onset = 0;              // first sample of the episode that went deepest
  double peak_time = 0;          // the lowest available memory
  bool peak_in_checkpoint = false;
  int recovered_episodes = 0;   // dips that came back
  int checkpoint_episodes = 0;  // of all dips, those starting inside a checkpoint window
};

// `spike_span`: a drop within this many seconds is sudden.
MemoryTrajectory ClassifyMemory(const Series& available, const DiagnoseContext& context,
                                double spike_span);

}  // namespace jobmon::diagnose::playbook
