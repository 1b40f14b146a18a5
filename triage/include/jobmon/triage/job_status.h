#pragma once
// A job's status from the signals real jobs give, as one pure decision
// (docs/concepts.md, "Job status"): Slurm's state and exit code, the log's
// JOB SUMMARY, its failure and completion evidence, its step progress and
// whether it still advances. The statuses, their exit codes and their
// severity order live here and nowhere else.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

enum class JobStatus {
  kCompleted,
  kFailed,
  kCancelled,
  kRunning,
  kHanging,
  kUnknownDeath,  // ended, and nothing says how (positive evidence of an abrupt end)
  kUnknown,       // the log stopped without a reason and no Slurm state says whether it lives
};
const char* ToString(JobStatus status);
// Documented exit codes of `jobmon triage` (README, docs/triage-json.md):
// 0 completed, 3 running, 4 hanging, 5 failed, 6 cancelled, 7 unknown-death,
// 8 unknown; 2 is a usage or input error.
int ExitCodeFor(JobStatus status);
// "Worst first" for `--all`: hanging, unknown-death, unknown, failed,
// cancelled, running, completed.
int Severity(JobStatus status);

// Slurm's job states (squeue/scontrol JobState), grouped by what they say
// about the end. States Slurm adds later are kUnrecognised: then the log
// alone decides.
enum class SlurmState {
  kAlive,  // RUNNING, PENDING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED, ...
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kOutOfMemory,
  kPreempted,
  kBootFail,
  kDeadline,
  kUnrecognised,
};
// "CANCELLED by 1000" (sacct) and "CANCELLED+" count as CANCELLED.
SlurmState ClassifySlurmState(std::string_view state);

// Slurm's ExitCode "status:signal" (scontrol, sacct; squeue --json's wait
// status converted by ParseSqueueJson). nullopt when not that shape.
struct SlurmExitCode {
  int status = 0;
  int signal = 0;
};
std::optional<SlurmExitCode> ParseSlurmExitCode(std::string_view text);

struct SlurmView {
  std::string state;                       // as Slurm spells it
  std::optional<SlurmExitCode> exit_code;  // nullopt: not known
};

struct StatusInputs {
  std::optional<SlurmView> slurm;  // nullopt: Slurm's view unavailable
  // The launcher's JOB SUMMARY exit code, when the log has one.
  std::optional<int> summary_exit;
  // The log's root failure (a class id, "" for none) and whether steps were
  // still recorded after its first line (then it did not end the job).
  std::string failure_class;
  bool steps_after_failure = false;
  // A kernel OOM kill matched to the job and taken as the root of its end
  // (`--kernel-log`): the killed task, "python3 (pid 4242)". The basis names
  // it, and the log's own failure (the SIGKILL) as its consequence; the
  // status is decided as without it. "" for none.
  std::string kernel_oom_kill;
  // The log says training finished: the last planned step reached, or a
  // framework's own completion summary. The text says which, for the basis.
  std::string completion;
  // Step progress: recognised step lines, and whether they stopped for
  // longer than the job's own step time allows.
  bool has_steps = false;
  bool steps_stalled = false;
  bool stopped_short = false;  // the planned total is known and not reached
  // The program's own word that it handled a time-limit warning signal
  // (checkpoint, then a clean exit short of the plan), for the basis; empty
  // when it said none.
  std::string time_limit_signal;
  // The runtime's word after the last step that the program ended without
  // its clean-up (killed or died, not finished), for the basis; "" for none.
  std::string abrupt_exit;
  std::optional<double> seconds_since_last_step;
  // Seconds since the log last changed (its mtime or its last line's own
  // time, whichever is later), and how long a silence still counts as
  // advancing. nullopt: unknown (a log read at another time than now).
  std::optional<double> seconds_silent;
  double advancing_within_seconds = 120;
};

struct StatusDecision {
  JobStatus status = JobStatus::kUnknown;
  std::string basis;  // what the status rests on, for the report
  // The class Slurm's view implies (node-fail for NODE_FAIL, ...), used as
  // the primary only when the log names no cause of its own; "" for none.
  std::string implied_class;
  // The log has no recognised progress: say so rather than "advancing".
  bool progress_unrecognised = false;
  std::vector<std::string> findings;
};

StatusDecision DecideJobStatus(const StatusInputs& in);

}  // namespace jobmon::triage
