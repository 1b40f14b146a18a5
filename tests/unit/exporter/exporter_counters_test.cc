// Counters exactly right. Each test here failed on the exporter before the fix it names.
// One collector's own cases are in its <collector>_collector_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collector_test_support.h"
#include "jobmon/exporter/collector_pool.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::kFixtures;
using test_support::Sample;
using test_support::Text;
using test_support::TreeCopy;

TEST(Counters, OnlyPlainUnsignedDecimalsAreCounters) {
  // The kernel prints counters with "%llu\n" / "%u\n" (e.g.
  // drivers/infiniband/core/sysfs.c show_pma_counter, hw_stat_device_show).
  EXPECT_EQ(ParseCounter("12\n"), 12u);
  EXPECT_EQ(ParseCounter("0"), 0u);
  EXPECT_EQ(ParseCounter("18446744073709551615\n"), 18446744073709551615u);
  for (const char* bad : {"-5\n", "nan\n", "inf\n", "-inf", "1e3\n", "1.5\n", "0x10\n", "", "\n",
                          "12 13\n", "+7\n", "18446744073709551616\n", "N/A (no PMA)\n"}) {
    EXPECT_FALSE(ParseCounter(bad)) << bad;
  }
  EXPECT_EQ(ParseInteger("-5\n"), -5);  // hwmon temperatures may be negative
  EXPECT_FALSE(ParseInteger("nan\n"));
  EXPECT_FALSE(ParseInteger("inf\n"));
}

TEST(CollectorPool, AFailedCollectorSaysWhyOncePerChangeAndWhenItRecovers) {
  TreeCopy tree(kFixtures + "/procfs/basic", "pool-why");
  std::vector<std::string> lines;
  PoolOptions options;
  options.host = "node7";
  options.log = [&](const std::string& line) { lines.push_back(line); };
  CollectorPool pool(SelectCollectors(BuiltinCollectors([&] {
                                        SourcePaths p;
                                        p.procfs = tree.dir().string();
                                        p.sysfs = "/nonexistent";
                                        return p;
                                      }()),
                                      "host,net")
                         .value(),
                     options);
  auto scrape = [&] { return Text(pool.Collect()); };
  scrape();
  EXPECT_TRUE(lines.empty());
  std::string meminfo = ReadSmallFile((tree.dir() / "meminfo").string()).value();
  fs::remove(tree.dir() / "stat");
  std::string text = scrape();
  EXPECT_EQ(Sample(text, "hw_collector_success{collector=\"host\",host=\"node7\"}"), 0);
  EXPECT_TRUE(Sample(text, "hw_mem_available_bytes{host=\"node7\"}")) << "its other series stay";
  EXPECT_EQ(Sample(text, "hw_collector_success{collector=\"net\",host=\"node7\"}"), 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("host"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("/stat"), std::string::npos) << lines[0];
  scrape();
  scrape();
  EXPECT_EQ(lines.size(), 1u) << "the same reason is not repeated every scrape";
  tree.Write("stat", "procs_running 1\nprocs_blocked 0\nctxt 5\n");
  text = scrape();
  EXPECT_EQ(Sample(text, "hw_collector_success{collector=\"host\",host=\"node7\"}"), 1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("recovered"), std::string::npos) << lines[1];
}

class SleepyCollector : public Collector {
 public:
  Expected<Families> Collect() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return Families{};
  }
};

TEST(CollectorPool, ALateCollectorsDurationIsTheTimeItReallyTook) {
  PoolOptions options;
  options.host = "node7";
  options.deadline = std::chrono::milliseconds(200);
  std::vector<std::string> lines;
  options.log = [&](const std::string& line) { lines.push_back(line); };
  CollectorPool pool({{"sleepy", [] { return std::make_unique<SleepyCollector>(); }, {}}}, options);
  const std::string series = "hw_collector_duration_seconds{collector=\"sleepy\",host=\"node7\"}";
  auto first = Sample(Text(pool.Collect()), series);
  ASSERT_TRUE(first);
  EXPECT_GE(*first, 0.19) << "the scrape waited the whole deadline for it";
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto second = Sample(Text(pool.Collect()), series);
  ASSERT_TRUE(second);
  EXPECT_GE(*second, 0.34) << "still running: the time so far";
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("sleepy"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
}

}  // namespace
}  // namespace jobmon::exporter
