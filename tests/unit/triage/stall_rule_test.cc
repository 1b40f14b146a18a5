// The one stall rule (triage/stall_rule.h), table-driven: each row is one
// situation the tracker, the triage projection or `jobmon status` meets.

#include "jobmon/triage/stall_rule.h"

#include <gtest/gtest.h>

namespace jobmon::triage {
namespace {

StallInputs In(std::optional<double> step_interval, bool at_checkpoint,
               std::optional<double> longest_checkpoint_pause) {
  StallInputs in;
  in.step_interval = step_interval;
  in.at_checkpoint = at_checkpoint;
  in.longest_checkpoint_pause = longest_checkpoint_pause;
  return in;
}

struct Row {
  const char* name;
  StallRule rule;
  StallInputs inputs;
  double seconds;
  bool checkpoint_grace;
  const char* reason;
};

TEST(StallThreshold, Table) {
  const StallRule rule{.k = 5.0,
                       .min_stall_seconds = 60,
                       .checkpoint_grace_factor = 1.5,
                       .first_checkpoint_grace_seconds = 600};
  const Row rows[] = {
      {"no steady steps: the minimum", rule, In(std::nullopt, false, std::nullopt), 60, false,
       "min_stall (no steady steps yet)"},
      {"fast steps: the minimum wins", rule, In(1.0, false, std::nullopt), 60, false,
       "min_stall (above k x p99)"},
      {"slow steps: k x p99", rule, In(30.0, false, std::nullopt), 150, false,
       "k x p99 step interval"},
      {"k x p99 equal to the minimum: the minimum", rule, In(12.0, false, std::nullopt), 60, false,
       "min_stall (above k x p99)"},
      {"first checkpoint: its fixed grace", rule, In(1.0, true, std::nullopt), 600, true,
       "checkpoint grace (first checkpoint)"},
      {"learned checkpoint pause: 1.5 x the longest", rule, In(1.0, true, 100.0), 150, true,
       "checkpoint grace (learned from earlier checkpoints)"},
      {"checkpoint grace below k x p99: k x p99 stays", rule, In(100.0, true, 40.0), 500, true,
       "k x p99 step interval"},
      {"learned pause ignored away from a checkpoint step", rule, In(1.0, false, 1000.0), 60, false,
       "min_stall (above k x p99)"},
      {"another rule: factor 10, minimum 120", StallRule{.k = 10, .min_stall_seconds = 120},
       In(20.0, false, std::nullopt), 200, false, "k x p99 step interval"},
  };
  for (const Row& row : rows) {
    StallLimit limit = StallThreshold(row.rule, row.inputs);
    EXPECT_FALSE(limit.phase_grace) << row.name;
    EXPECT_DOUBLE_EQ(limit.seconds, row.seconds) << row.name;
    EXPECT_EQ(limit.checkpoint_grace, row.checkpoint_grace) << row.name;
    EXPECT_EQ(limit.reason, row.reason) << row.name;
  }
}

// Lines that state their own step time: k x its p99 plus one logging
// period (the p99 gap between progress lines, bursts included).
TEST(StallThreshold, AStatedStepTimeAddsOneLoggingPeriod) {
  StallRule rule{.k = 5, .min_stall_seconds = 8};
  StallInputs in;
  in.step_interval = 0.3;
  in.logging_period = 6.0;  // tqdm updates reaching the log in ~1 KB bursts
  StallLimit limit = StallThreshold(rule, in);
  EXPECT_DOUBLE_EQ(limit.seconds, 14) << "max(5 x 0.3, 8) + 6";
  EXPECT_EQ(limit.reason, "min_stall (above k x p99) + logging period 6s");
  in.step_interval = 4.0;
  EXPECT_DOUBLE_EQ(StallThreshold(rule, in).seconds, 26) << "5 x 4 + 6";
}

// An announced phase: its own bound from its start, the first of a kind a
// generous default, later ones learned; never below the training bound.
TEST(StallThreshold, AnAnnouncedPhaseHasItsOwnBound) {
  StallRule rule{.k = 5, .min_stall_seconds = 60};
  rule.phase_grace_factor = 1.5;
  rule.first_phase_grace_seconds = 900;
  StallInputs in;
  in.step_interval = 1.0;
  in.phase = PhaseKind::kEvaluation;
  in.phase_started_after_progress = 4;
  StallLimit first = StallThreshold(rule, in);
  EXPECT_DOUBLE_EQ(first.seconds, 904) << "4 s after the last step, then 900 s";
  EXPECT_TRUE(first.phase_grace);
  EXPECT_EQ(first.reason, "in evaluation: first of its kind (first_phase_grace)");
  in.longest_phase = 20;
  StallLimit learned = StallThreshold(rule, in);
  EXPECT_DOUBLE_EQ(learned.seconds, 60) << "4 + 1.5 x 20 = 34 < min_stall";
  EXPECT_FALSE(learned.phase_grace);
  in.longest_phase = 200;
  EXPECT_DOUBLE_EQ(StallThreshold(rule, in).seconds, 304);
  EXPECT_EQ(StallThreshold(rule, in).reason, "in evaluation: learned from the job's earlier ones");
}

TEST(IsCheckpointStep, Table) {
  struct {
    int64_t step;
    std::optional<int64_t> period;
    bool expected;
  } rows[] = {
      {200, 200, true},           {400, 200, true}, {199, 200, false},  {0, 200, false},
      {200, std::nullopt, false}, {200, 0, false},  {200, -100, false}, {7, 1, true},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(IsCheckpointStep(row.step, row.period), row.expected)
        << row.step << " period " << row.period.value_or(-1);
  }
}

}  // namespace
}  // namespace jobmon::triage
