#pragma once
// One job's progress from its log: follows the file, reads each new line
// with the triage library's recogniser (step lines: the first profile whose
// sample the scanner's StepFilter lets count is kept; the checkpoint period;
// the heartbeat accusation and timeout), keeps a bounded tail for evidence,
// and feeds the ProgressTracker once per poll (lines that arrive together
// are one observation, so their step time is never 0). When no known
// format matches, the job's own progress line is learned
// (triage/progress_template.h): a counter template, else the periodic part
// of its output as its pulse; a known format seen later takes over. Its
// state round-trips through ProgressRecord, so a restarted daemon continues
// where it stopped.

#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/monitor/log_follower.h"
#include "jobmon/monitor/progress_tracker.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/progress_template.h"
#include "jobmon/triage/rank_progress.h"
#include "jobmon/triage/step_filter.h"
#include "jobmon/triage/step_lines.h"

namespace jobmon::monitor {

class JobProgress {
 public:
  JobProgress(uint32_t job_id, std::string log_path, triage::StallRule rule, double job_start_time,
              SlowdownRule slowdown = {});

  // Reads what the log gained since the last poll; every new step counts as
  // observed at `now`. A failed read, or one that did not reach the log's
  // end, leaves the tracker blind (nothing judged) until a read does.
  Expected<void> Poll(double now);
  // The job's user, as whom the log is read.
  void SetUser(const JobUser& user) { follower_.set_user(user); }

  ProgressState Evaluate(double now) const { return tracker_.Evaluate(now); }
  // When the first step of this run was observed (the start of the
  // training baseline); nullopt before it, or after a restart.
  std::optional<double> first_step_time() const { return first_step_time_; }
  // A JAX coordination-service heartbeat accusation, when it was read.
  std::optional<double> heartbeat_seen_at() const { return heartbeat_seen_at_; }
  // When the job last said a checkpoint was saved (triage/phase_lines.h
  // CheckpointSaveOf: done), as read: what recovery waits for after its signal.
  std::optional<double> checkpoint_saved_at() const { return checkpoint_saved_at_; }
  // jax_distributed_heartbeat_timeout_seconds from the log's header.
  std::optional<double> heartbeat_timeout() const { return heartbeat_timeout_; }
  const std::deque<std::string>& tail() const { return tail_; }
  // Where ranks print their own step lines: each one's last, by arrival
  // (since this daemon started following the log).
  const triage::RankProgress& ranks() const { return ranks_; }
  const std::vector<ProgressTracker::TrailPoint>& trail() const { return tracker_.trail(); }
  std::optional<triage::StepProfile> profile() const { return profile_; }
  // What is followed, for people: "megatron", "learned: [trn] ep=# b=# ...".
  std::string progress_source() const;

  // A step seen elsewhere than in the log: the job's TensorBoard `tb_step`,
  // as its exporters serve it. Counts only while the log has no step lines
  // of a known profile (the log is the finer source when it has them).
  void OnTensorBoardStep(int64_t step, double observed_at);
  // Whether a TensorBoard step would count (the feeds ask for it only then).
  bool TakesTensorBoardSteps() const { return !profile_; }

  ProgressRecord Snapshot(double now) const;
  void Restore(const ProgressRecord& record);

  static constexpr size_t kTailLines = 50;
  static constexpr size_t kMaxBytesPerPoll = 4 << 20;

 private:
  void OnLine(const std::string& line, double now);
  void OnStep(const triage::StepSample& sample, bool activity);
  void OnLearnedLine(const std::string& line, double now);
  void FlushPoll(double now);

  uint32_t job_id_;
  triage::StallRule rule_;
  SlowdownRule slowdown_;
  double start_time_;
  LogFollower follower_;
  ProgressTracker tracker_;
  triage::LeadRank lead_;  // whose step lines are the progress
  std::optional<triage::StepProfile> profile_;
  triage::StepFilter filter_;
  uint64_t line_number_ = 0;  // of the step lines, for the filter
  // A generic profile whose loop counted from 1, as ProgressRecord keeps it.
  static constexpr std::string_view kFromOneSuffix = "+1";
  struct StampedStep {
    int64_t step;
    double at;  // the line's own time
  };
  std::optional<StampedStep> last_stamp_;
  // What this poll's lines moved: the highest new step (its line's step
  // time), or only activity.
  struct PollProgress {
    std::optional<int64_t> step;
    std::optional<double> seconds;
    bool activity = false;
  };
  PollProgress poll_;
  std::deque<std::pair<uint64_t, double>> arrivals_;  // the last step lines' numbers and polls
  triage::TemplateLearner learner_;
  triage::RankProgress ranks_;
  uint64_t rank_lines_ = 0;
  // While a learned line is followed: known formats wait here until they count.
  triage::StepFilter known_filter_;
  uint64_t known_line_number_ = 0;
  int64_t pulse_base_ = 0;  // a restored pulse's count continues from here
  std::deque<std::string> tail_;
  std::optional<double> first_step_time_, heartbeat_seen_at_, heartbeat_timeout_;
  std::optional<double> checkpoint_saved_at_;
  int year_ = 1970;  // of the poll's clock
};

}  // namespace jobmon::monitor
