// The real PyTorch logs of round 2 (tests/fixtures/real/pytorch, README
// table): the earliest real failure beats the launcher's summary
// under each launcher (srun, torchrun, torch.multiprocessing.spawn), the
// log's own clock dates a stall, a loop that ends with its checkpoint is a
// completion, and a run that restarted and went on is not its first
// attempt's failure. Offline: no Slurm, `now` long after the logs.

#include <gtest/gtest.h>

#include <string>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

const std::string kDir = std::string(JOBMON_FIXTURES) + "/real/pytorch/";
constexpr double kLongAfter = 4102444800;  // 2100-01-01

TriageReport Offline(const std::string& name) {
  auto facts = SharedScanner().ScanFile(kDir + name + ".log");
  EXPECT_TRUE(facts) << name;
  AnalysisContext context;
  context.now = kLongAfter;
  return Analyze(*facts, context);
}

bool AnyFindingHas(const TriageReport& r, const std::string& text) {
  for (const std::string& f : r.findings) {
    if (f.find(text) != std::string::npos) return true;
  }
  return false;
}

// glibc's one line before its abort(): the first evidence under every
// launcher, though each launcher's own report comes later and (torchrun)
// names another rank's follow-on exit as the root cause.
TEST(RealRootOrder, GlibcAbortBeatsEveryLaunchersSummary) {
  for (const char* name : {"srun-abort", "torchrun-abort", "torchrun-local-abort", "spawn-abort"}) {
    SCOPED_TRACE(name);
    TriageReport r = Offline(name);
    EXPECT_EQ(r.primary, "signal-kill");
    ASSERT_FALSE(r.evidence.empty());
    EXPECT_NE(r.evidence.front().text.find("free(): invalid pointer"), std::string::npos)
        << r.evidence.front().text;
  }
}

TEST(RealRootOrder, TorchrunsRootCauseBlockIsAFindingWhenTheLogShowsAnEarlierFailure) {
  // One agent, two workers: rank 1 aborts in glibc; the agent records rank
  // 0's exit 1 (its gloo "Connection reset") first and calls it the root.
  TriageReport local = Offline("torchrun-local-abort");
  EXPECT_TRUE(AnyFindingHas(local, "torchrun's summary at line"));
  EXPECT_TRUE(AnyFindingHas(local, "rank 0 (local_rank: 0), exitcode 1"));
  // Two agents: node1's summary names its rank 0's follow-on exit.
  TriageReport two = Offline("torchrun-abort");
  EXPECT_TRUE(AnyFindingHas(two, "exitcode 1"));
  // A segfault without faulthandler: torchrun's summaries are all there is
  // besides the peer's gloo error; the SIGSEGV is still the root.
  EXPECT_EQ(Offline("torchrun-segv").primary, "signal-kill");
}

TEST(RealRootOrder, SrunsTaskLineBeatsThePeersFollowOnErrors) {
  // --kill-on-bad-exit=0: rank 0's gloo traceback comes before srun's
  // report of rank 1's SIGKILL; the traceback is the consequence.
  TriageReport r = Offline("srun-sigkill-no-kill-on-bad-exit");
  EXPECT_EQ(r.primary, "signal-kill");
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_NE(r.evidence.front().text.find("task 1: Killed"), std::string::npos)
      << r.evidence.front().text;
}

TEST(RealRootOrder, SpawnsProcessExitedIsTheRootWhenNothingEarlierExplainsIt) {
  // mp.spawn, segfault without faulthandler: the only words are spawn's.
  TriageReport r = Offline("spawn-segv");
  EXPECT_EQ(r.primary, "signal-kill");
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_NE(r.evidence.front().text.find("terminated with signal SIGSEGV"), std::string::npos);
  // With faulthandler, its own line comes first.
  TriageReport fh = Offline("spawn-segv-faulthandler");
  ASSERT_FALSE(fh.evidence.empty());
  EXPECT_NE(fh.evidence.front().text.find("Fatal Python error: Segmentation fault"),
            std::string::npos);
}

TEST(RealLogClock, StatusLinesThatOutliveTheStepsMeanAHang) {
  // Rank 1 hangs at step 25; rank 0 blocks in the all-reduce while its
  // status thread prints a timestamped line every 15 s for 4 minutes.
  TriageReport r = Offline("spawn-log-clock-hang");
  EXPECT_EQ(r.status, JobStatus::kHanging) << r.status_basis;
  EXPECT_EQ(r.primary, "hang");
  EXPECT_NE(r.status_basis.find("by the log's own clock"), std::string::npos) << r.status_basis;
  bool quoted = false;
  for (const ClassFinding& c : r.classes) {
    if (c.id != "hang") continue;
    for (const LineRef& ref : c.evidence) quoted |= ref.text.find("[status] rank 0 alive") == 20;
  }
  EXPECT_TRUE(quoted) << "the hang's evidence quotes the last status line";
}

TEST(RealLogClock, TimestampsOnlyAtTheEndAreNoStall) {
  // The time-limit banner is the only stamped line after the steps: one
  // stamp cannot date a stall (the job ran healthy steps until then).
  for (const char* name : {"srun-timelimit", "srun-healthy", "srun-exception"}) {
    SCOPED_TRACE(name);
    EXPECT_NE(Offline(name).primary, "hang");
  }
}

TEST(RealCompletion, LoopEndThenCheckpointSaveIsACompletionWithLowerConfidence) {
  TriageReport r = Offline("spawn-nanogpt-complete");
  EXPECT_EQ(r.status, JobStatus::kCompleted) << r.status_basis;
  EXPECT_EQ(r.primary, "none");
  EXPECT_NE(r.status_basis.find("lower confidence"), std::string::npos) << r.status_basis;
}

// What happened after a traceback decides whether it was fatal.
// A caught exception logged with its traceback (logging.exception), then
// 30 more steps and the program's own "training finished" line.
TEST(RealCompletion, ATracebackTheRunSurvivedIsNotItsCause) {
  TriageReport r = Offline("spawn-caught-exception");
  EXPECT_EQ(r.status, JobStatus::kCompleted) << r.status_basis;
  EXPECT_EQ(r.primary, "none");
  EXPECT_TRUE(AnyFindingHas(r, "python-exception at line 13 was survived"));
}

// Progress that reached its plan (`step 40/40`), the final model saved and
// the program's own `done`: completed, without Slurm's word.
TEST(RealCompletion, ProgressThatReachedItsPlanIsACompletion) {
  TriageReport r = Offline("spawn-fraction-complete");
  EXPECT_EQ(r.status, JobStatus::kCompleted) << r.status_basis;
  EXPECT_EQ(r.primary, "none");
}

// A hang seen in the job's own watchdog dump (faulthandler's
// `Timeout (0:00:10)!` after the last step), though the ranks then exited
// and the launcher reported an exit code.
TEST(RealLogClock, AWatchdogThatFiredAfterTheLastStepIsAHang) {
  TriageReport r = Offline("spawn-watchdog-hang");
  EXPECT_EQ(r.primary, "hang");
  // What ended it is the watchdog, not the traceback of its dump.
  EXPECT_NE(r.status_basis.find("own watchdog fired"), std::string::npos) << r.status_basis;
  EXPECT_NE(r.what_happened.find("Timeout (0:00:10)!"), std::string::npos) << r.what_happened;
  // Healthy runs print no watchdog line; a survived one is not a hang.
  EXPECT_NE(Offline("spawn-caught-exception").primary, "hang");
}

TEST(RealRestart, AnAttemptThatFailedAndRestartedIsNotTheRunsFailure) {
  for (const char* name : {"torchrun-elastic-recovered", "srun-requeue"}) {
    SCOPED_TRACE(name);
    TriageReport r = Offline(name);
    EXPECT_EQ(r.primary, "none");
    EXPECT_TRUE(AnyFindingHas(r, "the run recovered"));
  }
  // Every attempt failed: the failure stands.
  EXPECT_EQ(Offline("torchrun-elastic-exhausted").primary, "python-exception");
}

}  // namespace
}  // namespace jobmon::triage
