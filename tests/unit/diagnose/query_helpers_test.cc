#include <gtest/gtest.h>

#include "counter_reads.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/diagnose/result.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

TEST(QueryHelpers, RateUsesTheContextWindowAndSelector) {
  DiagnoseContext context;
  context.rate_window_seconds = 60;
  EXPECT_EQ(RateExpr("hw_tcp_retransmits_total", context), "rate(hw_tcp_retransmits_total[60s])");
  EXPECT_EQ(RateExpr("hw_tcp_retransmits_total", context, HostSelector({"n1.x", "n2"})),
            R"(rate(hw_tcp_retransmits_total{host=~"n1\\.x|n2"}[60s]))");
  EXPECT_EQ(IncreaseExpr("hw_oom_kills_total", {100, 190.5}), "increase(hw_oom_kills_total[91s])");
  EXPECT_EQ(OverTimeExpr("min", "hw_rdma_port_state", 15, R"(host="n1")"),
            R"(min_over_time(hw_rdma_port_state{host="n1"}[15s]))");
}

TEST(QueryHelpers, StatsInsideARangeAndOutsideCheckpoints) {
  Series s{{{"host", "a"}}, {{10, 1}, {20, 5}, {30, 3}, {40, 100}}};
  auto all = StatsOf(s);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 4u);
  EXPECT_DOUBLE_EQ(all->max, 100);
  auto inside = StatsOf(s, TimeRange{15, 35});
  ASSERT_TRUE(inside);
  EXPECT_DOUBLE_EQ(inside->mean, 4);
  EXPECT_FALSE(StatsOf(s, TimeRange{50, 60}));
  DiagnoseContext context;
  context.checkpoints.push_back({200, {35, 45}});
  auto steady = StatsOf(WithoutCheckpoints(s, context));
  ASSERT_TRUE(steady);
  EXPECT_DOUBLE_EQ(steady->max, 5);
  EXPECT_EQ(FirstTimeAbove(s, 4), 20);
}

TEST(Result, RootCauseIsTheEarliestAnomaly) {
  PlaybookResult r;
  auto finding = [](std::string family, std::optional<double> time) {
    Finding f;
    f.family = std::move(family);
    f.time = time;
    return f;
  };
  r.anomalies.push_back(finding("hw_gpu_power_watts", 200));
  r.anomalies.push_back(finding("hw_tcp_retransmits_total", 150));
  r.anomalies.push_back(finding("note", std::nullopt));
  SetRootCauseAndChain(r);
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->family, "hw_tcp_retransmits_total");
  ASSERT_EQ(r.chain.size(), 1u);
  EXPECT_EQ(r.chain[0].family, "hw_gpu_power_watts");
}

Finding Coded(std::string code, double time) {
  Finding f;
  f.code = std::move(code);
  f.time = time;
  return f;
}

std::vector<std::string> ChainCodes(const PlaybookResult& r) {
  std::vector<std::string> out;
  for (const auto& f : r.chain) out.push_back(f.code);
  return out;
}

TEST(Result, WithinOneStepTheCauseLeadsItsSymptoms) {
  // The playbook's order lists the symptoms first; all dated within one
  // 5 s query step: temperature -> clock -> power -> steps.
  PlaybookResult r;
  for (const char* code : {"step-time-increase", "throughput-drop", "power-drop", "clock-drop"}) {
    r.anomalies.push_back(Coded(code, 100));
  }
  r.anomalies.push_back(Coded("thermal-high", 103));
  SetRootCauseAndChain(r, 5);
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->code, "thermal-high");
  EXPECT_EQ(ChainCodes(r), (std::vector<std::string>{"clock-drop", "power-drop",
                                                     "step-time-increase", "throughput-drop"}));
  EXPECT_EQ(CausalRank("io-pressure"), CausalRank("thermal-high"));
  EXPECT_LT(CausalRank("procs-running"), CausalRank("throughput-drop"));
}

TEST(Result, BeyondOneStepTheEarlierFindingLeadsWhateverItIs) {
  PlaybookResult r;
  r.anomalies.push_back(Coded("step-time-increase", 100));
  r.anomalies.push_back(Coded("thermal-high", 106));
  SetRootCauseAndChain(r, 5);
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->code, "step-time-increase");
  EXPECT_EQ(ChainCodes(r), std::vector<std::string>{"thermal-high"});
  // Without a tolerance only exact ties are reordered.
  r.anomalies = {Coded("throughput-drop", 100), Coded("rdma-retransmits", 100.5)};
  SetRootCauseAndChain(r);
  EXPECT_EQ(r.root_cause->code, "throughput-drop");
}

// A thermal ramp: the power drop is seen as it begins, thermal-high when it
// crosses 95 C three seconds later (diagnose_live's thermal job, under
// load): the drop was named the root cause.
TEST(Result, AGpusPowerDropBeforeItsOwnThermalHighIsItsSymptom) {
  auto on_gpu = [](std::string code, double time, std::string host, std::string gpu) {
    Finding f = Coded(std::move(code), time);
    f.host = std::move(host);
    f.gpu = std::move(gpu);
    return f;
  };
  PlaybookResult r;
  r.anomalies = {Coded("step-time-increase", 111), on_gpu("thermal-high", 103, "node1", "0"),
                 on_gpu("clock-drop", 109, "node1", "0"), on_gpu("power-drop", 100, "node1", "0")};
  SetRootCauseAndChain(r, 1);
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->code, "thermal-high");
  EXPECT_EQ(ChainCodes(r),
            (std::vector<std::string>{"power-drop", "clock-drop", "step-time-increase"}));
  // Another GPU's drop is not explained by it, nor one long before.
  r.anomalies = {on_gpu("power-drop", 100, "node1", "1"),
                 on_gpu("thermal-high", 103, "node1", "0")};
  SetRootCauseAndChain(r, 1);
  EXPECT_EQ(r.root_cause->code, "power-drop");
  r.anomalies = {on_gpu("power-drop", 100, "node1", "0"),
                 on_gpu("thermal-high", 140, "node1", "0")};
  SetRootCauseAndChain(r, 1);
  EXPECT_EQ(r.root_cause->code, "power-drop");
}

TEST(Playbooks, AutoFollowsTheTriageTable) {
  auto names = [](const std::vector<const PlaybookSpec*>& specs) {
    std::vector<std::string> out;
    for (auto* s : specs) out.emplace_back(s->name);
    return out;
  };
  EXPECT_EQ(names(PlaybooksForClass("hang")), std::vector<std::string>{"hang"});
  EXPECT_EQ(names(PlaybooksForClass("unknown-death")),
            (std::vector<std::string>{"oom", "hardware"}));
  EXPECT_EQ(names(PlaybooksForClass("nccl-timeout")), std::vector<std::string>{"network"});
  EXPECT_EQ(names(PlaybooksForClass("completed")),
            (std::vector<std::string>{"gpu", "network", "training"}));
  EXPECT_EQ(FindPlaybook("nope"), nullptr);
}

}  // namespace
}  // namespace jobmon::diagnose

namespace jobmon::diagnose::testing {
namespace {

TEST(CounterReads, OnlyCountersOutsideRateOrIncreaseAreBare) {
  EXPECT_TRUE(BareCounterReads("rate(hw_tcp_retransmits_total[5m])").empty());
  EXPECT_TRUE(BareCounterReads(R"(increase(hw_oom_kills_total{host="a"}[1h]))").empty());
  EXPECT_TRUE(BareCounterReads("hw_gpu_totals_x").empty());
  EXPECT_EQ(BareCounterReads("rate(a_total[1m]) + b:c_total > 0"),
            std::vector<std::string>{"b:c_total"});
  EXPECT_EQ(BareCounterReads("max_over_time(hw_rdma_port_rcv_errors_total[1m])"),
            std::vector<std::string>{"hw_rdma_port_rcv_errors_total"});
}

}  // namespace
}  // namespace jobmon::diagnose::testing
