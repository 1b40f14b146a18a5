// A restarted daemon's back-fill from the job's own Prometheus
// (monitor/include/jobmon/monitor/history_backfill.h): the answer, which
// carries no job label, fills the window so the training baseline is back.

#include "jobmon/monitor/history_backfill.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "jobmon/common/job_history.h"
#include "jobmon/common/metric_names.h"

namespace jobmon::monitor {
namespace {

constexpr double kStart = 1700000000;

// One series as a job's Prometheus answers a range query: its own labels
// (host from the target file, gpu from the exporter), no slurm_job_id.
diagnose::Series Series(const std::string& name, const std::string& host, double value,
                        const std::string& gpu = "") {
  diagnose::Series s{{{"__name__", name}, {"host", host}, {"instance", "10.0.0.1:9400"}}, {}};
  if (!gpu.empty()) s.labels["gpu"] = gpu;
  for (double t = kStart; t <= kStart + 600; t += 5) s.samples.push_back({t, value});
  return s;
}

TEST(HistoryBackfill, AsksForUpAndEveryFamilyTheWindowReadsWithinTheContract) {
  const std::vector<std::string> families = HistoryFamilies();
  EXPECT_EQ(families.front(), "up");
  EXPECT_NE(std::find(families.begin(), families.end(), metric_names::kGpuPowerWatts),
            families.end());
  // The hour the window holds, at the step it is asked with, is answered.
  EXPECT_TRUE(job_history::CheckRequest(job_history::FamilySelector(families), "0", "3600",
                                        std::to_string(HistoryStep(3600))))
      << "the exporter would refuse the monitor's own question";
  EXPECT_EQ(HistoryStep(3600), 5);
  EXPECT_EQ(HistoryStep(30), 1);
}

TEST(HistoryBackfill, ARestartedDaemonHasTheTrainingBaselineItNeverScraped) {
  std::vector<diagnose::Series> answer = {
      Series("up", "node1", 1),
      Series(metric_names::kGpuPowerWatts, "node1", 300, "0"),
      Series("up", "node2", 1),
      Series(metric_names::kGpuPowerWatts, "node2", 280, "0"),
      // Not one of the job's nodes: not the job's evidence.
      Series("up", "elsewhere", 1),
      Series(metric_names::kGpuPowerWatts, "elsewhere", 10, "0"),
  };
  auto hosts = JobHistoryScrapes(42, answer, {"node1", "node2"});
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_FALSE(hosts.count("elsewhere"));
  EXPECT_EQ(hosts.at("node1").size(), 121u) << "one scrape per step of ten minutes at 5 s";

  MetricWindow window;
  EXPECT_TRUE(window.Baselines(kStart + 600, kStart, kStart + 600, 30).empty())
      << "a restarted daemon's window knows nothing of the training";
  EXPECT_EQ(FeedStoreAnswer(window, hosts, kStart - 1), 242u);
  auto baselines = window.Baselines(kStart + 600, kStart, kStart + 600, 30);
  ASSERT_TRUE(baselines.count("node1") && baselines.count("node2"));
  EXPECT_EQ(baselines.at("node1").power, 300);
  EXPECT_EQ(baselines.at("node2").power, 280);
}

TEST(HistoryBackfill, WithoutTheJobsNodesEveryHostIsTheJobs) {
  auto hosts = JobHistoryScrapes(42, {Series("up", "node1", 1), Series("up", "node9", 1)}, {});
  EXPECT_EQ(hosts.size(), 2u);
}

}  // namespace
}  // namespace jobmon::monitor
