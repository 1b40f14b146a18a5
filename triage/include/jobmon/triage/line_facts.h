#pragma once
// What one log line states besides a failure class: the job's header facts
// (job id, steps= and enable_checkpointing= in PASSTHROUGH_ARGS, the
// checkpoint period, NNODES=, NODE_LIST=, the restore step), which task runs
// on which host, the JAX heartbeat accusation and its timeout, the summary's
// exit status, srun's end of a task. (A framework's "training finished"
// line, Slurm's CANCELLED line and a traceback's exception line are facts
// of their wording alone: their expressions are in line_facts.cc too.)
// Each parser is pure and checks its wording itself, so it
// answers for any line. The scanner calls them only on the lines its
// Hyperscan prefilter flagged (the same wording as patterns, next to the
// parsers in line_facts.cc); the monitor calls RecogniseLine on every new
// line. Keys are taken from the line verbatim: callers sanitise what they
// quote.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {

// "Status: FAILED (exit N)" -> N.
std::optional<int> ParseFailedStatus(std::string_view line);

struct NodeExitLine {
  std::string_view host;
  int code = 0;
};
// "NODE_EXIT host=H exit=N".
std::optional<NodeExitLine> ParseNodeExit(std::string_view line);

struct PassthroughArgs {
  std::optional<int64_t> total_steps;  // "steps=N" as a whole key (not max_steps=)
  std::optional<bool> checkpointing;   // "enable_checkpointing=true|True|1"
};
// "PASSTHROUGH_ARGS=...".
std::optional<PassthroughArgs> ParsePassthroughArgs(std::string_view line);

// The run's planned total of steps where a framework prints it before the
// loop (HF Trainer's "Total optimization steps = 1,000", MaxText's "Config
// param steps: N", Megatron's "setting training iterations to N",
// torchtitan's "total steps N (warmup W)"); sources in line_facts.cc.
std::optional<int64_t> ParsePlannedTotal(std::string_view line);

// MaxText's "Config param checkpoint_period: N", N > 0.
std::optional<int64_t> ParseCheckpointPeriod(std::string_view line);
// "jax_distributed_heartbeat_timeout_seconds=S", S > 0.
std::optional<double> ParseHeartbeatTimeout(std::string_view line);
// The coordination service's "The following tasks are unhealthy (stopped
// sending heartbeats)": any of HeartbeatAccusations() (signatures.h).
bool IsHeartbeatAccusation(std::string_view line);
// "/job:jax_worker/replica:R/task:N" (the accused, listed after the accusation).
std::vector<int> ParseAccusedTasks(std::string_view line);

// "NNODES=N", "NODE_LIST=L" and "SLURM_JOB_ID=J" in the header.
std::optional<int> ParseNnodes(std::string_view line);
std::optional<std::string_view> ParseNodeList(std::string_view line);
std::optional<std::string_view> ParseHeaderJobId(std::string_view line);

struct TaskHost {
  int task = 0;
  std::string_view host;
};
// The fake trainer's "[fake-trainer] task N on host H (...)".
std::optional<TaskHost> ParseFakeTrainerTaskHost(std::string_view line);
// "jax.distributed.initialize: process_id=N num_processes=M host=H".
std::optional<TaskHost> ParseJaxTaskHost(std::string_view line);

// The task a line belongs to: the srun label, else "(task N)" in the text.
std::optional<int> TaskOf(std::string_view line);
// "[Prometheus] Started on port N".
std::optional<int> ParsePrometheusPort(std::string_view line);
// "restoring from this run's directory step N".
std::optional<int64_t> ParseRestoreStep(std::string_view line);
// "srun: error: H: task N: Killed|Segmentation fault|Aborted" -> N.
std::optional<int> ParseKilledTask(std::string_view line);
// torch.multiprocessing.spawn's word for the process that failed first
// ("-- Process N terminated with the following error:", "process N
// terminated with exit code|signal ..."): N, its index (the rank, as
// scripts pass it).
std::optional<int> ParseSpawnFailedProcess(std::string_view line);
// srun's end of one task, "srun: error: H: task N: <reason>" -> N (nullopt
// for a range, "tasks 0-3: ...").
std::optional<int> ParseTaskExit(std::string_view line);

// Everything the monitor follows a live log for, from one line.
struct LineFacts {
  std::optional<DetectedStep> step;
  bool heartbeat_accusation = false;
  std::optional<double> line_time;  // the line's own absl stamp, on an accusation
  std::optional<double> heartbeat_timeout;
  std::optional<int64_t> checkpoint_period;
  std::optional<PassthroughArgs> passthrough;
  std::optional<int64_t> restore_step;
  std::optional<std::string_view> job_id;
};
struct LineContext {
  std::optional<StepProfile> profile;  // once known, only its format is tried
  int year = 1970;                     // for absl stamps, which carry none
};
// `line` with or without its srun label.
LineFacts RecogniseLine(std::string_view line, const LineContext& context);

}  // namespace jobmon::triage
