#include "jobmon/triage/triage.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include "jobmon/common/hostlist.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/valid_utf8.h"
#include "jobmon/triage/causal_chain.h"
#include "jobmon/triage/rank_progress.h"
#include "jobmon/triage/runtime.h"
#include "jobmon/triage/stall_rule.h"
#include "next_steps.h"

namespace jobmon::triage {

std::string FormatDuration(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return fmt::format("{:.0f}s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f}m", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.1f}h", seconds / 3600);
  return fmt::format("{:.1f}d", seconds / 86400);
}

std::string DecodeExitCode(int code) {
  switch (code) {
    case 0:
      return "success";
    case 1:
      return "generic error (read the task output)";
    case 130:
      return "SIGINT (interrupted)";
    case 134:
      return "SIGABRT (assertion failure, core dump)";
    case 137:
      return "SIGKILL (OOM or external kill)";
    case 139:
      return "SIGSEGV (crash, core dump likely in the job dir)";
    case 143:
      return "SIGTERM (scancel or scheduler)";
    default:
      break;
  }
  if (code > 128 && code < 128 + 65) return fmt::format("killed by signal {}", code - 128);
  return "non-zero exit (read the task output)";
}

namespace {

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
  double step_time = p.steady_step_seconds.value_or(0);
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

bool IsTrainingClass(const FailureClass& c) { return c.category == Category::kTraining; }

bool IsGenericTrainingClass(const FailureClass& c) {
  return c.generic && c.category == Category::kTraining;
}

// The earliest class whose `weight` of signature matched and that
// `predicate` accepts (ties by priority). What follows Slurm's cancel
// banner is teardown: only a consequence may come from there.
// A class's first and last line of one weight, with the step lines each
// profile had counted at each (log_scan.h ClassHits).
struct WeightLines {
  const std::optional<uint64_t>& first;
  const std::optional<uint64_t>& last;
  const ClassHits::StepCounts& at_first;
  const ClassHits::StepCounts& at_last;
};
WeightLines LinesOf(const ClassHits& h, Weight weight) {
  if (weight == Weight::kRoot)
    return {h.first_root, h.last_root, h.steps_at_root, h.steps_at_last_root};
  if (weight == Weight::kGeneric)
    return {h.first_generic, h.last_generic, h.steps_at_generic, h.steps_at_last_generic};
  return {h.first_consequence, h.last_consequence, h.steps_at_consequence,
          h.steps_at_last_consequence};
}

// A class's line of one weight that training did not go on after: the
// first, else the last; nullopt when both were survived. Also the step
// lines printed after the first.
struct FatalLine {
  std::optional<uint64_t> line;
  uint64_t step_lines_after = 0;
  uint64_t step_lines_after_first = 0;
};
FatalLine FatalLineOf(const ScanFacts& facts, const ClassHits& hits, Weight weight,
                      StepProfile profile) {
  const size_t p = static_cast<size_t>(profile);
  const WeightLines lines = LinesOf(hits, weight);
  const uint64_t after_first = facts.steps[p].count() - lines.at_first[p];
  const uint64_t after_last = facts.steps[p].count() - lines.at_last[p];
  if (!lines.first) return {};
  if (after_first < kTrainedOnStepLines) return {lines.first, after_first, after_first};
  if (lines.last && *lines.last != *lines.first && after_last < kTrainedOnStepLines)
    return {lines.last, after_last, after_first};
  return {std::nullopt, 0, after_first};
}

// The step lines of `profile` printed after a class's line `line` (from the
// counts taken when it was read); nullopt when the line is none of its
// first or last lines.
std::optional<uint64_t> StepLinesAfter(const ScanFacts& facts, const std::string& id, uint64_t line,
                                       StepProfile profile) {
  auto it = facts.classes.find(id);
  if (it == facts.classes.end()) return std::nullopt;
  const size_t p = static_cast<size_t>(profile);
  for (Weight weight : {Weight::kRoot, Weight::kGeneric, Weight::kConsequence}) {
    const WeightLines lines = LinesOf(it->second, weight);
    if (lines.first == line) return facts.steps[p].count() - lines.at_first[p];
    if (lines.last == line) return facts.steps[p].count() - lines.at_last[p];
  }
  return std::nullopt;
}

// With `survivors_of` a profile, lines training went on after (causal_chain.h
// kTrainedOnStepLines step lines of it) do not count: they were survived.
template <typename Predicate>
std::pair<std::string, std::optional<uint64_t>> EarliestOf(
    const ScanFacts& facts, Weight weight, Predicate&& predicate,
    std::optional<StepProfile> survivors_of = std::nullopt) {
  std::optional<uint64_t> end_line;
  if (facts.slurm_end) end_line = facts.slurm_end->line;
  std::string best;
  std::optional<uint64_t> best_line;
  for (const auto& [id, hits] : facts.classes) {
    const FailureClass* c = FindClass(id);
    if (!c || c->category == Category::kDerived || !predicate(*c)) continue;
    std::optional<uint64_t> line = LinesOf(hits, weight).first;
    if (!line || (weight != Weight::kConsequence && end_line && *line > *end_line)) continue;
    if (survivors_of) {
      // The first line unless it was survived, then the last unless that was.
      line = FatalLineOf(facts, hits, weight, *survivors_of).line;
      if (!line || (weight != Weight::kConsequence && end_line && *line > *end_line)) continue;
    }
    if (best.empty() || *line < *best_line ||
        (*line == *best_line && PriorityOf(id) < PriorityOf(best))) {
      best = id;
      best_line = line;
    }
  }
  return {best, best_line};
}

bool AnyClass(const FailureClass&) { return true; }

// The log's own root failure for the status decision, in the order the
// primary is chosen in Analyze: the earliest root signature, else the
// earliest generic training one, else a job-level class, else the earliest
// consequence.
std::pair<std::string, uint64_t> LogRootFailure(const ScanFacts& facts, StepProfile profile) {
  // A failure training went on after was survived: the one it did not is the root.
  auto root = EarliestOf(facts, Weight::kRoot, AnyClass, profile);
  if (root.first.empty()) root = EarliestOf(facts, Weight::kGeneric, IsTrainingClass, profile);
  if (root.first.empty()) root = EarliestOf(facts, Weight::kRoot, AnyClass);
  if (root.first.empty()) root = EarliestOf(facts, Weight::kGeneric, IsTrainingClass);
  for (const char* job_level : {"stage-fail", "node-fail", "cancelled"}) {
    if (auto it = facts.classes.find(job_level); root.first.empty() && it != facts.classes.end())
      root = {job_level, it->second.first.line};
  }
  if (root.first.empty()) root = EarliestOf(facts, Weight::kConsequence, AnyClass);
  return {root.first, root.second.value_or(0)};
}

// Seconds since the log last changed: its last line's own time, or its
// mtime when `now` is the clock.
std::optional<double> SecondsSilent(const ScanFacts& facts, const AnalysisContext& context,
                                    double now) {
  std::optional<double> latest = facts.last_timestamp;
  if (!context.now && context.log_mtime) latest = std::max(latest.value_or(0), *context.log_mtime);
  if (!latest) return std::nullopt;
  return std::max(0.0, now - *latest);
}

// What the log says that can tie a kernel line to the job: the pids and
// binaries its launcher lines name, whether a rank died of SIGKILL (what the
// OOM killer sends), its time span.
KernelMatchInput KernelMatchInputFrom(const ScanFacts& facts, const AnalysisContext& context) {
  static const RE2 kPid(R"((?i)\bpid[:=]? ?(\d+))");
  static const RE2 kBinary(R"(of binary: \S*?([^/\s]+)(?:\s|$))");
  static const RE2 kSigkill(R"(: Killed$|exitcode: -9\b|SIGKILL|return code = -9\b)");
  KernelMatchInput in;
  in.job_id = context.job_id ? context.job_id : facts.job_id;
  in.log_start = facts.first_timestamp;
  in.log_end = facts.last_timestamp;
  for (const auto& [id, hits] : facts.classes) {
    std::vector<const LineRef*> refs = {&hits.first, &hits.last};
    for (const LineRef& ref : hits.examples) refs.push_back(&ref);
    for (const LineRef* ref : refs) {
      re2::StringPiece text(ref->text);
      int64_t pid = 0;
      while (RE2::FindAndConsume(&text, kPid, &pid)) in.pids.insert(pid);
      std::string binary;
      if (RE2::PartialMatch(ref->text, kBinary, &binary)) in.names.insert(binary);
      if (id == "signal-kill" && RE2::PartialMatch(ref->text, kSigkill)) in.sigkill = true;
    }
  }
  for (const NodeExit& e : facts.node_exits) in.sigkill |= e.code == 137;
  if (const auto& code = context.slurm_exit_code)
    in.sigkill |= code->signal == 9 || code->status == 137;
  return in;
}

// The primary's line time when that line is kept (first, last, examples;
// the heartbeat accusation) and stamped, else the log's last timestamp.
std::optional<double> FailureTime(const ScanFacts& facts, const std::string& primary,
                                  std::optional<uint64_t> primary_line) {
  std::vector<const LineRef*> refs;
  if (auto it = facts.classes.find(primary); it != facts.classes.end()) {
    if (!primary_line) primary_line = it->second.first.line;
    refs.push_back(&it->second.first);
    for (const LineRef& ref : it->second.examples) refs.push_back(&ref);
    refs.push_back(&it->second.last);
  }
  if (primary == "heartbeat-timeout" && facts.heartbeat) {
    if (!primary_line) primary_line = facts.heartbeat->line;
    refs.push_back(&*facts.heartbeat);
  }
  for (const LineRef* ref : refs) {
    if (!primary_line || ref->line != *primary_line) continue;
    if (auto t = LineTime(ref->text, facts.timestamp_year)) return t;
  }
  return facts.last_timestamp;
}

// The log's own clock: the steps stopped, yet timestamped lines
// (a status or heartbeat thread, a launcher's keep-alive) went on printing.
// The last step came before the first timestamped line after it; the stall
// lasted at least from there to the log's last timestamp. Two timestamped
// lines after the step at least: one could be the end's own banner.
struct ClockStall {
  double seconds = 0;
  double step_before = 0;  // the last step came before this time
  uint64_t step_before_line = 0;
  std::optional<LineRef> last_stamped;  // the log's last timestamped line, when kept
};

std::optional<ClockStall> ClockStallOf(const ScanFacts& facts, StepProfile profile,
                                       const Progress& p, double threshold) {
  const auto& after = facts.time_after_last_step[static_cast<size_t>(profile)];
  if (!p.last_step_line || !after || after->step_line != *p.last_step_line ||
      after->stamped_lines < 2 || !facts.last_timestamp)
    return std::nullopt;
  const double gap = *facts.last_timestamp - after->time;
  if (gap <= threshold) return std::nullopt;
  ClockStall stall{gap, after->time, after->line, std::nullopt};
  for (auto it = facts.tail.rbegin(); it != facts.tail.rend(); ++it) {
    if (LineTime(it->text, facts.timestamp_year)) {
      stall.last_stamped = *it;
      break;
    }
  }
  return stall;
}

// Completion without a summary line: the loop's last step, then the
// program's own word that it ended at the very end of the log, nothing
// failing after it: a final save (nanoGPT's `saving checkpoint to out`
// after its last `iter N`, `saved final model to ...`) or its own "done"
// (`training finished after 40 steps`, a bare `done`). A failure before the
// last step was survived: what happened after it decides.
std::optional<LineRef> OwnEndAfterTheLastStep(const ScanFacts& facts, const Progress& p) {
  static const RE2 kSave(
      R"((?i)\b(saving|saved|wrote|writing)\b.*\b(checkpoint|ckpt|model|weights)\b|)"
      R"(\b(checkpoint|ckpt)\b.*\bsaved\b|)"
      R"(^\W*(all )?(done|finished|complete|completed)\W*$|)"
      R"(\b(training|train|run|job)\b.{0,20}\b(finished|complete|completed|done)\b|)"
      R"(\b(finished|completed) training\b)");
  constexpr uint64_t kEndLines = 3;
  if (!p.last_step_line || facts.lines < *p.last_step_line ||
      facts.lines - *p.last_step_line > kEndLines + 1)
    return std::nullopt;
  for (const auto& [id, hits] : facts.classes) {
    if (hits.last.line > *p.last_step_line) return std::nullopt;
  }
  for (auto it = facts.tail.rbegin(); it != facts.tail.rend(); ++it) {
    if (it->line <= *p.last_step_line) break;
    if (RE2::PartialMatch(it->text, kSave)) return *it;
  }
  return std::nullopt;
}

// What the phases of Analyze decide and hand on to the later ones.
struct Analysis {
  StepProfile profile{};
  bool summary = false;      // a JOB SUMMARY (or its exit code) was read
  bool reached_end = false;  // the last planned step was reached
  bool open_end = false;     // the status leaves open how the log ended
  StatusInputs in;
  StatusDecision decision;
  std::vector<const KernelFinding*> oom_kills;  // into the report's kernel findings
  std::optional<ClockStall> clock_stall;
  std::map<std::string, ClassFinding> found;  // classes seen and derived, by id
  bool hang = false;
  uint64_t root_line = 0;  // the log's root failure's line (LogRootFailure), 0: none
  std::string primary;
  std::optional<uint64_t> primary_line;
  std::string kernel_root_over;     // the log's own primary a kernel OOM kill explains
  std::optional<LineRef> watchdog;  // the job's own watchdog fired after the last step
};

// Read: what the scan read (size, lines set aside) and what went wrong reading it.
TriageReport ReadFacts(const ScanFacts& facts, const AnalysisContext& context) {
  TriageReport r;
  r.job_id = facts.job_id;
  r.lines = facts.lines;
  r.bytes = facts.bytes;
  r.harmless_lines = facts.harmless_lines;
  r.long_lines = facts.long_lines;
  for (size_t id = 0; id < facts.matched_patterns.size(); ++id) {
    if (facts.matched_patterns[id]) r.matched_patterns.push_back(static_cast<unsigned>(id));
  }
  r.slurm_state = context.slurm_state;
  if (facts.shrank_while_reading)
    r.warnings.push_back("the file shrank while being read (truncated or rotated)");
  if (facts.long_lines > 0) {
    r.warnings.push_back(fmt::format(
        "{} line(s) longer than the read buffer were scanned in pieces", facts.long_lines));
  }
  return r;
}

// Kernel evidence: which of the given kernel events match this job, and its OOM kills.
void MatchKernel(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                 Analysis& a) {
  if (context.kernel_events.empty()) return;
  auto matches = MatchKernelEvents(context.kernel_events, KernelMatchInputFrom(facts, context));
  for (size_t i = 0; i < matches.size(); ++i)
    r.kernel.push_back({context.kernel_events[i], matches[i]});
  for (const KernelFinding& k : r.kernel) {
    if (k.match.matched && k.event.kind == KernelEventKind::kOomKill) a.oom_kills.push_back(&k);
  }
}

// Progress and status: the projection of the steps, then one decision over
// the JOB SUMMARY, Slurm's state and exit code, the log's failure and
// completion evidence and its progress (job_status.h, docs/concepts.md) —
// mtime only for "still advancing".
void DecideStatus(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                  Analysis& a) {
  a.profile = ChooseProfile(facts, context);
  a.summary = facts.summary.has_value() || facts.exit_code.has_value();
  std::optional<SlurmState> slurm_kind;
  if (context.slurm_state) slurm_kind = ClassifySlurmState(*context.slurm_state);
  bool ended = a.summary || (slurm_kind && *slurm_kind != SlurmState::kAlive &&
                             *slurm_kind != SlurmState::kUnrecognised);
  r.progress = Project(facts, a.profile, ended, context);
  const Progress& p = r.progress;
  if (context.slurm_exit_code) {
    r.slurm_exit_code =
        fmt::format("{}:{}", context.slurm_exit_code->status, context.slurm_exit_code->signal);
  }
  a.reached_end = p.total_steps && p.last_step && *p.last_step >= *p.total_steps - 1;
  StatusInputs& in = a.in;
  if (context.slurm_state) in.slurm = SlurmView{*context.slurm_state, context.slurm_exit_code};
  in.summary_exit = facts.exit_code;
  auto [root, root_line] = LogRootFailure(facts, a.profile);
  a.root_line = root_line;
  in.failure_class = root;
  if (root.empty() && !a.oom_kills.empty()) in.failure_class = "oom-host";
  // Training went on after it as the chain counts survival (causal_chain.h
  // kTrainedOnStepLines): the step a rank finishes while a stop reaches it
  // is not training going on.
  if (!root.empty() && p.last_step_line && *p.last_step_line > root_line) {
    const auto after = StepLinesAfter(facts, root, root_line, a.profile);
    in.steps_after_failure = !after || *after >= kTrainedOnStepLines;
  }
  if (facts.completion) {
    in.completion =
        fmt::format("the framework's completion summary at line {}", facts.completion->line);
  } else if (a.reached_end) {
    in.completion = fmt::format("the last planned step reached (step {}, the last of {})",
                                p.Printed(*p.last_step), *p.total_steps);
  }
  in.has_steps = p.last_step.has_value();
  in.steps_stalled = p.stalled;
  in.stopped_short = p.total_steps && p.last_step && !a.reached_end;
  if (facts.time_limit_signal && p.last_step_line &&
      facts.time_limit_signal->line + kTrainedOnStepLines > *p.last_step_line) {
    // Said at the end of the steps, not long before them (a handler's
    // registration, an earlier attempt's requeue).
    in.time_limit_signal = fmt::format(
        "its time-limit warning signal (line {}: \"{}\")", facts.time_limit_signal->line,
        ValidUtf8(std::string_view(facts.time_limit_signal->text).substr(0, 120)));
  }
  // At or after the last step (a bar's line has no end: the warning follows
  // its last update on the same line).
  if (facts.abrupt_exit && p.last_step_line && facts.abrupt_exit->line >= *p.last_step_line) {
    in.abrupt_exit =
        fmt::format("line {}: \"{}\"", facts.abrupt_exit->line,
                    ValidUtf8(std::string_view(facts.abrupt_exit->text).substr(0, 120)));
  }
  in.seconds_since_last_step = p.seconds_since_last_step;
  const double now = context.now                  ? *context.now
                     : context.wall_clock_now > 0 ? context.wall_clock_now
                                                  : static_cast<double>(time(nullptr));
  in.seconds_silent = SecondsSilent(facts, context, now);
  in.advancing_within_seconds = p.stall_threshold_seconds.value_or(context.stall_min_seconds);
  a.decision = DecideJobStatus(in);
  r.status = a.decision.status;
  r.status_basis = a.decision.basis;
  if (a.decision.implied_class == "train-timeout" && !in.time_limit_signal.empty()) {
    // The warning's handlers checkpoint before they stop (Lightning's
    // auto-requeue, submitit, Megatron's exit-signal-handler): nothing lost.
    r.progress.steps_lost = 0;
    r.progress.seconds_lost = 0;
  }
}

// The log's own end: without Slurm's word or the log's own failure, two
// readings of it that need no clock outside it: a stall by its own
// timestamps (hanging), and a loop that ended with its final checkpoint
// (completed).
void ReadTheLogsEnd(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                    Analysis& a) {
  const Progress& p = r.progress;
  a.open_end = r.status == JobStatus::kUnknown || r.status == JobStatus::kRunning ||
               r.status == JobStatus::kUnknownDeath;
  a.clock_stall = ClockStallOf(facts, a.profile, p,
                               p.stall_threshold_seconds.value_or(context.stall_min_seconds));
  const std::optional<ClockStall>& clock_stall = a.clock_stall;
  std::optional<LineRef> own_end;
  if (a.open_end && !a.summary && clock_stall) {
    r.status = JobStatus::kHanging;
    r.status_basis = fmt::format(
        "no JOB SUMMARY; by the log's own clock no step for at least {}: the last step (line {}) "
        "came before {} (line {}), and timestamped lines went on to {}{}",
        FormatDuration(clock_stall->seconds), *p.last_step_line,
        FormatIsoUtc(clock_stall->step_before), clock_stall->step_before_line,
        FormatIsoUtc(*facts.last_timestamp),
        clock_stall->last_stamped ? fmt::format(" (line {})", clock_stall->last_stamped->line)
                                  : "");
  } else if (a.open_end && !a.summary && !a.in.slurm &&
             (own_end = OwnEndAfterTheLastStep(facts, p))) {
    r.status = JobStatus::kCompleted;
    r.status_basis = fmt::format(
        "no JOB SUMMARY and no completion line, but the loop's last step (line {}) is followed by "
        "the program's own end at the log's end (line {}): completed, with lower confidence (a "
        "kill right after it reads the same; Slurm's state would settle it)",
        *p.last_step_line, own_end->line);
    a.decision.findings.push_back(fmt::format(
        "Completion inferred from the log's end (step {} then \"{}\"), not from a summary line",
        p.Printed(*p.last_step), own_end->text));
    // (A run that restarted within the log says so itself: RecoveredAfter.)
    if (facts.steps[static_cast<size_t>(a.profile)].repeats() == 0) {
      for (const auto& [id, hits] : facts.classes) {
        a.decision.findings.push_back(fmt::format(
            "{} at line {} was survived: training went on to step {} (line {}) after it", id,
            hits.last.line, p.Printed(*p.last_step), *p.last_step_line));
      }
    }
  }
}

// Failure classes: those the scan saw, and those derived from the status
// and progress (hang, unknown-death, soft-success, tgs-degradation).
void DeriveClasses(const ScanFacts& facts, TriageReport& r, Analysis& a) {
  const Progress& p = r.progress;
  std::map<std::string, ClassFinding>& found = a.found;
  for (const auto& [id, hits] : facts.classes) {
    const FailureClass* c = FindClass(id);
    found[id] = {id, c ? c->category : Category::kJob, hits.count, hits.first.line, hits.examples};
  }
  auto derive = [&](const std::string& id, std::vector<LineRef> evidence) {
    found[id] = {id, Category::kDerived, 1,
                 evidence.empty() ? std::nullopt : std::optional(evidence[0].line),
                 std::move(evidence)};
  };
  std::vector<LineRef> last_step_evidence;
  if (p.last_step_line) {
    for (const LineRef& ref : facts.tail) {
      if (ref.line == *p.last_step_line) last_step_evidence.push_back(ref);
    }
  }
  // A watchdog inside the job (faulthandler's dump_traceback_later) that
  // fired after the last step saw no progress, whatever the job did next
  // (the watchdog's own exit, a launcher's report of it).
  std::optional<LineRef>& watchdog = a.watchdog;
  // With no step line at all, it fired in the first step. A dump of every
  // thread's stack asked of the live process (faulthandler on a signal)
  // after the last step shows the same: it was there, not stepping.
  if (auto it = facts.classes.find("hang");
      it != facts.classes.end() && (!p.last_step_line || it->second.first.line > *p.last_step_line))
    watchdog = it->second.first;
  else if (facts.stack_dump && p.last_step_line && facts.stack_dump->line > *p.last_step_line)
    watchdog = facts.stack_dump;
  // A cancelled run hung when its steps had stopped before the stop came,
  // not when a rank still finished a step after it.
  const bool stepped_after_the_stop =
      a.root_line > 0 && p.last_step_line && *p.last_step_line > a.root_line;
  a.hang = r.status == JobStatus::kHanging || watchdog ||
           (r.status == JobStatus::kCancelled && (p.stalled || a.clock_stall) &&
            p.last_step.has_value() && !stepped_after_the_stop);
  std::vector<LineRef> hang_evidence = last_step_evidence;
  if (watchdog) hang_evidence.push_back(*watchdog);
  if (a.clock_stall && a.clock_stall->last_stamped) {
    // The stall's evidence: the last step, then the line that shows the
    // process still printing long after it.
    hang_evidence.push_back(*a.clock_stall->last_stamped);
  }
  if (a.hang) derive("hang", hang_evidence);
  if (r.status == JobStatus::kUnknownDeath) derive("unknown-death", last_step_evidence);
  if (r.status == JobStatus::kFailed && (a.reached_end || facts.completion))
    derive("soft-success",
           facts.completion ? std::vector<LineRef>{*facts.completion} : last_step_evidence);
  if (p.tail_slowdown && *p.tail_slowdown > 1.10) derive("tgs-degradation", {});
  if (r.status == JobStatus::kCancelled && !found.count("cancelled") && facts.status_line) {
    found["cancelled"] = {
        "cancelled", Category::kJob, 1, facts.status_line->line, {*facts.status_line}};
  }
}

// A run that restarted within the log (torchrun's --max_restarts, a Slurm
// requeue into the same file) and then stepped on past every failure line:
// the last failure line, as the failures were an earlier attempt's,
// recovered from; nullopt otherwise.
std::optional<uint64_t> RecoveredAfter(const ScanFacts& facts, const Progress& p,
                                       const Analysis& a) {
  std::optional<uint64_t> recovered_after;
  if (a.open_end && p.last_step_line && facts.steps[static_cast<size_t>(a.profile)].repeats() > 0 &&
      !facts.classes.empty()) {
    uint64_t last_failure = 0;
    for (const auto& [id, hits] : facts.classes)
      last_failure = std::max(last_failure, hits.last.line);
    if (last_failure < *p.last_step_line) recovered_after = last_failure;
  }
  return recovered_after;
}

// The log's line `line` of class `id` where the scan kept it (first, last,
// examples), for its text, rank and time.
const LineRef* KeptLine(const ScanFacts& facts, const std::string& id, uint64_t line) {
  auto it = facts.classes.find(id);
  if (it == facts.classes.end()) return nullptr;
  const ClassHits& hits = it->second;
  if (hits.first.line == line) return &hits.first;
  for (const LineRef& ref : hits.examples) {
    if (ref.line == line) return &ref;
  }
  return hits.last.line == line ? &hits.last : nullptr;
}

CausalEvent EventOf(const ScanFacts& facts, EventKind kind, const std::string& id,
                    std::optional<uint64_t> line) {
  CausalEvent e;
  e.kind = kind;
  e.class_id = id;
  e.line = line;
  e.priority = PriorityOf(id);
  if (const FailureClass* c = FindClass(id)) {
    e.generic_class = c->generic && c->category != Category::kDerived;
    auto hits = facts.classes.find(id);
    e.specific_training = !c->generic && c->category == Category::kTraining &&
                          hits != facts.classes.end() && hits->second.first_root.has_value();
  }
  if (const LineRef* ref = line ? KeptLine(facts, id, *line) : nullptr) {
    e.text = ref->text;
    e.time = LineTime(ref->text, facts.timestamp_year);
    if (auto rank = LineRank(ref->text)) e.rank = ToString(*rank);
    // srun's task exit lines name the node and the task
    // (docs/signature-sources.md, "srun task exit lines").
    static const RE2 kSrunTask(R"(srun: error: ([^\s:]+): tasks? (\d+))");
    std::string host, task;
    if (RE2::PartialMatch(ref->text, kSrunTask, &host, &task)) {
      e.host = host;
      if (e.rank.empty()) e.rank = "task " + task;
    }
  }
  return e;
}

// The events the primary is chosen from, in the order they are weighed:
// the log's failure lines by line (a specific signature, a generic failure
// of training, a consequence; none after Slurm's cancel banner but
// consequences, as what follows it is teardown), then the log's end (a
// stall, the planned total reached, the job's end banners, Slurm's word,
// silence), the kernel's OOM kill last.
std::vector<CausalEvent> EventsOf(const ScanFacts& facts, const Analysis& a) {
  std::vector<CausalEvent> events;
  std::optional<uint64_t> end_line;
  if (facts.slurm_end) end_line = facts.slurm_end->line;
  std::set<std::string> specific;
  for (const auto& entry : facts.classes) {
    // Named, not bound: lambdas below capture them (clang 14 cannot capture bindings).
    const std::string& id = entry.first;
    const ClassHits& hits = entry.second;
    const FailureClass* c = FindClass(id);
    if (!c || c->category == Category::kDerived) continue;
    auto before_end = [&](std::optional<uint64_t> line) {
      return line && !(end_line && *line > *end_line);
    };
    // Each weight's first line, with the step lines training printed after
    // it; when training went on after the first, also the last one it did
    // not go on after (a caught exception, then a fatal one of its class).
    auto add = [&](EventKind kind, Weight weight) {
      const std::optional<uint64_t>& first = LinesOf(hits, weight).first;
      if (!before_end(first) && !(kind == EventKind::kConsequence && first)) return false;
      const FatalLine fatal = FatalLineOf(facts, hits, weight, a.profile);
      CausalEvent e = EventOf(facts, kind, id, first);
      e.step_lines_after = fatal.step_lines_after_first;
      e.survived = e.step_lines_after >= kTrainedOnStepLines;
      const bool survived = e.survived;
      events.push_back(std::move(e));
      if (survived && fatal.line && (kind == EventKind::kConsequence || before_end(fatal.line))) {
        CausalEvent last = EventOf(facts, kind, id, fatal.line);
        last.step_lines_after = fatal.step_lines_after;
        events.push_back(std::move(last));
      }
      return true;
    };
    if (add(EventKind::kRootFailure, Weight::kRoot)) specific.insert(id);
    if (IsTrainingClass(*c)) add(EventKind::kFailure, Weight::kGeneric);
    add(EventKind::kConsequence, Weight::kConsequence);
  }
  std::stable_sort(events.begin(), events.end(), [](const CausalEvent& x, const CausalEvent& y) {
    return std::pair{x.line, x.priority} < std::pair{y.line, y.priority};
  });
  auto derived = [&](EventKind kind, const std::string& id) {
    auto it = a.found.find(id);
    std::optional<uint64_t> line = it != a.found.end() ? it->second.first_line : std::nullopt;
    CausalEvent e = EventOf(facts, kind, id, line);
    if (it != a.found.end() && !it->second.evidence.empty() && e.text.empty()) {
      e.text = it->second.evidence.front().text;
      e.time = LineTime(e.text, facts.timestamp_year);
    }
    events.push_back(std::move(e));
  };
  if (a.hang) derived(EventKind::kHang, "hang");
  if (a.found.count("soft-success")) derived(EventKind::kPlannedEnd, "soft-success");
  for (const char* job_level : {"stage-fail", "node-fail", "cancelled"}) {
    if (a.found.count(job_level) && !specific.count(job_level))
      derived(EventKind::kJobEnd, job_level);
  }
  if (const FailureClass* implied = FindClass(a.decision.implied_class)) {
    CausalEvent e = EventOf(facts, EventKind::kSlurmEnd, implied->id, std::nullopt);
    e.generic_class = IsGenericTrainingClass(*implied);
    e.text = a.decision.basis;
    events.push_back(std::move(e));
  }
  if (a.found.count("unknown-death")) derived(EventKind::kUnexplainedEnd, "unknown-death");
  if (!a.oom_kills.empty()) {
    const KernelEvent& kill = a.oom_kills.front()->event;
    CausalEvent e;
    e.kind = EventKind::kKernelOomKill;
    e.class_id = "oom-host";
    e.priority = PriorityOf("oom-host");
    e.time = kill.wall_time;
    e.host = kill.host;
    e.text = kill.text;
    events.push_back(std::move(e));
  }
  return events;
}

// The primary of a failed job from the log: the event of the causal chain
// that explains the others (causal_chain.h's rules); subprocess-fail when
// the job failed and the log shows nothing.
void PrimaryFromTheLog(const ScanFacts& facts, const RulesLeftOut& rules_left_out, TriageReport& r,
                       Analysis& a) {
  std::map<std::string, ClassFinding>& found = a.found;
  r.chain = ReadChain(EventsOf(facts, a), rules_left_out);
  if (!r.chain.primary) {
    a.primary = r.status == JobStatus::kFailed ? "subprocess-fail" : "none";
    return;
  }
  const CausalEvent& primary = r.chain.events[*r.chain.primary];
  a.primary = primary.class_id;
  if (primary.kind == EventKind::kRootFailure || primary.kind == EventKind::kFailure ||
      primary.kind == EventKind::kConsequence)
    a.primary_line = primary.line;
  if (primary.kind == EventKind::kSlurmEnd && !found.count(a.primary)) {
    const FailureClass* c = FindClass(a.primary);
    found[a.primary] = {a.primary, c->category, 1, {}, {}};
  }
  if (primary.kind == EventKind::kKernelOomKill) {
    // The log's own primary, the one the kill explains: what the chain
    // chooses without the kernel's word (weighed last).
    CausalChain log_only =
        ReadChain({r.chain.events.begin(), r.chain.events.end() - 1}, rules_left_out);
    if (log_only.primary) a.kernel_root_over = log_only.events[*log_only.primary].class_id;
    ClassFinding& f = found["oom-host"];
    f.id = "oom-host";
    f.category = Category::kTraining;
    f.count += a.oom_kills.size();
  }
}

// The primary class: none for a completed or running job (or
// tgs-degradation), none for a run that recovered from its failures, else
// the log's (PrimaryFromTheLog); when it struck; then the classes in the
// catalogue's order.
void ChoosePrimary(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                   Analysis& a) {
  const Progress& p = r.progress;
  std::optional<uint64_t> recovered_after = RecoveredAfter(facts, p, a);
  if (recovered_after) {
    r.findings.push_back(fmt::format(
        "The steps restarted within the log and went on to step {} (line {}) after the last "
        "failure line ({}): an earlier attempt failed and the run recovered (elastic restart or "
        "requeue); its failures are listed below",
        p.Printed(*p.last_step), *p.last_step_line, *recovered_after));
  }
  if (r.status == JobStatus::kCompleted || r.status == JobStatus::kRunning || recovered_after) {
    // No event was fatal: the chain lists them without a primary.
    r.chain.events = EventsOf(facts, a);
    if (!r.chain.events.empty()) {
      r.chain.no_primary_because =
          recovered_after ? fmt::format(
                                "the steps went on to step {} (line {}) after every "
                                "failure line: the run recovered from them",
                                p.Printed(*p.last_step), *p.last_step_line)
          : r.status == JobStatus::kCompleted
              ? "the job completed (" + r.status_basis + "): none of them was fatal"
              : "the job is still running: none of them has stopped it";
    }
    const bool ended_well = r.status == JobStatus::kCompleted || r.status == JobStatus::kRunning;
    a.primary = ended_well && a.found.count("tgs-degradation") ? "tgs-degradation" : "none";
  } else {
    PrimaryFromTheLog(facts, context.rules_left_out, r, a);
  }
  if (a.primary == "oom-host" && !a.oom_kills.empty()) {
    // The kill decides no status, but the basis names it (and the log's
    // SIGKILL as its consequence) rather than only what the log ends in.
    const KernelEvent& kill = a.oom_kills.front()->event;
    a.in.kernel_oom_kill = kill.task + (kill.pid ? fmt::format(" (pid {})", *kill.pid) : "");
    StatusDecision named = DecideJobStatus(a.in);
    r.status_basis = named.basis;
  }
  if (a.primary == "hang" && a.watchdog && r.status == JobStatus::kFailed) {
    // It ended by its watchdog's exit: the basis says so, not the traceback of the dump.
    r.status_basis = fmt::format("{}; the program's own watchdog fired {} (line {}) and ended it",
                                 r.status_basis.substr(0, r.status_basis.find(';')),
                                 r.progress.last_step ? "after the last step" : "before any step",
                                 a.watchdog->line);
  }
  r.primary = a.primary;
  if (a.primary != "none") r.failure_time = FailureTime(facts, a.primary, a.primary_line);
  for (const std::string& finding : a.decision.findings) r.findings.push_back(finding);

  for (const FailureClass& c : FailureClasses()) {
    if (auto it = a.found.find(c.id); it != a.found.end()) r.classes.push_back(it->second);
  }
}

// Stage: where in the job's life the primary struck (startup, training
// after step N, the infrastructure's own stage).
void SetStage(TriageReport& r, const Analysis& a) {
  const Progress& p = r.progress;
  const std::string& primary = a.primary;
  const FailureClass* primary_class = FindClass(primary);
  r.stage = primary_class ? primary_class->stage : "";
  if (!p.last_step && primary != "none") {
    r.stage = primary_class && primary_class->category == Category::kInfrastructure
                  ? primary_class->stage
                  : "before the first training step (startup or compilation)";
  } else if (p.last_step && (primary_class && primary_class->stage == "Training")) {
    r.stage = fmt::format("Training (after step {})", p.Printed(*p.last_step));
  }
}

// What happened: the one paragraph that says it, from the primary, the
// status and the progress.
void TellWhatHappened(const ScanFacts& facts, TriageReport& r, Analysis& a) {
  const Progress& p = r.progress;
  const std::string& primary = a.primary;
  std::map<std::string, ClassFinding>& found = a.found;
  const FailureClass* primary_class = FindClass(primary);
  if (primary == "none") {
    if (r.status == JobStatus::kCompleted) {
      r.what_happened =
          fmt::format("The job completed{}.",
                      p.last_step ? fmt::format(" at step {}", p.Printed(*p.last_step)) : "");
    } else if (r.status == JobStatus::kUnknown) {
      r.what_happened =
          "The log stopped without a JOB SUMMARY, a failure or a completion line, and Slurm's "
          "state is not known: jobmon cannot tell a finished job from a dead or silent one.";
    } else if (a.decision.progress_unrecognised) {
      r.what_happened =
          "The job is running, but jobmon recognises no training step in its log, so it cannot "
          "tell progress from a hang (" +
          r.status_basis + ").";
    } else {
      r.what_happened =
          fmt::format("Training is progressing{}.",
                      p.last_step ? fmt::format(" (step {})", p.Printed(*p.last_step)) : "");
    }
  } else if (primary == "hang" && a.watchdog) {
    r.what_happened = fmt::format(
        "Training stopped {}: the program itself shows it waiting, not stepping (line {}: "
        "\"{}\": its watchdog firing, or a dump of every thread's stack that shows where each "
        "rank waits). {}",
        p.last_step ? fmt::format("after step {}", p.Printed(*p.last_step))
                    : std::string("before its first step"),
        a.watchdog->line, WithoutTaskLabel(a.watchdog->text), primary_class->what);
  } else if (primary == "hang") {
    r.what_happened = fmt::format(
        "Training stopped after step {} while the job stayed alive: no step for {} (threshold {}), "
        "expected step by now {}. {}",
        p.last_step ? p.Printed(*p.last_step) : -1,
        FormatDuration(p.seconds_since_last_step.value_or(0)),
        FormatDuration(p.stall_threshold_seconds.value_or(0)),
        p.expected_step_now ? std::to_string(p.Printed(*p.expected_step_now)) : "n/a",
        primary_class->what);
  } else if (primary == "train-timeout" && !a.in.time_limit_signal.empty() &&
             a.decision.implied_class == "train-timeout" && p.last_step && p.total_steps) {
    // It stopped itself on the warning: no cancel, a resubmission to finish.
    r.what_happened = fmt::format(
        "Training stopped on its time-limit warning signal at step {} of {} ({:.1f}%), with a "
        "checkpoint, and exited cleanly: {} steps are left, so the run needs a resubmission (or "
        "a requeue) to finish.",
        p.Printed(*p.last_step), *p.total_steps, p.percent.value_or(0),
        std::max<int64_t>(0, *p.total_steps - 1 - *p.last_step));
    return;
  } else if (primary == "oom-host" && !a.oom_kills.empty()) {
    const KernelFinding& k = *a.oom_kills.front();
    r.what_happened = fmt::format(
        "{} The kernel's OOM killer killed {}{} ({} line {}), matched to this job: {}{}.",
        primary_class->what, k.event.task,
        k.event.pid ? fmt::format(" (pid {})", *k.event.pid) : "",
        k.event.file.empty() ? "kernel log" : k.event.file, k.event.line, k.match.basis,
        k.match.weak ? " (a weak match: confirm it on the node)" : "");
    if (!a.kernel_root_over.empty()) {
      auto it = found.find(a.kernel_root_over);
      std::optional<uint64_t> line = it != found.end() ? it->second.first_line : std::nullopt;
      r.what_happened += fmt::format(" The log's {}{} is its consequence.", a.kernel_root_over,
                                     line ? fmt::format(" (line {})", *line) : "");
    }
  } else {
    const auto& finding = found[primary];
    r.what_happened = primary_class ? primary_class->what : primary;
    std::optional<uint64_t> line = a.primary_line ? a.primary_line : finding.first_line;
    if (line) r.what_happened += fmt::format(" First sign at line {}.", *line);
    if (primary == "python-exception" && facts.first_exception) {
      r.what_happened += fmt::format(" The exception (line {}): {}", facts.first_exception->line,
                                     WithoutTaskLabel(facts.first_exception->text));
    }
  }
  if (r.status == JobStatus::kCancelled && primary != "cancelled") {
    r.what_happened += " The job was then cancelled: cancellation is the mechanism, not the cause.";
  }
}

// Cascade: the other classes in the order the log first showed them,
// after the root cause.
void AddCascade(TriageReport& r, const Analysis& a) {
  const std::string& primary = a.primary;
  const std::map<std::string, ClassFinding>& found = a.found;
  if (found.size() > 1 && primary != "none") {
    std::vector<std::pair<uint64_t, std::string>> order;
    for (const auto& [id, f] : found) {
      if (id != primary && f.first_line && f.category != Category::kDerived)
        order.push_back({*f.first_line, id});
    }
    std::sort(order.begin(), order.end());
    if (!order.empty()) {
      std::string chain;
      for (const auto& [line, id] : order) chain += fmt::format(" → {} (line {})", id, line);
      r.findings.push_back("Cascade after the root cause " + primary + ":" + chain);
    }
  }
}

// Evidence: the primary class's lines (the log's side of a kernel OOM
// kill), the kernel's other findings, then the status line.
void CollectEvidence(const ScanFacts& facts, TriageReport& r, const Analysis& a) {
  if (auto it = a.found.find(a.primary); it != a.found.end()) r.evidence = it->second.evidence;
  if (!a.kernel_root_over.empty()) {
    // The log's side of a kernel OOM kill: the SIGKILL (or what it caused).
    if (auto it = a.found.find(a.kernel_root_over); it != a.found.end())
      r.evidence = it->second.evidence;
  }
  for (const KernelFinding& k : r.kernel) {
    if (k.match.matched && k.event.kind != KernelEventKind::kOomKill) {
      r.findings.push_back(fmt::format("Kernel {} ({} line {}){}: {}", ToString(k.event.kind),
                                       k.event.file.empty() ? "kernel log" : k.event.file,
                                       k.event.line, k.match.weak ? " (unverified)" : "",
                                       k.event.text));
    } else if (!k.match.matched && k.event.kind == KernelEventKind::kOomKill) {
      r.findings.push_back(fmt::format(
          "Kernel OOM kill of {} ({} line {}) not counted: {}", k.event.task,
          k.event.file.empty() ? "kernel log" : k.event.file, k.event.line, k.match.basis));
    }
  }
  if (facts.status_line) r.evidence.push_back(*facts.status_line);
}

// Node exits, decoded: every node's exit code, and whether all were SIGTERM.
void DecodeNodeExits(const ScanFacts& facts, TriageReport& r) {
  bool all_sigterm = !facts.node_exits.empty();
  for (const NodeExit& e : facts.node_exits) {
    r.node_exits.push_back({e.host, e.code, DecodeExitCode(e.code), e.line.line});
    all_sigterm &= e.code == 143;
  }
  if (all_sigterm) r.findings.push_back("Every node exited 143 (SIGTERM): a clean cancellation.");
}

// Heartbeat checklist, log part: whether the accused tasks were really dead.
void AddHeartbeatChecklist(const ScanFacts& facts, TriageReport& r, const Analysis& a) {
  if (facts.heartbeat) r.heartbeat = CheckHeartbeat(facts, r.progress, a.profile);
  r.heartbeat_timeout_seconds = facts.heartbeat_timeout;
}

// Root before launcher: torchrun's summary names the failure its agent saw
// first, often a peer's follow-on exit; the log's own order wins, said in
// a finding for each summary that disagrees with the primary.
void AddLauncherDisagreement(const ScanFacts& facts, TriageReport& r, const Analysis& a) {
  if (!a.primary_line) return;
  const std::string& primary = a.primary;
  for (const ScanFacts::LauncherRootCause& block : facts.launcher_root_causes) {
    if (block.header.line <= *a.primary_line) continue;
    // A block whose traceback names a fatal signal agrees with a
    // signal-kill primary: the same failure, reported later.
    static const RE2 kFatalSignal(R"(Signal \d+ \(SIG(KILL|SEGV|ABRT|BUS|ILL|FPE)\))");
    bool agrees = false;
    for (const LineRef& field : block.fields)
      agrees |= primary == "signal-kill" && RE2::PartialMatch(field.text, kFatalSignal);
    if (agrees) continue;
    std::string named;
    for (const LineRef& field : block.fields) {
      // "  exitcode  : 1 (pid: 7)" -> "exitcode 1 (pid: 7)"; the traceback
      // field only when it names a signal (else it is a docs pointer).
      static const RE2 kField(R"(^\s*(\w+)\s*: (.*)$)");
      std::string key, value;
      if (!RE2::FullMatch(field.text, kField, &key, &value)) continue;
      if (key == "traceback" && value.find("Signal") == std::string::npos) continue;
      named += (named.empty() ? "" : ", ") + key + " " + value;
    }
    r.findings.push_back(fmt::format(
        "torchrun's summary at line {} names as its root cause {}; the log shows the {} at line "
        "{} first, so that is the primary and the summary's root a consequence",
        block.header.line, named.empty() ? "a failure" : "(" + named + ")", primary,
        *a.primary_line));
  }
}

// Additional findings: the other classes, the launcher's disagreement, the
// tail's slowdown, the restore and the steps' repeats, where the tasks
// stopped, the harmless lines ignored.
// Each rank's last step where two or more print their own (rank_progress.h).
void CompareRanks(const ScanFacts& facts, TriageReport& r) {
  const RankProgress& progress = facts.rank_progress;
  if (progress.ranks().size() < 2 && !(progress.folded() && !progress.ranks().empty())) return;
  RankReport ranks;
  ranks.seen = progress.ranks().size();
  for (const auto& [id, last] : progress.ranks()) ranks.lowest.push_back({ToString(id), last});
  std::stable_sort(ranks.lowest.begin(), ranks.lowest.end(), [](const auto& x, const auto& y) {
    return std::pair{x.last.epoch.value_or(0), x.last.step} <
           std::pair{y.last.epoch.value_or(0), y.last.step};
  });
  if (ranks.lowest.size() > RankReport::kShown) ranks.lowest.resize(RankReport::kShown);
  ranks.stopped_first = progress.Stopped();
  ranks.summary = progress.folded() ? std::string(RankProgress::kFoldedNote)
                  : ranks.stopped_first
                      ? RankProgress::Describe(*ranks.stopped_first)
                      : fmt::format(
                            "All {} ranks stopped at the same step {}: a collective "
                            "deadlock, or one rank stuck where the others wait for it in "
                            "the collective (the ranks' wait states tell which)",
                            ranks.seen, ranks.lowest.front().last.step);
  r.ranks = std::move(ranks);
}

void AddFindings(const ScanFacts& facts, TriageReport& r, const Analysis& a) {
  const Progress& p = r.progress;
  for (const ClassFinding& c : r.classes) {
    if (c.id == a.primary) continue;
    r.findings.push_back(fmt::format("{}: {} line(s), first at line {}", c.id, c.count,
                                     c.first_line ? std::to_string(*c.first_line) : "-"));
  }
  AddLauncherDisagreement(facts, r, a);
  if (p.tail_slowdown) {
    r.findings.push_back(fmt::format("Last 10 steps run at {:.2f}x the steady-state step time{}",
                                     *p.tail_slowdown,
                                     *p.tail_slowdown > 1.10 ? " (tgs-degradation)" : ""));
  }
  if (facts.restore_step && p.first_step && *facts.restore_step != *p.first_step - 1) {
    r.findings.push_back(fmt::format("The log says it restored step {}, but the first step is {}",
                                     *facts.restore_step, *p.first_step));
  }
  const StepSeries& series = facts.steps[static_cast<size_t>(a.profile)];
  if (series.repeats() > 0 && facts.last_step_by_task.size() <= 1) {
    r.findings.push_back(fmt::format(
        "{} step line(s) repeated or went backwards (restart within the log?)", series.repeats()));
  }
  // Which rank stopped first matters most where the others then timed out
  // waiting for it; that all stopped at one step, only for a hang.
  if (r.ranks && (r.ranks->stopped_first || a.hang || r.status == JobStatus::kUnknownDeath)) {
    r.findings.push_back(r.ranks->summary);
  }
  if (r.harmless_lines > 0) {
    r.findings.push_back(fmt::format("{} known-harmless line(s) ignored", r.harmless_lines));
  }
}

// Dashboards: the SSH tunnel command the log printed, its head node and
// the Prometheus port.
void ReadDashboards(const ScanFacts& facts, TriageReport& r) {
  if (facts.tunnel) {
    std::string text(WithoutTaskLabel(facts.tunnel->text));
    size_t ssh = text.find("ssh ");
    r.tunnel_command = ssh == std::string::npos ? text : text.substr(ssh);
    size_t at = r.tunnel_command->rfind('@');
    if (at != std::string::npos) {
      r.head_node =
          r.tunnel_command->substr(at + 1, r.tunnel_command->find_first_of(" '\"", at) - at - 1);
    }
    size_t l = r.tunnel_command->find("-L ");
    if (l != std::string::npos) {
      std::string spec =
          r.tunnel_command->substr(l + 3, r.tunnel_command->find(' ', l + 3) - l - 3);
      size_t colon = spec.rfind(':');
      if (colon != std::string::npos) {
        try {
          r.prometheus_port = std::stoi(spec.substr(colon + 1));
        } catch (...) {
        }
      }
    }
  }
  if (facts.prometheus_port) r.prometheus_port = facts.prometheus_port;
}

// Next steps: the primary class's from docs/triage.md's templates, or those
// of a finished, running or unknown job, with the job id filled in.
void SuggestNextSteps(const ScanFacts& facts, TriageReport& r, const Analysis& a) {
  const std::string& primary = a.primary;
  if (const FailureClass* primary_class = FindClass(primary))
    r.next_steps = primary_class->next_steps;
  if (std::vector<std::string> fitted = RuntimeNextSteps(primary, facts.runtimes); !fitted.empty())
    r.next_steps = std::move(fitted);
  // Where to start: the rank of the chain's primary. A traceback names no
  // rank; the launcher's end of the same process (srun's task exit, a
  // failure the primary explains) does.
  if (r.chain.primary) {
    const CausalEvent& first = r.chain.events[*r.chain.primary];
    std::string rank = first.rank, host = first.host;
    bool explains_another = false;
    for (const CausalLink& link : r.chain.links) {
      if (link.cause != r.chain.primary) continue;
      explains_another = true;
      const CausalEvent& effect = r.chain.events[link.effect];
      if (rank.empty() && effect.kind != EventKind::kConsequence && !effect.rank.empty()) {
        rank = effect.rank;
        if (host.empty()) host = effect.host;
      }
    }
    // torch.multiprocessing.spawn reports the process that failed first by
    // its index, which scripts pass as the rank.
    if (rank.empty() && facts.spawn_failed_process)
      rank = std::to_string(*facts.spawn_failed_process);
    if (first.line && !rank.empty())
      r.next_steps.insert(r.next_steps.begin(),
                          FirstFailureStep(rank, host, *first.line, explains_another));
  }
  if (primary == "none" && r.status == JobStatus::kCompleted) r.next_steps = {"No action needed."};
  if (primary == "none" && r.status == JobStatus::kRunning) {
    r.next_steps = {"Keep watching: `jobmon watch <job>` or let slurm_job_monitor follow it."};
  }
  if (primary == "train-timeout" && !a.in.time_limit_signal.empty() &&
      a.decision.implied_class == "train-timeout") {
    const Progress& p = r.progress;
    std::optional<double> left;
    if (p.steady_step_seconds && p.total_steps && p.last_step)
      left = *p.steady_step_seconds *
             static_cast<double>(std::max<int64_t>(0, *p.total_steps - 1 - *p.last_step));
    r.next_steps = {
        "Resubmit the job to resume from its checkpoint (the same batch script), or let it requeue "
        "itself on the warning: `scontrol requeue $SLURM_JOB_ID` in its handler, Lightning's "
        "SLURMEnvironment(auto_requeue=True), submitit's checkpointing.",
        fmt::format("To finish in one allocation, ask for more time (`--time`){}.",
                    left ? fmt::format(": at its pace the remaining steps take about {}",
                                       FormatDuration(*left))
                         : "")};
  }
  if (primary == "none" && a.decision.progress_unrecognised &&
      (r.status == JobStatus::kRunning || r.status == JobStatus::kUnknown)) {
    r.next_steps.push_back(
        "Tell jobmon the step line: `--step-regex '(?P<step>\\d+)...'` or [triage] step_regex in "
        "jobmon.toml.");
  }
  if (r.status == JobStatus::kUnknown) {
    r.next_steps.insert(r.next_steps.begin(),
                        "Give Slurm's view: run where `squeue` answers, or pass `--slurm-state "
                        "STATE --slurm-exit-code A:B` (from `scontrol show job <job>` or sacct).");
  }
  if (r.heartbeat && primary != "heartbeat-timeout") {
    r.next_steps.push_back(
        "A heartbeat timeout followed; see the checklist (likely a consequence).");
  }
  if (r.job_id) {
    for (std::string& step : r.next_steps) {
      for (std::string placeholder : {"<job>", "<id>"}) {
        for (size_t pos = step.find(placeholder); pos != std::string::npos;
             pos = step.find(placeholder, pos + r.job_id->size())) {
          step.replace(pos, placeholder.size(), *r.job_id);
        }
      }
    }
  }
}

}  // namespace

// The phases in order: each decides from what the earlier ones decided.
TriageReport Analyze(const ScanFacts& facts, const AnalysisContext& context) {
  TriageReport r = ReadFacts(facts, context);
  Analysis a;
  r.runtimes = Names(facts.runtimes);
  MatchKernel(facts, context, r, a);
  DecideStatus(facts, context, r, a);
  ReadTheLogsEnd(facts, context, r, a);
  DeriveClasses(facts, r, a);
  ChoosePrimary(facts, context, r, a);
  SetStage(r, a);
  TellWhatHappened(facts, r, a);
  AddCascade(r, a);
  CollectEvidence(facts, r, a);
  DecodeNodeExits(facts, r);
  AddHeartbeatChecklist(facts, r, a);
  CompareRanks(facts, r);
  AddFindings(facts, r, a);
  ReadDashboards(facts, r);
  SuggestNextSteps(facts, r, a);
  return r;
}

}  // namespace jobmon::triage
