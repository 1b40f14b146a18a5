// The host collector: the parsers of /proc/stat, /proc/meminfo and
// /proc/vmstat, and a broken file dropping only its own series.
#include "jobmon/exporter/host_collector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "collector_test_support.h"
#include "jobmon/exporter/proc_parsers.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::kFixture;
using test_support::kFixtures;
using test_support::Sample;
using test_support::Text;
using test_support::TreeCopy;

TEST(ProcParsers, SystemStatVmstatMeminfo) {
  auto stat = ParseSystemStat(ReadSmallFile(kFixture + "/stat").value());
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->procs_running, 3u);
  EXPECT_EQ(stat->procs_blocked, 1u);
  EXPECT_EQ(stat->context_switches, 38014093u);
  EXPECT_FALSE(ParseSystemStat("cpu 1 2 3\n").ok());
  auto mem = ParseKeyValues(ReadSmallFile(kFixture + "/meminfo").value());
  EXPECT_EQ(mem.at("Dirty"), 26008u * 1024);
  EXPECT_EQ(mem.at("HugePages_Total"), 0u);
  EXPECT_EQ(ParseKeyValues(ReadSmallFile(kFixture + "/vmstat").value()).at("oom_kill"), 2u);
}

TEST(Counters, ABrokenHostFileDropsItsOwnSeriesWhicheverItIs) {
  TreeCopy tree(kFixtures + "/procfs/basic", "host-bad");
  fs::remove(tree.dir() / "stat");
  HostCollector collector(tree.dir().string());
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok());
  std::string text = Text(*families);
  EXPECT_FALSE(Sample(text, "hw_procs_running")) << text;
  EXPECT_TRUE(Sample(text, "hw_mem_available_bytes")) << "meminfo's series stay: " << text;
  auto problems = collector.TakeProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("stat"), std::string::npos);
}

}  // namespace
}  // namespace jobmon::exporter
