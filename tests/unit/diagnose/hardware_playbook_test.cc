// Playbook 4: error counters by their increase in the job, RDMA port state,
// temperature; one node counting while the others stay at zero.
#include <gtest/gtest.h>

#include "canned_prom_source.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbook_test_support.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Constant;
using testing::FindingOf;
using testing::Shaped;

constexpr double kEnd = 3600;

struct Job {
  CannedPromSource source;
  DiagnoseContext context = testing::JobContext({"n1", "n2", "n3"}, 0, kEnd);

  // `family` increased by `count` on host/gpu from `since`; 0 elsewhere.
  void Counter(const std::string& family, const std::string& host, const std::string& gpu,
               double count, double since) {
    std::vector<Series> increase, rate;
    for (std::string h : {"n1", "n2", "n3"}) {
      Labels l{{"host", h}, {"gpu", gpu}};
      bool bad = h == host;
      increase.push_back(Constant(l, 0, kEnd, 15, bad ? count : 0));
      rate.push_back(
          Shaped(l, 0, kEnd, 15, [=](double t) { return bad && t >= since ? 0.01 : 0; }));
    }
    source.Answer("increase(" + family, increase);
    source.Answer("rate(" + family, rate);
  }
  PlaybookResult Run() {
    std::vector<Series> ports, temps;
    for (std::string h : {"n1", "n2", "n3"}) {
      ports.push_back(Constant({{"host", h}, {"device", "mlx5_0"}, {"port", "1"}}, 0, kEnd, 15, 1));
      temps.push_back(Constant({{"host", h}, {"gpu", "0"}}, 0, kEnd, 15, 74));
    }
    source.Answer("hw_rdma_port_state", ports);
    source.Answer("hw_gpu_temperature_celsius", temps);
    auto r = RunHardwarePlaybook(source, context);
    testing::ExpectCountersOnlyThroughRateOrIncrease(source.asked());
    EXPECT_TRUE(r.errors.empty());
    return r;
  }
};

TEST(HardwarePlaybook, ACleanJobIsClean) {
  Job job;
  for (std::string family : {"hw_gpu_ras_umc_ue_total", "hw_gpu_ras_umc_ce_total",
                             "hw_gpu_pcie_fatal_total", "hw_dmesg_gpu_errors_total"}) {
    job.Counter(family, "", "0", 0, 0);
  }
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "clean");
  EXPECT_TRUE(r.anomalies.empty());
  // The whole job's increase, evaluated at its end.
  bool asked = false;
  for (const auto& q : job.source.asked()) {
    asked = asked || q == "increase(hw_gpu_ras_umc_ue_total[3600s])";
  }
  EXPECT_TRUE(asked);
}

TEST(HardwarePlaybook, AnUncorrectableErrorOnOneGpuIsAHardwareFault) {
  Job job;
  job.Counter("hw_gpu_ras_umc_ue_total", "n2", "3", 2, 2000);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "hardware-fault");
  const Finding* f = FindingOf(r, "ecc-uncorrectable", "n2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->gpu, "3");
  EXPECT_DOUBLE_EQ(*f->value, 2);
  EXPECT_NEAR(*f->time, 2000, 15);
  EXPECT_NE(f->text.find("0 on the other 2 hosts"), std::string::npos) << f->text;
  EXPECT_FALSE(FindingOf(r, "ecc-uncorrectable", "n1"));
  EXPECT_NE(r.next_steps.front().find("n2"), std::string::npos);
}

TEST(HardwarePlaybook, CorrectableErrorsRisingAreDegradingHardware) {
  Job job;
  job.Counter("hw_gpu_ras_umc_ce_total", "n1", "0", 40, 500);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "degrading-hardware");
  EXPECT_TRUE(FindingOf(r, "ecc-correctable", "n1"));
}

TEST(HardwarePlaybook, NvidiaEccCountsTheVolatileUncorrectedOnes) {
  Job job;
  job.Counter(R"(hw_gpu_ecc_errors_total{error="uncorrected",counter="volatile"})", "n3", "1", 1,
              100);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "hardware-fault");
  EXPECT_TRUE(FindingOf(r, "ecc-uncorrectable", "n3"));
}

TEST(HardwarePlaybook, APcieFatalErrorIsPcieFatal) {
  Job job;
  job.Counter("hw_gpu_pcie_fatal_total", "n1", "2", 1, 3000);
  EXPECT_EQ(job.Run().verdict, "pcie-fatal");
}

TEST(HardwarePlaybook, KernelLogGpuErrorsAreDriverErrors) {
  Job job;
  job.Counter("hw_dmesg_gpu_errors_total", "n3", "", 7, 1200);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "driver-errors");
  EXPECT_TRUE(FindingOf(r, "dmesg-gpu-errors", "n3"));
}

TEST(HardwarePlaybook, ARdmaPortThatWentDownNamesDeviceAndPort) {
  Job job;
  job.source.Answer("hw_rdma_port_state",
                    {Shaped({{"host", "n2"}, {"device", "mlx5_3"}, {"port", "1"}}, 0, kEnd, 15,
                            [](double t) { return t >= 1500 && t < 1800 ? 0 : 1; })});
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "rdma-port-down");
  const Finding* f = FindingOf(r, "rdma-port-down", "n2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->device, "mlx5_3/1");
  EXPECT_DOUBLE_EQ(*f->time, 1500);
}

TEST(HardwarePlaybook, ATemperatureRampBeforeTheEndIsAThermalExcursion) {
  Job job;
  job.source.Answer("hw_gpu_temperature_celsius",
                    {Shaped({{"host", "n1"}, {"gpu", "5"}}, 0, kEnd, 15,
                            [](double t) { return t < 3000 ? 74 : 74 + (t - 3000) / 600 * 30; })});
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "thermal-excursion");
  const Finding* f = FindingOf(r, "thermal-high", "n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->gpu, "5");
  EXPECT_NEAR(*f->value, 104, 1);
}

TEST(HardwarePlaybook, TheWorstVerdictWinsAndTheEarliestFindingIsTheRootCause) {
  Job job;
  job.Counter("hw_gpu_ras_umc_ce_total", "n2", "3", 12, 800);
  job.Counter("hw_gpu_ras_umc_ue_total", "n2", "3", 1, 2400);
  auto r = job.Run();
  EXPECT_EQ(r.verdict, "hardware-fault");
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->code, "ecc-correctable");
  ASSERT_EQ(r.chain.size(), 1u);
  EXPECT_EQ(r.chain[0].code, "ecc-uncorrectable");
}

}  // namespace
}  // namespace jobmon::diagnose
