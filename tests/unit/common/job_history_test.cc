// The one query a head node's exporter forwards to its job's Prometheus
// (common/include/jobmon/common/job_history.h).

#include "jobmon/common/job_history.h"

#include <gtest/gtest.h>

namespace jobmon::job_history {
namespace {

TEST(JobHistory, ASelectorOfFamiliesGoesThroughRebuilt) {
  const std::string query = FamilySelector({"up", "hw_gpu_power_watts", "tb_step"});
  EXPECT_EQ(query, R"({__name__=~"up|hw_gpu_power_watts|tb_step"})");
  auto request = CheckRequest(query, "1700000000", "1700003600.5", "15");
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->families, (std::vector<std::string>{"up", "hw_gpu_power_watts", "tb_step"}));
  EXPECT_EQ(ForwardTarget(*request),
            "/api/v1/query_range?query=%7B__name__%3D~%22up%7Chw_gpu_power_watts%7Ctb_step%22%7D"
            "&start=1700000000.000&end=1700003600.500&step=15.000");
}

TEST(JobHistory, NoOtherPromQlIsForwarded) {
  for (const char* query : {
           R"(up)",
           R"({__name__=~".+"})",
           R"({__name__=~"up",job="x"})",
           R"({__name__=~"up"}[5m])",
           R"(count({__name__=~"up"}))",
           R"({__name__=~"up||x"})",
           R"({__name__=~"1up"})",
           R"({__name__=~"up"} or vector(1))",
           R"({__name__=~""})",
       }) {
    EXPECT_FALSE(CheckRequest(query, "0", "60", "15")) << query;
  }
}

TEST(JobHistory, TheSpanAndItsPointsAreBounded) {
  const std::string query = FamilySelector({"up"});
  EXPECT_TRUE(CheckRequest(query, "0", "3600", "2.5"));   // 1441 points
  EXPECT_FALSE(CheckRequest(query, "0", "3600", "2.4"));  // 1501: one too many
  EXPECT_FALSE(CheckRequest(query, "0", "3600", "0"));
  EXPECT_FALSE(CheckRequest(query, "0", "3600", "-15"));
  EXPECT_FALSE(CheckRequest(query, "3600", "0", "15"));
  EXPECT_FALSE(CheckRequest(query, "0", std::to_string(8 * 86400), "3600"));
  EXPECT_FALSE(CheckRequest(query, "now", "60", "15"));
  EXPECT_FALSE(CheckRequest(query, "0", "inf", "15"));
  EXPECT_FALSE(CheckRequest(query, "0", "60s", "15"));
  std::vector<std::string> many(kMaxFamilies + 1, "up");
  EXPECT_FALSE(CheckRequest(FamilySelector(many), "0", "60", "15"));
}

}  // namespace
}  // namespace jobmon::job_history
