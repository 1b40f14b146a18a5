#include "jobmon/monitor/job_progress.h"

#include <chrono>
#include <ctime>

#include "jobmon/triage/line_facts.h"

namespace jobmon::monitor {

JobProgress::JobProgress(uint32_t job_id, std::string log_path, StallPolicy policy,
                         double job_start_time)
    : job_id_(job_id),
      follower_(std::move(log_path), {}, kMaxBytesPerPoll),
      tracker_(policy, job_start_time) {}

void JobProgress::OnStep(const triage::StepSample& sample, double now) {
  // A step time from the line when it has one, else from the lines' own
  // stamps (per step between two stamped lines), else the tracker uses the
  // arrival times.
  std::optional<double> seconds = sample.seconds;
  if (!seconds && sample.timestamp && last_stamp_ && sample.step > last_stamp_->step &&
      *sample.timestamp >= last_stamp_->at) {
    seconds = (*sample.timestamp - last_stamp_->at) /
              static_cast<double>(sample.step - last_stamp_->step);
  }
  if (sample.timestamp) last_stamp_ = StampedStep{sample.step, *sample.timestamp};
  // Only progress starts the training span: after a restart, another
  // task's line of the step already recorded is no first step.
  if (tracker_.OnStep(sample.step, now, seconds) && !first_step_time_) first_step_time_ = now;
}

void JobProgress::OnTensorBoardStep(int64_t step, double observed_at) {
  if (profile_) return;
  if (tracker_.OnStep(step, observed_at) && !first_step_time_) first_step_time_ = observed_at;
}

void JobProgress::OnLine(const std::string& line, double now) {
  tail_.push_back(line.size() > 4096 ? line.substr(0, 4096) : line);
  while (tail_.size() > kTailLines) tail_.pop_front();
  triage::LineFacts facts = triage::RecogniseLine(line, {profile_, year_});
  if (!heartbeat_seen_at_ && facts.heartbeat_accusation) {
    // When the coordinator accused, from the line's own absl stamp where it
    // has one: by the time a poll reads it, the epilog may be stopping the
    // exporters, and the window at that later moment would lie.
    heartbeat_seen_at_ = now;
    if (facts.line_time && *facts.line_time <= now + 60 && *facts.line_time >= now - 3600) {
      heartbeat_seen_at_ = *facts.line_time;
    }
  }
  if (facts.heartbeat_timeout) heartbeat_timeout_ = *facts.heartbeat_timeout;
  if (facts.checkpoint_period) tracker_.SetCheckpointPeriod(*facts.checkpoint_period);
  if (!facts.step) return;
  // The scanner's rules for which lines are steps (step_filter.h): the same
  // line gives the same step in `jobmon triage` and here. A profile is kept
  // once a sample of it counts (a plain loop's after its third step line).
  ++line_number_;
  for (const auto& accepted :
       filter_.Offer(facts.step->profile, facts.step->sample, line_number_, line)) {
    if (!profile_) profile_ = facts.step->profile;
    OnStep(accepted.sample, now);
  }
}

Expected<void> JobProgress::Poll(double now) {
  // Drain what is there (bounded per read), so a backlog after a restart is
  // caught up in one poll; bounded in time too, so that one job's huge log
  // (a sparse file of zeros is one long line after another) does not hold
  // up the cycle for every other job: the rest is read next cycle.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  time_t whole = static_cast<time_t>(now);
  tm utc{};
  gmtime_r(&whole, &utc);
  year_ = utc.tm_year + 1900;  // for absl stamps, which carry none
  for (int reads = 0; reads < 64; ++reads) {
    auto chunk = follower_.Poll();
    if (!chunk) return chunk.error();
    for (const std::string& line : chunk->lines) OnLine(line, now);
    if (chunk->lines.empty() || std::chrono::steady_clock::now() > give_up) break;
  }
  return {};
}

ProgressRecord JobProgress::Snapshot(double now) const {
  ProgressState state = tracker_.Evaluate(now);
  ProgressRecord r;
  r.job_id = job_id_;
  r.log_inode = follower_.position().inode;
  r.log_device = follower_.position().device;
  r.log_offset = follower_.position().offset;
  r.last_step = state.last_step;
  r.last_step_time = state.last_step_time;
  r.phase = ToString(state.phase);
  r.median_interval = state.median_interval;
  r.p99_interval = state.p99_interval;
  r.checkpoint_period = tracker_.checkpoint_period();
  r.longest_checkpoint_pause = tracker_.longest_checkpoint_pause();
  r.baseline_interval = state.baseline_interval;
  r.recent_interval = state.recent_interval;
  r.profile = profile_ ? triage::ToString(*profile_) : "";
  r.first_step_time = first_step_time_;
  if (profile_ == triage::StepProfile::kGeneric && filter_.generic_offset() != 0) {
    r.profile += kFromOneSuffix;  // its printed numbers are shifted by one
  }
  r.updated_at = now;
  return r;
}

void JobProgress::Restore(const ProgressRecord& r) {
  std::string_view profile = r.profile;
  bool from_one = profile.ends_with(kFromOneSuffix);
  if (from_one) profile.remove_suffix(kFromOneSuffix.size());
  if (!profile.empty()) profile_ = triage::ParseStepProfile(profile);
  if (profile_ == triage::StepProfile::kGeneric) filter_.RestoreGeneric(from_one ? 1 : 0);
  follower_ =
      LogFollower(follower_.path(),
                  LogPosition{static_cast<ino_t>(r.log_inode), static_cast<dev_t>(r.log_device),
                              static_cast<off_t>(r.log_offset)},
                  kMaxBytesPerPoll, follower_.user());
  first_step_time_ = r.first_step_time;
  if (r.last_step && r.last_step_time) {
    tracker_.Restore(*r.last_step, *r.last_step_time, r.median_interval, r.p99_interval,
                     r.checkpoint_period, r.longest_checkpoint_pause, r.baseline_interval,
                     r.recent_interval);
  } else if (r.checkpoint_period) {
    tracker_.SetCheckpointPeriod(*r.checkpoint_period);
  }
}

}  // namespace jobmon::monitor
