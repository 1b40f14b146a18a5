#include "jobmon/chart/gnuplot_chart.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace jobmon::chart {
namespace {

Picture Stalled() {
  Picture picture;
  picture.title = "Job 42 (train): hang/busy-wait";
  picture.from = 1'700'000'000;
  picture.to = picture.from + 300;
  for (int i = 0; i <= 150; i += 10) picture.steps.push_back({picture.from + i, i * 2.0});
  picture.expected = {{picture.from, 0}, {picture.to, 600}};
  picture.stall_since = picture.from + 150;
  picture.alerted_at = picture.from + 200;
  HostPanel host{"node1", {}, {}};
  for (int g = 0; g < 2; ++g) {
    Line util{"GPU " + std::to_string(g), {}}, power{"GPU " + std::to_string(g), {}};
    for (int i = 0; i <= 300; i += 5) {
      util.points.push_back({picture.from + i, 100});
      power.points.push_back({picture.from + i, i < 150 ? 400.0 : 150.0});
    }
    host.utilization.push_back(util);
    host.power.push_back(power);
  }
  picture.hosts = {host};
  return picture;
}

TEST(GnuplotScript, TextFromTheJobNeverBecomesACommand) {
  Picture picture = Stalled();
  picture.title = "Job 1 (`touch /tmp/x`): $(id) ' ; system(\"id\") @macro \\";
  picture.hosts[0].host = "node1'; print system('id'); '";
  const std::string script = GnuplotScript(picture, {});
  EXPECT_EQ(script.find('`'), std::string::npos);
  EXPECT_EQ(script.find("system(\""), std::string::npos);
  EXPECT_EQ(script.find("system('"), std::string::npos);
  EXPECT_EQ(script.find('@'), std::string::npos);
  EXPECT_EQ(script.find('\\'), std::string::npos);
  // The data blocks are the only '$' uses: the names the script gave them.
  for (size_t at = script.find('$'); at != std::string::npos; at = script.find('$', at + 1)) {
    const char next = script[at + 1];
    EXPECT_TRUE(next == 's' || next == 'e' || next == 'u' || next == 'p') << script.substr(at, 20);
  }
}

TEST(GnuplotScript, TheStallBandSpansFromTheLastProgressToTheEndInEveryPanel) {
  const std::string script = GnuplotScript(Stalled(), {});
  const std::string band = "set object 1 rect from 1700000150.000, graph 0 to 1700000300.000";
  size_t bands = 0;
  for (size_t at = script.find(band); at != std::string::npos; at = script.find(band, at + 1)) {
    ++bands;
  }
  EXPECT_EQ(bands, 2u);  // the steps panel and node1's
  EXPECT_NE(script.find(kStallColour), std::string::npos);
  EXPECT_EQ(GnuplotScript(Picture{}, {}).find("set object 1"), std::string::npos);
}

TEST(RenderPng, GnuplotDrawsAPng) {
  auto png = RenderPng(Stalled(), {});
  ASSERT_TRUE(png) << png.error().message;
  EXPECT_EQ(png->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(png->size(), 10'000u);  // two panels of lines, not an empty frame
  // To look at it: JOBMON_CHART_OUT=FILE.
  if (const char* out = std::getenv("JOBMON_CHART_OUT")) {
    std::ofstream(out, std::ios::binary) << *png;
  }
}

TEST(RenderPng, NoGnuplotIsAnErrorNotACrash) {
  ChartOptions options;
  options.gnuplot = "/nonexistent/gnuplot";
  auto png = RenderPng(Stalled(), options);
  ASSERT_FALSE(png);
  EXPECT_NE(png.error().message.find("/nonexistent/gnuplot"), std::string::npos);
}

}  // namespace
}  // namespace jobmon::chart
