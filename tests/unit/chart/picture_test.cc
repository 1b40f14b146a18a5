#include "jobmon/chart/picture.h"

#include <gtest/gtest.h>

namespace jobmon::chart {
namespace {

std::vector<Point> Ramp(size_t n, double t0 = 0) {
  std::vector<Point> points;
  for (size_t i = 0; i < n; ++i) points.push_back({t0 + static_cast<double>(i), double(i)});
  return points;
}

TEST(ChartThin, KeepsTheFirstAndTheLastPointAndAtMostMax) {
  auto thin = Thin(Ramp(10000), 100);
  ASSERT_EQ(thin.size(), 100u);
  EXPECT_EQ(thin.front(), (Point{0, 0}));
  EXPECT_EQ(thin.back(), (Point{9999, 9999}));
  for (size_t i = 1; i < thin.size(); ++i) EXPECT_LT(thin[i - 1].t, thin[i].t);
  EXPECT_EQ(Thin(Ramp(5), 100).size(), 5u);
}

TEST(ChartBound, HostsPastTheCapAreCountedAndLinesAreCutToTheSpan) {
  Picture picture;
  picture.from = 100;
  picture.to = 200;
  picture.steps = Ramp(1000);  // 0..999: 100..200 in the span
  for (int h = 0; h < 20; ++h) {
    HostPanel host{"node" + std::to_string(h), {}, {}};
    for (int g = 0; g < 40; ++g) host.utilization.push_back({"GPU", Ramp(5000)});
    picture.hosts.push_back(host);
  }
  Bound(picture);
  EXPECT_EQ(picture.hosts.size(), kMaxHostPanels);
  EXPECT_EQ(picture.hosts_left_out, 20 - kMaxHostPanels);
  EXPECT_EQ(picture.hosts[0].host, "node0");
  EXPECT_EQ(picture.hosts[0].utilization.size(), kMaxLinesPerPanel);
  EXPECT_EQ(picture.hosts[0].utilization[0].points.size(), 101u);
  EXPECT_EQ(picture.steps.front().t, 100);
  EXPECT_EQ(picture.steps.back().t, 200);
}

TEST(ChartJson, RoundTripsAndBoundsWhatComesIn) {
  Picture picture;
  picture.title = "Job 7 (x): hang";
  picture.from = 0;
  picture.to = 50;
  picture.steps = Ramp(20);
  picture.expected = {{0, 0}, {50, 50}};
  picture.stall_since = 19;
  picture.alerted_at = 30;
  picture.hosts = {{"node1", {{"GPU 0", Ramp(10)}}, {{"GPU 0", Ramp(10)}}}};
  EXPECT_EQ(PictureFromJson(ToJson(picture)), picture);

  nlohmann::json hostile = ToJson(picture);
  hostile["steps"] = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) hostile["steps"].push_back({i * 0.0001, i});
  hostile["hosts"][0]["utilization"][0]["points"] = "not points";
  hostile["stall_since"] = "soon";
  Picture read = PictureFromJson(hostile);
  EXPECT_LE(read.steps.size(), kMaxPointsPerLine);
  EXPECT_TRUE(read.hosts[0].utilization[0].points.empty());
  EXPECT_FALSE(read.stall_since);
  EXPECT_EQ(PictureFromJson(nlohmann::json("nothing")), Picture{});
}

}  // namespace
}  // namespace jobmon::chart
