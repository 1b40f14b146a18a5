// MetricWindow on NVIDIA (gpu_nvml) scrapes, through to ClassifyStall, with
// H100 figures: idle 71 W with no process, ~120 W with a
// CUDA context open, a busy-waiting kernel 124-146 W at 100% utilization
// and the 1980 MHz maximum SM clock, small-model training 270-300 W, bf16
// matmul training 697 W at 1372 MHz under the power cap.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/stall_classifier.h"

namespace jobmon::monitor {
namespace {

struct Gpu {
  double util = 0;
  double watts = 71;
  double sm_clock = 345;
  double mem_util = 0;
  int processes = 0;
  bool capped = false;
};

// What jobmon-exporter's gpu_nvml serves for a host with two GPUs; the
// second draws `offset` watts more (GPUs of one host differ a little).
Exposition NvScrape(const Gpu& g, double offset = 0) {
  std::string text;
  for (int gpu = 0; gpu < 2; ++gpu) {
    const std::string l = "gpu=\"" + std::to_string(gpu) + "\",host=\"h\"";
    auto line = [&](const std::string& name, const std::string& extra, double value) {
      text += name + "{" + l + extra + "} " + std::to_string(value) + "\n";
    };
    line("hw_gpu_utilization_percent", "", g.util);
    line("hw_gpu_power_watts", "", g.watts + gpu * offset);
    line("hw_gpu_clock_mhz", ",type=\"sclk\"", g.sm_clock);
    line("hw_gpu_clock_mhz", ",type=\"mclk\"", 2619);  // not the SM clock: dropped
    line("hw_gpu_clock_max_mhz", ",type=\"sclk\"", 1980);
    line("hw_gpu_clock_max_mhz", ",type=\"mclk\"", 2619);
    line("hw_gpu_memory_utilization_percent", "", g.mem_util);
    line("hw_gpu_power_capped", "", g.capped ? 1 : 0);
    line("hw_gpu_compute_processes", "", g.processes);
  }
  return ParseExposition(text);
}

constexpr double kStep = 5;  // seconds between scrapes

// Before training: no process (71 W), then a context open while the model
// loads (120 W): the floors. Returns the time after.
double StartUp(MetricWindow& window, const std::string& host, double t) {
  for (; t < 20; t += kStep) window.AddScrape(host, t, NvScrape({}));
  for (; t < 60; t += kStep) {
    window.AddScrape(host, t, NvScrape({.watts = 120, .sm_clock = 1980, .processes = 1}));
  }
  return t;
}

// Small-model training: 270-300 W, memory busy, clock at its maximum.
double SmallTraining(MetricWindow& window, const std::string& host, double t, double until,
                     double high_watts = 300) {
  for (int i = 0; t < until; t += kStep, ++i) {
    window.AddScrape(host, t,
                     NvScrape({.util = 97,
                               .watts = i % 2 ? 270.0 : high_watts,
                               .sm_clock = 1980,
                               .mem_util = 30,
                               .processes = 1}));
  }
  return t;
}

// A rank spinning in a collective: 100%, max clock, memory untouched,
// flat (124-146 W measured; GPU 0 at watts..watts+2, GPU 1 `offset` above).
double Spin(MetricWindow& window, const std::string& host, double t, double until,
            double watts = 130, double offset = 12) {
  for (int i = 0; t < until; t += kStep, ++i) {
    window.AddScrape(
        host, t,
        NvScrape(
            {.util = 100, .watts = watts + i % 3, .sm_clock = 1980, .mem_util = 0, .processes = 1},
            offset));
  }
  return t;
}

TEST(NvidiaWindowTest, LearnsTheContextFloorAndReadsTheNvmlSignals) {
  MetricWindow window;
  double t = StartUp(window, "node1", 0);
  const double from = t;
  t = SmallTraining(window, "node1", t, 400);
  const double until = t - kStep;
  t = Spin(window, "node1", t, 700);
  StallEvidence evidence = window.Evidence(t, from, until, 30);
  ASSERT_EQ(evidence.hosts.size(), 1u);
  const HostEvidence& h = evidence.hosts[0];
  EXPECT_EQ(window.IdleFloor("node1", "0"), 120) << "the context level, not the device's 71 W";
  ASSERT_TRUE(h.idle_power_floor);
  EXPECT_DOUBLE_EQ(*h.idle_power_floor, 120);
  ASSERT_TRUE(h.baseline_power);
  EXPECT_GE(*h.baseline_power, 270);
  EXPECT_LE(*h.baseline_power, 300);
  EXPECT_EQ(h.sm_clock_mhz, (std::vector<double>{1980, 1980})) << "the memory clock stays out";
  EXPECT_EQ(h.sm_clock_max_mhz, 1980);
  EXPECT_EQ(h.power_capped, false);
  EXPECT_EQ(h.memory_utilization, (std::vector<double>{0, 0}));
  EXPECT_EQ(h.job_gpu_processes, 2);
  ASSERT_TRUE(h.power_spread);
  EXPECT_LT(*h.power_spread, 0.05) << "130-132 W is flat; the training before stays out";
  StallClassification c = ClassifyStall(evidence);
  EXPECT_EQ(c.klass, "hang/busy-wait") << c.summary;
  EXPECT_NE(c.evidence[0].find("idle floor 120 W"), std::string::npos) << c.evidence[0];
}

TEST(NvidiaWindowTest, WithoutAFloorTheSpinIsFoundByClockMemoryAndFlatPower) {
  // The exporter came up with training already running: no idle sample,
  // so no floor. Spins of 124-146 W against a 270-300 W job are 0.41-0.54
  // of its baseline; below 0.5 the ratio rule already says busy-wait, so
  // take the upper part of the band (140-146 W against 270-280 W), where
  // only the clock, memory and flat power can decide.
  MetricWindow window;
  double t = SmallTraining(window, "node1", 0, 300, /*high_watts=*/280);
  const double until = t - kStep;
  t = Spin(window, "node1", t, 600, /*watts=*/140, /*offset=*/4);
  StallEvidence evidence = window.Evidence(t, 0, until, 30);
  const HostEvidence& h = evidence.hosts[0];
  EXPECT_FALSE(h.idle_power_floor);
  double ratio = (h.gpu_power[0] + h.gpu_power[1]) / 2 / *h.baseline_power;
  EXPECT_GE(ratio, 0.50);
  EXPECT_LE(ratio, 0.54) << "the band the power ratio alone cannot decide";
  EXPECT_EQ(ClassifyStall(evidence).klass, "hang/busy-wait");

  // The same power with memory in use and swinging is not a spin.
  MetricWindow busy_memory;
  t = SmallTraining(busy_memory, "node1", 0, 300, 280);
  for (int i = 0; t < 600; t += kStep, ++i) {
    busy_memory.AddScrape("node1", t,
                          NvScrape({.util = 100,
                                    .watts = i % 2 ? 145.0 : 175.0,
                                    .sm_clock = 1980,
                                    .mem_util = 25,
                                    .processes = 1}));
  }
  evidence = busy_memory.Evidence(t, 0, until, 30);
  EXPECT_GT(*evidence.hosts[0].power_spread, 0.10);
  EXPECT_EQ(ClassifyStall(evidence).klass, "hang") << "undecided, never busy-wait";
}

TEST(NvidiaWindowTest, SlowSmallModelTrainingIsNotABusyWait) {
  // No step for a while, yet the GPUs keep training at 270-300 W.
  MetricWindow window;
  double t = StartUp(window, "node1", 0);
  const double from = t;
  t = SmallTraining(window, "node1", t, 400);
  const double until = t - kStep;
  t = SmallTraining(window, "node1", t, 700);
  StallEvidence evidence = window.Evidence(t, from, until, 30);
  EXPECT_GT(*evidence.hosts[0].power_spread, 0.10);
  EXPECT_EQ(ClassifyStall(evidence).klass, "slow-not-hung");
}

TEST(NvidiaWindowTest, PowerCappedLargeTrainingIsComputing) {
  MetricWindow window;
  double t = 0;
  for (; t < 600; t += kStep) {
    window.AddScrape("node1", t,
                     NvScrape({.util = 100,
                               .watts = 697,
                               .sm_clock = 1372,
                               .mem_util = 60,
                               .processes = 1,
                               .capped = true}));
  }
  StallEvidence evidence = window.Evidence(t, 0, 300, 30);
  EXPECT_EQ(evidence.hosts[0].power_capped, true);
  EXPECT_EQ(ClassifyStall(evidence).klass, "slow-not-hung");
}

TEST(NvidiaWindowTest, AHostWhoseProcessIsGoneIsDeadAtTheContextFloor) {
  MetricWindow window;
  double t = 0;
  for (const char* host : {"node1", "node2"}) t = StartUp(window, host, 0);
  const double from = t;
  for (const char* host : {"node1", "node2"}) t = SmallTraining(window, host, from, 400);
  const double until = t - kStep;
  Spin(window, "node1", t, 700);
  // node2's rank crashed: the node lives, its GPUs idle well above 0 W.
  for (; t < 700; t += kStep) window.AddScrape("node2", t, NvScrape({.watts = 121}));
  StallEvidence evidence = window.Evidence(t, from, until, 30);
  ASSERT_EQ(evidence.hosts.size(), 2u);
  EXPECT_EQ(evidence.hosts[1].job_gpu_processes, 0);
  StallClassification c = ClassifyStall(evidence);
  EXPECT_EQ(c.klass, "hang/node-death") << c.summary;
  EXPECT_EQ(c.hosts, std::vector<std::string>{"node2"});
}

TEST(NvidiaWindowTest, NoProcessYetIsNotADeadProcess) {
  // A host whose GPUs never carried the job's process (still starting up,
  // or a rank without a GPU) has no process count to judge by.
  MetricWindow window;
  double t = 0;
  for (; t < 200; t += kStep) window.AddScrape("node1", t, NvScrape({}));
  EXPECT_FALSE(window.Evidence(t, 0, 100, 30).hosts[0].job_gpu_processes);
  EXPECT_EQ(window.IdleFloor("node1", "0"), 71) << "the device's own idle when no context";
}

TEST(NvidiaWindowTest, AmdScrapesLearnNoFloor) {
  // gpu_amd has no hw_gpu_compute_processes: its measured rules stay as
  // they were (no floor, no process count, no clock ceiling).
  MetricWindow window;
  for (double t = 0; t < 100; t += kStep) {
    window.AddScrape("node1", t,
                     ParseExposition("hw_gpu_utilization_percent{gpu=\"0\"} 0\n"
                                     "hw_gpu_power_watts{gpu=\"0\"} 90\n"
                                     "hw_gpu_clock_mhz{gpu=\"0\",type=\"sclk\"} 100\n"));
  }
  const HostEvidence h = window.Evidence(100, 0, 50, 30).hosts[0];
  EXPECT_FALSE(window.IdleFloor("node1", "0"));
  EXPECT_FALSE(h.idle_power_floor);
  EXPECT_FALSE(h.job_gpu_processes);
  EXPECT_FALSE(h.sm_clock_max_mhz);
}

}  // namespace
}  // namespace jobmon::monitor
