// A node shared by two jobs: one exporter per job, each
// serving its job's GPUs (hw_gpu_served). The window keeps only the served
// GPUs, so a job stuck in a busy-wait is judged by its own GPUs, not by the
// other job's GPUs at training power; host-level series are marked node-wide.
#include <gtest/gtest.h>

#include <string>

#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/stall_classifier.h"

namespace jobmon::monitor {
namespace {

// An 8-GPU AMD node: GPUs 0-3 of the training job at 650 W, 4-7 as
// `stuck_*` (the other job). `served`: the GPUs this exporter says it
// serves (empty: an exporter that predates hw_gpu_served, so all).
Exposition NodeScrape(double stuck_watts, double stuck_util, const std::string& served,
                      bool say_shared = true) {
  std::string text;
  for (int gpu = 0; gpu < 8; ++gpu) {
    const std::string l = "gpu=\"" + std::to_string(gpu) + "\",host=\"n\"";
    const bool stuck = gpu >= 4;
    if (!served.empty() && served.find(std::to_string(gpu)) == std::string::npos) {
      // This exporter serves only its job's GPUs: the other job's are not in its scrape.
      continue;
    }
    text +=
        "hw_gpu_utilization_percent{" + l + "} " + std::to_string(stuck ? stuck_util : 99) + "\n";
    text += "hw_gpu_power_watts{" + l + "} " + std::to_string(stuck ? stuck_watts : 650) + "\n";
    if (!served.empty()) {
      text += "hw_gpu_served{" + l + ",source=\"slurm\",vendor=\"amd\"} 1\n";
    }
  }
  if (!served.empty()) {
    text += "hw_gpu_node_gpus{host=\"n\",vendor=\"amd\"} 8\n";
    text += std::string("hw_gpu_node_shared{host=\"n\",vendor=\"amd\"} ") +
            (say_shared ? "1" : "0") + "\n";
  }
  text += "hw_procs_blocked{host=\"n\"} 3\n";
  return ParseExposition(text);
}

StallClassification Stuck(const std::string& served, std::optional<bool>* shared = nullptr) {
  MetricWindow window;
  double t = 0;
  // Both jobs train (650 W on every GPU), then GPUs 4-7 spin at 100% and 200 W.
  for (; t < 100; t += 5) window.AddScrape("n", t, NodeScrape(650, 99, served));
  for (; t < 200; t += 5) window.AddScrape("n", t, NodeScrape(200, 100, served));
  auto evidence = window.Evidence(t - 5, 0, 100, 30);
  if (shared) *shared = evidence.hosts.at(0).node_shared;
  return ClassifyStall(evidence);
}

TEST(SharedNode, TheStuckJobIsJudgedByItsOwnGpus) {
  std::optional<bool> shared;
  auto c = Stuck("4,5,6,7", &shared);
  EXPECT_EQ(c.klass, "hang/busy-wait") << c.summary;
  EXPECT_EQ(shared, true);
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_NE(c.evidence[0].find("GPU util 100%, power 200 W"), std::string::npos) << c.evidence[0];
  EXPECT_NE(c.evidence[0].find("3 processes blocked in D state"), std::string::npos);
  EXPECT_NE(c.evidence[0].find("node shared with other jobs: GPU figures are the job's 4 of the "
                               "node's 8 GPUs, host-level series (TCP, I/O pressure, D state) "
                               "are node-wide"),
            std::string::npos)
      << c.evidence[0];
}

TEST(SharedNode, AnExporterServingEveryGpuMixesTheJobs) {
  // The failure: judged by all 8 GPUs, the stuck job looked busy.
  auto c = Stuck("");
  EXPECT_NE(c.klass, "hang/busy-wait") << c.summary;
  EXPECT_EQ(c.evidence.at(0).find("node shared"), std::string::npos);
}

TEST(SharedNode, ServedGpusInAScrapeThatCarriesOthersAreFiltered) {
  // An exporter that reports all 8 but says it serves 4-7 (hw_gpu_served
  // only): the window still keeps 4-7 only.
  MetricWindow window;
  double t = 0;
  auto scrape = [](double stuck_watts, double stuck_util) {
    Exposition all = NodeScrape(stuck_watts, stuck_util, "");
    Exposition served = NodeScrape(stuck_watts, stuck_util, "4,5,6,7", false);
    for (const Sample& s : served.samples) {
      if (s.name == "hw_gpu_served" || s.name == "hw_gpu_node_shared") all.samples.push_back(s);
    }
    return all;
  };
  for (; t < 100; t += 5) window.AddScrape("n", t, scrape(650, 99));
  for (; t < 200; t += 5) window.AddScrape("n", t, scrape(200, 100));
  auto evidence = window.Evidence(t - 5, 0, 100, 30);
  EXPECT_EQ(evidence.hosts.at(0).gpu_power.size(), 4u);
  EXPECT_FALSE(evidence.hosts.at(0).node_shared);
  EXPECT_EQ(ClassifyStall(evidence).klass, "hang/busy-wait");
}

TEST(SharedNode, FreshServedGpuLabelsEveryScrapeDoNotGrowTheWindowOrItsFloors) {
  // A job's own HTTP server on the exporter's port saying it serves 1000
  // GPUs never seen before each scrape, each idle with a context open (so
  // each would learn an idle floor): the served set is capped as well.
  MetricWindow window;
  const size_t cap = WindowLimits{}.max_gpus_per_host;
  for (int i = 0; i < 30; ++i) {
    std::string text;
    for (int k = 0; k < 1000; ++k) {
      const std::string l = "{gpu=\"s" + std::to_string(i) + "-" + std::to_string(k) + "\"} ";
      text += "hw_gpu_served" + l + "1\nhw_gpu_power_watts" + l + "120\n";
      text += "hw_gpu_utilization_percent" + l + "0\nhw_gpu_compute_processes" + l + "1\n";
    }
    window.AddScrape("n", 10.0 * i, ParseExposition(text));
  }
  EXPECT_EQ(window.series_count(), 3 * cap);  // the first scrape's first 64 GPUs
  EXPECT_EQ(window.IdleFloor("n", "s0-0"), 120);
  EXPECT_FALSE(window.IdleFloor("n", "s0-999"));
  EXPECT_FALSE(window.IdleFloor("n", "s29-0"));
}

}  // namespace
}  // namespace jobmon::monitor
