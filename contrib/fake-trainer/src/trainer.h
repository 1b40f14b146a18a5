#pragma once
// The run loop of one fake-trainer rank.

#include <string>

#include "log_lines.h"
#include "scenario.h"

namespace jobmon::fake_trainer {

struct TrainerOptions {
  Scenario scenario;
  RankInfo rank;
  std::string gpu_sysfs_root;           // empty: no fake GPU tree
  std::string tensorboard_dir;          // empty: no event file (rank 0 writes it)
  bool tensorboard_every_rank = false;  // the dir was per node or rank (%n, %t)
  double gpu_interval_seconds = 0.5;
  std::string sync_dir;  // empty: ranks do not wait for each other
};

// Returns the process exit code; faults that kill the rank (--die-at,
// --oom-at) do not return.
int RunTrainer(const TrainerOptions& options);

}  // namespace jobmon::fake_trainer
