// Choosing collectors by name (builtin_collectors.cc) and the pool's
// --interval sharing, with the duration parser --interval goes through.
#include "jobmon/exporter/collector_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "jobmon/common/duration.h"

namespace jobmon::exporter {
namespace {

TEST(Selection, UnknownCollectorIsRefusedNamingTheKnownOnes) {
  auto selected = SelectCollectors(BuiltinCollectors(SourcePaths{}), "host,gpu");
  ASSERT_FALSE(selected.ok());
  EXPECT_NE(selected.error().message.find("unknown collector 'gpu'"), std::string::npos);
  EXPECT_NE(selected.error().message.find("gpu_nvml"), std::string::npos);
  auto twice = SelectCollectors(BuiltinCollectors(SourcePaths{}), "host,host,net").value();
  EXPECT_EQ(twice.size(), 2u);
}

class CountingCollector : public Collector {
 public:
  explicit CountingCollector(std::shared_ptr<std::atomic<int>> calls) : calls_(std::move(calls)) {}
  Expected<Families> Collect() override {
    FamilyBuilder b;
    b.Counter("test_collections_total", "Collections", {}, ++*calls_);
    return b.Take();
  }

 private:
  std::shared_ptr<std::atomic<int>> calls_;
};

TEST(CollectorPool, ScrapesWithinTheIntervalShareOneCollection) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  std::vector<CollectorFactory> factories{
      {"counting", [calls] { return std::make_unique<CountingCollector>(calls); }, {}}};
  PoolOptions options;
  options.host = "node7";
  options.min_interval = std::chrono::milliseconds(300);
  CollectorPool pool(factories, options);
  for (int i = 0; i < 5; ++i) pool.Collect();
  EXPECT_EQ(calls->load(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  pool.Collect();
  EXPECT_EQ(calls->load(), 2);

  PoolOptions every_scrape = options;
  every_scrape.min_interval = std::chrono::milliseconds(0);
  CollectorPool eager(factories, every_scrape);
  for (int i = 0; i < 3; ++i) eager.Collect();
  EXPECT_EQ(calls->load(), 5);
}

TEST(Duration, PrometheusStyleAndBareSeconds) {
  using std::chrono::milliseconds;
  EXPECT_EQ(ParseDuration("5s").value(), milliseconds(5000));
  EXPECT_EQ(ParseDuration("500ms").value(), milliseconds(500));
  EXPECT_EQ(ParseDuration("1m30s").value(), milliseconds(90000));
  EXPECT_EQ(ParseDuration("2h").value(), milliseconds(7200000));
  EXPECT_EQ(ParseDuration("2.5").value(), milliseconds(2500));
  EXPECT_EQ(ParseDuration("0").value(), milliseconds(0));
  for (const char* bad : {"", "5x", "s", "-1s", "1m30", "1e400s", "400d", "nan", "9999999h"}) {
    auto parsed = ParseDuration(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.error().message.find("invalid duration"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace jobmon::exporter
