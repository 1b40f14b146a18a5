#pragma once
// The text a MaxText rank prints, as pure formatters (tested on strings).
// Formats follow docs/concepts.md (MaxText-style step lines and job summary).

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "scenario.h"

namespace jobmon::fake_trainer {

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  std::string host = "localhost";
  std::string job_id = "local";
  std::string nodelist = "localhost";
};

struct StepMetrics {
  int64_t step = 0;
  double seconds = 0;
  double tflops_per_device = 0;
  double mfu_percent = 0;
  double tokens_per_device_per_sec = 0;
  double loss = 0;
};

// The job header (rank 0): environment, NNODES, NODE_LIST, PASSTHROUGH_ARGS
// with steps= and enable_checkpointing, the MaxText config dump lines.
std::vector<std::string> HeaderLines(const Scenario& scenario, const RankInfo& rank,
                                     double start_unix_seconds);

// Every rank: which host runs which task (the task-to-host mapping the
// heartbeat checklist needs), and the JAX distributed initialisation.
std::vector<std::string> TaskLines(const RankInfo& rank);

std::string StepLine(const StepMetrics& metrics);

std::vector<std::string> JobSummaryLines(const RankInfo& rank, int64_t last_step, int64_t steps,
                                         double elapsed_seconds, int exit_code,
                                         double end_unix_seconds);

// "2026-11-22T10:00:00Z"
std::string IsoTime(double unix_seconds);

// absl-style prefix as JAX's C++ logging prints it: "E1122 10:00:01.123456 4242 file:line] ".
std::string AbslPrefix(char severity, double unix_seconds, int thread_id, const char* location);

// The coordination service (task 0) declaring `accused` dead.
std::vector<std::string> HeartbeatCoordinatorLines(const std::vector<int>& accused, double now);
// An accused task that was alive all along and learns of its own "death".
std::vector<std::string> HeartbeatAccusedLines(int task, double now);

std::vector<std::string> OomLines(int pid, double now);
std::vector<std::string> NcclTimeoutLines(const RankInfo& rank, int64_t step,
                                          double waited_seconds);

}  // namespace jobmon::fake_trainer
