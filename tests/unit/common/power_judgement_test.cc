// The one power judgement (common/include/jobmon/common/power_judgement.h)
// that the monitor's classifiers and the diagnosis playbooks share.
#include "jobmon/common/power_judgement.h"

#include <gtest/gtest.h>

#include "jobmon/common/percentile.h"

namespace jobmon::power {
namespace {

TEST(PowerState, FractionsOfTheTrainingBaseline) {
  EXPECT_EQ(JudgePower(100, 300, 660), PowerState::kBusyWait);
  EXPECT_EQ(JudgePower(0, 140, 660), PowerState::kIdle);
  EXPECT_EQ(JudgePower(97, 600, 660), PowerState::kActive);
  EXPECT_EQ(JudgePower(97, 400, 660), PowerState::kBetween);
  EXPECT_EQ(JudgePower(0, 2, 660), PowerState::kDead);
  EXPECT_EQ(JudgePower(100, 300, std::nullopt), PowerState::kUnknown);
  // MI355X (the reference): 900 W training, 300 W busy-wait, 260 W idle floor.
  EXPECT_EQ(JudgePower(100, 300, 900, 260), PowerState::kBusyWait);
  EXPECT_FALSE(TrainingBaseline({660, 660, 660}));
  EXPECT_DOUBLE_EQ(*TrainingBaseline({600, 650, 660, 670, 900}), 660);
}

// Six samples: the nearest-rank median is the 3rd smallest, as the monitor's
// triage::Percentile(samples, 0.5) gives.
TEST(PowerState, TrainingBaselineIsTheNearestRankMedian) {
  EXPECT_DOUBLE_EQ(*TrainingBaseline({900, 600, 670, 650, 660, 610}), 650);
  EXPECT_FALSE(PowerFraction(300, std::nullopt));
  EXPECT_DOUBLE_EQ(*PowerFraction(300, 900, 260), 40.0 / 640.0);
  EXPECT_DOUBLE_EQ(*PowerFraction(300, 900, 800), 300.0 / 900.0) << "a floor too close: unusable";
}

// The four definitions of common/percentile.h on one even and one odd set:
// where they agree and where they do not.
TEST(Percentiles, EachDefinitionByName) {
  const std::vector<double> even = {40, 10, 30, 20}, odd = {50, 10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(Percentile(even, 0.5), 20) << "nearest rank: the lower middle";
  EXPECT_DOUBLE_EQ(UpperMedian(even), 30);
  EXPECT_DOUBLE_EQ(MeanMedian(even), 25);
  EXPECT_DOUBLE_EQ(Percentile(odd, 0.5), 30);
  EXPECT_DOUBLE_EQ(UpperMedian(odd), 30);
  EXPECT_DOUBLE_EQ(MeanMedian(odd), 30);
  EXPECT_DOUBLE_EQ(FloorIndexPercentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9)
      << "index floor(0.9 x 9) = 8";
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9);
  EXPECT_DOUBLE_EQ(FloorIndexPercentile({1, 2, 3, 4, 5}, 0.9), 4) << "nearest rank gives 5";
  EXPECT_DOUBLE_EQ(UpperMedian({}), 0);
  EXPECT_DOUBLE_EQ(MeanMedian({}), 0);
  EXPECT_DOUBLE_EQ(FloorIndexPercentile({}, 0.9), 0);
}

}  // namespace
}  // namespace jobmon::power
