// The progress projection from the chosen step series, and the
// heartbeat checklist's log part.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "analysis.h"
#include "jobmon/common/hostlist.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/triage/stall_rule.h"

namespace jobmon::triage::analysis {

StepProfile ChooseProfile(const ScanFacts& facts, const AnalysisContext& context) {
  if (context.profile) return *context.profile;
  // A learned template only where no known format has a step.
  const size_t learned = static_cast<size_t>(StepProfile::kLearned);
  size_t best = 0;
  for (size_t p = 1; p < facts.steps.size(); ++p) {
    if (p == learned) continue;
    if (facts.steps[p].count() > facts.steps[best].count()) best = p;
  }
  if (facts.steps[best].count() == 0 && facts.steps[learned].count() > 0) best = learned;
  return static_cast<StepProfile>(best);
}

// Timestamp of a line from its absl prefix or an ISO stamp.
std::optional<double> LineTime(const std::string& text, std::optional<int> year) {
  if (auto iso = FindIsoTimestamp(text)) return iso;
  return ParseYearlessTimestamp(text, year.value_or(1970));
}

namespace {

// Since the last step: the step expected by now, and whether the silence
// is past the stall threshold.
void ProjectStall(const StepSeries& series, const AnalysisContext& context, Progress& p) {
  const double step_time = p.steady_step_seconds.value_or(0);
  if (p.last_step_time && p.now) {
    p.seconds_since_last_step = std::max(0.0, *p.now - *p.last_step_time);
    if (step_time > 0) {
      p.expected_step_now =
          *p.last_step + static_cast<int64_t>(std::floor(*p.seconds_since_last_step / step_time));
    }
    // The projection learns no checkpoint pauses from one read of the log:
    // it applies no checkpoint grace.
    StallRule rule;
    rule.k = context.stall_factor;
    rule.min_stall_seconds = context.stall_min_seconds;
    std::optional<double> reference =
        p.recent_p99_seconds ? p.recent_p99_seconds : p.steady_step_seconds;
    // In the job's own rhythm: the time between its progress lines.
    if (reference) *reference *= series.StepsPerLine();
    // A follower (the monitor) that judged the stall passes its own threshold.
    StallInputs in;
    in.step_interval = reference;
    p.stall_threshold_seconds =
        context.stall_threshold_seconds.value_or(StallThreshold(rule, in).seconds);
    p.stalled = *p.seconds_since_last_step > *p.stall_threshold_seconds;
  }
}

// The last checkpoint (periodic, or a save the log reports), the steps and
// time lost since it, and the time left.
void ProjectLoss(const ScanFacts& facts, StepProfile profile, Progress& p) {
  const double step_time = p.steady_step_seconds.value_or(0);
  if (p.checkpointing && p.checkpoint_period && *p.checkpoint_period > 0) {
    int64_t period = *p.checkpoint_period;
    if (*p.last_step >= period) p.last_periodic_checkpoint = (*p.last_step / period) * period;
  }
  // A save the log reports in the frameworks' words holds the step before
  // it, whatever the configured period says.
  if (auto saved = facts.step_at_last_save[static_cast<size_t>(profile)];
      saved && (!p.last_periodic_checkpoint || *saved > *p.last_periodic_checkpoint)) {
    p.checkpointing = true;
    p.last_periodic_checkpoint = saved;
    p.checkpoint_save_line = facts.last_save_line;
  }
  // Reference step 5: lost = last_step - last periodic checkpoint; without
  // one, every training step is lost.
  p.steps_lost =
      p.last_periodic_checkpoint ? *p.last_step - *p.last_periodic_checkpoint : *p.last_step + 1;
  if (step_time > 0) p.seconds_lost = static_cast<double>(*p.steps_lost) * step_time;
  if (p.total_steps && step_time > 0) {
    p.eta_seconds =
        static_cast<double>(std::max<int64_t>(0, *p.total_steps - 1 - *p.last_step)) * step_time;
  }
}

}  // namespace

Progress Project(const ScanFacts& facts, StepProfile profile, bool ended,
                 const AnalysisContext& context) {
  Progress p;
  const StepSeries& series = facts.steps[static_cast<size_t>(profile)];
  p.checkpointing = facts.checkpointing || facts.checkpoint_period.has_value();
  if (p.checkpointing) p.checkpoint_period = facts.checkpoint_period.value_or(200);
  p.total_steps = facts.total_steps;
  if (series.count() == 0) return p;
  p.profile = ToString(profile);
  if (profile == StepProfile::kLearned) p.profile += ": " + facts.learned_template;
  p.printed_offset = facts.printed_offset[static_cast<size_t>(profile)];
  p.first_step = series.first()->step;
  p.last_step = series.last()->step;
  p.last_step_line = series.last()->line;
  p.steps_this_run = static_cast<uint64_t>(*p.last_step - *p.first_step + 1);
  // A learned template is adopted after its first lines: its first step
  // says nothing of a restore. Nor does a first step within one logging
  // interval (`iter 19` when every 20th is logged) unless the log says it
  // restored: a fresh run's first logged step.
  // Two lines give the interval: iter 19 then 39 is every 20th from 0.
  const bool first_logged_of_fresh_run =
      !facts.restore_step && series.count() >= 2 &&
      static_cast<double>(*p.first_step) <= series.StepsPerLine();
  if (*p.first_step > 0 && profile != StepProfile::kLearned && !first_logged_of_fresh_run) {
    p.restored = true;
    p.restored_from = *p.first_step - 1;
  } else if (first_logged_of_fresh_run) {
    p.steps_this_run = static_cast<uint64_t>(*p.last_step + 1);  // from step 0, unlogged
  }
  if (p.total_steps && *p.total_steps > 0) {
    p.percent = 100.0 * static_cast<double>(*p.last_step + 1) / static_cast<double>(*p.total_steps);
  }
  p.steady_step_seconds = series.SteadyStepSeconds();
  p.recent_median_seconds = series.RecentMedian();
  p.recent_p99_seconds = series.RecentP99();
  p.tail_slowdown = series.TailSlowdown();
  p.last_step_time = facts.last_step_time[static_cast<size_t>(profile)];
  if (!p.last_step_time && !ended) p.last_step_time = context.last_step_seen_at;

  // "now": given, else the log's end for a finished job, else the clock.
  if (context.now) {
    p.now = context.now;
  } else if (ended) {
    p.now = facts.last_timestamp;
  } else {
    p.now =
        context.wall_clock_now > 0 ? context.wall_clock_now : static_cast<double>(time(nullptr));
  }
  ProjectStall(series, context, p);
  ProjectLoss(facts, profile, p);
  return p;
}

HeartbeatChecklist CheckHeartbeat(const ScanFacts& facts, const Progress& progress,
                                  StepProfile profile) {
  HeartbeatChecklist h;
  h.accused.assign(facts.accused_tasks.begin(), facts.accused_tasks.end());
  h.proof.push_back(*facts.heartbeat);
  // Task-to-host: the log's own mapping, else NODE_LIST with one task per node.
  std::vector<std::string> nodes;
  if (facts.node_list) {
    if (auto expanded = ExpandHostlist(*facts.node_list)) nodes = *expanded;
  }
  for (int task : h.accused) {
    if (auto it = facts.task_hosts.find(task); it != facts.task_hosts.end()) {
      h.hosts[task] = it->second;
      h.host_source = "log";
    } else if (task >= 0 && static_cast<size_t>(task) < nodes.size()) {
      h.hosts[task] = nodes[static_cast<size_t>(task)];
      if (h.host_source.empty()) h.host_source = "NODE_LIST (one task per node assumed)";
    }
  }
  for (int task : h.accused) {
    if (auto it = facts.self_death.find(task); it != facts.self_death.end()) {
      h.self_reported.push_back(task);
      h.proof.push_back(it->second);
    }
    if (auto it = facts.task_errors.find(task);
        it != facts.task_errors.end() && !it->second.empty()) {
      h.with_earlier_errors.push_back(task);
      for (const LineRef& ref : it->second) h.proof.push_back(ref);
    }
  }
  const StepSeries& series = facts.steps[static_cast<size_t>(profile)];
  auto heartbeat_time = LineTime(facts.heartbeat->text, facts.timestamp_year);
  if (series.has_seconds()) h.step_seconds_sum = series.total_seconds();
  if (heartbeat_time && facts.first_timestamp && *heartbeat_time >= *facts.first_timestamp) {
    h.wall_seconds = *heartbeat_time - *facts.first_timestamp;
  }
  // Did the accused keep stepping until (nearly) the last step of the job?
  std::vector<int> kept_stepping;
  for (int task : h.accused) {
    auto it = facts.last_step_by_task.find(task);
    if (it != facts.last_step_by_task.end() && progress.last_step &&
        it->second >= *progress.last_step - 1) {
      kept_stepping.push_back(task);
    }
  }
  if (h.accused.empty()) h.reasons.push_back("the log names no accused task ids");
  if (!h.with_earlier_errors.empty()) {
    h.verdict = "likely-true-positive";
    h.reasons.push_back(fmt::format("{} accused task(s) logged a real error before the timeout",
                                    h.with_earlier_errors.size()));
  } else if (!h.self_reported.empty() || !kept_stepping.empty()) {
    h.verdict = "likely-false-positive";
    if (!h.self_reported.empty()) {
      h.reasons.push_back(
          fmt::format("{} of {} accused task(s) logged their own death: they were alive",
                      h.self_reported.size(), h.accused.size()));
    }
    if (!kept_stepping.empty()) {
      h.reasons.push_back(
          fmt::format("{} accused task(s) completed steps up to the job's last step ({})",
                      kept_stepping.size(), progress.last_step.value_or(-1)));
    }
    h.reasons.push_back(
        "no traceback, NCCL error, OOM or kill on the accused tasks before the timeout");
  } else {
    h.verdict = "undetermined";
    h.reasons.push_back(
        "no proof either way in the log: confirm with `jobmon diagnose --playbook heartbeat`");
  }
  if (h.step_seconds_sum && h.wall_seconds && *h.wall_seconds > 0) {
    h.reasons.push_back(fmt::format(
        "step times sum to {:.0f}s of {:.0f}s wall time before the timeout ({:.0f}%)",
        *h.step_seconds_sum, *h.wall_seconds, 100.0 * *h.step_seconds_sum / *h.wall_seconds));
  }
  return h;
}

}  // namespace jobmon::triage::analysis
