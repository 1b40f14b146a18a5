// MetricWindow on AMD-shaped scrapes: the job's own power baseline, a dead
// host, a TCP retransmit spike, memory bounded by the horizon and by the
// WindowLimits whatever labels a scrape invents.
#include "jobmon/monitor/metric_window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "jobmon/monitor/divergence.h"
#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/monitor/store_query.h"

namespace jobmon::monitor {
namespace {

// What an exporter serves for a host with 2 GPUs.
Exposition Scrape(double util, double watts, double retransmits, double step) {
  std::string text;
  for (int gpu = 0; gpu < 2; ++gpu) {
    text += "hw_gpu_utilization_percent{gpu=\"" + std::to_string(gpu) + "\",host=\"h\"} " +
            std::to_string(util) + "\n";
    text += "hw_gpu_power_watts{gpu=\"" + std::to_string(gpu) + "\",host=\"h\"} " +
            std::to_string(watts) + "\n";
  }
  text += "hw_tcp_retransmits_total{host=\"h\"} " + std::to_string(retransmits) + "\n";
  text += "tb_step{host=\"h\"} " + std::to_string(step) + "\n";
  text += "hw_net_rx_bytes_total{device=\"eth0\",host=\"h\"} 1\n";  // not kept
  return ParseExposition(text);
}

TEST(MetricWindowTest, BusyWaitAgainstTheJobsOwnBaselineNotTheCompilePhase) {
  MetricWindow window;
  double t = 0;
  for (; t < 30; t += 5) {  // compiling: idle power
    window.AddScrape("node1", t, Scrape(0, 90, 10, 0));
    window.AddScrape("node2", t, Scrape(0, 95, 10, 0));
  }
  for (; t < 300; t += 5) {  // training
    window.AddScrape("node1", t, Scrape(97, 700, 10 + t / 100, t));
    window.AddScrape("node2", t, Scrape(96, 680, 10 + t / 100, t));
  }
  for (; t < 400; t += 5) {  // stuck in a collective
    window.AddScrape("node1", t, Scrape(100, 280, 13, 299));
    window.AddScrape("node2", t, Scrape(100, 270, 13, 299));
  }
  StallEvidence evidence = window.Evidence(t, 30, 299, 30);
  ASSERT_EQ(evidence.hosts.size(), 2u);
  EXPECT_DOUBLE_EQ(*evidence.hosts[0].baseline_power, 700);
  EXPECT_EQ(evidence.hosts[0].gpu_power, (std::vector<double>{280, 280}));
  StallClassification c = ClassifyStall(evidence);
  EXPECT_EQ(c.klass, "hang/busy-wait") << c.summary;
  EXPECT_EQ(window.series_count(), 2u * (2 + 2 + 2));  // util+power per GPU, retx, tb_step
}

// A healthy job scraped only for its baseline (scrape_cadence.h): the
// window keeps power, retransmits and tb_step, not utilization; the busy-wait
// is still found once the job turns and is scraped in full, and turning
// back drops what the baseline does not need.
TEST(MetricWindowTest, ABaselineOnlyWindowLearnsTheBaselineAndTurnsFull) {
  MetricWindow window;
  double t = 0;
  for (; t < 300; t += 60) {  // training, scraped once a minute
    window.AddScrape("node1", t, Scrape(97, 700, 10 + t / 100, t), MetricWindow::Keep::kBaseline);
  }
  EXPECT_EQ(window.series_count(), 2u + 1 + 1) << "power per GPU, retransmits, tb_step";
  EXPECT_EQ(window.LatestOf("tb_step")->value, 240);
  EXPECT_FALSE(window.LatestOf("hw_gpu_utilization_percent")) << "not kept";
  EXPECT_EQ(*window.Baselines(t, 0, 240, 30).at("node1").power, 700);
  for (; t < 400; t += 10) {  // stuck in a collective: late, then stalled, scraped in full
    window.AddScrape("node1", t, Scrape(100, 280, 13, 240));
  }
  StallEvidence evidence = window.Evidence(t, 0, 240, 30);
  ASSERT_EQ(evidence.hosts.size(), 1u);
  EXPECT_EQ(evidence.hosts[0].gpu_utilization, (std::vector<double>{100, 100}));
  EXPECT_EQ(ClassifyStall(evidence).klass, "hang/busy-wait") << ClassifyStall(evidence).summary;
  EXPECT_EQ(window.series_count(), 2u * 2 + 1 + 1);
  window.KeepBaselineSeriesOnly();  // it went on: healthy again
  EXPECT_EQ(window.series_count(), 2u + 1 + 1);
  EXPECT_EQ(*window.Baselines(t, 0, 240, 30).at("node1").power, 700) << "the baseline stays";
}

// A job turned from sparse scrapes has its window filled from its own
// Prometheus (scrape_feed.cc): the history adds the series the window lacks
// and keeps the window's own, finer, scrapes and their outcomes.
TEST(MetricWindowTest, AHistoryFillingInAddsWhatTheWindowLacksAndReplacesNothing) {
  MetricWindow window;
  for (double t = 0; t < 30; t += 1) {  // its own scrapes: node2 answered from t = 3
    if (t < 3) {
      window.AddFailedScrape("node2", t);
    } else {
      window.AddScrape("node2", t, Scrape(97, 700, 10, t), MetricWindow::Keep::kBaseline);
    }
  }
  std::map<std::string, std::vector<StoreScrape>> history;
  for (double t = 0; t <= 30; t += 5) {  // the history's 5-s steps: up only from t = 5
    history["node2"].push_back({t, t >= 5, Scrape(97, 650, 99, t)});
  }
  FeedStoreAnswer(window, history, -1, MetricWindow::Keep::kLacking);
  EXPECT_EQ(window.PointsOf("node2", "hw_gpu_utilization_percent").at("0").size(), 6u)
      << "utilization, which the window lacked, from the history's answering scrapes";
  const auto power = window.PointsOf("node2", "hw_gpu_power_watts").at("0");
  EXPECT_EQ(power.size(), 27u) << "its own power points only";
  EXPECT_EQ(power.front().second, 700);
  const StallEvidence at_4 = window.Evidence(4, 3, 29, 4);
  EXPECT_TRUE(at_4.hosts[0].exporter_up) << "its own scrape at 4, not the history's failure at 0";
  // Its own scrape at 30 came after: the history's point at 30 is not older, so not added.
  window.AddScrape("node2", 31, Scrape(100, 280, 10, 29));
  EXPECT_EQ(window.PointsOf("node2", "hw_gpu_utilization_percent").at("0").back().first, 31);
}

TEST(MetricWindowTest, TooFewTrainingScrapesGiveNoBaselineRatherThanAWrongOne) {
  MetricWindow window;
  double t = 0;
  for (; t < 6; t += 2) window.AddScrape("node1", t, Scrape(97, 700, 0, t));  // 3 scrapes
  for (; t < 30; t += 2) window.AddScrape("node1", t, Scrape(100, 300, 0, 5));
  StallEvidence evidence = window.Evidence(t, 0, 5, 30);
  EXPECT_FALSE(evidence.hosts[0].baseline_power);
  EXPECT_EQ(ClassifyStall(evidence).klass, "hang") << "no pattern claimed without a baseline";
  for (; t < 40; t += 2) window.AddScrape("node1", t, Scrape(97, 700, 0, t));
  EXPECT_TRUE(window.Evidence(t, 0, 39, 30).hosts[0].baseline_power) << "enough scrapes now";
}

TEST(MetricWindowTest, AHostThatStopsAnsweringIsNamedAsDead) {
  MetricWindow window;
  double t = 0;
  for (; t < 200; t += 5) {
    window.AddScrape("node1", t, Scrape(97, 700, 0, t));
    window.AddScrape("node2", t, Scrape(97, 700, 0, t));
  }
  for (; t < 260; t += 5) {
    window.AddScrape("node1", t, Scrape(100, 280, 0, 199));
    window.AddFailedScrape("node2", t);
  }
  StallClassification c = ClassifyStall(window.Evidence(t, 0, 199, 30));
  EXPECT_EQ(c.klass, "hang/node-death");
  EXPECT_EQ(c.hosts, std::vector<std::string>{"node2"});
}

TEST(MetricWindowTest, TcpRetransmitSpikeBeforeTheStallIsReported) {
  MetricWindow window;
  double t = 0, retx = 0;
  for (; t < 300; t += 5) {
    retx += t < 240 ? 1 : 500;  // a spike in the last minute before the stall
    window.AddScrape("node1", t, Scrape(97, 700, retx, t));
  }
  for (; t < 360; t += 5) window.AddScrape("node1", t, Scrape(100, 280, retx, 299));
  StallEvidence evidence = window.Evidence(t, 0, 299, 30);
  ASSERT_TRUE(evidence.hosts[0].tcp_retransmit_rate.has_value());
  EXPECT_GT(*evidence.hosts[0].tcp_retransmit_rate, 50);
  EXPECT_LT(*evidence.hosts[0].tcp_retransmit_baseline, 1);
  EXPECT_NE(ClassifyStall(evidence).evidence[0].find("TCP retransmits"), std::string::npos);
}

TEST(MetricWindowTest, MemoryIsBoundedByTheHorizon) {
  MetricWindow window(600, 1024);
  for (double t = 0; t < 100000; t += 5) window.AddScrape("node1", t, Scrape(97, 700, t, t));
  EXPECT_LE(window.point_count(), window.series_count() * (600 / 5 + 1));
}

// `n` GPU labels never seen before (`prefix` + index), power and
// utilization each: what a job's own HTTP server on its node, answering on
// the exporter's port, can serve each scrape.
Exposition FreshGpuLabels(const std::string& prefix, int n) {
  std::string text;
  for (int k = 0; k < n; ++k) {
    const std::string l = "{gpu=\"" + prefix + std::to_string(k) + "\"} ";
    text += "hw_gpu_power_watts" + l + "700\nhw_gpu_utilization_percent" + l + "97\n";
  }
  return ParseExposition(text);
}

TEST(MetricWindowTest, FreshGpuLabelsEveryScrapeDoNotGrowTheWindowPastItsCap) {
  MetricWindow window;
  const size_t cap = WindowLimits{}.max_gpus_per_host;
  double t = 0;
  for (int i = 0; i < 30; ++i, t += 10) {
    Exposition scrape = Scrape(97, 700, 0, t);
    Exposition fresh = FreshGpuLabels("s" + std::to_string(i) + "-", 1000);
    scrape.samples.insert(scrape.samples.end(), fresh.samples.begin(), fresh.samples.end());
    window.AddScrape("node1", t, scrape);
  }
  // GPUs 0 and 1 (seen first) and the first 62 invented ones, power and
  // utilization each; TCP retransmits and tb_step.
  EXPECT_EQ(window.series_count(), 2 * cap + 2);
  EXPECT_GT(window.dropped_by_limits(), 0u);
  // The invented GPUs kept were the first scrape's only: not current now.
  EXPECT_EQ(window.Evidence(t - 10, 0, t, 30).hosts.at(0).gpu_power.size(), 2u);
}

TEST(MetricWindowTest, AGpuLabelAsLongAsAScrapeIsNotKept) {
  MetricWindow window;
  window.AddScrape(
      "node1", 0,
      ParseExposition("hw_gpu_power_watts{gpu=\"" + std::string(1 << 20, 'x') + "\"} 700\n"));
  EXPECT_EQ(window.series_count(), 0u);
}

TEST(MetricWindowTest, SeriesNoLongerScrapedAreDroppedAfterTheHorizon) {
  MetricWindow window(600);
  double t = 0;
  for (; t < 100; t += 5) {
    Exposition scrape = Scrape(97, 700, 0, t);
    Exposition gone = FreshGpuLabels("gone", 1);  // a GPU that fell off, say
    scrape.samples.insert(scrape.samples.end(), gone.samples.begin(), gone.samples.end());
    window.AddScrape("node1", t, scrape);
  }
  EXPECT_EQ(window.series_count(), 2u * 3 + 2);
  for (; t < 800; t += 5) window.AddScrape("node1", t, Scrape(97, 700, 0, t));
  EXPECT_EQ(window.series_count(), 2u * 2 + 2);
}

TEST(MetricWindowTest, ScrapesOfHostsPastTheJobsCapAreDropped) {
  MetricWindow window;
  const Exposition step = ParseExposition("tb_step 1\n");
  for (int host = 0; host < 5000; ++host) window.AddScrape("n" + std::to_string(host), 0, step);
  EXPECT_EQ(window.hosts().size(), WindowLimits{}.max_hosts);
  EXPECT_EQ(window.series_count(), WindowLimits{}.max_hosts);
}

TEST(MetricWindowTest, AJobsSeriesStopAtItsCapWhileTheKeptOnesGoOn) {
  MetricWindow window(600, 1024, WindowLimits{.max_series = 10});
  for (double t = 0; t < 50; t += 5) {
    for (const char* host : {"node1", "node2", "node3"}) {
      window.AddScrape(host, t, Scrape(97, 700, 0, t));
    }
  }
  EXPECT_EQ(window.series_count(), 10u);
  EXPECT_EQ(window.point_count(), 10u * 10);
  EXPECT_EQ(window.LatestOf("tb_step")->value, 45);  // node1's: node2's came past the cap
}

// A daemon restarted after a job hung has no sample of the
// training. The hosts' baselines taken out of the window while the job
// trained (and kept in the state store) go into the new window, and the
// stall is judged as the first window would have judged it.
Exposition WithProcesses(Exposition scrape, int processes) {
  for (const char* gpu : {"0", "1"}) {
    scrape.samples.push_back({"hw_gpu_compute_processes", {{"gpu", gpu}}, double(processes)});
  }
  return scrape;
}

TEST(MetricWindowTest, BaselinesTakenOutBeforeARestartJudgeTheStallAfterIt) {
  MetricWindow before;
  double t = 0, retx = 0;
  for (; t < 30; t += 5) {  // the model loads: a context open, no work (the floor)
    before.AddScrape("node1", t, WithProcesses(Scrape(0, 120, retx, 0), 1));
    before.AddScrape("node2", t, WithProcesses(Scrape(0, 125, retx, 0), 1));
  }
  for (; t < 300; t += 5) {  // training, a TCP retransmit spike in its last minute
    retx += t < 240 ? 1 : 500;
    before.AddScrape("node1", t, WithProcesses(Scrape(97, 700, retx, t), 1));
    before.AddScrape("node2", t, WithProcesses(Scrape(96, 680, retx, t), 1));
  }
  const double from = 30, until = 295;
  // What the daemon saves while the job trains.
  const std::map<std::string, HostBaseline> saved = before.Baselines(t, from, until, 30);
  ASSERT_EQ(saved.size(), 2u);
  const HostBaseline& node1 = saved.at("node1");
  EXPECT_EQ(node1.power, 700);
  EXPECT_EQ(node1.idle_floors.at("0").with_context, 120);
  EXPECT_TRUE(node1.tcp_retransmit_rate && node1.tcp_retransmit_baseline);
  EXPECT_EQ(node1.training_until, until);
  for (; t < 400; t += 5) {  // stuck in a collective
    before.AddScrape("node1", t, WithProcesses(Scrape(100, 280, retx, 299), 1));
    before.AddScrape("node2", t, WithProcesses(Scrape(100, 270, retx, 299), 1));
  }
  const StallEvidence judged = before.Evidence(t, from, until, 30);
  ASSERT_EQ(ClassifyStall(judged).klass, "hang/busy-wait");

  // The daemon restarts while the job is hung: a new window, the spin only.
  MetricWindow after;
  for (double s = t; s < t + 60; s += 5) {
    after.AddScrape("node1", s, WithProcesses(Scrape(100, 280, retx, 299), 1));
    after.AddScrape("node2", s, WithProcesses(Scrape(100, 270, retx, 299), 1));
  }
  const StallEvidence without = after.Evidence(t + 55, from, until, 30);
  EXPECT_FALSE(without.hosts[0].baseline_power);
  EXPECT_FALSE(without.hosts[0].idle_power_floor);
  EXPECT_EQ(ClassifyStall(without).klass, "hang") << "what a restart cost before";
  for (const auto& [host, baseline] : saved) after.RestoreBaseline(host, baseline);
  const StallEvidence restored = after.Evidence(t + 55, from, until, 30);
  ASSERT_EQ(restored.hosts.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const HostEvidence& was = judged.hosts[i];
    const HostEvidence& is = restored.hosts[i];
    EXPECT_EQ(is.baseline_power, was.baseline_power) << is.host;
    EXPECT_EQ(is.idle_power_floor, was.idle_power_floor) << is.host;
    EXPECT_EQ(is.tcp_retransmit_rate, was.tcp_retransmit_rate) << is.host;
    EXPECT_EQ(is.tcp_retransmit_baseline, was.tcp_retransmit_baseline) << is.host;
  }
  EXPECT_EQ(after.IdleFloor("node2", "1"), 125);
  StallClassification c = ClassifyStall(restored);
  EXPECT_EQ(c.klass, "hang/busy-wait") << c.summary;
  EXPECT_EQ(c.evidence, ClassifyStall(judged).evidence) << "the same lines as before the restart";
  // Taken out again after the restart (the job trained on a little before
  // hanging again), the restored values are kept where the window has none.
  EXPECT_EQ(after.Baselines(t + 55, from, until + 10, 30).at("node1").power, 700);
  // Not for a span that ends before the saved one: that is not "before the stall".
  EXPECT_FALSE(after.Evidence(t + 55, from, until - 100, 30).hosts[0].baseline_power);
}

TEST(MetricWindowTest, ARestoredBaselineGivesWayToTheWindowsOwnSamples) {
  MetricWindow window;
  HostBaseline old;
  old.power = 1000;
  old.idle_floors["0"] = {.with_context = 150, .device = std::nullopt};
  old.training_until = 100;
  window.RestoreBaseline("node1", old);
  double t = 0;
  for (; t < 30; t += 5) window.AddScrape("node1", t, WithProcesses(Scrape(0, 130, 0, 0), 1));
  for (; t < 300; t += 5) window.AddScrape("node1", t, Scrape(97, 700, 0, t));
  const HostEvidence h = window.Evidence(t, 30, 295, 30).hosts.at(0);
  EXPECT_EQ(h.baseline_power, 700) << "its own training, not the restored figure";
  EXPECT_EQ(window.IdleFloor("node1", "0"), 130) << "the lowest floor seen, before or after";
  EXPECT_EQ(window.IdleFloor("node1", "1"), 130);
}

TEST(MetricWindowTest, RestoredBaselinesAreBoundedByTheWindowLimits) {
  MetricWindow window(600, 1024, WindowLimits{.max_hosts = 2, .max_gpus_per_host = 3});
  HostBaseline b;
  b.power = 700;
  for (int gpu = 0; gpu < 10; ++gpu) b.idle_floors[std::to_string(gpu)].with_context = 120;
  b.idle_floors[std::string(kMaxGpuLabelBytes + 1, 'x')].with_context = 120;
  for (const char* host : {"node1", "node2", "node3"}) window.RestoreBaseline(host, b);
  EXPECT_EQ(window.IdleFloor("node1", "2"), 120);
  EXPECT_FALSE(window.IdleFloor("node1", "3")) << "max_gpus_per_host floors per host";
  EXPECT_EQ(window.IdleFloor("node2", "0"), 120);
  EXPECT_FALSE(window.IdleFloor("node3", "0")) << "max_hosts hosts";
}

// The job's processes and what they wait on (hw_job_process_*,
// docs/exporter.md) come from the latest scrape that reported them, while it
// is within stale_after, bounded whatever the exporter answers.
TEST(MetricWindowTest, TheJobsProcessWaitsFromTheLatestScrape) {
  MetricWindow window(600);
  const std::string waits =
      "hw_job_processes 2\n"
      "hw_job_process_info{pid=\"4241\",comm=\"python3\",state=\"S\",wchan=\"futex_wait_queue\"} "
      "1\n"
      "hw_job_process_info{pid=\"4250\",comm=\"pt_data_worker\",state=\"D\",wchan=\"" +
      std::string(300, 'w') +
      "\"} 1\n"
      "hw_job_process_threads{pid=\"4241\",state=\"S\"} 12\n"
      "hw_job_process_threads{pid=\"4241\",state=\"R\"} 1\n"
      "hw_job_process_wchan_threads{pid=\"4241\",wchan=\"futex_wait_queue\"} 10\n"
      "hw_job_process_threads{pid=\"9999\",state=\"S\"} 3\n";  // no info line: dropped
  window.AddScrape("node1", 100, ParseExposition("hw_gpu_power_watts{gpu=\"0\"} 300\n" + waits));
  auto e = window.Evidence(101, 0, 50, 30);
  ASSERT_EQ(e.hosts.size(), 1u);
  const auto& processes = e.hosts[0].job_processes;
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].pid, "4241");
  EXPECT_EQ(processes[0].wchan, "futex_wait_queue");
  EXPECT_EQ(processes[0].threads.at("S"), 12);
  EXPECT_EQ(processes[0].thread_wchans.at("futex_wait_queue"), 10);
  EXPECT_EQ(processes[1].state, "D");
  EXPECT_EQ(processes[1].wchan.size(), 64u) << "a label is cut";

  // A scrape without the collector keeps the last report; stale, none.
  window.AddScrape("node1", 110, ParseExposition("hw_gpu_power_watts{gpu=\"0\"} 300\n"));
  EXPECT_EQ(window.Evidence(111, 0, 50, 30).hosts[0].job_processes.size(), 2u);
  EXPECT_TRUE(window.Evidence(131, 0, 50, 30).hosts[0].job_processes.empty());

  // The Slurm task a process is or descends from: a task id or nothing.
  window.AddScrape(
      "node1", 120,
      ParseExposition("hw_job_processes 4\n"
                      "hw_job_process_info{pid=\"1\",comm=\"a\",state=\"S\",wchan=\"x\",task="
                      "\"2\"} 1\n"
                      "hw_job_process_info{pid=\"2\",comm=\"b\",state=\"S\",wchan=\"x\",task="
                      "\"\"} 1\n"
                      "hw_job_process_info{pid=\"3\",comm=\"c\",state=\"S\",wchan=\"x\",task="
                      "\"node2\"} 1\n"
                      "hw_job_process_info{pid=\"4\",comm=\"d\",state=\"S\",wchan=\"x\",task="
                      "\"12345678901\"} 1\n"));
  const auto tasks = window.Evidence(121, 0, 50, 30).hosts[0].job_processes;
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].task, "2");
  EXPECT_EQ(tasks[1].task, "");
  EXPECT_EQ(tasks[2].task, "") << "not a task id";
  EXPECT_EQ(tasks[3].task, "") << "too long for one";
  EXPECT_EQ(processes[0].task, "") << "an exporter without the label";

  // A job's own server answering with thousands of processes: 64 kept.
  std::string many = "hw_job_processes 5000\n";
  for (int pid = 1; pid <= 5000; ++pid) {
    many += "hw_job_process_info{pid=\"" + std::to_string(pid) +
            "\",comm=\"x\",state=\"S\",wchan=\"none\"} 1\n";
  }
  window.AddScrape("node1", 140, ParseExposition(many));
  EXPECT_EQ(window.Evidence(141, 0, 50, 30).hosts[0].job_processes.size(), 64u);
}

// Only rank 0 prints: the hosts' evidence dates who left training first.
// node2's GPUs drop to idle power at t=120, node1's only at t=150 (it waits
// in the collective, then spins down); node3's exporter goes silent at 130
// in another window.
TEST(FirstDivergence, TheHostWhoseGpusLeftTrainingFirstIsNamedWithWhenAndHow) {
  MetricWindow window;
  double t = 0;
  for (; t <= 100; t += 5) {  // training: steps until 100
    window.AddScrape("node1", t, Scrape(97, 700, 0, t));
    window.AddScrape("node2", t, Scrape(97, 700, 0, t));
  }
  for (; t <= 200; t += 5) {
    window.AddScrape("node1", t, Scrape(97, t < 150 ? 690 : 150, 0, 100));
    window.AddScrape("node2", t, Scrape(t < 120 ? 97 : 0, t < 120 ? 690 : 80, 0, 100));
  }
  auto diverged = FirstDivergence(window, 0, 100, 200, 30);
  ASSERT_EQ(diverged.size(), 2u);
  EXPECT_EQ(diverged[0].host, "node2");
  EXPECT_EQ(diverged[0].at, 120);
  EXPECT_NE(diverged[0].how.find("under half its training 700 W"), std::string::npos)
      << diverged[0].how;
  EXPECT_EQ(diverged[1].host, "node1");
  EXPECT_EQ(diverged[1].at, 150);
  const std::string line = DescribeDivergence(diverged, 2);
  EXPECT_EQ(line.rfind("first divergence: node2 at ", 0), 0u) << line;
  EXPECT_NE(line.find(", 30 s before node1"), std::string::npos) << line;

  // All at once, every host: nothing tells them apart.
  EXPECT_EQ(DescribeDivergence({{"a", 100, "x"}, {"b", 102, "y"}}, 2), "");
  // One host still training is worth saying, even alone.
  EXPECT_NE(DescribeDivergence({{"a", 100, "x"}}, 2).find("1 other host still looks like training"),
            std::string::npos);

  MetricWindow silent;
  for (t = 0; t <= 200; t += 5) {
    silent.AddScrape("node1", t, Scrape(97, 700, 0, std::min(t, 100.0)));
    if (t <= 130) {
      silent.AddScrape("node3", t, Scrape(97, 700, 0, std::min(t, 100.0)));
    } else {
      silent.AddFailedScrape("node3", t);
    }
  }
  auto gone = FirstDivergence(silent, 0, 100, 200, 30);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].host, "node3");
  EXPECT_EQ(gone[0].at, 130);
  EXPECT_EQ(gone[0].how, "exporter silent since then");
}

// A process in D state dates the host's divergence from the scrape that
// first showed it, and a scrape without one ends it.
TEST(FirstDivergence, AProcessInDStateDatesItsHost) {
  MetricWindow window;
  auto with_process = [](const char* state) {
    return ParseExposition(
        std::string("hw_job_processes 1\nhw_job_process_info{pid=\"7\",comm=\"python3\",state=\"") +
        state + "\",wchan=\"pipe_read\"} 1\n");
  };
  window.AddScrape("node1", 100, with_process("S"));
  window.AddScrape("node1", 105, with_process("D"));
  window.AddScrape("node1", 110, with_process("D"));
  EXPECT_EQ(window.UninterruptibleSince("node1"), 105);
  window.AddScrape("node1", 115, with_process("S"));
  EXPECT_FALSE(window.UninterruptibleSince("node1"));
}

}  // namespace
}  // namespace jobmon::monitor
