// The one stall rule (triage/stall_rule.h), table-driven: each row is one
// situation the tracker, the triage projection or `jobmon status` meets.

#include "jobmon/triage/stall_rule.h"

#include <gtest/gtest.h>

namespace jobmon::triage {
namespace {

struct Row {
  const char* name;
  StallRule rule;
  StallInputs inputs;
  double seconds;
  bool checkpoint_grace;
  const char* reason;
};

TEST(StallThreshold, Table) {
  const StallRule rule{5.0, 60, 1.5, 600};
  const Row rows[] = {
      {"no steady steps: the minimum",
       rule,
       {std::nullopt, false, std::nullopt},
       60,
       false,
       "min_stall (no steady steps yet)"},
      {"fast steps: the minimum wins",
       rule,
       {1.0, false, std::nullopt},
       60,
       false,
       "min_stall (above k x p99)"},
      {"slow steps: k x p99",
       rule,
       {30.0, false, std::nullopt},
       150,
       false,
       "k x p99 step interval"},
      {"k x p99 equal to the minimum: the minimum",
       rule,
       {12.0, false, std::nullopt},
       60,
       false,
       "min_stall (above k x p99)"},
      {"first checkpoint: its fixed grace",
       rule,
       {1.0, true, std::nullopt},
       600,
       true,
       "checkpoint grace (first checkpoint)"},
      {"learned checkpoint pause: 1.5 x the longest",
       rule,
       {1.0, true, 100.0},
       150,
       true,
       "checkpoint grace (learned from earlier checkpoints)"},
      {"checkpoint grace below k x p99: k x p99 stays",
       rule,
       {100.0, true, 40.0},
       500,
       true,
       "k x p99 step interval"},
      {"learned pause ignored away from a checkpoint step",
       rule,
       {1.0, false, 1000.0},
       60,
       false,
       "min_stall (above k x p99)"},
      {"the projection's rule: factor 10, minimum 120",
       StallRule{10, 120, 1.5, 600},
       {20.0, false, std::nullopt},
       200,
       false,
       "k x p99 step interval"},
  };
  for (const Row& row : rows) {
    StallLimit limit = StallThreshold(row.rule, row.inputs);
    EXPECT_DOUBLE_EQ(limit.seconds, row.seconds) << row.name;
    EXPECT_EQ(limit.checkpoint_grace, row.checkpoint_grace) << row.name;
    EXPECT_EQ(limit.reason, row.reason) << row.name;
  }
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
