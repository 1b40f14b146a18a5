// The report's words on the primary: its stage, what happened, the cascade.

#include <fmt/format.h>

#include <algorithm>

#include "analysis.h"

namespace jobmon::triage::analysis {

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

namespace {

// What happened to a job no class explains: it completed, runs, or is unknown.
std::string NothingFailed(const TriageReport& r, const Analysis& a) {
  const Progress& p = r.progress;
  if (r.status == JobStatus::kCompleted) {
    return fmt::format("The job completed{}.",
                       p.last_step ? fmt::format(" at step {}", p.Printed(*p.last_step)) : "");
  }
  if (r.status == JobStatus::kUnknown) {
    return "The log stopped without a JOB SUMMARY, a failure or a completion line, and Slurm's "
           "state is not known: jobmon cannot tell a finished job from a dead or silent one.";
  }
  if (a.decision.progress_unrecognised) {
    return "The job is running, but jobmon recognises no training step in its log, so it cannot "
           "tell progress from a hang (" +
           r.status_basis + ").";
  }
  return fmt::format("Training is progressing{}.",
                     p.last_step ? fmt::format(" (step {})", p.Printed(*p.last_step)) : "");
}

}  // namespace

// What happened: the one paragraph that says it, from the primary, the
// status and the progress.
void TellWhatHappened(const ScanFacts& facts, TriageReport& r, Analysis& a) {
  const Progress& p = r.progress;
  const std::string& primary = a.primary;
  std::map<std::string, ClassFinding>& found = a.found;
  const FailureClass* primary_class = FindClass(primary);
  if (primary == "none") {
    r.what_happened = NothingFailed(r, a);
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

}  // namespace jobmon::triage::analysis
