// The rdma collector: Broadcom's and mlx5's counter names for the same
// series, the port state, and a broken or absent counter file.
#include "jobmon/exporter/rdma_collector.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <string>

#include "collector_test_support.h"

namespace jobmon::exporter {
namespace {

using test_support::kFixtures;
using test_support::Sample;
using test_support::Text;
using test_support::TreeCopy;

TEST(Rdma, BroadcomAndMlx5NamesAndStandardCounters) {
  RdmaCollector collector(std::string(JOBMON_FIXTURES) + "/sysfs/rdma");
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok());
  std::string text = prometheus::TextSerializer().Serialize(*families);
  const std::string b = "device=\"bnxt_re0\",port=\"1\"", m = "device=\"mlx5_0\",port=\"1\"";
  for (const std::string& line :
       {"hw_rdma_port_state{" + b + "} 1\n", "hw_rdma_port_state{" + m + "} 0\n",
        "hw_rdma_tx_retx_pkts_total{" + b + "} 4\n", "hw_rdma_tx_ack_timeout_total{" + b + "} 2\n",
        "hw_rdma_rx_cnp_pkts_total{" + b + "} 17\n", "hw_rdma_rx_bytes_total{" + b + "} 9000000\n",
        // mlx5 names for the same series; port_*_data counts 4-byte words.
        "hw_rdma_tx_ack_timeout_total{" + m + "} 15\n", "hw_rdma_rx_cnp_pkts_total{" + m + "} 8\n",
        "hw_rdma_tx_cnp_pkts_total{" + m + "} 7\n", "hw_rdma_req_rx_cqe_err_total{" + m + "} 16\n",
        "hw_rdma_rx_bytes_total{" + m + "} 4000\n", "hw_rdma_tx_bytes_total{" + m + "} 8000\n",
        "hw_rdma_out_of_sequence_total{" + m + "} 12\n",
        "hw_rdma_link_downed_total{" + m + "} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.find("hw_rdma_tx_retx_pkts_total{" + m), std::string::npos)
      << "absent counters are skipped";
  auto none = RdmaCollector("/nonexistent").Collect();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(Counters, ABrokenRdmaFileDropsItsOwnSeriesAndSaysWhich) {
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-bad");
  const std::string port = "class/infiniband/bnxt_re0/ports/1/";
  tree.Write(port + "hw_counters/tx_retx_pkts", "-5\n");
  tree.Write(port + "hw_counters/rx_cnp_pkts", "nan\n");
  tree.Write(port + "hw_counters/tx_bytes", "inf\n");
  RdmaCollector collector(tree.dir().string());
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok()) << families.error().message;
  std::string text = Text(*families);
  const std::string b = "{device=\"bnxt_re0\",port=\"1\"}";
  EXPECT_FALSE(Sample(text, "hw_rdma_tx_retx_pkts_total" + b)) << text;
  EXPECT_FALSE(Sample(text, "hw_rdma_rx_cnp_pkts_total" + b)) << text;
  EXPECT_FALSE(Sample(text, "hw_rdma_tx_bytes_total" + b)) << text;
  EXPECT_EQ(Sample(text, "hw_rdma_rx_bytes_total" + b), 9000000) << "the other series stay";
  auto problems = collector.TakeProblems();
  ASSERT_EQ(problems.size(), 3u);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  for (const char* file : {"tx_retx_pkts", "rx_cnp_pkts", "tx_bytes"}) {
    EXPECT_NE(all.find(file), std::string::npos) << all;
  }
  EXPECT_TRUE(collector.TakeProblems().empty()) << "taken once";
}

TEST(Counters, NoPmaIsAbsentNotBroken) {
  // show_pma_counter (drivers/infiniband/core/sysfs.c) answers "N/A (no PMA)"
  // when the device has no performance management agent.
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-nopma");
  tree.Write("class/infiniband/mlx5_0/ports/1/counters/link_downed", "N/A (no PMA)\n");
  RdmaCollector collector(tree.dir().string());
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok());
  EXPECT_FALSE(Sample(Text(*families), "hw_rdma_link_downed_total{device=\"mlx5_0\",port=\"1\"}"));
  EXPECT_TRUE(collector.TakeProblems().empty());
}

TEST(Counters, RdmaPortIsActiveOnlyInState4) {
  // drivers/infiniband/core/sysfs.c state_show: "%d: %s\n" over NOP, DOWN,
  // INIT, ARMED, ACTIVE, ACTIVE_DEFER (enum ib_port_state 0-5).
  EXPECT_EQ(ParsePortActive("4: ACTIVE\n"), 1);
  EXPECT_EQ(ParsePortActive("5: ACTIVE_DEFER\n"), 0);
  EXPECT_EQ(ParsePortActive("1: DOWN\n"), 0);
  EXPECT_EQ(ParsePortActive("3: ARMED\n"), 0);
  EXPECT_FALSE(ParsePortActive("ACTIVE\n"));
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-defer");
  tree.Write("class/infiniband/bnxt_re0/ports/1/state", "5: ACTIVE_DEFER\n");
  auto families = RdmaCollector(tree.dir().string()).Collect();
  ASSERT_TRUE(families.ok());
  EXPECT_EQ(Sample(Text(*families), "hw_rdma_port_state{device=\"bnxt_re0\",port=\"1\"}"), 0);
}

TEST(Counters, OneSysfsFileIsServedUnderOneName) {
  // mlx5's local_ack_timeout_err is the catalog's ACK-timeout counter; it
  // was also served as hw_rdma_local_ack_timeout_err_total, so a sum over
  // hw_rdma_* counted it twice. Give it a value no other file has.
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-once");
  tree.Write("class/infiniband/mlx5_0/ports/1/hw_counters/local_ack_timeout_err", "987654321\n");
  auto families = RdmaCollector(tree.dir().string()).Collect();
  ASSERT_TRUE(families.ok());
  int served = 0;
  for (const auto& family : *families) {
    for (const auto& metric : family.metric) served += metric.counter.value == 987654321;
  }
  EXPECT_EQ(served, 1) << Text(*families);
}

}  // namespace
}  // namespace jobmon::exporter
