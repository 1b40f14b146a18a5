#include "jobmon/triage/causal_chain.h"

#include <algorithm>
#include <array>

namespace jobmon::triage {

std::string_view ToString(EventKind kind) {
  switch (kind) {
    case EventKind::kRootFailure:
      return "root-failure";
    case EventKind::kHang:
      return "hang";
    case EventKind::kPlannedEnd:
      return "planned-end";
    case EventKind::kFailure:
      return "failure";
    case EventKind::kJobEnd:
      return "job-end";
    case EventKind::kSlurmEnd:
      return "slurm-end";
    case EventKind::kConsequence:
      return "consequence";
    case EventKind::kUnexplainedEnd:
      return "unexplained-end";
    case EventKind::kKernelOomKill:
      return "kernel-oom-kill";
  }
  return "?";
}

namespace {

using K = EventKind;

bool Is(const CausalEvent& e, std::initializer_list<EventKind> kinds) {
  for (EventKind k : kinds) {
    if (e.kind == k) return true;
  }
  return false;
}

// Of two events of one kind, the earlier line; on one line, the class the
// catalogue ranks first.
bool Earlier(const CausalEvent& a, const CausalEvent& b) {
  if (a.line != b.line) return a.line && (!b.line || *a.line < *b.line);
  return a.priority < b.priority;
}

// What a failing run leaves behind, whatever failed: these never explain
// a failure of a kind above them.
constexpr std::initializer_list<EventKind> kAftermath = {K::kConsequence, K::kUnexplainedEnd};

// Training went on after the effect, not after the cause: what stopped
// training is the cause, whatever its kind.
bool FatalOverSurvived(const CausalEvent& a, const CausalEvent& b) {
  return !a.survived && b.survived;
}

bool KillExplains(const CausalEvent& kill, const CausalEvent& e) {
  if (kill.kind != K::kKernelOomKill || e.kind == K::kKernelOomKill) return false;
  if (!e.specific_training) return true;
  return kill.time && e.time && *kill.time <= *e.time;
}

bool SpecificStandsBeforeKill(const CausalEvent& e, const CausalEvent& kill) {
  return kill.kind == K::kKernelOomKill && e.specific_training && !KillExplains(kill, e);
}

// Slurm's word (TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, an exit code) names the
// cause of a generic end: the traceback a SIGTERM leaves, a SIGKILL, the
// cancel banner. A cancel is a mechanism: it names no rank's own death (a
// SIGABRT, a SIGSEGV) that the log shows.
bool SlurmNamesAGenericEnd(const CausalEvent& a, const CausalEvent& b) {
  if (a.class_id == "cancelled" && b.kind == K::kRootFailure) return false;
  return a.kind == K::kSlurmEnd && !a.generic_class &&
         Is(b, {K::kRootFailure, K::kFailure, K::kJobEnd}) && b.generic_class;
}

bool FirstRootFailure(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kRootFailure && b.kind == K::kRootFailure && Earlier(a, b);
}

bool RootOverWhatFollows(const CausalEvent& a, const CausalEvent& b) {
  if (a.kind != K::kRootFailure) return false;
  if (b.kind == K::kSlurmEnd) return !SlurmNamesAGenericEnd(b, a);
  return Is(
      b, {K::kHang, K::kPlannedEnd, K::kFailure, K::kJobEnd, K::kConsequence, K::kUnexplainedEnd});
}

bool StallOverItsEnd(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kHang && Is(b, {K::kPlannedEnd, K::kFailure, K::kJobEnd, K::kSlurmEnd,
                                      K::kConsequence, K::kUnexplainedEnd});
}

bool PlannedEndOverTeardown(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kPlannedEnd &&
         Is(b, {K::kFailure, K::kJobEnd, K::kSlurmEnd, K::kConsequence, K::kUnexplainedEnd});
}

bool FirstFailure(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kFailure && b.kind == K::kFailure && Earlier(a, b);
}

bool LogOverSlurm(const CausalEvent& a, const CausalEvent& b) {
  return Is(a, {K::kFailure, K::kJobEnd}) && b.kind == K::kSlurmEnd && !SlurmNamesAGenericEnd(b, a);
}

bool FailureOverJobEnd(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kFailure && (b.kind == K::kJobEnd || Is(b, kAftermath));
}

int JobEndRank(const CausalEvent& e) {
  static constexpr std::array<std::string_view, 3> kOrder = {"stage-fail", "node-fail",
                                                             "cancelled"};
  for (size_t i = 0; i < kOrder.size(); ++i) {
    if (e.class_id == kOrder[i]) return static_cast<int>(i);
  }
  return static_cast<int>(kOrder.size());
}

bool JobEndOrder(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kJobEnd && b.kind == K::kJobEnd && JobEndRank(a) < JobEndRank(b);
}

bool EndOverAftermath(const CausalEvent& a, const CausalEvent& b) {
  return Is(a, {K::kJobEnd, K::kSlurmEnd}) && Is(b, kAftermath);
}

bool FirstConsequence(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kConsequence && b.kind == K::kConsequence && Earlier(a, b);
}

bool ConsequenceOverSilence(const CausalEvent& a, const CausalEvent& b) {
  return a.kind == K::kConsequence && b.kind == K::kUnexplainedEnd;
}

}  // namespace

const std::vector<CauseRule>& CauseRules() {
  static const std::vector<CauseRule> kRules = {
      {"fatal-over-survived",
       "training went on after a failure (the log printed steps after it): it was survived, and "
       "an event after which training did not go on explains the end",
       FatalOverSurvived, true},
      {"kill-leaves-these",
       "a kernel OOM kill matched to the job explains what such a kill leaves behind (a SIGKILL, "
       "an exit status, a traceback, a peer's lost connection, the cancel, a time limit, a hang) "
       "and a specific failure it came before by wall-clock time",
       KillExplains},
      {"specific-before-kill",
       "a specific training failure the kill cannot be shown to precede stands; the kill is its "
       "consequence or a coincidence",
       SpecificStandsBeforeKill},
      {"first-of-cascade",
       "the first root signature explains the later ones (one rank's error ends the "
       "collectives the others wait in)",
       FirstRootFailure},
      {"root-over-aftermath",
       "a root signature explains a stop, a generic traceback or exit status, the job's end, "
       "Slurm's state (unless Slurm names the cause of a generic one) and the consequences, "
       "wherever they stand",
       RootOverWhatFollows},
      {"stall-then-end",
       "a run that stopped stepping is then killed or runs out of time: the traceback of its "
       "SIGTERM, the cancel, the time limit follow from the stall",
       StallOverItsEnd},
      {"planned-end-then-teardown",
       "training reached its planned total: what failed after it is teardown",
       PlannedEndOverTeardown},
      {"slurm-names-generic-end",
       "Slurm's word (TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, an exit code) names the cause of a "
       "generic end (the traceback a SIGTERM leaves, a SIGKILL, the cancel banner); a cancel "
       "names no rank's own death the log shows",
       SlurmNamesAGenericEnd},
      {"first-failure", "the first generic failure explains the later ones", FirstFailure},
      {"log-over-slurm",
       "the log's own failure explains Slurm's generic word on the end (FAILED, an exit code)",
       LogOverSlurm},
      {"failure-then-end",
       "a failure of training explains how the job then ended and what the other ranks logged",
       FailureOverJobEnd},
      {"job-end-order",
       "a failed stage ends the job through its nodes; a node's failure, the cancel", JobEndOrder},
      {"end-over-aftermath",
       "how the job ended explains the consequences logged after it and the silence",
       EndOverAftermath},
      {"first-consequence", "of consequences, the first explains the later ones", FirstConsequence},
      {"consequence-over-silence", "a consequence seen explains the end better than no explanation",
       ConsequenceOverSilence},
  };
  return kRules;
}

bool Holds(const CauseRule& rule, const CausalEvent& cause, const CausalEvent& effect) {
  if (!rule.across_fates && cause.survived != effect.survived) return false;
  return rule.explains(cause, effect);
}

const CauseRule* ExplainingRule(const CausalEvent& cause, const CausalEvent& effect,
                                const RulesLeftOut& left_out) {
  for (const CauseRule& rule : CauseRules()) {
    if (std::find(left_out.begin(), left_out.end(), rule.name) != left_out.end()) continue;
    if (Holds(rule, cause, effect)) return &rule;
  }
  return nullptr;
}

CausalChain ReadChain(std::vector<CausalEvent> events, const RulesLeftOut& left_out) {
  auto explaining = [&](const CausalEvent& cause, const CausalEvent& effect) {
    return ExplainingRule(cause, effect, left_out);
  };
  CausalChain chain;
  chain.events = std::move(events);
  const std::vector<CausalEvent>& e = chain.events;
  for (size_t i = 0; i < e.size(); ++i) {
    if (!chain.primary || explaining(e[i], e[*chain.primary])) chain.primary = i;
  }
  if (!chain.primary) return chain;
  const size_t primary = *chain.primary;
  for (size_t i = 0; i < e.size(); ++i) {
    if (i == primary) continue;
    CausalLink link{i, std::nullopt, {}};
    if (const CauseRule* rule = explaining(e[primary], e[i])) {
      link = {i, primary, rule->name};
    } else {
      // Through an event the primary explains.
      for (size_t j = 0; j < e.size() && !link.cause; ++j) {
        if (j == i || j == primary || !explaining(e[primary], e[j])) continue;
        if (const CauseRule* through = explaining(e[j], e[i])) link = {i, j, through->name};
      }
    }
    chain.links.push_back(link);
  }
  return chain;
}

}  // namespace jobmon::triage
