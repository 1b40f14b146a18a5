#include "jobmon/monitor/job_progress.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "jobmon/triage/line_facts.h"
#include "jobmon/triage/phase_lines.h"

namespace jobmon::monitor {

JobProgress::JobProgress(uint32_t job_id, std::string log_path, triage::StallRule rule,
                         double job_start_time, SlowdownRule slowdown)
    : job_id_(job_id),
      rule_(rule),
      slowdown_(slowdown),
      start_time_(job_start_time),
      follower_(std::move(log_path), {}, kMaxBytesPerPoll),
      tracker_(rule, job_start_time, slowdown) {}

void JobProgress::OnStep(const triage::StepSample& sample, bool activity) {
  if (activity) {
    poll_.activity = true;
    return;
  }
  const bool is_new = (!poll_.step || sample.step > *poll_.step) &&
                      (!tracker_.last_step() || sample.step > *tracker_.last_step());
  if (!is_new) return;
  // A step time from the line when it has one, else from the lines' own
  // stamps (per step between two stamped lines), else the tracker uses the
  // arrival times of the polls.
  std::optional<double> seconds = sample.seconds, stamp_gap;
  std::optional<int64_t> previous_step;
  if (sample.timestamp && last_stamp_ && sample.step > last_stamp_->step &&
      *sample.timestamp > last_stamp_->at) {
    stamp_gap = *sample.timestamp - last_stamp_->at;
    previous_step = last_stamp_->step;
    if (!seconds) seconds = *stamp_gap / static_cast<double>(sample.step - last_stamp_->step);
  }
  if (sample.timestamp) last_stamp_ = StampedStep{sample.step, *sample.timestamp};
  if (seconds || stamp_gap) tracker_.OnLineTiming(sample.step, seconds, stamp_gap, previous_step);
  poll_.step = sample.step;
  if (seconds) poll_.seconds = seconds;
}

void JobProgress::FlushPoll(double now) {
  if (poll_.step) {
    // Only progress starts the training span: after a restart, another
    // task's line of the step already recorded is no first step.
    if (tracker_.OnStep(*poll_.step, now, poll_.seconds)) {
      if (!first_step_time_) first_step_time_ = now;
    } else if (poll_.activity) {
      tracker_.OnActivity(now);
    }
  } else if (poll_.activity) {
    tracker_.OnActivity(now);
  }
  poll_ = {};
}

void JobProgress::OnTensorBoardStep(int64_t step, double observed_at) {
  if (!TakesTensorBoardSteps()) return;
  if (tracker_.OnStep(step, observed_at) && !first_step_time_) first_step_time_ = observed_at;
}

std::string JobProgress::progress_source() const {
  if (!profile_) return "";
  std::string name = triage::ToString(*profile_);
  if ((*profile_ == triage::StepProfile::kLearned || *profile_ == triage::StepProfile::kPulse) &&
      learner_.adopted()) {
    name += ": " + learner_.shape().substr(0, 120);
  }
  return name;
}

void JobProgress::OnLearnedLine(const std::string& line, double now) {
  if (!learner_.adopted()) {
    learner_.Offer(line, now);
    // Taken as soon as learned (a counter wins over a pulse while learning):
    // the job is unwatched until then.
    if (!learner_.kind() || !learner_.Adopt()) return;
    profile_ = *learner_.kind() == triage::LearnedKind::kCounter ? triage::StepProfile::kLearned
                                                                 : triage::StepProfile::kPulse;
    if (learner_.period()) tracker_.SetRhythmHint(*learner_.period());
    // The line that taught it is its first progress.
  }
  auto sample = learner_.Match(line);
  if (!sample) return;
  if (*profile_ == triage::StepProfile::kPulse) sample->step += pulse_base_;
  ++line_number_;
  for (const auto& accepted : filter_.Offer(*profile_, *sample, line_number_, line))
    OnStep(accepted.sample, accepted.activity);
}

void JobProgress::OnLine(const std::string& line, double now) {
  // The oldest line's memory holds the newest: no allocation per line read.
  std::string kept;
  if (tail_.size() >= kTailLines) {
    kept = std::move(tail_.front());
    tail_.pop_front();
  }
  kept.assign(line, 0, 4096);
  tail_.push_back(std::move(kept));
  while (tail_.size() > kTailLines) tail_.pop_front();
  const bool learned =
      profile_ == triage::StepProfile::kLearned || profile_ == triage::StepProfile::kPulse;
  triage::LineFacts facts = triage::RecogniseLine(line, {learned ? std::nullopt : profile_, year_});
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
  if (triage::CheckpointSaveOf(triage::WithoutTaskLabel(line)) == triage::CheckpointSave::kDone)
    checkpoint_saved_at_ = now;
  if (facts.checkpoint_period) tracker_.SetCheckpointPeriod(*facts.checkpoint_period);
  if (!facts.step) {
    const std::string_view text = triage::WithoutTaskLabel(line);
    if (auto phase = triage::AnnouncedPhase(text)) {
      // The steps read before the announcement came before the phase: they
      // must not end it.
      FlushPoll(now);
      tracker_.OnPhase(*phase, now);
      if (triage::PhaseBarDone(text)) tracker_.OnPhaseEnd(now);
    } else if (triage::PhaseEnded(text)) {
      FlushPoll(now);
      tracker_.OnPhaseEnd(now);
    }
    if (!profile_ || learned) {
      OnLearnedLine(line, now);
    } else if (triage::IsLoggingDict(text) || triage::DetectStep(text)) {
      // Progress in another of the job's formats (HF Trainer's logging dict
      // between the bar's bursts, a "step N" print beside a bar): the job
      // is live, and its rhythm counts, as with a validation bar.
      poll_.activity = true;
    }
    return;
  }
  if (line.find('\r') != std::string::npos) {
    if (auto burst = triage::TqdmBurstSeconds(line)) tracker_.OnBurst(*burst);
  }
  // A line Ray folded is the job's progress, no actor's own (IsRayFolded).
  const bool folded = triage::IsRayFolded(line);
  const std::optional<triage::RankId> rank = folded ? std::nullopt : triage::LineRank(line);
  if (folded) ranks_.Fold();
  if (rank) {
    ranks_.Offer(*rank, facts.step->sample.step, facts.step->sample.epoch, now, ++rank_lines_);
  }
  // One rank's lines are the progress, as in `jobmon triage` (LeadRank).
  if (!folded && !lead_.Admit(rank)) return;
  // The scanner's rules for which lines are steps (step_filter.h): the same
  // line gives the same step in `jobmon triage` and here. A profile is kept
  // once a sample of it counts (a plain loop's after its third step line).
  if (learned) {
    // A known format after a learned one is the finer source, once the
    // filter lets it count (a plain loop's after three lines); the learned
    // positions were in another count, so the tracker starts over.
    ++known_line_number_;
    auto accepted =
        known_filter_.Offer(facts.step->profile, facts.step->sample, known_line_number_, line);
    if (accepted.empty()) return;
    std::vector<triage::StepFilter::Accepted> steps(accepted.begin(), accepted.end());
    profile_ = facts.step->profile;
    filter_ = std::move(known_filter_);
    line_number_ = known_line_number_;
    tracker_ = ProgressTracker(rule_, start_time_, slowdown_);
    first_step_time_.reset();
    last_stamp_.reset();
    arrivals_.clear();
    for (const auto& a : steps) OnStep(a.sample, a.activity);
    return;
  }
  ++line_number_;
  arrivals_.push_back({line_number_, now});
  while (arrivals_.size() > 2 * triage::kGenericMinSamples) arrivals_.pop_front();
  for (const auto& accepted :
       filter_.Offer(facts.step->profile, facts.step->sample, line_number_, line)) {
    if (!profile_) profile_ = facts.step->profile;
    // A sample the filter held (a plain loop's first lines, until it was
    // sure) is observed when its line came, in a poll of its own.
    auto came = std::find_if(arrivals_.begin(), arrivals_.end(),
                             [&](const auto& a) { return a.first == accepted.line; });
    if (came != arrivals_.end() && came->second < now) {
      FlushPoll(came->second);
      OnStep(accepted.sample, accepted.activity);
      FlushPoll(came->second);
      continue;
    }
    OnStep(accepted.sample, accepted.activity);
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
  bool caught_up = false;
  for (int reads = 0; reads < 64; ++reads) {
    auto chunk = follower_.Poll();
    if (!chunk) {
      FlushPoll(now);
      tracker_.MarkBlind();
      return chunk.error();
    }
    for (const std::string& line : chunk->lines) OnLine(line, now);
    if (chunk->at_end) {
      caught_up = true;
      break;
    }
    if (chunk->lines.empty()) {
      // A log not written yet holds nothing to miss; one that was read
      // before and is gone now (moved, a mount away) is not watched.
      caught_up = !chunk->missing || follower_.position().inode == 0;
      break;
    }
    if (std::chrono::steady_clock::now() > give_up) break;
  }
  FlushPoll(now);
  // Judged only on a log read to its end: a backlog not yet read may hold
  // the steps that say the job is fine.
  if (caught_up) {
    tracker_.OnWatched(now);
  } else {
    tracker_.MarkBlind();
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
  // What `jobmon status` and `list` show as the job's state: with the
  // phase the job announced, and whether the daemon is still catching up.
  r.phase = ToString(state.phase);
  if (state.announced_phase)
    r.phase += std::string(", in ") + triage::ToString(*state.announced_phase);
  if (state.blind) r.phase += ", reading the log up to date";
  r.median_interval = state.median_interval;
  r.p99_interval = state.p99_interval;
  r.checkpoint_period = tracker_.checkpoint_period();
  r.longest_checkpoint_pause = tracker_.longest_checkpoint_pause();
  r.baseline_interval = state.baseline_interval;
  r.recent_interval = state.recent_interval;
  // What is followed, as people read it; a pulse also keeps its count
  // ("pulse:N: <template>"), which a restart continues.
  r.profile = progress_source();
  if (profile_ == triage::StepProfile::kPulse) {
    r.profile.insert(5, ":" + std::to_string(state.last_step.value_or(0)));
  }
  r.first_step_time = first_step_time_;
  r.stated_step_times = tracker_.stated_step_times();
  if (state.last_step) {
    r.threshold_seconds = state.threshold_seconds;
    r.threshold_reason = state.threshold_reason;
  }
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
  // A learned template is learned again from the lines to come; a pulse's
  // count goes on from where it was ("pulse:N").
  if (size_t colon = profile.find(':'); colon != profile.npos) {
    if (profile.starts_with("pulse:"))
      pulse_base_ = std::atoll(std::string(profile.substr(colon + 1)).c_str()) + 1;
    profile = profile.substr(0, colon);
  }
  if (profile == "learned" || profile == "pulse") profile = "";
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
                     r.recent_interval, r.stated_step_times);
  } else if (r.checkpoint_period) {
    tracker_.SetCheckpointPeriod(*r.checkpoint_period);
  }
}

}  // namespace jobmon::monitor
