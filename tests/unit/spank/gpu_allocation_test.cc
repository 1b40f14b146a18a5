// The prolog's view of a job's GPUs: Slurm's variables, the cgroup v1
// device list (fixtures recorded by tests/fixtures/cgroup/record-devices-list.sh),
// and the exporter arguments that follow.
#include "lifecycle/gpu_allocation.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

namespace lc = jobmon::lifecycle;

namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/cgroup/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

lc::GetEnv Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// Eight NVIDIA GPUs: /dev/nvidiaN is character device 195:N.
std::vector<lc::GpuDeviceNode> EightNvidia() {
  std::vector<lc::GpuDeviceNode> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back({i, 195, i});
  return gpus;
}

}  // namespace

TEST(GpuIndexList, SlurmsCommaList) {
  // gres_common_epilog_set_env: xstrfmtcat(slurm_gpu_str, "%s%d", sep, index), sep ",".
  EXPECT_EQ(lc::ParseGpuIndexList("4,5,6,7"), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(lc::ParseGpuIndexList("3,1,3"), (std::vector<int>{1, 3}));
  EXPECT_EQ(lc::ParseGpuIndexList("0"), (std::vector<int>{0}));
}

TEST(GpuIndexList, AnythingElseIsNotAList) {
  EXPECT_FALSE(lc::ParseGpuIndexList(""));
  EXPECT_FALSE(lc::ParseGpuIndexList("0,"));
  EXPECT_FALSE(lc::ParseGpuIndexList(",1"));
  EXPECT_FALSE(lc::ParseGpuIndexList("GPU-5f1c2a3e-8b1d-4c55-9e2f-0a1b2c3d4e5f"));
  EXPECT_FALSE(lc::ParseGpuIndexList("MIG-GPU-5f1c/1/0"));
  EXPECT_FALSE(lc::ParseGpuIndexList("-1"));
  EXPECT_FALSE(lc::ParseGpuIndexList("0 1"));
}

TEST(DevicesList, ParsesTheKernelsLines) {
  auto rules = lc::ParseDevicesList(Fixture("job-devices.list"));
  ASSERT_TRUE(rules);
  ASSERT_EQ(rules->size(), 8u);
  EXPECT_EQ((*rules)[0].type, 'c');
  EXPECT_EQ((*rules)[0].major, 1);
  EXPECT_EQ((*rules)[0].minor, 3);
  EXPECT_EQ((*rules)[0].access, "rwm");
  EXPECT_EQ((*rules)[2].minor, -1);  // c 136:* rwm
  EXPECT_FALSE(lc::ParseDevicesList("c 195 rw\n"));
  EXPECT_FALSE(lc::ParseDevicesList("x 1:3 rw\n"));
}

TEST(DevicesList, JobCgroupAllowsItsGpusOnly) {
  auto rules = lc::ParseDevicesList(Fixture("job-devices.list"));
  ASSERT_TRUE(rules);
  EXPECT_EQ(lc::GpusAllowed(*rules, EightNvidia()), (std::vector<int>{2, 5}));
}

TEST(DevicesList, AnUnrestrictedCgroupSaysNothing) {
  auto rules = lc::ParseDevicesList(Fixture("all-devices.list"));
  ASSERT_TRUE(rules);
  EXPECT_FALSE(lc::GpusAllowed(*rules, EightNvidia()));
  // A wildcard over the GPUs' major, too.
  EXPECT_FALSE(lc::GpusAllowed({{'c', 195, -1, "rw"}}, EightNvidia()));
  // No GPU device node known: nothing to map the rules to.
  EXPECT_FALSE(lc::GpusAllowed({{'c', 195, 1, "rw"}}, {}));
}

TEST(GpuAllocation, SlurmsVariableWins) {
  auto a = lc::DecideGpuAllocation(Env({{"SLURM_JOB_GPUS", "4,5,6,7"}}), std::nullopt, {});
  EXPECT_EQ(a.source, "slurm");
  EXPECT_EQ(a.gpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_TRUE(a.notes.empty());
  EXPECT_EQ(lc::ExporterGpuArgs(a),
            (std::vector<std::string>{"--gpus-source", "slurm", "--gpus", "4,5,6,7"}));
}

TEST(GpuAllocation, NumericVendorVariableWhenSlurmsIsAbsent) {
  auto a = lc::DecideGpuAllocation(Env({{"CUDA_VISIBLE_DEVICES", "1,0"}}), std::nullopt, {});
  EXPECT_EQ(a.source, "slurm");
  EXPECT_EQ(a.gpus, (std::vector<int>{0, 1}));
}

TEST(GpuAllocation, UuidsAreNotIndicesSoTheCgroupDecides) {
  auto a = lc::DecideGpuAllocation(
      Env({{"CUDA_VISIBLE_DEVICES", "GPU-5f1c2a3e-8b1d-4c55-9e2f-0a1b2c3d4e5f"}}),
      Fixture("job-devices.list"), EightNvidia());
  EXPECT_EQ(a.source, "cgroup");
  EXPECT_EQ(a.gpus, (std::vector<int>{2, 5}));
  ASSERT_EQ(a.notes.size(), 1u);
  EXPECT_NE(a.notes[0].find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

TEST(GpuAllocation, DisagreementIsLoggedAndSlurmServed) {
  auto a = lc::DecideGpuAllocation(Env({{"SLURM_JOB_GPUS", "0,1"}}), Fixture("job-devices.list"),
                                   EightNvidia());
  EXPECT_EQ(a.source, "slurm");
  EXPECT_EQ(a.gpus, (std::vector<int>{0, 1}));
  ASSERT_EQ(a.notes.size(), 1u);
  EXPECT_NE(a.notes[0].find("cgroup allows 2,5"), std::string::npos);
}

TEST(GpuAllocation, NoAllocationServesAllAndSaysSo) {
  for (const auto& list : {std::optional<std::string>{}, std::optional(Fixture("all-devices.list")),
                           std::optional<std::string>("garbage\n")}) {
    auto a = lc::DecideGpuAllocation(Env({}), list, EightNvidia());
    EXPECT_EQ(a.source, "all");
    EXPECT_TRUE(a.gpus.empty());
    EXPECT_FALSE(a.notes.empty());
    EXPECT_EQ(lc::ExporterGpuArgs(a), (std::vector<std::string>{"--gpus-source", "all"}));
  }
  auto bad = lc::DecideGpuAllocation(Env({{"SLURM_JOB_GPUS", "(null)"}}), std::nullopt, {});
  EXPECT_EQ(bad.source, "all");
  EXPECT_EQ(bad.notes.size(), 2u);  // the bad value, and serving all
}

TEST(GpuAllocation, JobCgroupPathOfSlurm2205) {
  EXPECT_EQ(lc::JobDevicesListPath("/sys/fs/cgroup", 1000, 42),
            "/sys/fs/cgroup/devices/slurm/uid_1000/job_42/devices.list");
}
