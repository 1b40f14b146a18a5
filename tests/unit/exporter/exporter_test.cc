// The exporter beyond one collector: listen addresses, GPU selection, and the
// pool over the fixture tree (golden scrape, counters advancing, a failed or
// stuck collector).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector_test_support.h"
#include "jobmon/exporter/collector_pool.h"
#include "jobmon/exporter/gpu_selection.h"
#include "jobmon/exporter/listen_address.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::kFixture;

SourcePaths Paths(std::string procfs, std::string sysfs = "/nonexistent") {
  SourcePaths paths;
  paths.procfs = std::move(procfs);
  paths.sysfs = std::move(sysfs);
  paths.dev = std::string(JOBMON_FIXTURES) + "/dev";
  return paths;
}

// The collectors whose output depends only on the fixture tree (pfc reads
// this machine's NICs, gpu_nvml has its own tests with a fake library).
std::vector<CollectorFactory> FixtureCollectors(const SourcePaths& paths) {
  return SelectCollectors(BuiltinCollectors(paths), "host,net,tcp,rdma,dmesg,gpu_processes,gpu_amd")
      .value();
}

std::string Scrape(const CollectorPool& pool) {
  return prometheus::TextSerializer().Serialize(pool.Collect());
}

// Series lines without the ones that vary from run to run.
std::string StableLines(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("hw_collector_duration", 0) == 0 ||
        line.rfind("hw_collector_last_success", 0) == 0 ||
        line.rfind("hw_scrape_duration", 0) == 0 || line.rfind("# ", 0) == 0) {
      continue;
    }
    out += line + "\n";
  }
  return out;
}

TEST(ListenAddress, RefusesWildcardsAndHostnames) {
  EXPECT_EQ(ParseListenAddress("10.201.0.11:9400")->ToBindString(), "10.201.0.11:9400");
  EXPECT_EQ(ParseListenAddress("[fd00::5]:9400")->ToBindString(), "[fd00::5]:9400");
  for (const char* bad : {"0.0.0.0:9400", "[::]:9400", "node1:9400", "10.0.0.1", "10.0.0.1:0",
                          "10.0.0.1:70000", ":9400", "::1:9400"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
  EXPECT_NE(ParseListenAddress("0.0.0.0:1").error().message.find("refusing a wildcard"),
            std::string::npos);
}

// Hardening items 11 and 12: one address:port only (civetweb would bind the
// rest of a list), and the IPv4-mapped wildcard is a wildcard.
TEST(ListenAddress, RefusesListsSuffixesAndTheMappedWildcard) {
  for (const char* bad : {"10.0.0.5:9400,0.0.0.0:9401", "10.0.0.5:9400,9401", "10.0.0.5:9400s",
                          "10.0.0.5:9400r", "10.0.0.5:+9400", "[::ffff:0.0.0.0]:9400"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
  EXPECT_NE(ParseListenAddress("[::ffff:0.0.0.0]:9400").error().message.find("refusing a wildcard"),
            std::string::npos);
  EXPECT_EQ(ParseListenAddress("[::ffff:10.0.0.5]:9400")->ToBindString(), "10.0.0.5:9400");
}

TEST(Collectors, GoldenScrapeOfTheFixtureTree) {
  CollectorPool pool(
      FixtureCollectors(Paths(kFixture, std::string(JOBMON_FIXTURES) + "/sysfs/amd")), {"node7"});
  const std::string golden_path = std::string(JOBMON_FIXTURES) + "/exporter/basic.prom";
  std::string actual = StableLines(Scrape(pool));
  // After a deliberate change: JOBMON_UPDATE_GOLDEN=1, then review the diff.
  if (getenv("JOBMON_UPDATE_GOLDEN")) std::ofstream(golden_path) << actual;
  std::ifstream golden(golden_path);
  std::stringstream expected;
  expected << golden.rdbuf();
  EXPECT_EQ(actual, expected.str());
}

TEST(Collectors, CountersAdvanceWithTheFixtureAndLabelsStayStable) {
  fs::path dir = fs::temp_directory_path() / ("jobmon-procfs-" + std::to_string(getpid()));
  fs::copy(kFixture, dir, fs::copy_options::recursive);
  CollectorPool pool(FixtureCollectors(Paths(dir.string())), {"node7"});
  std::string first = StableLines(Scrape(pool));
  std::string snmp = ReadSmallFile((dir / "net/snmp").string()).value();
  snmp.replace(snmp.find(" 1234 "), 6, " 1300 ");
  std::ofstream((dir / "net/snmp").string()) << snmp;
  std::string second = StableLines(Scrape(pool));
  EXPECT_NE(first.find("hw_tcp_retransmits_total{host=\"node7\"} 1234"), std::string::npos);
  EXPECT_NE(second.find("hw_tcp_retransmits_total{host=\"node7\"} 1300"), std::string::npos);
  auto names = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out += line.substr(0, line.rfind(' ')) + "\n";
    return out;
  };
  EXPECT_EQ(names(first), names(second)) << "same series, same labels";
  fs::remove_all(dir);
}

TEST(Collectors, FailedCollectorServesNoStaleSeries) {
  fs::path dir = fs::temp_directory_path() / ("jobmon-procfs-gone-" + std::to_string(getpid()));
  fs::copy(kFixture, dir, fs::copy_options::recursive);
  CollectorPool pool(FixtureCollectors(Paths(dir.string())), {"node7"});
  ASSERT_NE(Scrape(pool).find("hw_net_rx_bytes_total"), std::string::npos);
  fs::remove(dir / "net/dev");
  std::string after = Scrape(pool);
  EXPECT_EQ(after.find("hw_net_rx_bytes_total"), std::string::npos) << "no ghost data";
  EXPECT_NE(after.find("hw_collector_success{collector=\"net\",host=\"node7\"} 0"),
            std::string::npos);
  EXPECT_NE(after.find("hw_collector_success{collector=\"host\",host=\"node7\"} 1"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(GpuSelection, FlagsAreCheckedNotGuessed) {
  EXPECT_FALSE(ParseGpuSelection("", "all")->only);
  EXPECT_EQ(ParseGpuSelection("3,1", "cgroup")->only, (std::set<int>{1, 3}));
  for (auto [gpus, source] : {std::pair{"0,1", "all"},
                              {"", "slurm"},
                              {"0,,1", "slurm"},
                              {"a", "slurm"},
                              {"-1", "slurm"},
                              {"0", "nvml"}}) {
    EXPECT_FALSE(ParseGpuSelection(gpus, source).ok()) << gpus << " " << source;
  }
}

// /proc/<pid>/cgroup lines as Slurm 22.05 places a job's processes:
// v1 <prepend>/uid_%u/job_%u/step_%u/task_%u (src/plugins/cgroup/v1/xcgroup.c),
// v2 <slurmd scope>/job_%u/step_%u/user/task_%u (src/plugins/cgroup/v2/cgroup_v2.c).
TEST(GpuSelection, AProcessBelongsToAJobByItsCgroup) {
  const char* v1 =
      "12:devices:/slurm/uid_1000/job_123/step_0/task_1\n11:memory:/slurm/uid_1000/job_123/"
      "step_0/task_1\n";
  const char* v2 = "0::/system.slice/slurmstepd.scope/job_123/step_batch/user/task_0\n";
  const char* v2_extern = "0::/system.slice/slurmstepd.scope/job_123/step_extern/slurm\n";
  EXPECT_TRUE(CgroupNamesJob(v1, "123"));
  EXPECT_TRUE(CgroupNamesJob(v2, "123"));
  EXPECT_TRUE(CgroupNamesJob(v2_extern, "123"));
  EXPECT_FALSE(CgroupNamesJob(v1, "12"));
  EXPECT_FALSE(CgroupNamesJob(v2, "1234"));
  EXPECT_FALSE(CgroupNamesJob("0::/user.slice/user-1000.slice/session-3.scope\n", "123"));
  EXPECT_FALSE(CgroupNamesJob(v1, ""));
}

// A job's user may make cgroups of its own (below its task's, delegated;
// in its systemd user manager) and name one job_<another job>: its
// processes there are not that job's.
TEST(GpuSelection, AUsersOwnCgroupNamedLikeAJobDoesNotCount) {
  const char* nested = "0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0/job_9999\n";
  EXPECT_TRUE(CgroupNamesJob(nested, "123")) << "still in its own job";
  EXPECT_FALSE(CgroupNamesJob(nested, "9999"));
  EXPECT_FALSE(CgroupNamesJob(
      "0::/user.slice/user-1000.slice/user@1000.service/app.slice/job_9999/x\n", "9999"));
  EXPECT_FALSE(
      CgroupNamesJob("0::/user.slice/user-1000.slice/user@1000.service/system.slice/"
                     "slurmstepd.scope/job_9999/step_0\n",
                     "9999"))
      << "Slurm's layout, below the user's own tree";
  EXPECT_FALSE(
      CgroupNamesJob("12:devices:/slurm/uid_1000/job_123/step_0/task_1/job_9999\n", "9999"));
  EXPECT_TRUE(CgroupNamesJob("0::/system.slice/node7_slurmstepd.scope/job_9999/step_0\n", "9999"))
      << "several slurmd on one host: the scope has the node's name";
  EXPECT_TRUE(CgroupNamesJob("4:memory:/slurm_node7/uid_0/job_9999\n", "9999"));
}

// Opening a FIFO that nobody writes blocks in the kernel, like a D-state
// sysfs read.
class FifoCollector : public Collector {
 public:
  explicit FifoCollector(std::string path) : path_(std::move(path)) {}
  Expected<Families> Collect() override {
    auto text = ReadSmallFile(path_);
    if (!text) return text.error();
    return Families{};
  }

 private:
  std::string path_;
};

TEST(CollectorPool, AStuckReadDelaysNoScrapeAndIsAbandonedWithinABound) {
  fs::path fifo = fs::temp_directory_path() / ("jobmon-stuck-" + std::to_string(getpid()));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto factories = FixtureCollectors(Paths(kFixture));
  factories.push_back(
      {"stuck", [p = fifo.string()] { return std::make_unique<FifoCollector>(p); }, {}});
  PoolOptions options{"node7", std::chrono::milliseconds(200), std::chrono::milliseconds(300), 1};
  CollectorPool pool(factories, options);
  for (int scrape = 0; scrape < 6; ++scrape) {
    auto start = std::chrono::steady_clock::now();
    std::string text = Scrape(pool);
    if (scrape > 0) {
      // Only the scrape that found it stuck waited for the deadline.
      EXPECT_LT(std::chrono::steady_clock::now() - start, options.deadline) << "scrape " << scrape;
    }
    EXPECT_NE(text.find("hw_collector_success{collector=\"stuck\",host=\"node7\"} 0"),
              std::string::npos);
    EXPECT_NE(text.find("hw_collector_success{collector=\"host\",host=\"node7\"} 1"),
              std::string::npos)
        << "other collectors are unaffected";
    EXPECT_NE(text.find("hw_procs_running{host=\"node7\"} 3"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(pool.stuck_threads(), 1) << "abandoned once, then held at the bound";
  EXPECT_NE(Scrape(pool).find("hw_collector_stuck_threads{host=\"node7\"} 1"), std::string::npos);
  // Unblock the readers so that no thread outlives the test.
  for (int i = 0; i < 3; ++i) {
    int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fs::remove(fifo);
}

}  // namespace
}  // namespace jobmon::exporter
