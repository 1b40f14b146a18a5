// ParseExposition: our exporter's golden scrape, special values and hostile lines.
#include "jobmon/monitor/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace jobmon::monitor {
namespace {

TEST(ExpositionTest, ParsesOurExportersGoldenScrape) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/exporter/basic.prom");
  std::stringstream text;
  text << in.rdbuf();
  Exposition e = ParseExposition(text.str());
  EXPECT_EQ(e.bad_lines, 0u);
  size_t series_lines = 0;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);)
    series_lines += !line.empty() && line[0] != '#';
  EXPECT_EQ(e.samples.size(), series_lines);
  bool found = false;
  for (const Sample& s : e.samples) {
    if (s.name == "hw_gpu_power_watts" && s.labels.at("gpu") == "2") {
      EXPECT_DOUBLE_EQ(s.value, 712);
      EXPECT_EQ(s.labels.at("host"), "node7");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ExpositionTest, EscapesSpecialValuesAndHostileLines) {
  Exposition e = ParseExposition(
      "# HELP x y\n"
      "a{l=\"q\\\"uote\\\\n\",m=\"\"} 1.5 1700000000000\n"
      "b NaN\n"
      "c{} +Inf\n"
      "d{l=\"unterminated} 1\n"
      "{l=\"x\"} 1\n"
      "e 12abc\n"
      "f\n"
      "g{l=x} 1\n");
  ASSERT_EQ(e.samples.size(), 3u);
  EXPECT_EQ(e.samples[0].labels.at("l"), "q\"uote\\n");
  EXPECT_EQ(e.samples[0].labels.at("m"), "");
  EXPECT_DOUBLE_EQ(e.samples[0].value, 1.5);
  EXPECT_TRUE(std::isnan(e.samples[1].value));
  EXPECT_TRUE(std::isinf(e.samples[2].value));
  EXPECT_EQ(e.bad_lines, 5u);
}

TEST(ExpositionTest, ANameListKeepsOnlyItsSamplesAndSkipsTheRestUnread) {
  const std::string text =
      "# HELP hw_gpu_power_watts Power.\n"
      "hw_gpu_power_watts{gpu=\"0\",host=\"n1\"} 300\n"
      "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 12345\n"
      "node_broken{unterminated=\"x 1\n"
      "hw_gpu_power_watts_extra 7\n"
      "tb_step 42\n"
      "{bad} 1\n";
  const Exposition all = ParseExposition(text);
  EXPECT_EQ(all.samples.size(), 4u);
  EXPECT_EQ(all.bad_lines, 2u);
  const Exposition kept = ParseExposition(text, {"hw_gpu_power_watts", "tb_step"});
  ASSERT_EQ(kept.samples.size(), 2u);
  EXPECT_EQ(kept.samples[0].name, "hw_gpu_power_watts");
  EXPECT_EQ(kept.samples[0].labels.at("gpu"), "0");
  EXPECT_EQ(kept.samples[0].value, 300);
  EXPECT_EQ(kept.samples[1].name, "tb_step");
  EXPECT_EQ(kept.samples[1].value, 42);
  // The unnamed line is still bad; the unwanted malformed one is not read.
  EXPECT_EQ(kept.bad_lines, 1u);
}

TEST(ExpositionTest, LabelsHoldEachKeyOnceAsAMapDoes) {
  const Exposition e = ParseExposition("m{gpu=\"0\",host=\"a\",gpu=\"1\"} 2\n");
  ASSERT_EQ(e.samples.size(), 1u);
  const Labels& labels = e.samples[0].labels;
  EXPECT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels.at("gpu"), "1");  // the last value, as labels[key] = value in a map
  EXPECT_EQ(labels.count("host"), 1u);
  EXPECT_EQ(labels.count("type"), 0u);
  EXPECT_EQ(labels.find("type"), labels.end());
  EXPECT_THROW(labels.at("type"), std::out_of_range);
  Labels built = {{"gpu", "0"}, {"gpu", "9"}};
  built.emplace("gpu", "5");  // emplace keeps the value it has
  built.emplace("type", "sclk");
  EXPECT_EQ(built.at("gpu"), "0");
  EXPECT_EQ(built.at("type"), "sclk");
  built["type"] = "mclk";
  EXPECT_EQ(built.at("type"), "mclk");
  EXPECT_EQ(built.size(), 2u);
}

}  // namespace
}  // namespace jobmon::monitor
