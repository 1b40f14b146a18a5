// Playbook 6 on canned rates: a clean job, TCP retransmits only during
// checkpoint writes (expected) and the same outside them, a port down with
// retransmits on it, and the exclusion ranking of several faulty nodes.
#include <gtest/gtest.h>

#include <algorithm>

#include "canned_prom_source.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbook_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Flat;
using testing::Over;

const Labels kN1{{"host", "n1"}}, kN2{{"host", "n2"}};
const Labels kPort1{{"host", "n2"}, {"device", "mlx5_1"}, {"port", "1"}};
const Labels kPort0{{"host", "n2"}, {"device", "mlx5_0"}, {"port", "1"}};

// A clean network; rules added before these win (first match answers).
void Clean(CannedPromSource& source) {
  source.Answer("rate(hw_tcp_retransmits_total", {Flat(kN1, 0.5), Flat(kN2, 0.2)});
  source.Answer("rate(hw_rdma_", {Flat(kPort0, 0), Flat(kPort1, 0)});
  source.Answer("rate(hw_net_", {Flat(kN1, 0), Flat(kN2, 0)});
  source.Answer("rate(hw_tcp_abort_on_timeout_total", {Flat(kN1, 0), Flat(kN2, 0)});
  source.Answer("hw_rdma_port_state", {Flat(kPort0, 1), Flat(kPort1, 1)});
}

std::vector<std::string> Codes(const PlaybookResult& r) {
  std::vector<std::string> out;
  for (const auto& f : r.anomalies) out.push_back(f.code);
  return out;
}

// TCP at 800/s from scrape `from` for 6 scrapes (a 60 s rate window after a
// 30 s checkpoint write spans 6 scrapes of 15 s).
Series Burst(const Labels& l, int from) {
  return Over(l, [=](int i) { return i >= from && i < from + 6 ? 800.0 : 0.5; });
}

TEST(NetworkHealthPlaybook, CleanNetworkIsHealthy) {
  CannedPromSource source;
  Clean(source);
  auto r = RunNetworkHealthPlaybook(source, testing::JobContext(20));
  EXPECT_EQ(r.verdict, "healthy") << r.summary;
  EXPECT_TRUE(r.anomalies.empty());
  EXPECT_TRUE(r.errors.empty());
  testing::ExpectNoBareCounters(source.asked());
}

TEST(NetworkHealthPlaybook, TcpRetransmitsInsideCheckpointWindowsAreExpected) {
  CannedPromSource source;
  source.Answer("rate(hw_tcp_retransmits_total",
                {Over(kN1, [](int i) { return i % 20 < 6 && i >= 20 ? 900.0 : 0.5; })});
  Clean(source);
  auto r = RunNetworkHealthPlaybook(source, testing::JobContext(20));
  EXPECT_EQ(r.verdict, "healthy") << r.summary;
  ASSERT_EQ(Codes(r), std::vector<std::string>{"tcp-retransmits-checkpoint-only"});
  EXPECT_EQ(r.anomalies[0].severity, Severity::kInfo);
  EXPECT_EQ(r.anomalies[0].host, "n1");
  EXPECT_EQ(r.anomalies[0].value, 900);
}

TEST(NetworkHealthPlaybook, TheSameRetransmitsOutsideCheckpointsAreTcpOnly) {
  CannedPromSource source;
  source.Answer("rate(hw_tcp_retransmits_total", {Burst(kN1, 30)});
  Clean(source);
  auto r = RunNetworkHealthPlaybook(source, testing::JobContext(20));
  EXPECT_EQ(r.verdict, "tcp-only") << r.summary;
  ASSERT_EQ(Codes(r), std::vector<std::string>{"tcp-retransmits"});
  EXPECT_EQ(r.anomalies[0].time, testing::TimeAt(30));
  EXPECT_NE(r.summary.find("do not degrade TGS"), std::string::npos);
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_NE(r.evidence[0].rows[0].interpretation.find("do not exclude"), std::string::npos);
}

TEST(NetworkHealthPlaybook, PortDownWithRetransmitsOnIt) {
  CannedPromSource source;
  source.Answer("rate(hw_rdma_tx_retx_pkts_total",
                {Flat(kPort0, 0), Over(kPort1, [](int i) { return i >= 45 ? 1200.0 : 0; })});
  source.Answer("hw_rdma_port_state",
                {Flat(kPort0, 1), Over(kPort1, [](int i) { return i >= 50 ? 0.0 : 1; })});
  Clean(source);
  auto r = RunNetworkHealthPlaybook(source, testing::JobContext(20));
  EXPECT_EQ(r.verdict, "rdma-port-down") << r.summary;
  auto codes = Codes(r);
  EXPECT_NE(std::find(codes.begin(), codes.end(), "rdma-port-down"), codes.end());
  EXPECT_NE(std::find(codes.begin(), codes.end(), "rdma-retransmits"), codes.end());
  for (const auto& f : r.anomalies) {
    EXPECT_EQ(f.host, "n2");
    EXPECT_EQ(f.device, "mlx5_1/1");
  }
  ASSERT_TRUE(r.root_cause);  // the retransmits came first
  EXPECT_EQ(r.root_cause->code, "rdma-retransmits");
  EXPECT_EQ(r.root_cause->time, testing::TimeAt(45));
  testing::ExpectNoBareCounters(source.asked());
}

TEST(NetworkHealthPlaybook, RanksNodesByExclusionPriority) {
  CannedPromSource source;
  const Labels n1{{"host", "n1"}, {"device", "mlx5_0"}, {"port", "1"}};
  const Labels n3{{"host", "n3"}, {"device", "mlx5_0"}, {"port", "1"}};
  source.Answer("rate(hw_tcp_retransmits_total", {Burst({{"host", "n4"}}, 10)});
  source.Answer("rate(hw_rdma_req_tx_retry_excd_err_total",
                {Over(n3, [](int i) { return i == 70 ? 0.2 : 0; })});
  source.Answer("rate(hw_rdma_rx_cnp_pkts_total", {Flat(n1, 40)});
  source.Answer("rate(hw_rdma_tx_retx_pkts_total", {Flat(kPort1, 0.01)});
  source.Answer("rate(hw_rdma_tx_ack_timeout_total",
                {Over(kPort1, [](int i) { return i > 60 ? 0.5 : 0; })});
  Clean(source);
  auto r = RunNetworkHealthPlaybook(source, testing::JobContext());
  EXPECT_EQ(r.verdict, "retry-exhaustion") << r.summary;
  ASSERT_EQ(r.evidence.size(), 1u);
  std::vector<std::string> order;
  for (const auto& row : r.evidence[0].rows) order.push_back(row.host);
  EXPECT_EQ(order, (std::vector<std::string>{"n3", "n2", "n1", "n4"}));
  EXPECT_NE(r.summary.find("1. n3 (priority 1"), std::string::npos) << r.summary;
}

}  // namespace
}  // namespace jobmon::diagnose
