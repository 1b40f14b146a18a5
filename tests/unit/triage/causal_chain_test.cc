// The causal chain's rules one by one (causal_chain.h), then how the chain
// picks its primary and links every other event to it, then the chain on
// real logs: the primary it rests on is the report's.

#include "jobmon/triage/causal_chain.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jobmon/triage/triage.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

CausalEvent Event(EventKind kind, std::string id, std::optional<uint64_t> line = std::nullopt) {
  CausalEvent e;
  e.kind = kind;
  e.class_id = std::move(id);
  e.line = line;
  return e;
}

CausalEvent Generic(CausalEvent e) {
  e.generic_class = true;
  return e;
}

CausalEvent Specific(CausalEvent e, std::optional<double> time = std::nullopt) {
  e.specific_training = true;
  e.time = time;
  return e;
}

std::string RuleOf(const CausalEvent& cause, const CausalEvent& effect) {
  const CauseRule* rule = ExplainingRule(cause, effect);
  return rule ? std::string(rule->name) : "";
}

const CausalEvent kKill = [] {
  CausalEvent e = Event(EventKind::kKernelOomKill, "oom-host");
  e.time = 1000;
  return e;
}();

TEST(CauseRule, KillLeavesASigkillAndAGenericTraceback) {
  EXPECT_EQ(RuleOf(kKill, Generic(Event(EventKind::kRootFailure, "signal-kill", 40))),
            "kill-leaves-these");
  EXPECT_EQ(RuleOf(kKill, Generic(Event(EventKind::kFailure, "python-exception", 30))),
            "kill-leaves-these");
  EXPECT_EQ(RuleOf(kKill, Event(EventKind::kHang, "hang")), "kill-leaves-these");
}

TEST(CauseRule, KillExplainsASpecificFailureOnlyWhenItCameFirst) {
  CausalEvent later = Specific(Event(EventKind::kRootFailure, "nccl-timeout", 50), 1060);
  CausalEvent earlier = Specific(Event(EventKind::kRootFailure, "config-error", 5), 900);
  CausalEvent undated = Specific(Event(EventKind::kRootFailure, "config-error", 5));
  EXPECT_EQ(RuleOf(kKill, later), "kill-leaves-these");
  EXPECT_EQ(RuleOf(kKill, earlier), "");
  EXPECT_EQ(RuleOf(earlier, kKill), "specific-before-kill");
  EXPECT_EQ(RuleOf(kKill, undated), "");
  EXPECT_EQ(RuleOf(undated, kKill), "specific-before-kill");
  EXPECT_EQ(RuleOf(later, kKill), "");
}

TEST(CauseRule, FirstRootSignatureExplainsTheLaterOnes) {
  CausalEvent first = Event(EventKind::kRootFailure, "config-error", 10);
  CausalEvent then = Event(EventKind::kRootFailure, "nccl-timeout", 90);
  EXPECT_EQ(RuleOf(first, then), "first-of-cascade");
  EXPECT_EQ(RuleOf(then, first), "");
  // One line, two classes: the catalogue's order.
  CausalEvent a = Event(EventKind::kRootFailure, "a", 10),
              b = Event(EventKind::kRootFailure, "b", 10);
  a.priority = 1;
  b.priority = 2;
  EXPECT_EQ(RuleOf(a, b), "first-of-cascade");
  EXPECT_EQ(RuleOf(b, a), "");
}

TEST(CauseRule, RootExplainsWhatFollowsWhereverItStands) {
  CausalEvent root = Event(EventKind::kRootFailure, "config-error", 90);
  for (EventKind kind : {EventKind::kHang, EventKind::kPlannedEnd, EventKind::kFailure,
                         EventKind::kJobEnd, EventKind::kConsequence, EventKind::kUnexplainedEnd}) {
    EXPECT_EQ(RuleOf(root, Event(kind, "x", 10)), "root-over-aftermath") << ToString(kind);
    EXPECT_EQ(RuleOf(Event(kind, "x", 10), root), "") << ToString(kind);
  }
  EXPECT_EQ(RuleOf(root, Event(EventKind::kSlurmEnd, "train-timeout")), "root-over-aftermath");
}

TEST(CauseRule, StallExplainsItsEndButNotARoot) {
  CausalEvent hang = Event(EventKind::kHang, "hang", 40);
  EXPECT_EQ(RuleOf(hang, Generic(Event(EventKind::kFailure, "python-exception", 60))),
            "stall-then-end");
  EXPECT_EQ(RuleOf(hang, Generic(Event(EventKind::kJobEnd, "cancelled", 61))), "stall-then-end");
  EXPECT_EQ(RuleOf(hang, Event(EventKind::kSlurmEnd, "train-timeout")), "stall-then-end");
  EXPECT_EQ(RuleOf(hang, Event(EventKind::kRootFailure, "nccl-timeout", 60)), "");
}

TEST(CauseRule, PlannedEndExplainsTeardown) {
  CausalEvent done = Event(EventKind::kPlannedEnd, "soft-success", 100);
  EXPECT_EQ(RuleOf(done, Generic(Event(EventKind::kFailure, "python-exception", 101))),
            "planned-end-then-teardown");
  EXPECT_EQ(RuleOf(done, Event(EventKind::kHang, "hang")), "");
}

TEST(CauseRule, SlurmNamesAGenericEndButNotASpecificOne) {
  CausalEvent timeout = Event(EventKind::kSlurmEnd, "train-timeout");
  CausalEvent traceback = Generic(Event(EventKind::kFailure, "python-exception", 70));
  CausalEvent sigkill = Generic(Event(EventKind::kRootFailure, "signal-kill", 70));
  CausalEvent specific = Event(EventKind::kFailure, "oom-gpu", 70);
  EXPECT_EQ(RuleOf(timeout, traceback), "slurm-names-generic-end");
  EXPECT_EQ(RuleOf(timeout, sigkill), "slurm-names-generic-end");
  EXPECT_EQ(RuleOf(sigkill, timeout), "");
  EXPECT_EQ(RuleOf(timeout, specific), "");
  EXPECT_EQ(RuleOf(specific, timeout), "log-over-slurm");
  // A cancel is the mechanism: it names a SIGTERM's traceback, not a rank's own death.
  CausalEvent cancel = Event(EventKind::kSlurmEnd, "cancelled");
  EXPECT_EQ(RuleOf(cancel, traceback), "slurm-names-generic-end");
  EXPECT_EQ(RuleOf(cancel, sigkill), "");
  EXPECT_EQ(RuleOf(sigkill, cancel), "root-over-aftermath");
  // Slurm's own generic word (an exit code: subprocess-fail) names nothing.
  CausalEvent exit_code = Generic(Event(EventKind::kSlurmEnd, "subprocess-fail"));
  EXPECT_EQ(RuleOf(exit_code, traceback), "");
  EXPECT_EQ(RuleOf(traceback, exit_code), "log-over-slurm");
}

TEST(CauseRule, GenericFailuresByLineThenTheJobsEnd) {
  CausalEvent first = Event(EventKind::kFailure, "python-exception", 20);
  CausalEvent second = Event(EventKind::kFailure, "subprocess-fail", 30);
  EXPECT_EQ(RuleOf(first, second), "first-failure");
  EXPECT_EQ(RuleOf(second, first), "");
  EXPECT_EQ(RuleOf(second, Event(EventKind::kJobEnd, "cancelled", 10)), "failure-then-end");
  EXPECT_EQ(RuleOf(second, Event(EventKind::kConsequence, "nccl-timeout", 5)), "failure-then-end");
}

TEST(CauseRule, JobEndsInTheirOwnOrder) {
  CausalEvent stage = Event(EventKind::kJobEnd, "stage-fail", 50);
  CausalEvent node = Event(EventKind::kJobEnd, "node-fail", 40);
  CausalEvent cancel = Event(EventKind::kJobEnd, "cancelled", 30);
  EXPECT_EQ(RuleOf(stage, node), "job-end-order");
  EXPECT_EQ(RuleOf(node, cancel), "job-end-order");
  EXPECT_EQ(RuleOf(cancel, stage), "");
  EXPECT_EQ(RuleOf(cancel, Event(EventKind::kConsequence, "x", 1)), "end-over-aftermath");
  EXPECT_EQ(
      RuleOf(Event(EventKind::kSlurmEnd, "node-fail"), Event(EventKind::kUnexplainedEnd, "u")),
      "end-over-aftermath");
}

TEST(CauseRule, ConsequencesByLineThenSilence) {
  CausalEvent first = Event(EventKind::kConsequence, "nccl-timeout", 20);
  CausalEvent then = Event(EventKind::kConsequence, "signal-kill", 21);
  EXPECT_EQ(RuleOf(first, then), "first-consequence");
  EXPECT_EQ(RuleOf(then, Event(EventKind::kUnexplainedEnd, "unknown-death")),
            "consequence-over-silence");
  EXPECT_EQ(RuleOf(Event(EventKind::kUnexplainedEnd, "unknown-death"), then), "");
}

// No pair explains the other both ways, and at most one rule holds for a pair.
TEST(CauseRule, NoPairBothWaysAndOneRuleAPair) {
  std::vector<CausalEvent> grid = {kKill};
  uint64_t line = 1;
  for (EventKind kind : {EventKind::kRootFailure, EventKind::kHang, EventKind::kPlannedEnd,
                         EventKind::kFailure, EventKind::kJobEnd, EventKind::kSlurmEnd,
                         EventKind::kConsequence, EventKind::kUnexplainedEnd}) {
    for (bool generic : {false, true}) {
      for (bool specific : {false, true}) {
        CausalEvent e = Event(kind, kind == EventKind::kJobEnd ? "cancelled" : "c", line++);
        e.generic_class = generic;
        e.specific_training = specific && !generic;
        e.time =
            specific ? std::optional<double>(900 + 20 * static_cast<double>(line)) : std::nullopt;
        grid.push_back(e);
      }
    }
  }
  for (const CausalEvent& a : grid) {
    for (const CausalEvent& b : grid) {
      int holding = 0;
      for (const CauseRule& rule : CauseRules()) holding += Holds(rule, a, b);
      EXPECT_LE(holding, 1) << ToString(a.kind) << " " << ToString(b.kind);
      if (&a != &b) {
        EXPECT_FALSE(ExplainingRule(a, b) && ExplainingRule(b, a))
            << ToString(a.kind) << " " << ToString(b.kind);
      }
    }
  }
}

TEST(CausalChain, OneRanksEarlyErrorExplainsEveryOthersTimeout) {
  CausalEvent timeout0 = Event(EventKind::kConsequence, "nccl-timeout", 80);
  timeout0.rank = "rank 0";
  CausalEvent error3 = Event(EventKind::kRootFailure, "config-error", 12);
  error3.rank = "rank 3";
  CausalChain chain =
      ReadChain({timeout0, Event(EventKind::kConsequence, "nccl-timeout", 81), error3,
                 Generic(Event(EventKind::kFailure, "subprocess-fail", 90))});
  ASSERT_TRUE(chain.primary);
  EXPECT_EQ(chain.events[*chain.primary].rank, "rank 3");
  ASSERT_EQ(chain.links.size(), 3u);
  for (const CausalLink& link : chain.links) EXPECT_EQ(link.cause, chain.primary);
}

TEST(CausalChain, TheKillWeighedLastTakesOverWhatItLeaves) {
  CausalChain chain = ReadChain({Generic(Event(EventKind::kRootFailure, "signal-kill", 40)),
                                 Generic(Event(EventKind::kJobEnd, "cancelled", 41)), kKill});
  ASSERT_TRUE(chain.primary);
  EXPECT_EQ(chain.events[*chain.primary].kind, EventKind::kKernelOomKill);
  // A config error before the kill stands.
  chain = ReadChain({Specific(Event(EventKind::kRootFailure, "config-error", 5), 900), kKill});
  EXPECT_EQ(chain.events[*chain.primary].class_id, "config-error");
  ASSERT_EQ(chain.links.size(), 1u);
  EXPECT_EQ(chain.links[0].rule, "specific-before-kill");
}

TEST(CausalChain, ARuleLeftOutExplainsNothing) {
  // What the leave-one-family-out evaluation reads with (tests/eval/).
  const std::vector<CausalEvent> events = {
      Specific(Event(EventKind::kRootFailure, "config-error", 5), 900), kKill};
  EXPECT_EQ(ReadChain(events).events[*ReadChain(events).primary].class_id, "config-error");
  CausalChain without = ReadChain(events, {"specific-before-kill"});
  ASSERT_EQ(without.links.size(), 1u);
  EXPECT_FALSE(without.links[0].cause) << "without its rule nothing explains the later kill";
  EXPECT_EQ(ExplainingRule(events[0], events[1], {"specific-before-kill"}), nullptr);
}

TEST(CausalChain, LinksThroughAnEventThePrimaryExplains) {
  // The kill explains the SIGKILL; the SIGKILL is the first of a cascade whose later root
  // signature is a specific, dated one the kill came after.
  CausalEvent sigkill = Generic(Event(EventKind::kRootFailure, "signal-kill", 40));
  CausalEvent later = Specific(Event(EventKind::kRootFailure, "nccl-timeout", 50), 800);
  CausalChain chain = ReadChain({sigkill, later, kKill});
  ASSERT_TRUE(chain.primary);
  EXPECT_EQ(*chain.primary, 2u);
  ASSERT_EQ(chain.links.size(), 2u);
  EXPECT_EQ(chain.links[0].cause, chain.primary);
  EXPECT_EQ(chain.links[1].cause, std::optional<size_t>(0));
  EXPECT_EQ(chain.links[1].rule, "first-of-cascade");
  chain = ReadChain({sigkill, Event(EventKind::kConsequence, "peer-lost", 60), kKill});
  EXPECT_EQ(*chain.primary, 2u);
  for (const CausalLink& link : chain.links) EXPECT_EQ(link.cause, chain.primary);
}

TEST(CausalChain, NothingToWeighNoPrimary) {
  CausalChain chain = ReadChain({});
  EXPECT_FALSE(chain.primary);
  EXPECT_TRUE(chain.links.empty());
}

// On the real logs: the chain's primary is the report's, and every other
// event is linked to an explanation.
TEST(CausalChain, RealLogsRestOnTheChain) {
  const std::string dir = std::string(JOBMON_FIXTURES) + "/real/pytorch/";
  for (const char* name :
       {"srun-gloo-timeout", "srun-worker-oom", "spawn-watchdog-hang", "torchrun-elastic-recovered",
        "spawn-caught-exception", "srun-timelimit"}) {
    auto facts = SharedScanner().ScanFile(dir + name + ".log");
    if (!facts) {
      ADD_FAILURE() << name;
      continue;
    }
    AnalysisContext context;
    context.now = 4102444800;
    TriageReport r = Analyze(*facts, context);
    if (r.primary == "none") {
      EXPECT_FALSE(r.chain.primary) << name;
      EXPECT_TRUE(r.chain.events.empty() || !r.chain.no_primary_because.empty()) << name;
      continue;
    }
    ASSERT_TRUE(r.chain.primary) << name;
    EXPECT_EQ(r.chain.events[*r.chain.primary].class_id, r.primary) << name;
    for (const CausalLink& link : r.chain.links) EXPECT_TRUE(link.cause) << name;
  }
}

// Training went on after a failure: it was survived, and the failure it
// did not go on after is the cause, even of the same class.
TEST(CausalChain, ASurvivedFailureIsNotTheCause) {
  const std::string dir = std::string(JOBMON_FIXTURES) + "/real/pytorch/";
  auto analyze = [&](const char* name) {
    auto facts = SharedScanner().ScanFile(dir + name + ".log");
    EXPECT_TRUE(facts) << name;
    AnalysisContext context;
    context.now = 4102444800;
    return facts ? Analyze(*facts, context) : TriageReport{};
  };
  TriageReport raise = analyze("spawn-caught-oom-then-raise");
  EXPECT_EQ(raise.primary, "python-exception");
  EXPECT_EQ(raise.status, JobStatus::kFailed) << raise.status_basis;
  ASSERT_FALSE(raise.chain.events.empty());
  EXPECT_EQ(raise.chain.events[0].class_id, "oom-host");
  EXPECT_TRUE(raise.chain.events[0].survived);
  EXPECT_GE(raise.chain.events[0].step_lines_after, 20u);
  EXPECT_EQ(raise.chain.links[0].rule, "fatal-over-survived");

  TriageReport hang = analyze("spawn-caught-then-watchdog-hang");
  EXPECT_EQ(hang.primary, "hang");
  EXPECT_EQ(hang.status, JobStatus::kFailed) << hang.status_basis;
  int tracebacks = 0, survived = 0;
  for (const CausalEvent& e : hang.chain.events) {
    tracebacks += e.class_id == "python-exception";
    survived += e.survived;
  }
  EXPECT_EQ(tracebacks, 2) << "the caught one and spawn's";
  EXPECT_EQ(survived, 1);
}

// A lead rank that lagged two steps behind the rank that failed logs those
// steps after the failure: catching up is not training going on after it.
// Steps past the failing rank's last one are.
TEST(CausalChain, ALaggingLeadRankCatchingUpDoesNotSurviveAFailure) {
  auto log = [](int lead_steps_after) {
    std::string text =
        "0: [fake-trainer] task 0 on host node001 (process 0 of 2)\n"
        "1: [fake-trainer] task 1 on host node002 (process 1 of 2)\n";
    auto step = [&](int rank, int n) {
      text += std::to_string(rank) + ": completed step: " + std::to_string(n) +
              ", seconds: 1.000, TFLOP/s/device: 400.000, MFU: 30.00%, Tokens/s/device: 8000.000, "
              "loss: 2.500\n";
    };
    for (int n = 0; n <= 149; ++n) {
      step(1, n);
      if (n <= 147) step(0, n);
    }
    text += "1: Out of memory: Killed process 4242 (python3) total-vm:812345678kB\n";
    for (int n = 148; n < 148 + lead_steps_after; ++n) step(0, n);
    text += "0: node001:4000:4100 [0] NCCL WARN Timeout waiting for peer in all-reduce\n";
    auto facts = SharedScanner().ScanText(text);
    EXPECT_TRUE(facts);
    AnalysisContext context;
    context.now = 4102444800;
    return facts ? Analyze(*facts, context) : TriageReport{};
  };
  EXPECT_EQ(log(2).primary, "oom-host") << "steps 148 and 149 had been logged by rank 1";
  EXPECT_EQ(log(0).primary, "oom-host");
  EXPECT_EQ(log(5).primary, "nccl-timeout") << "steps 150 to 152 are past the failure";
}

}  // namespace
}  // namespace jobmon::triage
