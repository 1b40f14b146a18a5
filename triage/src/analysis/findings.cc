// Evidence and findings beside the primary: node exits, the heartbeat
// checklist, ranks, the launcher's disagreement, dashboards.

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>

#include "analysis.h"
#include "jobmon/triage/rank_progress.h"

namespace jobmon::triage::analysis {

namespace {

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

}  // namespace

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

// Additional findings: the other classes, the launcher's disagreement, the
// tail's slowdown, the restore and the steps' repeats, where the tasks
// stopped, the harmless lines ignored.
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

}  // namespace jobmon::triage::analysis
