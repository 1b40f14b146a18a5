// Discovery from canned answers: families, hosts (with one only `up`
// names), the job's range from `up`, each host's last scrape.

#include "discovery.h"

#include <gtest/gtest.h>

#include "canned_prom_source.h"
#include "diagnose_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Grid;

TEST(Discovery, FamiliesHostsRangesAndLastScrapes) {
  CannedPromSource source;
  source.Labels("__name__", {"tb_step", "hw_gpu_power_watts", "up", "hw_gpu_temperature_celsius",
                             "hw_tcp_retransmits_total"});
  source.Labels("host", {"b", "a"});
  source.Answer("hw_collector_success",
                {Grid({{"host", "a"}}, 130, 380, 5, [](double) { return 1; })});
  auto stamp = [](double t) { return t; };
  // The scrapes' own times: a from 131.2 to 401.2, b from 140 to 390.
  source.Answer(
      "timestamp(up)",
      {Grid({{"host", "a"}}, 130, 400, 5, [](double t) { return t + 1.2; }),
       Grid({{"host", "b"}}, 140, 390, 5, stamp), Grid({{"host", "c"}}, 150, 300, 5, stamp)});
  source.Answer("up", {Grid({{"host", "a"}}, 130, 400, 5, [](double) { return 1; }),
                       Grid({{"host", "b"}}, 140, 390, 5, [](double) { return 1; }),
                       // c's exporter never answered: up == 0, no series of its own.
                       Grid({{"host", "c"}}, 150, 300, 5, [](double) { return 0; })});
  DiscoveryInputs in;
  in.tsdb_range = {100, 500};
  in.expected_hosts = {"a", "b", "c", "d"};
  in.scrape_interval_seconds = 5;
  Discovery d = Discover(source, in);
  EXPECT_TRUE(d.errors.empty());
  EXPECT_EQ(d.families.front(), "hw_gpu_power_watts") << "sorted";
  EXPECT_EQ(d.hosts, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_DOUBLE_EQ(d.job_range.start, 131.2) << "the first scrape's own time, not the grid's";
  EXPECT_DOUBLE_EQ(d.job_range.end, 401.2);
  ASSERT_EQ(d.last_scrape.size(), 3u);
  EXPECT_EQ(d.last_scrape[0].host, "a");
  EXPECT_EQ(d.last_scrape[0].last_up, 400);
  EXPECT_EQ(d.last_scrape[0].last_collector, 380);
  EXPECT_EQ(d.last_scrape[1].last_up, 390);
  EXPECT_FALSE(d.last_scrape[2].last_up) << "c was never up";

  DiagnoseContext c;
  ApplyDiscovery(d, in, c);
  EXPECT_EQ(c.tsdb_range.start, 100);
  EXPECT_DOUBLE_EQ(c.job_range.end, 401.2);
  EXPECT_EQ(c.expected_hosts.size(), 4u);
  EXPECT_TRUE(c.HasFamily("tb_step"));

  std::string line = DescribeDiscovery(d);
  EXPECT_NE(line.find("5 families"), std::string::npos) << line;
  EXPECT_NE(line.find("hw_gpu_* 2"), std::string::npos) << line;
  EXPECT_NE(line.find("3 hosts"), std::string::npos) << line;
}

TEST(Discovery, AnEmptyTsdbKeepsItsOwnRange) {
  CannedPromSource source;
  DiscoveryInputs in;
  in.tsdb_range = {100, 500};
  Discovery d = Discover(source, in);
  EXPECT_TRUE(d.families.empty());
  EXPECT_EQ(d.job_range.start, 100);
  EXPECT_EQ(d.job_range.end, 500);
}

}  // namespace
}  // namespace jobmon::diagnose
