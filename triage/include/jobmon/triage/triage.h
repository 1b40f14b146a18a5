#pragma once
// Triage of one job log (docs/triage.md): status,
// classification with the root cause of cascades, progress projection and
// the heartbeat-timeout checklist, from the facts of one scan. Pure: time
// and the Slurm state come in through AnalysisContext.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/triage/causal_chain.h"
#include "jobmon/triage/job_status.h"
#include "jobmon/triage/kernel_log.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/signatures.h"
#include "jobmon/triage/stall_rule.h"

namespace jobmon::triage {

struct Progress {
  std::string profile;  // "maxtext", ..., or "" when no step lines
  std::optional<int64_t> first_step, last_step, total_steps;
  std::optional<uint64_t> last_step_line;
  bool restored = false;
  std::optional<int64_t> restored_from;  // checkpoint step (first_step - 1)
  uint64_t steps_this_run = 0;
  std::optional<double> percent;
  std::optional<double> steady_step_seconds, recent_median_seconds, recent_p99_seconds;
  std::optional<double> last_step_time, now;  // unix seconds
  std::optional<int64_t> expected_step_now;
  std::optional<double> seconds_since_last_step;
  std::optional<double> stall_threshold_seconds;
  bool stalled = false;
  bool checkpointing = false;
  std::optional<int64_t> checkpoint_period;
  std::optional<int64_t> last_periodic_checkpoint;  // nullopt: none
  // The log's own last checkpoint save (its step is last_periodic_checkpoint).
  std::optional<uint64_t> checkpoint_save_line;
  std::optional<int64_t> steps_lost;
  std::optional<double> seconds_lost;
  std::optional<double> eta_seconds;
  std::optional<double> tail_slowdown;  // last 10 steps over the steady state
  // Steps are kept from 0; a loop that printed from 1 is shifted by 1. The
  // report shows steps as printed (Printed), the JSON as kept.
  int64_t printed_offset = 0;
  int64_t Printed(int64_t step) const { return step + printed_offset; }
};

struct HeartbeatChecklist {
  std::string verdict;  // likely-false-positive | likely-true-positive | undetermined
  std::vector<int> accused;
  std::map<int, std::string> hosts;  // accused task -> host
  std::string host_source;           // "log" or "NODE_LIST (one task per node assumed)"
  std::vector<int> self_reported;    // accused tasks that logged their own "death"
  std::vector<int> with_earlier_errors;
  std::optional<double> step_seconds_sum, wall_seconds;
  std::vector<std::string> reasons;
  std::vector<LineRef> proof;
};

struct ClassFinding {
  std::string id;
  Category category = Category::kTraining;
  uint64_t count = 0;
  std::optional<uint64_t> first_line;
  std::vector<LineRef> evidence;
};

struct DecodedNodeExit {
  std::string host;
  int code = 0;
  std::string meaning;
  uint64_t line = 0;
};

// A kernel line given with the log (--kernel-log) and whether it is the job's.
struct KernelFinding {
  KernelEvent event;
  KernelMatch match;
};

// Where ranks print their own step lines (rank_progress.h): how many, the
// lowest ones' last steps, and which stopped first.
struct RankReport {
  struct Rank {
    std::string rank;  // ToString(RankId)
    RankProgress::Last last;
  };
  size_t seen = 0;
  std::vector<Rank> lowest;  // lowest position first, at most kShown
  std::optional<RankProgress::StoppedFirst> stopped_first;
  std::string summary;  // who stopped first, or that all stopped at one step
  static constexpr size_t kShown = 16;
};

struct TriageReport {
  std::string log_path;
  std::string job_dir;
  std::optional<std::string> job_id;
  JobStatus status = JobStatus::kUnknownDeath;
  std::string status_basis;  // what the status rests on
  std::optional<std::string> slurm_state;
  std::optional<std::string> slurm_exit_code;  // "status:signal"
  std::string primary;                         // class id, or "none"
  std::string stage;
  std::string what_happened;
  std::vector<ClassFinding> classes;  // every class found, priority order
  // The failure events and which explains which (causal_chain.h): the
  // primary rests on it; `jobmon triage --explain` prints it.
  CausalChain chain;
  std::vector<LineRef> evidence;
  Progress progress;
  std::optional<HeartbeatChecklist> heartbeat;
  std::optional<RankReport> ranks;  // two or more ranks printed steps
  // When the job failed, for a TSDB's time window (docs/diagnose.md step
  // 4): the primary's first line's own timestamp, else the log's last
  // timestamp; nullopt without a failure or without timestamps.
  std::optional<double> failure_time;
  std::optional<double> heartbeat_timeout_seconds;  // jax_distributed_heartbeat_timeout_seconds=
  std::vector<DecodedNodeExit> node_exits;
  std::vector<KernelFinding> kernel;  // every kernel event given, matched or not
  std::vector<std::string> findings;
  std::optional<std::string> tunnel_command;
  std::optional<std::string> head_node;
  std::optional<int> prometheus_port;
  std::vector<std::string> next_steps;
  std::vector<std::string> runtimes;  // frameworks and launchers the log names (runtime.h)
  uint64_t lines = 0, bytes = 0, harmless_lines = 0, long_lines = 0;
  std::vector<std::string> warnings;
  // Ids of the patterns that matched a line (`--list-signatures` order).
  std::vector<unsigned> matched_patterns;
};

struct AnalysisContext {
  std::optional<double> now;               // default: the log's end for ended jobs, else the clock
  std::optional<std::string> slurm_state;  // "RUNNING", "COMPLETED", ...; nullopt: unknown
  std::optional<SlurmExitCode> slurm_exit_code;  // Slurm's ExitCode; nullopt: unknown
  // The log file's mtime (unix s), for "is it still advancing"; used only
  // when `now` is the clock (a given --now is another time than the file's).
  std::optional<double> log_mtime;
  std::optional<StepProfile> profile;  // default: the profile with the most step lines
  // The one stall rule's (stall_rule.h): no step for max(factor * p99, min)
  // seconds is stalled; its defaults are the monitor's.
  double stall_min_seconds = StallRule{}.min_stall_seconds;
  double stall_factor = StallRule{}.k;
  double wall_clock_now = 0;  // the clock, for live jobs (0: read it)
  // A follower's own view of a live job (the monitor): when it read the
  // last step line and the stall threshold it judges by. They date steps
  // whose lines carry no time, so its triage agrees with its own verdict.
  std::optional<double> last_step_seen_at;
  std::optional<double> stall_threshold_seconds;
  // Kernel evidence (dmesg / journalctl -k text given with the log, parsed
  // by ParseKernelLog) and the job's id when known outside the log, for
  // matching it by the job's memory cgroup.
  std::vector<KernelEvent> kernel_events;
  std::optional<std::string> job_id;
  // The causal rules left out of the reading (causal_chain.h): evaluation only.
  RulesLeftOut rules_left_out;
};

TriageReport Analyze(const ScanFacts& facts, const AnalysisContext& context);

std::string DecodeExitCode(int code);

// "45s", "12m", "3.5h", "2.1d": durations in reports.
std::string FormatDuration(double seconds);

}  // namespace jobmon::triage
