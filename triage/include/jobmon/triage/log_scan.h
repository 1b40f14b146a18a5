#pragma once
// One streaming pass over a job log: every signature, harmless pattern and
// fact pattern in a single Hyperscan database, matched over line-aligned
// chunks of a fixed-size buffer. What is kept is bounded whatever the
// file's size: counts, first/last occurrences, a few evidence lines per
// class, the head and tail, and O(window) step statistics.

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/triage/rank_progress.h"
#include "jobmon/triage/runtime.h"
#include "jobmon/triage/signatures.h"
#include "jobmon/triage/step_lines.h"
#include "jobmon/triage/step_series.h"

namespace jobmon::triage {

inline constexpr size_t kEvidenceChars = 400;  // longer lines are cut in reports
inline constexpr size_t kEvidencePerClass = 3;
inline constexpr size_t kHeadLines = 80;  // reference step 2
inline constexpr size_t kTailLines = 200;

struct LineRef {
  uint64_t line = 0;  // 1-based
  std::string text;   // verbatim, cut at kEvidenceChars
};

struct ClassHits {
  uint64_t count = 0;
  LineRef first;
  LineRef last;
  std::vector<LineRef> examples;  // first kEvidencePerClass
  // First line per weight (signatures.h Weight): what the primary rests on.
  std::optional<uint64_t> first_root, first_generic, first_consequence;
  // Each profile's step lines counted when those first lines were read:
  // the step lines after a failure tell whether training went on after it.
  using StepCounts = std::array<uint64_t, kStepProfileCount>;
  StepCounts steps_at_root{}, steps_at_generic{}, steps_at_consequence{};
  // The last line per weight and the step lines counted then: a class
  // survived once (a caught exception) can still end the run later.
  std::optional<uint64_t> last_root, last_generic, last_consequence;
  StepCounts steps_at_last_root{}, steps_at_last_generic{}, steps_at_last_consequence{};
};

struct NodeExit {
  std::string host;
  int code = 0;
  LineRef line;
};

struct ScanFacts {
  uint64_t lines = 0;
  uint64_t bytes = 0;
  uint64_t long_lines = 0;  // lines longer than the read buffer, scanned in pieces
  // Lines that repeat the line before them, read from it rather than
  // scanned again (ScanOptions::rescan_repeated_lines).
  uint64_t repeated_lines = 0;
  bool shrank_while_reading = false;
  std::vector<LineRef> head;
  std::deque<LineRef> tail;

  // Header.
  std::optional<std::string> job_id;
  // steps=N in PASSTHROUGH_ARGS, else a framework's planned total
  // (ParsePlannedTotal), else a progress line's own total (N/M).
  std::optional<int64_t> total_steps;
  bool checkpointing = false;  // enable_checkpointing=true
  std::optional<int64_t> checkpoint_period;
  // jax_distributed_heartbeat_timeout_seconds= (for when heartbeats stopped).
  std::optional<double> heartbeat_timeout;
  std::optional<int> nnodes;
  std::optional<std::string> node_list;
  std::optional<int64_t> restore_step;  // "restoring from this run's directory step N"
  bool fresh_start_logged = false;      // "No existing checkpoints found"

  // JOB SUMMARY.
  std::optional<LineRef> summary;
  std::optional<int> exit_code;
  std::optional<LineRef> status_line;
  // The last line where a framework says training finished (HF Trainer's
  // train_runtime metrics, Lightning's "`Trainer.fit` stopped: ...").
  std::optional<LineRef> completion;
  // The last line where the program says it handled a time-limit warning
  // signal (Lightning's auto-requeue, submitit, its own SIGUSR1 handler).
  std::optional<LineRef> time_limit_signal;
  // The last line where the runtime says the program ended without its own
  // clean-up (CPython's resource tracker finding leaked semaphores): it was
  // killed, or died, rather than finished.
  std::optional<LineRef> abrupt_exit;
  // The first stack dump of every thread that no fatal error asked for
  // (faulthandler on a signal, or its watchdog): the process was alive.
  std::optional<LineRef> stack_dump;
  // The process torch.multiprocessing.spawn reports failed first (its index).
  std::optional<int> spawn_failed_process;
  // The frameworks and launchers the log names (runtime.h).
  RuntimeSet runtimes = 0;

  std::map<std::string, ClassHits> classes;  // by class id, harmless lines excluded
  std::vector<NodeExit> node_exits;          // first 4096
  // Slurm's first `*** JOB|STEP ... CANCELLED AT` banner: what follows it is
  // teardown (SIGTERM tracebacks, peers' connection errors), not a root.
  std::optional<LineRef> slurm_end;
  // The first exception line of a traceback that is no other class's.
  std::optional<LineRef> first_exception;
  // torchrun's "Root Cause (first observed failure):" blocks (one per
  // agent), each with the rank / exitcode / traceback lines that follow it;
  // the first kMaxLauncherRootCauses.
  struct LauncherRootCause {
    LineRef header;
    std::vector<LineRef> fields;
  };
  std::vector<LauncherRootCause> launcher_root_causes;
  uint64_t harmless_lines = 0;
  // By pattern id: which matched some line (what the evaluation knows a
  // log used; one flag per pattern, however long the log).
  std::vector<bool> matched_patterns;

  // Steps, one series per profile; only the lead rank's lines count
  // (rank_progress.h, LeadRank: rank 0, else the lowest that prints).
  std::array<StepSeries, kStepProfileCount> steps;
  std::array<std::optional<double>, kStepProfileCount> last_step_time;  // estimated, unix s
  // What each profile's steps were shifted by (StepFilter::printed_offset):
  // 1 for a loop that counted from 1; the report shows the printed numbers.
  std::array<int64_t, kStepProfileCount> printed_offset{};
  // The last checkpoint save the log reports in the frameworks' words
  // (phase_lines.h CheckpointSaveOf), done or stepped on after: each
  // profile's step it holds, and its line.
  std::array<std::optional<int64_t>, kStepProfileCount> step_at_last_save;
  std::optional<uint64_t> last_save_line;
  std::map<int, int64_t> last_step_by_task;  // srun -l labels, first 4096 tasks
  RankProgress rank_progress;                // every rank that printed its own steps
  // The job's own progress line when no known format was found in the
  // first kLearnLines lines (progress_template.h): its template.
  std::string learned_template;

  // Time.
  std::optional<double> first_timestamp, last_timestamp;
  // The log's own clock after each profile's last step: the first
  // timestamped line after that step's line (the step came before it) and
  // how many timestamped lines followed the step, on any line (a status or
  // heartbeat line that keeps printing while the steps have stopped).
  struct TimeAfterStep {
    uint64_t step_line = 0;
    double time = 0;
    uint64_t line = 0;
    uint64_t stamped_lines = 0;
  };
  std::array<std::optional<TimeAfterStep>, kStepProfileCount> time_after_last_step;
  std::optional<int> timestamp_year;  // for absl timestamps, which carry none

  // Heartbeat checklist material.
  std::optional<LineRef> heartbeat;
  std::set<int> accused_tasks;
  std::map<int, std::string> task_hosts;
  std::map<int, LineRef> self_death;                // accused task -> its own "death" report
  std::map<int, std::vector<LineRef>> task_errors;  // real errors per task, before the heartbeat

  // Dashboards.
  std::optional<LineRef> tunnel;
  std::optional<int> prometheus_port;
};

struct ScanOptions {
  // RE2 with named groups `step` and optional `seconds`, `ms` or `milliseconds`.
  std::string custom_step_regex;
  size_t buffer_bytes = 1 << 20;
  // Pattern ids (`jobmon triage --list-signatures` order) left out of the
  // database: the leave-one-family-out evaluation only
  // (tests/eval/leave_one_family_out.py).
  std::vector<unsigned> patterns_left_out = {};
  // The database scans a line that repeats the one before it too, instead
  // of taking that line's matches (docs/triage.md, "How it reads a log"):
  // the tests that hold both ways to the same reading.
  bool rescan_repeated_lines = false;
};

// Every expression in the scanner's database (for `jobmon triage
// --list-signatures` and the benchmark against grep).
struct ScanPattern {
  std::string kind;  // class | harmless | step | fact
  std::string name;  // class id or step profile; empty for the others
  std::string expression;
  std::string weight;  // classes: root | generic | consequence
  std::string source;  // classes: project, file, versions
};
std::vector<ScanPattern> ScanPatterns();

inline constexpr uint64_t kWholeScanFallbackBytes = uint64_t{1} << 30;

class LogScanner {
 public:
  static Expected<std::unique_ptr<LogScanner>> Create(const ScanOptions& options);
  // The scanner without options, built once per process and shared (its
  // scans are const): the daemon, every command and the tests build its
  // pattern databases once, not once per use.
  static Expected<std::shared_ptr<const LogScanner>> Default();
  ~LogScanner();
  LogScanner(const LogScanner&) = delete;
  LogScanner& operator=(const LogScanner&) = delete;

  // Streams the open file once from its current offset to EOF.
  Expected<ScanFacts> ScanFd(int fd) const;
  Expected<ScanFacts> ScanFile(const std::string& path) const;
  Expected<ScanFacts> ScanText(std::string_view text) const;  // tests
  // The file, then `more` as if the file went on with it (its lines numbered
  // after the file's): a Ray session's worker lines after the driver's log
  // (ray_logs.h).
  Expected<ScanFacts> ScanFileThenText(const std::string& path, std::string_view more) const;

  // The fast path for status alone (docs/triage.md, step 2): the header facts
  // from the first `head_bytes`, everything else from the last `tail_bytes`,
  // without reading the middle. Line numbers then count from the tail's
  // first whole line (`lines` is 0: unknown). A tail with neither a JOB
  // SUMMARY nor a timestamp cannot date the last step: then the whole file
  // is scanned, when it is at most kWholeScanFallbackBytes.
  Expected<ScanFacts> ScanHeadAndTail(const std::string& path, size_t head_bytes = 64 << 10,
                                      size_t tail_bytes = 256 << 10) const;
  // The same over a file already open (at its start; e.g. through
  // OpenUserFile as the job's user).
  Expected<ScanFacts> ScanHeadAndTail(int fd, size_t head_bytes = 64 << 10,
                                      size_t tail_bytes = 256 << 10) const;
  // The same over an open file of `size` bytes, never more than head_bytes
  // + tail_bytes and each range bounded in time (kUserReadDeadline): for a
  // log its user controls (the daemon at job end), where a sparse terabyte
  // must not be read. Without a whole-file fallback, facts only the middle
  // holds are missing.
  Expected<ScanFacts> ScanHeadAndTailBounded(int fd, uint64_t size, size_t head_bytes,
                                             size_t tail_bytes) const;

  struct Impl;

 private:
  // Head facts into the tail's: whole lines only, `size` the file's.
  Expected<ScanFacts> MergeHeadAndTail(const std::string& head, const std::string& tail,
                                       uint64_t size) const;
  explicit LogScanner(std::unique_ptr<Impl> impl);
  // The files one after another into one scan state.
  Expected<ScanFacts> ScanFds(const std::vector<int>& fds) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jobmon::triage
