#include <gtest/gtest.h>

#include "gpu_sysfs.h"
#include "log_lines.h"
#include "scenario.h"

namespace jobmon::fake_trainer {
namespace {

TEST(StepLine, MatchesTheMaxTextFormat) {
  std::string line = StepLine({12, 1.2345, 456.7, 34.93, 13272.1, 2.71828});
  EXPECT_EQ(line,
            "completed step: 12, seconds: 1.234, TFLOP/s/device: 456.700, MFU: 34.93%, "
            "Tokens/s/device: 13272.100, loss: 2.718");
}

TEST(HeaderLines, CarryWhatTriageParses) {
  Scenario s;
  s.steps = 100;
  s.checkpoint_every = 20;
  RankInfo rank{0, 2, "node1", "77", "node[1-2]"};
  std::vector<std::string> lines = HeaderLines(s, rank, 1700000000.0);
  auto has = [&](const std::string& text) {
    return std::find(lines.begin(), lines.end(), text) != lines.end();
  };
  EXPECT_TRUE(has("NNODES=2"));
  EXPECT_TRUE(has("Job start: 2023-11-14T22:13:20Z"));
  EXPECT_TRUE(has("NODE_LIST=node[1-2]"));
  EXPECT_TRUE(has("Config param checkpoint_period: 20"));
  bool passthrough = false;
  for (const auto& line : lines) {
    if (line.rfind("PASSTHROUGH_ARGS=", 0) == 0) {
      passthrough = line.find("steps=100") != std::string::npos &&
                    line.find("enable_checkpointing=true") != std::string::npos;
    }
  }
  EXPECT_TRUE(passthrough);
}

TEST(JobSummaryLines, StatusLine) {
  RankInfo rank{0, 2, "node1", "77", "node[1-2]"};
  auto ok = JobSummaryLines(rank, 99, 100, 12.0, 0, 1700000000.0);
  auto failed = JobSummaryLines(rank, 10, 100, 12.0, 137, 1700000000.0);
  EXPECT_NE(std::find(ok.begin(), ok.end(), "Status: SUCCESS (exit 0)"), ok.end());
  EXPECT_NE(std::find(failed.begin(), failed.end(), "Status: FAILED (exit 137)"), failed.end());
  EXPECT_EQ(ok.front(), "================ JOB SUMMARY ================");
}

TEST(HeartbeatLines, NameTheAccusedTasksAsJaxDoes) {
  auto coordinator = HeartbeatCoordinatorLines({1, 3}, 1700000000.5);
  std::string all;
  for (const auto& line : coordinator) all += line + "\n";
  EXPECT_NE(all.find("UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats)"),
            std::string::npos);
  EXPECT_NE(all.find("/job:jax_worker/replica:0/task:1\n/job:jax_worker/replica:0/task:3\n"),
            std::string::npos);
  EXPECT_NE(all.find("The tasks have crashed"), std::string::npos);
  // absl prefix: "E1114 22:13:20.500000 ".
  EXPECT_EQ(coordinator[0].substr(0, 22), "E1114 22:13:20.500000 ");
  auto accused = HeartbeatAccusedLines(1, 1700000000.5);
  EXPECT_NE(accused[0].find("Polled error from coordination service"), std::string::npos);
  EXPECT_NE(accused[1].find("Terminating process because the JAX distributed service detected "
                            "fatal errors"),
            std::string::npos);
}

TEST(AbslPrefix, UtcTimestamp) {
  EXPECT_EQ(AbslPrefix('E', 1700000000.25, 42, "x.cc:1"), "E1114 22:13:20.250000 42 x.cc:1] ");
}

TEST(Scenario, ValidationNamesTheProblem) {
  Scenario s;
  EXPECT_TRUE(Validate(s, 2).ok());
  s.fault = Fault::kHang;
  s.fault_step = 30;
  EXPECT_NE(Validate(s, 2).error().message.find("hang step must be in [0, 30)"), std::string::npos);
  s.fault_step = 5;
  s.fault_rank = 2;
  EXPECT_NE(Validate(s, 2).error().message.find("--fault-rank 2"), std::string::npos);
  Scenario restore;
  restore.restore_from = 10;
  EXPECT_NE(Validate(restore, 1).error().message.find("needs --checkpoint-every"),
            std::string::npos);
  restore.checkpoint_every = 10;
  EXPECT_TRUE(Validate(restore, 1).ok());
  EXPECT_EQ(restore.FirstStep(), 11);
}

TEST(Scenario, StepTimes) {
  Scenario s;
  s.step_seconds = 1.0;
  s.slow_from = 10;
  s.slow_factor = 3.0;
  EXPECT_DOUBLE_EQ(NominalStepSeconds(s, 0), 1.5);  // warmup
  EXPECT_DOUBLE_EQ(NominalStepSeconds(s, 2), 1.0);
  EXPECT_DOUBLE_EQ(NominalStepSeconds(s, 10), 3.0);
  EXPECT_EQ(s.FaultRank(4), 3);
}

TEST(GpuReadings, PhasesAreDistinguishableAndDeterministic) {
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 50; ++i) {
    GpuReading training = ReadingFor(GpuPhase::kTraining, a);
    GpuReading hang = ReadingFor(GpuPhase::kBusyWait, a);
    EXPECT_GE(training.busy_percent, 94);
    EXPECT_GE(training.power_microwatts, 600'000'000);
    EXPECT_EQ(hang.busy_percent, 100);
    EXPECT_LE(hang.power_microwatts, 320'000'000) << "busy-wait: idle-level power";
    EXPECT_EQ(ReadingFor(GpuPhase::kTraining, b).power_microwatts, training.power_microwatts);
    ReadingFor(GpuPhase::kBusyWait, b);
  }
}

}  // namespace
}  // namespace jobmon::fake_trainer
