// The first phases: what was read, the kernel's word, the status decision,
// the log's own end, and the classes seen and derived.

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <ctime>

#include "analysis.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/valid_utf8.h"

namespace jobmon::triage::analysis {

namespace {

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

}  // namespace

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

}  // namespace jobmon::triage::analysis
