// The progress model's parts, on the shapes real jobs print
// (tests/fixtures/real/progress has the jobs themselves): composite
// positions (StepFilter), step times stated on the line (FindStepSeconds),
// and the learned progress line (TemplateLearner).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/progress_template.h"
#include "jobmon/triage/step_filter.h"
#include "jobmon/triage/step_lines.h"
#include "jobmon/triage/triage.h"

namespace jobmon::triage {
namespace {

struct Fed {
  std::vector<int64_t> steps;
  std::vector<bool> activity;
  std::optional<int64_t> total;
};

Fed Feed(const std::vector<std::string>& lines, StepProfile profile = StepProfile::kGeneric) {
  StepFilter filter;
  Fed fed;
  uint64_t number = 0;
  for (const std::string& line : lines) {
    auto sample = ParseStep(profile, line);
    if (!sample) continue;
    for (const auto& accepted : filter.Offer(profile, *sample, ++number, line)) {
      fed.steps.push_back(accepted.sample.step);
      fed.activity.push_back(accepted.activity);
      if (accepted.sample.total_steps) fed.total = accepted.sample.total_steps;
    }
  }
  return fed;
}

TEST(ProgressModelTest, AnEpochsCounterThatRestartsIsTheRunsGlobalStep) {
  // Python logging, "epoch E iter I/N" restarting every epoch.
  std::vector<std::string> lines;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int iter = 1; iter <= 4; ++iter) {
      lines.push_back("2026-11-26 10:00:00,000 INFO train: epoch " + std::to_string(epoch) +
                      " iter " + std::to_string(iter) + "/4 loss 0.5");
    }
  }
  Fed fed = Feed(lines);
  ASSERT_EQ(fed.steps.size(), 12u);
  for (size_t i = 0; i < fed.steps.size(); ++i) {
    EXPECT_EQ(fed.steps[i], static_cast<int64_t>(i)) << "line " << i;
    EXPECT_FALSE(fed.activity[i]);
  }
  EXPECT_FALSE(fed.total) << "4 is the epoch's total, not the run's";
}

TEST(ProgressModelTest, TheTutorialsBracketsGiveEpochsAndTheRunsTotal) {
  Fed fed = Feed({"Epoch [1/3], Step [10/20], Loss: 0.1", "Epoch [1/3], Step [20/20], Loss: 0.1",
                  "Epoch [2/3], Step [10/20], Loss: 0.1", "Epoch [2/3], Step [20/20], Loss: 0.1",
                  "Epoch [3/3], Step [10/20], Loss: 0.1"});
  ASSERT_EQ(fed.steps.size(), 5u);
  EXPECT_EQ(fed.steps, (std::vector<int64_t>{9, 19, 29, 39, 49}));
  EXPECT_EQ(fed.total, 60) << "3 epochs of 20";
}

TEST(ProgressModelTest, WithoutTheEpochsTotalTheStepsPerEpochAreLearned) {
  Fed fed = Feed({"epoch 0 step 0 loss 1", "epoch 0 step 1 loss 1", "epoch 0 step 2 loss 1",
                  "epoch 1 step 0 loss 1", "epoch 1 step 1 loss 1", "epoch 2 step 0 loss 1"});
  EXPECT_EQ(fed.steps, (std::vector<int64_t>{0, 1, 2, 3, 4, 6}));
}

TEST(ProgressModelTest, ABarThatRestartsAfterItsTotalIsTheNextEpochAndAReplayIsActivity) {
  auto bar = [](int done) {
    return "\rtrain: " + std::to_string(done * 25) + "%|##| " + std::to_string(done) +
           "/4 [00:01<00:01,  2.00it/s]\x1b[A";
  };
  Fed fed = Feed({bar(1), bar(2), bar(3), bar(4), bar(1), bar(2)}, StepProfile::kHuggingFace);
  EXPECT_EQ(fed.steps, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  // A restart from a checkpoint: the counter goes back without reaching its
  // total; its moving forward again is activity, not new steps.
  Fed replay = Feed({"step 10 loss 1", "step 11 loss 1", "step 12 loss 1", "step 13 loss 1",
                     "step 11 loss 1", "step 12 loss 1", "step 14 loss 1"});
  EXPECT_EQ(replay.steps, (std::vector<int64_t>{10, 11, 12, 13, 11, 12, 14}));
  EXPECT_EQ(replay.activity, (std::vector<bool>{false, false, false, false, false, true, false}));
}

TEST(ProgressModelTest, StepTimesStatedOnTheLine) {
  EXPECT_NEAR(*FindStepSeconds("iter 20: loss 0.4994, time 1043.53ms, mfu 0.25%"), 1.04353, 1e-9);
  EXPECT_NEAR(*FindStepSeconds(" iteration 10/ 200 | elapsed time per iteration (ms): 1002.3 |"),
              1.0023, 1e-9);
  EXPECT_NEAR(*FindStepSeconds("steps: 4 loss: 0.1 iter time (s): 0.500 samples/sec: 3"), 0.5,
              1e-9);
  EXPECT_NEAR(*FindStepSeconds(" 5/12 [00:03<00:05,  1.50s/it]"), 1.5, 1e-9);
  EXPECT_NEAR(*FindStepSeconds(" 5/12 [00:03<00:05,  4.00it/s]"), 0.25, 1e-9);
  EXPECT_NEAR(*FindStepSeconds("step 3 loss 1 step_time=0.7"), 0.7, 1e-9);
  EXPECT_FALSE(FindStepSeconds("step 3 loss 1 time 12:00:01"));
  EXPECT_FALSE(FindStepSeconds("step 3 loss 1 time 2026-11-26"));
  EXPECT_FALSE(FindStepSeconds("step 3 loss 1"));
}

TEST(ProgressModelTest, TheLearnerFindsTheJobsOwnLineUnderNoiseAndOtherRanks) {
  TemplateLearner learner;
  double t = 0;
  for (int i = 0; i < 30; ++i) {
    int b = 2 + 2 * (i % 15), ep = i / 15;
    learner.Offer("0: [trn] ep=" + std::to_string(ep) + " b=" + std::to_string(b) +
                      " of 30 | l=0.4" + std::to_string(b) + " | 0.5" + std::to_string(b % 7) + "s",
                  t);
    learner.Offer("1: [trn] ep=0 b=" + std::to_string(b - 1) + " of 30 | l=0.1 | 0.5s", t);
    if (b % 6 == 0) learner.Offer("0: INFO:data.prefetch:opened shard 000" + std::to_string(b), t);
    learner.Offer("0: 2026-11-26 10:00:" + std::to_string(10 + b) + " status ok", t);
    t += 1;
  }
  ASSERT_EQ(learner.kind(), LearnedKind::kCounter);
  ASSERT_TRUE(learner.Adopt());
  EXPECT_EQ(learner.shape(), "[trn] ep=# b=# of # | l=# | #s");
  auto first = learner.Match("0: [trn] ep=1 b=4 of 30 | l=0.2 | 0.5s");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->step, 4);
  EXPECT_EQ(first->epoch, 1) << "the field that changes when the batch restarts";
  EXPECT_EQ(first->total_steps, 30);
  EXPECT_FALSE(learner.Match("1: [trn] ep=1 b=4 of 30 | l=0.2 | 0.5s")) << "rank 1's";
  EXPECT_FALSE(learner.Match("0: INFO:data.prefetch:opened shard 00012"));
}

TEST(ProgressModelTest, AFractionalEpochIsFollowedByItsForwardMoves) {
  TemplateLearner learner;
  const char* epochs[] = {"0.25", "0.5", "0.75", "1", "1.25"};
  double t = 0;
  for (const char* epoch : epochs) {
    learner.Offer(std::string("{'loss': '0.3', 'grad_norm': '1.2', 'learning_rate': '0.001', "
                              "'epoch': '") +
                      epoch + "'}",
                  t += 5);
  }
  ASSERT_EQ(learner.kind(), LearnedKind::kCounter);
  ASSERT_TRUE(learner.Adopt());
  auto a = learner.Match(
      "{'loss': '0.2', 'grad_norm': '1.1', 'learning_rate': '0.001', 'epoch': '1.5'}");
  auto b = learner.Match(
      "{'loss': '0.2', 'grad_norm': '1.1', 'learning_rate': '0.001', 'epoch': '1.5'}");
  auto c = learner.Match(
      "{'loss': '0.1', 'grad_norm': '1.0', 'learning_rate': '0.001', 'epoch': '1.75'}");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(b->step, a->step) << "the same position again is no move";
  EXPECT_EQ(c->step, a->step + 1);
}

TEST(ProgressModelTest, APeriodicStatusLineIsAPulseButClocksAreNoCounter) {
  TemplateLearner learner;
  for (int i = 0; i < 6; ++i) {
    learner.Offer("2026-11-26 10:00:" + std::to_string(10 + 5 * i) +
                      " heartbeat: alive, rss=" + std::to_string(900 + (i % 2) * 3 + i) + " MB",
                  5.0 * i);
  }
  ASSERT_EQ(learner.kind(), LearnedKind::kPulse) << "the clock's seconds are no progress counter";
  ASSERT_TRUE(learner.Adopt());
  EXPECT_EQ(learner.period(), 5.0);
  auto one = learner.Match("2026-11-26 10:01:00 heartbeat: alive, rss=901 MB");
  auto two = learner.Match("2026-11-26 10:01:05 heartbeat: alive, rss=901 MB");
  ASSERT_TRUE(one && two);
  EXPECT_EQ(two->step, one->step + 1);
  // A message repeated verbatim at any rhythm is no pulse.
  TemplateLearner verbatim;
  for (int i = 0; i < 10; ++i) verbatim.Offer("waiting for the data server", 3.0 * i);
  EXPECT_FALSE(verbatim.kind());
}

TEST(ProgressModelTest, TheLearnersMemoryIsBoundedWhateverTheOutput) {
  TemplateLearner learner;
  for (int i = 0; i < 100000; ++i) {
    std::string word;
    for (int n = i; n > 0; n /= 26) word += static_cast<char>('a' + n % 26);
    learner.Offer("unique line " + word + " 1", i);
  }
  EXPECT_FALSE(learner.kind());
  for (int step = 0; step < 5; ++step)
    learner.Offer("step " + std::to_string(step) + " of my loop", 100000 + step);
  EXPECT_EQ(learner.kind(), LearnedKind::kCounter) << "room is made for a line that recurs";
}

// A first logged step within one logging interval is a fresh run's
// (`iter 19` when every 20th is logged); one further in, or a log that
// says it restored, is a restored run's.
TEST(ProgressModelTest, TheFirstLoggedStepOfAFreshRunIsNoRestore) {
  auto scanner = LogScanner::Create({});
  ASSERT_TRUE(scanner.ok());
  auto progress_of = [&](int64_t first, const std::string& header, int lines = 5) {
    std::string log = header;
    for (int64_t step = first; step < first + 20 * lines; step += 20)
      log += "iter " + std::to_string(step) + ": loss 1.25, time 10.00ms\n";
    auto facts = scanner.value()->ScanText(log);
    EXPECT_TRUE(facts.ok());
    return Analyze(*facts, {}).progress;
  };
  Progress fresh = progress_of(19, "");
  EXPECT_EQ(fresh.first_step, 19);
  EXPECT_FALSE(fresh.restored);
  EXPECT_FALSE(fresh.restored_from);
  EXPECT_EQ(fresh.steps_this_run, 100u) << "from step 0, whose lines were not logged";
  EXPECT_FALSE(progress_of(19, "", 2).restored) << "two lines give the interval";
  EXPECT_FALSE(progress_of(20, "").restored) << "a loop counting from 1";
  Progress resumed = progress_of(1019, "");
  EXPECT_TRUE(resumed.restored);
  EXPECT_EQ(resumed.restored_from, 1018);
  // MaxText's own word that it restored.
  EXPECT_TRUE(progress_of(19, "restoring from this run's directory step 18\n").restored);
}

}  // namespace
}  // namespace jobmon::triage

namespace jobmon::triage {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/real/progress/" + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ProgressModelTest, ALogCutAfterTheFirstOfThreeEpochsIsNotTheLastPlannedStep) {
  // A real job's nested tqdm bars ("Epoch 1/3" over 30 batches), the log
  // cut where the outer bar reads 1/3.
  std::string log = ReadFixture("tqdm-nested-healthy.log");
  size_t cut = log.find("Epochs:  33%");
  ASSERT_NE(cut, std::string::npos);
  log.resize(log.find('\n', cut) + 1);
  auto scanner = LogScanner::Create({});
  ASSERT_TRUE(scanner.ok());
  auto facts = scanner.value()->ScanText(log);
  ASSERT_TRUE(facts.ok());
  Progress progress = Analyze(*facts, {}).progress;
  ASSERT_TRUE(progress.last_step);
  EXPECT_EQ(*progress.last_step, 29) << "the 30th batch of epoch 1";
  EXPECT_EQ(progress.total_steps, 90) << "3 epochs of 30";
  EXPECT_NEAR(progress.percent.value_or(0), 100.0 / 3, 0.01);
  // The whole run reaches its last planned step.
  auto whole = scanner.value()->ScanText(ReadFixture("tqdm-nested-healthy.log"));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(Analyze(*whole, {}).progress.last_step, 89);
}

}  // namespace
}  // namespace jobmon::triage
