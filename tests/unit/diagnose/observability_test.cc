// Broken observability found from canned TSDB answers: ghost data on the
// frozen host and not the healthy one, a gap, a missing host, a failing
// collector with its range.

#include "observability.h"

#include <gtest/gtest.h>

#include <cmath>

#include "canned_prom_source.h"
#include "diagnose_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Grid;

std::vector<const Finding*> WithCode(const ObservabilityResult& r, const std::string& code) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.problems) {
    if (f.code == code) out.push_back(&f);
  }
  return out;
}

DiagnoseContext TenMinutes() {
  DiagnoseContext c;
  c.job_range = {1000, 1600};
  c.scrape_interval_seconds = 5;
  c.hosts = {"a", "b"};
  c.expected_hosts = {"a", "b", "c"};
  c.families = {"hw_gpu_power_watts", "hw_tcp_retransmits_total", "tb_step"};
  return c;
}

// Host b has no scrape from 1200 to 1260; a's GPU 0 holds 312.5 W from 1300.
CannedPromSource TwoHosts() {
  CannedPromSource source;
  auto b_gap = [](double t) { return t > 1195 && t < 1265; };
  auto same = [](double t) { return t; };
  source.Answer("timestamp(up)", {Grid({{"host", "a"}}, 1000, 1600, 5, same),
                                  Grid({{"host", "b"}}, 1000, 1600, 5, same, b_gap)});
  // One failed scrape on a (a timeout) and one on b: no exporter down.
  auto one_timeout = [](double t) { return t == 1100 ? 0 : 1; };
  source.Answer("up", {Grid({{"host", "a"}}, 1000, 1600, 5, one_timeout),
                       Grid({{"host", "b"}}, 1000, 1600, 5, one_timeout, b_gap)});
  auto busy = [](double t) { return 0.2 + t * 1e-6; };
  source.Answer("hw_scrape_duration_seconds", {Grid({{"host", "a"}}, 1000, 1600, 5, busy),
                                               Grid({{"host", "b"}}, 1000, 1600, 5, busy, b_gap)});
  source.Answer("hw_collector_success",
                {Grid(
                     {{"host", "b"}, {"collector", "rdma"}}, 1000, 1600, 5,
                     [](double t) { return t >= 1400 && t <= 1450 ? 0 : 1; }, b_gap),
                 Grid({{"host", "a"}, {"collector", "rdma"}}, 1000, 1600, 5, one_timeout)});
  auto load = [](double t) { return 400 + std::fmod(t * 7.3, 60); };
  source.Answer("hw_gpu_power_watts", {Grid({{"host", "a"}, {"gpu", "0"}}, 1000, 1600, 5,
                                            [&](double t) { return t >= 1300 ? 312.5 : load(t); }),
                                       Grid({{"host", "a"}, {"gpu", "1"}}, 1000, 1600, 5, load),
                                       Grid({{"host", "b"}, {"gpu", "0"}}, 1000, 1600, 5, load)});
  return source;
}

TEST(Observability, GhostDataOnTheFrozenHostOnly) {
  CannedPromSource source = TwoHosts();
  ObservabilityResult r = CheckObservability(source, TenMinutes());
  EXPECT_TRUE(r.errors.empty());
  auto ghosts = WithCode(r, "ghost-data");
  ASSERT_EQ(ghosts.size(), 1u);
  EXPECT_EQ(ghosts[0]->host, "a");
  EXPECT_EQ(ghosts[0]->time, 1300);
  EXPECT_EQ(ghosts[0]->severity, Severity::kCritical);
  bool untrusted = false;
  for (const UntrustedRange& u : r.untrusted) {
    if (u.host == "a" && u.family == "hw_gpu_*") {
      untrusted = true;
      EXPECT_EQ(u.range.start, 1300);
      EXPECT_EQ(u.range.end, 1600);
    }
  }
  EXPECT_TRUE(untrusted);
}

TEST(Observability, FlatPowerEverywhereIsNoGhostWithoutAHealthyHostToCompare) {
  // Constant-power GPUs (a fake trainer's, or idle ones with coarse
  // readings): nothing to tell a stuck exporter from.
  CannedPromSource flat;
  flat.Answer("hw_gpu_power_watts",
              {Grid({{"host", "a"}, {"gpu", "0"}}, 1000, 1600, 5, [](double) { return 100; }),
               Grid({{"host", "b"}, {"gpu", "0"}}, 1000, 1600, 5, [](double) { return 100; })});
  flat.Answer("timestamp(up)", {Grid({{"host", "a"}}, 1000, 1600, 5, [](double t) { return t; }),
                                Grid({{"host", "b"}}, 1000, 1600, 5, [](double t) { return t; })});
  ObservabilityResult r = CheckObservability(flat, TenMinutes());
  EXPECT_TRUE(WithCode(r, "ghost-data").empty());
}

TEST(Observability, AFlatScrapeDurationIsGhostDataForTheWholeHost) {
  CannedPromSource source;
  auto same = [](double t) { return t; };
  source.Answer("timestamp(up)", {Grid({{"host", "a"}}, 1000, 1600, 5, same)});
  source.Answer("up", {Grid({{"host", "a"}}, 1000, 1600, 5, [](double) { return 1; })});
  source.Answer("hw_scrape_duration_seconds", {Grid({{"host", "a"}}, 1000, 1600, 5, [](double t) {
                  return t < 1100 ? 0.1 + t * 1e-6 : 0.4321;
                })});
  DiagnoseContext c = TenMinutes();
  c.hosts = c.expected_hosts = {"a"};
  ObservabilityResult r = CheckObservability(source, c);
  auto ghosts = WithCode(r, "ghost-data");
  ASSERT_EQ(ghosts.size(), 1u);
  EXPECT_EQ(ghosts[0]->time, 1100);
  ASSERT_FALSE(r.untrusted.empty());
  EXPECT_EQ(r.untrusted[0].family, "hw_*");
}

TEST(Observability, AGapAMissingHostAndAFailingCollectorWithItsRange) {
  CannedPromSource source = TwoHosts();
  ObservabilityResult r = CheckObservability(source, TenMinutes());
  auto gaps = WithCode(r, "gap");
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0]->host, "b");
  EXPECT_EQ(gaps[0]->time, 1195);
  EXPECT_EQ(gaps[0]->value, 70);
  auto missing = WithCode(r, "host-missing");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->host, "c");
  auto failing = WithCode(r, "collector-failing");
  ASSERT_EQ(failing.size(), 1u);
  EXPECT_EQ(failing[0]->host, "b");
  EXPECT_EQ(failing[0]->time, 1400);
  EXPECT_EQ(failing[0]->value, 50);
  EXPECT_NE(failing[0]->text.find("rdma"), std::string::npos);
  EXPECT_TRUE(WithCode(r, "family-missing").empty());
  EXPECT_TRUE(WithCode(r, "exporter-down").empty());
  EXPECT_TRUE(WithCode(r, "scrape-slow").empty());
}

TEST(Observability, ExporterDownSlowScrapesPartialHostsAndMissingFamilies) {
  CannedPromSource source;
  auto same = [](double t) { return t; };
  // b's exporter starts 2 minutes late; c's 30 s late (nodes start apart).
  source.Answer("timestamp(up)", {Grid({{"host", "a"}}, 1000, 1600, 5, same),
                                  Grid({{"host", "b"}}, 1120, 1600, 5, same),
                                  Grid({{"host", "c"}}, 1030, 1600, 5, same)});
  source.Answer("up", {Grid({{"host", "a"}}, 1000, 1600, 5,
                            [](double t) { return t >= 1500 && t < 1530 ? 0 : 1; })});
  source.Answer("hw_scrape_duration_seconds", {Grid({{"host", "a"}}, 1000, 1600, 5, [](double t) {
                  return t >= 1200 && t <= 1220 ? 12 + t * 1e-6 : 0.5 + t * 1e-6;
                })});
  DiagnoseContext c = TenMinutes();
  c.expected_hosts.clear();
  c.families = {"hw_net_rx_bytes_total", "up"};
  ObservabilityResult r = CheckObservability(source, c);
  auto down = WithCode(r, "exporter-down");
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0]->time, 1500);
  EXPECT_EQ(down[0]->value, 25);
  auto slow = WithCode(r, "scrape-slow");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0]->time, 1200);
  auto partial = WithCode(r, "host-missing");
  ASSERT_EQ(partial.size(), 1u);
  EXPECT_EQ(partial[0]->host, "b");
  EXPECT_NE(partial[0]->text.find("start"), std::string::npos);
  auto families = WithCode(r, "family-missing");
  ASSERT_EQ(families.size(), 2u) << "hw_gpu_* and tb_*; hw_net_* stands for the network";
  EXPECT_NE(families[0]->text.find("hw_gpu_*"), std::string::npos);
  EXPECT_NE(families[1]->text.find("tb_*"), std::string::npos);
}

TEST(Observability, ThresholdsScaleWithTheJob) {
  DiagnoseContext c;
  c.scrape_interval_seconds = 5;
  c.job_range = {0, 86400};
  EXPECT_EQ(GhostMinSeconds(c, 60), 300) << "docs/diagnose.md's 5 minutes on a long job";
  c.job_range = {0, 600};
  EXPECT_EQ(GhostMinSeconds(c, 5), 150) << "a quarter of a 10-minute job";
  c.job_range = {0, 120};
  EXPECT_EQ(GhostMinSeconds(c, 5), 60) << "never under 12 scrapes";
  c.scrape_interval_seconds = 1;
  c.job_range = {0, 50};
  EXPECT_EQ(GhostMinSeconds(c, 1), 12.5) << "a dev cluster's minute-long job at 1 s scrapes";
  c.scrape_interval_seconds = 10;
  EXPECT_EQ(GapSeconds(c, 10), 30);
  EXPECT_EQ(GapSeconds(c, 60), 120) << "a coarse query step sees one sample per step";
}

TEST(Observability, RunFinders) {
  Series s{{}, {{0, 1}, {10, 1}, {20, 1}, {30, 2}, {40, 2}, {100, 0}, {110, 0}}};
  auto flat = FlatRuns(s, 15);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].start, 0);
  EXPECT_EQ(flat[0].end, 20);
  auto zero = RunsWhere(
      s, [](double v) { return v == 0; }, 15);
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_EQ(zero[0].start, 100);
  auto ones = RunsWhere(
      s, [](double v) { return v >= 1; }, 15);
  ASSERT_EQ(ones.size(), 1u);
  EXPECT_EQ(ones[0].end, 40);
  auto gaps = Gaps({5, 10, 50, 55}, {0, 100}, 15);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].start, 10);
  EXPECT_EQ(gaps[0].end, 50);
  EXPECT_EQ(gaps[1].start, 55);
  EXPECT_EQ(gaps[1].end, 100);
}

}  // namespace
}  // namespace jobmon::diagnose
