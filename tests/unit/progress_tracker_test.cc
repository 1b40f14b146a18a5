// ProgressTracker: the stall state machine (startup grace, threshold from
// the step times, checkpoint pauses, repeated steps of other tasks).
#include "jobmon/monitor/progress_tracker.h"

#include <gtest/gtest.h>

#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

using test_support::Policy;

TEST(ProgressTrackerTest, StartupGraceThenTrainingThenStalledAfterTheThreshold) {
  ProgressTracker t(Policy(), 1000);
  EXPECT_EQ(t.Evaluate(1100).phase, Phase::kStarting) << "compiling: within the startup grace";
  EXPECT_EQ(t.Evaluate(1121).phase, Phase::kStalled) << "no first step after the grace";
  double now = 1100;
  for (int step = 0; step < 30; ++step, now += 1.0) t.OnStep(step, now);
  ProgressState s = t.Evaluate(now);
  EXPECT_EQ(s.phase, Phase::kTraining);
  EXPECT_EQ(*s.last_step, 29);
  EXPECT_NEAR(*s.p99_interval, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 10) << "5 x 1 s < min_stall 10 s";
  EXPECT_EQ(t.Evaluate(now - 1 + 10).phase, Phase::kTraining);
  ProgressState stalled = t.Evaluate(now - 1 + 10.5);
  EXPECT_EQ(stalled.phase, Phase::kStalled);
  EXPECT_EQ(*stalled.expected_step_now, 29 + 10);
}

TEST(ProgressTrackerTest, SlowStepsRaiseTheThresholdAboveMinStall) {
  ProgressTracker t(Policy(), 0);
  double now = 0;
  for (int step = 0; step < 20; ++step, now += 4.0) t.OnStep(step, now);
  ProgressState s = t.Evaluate(now);
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 20) << "5 x p99 4 s";
  EXPECT_EQ(t.Evaluate(now - 4 + 19).phase, Phase::kTraining);
  EXPECT_EQ(t.Evaluate(now - 4 + 21).phase, Phase::kStalled);
}

TEST(ProgressTrackerTest, CheckpointPausesAreLearnedAndGetGraceNotAnAlarm) {
  ProgressTracker t(Policy(), 0);
  t.SetCheckpointPeriod(10);
  double now = 0;
  // 1 s steps; after each checkpoint step (10, 20) a 25 s pause.
  for (int step = 0; step <= 30; ++step) {
    t.OnStep(step, now);
    now += (step > 0 && step % 10 == 0) ? 25.0 : 1.0;
  }
  EXPECT_DOUBLE_EQ(*t.longest_checkpoint_pause(), 25);
  EXPECT_NEAR(*t.Evaluate(now).p99_interval, 1.0, 1e-9) << "pauses stay out of the p99";
  // Now sitting on checkpoint step 30: grace 1.5 x 25 s.
  ProgressState s = t.Evaluate(now - 25 + 30);
  EXPECT_TRUE(s.checkpoint_grace);
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 37.5);
  EXPECT_EQ(s.phase, Phase::kTraining);
  EXPECT_EQ(t.Evaluate(now - 25 + 38).phase, Phase::kStalled);
}

TEST(ProgressTrackerTest, RepeatedStepsFromOtherTasksDoNotCountAsProgress) {
  ProgressTracker t(Policy(), 0);
  double now = 0;
  for (int step = 0; step < 20; ++step, now += 1) t.OnStep(step, now);
  t.OnStep(19, now + 30);  // task 1 printing step 19 late
  EXPECT_EQ(*t.Evaluate(now + 31).last_step_time, now - 1);
  EXPECT_EQ(t.Evaluate(now + 31).phase, Phase::kStalled);
}

}  // namespace
}  // namespace jobmon::monitor
