// The gpu_nvml collector, through a fake libnvidia-ml.so.1 (FAKE_NVML_DIR)
// that reads its GPUs from the file JOBMON_FAKE_NVML_STATE names.
#include "jobmon/exporter/gpu_nvml_collector.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "collector_test_support.h"
#include "jobmon/exporter/collector.h"
#include "jobmon/exporter/gpu_selection.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;
using test_support::Text;

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

}  // namespace
}  // namespace jobmon::exporter
