// Counters exactly right. Each test here failed on the exporter before the fix it names.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "jobmon/exporter/collector_pool.h"
#include "jobmon/exporter/gpu_amd_collector.h"
#include "jobmon/exporter/host_collector.h"
#include "jobmon/exporter/pfc_collector.h"
#include "jobmon/exporter/rdma_collector.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
const std::string kFixtures = JOBMON_FIXTURES;

std::string Text(const Families& families) {
  return prometheus::TextSerializer().Serialize(families);
}

// A writable copy of a fixture tree, removed at the end of the test.
class TreeCopy {
 public:
  explicit TreeCopy(const std::string& fixture, const std::string& tag)
      : dir_(fs::temp_directory_path() / ("jobmon-" + tag + "-" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::copy(fixture, dir_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TreeCopy() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }
  void Write(const std::string& relative, const std::string& text) const {
    std::ofstream(dir_ / relative) << text;
  }

 private:
  fs::path dir_;
};

// The value of the sample line that starts with `series` ("name{labels}"), or
// nullopt if there is none.
std::optional<double> Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

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

TEST(Counters, ABrokenRdmaFileDropsItsOwnSeriesAndSaysWhich) {
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-bad");
  const std::string port = "class/infiniband/bnxt_re0/ports/1/";
  tree.Write(port + "hw_counters/tx_retx_pkts", "-5\n");
  tree.Write(port + "hw_counters/rx_cnp_pkts", "nan\n");
  tree.Write(port + "hw_counters/tx_bytes", "inf\n");
  RdmaCollector collector(tree.dir().string());
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok()) << families.error().message;
  std::string text = Text(*families);
  const std::string b = "{device=\"bnxt_re0\",port=\"1\"}";
  EXPECT_FALSE(Sample(text, "hw_rdma_tx_retx_pkts_total" + b)) << text;
  EXPECT_FALSE(Sample(text, "hw_rdma_rx_cnp_pkts_total" + b)) << text;
  EXPECT_FALSE(Sample(text, "hw_rdma_tx_bytes_total" + b)) << text;
  EXPECT_EQ(Sample(text, "hw_rdma_rx_bytes_total" + b), 9000000) << "the other series stay";
  auto problems = collector.TakeProblems();
  ASSERT_EQ(problems.size(), 3u);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  for (const char* file : {"tx_retx_pkts", "rx_cnp_pkts", "tx_bytes"}) {
    EXPECT_NE(all.find(file), std::string::npos) << all;
  }
  EXPECT_TRUE(collector.TakeProblems().empty()) << "taken once";
}

TEST(Counters, NoPmaIsAbsentNotBroken) {
  // show_pma_counter (drivers/infiniband/core/sysfs.c) answers "N/A (no PMA)"
  // when the device has no performance management agent.
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-nopma");
  tree.Write("class/infiniband/mlx5_0/ports/1/counters/link_downed", "N/A (no PMA)\n");
  RdmaCollector collector(tree.dir().string());
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok());
  EXPECT_FALSE(Sample(Text(*families), "hw_rdma_link_downed_total{device=\"mlx5_0\",port=\"1\"}"));
  EXPECT_TRUE(collector.TakeProblems().empty());
}

TEST(Counters, RdmaPortIsActiveOnlyInState4) {
  // drivers/infiniband/core/sysfs.c state_show: "%d: %s\n" over NOP, DOWN,
  // INIT, ARMED, ACTIVE, ACTIVE_DEFER (enum ib_port_state 0-5).
  EXPECT_EQ(ParsePortActive("4: ACTIVE\n"), 1);
  EXPECT_EQ(ParsePortActive("5: ACTIVE_DEFER\n"), 0);
  EXPECT_EQ(ParsePortActive("1: DOWN\n"), 0);
  EXPECT_EQ(ParsePortActive("3: ARMED\n"), 0);
  EXPECT_FALSE(ParsePortActive("ACTIVE\n"));
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-defer");
  tree.Write("class/infiniband/bnxt_re0/ports/1/state", "5: ACTIVE_DEFER\n");
  auto families = RdmaCollector(tree.dir().string()).Collect();
  ASSERT_TRUE(families.ok());
  EXPECT_EQ(Sample(Text(*families), "hw_rdma_port_state{device=\"bnxt_re0\",port=\"1\"}"), 0);
}

TEST(Counters, OneSysfsFileIsServedUnderOneName) {
  // mlx5's local_ack_timeout_err is the catalog's ACK-timeout counter; it
  // was also served as hw_rdma_local_ack_timeout_err_total, so a sum over
  // hw_rdma_* counted it twice. Give it a value no other file has.
  TreeCopy tree(kFixtures + "/sysfs/rdma", "rdma-once");
  tree.Write("class/infiniband/mlx5_0/ports/1/hw_counters/local_ack_timeout_err", "987654321\n");
  auto families = RdmaCollector(tree.dir().string()).Collect();
  ASSERT_TRUE(families.ok());
  int served = 0;
  for (const auto& family : *families) {
    for (const auto& metric : family.metric) served += metric.counter.value == 987654321;
  }
  EXPECT_EQ(served, 1) << Text(*families);
}

TEST(Counters, ABrokenAmdFileDropsItsOwnSeries) {
  TreeCopy tree(kFixtures + "/sysfs/amd", "amd-bad");
  const std::string gpu = "devices/pci0000:00/0000:00:01.1/0000:11:00.0/";
  tree.Write(gpu + "mem_info_vram_used", "-5\n");
  tree.Write(gpu + "ras/umc_err_count", "ue: nan\nce: 3\n");
  GpuAmdCollector collector(tree.dir().string());
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok());
  std::string text = Text(*families);
  EXPECT_FALSE(Sample(text, "hw_gpu_vram_used_bytes{gpu=\"0\"}")) << text;
  EXPECT_FALSE(Sample(text, "hw_gpu_ras_umc_ue_total{gpu=\"0\"}")) << text;
  EXPECT_TRUE(Sample(text, "hw_gpu_vram_used_bytes{gpu=\"1\"}")) << "other GPUs stay";
  EXPECT_TRUE(Sample(text, "hw_gpu_vram_total_bytes{gpu=\"0\"}")) << "other files stay";
  EXPECT_EQ(collector.TakeProblems().size(), 2u);
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

TEST(Pfc, InterfacesComeFromTheProcfsRoot) {
  auto names = InterfacesIn(kFixtures + "/procfs/basic");
  ASSERT_TRUE(names.ok()) << names.error().message;
  EXPECT_EQ(*names, std::vector<std::string>{"eth0"}) << "lo left out";
  EXPECT_FALSE(InterfacesIn("/nonexistent").ok());
}

TEST(Pfc, AFixtureRootNeverReadsThisMachinesNics) {
  // eth0 of the fixture is not this machine's eth0: the ioctl would answer
  // for the latter.
  SourcePaths paths;
  paths.procfs = kFixtures + "/procfs/basic";
  paths.sysfs = "/nonexistent";
  auto pfc = SelectCollectors(BuiltinCollectors(paths), "pfc").value();
  ASSERT_EQ(pfc.size(), 1u);
  auto collector = pfc[0].make();
  auto families = collector->Collect();
  ASSERT_TRUE(families.ok());
  EXPECT_TRUE(families->empty()) << Text(*families);
  EXPECT_TRUE(IsLiveRoot("/proc", "/proc"));
  EXPECT_TRUE(IsLiveRoot("/proc/", "/proc"));
  EXPECT_FALSE(IsLiveRoot(kFixtures + "/procfs/basic", "/proc"));
}

}  // namespace
}  // namespace jobmon::exporter
