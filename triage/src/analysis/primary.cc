// The primary class: the causal chain's events, read from the log, and
// the one that explains the others.

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <set>

#include "analysis.h"
#include "jobmon/triage/causal_chain.h"

namespace jobmon::triage::analysis {

namespace {

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

// The kernel's OOM kill of the job's process, as the chain weighs it.
CausalEvent KernelOomEvent(const KernelEvent& kill) {
  CausalEvent e;
  e.kind = EventKind::kKernelOomKill;
  e.class_id = "oom-host";
  e.priority = PriorityOf("oom-host");
  e.time = kill.wall_time;
  e.host = kill.host;
  e.text = kill.text;
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
  if (!a.oom_kills.empty()) events.push_back(KernelOomEvent(a.oom_kills.front()->event));
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

}  // namespace

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

}  // namespace jobmon::triage::analysis
