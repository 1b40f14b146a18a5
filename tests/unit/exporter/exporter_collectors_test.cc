// The node-level collectors added for GPUs and fabrics: dmesg, gpu_processes,
// pfc (ethtool ioctl), gpu_nvml (through a fake libnvidia-ml.so.1), and the
// pool's --interval sharing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "jobmon/common/duration.h"
#include "jobmon/exporter/collector_pool.h"
#include "jobmon/exporter/dmesg_collector.h"
#include "jobmon/exporter/gpu_nvml_collector.h"
#include "jobmon/exporter/gpu_process_collector.h"
#include "jobmon/exporter/gpu_selection.h"
#include "jobmon/exporter/kmsg_source.h"
#include "jobmon/exporter/pfc_collector.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
const std::string kFixtures = JOBMON_FIXTURES;

std::string Text(const Families& families) {
  return prometheus::TextSerializer().Serialize(families);
}

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(kFixtures + "/" + relative, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() /
             ("jobmon-" + tag + "-" + std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// ---- dmesg ----

TEST(Dmesg, ParsesRecordsContinuationLinesAndLeavesAPartialOne) {
  std::string text =
      "3,7,100,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:3b:00.0\n"
      "12,8,200,c;user message; with a semicolon\n"
      "6,9,300,-;partial";
  size_t consumed = 0;
  auto records = ParseKmsgRecords(text, &consumed);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].level, 3);
  EXPECT_EQ(records[0].sequence, 7u);
  EXPECT_EQ(records[0].message.rfind("NVRM: Xid", 0), 0u);
  EXPECT_EQ(records[1].level, 4) << "prio 12 = facility user(1) << 3 | warning(4)";
  EXPECT_EQ(records[1].message, "user message; with a semicolon");
  EXPECT_EQ(text.substr(consumed), "6,9,300,-;partial");
  // Garbage never crashes and yields no record.
  auto none = ParseKmsgRecords("no header here\n;;;\n,,,\n", &consumed);
  EXPECT_TRUE(none.empty());
}

TEST(Dmesg, ClassifiesNvidiaXidAndAmdgpuFaultsButNotNoiseOrStackFrames) {
  size_t consumed = 0;
  auto records = ParseKmsgRecords(ReadFixture("kmsg/gpu_errors.kmsg"), &consumed);
  ASSERT_EQ(records.size(), 17u);
  std::vector<uint64_t> errors;
  std::map<int, int> xids;
  for (const auto& record : records) {
    auto verdict = ClassifyKernelMessage(record);
    if (verdict.is_gpu_error) errors.push_back(record.sequence);
    if (verdict.xid) ++xids[*verdict.xid];
  }
  EXPECT_EQ(errors, (std::vector<uint64_t>{2002, 2003, 2004, 2005, 2007, 2008, 2009, 2010}));
  EXPECT_EQ(xids, (std::map<int, int>{{13, 1}, {48, 2}, {79, 1}}));
}

TEST(Dmesg, CountsOnlyRecordsAfterStartAndWaitsForAPartialRecord) {
  TempDir dev("dev");
  fs::copy_file(kFixtures + "/dev/kmsg", dev.path / "kmsg");
  DmesgCollector collector(dev.path.string());
  auto first = collector.Collect();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_NE(Text(*first).find("hw_dmesg_gpu_errors_total 0"), std::string::npos)
      << "the Xid 79 in the file predates the exporter: " << Text(*first);
  EXPECT_EQ(Text(*first).find("hw_gpu_xid_errors_total"), std::string::npos);

  std::string errors = ReadFixture("kmsg/gpu_errors.kmsg");
  size_t cut = errors.find("3,2007");  // the first amdgpu record, split in the middle
  {
    std::ofstream out(dev.path / "kmsg", std::ios::app | std::ios::binary);
    out << errors.substr(0, cut + 20);
  }
  std::string second = Text(collector.Collect().value());
  EXPECT_NE(second.find("hw_dmesg_gpu_errors_total 4"), std::string::npos) << second;
  EXPECT_NE(second.find("hw_gpu_xid_errors_total{xid=\"48\"} 2"), std::string::npos);
  {
    std::ofstream out(dev.path / "kmsg", std::ios::app | std::ios::binary);
    out << errors.substr(cut + 20);
  }
  std::string third = Text(collector.Collect().value());
  EXPECT_NE(third.find("hw_dmesg_gpu_errors_total 8"), std::string::npos) << third;
  EXPECT_NE(third.find("hw_gpu_xid_errors_total{xid=\"13\"} 1"), std::string::npos);
  EXPECT_NE(third.find("hw_gpu_xid_errors_total{xid=\"79\"} 1"), std::string::npos);
  EXPECT_NE(third.find("hw_dmesg_lost_records_total 0"), std::string::npos);
}

TEST(Dmesg, MissingKmsgIsAnErrorNotACrash) {
  DmesgCollector collector("/nonexistent");
  auto result = collector.Collect();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("/nonexistent/kmsg"), std::string::npos);
}

TEST(Dmesg, TheRealKmsgIsReadWithoutBlocking) {
  int probe = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
  if (probe < 0) GTEST_SKIP() << "/dev/kmsg not readable here";
  close(probe);
  DmesgCollector collector("/dev");
  auto start = std::chrono::steady_clock::now();
  auto result = collector.Collect();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // dmesg_restrict can refuse the read itself; then the error says so.
  if (!result.ok()) {
    EXPECT_NE(result.error().message.find("/dev/kmsg"), std::string::npos);
  } else {
    EXPECT_NE(Text(*result).find("hw_dmesg_gpu_errors_total"), std::string::npos);
  }
}

// The prolog's /dev/kmsg reaches the exporter as an inherited descriptor
// (--kmsg-fd): here a pipe stands in for it. The record is built from
// NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c
// (XID_PRINT_WITH_ATTR, "NVRM: Xid (" attr "): %d, pid=%s, name=%s, %s")
// in /dev/kmsg's "<prio>,<seq>,<usec>,<flags>;<message>" framing.
TEST(KmsgSource, AnInheritedPipeIsAdoptedAndItsXidLinesCounted) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // inheritable, blocking: as a descriptor arrives
  std::vector<std::string> notes;
  KmsgSource source = OpenKmsgSource(fds[0], "/nonexistent", &notes);
  EXPECT_TRUE(notes.empty());
  ASSERT_EQ(source.kind, KmsgSource::Kind::kInheritedFd) << source.where;
  EXPECT_EQ(source.fd.get(), fds[0]);
  EXPECT_EQ(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "nothing the exporter runs gets it";
  EXPECT_NE(fcntl(fds[0], F_GETFL) & O_NONBLOCK, 0) << "a scrape never waits on it";
  EXPECT_NE(source.where.find("fd " + std::to_string(fds[0]) + " (pipe:"), std::string::npos)
      << source.where;
  EXPECT_NE(Text(KmsgSourceFamilies(source)).find("hw_dmesg_source{source=\"inherited_fd\"} 1"),
            std::string::npos);

  DmesgCollector collector(source);
  auto empty = collector.Collect();
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_NE(Text(*empty).find("hw_dmesg_gpu_errors_total 0"), std::string::npos);
  std::string record =
      "3,9001,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen "
      "off the bus.\n";
  ASSERT_EQ(write(fds[1], record.data(), record.size()), static_cast<ssize_t>(record.size()));
  std::string text = Text(collector.Collect().value());
  EXPECT_NE(text.find("hw_dmesg_gpu_errors_total 1"), std::string::npos) << text;
  EXPECT_NE(text.find("hw_gpu_xid_errors_total{xid=\"79\"} 1"), std::string::npos) << text;

  // A collector rebuilt after a stuck one reads on from the same place.
  DmesgCollector rebuilt(source);
  ASSERT_EQ(write(fds[1], record.data(), record.size()), static_cast<ssize_t>(record.size()));
  EXPECT_NE(Text(rebuilt.Collect().value()).find("hw_dmesg_gpu_errors_total 1"), std::string::npos);
  EXPECT_NE(Text(collector.Collect().value()).find("hw_dmesg_gpu_errors_total 1"),
            std::string::npos)
      << "the record went to the rebuilt collector, not to both";
  close(fds[1]);
}

TEST(KmsgSource, AnUnusableDescriptorFallsBackAndNoneSaysWhy) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<std::string> notes;
  // A write end is no kernel log; the fallback then fails too.
  KmsgSource source = OpenKmsgSource(fds[1], "/nonexistent", &notes);
  EXPECT_EQ(source.kind, KmsgSource::Kind::kNone);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("not open for reading"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("/nonexistent/kmsg"), std::string::npos) << notes[1];
  std::string text = Text(KmsgSourceFamilies(source));
  EXPECT_NE(text.find("source=\"none\""), std::string::npos) << text;
  EXPECT_NE(text.find("error=\"/nonexistent/kmsg: No such file or directory\""), std::string::npos)
      << text;
  DmesgCollector collector(source);
  auto result = collector.Collect();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("/nonexistent/kmsg"), std::string::npos);
  close(fds[0]);
  close(fds[1]);

  // Closed, or one of stdin/stdout/stderr: refused, and <dev>/kmsg is used.
  TempDir dev("dev");
  fs::copy_file(kFixtures + "/dev/kmsg", dev.path / "kmsg");
  for (int bad : {fds[0], 1}) {
    notes.clear();
    KmsgSource fallback = OpenKmsgSource(bad, dev.path.string(), &notes);
    EXPECT_EQ(fallback.kind, KmsgSource::Kind::kDevice) << bad;
    EXPECT_EQ(notes.size(), 1u) << bad;
  }
  EXPECT_NE(fcntl(1, F_GETFD), -1) << "stdout left alone";
}

// ---- gpu_processes ----

TEST(GpuProcesses, RecognisesGpuDeviceNodesOnly) {
  for (const char* yes :
       {"/dev/kfd", "/dev/nvidia0", "/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm"}) {
    EXPECT_TRUE(IsGpuDeviceNode(yes, "/dev")) << yes;
  }
  for (const char* no :
       {"/dev/dri/renderD128", "/dev/nvidia-modeset", "/dev/nvidiafoo", "/dev/kfd2", "/dev/null",
        "/tmp/dev/kfd", "socket:[1234]", "/dev", "/devkfd"}) {
    EXPECT_FALSE(IsGpuDeviceNode(no, "/dev")) << no;
  }
  EXPECT_TRUE(IsGpuDeviceNode("/tmp/x/kfd", "/tmp/x/"));
}

TEST(GpuProcesses, CountsLiveProcessesHoldingTheDevice) {
  TempDir dev("gpudev");
  std::ofstream(dev.path / "kfd") << "";
  std::ofstream(dev.path / "nvidia0") << "";
  GpuProcessCollector collector("/proc", dev.path.string());
  auto count = [&] {
    std::string text = Text(collector.Collect().value());
    auto pos = text.find("\nhw_gpu_user_processes ");
    return pos == std::string::npos ? -1 : std::stoi(text.substr(pos + 23));
  };
  EXPECT_EQ(count(), 0);
  // Two children hold the "devices" open (one each); a third holds nothing.
  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  std::vector<pid_t> children;
  for (const char* node : {"kfd", "nvidia0", ""}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(release[1]);  // else the read below never sees end-of-file
      if (*node) open((dev.path / node).c_str(), O_RDONLY);
      char c = 1;
      (void)!write(ready[1], &c, 1);
      (void)!read(release[0], &c, 1);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (size_t i = 0; i < children.size(); ++i) {
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
  }
  EXPECT_EQ(count(), 2);
  close(release[1]);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
  EXPECT_EQ(count(), 0);
  close(ready[0]);
  close(ready[1]);
  close(release[0]);
}

// ---- pfc ----

EthtoolStats ParseEthtoolDashS(const std::string& text) {
  EthtoolStats stats;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto colon = line.rfind(": ");
    auto start = line.find_first_not_of(' ');
    if (colon == std::string::npos || line.rfind("NIC statistics", 0) == 0) continue;
    stats.names.push_back(line.substr(start, colon - start));
    stats.values.push_back(std::stoull(line.substr(colon + 2)));
  }
  return stats;
}

std::string Describe(const std::vector<PauseCounter>& counters) {
  std::string out;
  for (const auto& c : counters) {
    out += c.direction + "/" + c.priority + "=" + std::to_string(c.frames) + " ";
  }
  return out;
}

TEST(Pfc, FindsPauseCountersInMlx5AndBnxtStatistics) {
  EXPECT_EQ(Describe(FindPauseCounters(ParseEthtoolDashS(ReadFixture("ethtool/mlx5.txt")))),
            "rx/link=5120 tx/link=77 rx/0=0 tx/0=0 rx/3=5120 tx/3=77 ");
  EXPECT_EQ(Describe(FindPauseCounters(ParseEthtoolDashS(ReadFixture("ethtool/bnxt.txt")))),
            "rx/link=12 tx/link=3 rx/0=0 rx/3=940 tx/0=0 tx/3=31 ");
  EthtoolStats mismatched{{"rx_pause", "tx_pause"}, {5}};
  EXPECT_EQ(Describe(FindPauseCounters(mismatched)), "rx/link=5 ");
}

TEST(Pfc, CollectorLabelsPerInterfaceAndSkipsOnesThatVanish) {
  PfcCollector collector(
      [] {
        return std::vector<std::string>{"ens1f0np0", "gone", "eth0"};
      },
      [](const std::string& name) -> Expected<EthtoolStats> {
        if (name == "gone") return Error{"gone: No such device"};
        if (name == "eth0") return EthtoolStats{{"rx_kicks"}, {9}};
        return ParseEthtoolDashS(ReadFixture("ethtool/mlx5.txt"));
      });
  std::string text = Text(collector.Collect().value());
  EXPECT_NE(text.find("hw_net_pfc_pause_frames_total{device=\"ens1f0np0\",direction=\"rx\","
                      "priority=\"3\"} 5120"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("eth0"), std::string::npos);
  EXPECT_EQ(text.find("gone"), std::string::npos);
}

// The ioctl itself, on a veth pair in a network namespace of our own (a
// child process; the namespace and its links vanish with it).
TEST(Pfc, EthtoolIoctlReadsARealDriversStatistics) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace";
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(report[0]);
    std::string out;
    if (unshare(CLONE_NEWNET) != 0) {
      out = "skip: unshare";
    } else if (std::system("ip link add jmpfc0 type veth peer name jmpfc1 2>/dev/null") != 0) {
      out = "skip: no veth";
    } else {
      auto veth = ReadEthtoolStats("jmpfc0");
      auto lo = ReadEthtoolStats("lo");
      auto missing = ReadEthtoolStats("jmnosuch0");
      // /proc/net is the reading process's namespace: the new one here.
      auto listed = InterfacesIn("/proc");
      auto names = listed ? *listed : std::vector<std::string>{};
      out = std::string(veth.ok() ? "veth ok " : "veth error ") +
            (veth.ok() && !veth->names.empty() ? veth->names.front() : "") + " | lo " +
            (lo.ok() ? std::to_string(lo->names.size()) : "error") + " | missing " +
            (missing.ok() ? "ok" : "error") + " | interfaces";
      for (const auto& n : names) out += " " + n;
    }
    (void)!write(report[1], out.data(), out.size());
    _exit(0);
  }
  close(report[1]);
  std::string result;
  char buffer[512];
  for (ssize_t n; (n = read(report[0], buffer, sizeof buffer)) > 0;) result.append(buffer, n);
  close(report[0]);
  waitpid(pid, nullptr, 0);
  if (result.rfind("skip", 0) == 0) GTEST_SKIP() << result;
  EXPECT_EQ(result, "veth ok peer_ifindex | lo 0 | missing error | interfaces jmpfc0 jmpfc1");
}

// ---- gpu_nvml ----

class NvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path / "nvml-state";
    setenv("JOBMON_FAKE_NVML_STATE", state_.c_str(), 1);
  }
  void TearDown() override { unsetenv("JOBMON_FAKE_NVML_STATE"); }
  void WriteState(const std::string& text) { std::ofstream(state_) << text; }
  const std::string library_ = std::string(FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
  TempDir dir_{"nvml"};
  fs::path state_;
};

const char* kTwoGpus =
    "gpu util=97 mem_util=41 power_mw=352500 temp=71 sm_mhz=1980 mem_mhz=2619 "
    "mem_total=85899345920 mem_used=79456894976 ecc_corrected_volatile=2 "
    "ecc_uncorrected_volatile=0 ecc_corrected_aggregate=17 ecc_uncorrected_aggregate=1 "
    "pcie_replay=3 throttle=0x4\n"
    "gpu util=0 mem_util=0 power_mw=61000 temp=34 sm_mhz=345 mem_mhz=2619 "
    "mem_total=85899345920 mem_used=0 pcie_replay=0 throttle=0x1 unsupported=ecc\n";

// H100 figures: a rank spinning in a collective (100% util,
// SM clock at its 1980 MHz maximum, no power cap) with two processes on the
// GPU (the rank and a dataloader worker with a context), and a GPU whose
// process is gone (context released, idle clock).
const char* kH100 =
    "gpu util=100 mem_util=0 power_mw=131000 sm_mhz=1980 sm_max_mhz=1980 mem_mhz=2619 "
    "mem_max_mhz=2619 mem_total=85520809984 mem_used=2147483648 mem_reserved=503316480 "
    "throttle=0x0 pids=4242:1610612736,4301:536870912\n"
    "gpu util=0 mem_util=0 power_mw=71000 sm_mhz=345 sm_max_mhz=1980 mem_total=85520809984 "
    "mem_used=0 mem_reserved=503316480 throttle=0x1 pids=none\n"
    "gpu util=100 mem_util=38 power_mw=697000 sm_mhz=1372 sm_max_mhz=1980 throttle=0x4\n";

TEST_F(NvmlTest, ExportsTheSameNamesAsGpuAmdPlusNvidiaOnlyCounters) {
  WriteState(kTwoGpus);
  auto nvml = LoadNvml(library_);
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  GpuNvmlCollector collector(*nvml);
  std::string text = Text(collector.Collect().value());
  for (const char* line : {
           "hw_gpu_utilization_percent{gpu=\"0\"} 97\n",
           "hw_gpu_memory_utilization_percent{gpu=\"0\"} 41\n",
           "hw_gpu_power_watts{gpu=\"0\"} 352.5\n",
           "hw_gpu_power_watts{gpu=\"1\"} 61\n",
           "hw_gpu_temperature_celsius{gpu=\"0\"} 71\n",
           "hw_gpu_clock_mhz{gpu=\"0\",type=\"sclk\"} 1980\n",
           "hw_gpu_clock_mhz{gpu=\"1\",type=\"mclk\"} 2619\n",
           "hw_gpu_vram_used_bytes{gpu=\"0\"} 79456894976\n",
           "hw_gpu_vram_total_bytes{gpu=\"1\"} 85899345920\n",
           "hw_gpu_ecc_errors_total{counter=\"aggregate\",error=\"uncorrected\",gpu=\"0\"} 1\n",
           "hw_gpu_ecc_errors_total{counter=\"volatile\",error=\"corrected\",gpu=\"0\"} 2\n",
           "hw_gpu_pcie_replay_total{gpu=\"0\"} 3\n",
           "hw_gpu_throttle_reasons{gpu=\"0\"} 4\n",
           "hw_gpu_throttle_active{gpu=\"0\",reason=\"sw_power_cap\"} 1\n",
           "hw_gpu_throttle_active{gpu=\"0\",reason=\"gpu_idle\"} 0\n",
           "hw_gpu_throttle_active{gpu=\"1\",reason=\"gpu_idle\"} 1\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  EXPECT_EQ(
      text.find("hw_gpu_ecc_errors_total{counter=\"aggregate\",error=\"corrected\",gpu=\"1\""),
      std::string::npos)
      << "NOT_SUPPORTED values are skipped";
}

TEST_F(NvmlTest, ClockCeilingPowerCapProcessesAndV2MemoryForTheStallClassifier) {
  WriteState(kH100);
  auto nvml = LoadNvml(library_);
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  GpuNvmlCollector collector(*nvml);
  std::string text = Text(collector.Collect().value());
  for (const char* line : {
           "hw_gpu_clock_max_mhz{gpu=\"0\",type=\"sclk\"} 1980\n",
           "hw_gpu_clock_max_mhz{gpu=\"0\",type=\"mclk\"} 2619\n",
           "hw_gpu_clock_mhz{gpu=\"2\",type=\"sclk\"} 1372\n",
           "hw_gpu_power_capped{gpu=\"0\"} 0\n",
           "hw_gpu_power_capped{gpu=\"1\"} 0\n",
           "hw_gpu_power_capped{gpu=\"2\"} 1\n",
           "hw_gpu_compute_processes{gpu=\"0\"} 2\n",
           "hw_gpu_compute_processes{gpu=\"1\"} 0\n",
           // The second entry read at the v2 stride (24 bytes), not v1's 16.
           "hw_gpu_process_vram_used_bytes{gpu=\"0\",pid=\"4242\"} 1610612736\n",
           "hw_gpu_process_vram_used_bytes{gpu=\"0\",pid=\"4301\"} 536870912\n",
           // v2: used leaves the driver's reserved memory out.
           "hw_gpu_vram_used_bytes{gpu=\"0\"} 2147483648\n",
           "hw_gpu_vram_reserved_bytes{gpu=\"0\"} 503316480\n",
           "hw_gpu_vram_used_bytes{gpu=\"1\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  EXPECT_EQ(text.find("hw_gpu_process_vram_used_bytes{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("hw_gpu_compute_processes{gpu=\"2\""), std::string::npos)
      << "a GPU that cannot list processes has no count (not a false 0)";
  EXPECT_EQ(text.find("source=\"v1\""), std::string::npos);

  // A third process starts: the two-call pattern sizes the list again.
  std::string state = kH100;
  state.replace(state.find("pids=4242:1610612736,4301:536870912"), 35,
                "pids=4242:1610612736,4301:536870912,4302:1,4303:2,4304:3,4305:4,4306:5");
  WriteState(state);
  text = Text(collector.Collect().value());
  EXPECT_NE(text.find("hw_gpu_compute_processes{gpu=\"0\"} 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hw_gpu_process_vram_used_bytes{gpu=\"0\",pid=\"4306\"} 5\n"),
            std::string::npos);
}

// Two jobs on one node: this one has GPU 0; NVML's process list shows its
// rank on GPU 0 and a stray process of it on GPU 2 (the other job's GPU),
// next to the other job's process 4301 on GPU 0's neighbour.
TEST_F(NvmlTest, ServesTheJobsGpusAndCrossChecksThemWithNvmlsProcesses) {
  WriteState(
      "gpu util=100 power_mw=400000 pids=4242:1610612736\n"
      "gpu util=100 power_mw=410000 pids=4301:536870912\n"
      "gpu util=90 power_mw=300000 pids=4301:1,4250:2\n"
      "gpu util=0 power_mw=61000 pids=none\n");
  fs::path procfs = dir_.path / "proc";
  auto process = [&](const std::string& pid, const std::string& cgroup) {
    fs::create_directories(procfs / pid);
    std::ofstream(procfs / pid / "cgroup") << cgroup;
  };
  process("4242", "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
  process("4250", "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_1\n");
  process("4301", "0::/system.slice/slurmstepd.scope/job_78/step_0/user/task_0\n");
  process("1", "0::/init.scope\n");
  auto nvml = LoadNvml(library_);
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  GpuSelection mine;
  mine.only = std::set<int>{0};
  mine.source = "slurm";
  GpuNvmlCollector collector(*nvml, mine, procfs.string(), "77");
  std::string text = Text(collector.Collect().value());
  for (const char* line : {
           "hw_gpu_served{gpu=\"0\",source=\"slurm\",vendor=\"nvidia\"} 1\n",
           "hw_gpu_node_gpus{vendor=\"nvidia\"} 4\n",
           "hw_gpu_node_shared{vendor=\"nvidia\"} 1\n",
           "hw_gpu_power_watts{gpu=\"0\"} 400\n",
           "hw_gpu_job_processes{gpu=\"0\",served=\"1\"} 1\n",
           "hw_gpu_job_processes{gpu=\"2\",served=\"0\"} 1\n",
           "hw_gpu_job_gpus_outside_served 1\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  for (const char* absent :
       {"hw_gpu_power_watts{gpu=\"1\"}", "hw_gpu_power_watts{gpu=\"2\"}", "hw_gpu_served{gpu=\"1\"",
        "hw_gpu_job_processes{gpu=\"1\"", "hw_gpu_job_processes{gpu=\"3\"", "pid=\"4301\""}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << " in\n" << text;
  }
  // The stray process ends: allocation and NVML agree.
  WriteState(
      "gpu util=100 power_mw=400000 pids=4242:1610612736\n"
      "gpu util=100 power_mw=410000 pids=4301:536870912\n"
      "gpu util=90 power_mw=300000 pids=4301:1\n"
      "gpu util=0 power_mw=61000 pids=none\n");
  text = Text(collector.Collect().value());
  EXPECT_NE(text.find("hw_gpu_job_gpus_outside_served 0\n"), std::string::npos) << text;
  // No process of the job found (no job cgroup): no cross-check series.
  GpuNvmlCollector unknown(*nvml, mine, procfs.string(), "99");
  text = Text(unknown.Collect().value());
  EXPECT_EQ(text.find("hw_gpu_job_"), std::string::npos) << text;
}

TEST_F(NvmlTest, ADriverWithoutTheV2CallsFallsBackToV1AndSaysSo) {
  WriteState(kH100);
  auto nvml = LoadNvml(std::string(FAKE_NVML_DIR) + "/libnvidia-ml-old.so.1");
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  GpuNvmlCollector collector(*nvml);
  std::string text = Text(collector.Collect().value());
  for (const char* line : {
           // v1 counts the reserved memory: 2 GiB + 480 MiB.
           "hw_gpu_vram_used_bytes{gpu=\"0\",source=\"v1\"} 2650800128\n",
           "hw_gpu_vram_total_bytes{gpu=\"0\",source=\"v1\"} 85520809984\n",
           "hw_gpu_compute_processes{gpu=\"0\"} 2\n",
           // The unversioned call's nvmlProcessInfo_v1_t stride.
           "hw_gpu_process_vram_used_bytes{gpu=\"0\",pid=\"4301\"} 536870912\n",
           // nvmlDeviceGetCurrentClocksThrottleReasons, the old name.
           "hw_gpu_power_capped{gpu=\"2\"} 1\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  EXPECT_EQ(text.find("hw_gpu_vram_reserved_bytes"), std::string::npos);
}

TEST_F(NvmlTest, AGpuLostMidJobDropsOutWhileTheOthersReport) {
  WriteState(kTwoGpus);
  auto nvml = LoadNvml(library_);
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  GpuNvmlCollector collector(*nvml);
  ASSERT_NE(Text(collector.Collect().value()).find("hw_gpu_power_watts{gpu=\"1\"}"),
            std::string::npos);
  std::string state = kTwoGpus;
  state.replace(state.rfind("gpu util=0"), 3, "gpu lost=1");
  WriteState(state);
  std::string text = Text(collector.Collect().value());
  EXPECT_EQ(text.find("{gpu=\"1\"}"), std::string::npos) << "no ghost data for the lost GPU";
  EXPECT_NE(text.find("hw_gpu_power_watts{gpu=\"0\"} 352.5"), std::string::npos);
}

TEST_F(NvmlTest, NoLibraryNoDriverOrNoGpuTurnTheCollectorOffWithAReason) {
  auto no_library = LoadNvml(dir_.path.string() + "/libnvidia-ml.so.1");
  ASSERT_FALSE(no_library.ok());
  EXPECT_NE(no_library.error().message.find("cannot load"), std::string::npos);
  // The state file missing is the fake's "driver not loaded".
  auto no_driver = LoadNvml(library_);
  ASSERT_FALSE(no_driver.ok());
  EXPECT_NE(no_driver.error().message.find("Driver Not Loaded"), std::string::npos)
      << no_driver.error().message;
  WriteState("");
  auto no_gpu = LoadNvml(library_);
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_EQ(no_gpu.error().message, "no NVIDIA GPU");

  SourcePaths paths;
  paths.nvml_library = dir_.path.string() + "/absent.so";
  auto collectors = SelectCollectors(BuiltinCollectors(paths), "host,gpu_nvml").value();
  auto messages = DropUnavailable(collectors);
  ASSERT_EQ(collectors.size(), 1u);
  EXPECT_EQ(collectors[0].name, "host");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].rfind("gpu_nvml off: cannot load", 0), 0u) << messages[0];
}

// ---- selection and --interval ----

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
