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
  ProgressTracker tracker(triage::StallRule{}, 0);
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
  triage::StallRule policy = Policy();
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

// An announced evaluation: no stall while it lasts within its first-phase
// grace; its length is learned, not the rhythm; the next one is bounded by
// what was learned; one that never ends is still a stall.
TEST(ProgressTrackerTest, AnAnnouncedEvaluationIsAPhaseWithItsOwnLearnedBound) {
  triage::StallRule rule = Policy();  // min_stall 10 s
  rule.first_phase_grace_seconds = 120;
  rule.phase_grace_factor = 1.5;
  ProgressTracker t(rule, 0);
  double now = 0;
  int64_t step = 0;
  for (; step < 30; ++step, now += 1) t.OnStep(step, now);
  t.OnPhase(triage::PhaseKind::kEvaluation, now - 0.5);
  ProgressState during = t.Evaluate(now + 19);
  EXPECT_EQ(during.phase, Phase::kTraining) << "20 s into the first evaluation";
  ASSERT_TRUE(during.announced_phase);
  EXPECT_EQ(*during.announced_phase, triage::PhaseKind::kEvaluation);
  EXPECT_NE(during.threshold_reason.find("in evaluation"), std::string::npos);
  now += 20;  // the evaluation took 20.5 s
  for (const int64_t end = step + 30; step < end; ++step, now += 1) t.OnStep(step, now);
  ProgressState after = t.Evaluate(now - 1);
  EXPECT_FALSE(after.announced_phase);
  EXPECT_NEAR(*after.p99_interval, 1.0, 1e-9) << "the evaluation's gap taught no rhythm";
  EXPECT_DOUBLE_EQ(after.threshold_seconds, 10);
  // The second evaluation: bounded by 1.5 x 20.5 s from its start.
  t.OnPhase(triage::PhaseKind::kEvaluation, now - 1);
  EXPECT_EQ(t.Evaluate(now - 1 + 30).phase, Phase::kTraining);
  ProgressState never_ends = t.Evaluate(now - 1 + 31);
  EXPECT_EQ(never_ends.phase, Phase::kStalled) << "an evaluation that never ends is a hang";
}

// After a restart (or a log that could not be read), nothing is judged
// until the log was read up to date, and the clock starts from there.
TEST(ProgressTrackerTest, TimeNobodyWatchedIsNotCountedAsAStall) {
  ProgressTracker t(Policy(), 0);
  t.Restore(100, 1000, 1.0, 1.0, std::nullopt, std::nullopt);
  ProgressState blind = t.Evaluate(1500);
  EXPECT_TRUE(blind.blind);
  EXPECT_NE(blind.phase, Phase::kStalled) << "500 s since the stored step, none of it watched";
  t.OnWatched(1500);
  EXPECT_EQ(t.Evaluate(1509).phase, Phase::kTraining) << "the clock runs from 1500";
  EXPECT_EQ(t.Evaluate(1511).phase, Phase::kStalled) << "and judges once past the bound";
  // A read that failed mid-run: blind again, until a read reaches the end.
  t.OnStep(101, 1512);
  t.MarkBlind();
  EXPECT_NE(t.Evaluate(1600).phase, Phase::kStalled);
  t.OnWatched(1600);
  EXPECT_EQ(t.Evaluate(1605).phase, Phase::kTraining);
  t.OnStep(102, 1606);
  EXPECT_NEAR(*t.Evaluate(1606).p99_interval, 1.0, 1e-9)
      << "the gap across the blind time taught no rhythm";
}

// Lines in bursts (tqdm through srun) that state their step time: the
// bound is the step time's, plus one logging period, not the bursts' x k.
TEST(ProgressTrackerTest, AStatedStepTimeSetsTheBoundNotTheBursts) {
  triage::StallRule rule = Policy();
  rule.min_stall_seconds = 8;
  ProgressTracker t(rule, 0);
  double now = 0;
  int64_t step = 0;
  // 0.3 s steps, reaching the log 20 at a time every 6 s.
  for (int burst = 0; burst < 40; ++burst, now += 6) {
    step += 20;
    t.OnStep(step, now, 0.3);
  }
  ProgressState s = t.Evaluate(now - 6);
  EXPECT_NEAR(*s.p99_interval, 6.0, 1e-9);
  EXPECT_NEAR(s.threshold_seconds, 14, 1e-9) << "max(5 x 0.3, 8) + 6, not 5 x 6";
}

// A slowdown is a window of minutes, significant against the run's early
// steady state: a busy minute or noisy steps are not one; a sustained
// shift is.
TEST(ProgressTrackerTest, ASlowdownIsSustainedAndSignificantNotNoise) {
  SlowdownRule slowdown;  // 1.3, 300 s, 30 steps
  ProgressTracker t(Policy(), 0, slowdown);
  double now = 0;
  int64_t step = 0;
  uint32_t noise = 12345;  // a fixed pseudo-random sequence, uniform in [-1, 1]
  auto uniform = [&noise] {
    noise = noise * 1664525u + 1013904223u;
    return static_cast<double>(noise >> 8) / static_cast<double>(1u << 23) - 1.0;
  };
  auto run = [&](double seconds_per_step, double for_seconds, double jitter) {
    const double until = now + for_seconds;
    while (now < until) {
      const double s = seconds_per_step * (1 + jitter * uniform());
      now += s;
      t.OnStep(step++, now, s);
    }
  };
  run(0.3, 400, 0.2);  // the baseline: 300 s of noisy 0.3 s steps
  run(0.3, 300, 0.2);
  ProgressState steady = t.Evaluate(now);
  ASSERT_TRUE(steady.slowdown);
  EXPECT_NEAR(*steady.slowdown, 1.0, 0.05);
  EXPECT_FALSE(steady.slowdown_significant);
  run(0.4, 60, 0.1);  // a busy minute: 1.33x, for a minute
  ProgressState busy = t.Evaluate(now);
  EXPECT_LT(*busy.slowdown, 1.3) << "a minute in a 5-minute window";
  run(0.3, 300, 0.2);
  run(0.45, 320, 0.05);  // sustained: 1.5x for more than the window
  ProgressState slow = t.Evaluate(now);
  EXPECT_NEAR(*slow.slowdown, 1.5, 0.05);
  EXPECT_TRUE(slow.slowdown_significant);
  EXPECT_GE(slow.recent_steps, 30u);
}

}  // namespace
}  // namespace jobmon::monitor
