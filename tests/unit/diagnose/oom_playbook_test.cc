// Playbook 3: memory trajectories (ramp, spike, checkpoint saves) and kills.
#include <gtest/gtest.h>

#include "canned_prom_source.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbook_test_support.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Constant;
using testing::FindingOf;
using testing::Shaped;

constexpr double kEnd = 3600, kGiB = 1024.0 * 1024 * 1024;

struct Job {
  CannedPromSource source;
  DiagnoseContext context = testing::JobContext({"n1", "n2"}, 0, kEnd);
  std::function<double(double)> n1 = [](double) { return 100 * kGiB; };
  double kills = 0, kill_time = 0;

  Job() {
    context.triage.primary_class = "oom-host";
    for (double start : {900.0, 1800.0, 2700.0, 3400.0}) {
      context.checkpoints.push_back({static_cast<int64_t>(start / 10), {start, start + 100}});
    }
  }
  PlaybookResult Run() {
    source.Answer("hw_mem_available_bytes", {Shaped({{"host", "n1"}}, 0, kEnd, 15, n1),
                                             Constant({{"host", "n2"}}, 0, kEnd, 15, 100 * kGiB)});
    source.Answer("increase(hw_oom_kills_total", {Constant({{"host", "n1"}}, 0, kEnd, 15, kills),
                                                  Constant({{"host", "n2"}}, 0, kEnd, 15, 0)});
    double k = kill_time;
    source.Answer("rate(hw_oom_kills_total", {Shaped({{"host", "n1"}}, 0, kEnd, 15, [k](double t) {
                    return k > 0 && t >= k ? 0.01 : 0.0;
                  })});
    source.Answer("hw_io_pressure_full_pct", {Constant({{"host", "n1"}}, 0, kEnd, 15, 30)});
    auto r = RunOomPlaybook(source, context);
    testing::ExpectCountersOnlyThroughRateOrIncrease(source.asked());
    EXPECT_TRUE(r.errors.empty());
    return r;
  }
};

// The checkpoint dips of a healthy job: 40 GiB for the save, then back.
double CheckpointDips(double t) {
  for (double start : {900.0, 1800.0, 2700.0, 3400.0}) {
    if (t >= start + 15 && t <= start + 75) return 60 * kGiB;
  }
  return 100 * kGiB;
}

TEST(OomPlaybook, AGradualRampToTheKillIsALeak) {
  Job job;
  job.n1 = [](double t) {
    return t < 600 ? 100 * kGiB : 100 * kGiB - (t - 600) / 2900 * 98 * kGiB;
  };
  job.kills = 1;
  job.kill_time = 3500;
  job.context.checkpoints.clear();
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "gradual-ramp");
  const Finding* ramp = FindingOf(r, "host-memory-ramp", "n1");
  ASSERT_TRUE(ramp);
  ASSERT_TRUE(ramp->time);
  EXPECT_GT(*ramp->time, 600);
  EXPECT_LT(*ramp->time, 1200);  // where it began, not where it ended
  const Finding* kill = FindingOf(r, "oom-kill", "n1");
  ASSERT_TRUE(kill);
  EXPECT_NEAR(*kill->time, 3500, 15);
  EXPECT_FALSE(FindingOf(r, "oom-kill", "n2"));
  EXPECT_EQ(r.root_cause->code, "host-memory-ramp");
  EXPECT_TRUE(FindingOf(r, "io-pressure", "n1"));  // what else moved, for the chain
}

TEST(OomPlaybook, ASuddenDropOutsideCheckpointsIsASpike) {
  Job job;
  job.n1 = [](double t) { return t < 3000 ? 100 * kGiB : 1 * kGiB; };
  job.kills = 2;
  job.kill_time = 3015;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "sudden-spike");
  const Finding* spike = FindingOf(r, "host-memory-spike", "n1");
  ASSERT_TRUE(spike);
  EXPECT_NEAR(*spike->time, 3000, 15);
}

// The log's failure line can precede the scrape that carries the kernel's
// count: a kill counted 10 s after the crash time is still this job's.
TEST(OomPlaybook, AKillScrapedJustAfterTheCrashTimeCounts) {
  Job job;
  job.n1 = [](double t) { return t < 3000 ? 100 * kGiB : 1 * kGiB; };
  job.context.triage.crash_time = 3300;
  job.context.scrape_interval_seconds = 5;
  // Counted from 3310 on: the instant increase answers 0 at the crash time.
  job.source.Answer("increase(hw_oom_kills_total",
                    {testing::Shaped({{"host", "n1"}}, 0, kEnd, 5,
                                     [](double t) { return t >= 3310 ? 1.0 : 0.0; })});
  job.kill_time = 3310;
  auto r = job.Run();
  EXPECT_TRUE(FindingOf(r, "oom-kill", "n1"));
}

TEST(OomPlaybook, ACheckpointSaveThatReachesTheLimitIsACheckpointOom) {
  Job job;
  job.n1 = [](double t) { return t >= 3415 && t <= 3475 ? 0.5 * kGiB : CheckpointDips(t); };
  job.kills = 1;
  job.kill_time = 3430;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "checkpoint-oom");
  EXPECT_TRUE(FindingOf(r, "checkpoint-step", "n1"));
}

TEST(OomPlaybook, CheckpointDipsThatRecoverAreNoOomEvidence) {
  Job job;
  job.n1 = CheckpointDips;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "no-oom-evidence");
  testing::ExpectNoFault(r);
  const Finding* f = FindingOf(r, "checkpoint-step", "n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kInfo);
}

TEST(OomPlaybook, NoMemorySeriesIsUndetermined) {
  CannedPromSource source;
  EXPECT_EQ(RunOomPlaybook(source, testing::JobContext({"n1"}, 0, kEnd)).verdict, "undetermined");
}

}  // namespace
}  // namespace jobmon::diagnose
