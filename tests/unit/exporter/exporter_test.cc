#include <fcntl.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "jobmon/exporter/collector_pool.h"
#include "jobmon/exporter/gpu_amd_collector.h"
#include "jobmon/exporter/gpu_selection.h"
#include "jobmon/exporter/host_collector.h"
#include "jobmon/exporter/listen_address.h"
#include "jobmon/exporter/net_collector.h"
#include "jobmon/exporter/proc_parsers.h"
#include "jobmon/exporter/rdma_collector.h"
#include "jobmon/exporter/training_collector.h"
#include "jobmon/tfevents/event.h"
#include "jobmon/tfevents/record.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
const std::string kFixture = std::string(JOBMON_FIXTURES) + "/procfs/basic";

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

TEST(ProcParsers, PressureNetDevSnmp) {
  auto psi = ParsePressure(ReadSmallFile(kFixture + "/pressure/io").value());
  ASSERT_TRUE(psi.ok());
  EXPECT_DOUBLE_EQ(psi->some->avg10, 1.25);
  EXPECT_EQ(psi->full->total_us, 23732638u);
  EXPECT_FALSE(ParsePressure("some avg10=x avg60=0 avg300=0 total=0\n").ok());
  auto dev = ParseNetDev(ReadSmallFile(kFixture + "/net/dev").value());
  ASSERT_TRUE(dev.ok());
  ASSERT_EQ(dev->size(), 2u);
  EXPECT_EQ((*dev)[1].name, "eth0");
  EXPECT_EQ((*dev)[1].rx_drop, 7u);
  EXPECT_EQ((*dev)[1].tx_errors, 1u);
  auto snmp = ParseSnmpTables(ReadSmallFile(kFixture + "/net/snmp").value());
  ASSERT_TRUE(snmp.ok());
  EXPECT_EQ(snmp->at("Tcp:RetransSegs"), 1234);
  EXPECT_EQ(snmp->at("Tcp:MaxConn"), -1);
  EXPECT_FALSE(ParseSnmpTables("Tcp: A B\nUdp: 1 2\n").ok());
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

TEST(GpuAmd, SysfsTreeNumberedByPciAddress) {
  GpuAmdCollector collector(std::string(JOBMON_FIXTURES) + "/sysfs/amd");
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok()) << families.error().message;
  std::string text = prometheus::TextSerializer().Serialize(*families);
  // An 8-GPU node: card1 sits at 0000:11:00.0, before card0 at 0000:45:00.0,
  // so it is gpu 0; card5 (0000:65) is gpu 2, card6 (0000:e5, idle) gpu 6.
  for (const char* line :
       {"hw_gpu_power_watts{gpu=\"0\"} 301\n", "hw_gpu_power_watts{gpu=\"1\"} 655\n",
        "hw_gpu_power_watts{gpu=\"2\"} 712\n", "hw_gpu_power_watts{gpu=\"6\"} 141\n",
        "hw_gpu_utilization_percent{gpu=\"6\"} 0\n",
        "hw_gpu_clock_mhz{gpu=\"6\",type=\"sclk\"} 500\n", "hw_gpu_ras_umc_ue_total{gpu=\"6\"} 1\n",
        "hw_gpu_ras_umc_ce_total{gpu=\"6\"} 40\n", "hw_gpu_pcie_correctable_total{gpu=\"5\"} 7\n",
        "hw_gpu_temperature_celsius{gpu=\"7\"} 80\n", "hw_gpu_utilization_percent{gpu=\"0\"} 100\n",
        "hw_gpu_temperature_celsius{gpu=\"0\"} 55\n",
        "hw_gpu_clock_mhz{gpu=\"1\",type=\"sclk\"} 2100\n",
        "hw_gpu_clock_mhz{gpu=\"1\",type=\"mclk\"} 1300\n",
        "hw_gpu_vram_total_bytes{gpu=\"1\"} 206141652992\n",
        "hw_gpu_ras_umc_ce_total{gpu=\"0\"} 3\n", "hw_gpu_ras_gfx_ue_total{gpu=\"1\"} 1\n",
        "hw_gpu_pcie_correctable_total{gpu=\"0\"} 3\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("hw_gpu_ras_mmhub_ue_total{gpu=\"0\"}"), std::string::npos)
      << "a RAS block the GPU lacks is skipped";
  EXPECT_NE(text.find("hw_gpu_ras_mmhub_ue_total{gpu=\"2\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("hw_gpu_ras_sdma_ce_total{gpu=\"6\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("gpu=\"8\""), std::string::npos)
      << "connectors and render nodes are not GPUs";
  auto none = GpuAmdCollector("/nonexistent").Collect();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "no GPU: no series, no error";
}

// A node shared with another job: the prolog passes the job's GPUs 4-7.
TEST(GpuAmd, ServesOnlyTheJobsGpusAndSaysWhich) {
  auto selection = ParseGpuSelection("4,5,6,7", "slurm");
  ASSERT_TRUE(selection.ok()) << selection.error().message;
  GpuAmdCollector collector(std::string(JOBMON_FIXTURES) + "/sysfs/amd", *selection);
  std::string text = prometheus::TextSerializer().Serialize(collector.Collect().value());
  for (const char* line :
       {"hw_gpu_served{gpu=\"4\",source=\"slurm\",vendor=\"amd\"} 1\n",
        "hw_gpu_served{gpu=\"7\",source=\"slurm\",vendor=\"amd\"} 1\n",
        "hw_gpu_node_gpus{vendor=\"amd\"} 8\n", "hw_gpu_node_shared{vendor=\"amd\"} 1\n",
        "hw_gpu_power_watts{gpu=\"6\"} 141\n", "hw_gpu_temperature_celsius{gpu=\"7\"} 80\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  for (const char* absent : {"hw_gpu_served{gpu=\"0\"", "hw_gpu_power_watts{gpu=\"0\"}",
                             "hw_gpu_power_watts{gpu=\"2\"}", "{gpu=\"3\""}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << "\n" << text;
  }
  // Without an allocation: every GPU, and it says so.
  std::string all = prometheus::TextSerializer().Serialize(
      GpuAmdCollector(std::string(JOBMON_FIXTURES) + "/sysfs/amd").Collect().value());
  EXPECT_NE(all.find("hw_gpu_served{gpu=\"0\",source=\"all\",vendor=\"amd\"} 1\n"),
            std::string::npos);
  EXPECT_NE(all.find("hw_gpu_node_shared{vendor=\"amd\"} 0\n"), std::string::npos);
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

TEST(Rdma, BroadcomAndMlx5NamesAndStandardCounters) {
  RdmaCollector collector(std::string(JOBMON_FIXTURES) + "/sysfs/rdma");
  auto families = collector.Collect();
  ASSERT_TRUE(families.ok());
  std::string text = prometheus::TextSerializer().Serialize(*families);
  const std::string b = "device=\"bnxt_re0\",port=\"1\"", m = "device=\"mlx5_0\",port=\"1\"";
  for (const std::string& line :
       {"hw_rdma_port_state{" + b + "} 1\n", "hw_rdma_port_state{" + m + "} 0\n",
        "hw_rdma_tx_retx_pkts_total{" + b + "} 4\n", "hw_rdma_tx_ack_timeout_total{" + b + "} 2\n",
        "hw_rdma_rx_cnp_pkts_total{" + b + "} 17\n", "hw_rdma_rx_bytes_total{" + b + "} 9000000\n",
        // mlx5 names for the same series; port_*_data counts 4-byte words.
        "hw_rdma_tx_ack_timeout_total{" + m + "} 15\n", "hw_rdma_rx_cnp_pkts_total{" + m + "} 8\n",
        "hw_rdma_tx_cnp_pkts_total{" + m + "} 7\n", "hw_rdma_req_rx_cqe_err_total{" + m + "} 16\n",
        "hw_rdma_rx_bytes_total{" + m + "} 4000\n", "hw_rdma_tx_bytes_total{" + m + "} 8000\n",
        "hw_rdma_out_of_sequence_total{" + m + "} 12\n",
        "hw_rdma_link_downed_total{" + m + "} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.find("hw_rdma_tx_retx_pkts_total{" + m), std::string::npos)
      << "absent counters are skipped";
  auto none = RdmaCollector("/nonexistent").Collect();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(GpuAmd, Parsers) {
  EXPECT_EQ(ParseCurrentDpmMhz("0: 500Mhz\n1: 1500Mhz *\n2: 2100Mhz\n"), 1500);
  EXPECT_FALSE(ParseCurrentDpmMhz("0: 500Mhz\n"));
  EXPECT_EQ(ParseRasCount("ue: 4\nce: 9\n"), (std::pair<uint64_t, uint64_t>{4, 9}));
  EXPECT_FALSE(ParseRasCount("garbage"));
  EXPECT_EQ(ParseAerTotal("RxErr 2\nTOTAL_ERR_COR 3\n"), 3u);
  EXPECT_FALSE(ParseAerTotal("RxErr 2\n"));
}

class TrainingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-tb-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "tensorboard");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string Text(TrainingCollector& collector) {
    auto families = collector.Collect();
    EXPECT_TRUE(families.ok()) << families.error().message;
    return families.ok() ? prometheus::TextSerializer().Serialize(*families) : "";
  }
  static tfevents::ScalarEvent Step(int64_t step, double loss) {
    return {step, 1.8e9 + step, {{"learning/loss", loss}, {"perf/step_time_seconds", 1.5}}, ""};
  }
  fs::path dir_;
};

TEST_F(TrainingTest, IgnoresAPreviousJobsFileAndReadsIncrementally) {
  {
    auto old = tfevents::EventFileWriter::Create(dir_.string(), "old", 1.0);
    ASSERT_TRUE(old.ok());
    ASSERT_TRUE(old.value().Write(Step(999, 0.1)).ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // ctime has 1 s granularity here
  TrainingCollector collector(dir_.string(), std::chrono::system_clock::now());
  EXPECT_EQ(Text(collector), "") << "the previous job's file is never picked";

  auto writer = tfevents::EventFileWriter::Create((dir_ / "tensorboard").string(), "node1", 2.0);
  ASSERT_TRUE(writer.ok());
  for (int step = 0; step < 3; ++step)
    ASSERT_TRUE(writer.value().Write(Step(step, 10 - step)).ok());
  std::string first = Text(collector);
  EXPECT_NE(first.find("tb_step 2\n"), std::string::npos) << first;
  EXPECT_NE(first.find("tb_learning_loss 8\n"), std::string::npos);
  EXPECT_NE(first.find("tb_perf_step_time_seconds 1.5\n"), std::string::npos);
  ASSERT_TRUE(writer.value().Write(Step(3, 6.5)).ok());
  std::string second = Text(collector);
  EXPECT_NE(second.find("tb_step 3\n"), std::string::npos);
  EXPECT_NE(second.find("tb_learning_loss 6.5\n"), std::string::npos);
}

TEST_F(TrainingTest, ARecordStillBeingWrittenWaitsAndACorruptOneServesNothing) {
  TrainingCollector collector(dir_.string(),
                              std::chrono::system_clock::now() - std::chrono::seconds(5));
  std::string path = (dir_ / "events.out.tfevents.1.node1").string();
  std::string one = tfevents::FrameRecord(tfevents::EncodeEvent(Step(1, 3.0)));
  std::string two = tfevents::FrameRecord(tfevents::EncodeEvent(Step(2, 2.0)));
  std::ofstream(path, std::ios::binary) << one << two.substr(0, 10);
  EXPECT_NE(Text(collector).find("tb_step 1\n"), std::string::npos);
  std::ofstream(path, std::ios::binary | std::ios::app) << two.substr(10);
  EXPECT_NE(Text(collector).find("tb_step 2\n"), std::string::npos) << "completed on the next read";
  std::string bad = tfevents::FrameRecord(tfevents::EncodeEvent(Step(3, 1.0)));
  bad[bad.size() - 1] ^= 0x55;  // payload CRC
  std::ofstream(path, std::ios::binary | std::ios::app) << bad;
  auto families = collector.Collect();
  ASSERT_FALSE(families.ok());
  EXPECT_NE(families.error().message.find("CRC"), std::string::npos);
  EXPECT_EQ(TensorBoardMetricName("perf/per device-tokens.sec"), "tb_perf_per_device_tokens_sec");
}

// The job's user owns the tfevents dir: a link named like an event file
// (to a file only the exporter's user may read) was read through, and a
// FIFO swapped in after the scan held the collection on its open.
TEST_F(TrainingTest, AnEventFileThatIsALinkOrAFifoIsNotRead) {
  TrainingCollector collector(dir_.string(),
                              std::chrono::system_clock::now() - std::chrono::seconds(5));
  const fs::path elsewhere =
      fs::temp_directory_path() / ("jobmon-tb-other-" + std::to_string(getpid()));
  std::ofstream(elsewhere, std::ios::binary)
      << tfevents::FrameRecord(tfevents::EncodeEvent(Step(4242, 1.0)));
  fs::create_symlink(elsewhere, dir_ / "events.out.tfevents.2.link");
  std::string text = Text(collector);
  fs::remove(elsewhere);
  EXPECT_EQ(text.find("tb_step 4242"), std::string::npos) << "the link was not followed";
  // The file being followed, swapped for a FIFO: an error, not a wait (in a
  // child, so a wait fails the test instead of hanging it).
  const fs::path real = dir_ / "events.out.tfevents.3.node1";
  std::ofstream(real, std::ios::binary)
      << tfevents::FrameRecord(tfevents::EncodeEvent(Step(1, 1.0)));
  ASSERT_NE(Text(collector).find("tb_step 1\n"), std::string::npos);
  fs::remove(real);
  ASSERT_EQ(mkfifo(real.c_str(), 0600), 0);
  pid_t pid = fork();
  if (pid == 0) _exit(collector.Collect().ok() ? 1 : 0);
  int status = -1;
  for (int i = 0; i < 500 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20'000);
  if (!WIFEXITED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the FIFO was waited on";
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
