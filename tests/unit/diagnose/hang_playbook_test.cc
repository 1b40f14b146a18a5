// Playbook 1 against canned series shaped like docs/diagnose.md's table rows.
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

constexpr double kHang = 600, kEnd = 1200;

// The fake trainer's numbers: ~660 W training, ~300 W spinning at 100%;
// 140 W at 0% once its processes are gone. kCancelled: spinning, then
// scancelled at kCancel, with the exporter scraping on to the job's end.
enum class After { kTraining, kBusyWait, kDead, kGone, kCancelled, kIdle };
constexpr double kCancel = 1140;

struct Job {
  CannedPromSource source;
  DiagnoseContext context = testing::JobContext({"n1", "n2"}, 0, kEnd);
  std::vector<Series> power, util;

  Job() {
    context.triage.primary_class = "hang";
    context.triage.hang_start = kHang;
  }
  void Host(const std::string& host, After after) {
    for (std::string gpu : {"0", "1"}) {
      Labels l{{"host", host}, {"gpu", gpu}};
      double end = after == After::kGone ? 700 : kEnd;
      auto released = [after](double t) {
        return after == After::kIdle || (after == After::kCancelled && t >= kCancel);
      };
      power.push_back(Shaped(l, 0, end, 5, [after, released](double t) {
        if (t < kHang + 10 || after == After::kTraining || after == After::kGone) return 660.0;
        if (released(t)) return 140.0;
        return after == After::kDead ? 0.0 : 300.0;
      }));
      util.push_back(Shaped(l, 0, end, 5, [after, released](double t) {
        if (t < kHang + 10 || after == After::kTraining || after == After::kGone) return 97.0;
        if (released(t)) return 0.0;
        return after == After::kDead ? 0.0 : 100.0;
      }));
    }
  }
  PlaybookResult Run() {
    source.Answer("hw_gpu_power_watts", power);
    source.Answer("hw_gpu_utilization_percent", util);
    auto r = RunHangPlaybook(source, context);
    testing::ExpectCountersOnlyThroughRateOrIncrease(source.asked());
    EXPECT_TRUE(r.errors.empty());
    return r;
  }
};

Series QuietRate(const std::string& host) { return Constant({{"host", host}}, 0, kEnd, 5, 0.2); }

TEST(HangPlaybook, BusyAtIdlePowerWithACleanNetworkIsABusyWaitHang) {
  Job job;
  job.Host("n1", After::kBusyWait);
  job.Host("n2", After::kBusyWait);
  job.source.Answer("rate(hw_tcp_retransmits_total", {QuietRate("n1"), QuietRate("n2")});
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "busy-wait-hang");
  const Finding* f = FindingOf(r, "util-high-power-idle", "n2");
  ASSERT_TRUE(f);
  EXPECT_NEAR(*f->value, 300, 1);
  ASSERT_TRUE(f->time);
  EXPECT_GE(*f->time, kHang);
  EXPECT_FALSE(FindingOf(r, "tcp-retransmits"));
  ASSERT_TRUE(r.root_cause);
  EXPECT_NE(r.correlation.find("confirms"), std::string::npos);
}

TEST(HangPlaybook, ARetransmitBurstJustBeforeTheHangIsItsTrigger) {
  Job job;
  job.Host("n1", After::kBusyWait);
  job.Host("n2", After::kBusyWait);
  auto burst = Shaped({{"host", "n2"}}, 0, kEnd, 5,
                      [](double t) { return t >= 570 && t <= 640 ? 50.0 : 0.2; });
  job.source.Answer("rate(hw_tcp_retransmits_total", {QuietRate("n1"), burst});
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "network-triggered-hang");
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->code, "tcp-retransmits");
  EXPECT_EQ(r.root_cause->host, "n2");
  EXPECT_DOUBLE_EQ(*r.root_cause->time, 570);
  EXPECT_FALSE(r.chain.empty());
}

TEST(HangPlaybook, ABurstInsideACheckpointWindowIsNotATrigger) {
  Job job;
  job.context.checkpoints.push_back({400, {560, 650}});
  job.Host("n1", After::kBusyWait);
  job.Host("n2", After::kBusyWait);
  auto burst = Shaped({{"host", "n2"}}, 0, kEnd, 5,
                      [](double t) { return t >= 570 && t <= 640 ? 50.0 : 0.2; });
  job.source.Answer("rate(hw_tcp_retransmits_total", {QuietRate("n1"), burst});
  EXPECT_EQ(job.Run().verdict, "busy-wait-hang");
}

TEST(HangPlaybook, AnRdmaPortDownBeforeTheHangNamesDeviceAndPort) {
  Job job;
  job.Host("n1", After::kBusyWait);
  job.Host("n2", After::kBusyWait);
  job.source.Answer("hw_rdma_port_state",
                    {Shaped({{"host", "n1"}, {"device", "mlx5_1"}, {"port", "1"}}, 0, kEnd, 5,
                            [](double t) { return t >= 590 ? 0.0 : 1.0; })});
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "network-triggered-hang");
  const Finding* f = FindingOf(r, "rdma-port-down", "n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->device, "mlx5_1/1");
  EXPECT_DOUBLE_EQ(*f->time, 590);
}

// The scancel's teardown: idle GPUs for the scrapes up to the job's end say
// how the job ended, not how it hung.
TEST(HangPlaybook, TheIdleScrapesAfterTheCancelOfASpinningJobAreNotItsHang) {
  Job job;
  job.Host("n1", After::kCancelled);
  job.Host("n2", After::kBusyWait);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "busy-wait-hang");
  const Finding* f = FindingOf(r, "util-high-power-idle", "n1");
  ASSERT_TRUE(f);
  EXPECT_NEAR(*f->value, 300, 1);
  EXPECT_TRUE(FindingOf(r, "util-high-power-idle", "n2"));
}

// Idle from computing is a host-side hang, not a teardown: its idle samples
// are judged.
TEST(HangPlaybook, AHostIdleSinceItsLastComputeStaysIdle) {
  Job job;
  job.Host("n1", After::kIdle);
  job.Host("n2", After::kCancelled);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "busy-wait-hang");
  EXPECT_FALSE(FindingOf(r, "util-high-power-idle", "n1"));
  EXPECT_TRUE(FindingOf(r, "util-high-power-idle", "n2"));
}

TEST(HangPlaybook, AHostThatStopsReportingIsANodeDeath) {
  Job job;
  job.Host("n1", After::kBusyWait);
  job.Host("n2", After::kGone);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "node-death");
  const Finding* f = FindingOf(r, "host-missing", "n2");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(*f->time, 700);
}

TEST(HangPlaybook, GpusAtZeroWattsAreANodeDeath) {
  Job job;
  job.Host("n1", After::kBusyWait);
  job.Host("n2", After::kDead);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "node-death");
  EXPECT_TRUE(FindingOf(r, "node-dead", "n2"));
  EXPECT_FALSE(FindingOf(r, "node-dead", "n1"));
}

TEST(HangPlaybook, TrainingPowerEverywhereIsNotAHang) {
  Job job;
  job.Host("n1", After::kTraining);
  job.Host("n2", After::kTraining);
  job.source.Answer("rate(hw_tcp_retransmits_total", {QuietRate("n1"), QuietRate("n2")});
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "not-a-hang");
  testing::ExpectNoFault(r);
  EXPECT_NE(r.correlation.find("refutes"), std::string::npos);
}

TEST(HangPlaybook, OneHostStillComputingIsTheStraggler) {
  Job job;
  job.Host("n1", After::kTraining);
  job.Host("n2", After::kBusyWait);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "straggler");
  EXPECT_TRUE(FindingOf(r, "power-spread", "n1"));
  EXPECT_FALSE(FindingOf(r, "power-spread", "n2"));
}

}  // namespace
}  // namespace jobmon::diagnose
