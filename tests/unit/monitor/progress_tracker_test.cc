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

// The chart's trail: bounded, thinned evenly when full, the newest kept.
TEST(ProgressTrackerTest, TheStepTrailIsBoundedAndKeepsTheWholeRunAtACoarserGrain) {
  ProgressTracker tracker(StallPolicy{}, 0);
  const int64_t steps = 10 * ProgressTracker::kTrailPoints;
  for (int64_t s = 0; s < steps; ++s) tracker.OnStep(s, static_cast<double>(s));
  tracker.OnStep(5, 1e9);  // not new: no point
  const auto& trail = tracker.trail();
  EXPECT_LE(trail.size(), ProgressTracker::kTrailPoints);
  EXPECT_GE(trail.size(), ProgressTracker::kTrailPoints / 2);
  EXPECT_LT(trail.front().step, steps / 10) << "the run's start is still drawn";
  EXPECT_EQ(trail.back().step, steps - 1);
  for (size_t i = 1; i < trail.size(); ++i) EXPECT_LT(trail[i - 1].step, trail[i].step);
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

TEST(ProgressTrackerTest, AJobThatLogsEveryHundredStepsIsJudgedByItsLines) {
  // Megatron's --log-interval 100 at 2 s per iteration: a line every 200 s.
  StallPolicy policy = Policy();
  policy.min_stall_seconds = 120;
  ProgressTracker t(policy, 0);
  double now = 60;
  for (int line = 1; line <= 8; ++line, now += 200) t.OnStep(line * 100 - 1, now, 2.0);
  now -= 200;
  ProgressState s = t.Evaluate(now + 150);
  EXPECT_EQ(s.phase, Phase::kTraining) << "150 s after a line, 200 s between lines";
  EXPECT_NEAR(*s.median_interval, 2.0, 1e-9) << "the step time is the line's";
  EXPECT_NEAR(*s.p99_interval, 200, 1e-9) << "the rhythm is the lines'";
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 1000);
  EXPECT_EQ(t.Evaluate(now + 1001).phase, Phase::kStalled);
}

TEST(ProgressTrackerTest, AStallDoesNotTeachTheRhythmSoTheNextHangIsSeenAsSoon) {
  ProgressTracker t(Policy(), 0);
  double now = 0;
  for (int step = 0; step < 30; ++step, now += 1) t.OnStep(step, now);
  EXPECT_EQ(t.Evaluate(now + 20).phase, Phase::kStalled);
  now += 20;  // resumed after a 21 s stall
  for (int step = 30; step < 40; ++step, now += 1) t.OnStep(step, now);
  EXPECT_DOUBLE_EQ(t.Evaluate(now).threshold_seconds, 10) << "still 5 x 1 s < min_stall 10 s";
}

TEST(ProgressTrackerTest, ActivityKeepsAJobLiveWithoutNewSteps) {
  ProgressTracker t(Policy(), 0);
  double now = 0;
  for (int step = 0; step < 30; ++step, now += 1) t.OnStep(step, now);
  // A validation pass: its bar moves every second for 30 s, no training step.
  for (int i = 0; i < 30; ++i, now += 1) t.OnActivity(now);
  ProgressState s = t.Evaluate(now);
  EXPECT_EQ(s.phase, Phase::kTraining);
  EXPECT_EQ(*s.last_step, 29);
  EXPECT_EQ(t.Evaluate(now + 11).phase, Phase::kStalled);
}

}  // namespace
}  // namespace jobmon::monitor
