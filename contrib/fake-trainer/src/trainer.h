#pragma once
// The run loop of one fake-trainer rank.

#include <string>
#include <vector>

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
  // The tree's GPUs this rank drives (its job's, on a node shared with
  // another job that drives the others); empty: all of them.
  std::vector<int> gpu_ids;
  std::string sync_dir;  // empty: ranks do not wait for each other
};

// Returns the process exit code; faults that kill the rank (--die-at,
// --oom-at) do not return.
int RunTrainer(const TrainerOptions& options);

}  // namespace jobmon::fake_trainer
