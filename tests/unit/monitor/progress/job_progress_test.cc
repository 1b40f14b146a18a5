// JobProgress: following a job's log through a restart, checkpoint learning,
// step times from the lines' own stamps, a profile found in the corpus.
#include "jobmon/monitor/job_progress.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

using test_support::Append;
using test_support::Policy;
using test_support::TempDir;
namespace fs = std::filesystem;

std::string StepLine(int task, int step) {
  return std::to_string(task) + ": completed step: " + std::to_string(step) +
         ", seconds: 1.000, TFLOP/s/device: 450.000, MFU: 34.42%, Tokens/s/device: 8000.000, "
         "loss: 7.000\n";
}

TEST(JobProgressTest, FollowsTheLogLearnsCheckpointsAndResumesAfterARestart) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "0: Config param checkpoint_period: 10\n");
  JobProgress job(7, log.string(), Policy(), 0);
  double now = 100;
  for (int step = 0; step <= 20; ++step) {
    Append(log, StepLine(0, step) + StepLine(1, step));
    ASSERT_TRUE(job.Poll(now).ok());
    now += step == 10 ? 25 : 1;  // the checkpoint after step 10 takes 25 s
  }
  now -= 1;
  EXPECT_EQ(job.profile(), triage::StepProfile::kMaxText);
  ProgressState s = job.Evaluate(now);
  EXPECT_EQ(*s.last_step, 20);
  EXPECT_TRUE(s.checkpoint_grace) << "step 20 is a checkpoint step (period 10)";
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 37.5) << "1.5 x the 25 s pause learned at step 10";
  EXPECT_EQ(job.tail().back(), StepLine(1, 20).substr(0, StepLine(1, 20).size() - 1));

  // The daemon stops; two more steps arrive; it restarts from SQLite.
  ProgressRecord saved = job.Snapshot(now);
  Append(log, StepLine(0, 21) + StepLine(0, 22));
  JobProgress restarted(7, log.string(), Policy(), 0);
  restarted.Restore(saved);
  ASSERT_TRUE(restarted.Poll(now + 1).ok());
  EXPECT_EQ(restarted.tail().size(), 2u) << "only the lines written while it was down";
  ProgressState after = restarted.Evaluate(now + 1);
  EXPECT_EQ(*after.last_step, 22);
  EXPECT_NEAR(*after.p99_interval, 1.0, 1e-9);
  // The lines state their step time, and the restart keeps that: max(5 x
  // 1 s, min_stall 10 s) plus the 1 s logging period.
  EXPECT_EQ(restarted.Evaluate(now + 1 + 10.5).phase, Phase::kTraining);
  EXPECT_EQ(restarted.Evaluate(now + 1 + 11.5).phase, Phase::kStalled);
}

// HF Trainer's logging dict between the bar's bursts counts as progress; an
// evaluation announced in the log is a phase until the next step.
TEST(JobProgressTest, LoggingDictsAreActivityAndAnAnnouncedEvaluationIsAPhase) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  JobProgress job(7, log.string(), Policy(), 0);
  double now = 100;
  for (int step = 1; step <= 30; ++step, now += 1) {
    Append(log, " " + std::to_string(step * 100 / 300) + "%|#| " + std::to_string(step) +
                    "/300 [00:" + std::to_string(10 + step) + "<01:00,  1.00it/s]\n");
    ASSERT_TRUE(job.Poll(now).ok());
  }
  ASSERT_EQ(job.profile(), triage::StepProfile::kHuggingFace);
  const double last_step_at = now - 1;
  Append(log, "{'loss': '2.14', 'learning_rate': '0.001', 'epoch': '0.25'}\n");
  ASSERT_TRUE(job.Poll(now + 5).ok());
  ProgressState s = job.Evaluate(now + 5);
  ASSERT_TRUE(s.last_activity_time);
  EXPECT_DOUBLE_EQ(*s.last_activity_time, now + 5) << "the dict says the loop ran";
  EXPECT_EQ(*s.last_step_time, last_step_at);
  Append(log, "***** Running Evaluation *****\n");
  ASSERT_TRUE(job.Poll(now + 6).ok());
  ProgressState eval = job.Evaluate(now + 60);
  ASSERT_TRUE(eval.announced_phase);
  EXPECT_EQ(*eval.announced_phase, triage::PhaseKind::kEvaluation);
  EXPECT_EQ(eval.phase, Phase::kTraining) << "54 s into the first evaluation";
  EXPECT_NE(job.Snapshot(now + 60).phase.find("in evaluation"), std::string::npos);
}

// A log that cannot be read leaves the job blind: nothing judged until a
// read reaches its end, and the time in between is nobody's.
TEST(JobProgressTest, ALogThatCannotBeReadLeavesTheJobBlind) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  JobProgress job(7, log.string(), Policy(), 0);
  double now = 100;
  for (int step = 0; step < 20; ++step, now += 1) {
    Append(log, StepLine(0, step));
    ASSERT_TRUE(job.Poll(now).ok());
  }
  fs::rename(log, dir.path / "away.log");  // read before, gone now
  ASSERT_TRUE(job.Poll(now + 100).ok());
  ProgressState blind = job.Evaluate(now + 100);
  EXPECT_TRUE(blind.blind);
  EXPECT_NE(blind.phase, Phase::kStalled);
  fs::rename(dir.path / "away.log", log);
  ASSERT_TRUE(job.Poll(now + 101).ok());
  EXPECT_FALSE(job.Evaluate(now + 101).blind);
  EXPECT_EQ(job.Evaluate(now + 101 + 9).phase, Phase::kTraining) << "the clock runs from the read";
  EXPECT_EQ(job.Evaluate(now + 101 + 12).phase, Phase::kStalled);
}

// The training span (the power baseline's) starts at the first step read,
// and a restart keeps it; another task's line of the step already recorded,
// read after the restart, is no new first step (it made the baseline empty).
TEST(JobProgressTest, TheFirstStepTimeSurvivesARestartAndARepeatedStepIsNotOne) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  JobProgress job(7, log.string(), Policy(), 0);
  EXPECT_FALSE(job.first_step_time());
  double now = 100;
  for (int step = 0; step <= 5; ++step) {
    Append(log, StepLine(0, step) + StepLine(1, step));
    ASSERT_TRUE(job.Poll(now).ok());
    now += 1;
  }
  EXPECT_EQ(job.first_step_time(), std::optional<double>(100));
  Append(log, StepLine(0, 6));
  ASSERT_TRUE(job.Poll(now).ok());
  ProgressRecord saved = job.Snapshot(now);
  EXPECT_EQ(saved.first_step_time, std::optional<double>(100));
  // Task 1's line of step 6 arrives while the daemon is down.
  Append(log, StepLine(1, 6));
  JobProgress restarted(7, log.string(), Policy(), 0);
  restarted.Restore(saved);
  ASSERT_TRUE(restarted.Poll(now + 5).ok());
  EXPECT_EQ(restarted.first_step_time(), std::optional<double>(100));
  // Saved by a daemon that did not keep it: still no first step from the
  // repeat; the next new step is one.
  saved.first_step_time.reset();
  JobProgress older(7, log.string(), Policy(), 0);
  older.Restore(saved);
  ASSERT_TRUE(older.Poll(now + 5).ok());
  EXPECT_FALSE(older.first_step_time());
  Append(log, StepLine(0, 7));
  ASSERT_TRUE(older.Poll(now + 6).ok());
  EXPECT_EQ(older.first_step_time(), std::optional<double>(now + 6)) << "new progress is";
}

TEST(JobProgressTest, StepTimesComeFromTheLinesOwnStampsNotTheirArrival) {
  // torchtitan's line (torchtitan/components/metrics.py logger.info, Python
  // logging's default asctime) carries no step time, only its stamp: a
  // backlog read in one poll must not make every step take 0 s.
  TempDir dir;
  fs::path log = dir.path / "job.log";
  for (int step = 1; step <= 12; ++step) {
    Append(log, "2025-01-01 12:00:" + std::string(step * 4 < 10 ? "0" : "") +
                    std::to_string(step * 4) + ",000 - root - INFO - step: " +
                    std::to_string(step) + "  loss: 7.1234  memory: 10.00GiB(12.34%)\n");
  }
  JobProgress job(9, log.string(), Policy(), 0);
  ASSERT_TRUE(job.Poll(500).ok());
  EXPECT_EQ(job.profile(), triage::StepProfile::kTorchTitan);
  ProgressState s = job.Evaluate(500);
  ASSERT_TRUE(s.p99_interval.has_value());
  EXPECT_NEAR(*s.p99_interval, 4.0, 1e-9) << "4 s between the lines' stamps";
}

TEST(JobProgressTest, AKnownFormatThatAppearsAfterALearnedLineTakesOver) {
  // Data loading prints a status line every 5 s, its shard counter learned
  // as the job's line; then the loop's own "step N loss X" lines start:
  // they are followed from the third on.
  TempDir dir;
  fs::path log = dir.path / "job.log";
  JobProgress job(11, log.string(), Policy(), 0);
  double now = 0;
  for (int i = 0; i < 6; ++i, now += 5) {
    Append(log, "2026-11-26 10:00:" + std::to_string(10 + 5 * i) + " loading shard " +
                    std::to_string(i) + " of 64, rss=" + std::to_string(900 + 7 * i) + " MB\n");
    ASSERT_TRUE(job.Poll(now).ok());
  }
  EXPECT_EQ(job.profile(), triage::StepProfile::kLearned) << job.progress_source();
  for (int step = 0; step < 5; ++step, now += 1) {
    Append(log, "step " + std::to_string(step) + " loss 0.5\n");
    ASSERT_TRUE(job.Poll(now).ok());
  }
  EXPECT_EQ(job.profile(), triage::StepProfile::kGeneric);
  EXPECT_EQ(job.Evaluate(now).last_step, 4);
}

TEST(JobProgressTest, RecognisesMegatronFromTheCorpus) {
  JobProgress job(8, std::string(JOBMON_FIXTURES) + "/logs/megatron-profile.log", Policy(), 0);
  ASSERT_TRUE(job.Poll(50).ok());
  EXPECT_EQ(job.profile(), triage::StepProfile::kMegatron);
  EXPECT_TRUE(job.Evaluate(50).last_step.has_value());
}

// Megatron prints from its last rank (print_rank_last); under `srun -l`
// that is task 3's label. The monitor follows it, as `jobmon triage` does
// (triage's LeadRank), and a later line of another rank is not its progress.
TEST(JobProgressTest, OnlyTheLastRankPrintsAndItsStepsAreTheProgress) {
  TempDir dir;
  const auto log = dir.path / "job.log";
  Append(log, "");
  JobProgress job(9, log.string(), Policy(), 0);
  double now = 100;
  for (int it = 10; it <= 50; it += 10) {
    Append(log, "3:  iteration       " + std::to_string(it) +
                    "/     100 | consumed samples:          640 | elapsed time per iteration "
                    "(ms): 1000.0 | learning rate: 1.000000E-03 |\n");
    ASSERT_TRUE(job.Poll(now += 10).ok());
  }
  EXPECT_EQ(job.profile(), triage::StepProfile::kMegatron);
  EXPECT_EQ(job.Evaluate(now).last_step, 49);
  Append(log, "5:  iteration       90/     100 | elapsed time per iteration (ms): 1000.0 |\n");
  ASSERT_TRUE(job.Poll(now += 10).ok());
  EXPECT_EQ(job.Evaluate(now).last_step, 49) << "another rank's line is not the lead's progress";
}

}  // namespace
}  // namespace jobmon::monitor
