// Playbook 2: the accused hosts at the heartbeat-stop time (crash - timeout).
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

constexpr double kCrash = 1000, kTimeout = 100, kStop = 900, kEnd = 1000;

struct Job {
  CannedPromSource source;
  DiagnoseContext context = testing::JobContext({"n1", "n2", "n3"}, 0, kEnd);
  double n2_util = 97, n2_io = 1, n2_retx_burst = 0;

  Job() {
    context.triage.primary_class = "heartbeat-timeout";
    context.triage.crash_time = kCrash;
    context.triage.heartbeat_timeout_seconds = kTimeout;
    context.triage.accused_hosts = {"n2", "n3"};
    context.triage.coordinator_host = "n1";
  }
  PlaybookResult Run() {
    std::vector<Series> util, mem, io, dirty, retx;
    for (std::string host : {"n1", "n2", "n3"}) {
      Labels l{{"host", host}};
      bool n2 = host == "n2";
      double u = n2 ? n2_util : 97;
      util.push_back(Shaped({{"host", host}, {"gpu", "0"}}, 0, kEnd, 5,
                            [u](double t) { return t >= 850 ? u : 97.0; }));
      mem.push_back(Constant(l, 0, kEnd, 5, 100e9));
      double i = n2 ? n2_io : 1;
      io.push_back(Shaped(l, 0, kEnd, 5, [i](double t) { return t >= 880 ? i : 1.0; }));
      dirty.push_back(Constant(l, 0, kEnd, 5, 50e6));
      double b = n2 ? n2_retx_burst : 0;
      retx.push_back(
          Shaped(l, 0, kEnd, 5, [b](double t) { return t >= 880 && t <= 920 && b > 0 ? b : 0.1; }));
    }
    // The canned source ignores the host selector: the playbook must still
    // read only the accused hosts it asked for.
    source.Answer("hw_gpu_utilization_percent", util);
    source.Answer("hw_mem_available_bytes", mem);
    source.Answer("hw_io_pressure_full_pct", io);
    source.Answer("hw_mem_dirty_bytes", dirty);
    source.Answer("rate(hw_tcp_retransmits_total", retx);
    source.Answer("increase(hw_tcp_listen_drops_total",
                  {Constant({{"host", "n1"}}, 0, kEnd, 5, 0)});
    auto r = RunHeartbeatPlaybook(source, context);
    testing::ExpectCountersOnlyThroughRateOrIncrease(source.asked());
    EXPECT_TRUE(r.errors.empty());
    return r;
  }
};

bool Asked(const CannedPromSource& source, const std::string& fragment) {
  for (const auto& q : source.asked()) {
    if (q.find(fragment) != std::string::npos) return true;
  }
  return false;
}

TEST(HeartbeatPlaybook, AccusedHostsTrainingWithACleanNetworkIsAFalsePositive) {
  Job job;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "false-positive");
  testing::ExpectNoFault(r);
  EXPECT_TRUE(Asked(job.source, R"(hw_gpu_utilization_percent{host=~"n2|n3"})"));
  EXPECT_TRUE(Asked(job.source, R"(increase(hw_tcp_listen_drops_total{host=~"n1"})"));
  EXPECT_NE(r.summary.find("97%"), std::string::npos) << r.summary << r.verdict;
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_EQ(r.evidence[0].rows.size(), 3u);  // n2, n3 and the coordinator's drops
}

TEST(HeartbeatPlaybook, ARetransmitBurstAtTheStopIsANetworkFalsePositive) {
  Job job;
  job.n2_retx_burst = 40;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "false-positive-network");
  const Finding* f = FindingOf(r, "tcp-retransmits", "n2");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(*f->value, 40);
  EXPECT_DOUBLE_EQ(*f->time, 880);
}

TEST(HeartbeatPlaybook, RetransmitsDuringACheckpointWriteAreNfsNotTheNetwork) {
  Job job;
  job.context.checkpoints.push_back({500, {860, 960}});
  job.n2_retx_burst = 40;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "false-positive-io");
}

TEST(HeartbeatPlaybook, IoPressureAtTheStopIsAnIoFalsePositive) {
  Job job;
  job.n2_io = 45;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "false-positive-io");
  const Finding* f = FindingOf(r, "io-pressure", "n2");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(*f->value, 45);
}

TEST(HeartbeatPlaybook, AnIdleAccusedHostMayReallyHaveDied) {
  Job job;
  job.n2_util = 0;
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "possible-true-positive");
  EXPECT_TRUE(FindingOf(r, "util-low", "n2"));
  EXPECT_FALSE(FindingOf(r, "util-low", "n3"));
}

TEST(HeartbeatPlaybook, GpusWaitingOnACheckpointSaveAreStillAlive) {
  Job job;
  job.context.checkpoints.push_back({500, {840, 960}});
  job.n2_util = 35;  // the save's D2H copy and write
  job.n2_io = 45;
  EXPECT_EQ(job.Run().verdict, "false-positive-io");
  Job dead;
  dead.context.checkpoints.push_back({500, {840, 960}});
  dead.n2_util = 0;
  EXPECT_EQ(dead.Run().verdict, "possible-true-positive");
}

TEST(HeartbeatPlaybook, NoSamplesAtTheStopIsUndetermined) {
  CannedPromSource source;
  auto context = testing::JobContext({"n1"}, 0, kEnd);
  context.triage.heartbeat_stop = kStop;
  EXPECT_EQ(RunHeartbeatPlaybook(source, context).verdict, "undetermined");
}

}  // namespace
}  // namespace jobmon::diagnose
