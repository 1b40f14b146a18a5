// Playbook 5 on canned series: a healthy job of 2 nodes x 2 GPUs and its
// faulty twin (a thermal ramp with a clock drop, an uncorrectable HBM error,
// one GPU drawing less power, one GPU's VRAM nearly full).
#include <gtest/gtest.h>

#include <algorithm>

#include "canned_prom_source.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbook_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Flat;
using testing::Over;
using testing::TimeAt;

const std::vector<Labels> kGpus = {{{"host", "n1"}, {"gpu", "0"}},
                                   {{"host", "n1"}, {"gpu", "1"}},
                                   {{"host", "n2"}, {"gpu", "0"}},
                                   {{"host", "n2"}, {"gpu", "1"}}};

struct Faults {
  bool thermal = false, ecc = false, power = false, vram = false;
};

// The fake trainer's numbers: ~660 W, 74 C, 97% busy in training; power and
// utilization drop at checkpoints (every 20 steps), which is expected.
void Load(CannedPromSource& source, const DiagnoseContext& context, Faults f) {
  std::vector<Series> temp, power, clock, used, total, util, ue;
  for (size_t g = 0; g < kGpus.size(); ++g) {
    const Labels& l = kGpus[g];
    const bool hot = f.thermal && g == 3;
    temp.push_back(
        Over(l, [&](int i) { return hot && i >= 40 ? 74 + 1.0 * (i - 40) : 74 + (i % 3); }));
    power.push_back(Over(l, [&](int i) {
      if (context.InCheckpoint(TimeAt(i))) return 330.0;
      if (hot && i >= 58) return 560.0;
      return (f.power && g == 0 ? 600.0 : 660.0) + (i % 2 ? 15 : -15);
    }));
    Labels sclk = l;
    sclk["type"] = "sclk";
    clock.push_back(Over(sclk, [&](int i) {
      if (context.InCheckpoint(TimeAt(i))) return 1500.0;  // idle while saving: expected
      return hot && i >= 55 ? 1600.0 : 2100.0;
    }));
    used.push_back(Over(l, [&](int i) { return f.vram && g == 1 && i >= 60 ? 188e9 : 150e9; }));
    total.push_back(Flat(l, 192e9));
    util.push_back(Over(l, [&](int i) { return context.InCheckpoint(TimeAt(i)) ? 30.0 : 97.0; }));
    ue.push_back(Over(l, [&](int i) { return f.ecc && g == 2 && i >= 50 ? 2.0 : 0.0; }));
  }
  source.Answer("hw_gpu_temperature_celsius", temp);
  source.Answer("hw_gpu_power_watts", power);
  source.Answer("hw_gpu_clock_mhz", clock);
  source.Answer("hw_gpu_vram_used_bytes", used);
  source.Answer("hw_gpu_vram_total_bytes", total);
  source.Answer("hw_gpu_utilization_percent", util);
  source.Answer("increase(hw_gpu_ras_umc_ue_total[", ue);
}

std::vector<std::string> Codes(const PlaybookResult& r) {
  std::vector<std::string> out;
  for (const auto& f : r.anomalies) out.push_back(f.code);
  return out;
}

bool Has(const PlaybookResult& r, const std::string& code) {
  auto codes = Codes(r);
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

TEST(GpuHealthPlaybook, HealthyJobHasNoFindingsDespiteCheckpoints) {
  auto context = testing::JobContext(20);
  CannedPromSource source;
  Load(source, context, {});
  auto r = RunGpuHealthPlaybook(source, context);
  EXPECT_EQ(r.verdict, "healthy") << r.summary;
  EXPECT_TRUE(r.anomalies.empty()) << r.anomalies.front().text;
  EXPECT_TRUE(r.errors.empty());
  EXPECT_NE(r.summary.find("GPU Health Summary (2 nodes, 4 GPUs)"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("RAS Errors: 0 correctable, 0 uncorrectable"), std::string::npos);
  EXPECT_NE(r.summary.find("Anomalous GPUs: none"), std::string::npos);
  testing::ExpectNoBareCounters(source.asked());
}

TEST(GpuHealthPlaybook, FindsEachFaultWithItsNumbers) {
  auto context = testing::JobContext(20);
  CannedPromSource source;
  Load(source, context, {true, true, true, true});
  auto r = RunGpuHealthPlaybook(source, context);
  EXPECT_EQ(r.verdict, "anomalous");
  for (const char* code :
       {"thermal-high", "clock-drop", "ecc-uncorrectable", "power-spread", "vram-high"}) {
    EXPECT_TRUE(Has(r, code)) << code << "\n" << r.summary;
  }
  for (const auto& f : r.anomalies) {
    if (f.code == "ecc-uncorrectable") {
      EXPECT_EQ(f.host, "n2");
      EXPECT_EQ(f.gpu, "0");
      EXPECT_EQ(f.value, 2);
      EXPECT_EQ(f.severity, Severity::kCritical);
      EXPECT_EQ(f.time, TimeAt(50));
    }
    if (f.code == "power-spread") {
      EXPECT_EQ(f.host + ":" + f.gpu, "n1:0");
    }
    if (f.code == "vram-high") {
      EXPECT_EQ(f.gpu, "1");
    }
    if (f.code == "thermal-high") {
      EXPECT_EQ(f.time, TimeAt(57));  // first >90C
    }
  }
  EXPECT_NE(r.summary.find("RAS Errors: 0 correctable, 2 uncorrectable"), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("n2:0"), std::string::npos);
  // The earliest anomaly leads: the ECC error (scrape 50) before the
  // temperature passed 90C (57) and the clock dropped (55).
  ASSERT_TRUE(r.root_cause);
  EXPECT_EQ(r.root_cause->code, "ecc-uncorrectable");
  testing::ExpectNoBareCounters(source.asked());
}

const Finding* Find(const PlaybookResult& r, const std::string& code) {
  for (const auto& f : r.anomalies) {
    if (f.code == code) return &f;
  }
  return nullptr;
}

// Power under load, noisy as real GPUs are: each sample `median` plus one
// of -A, -A/2, 0, A/2, A in turn (A = 200 W), so each GPU's median is its
// `median` and its samples spread ~150 W (sigma).
std::vector<Series> NoisyPower(const std::vector<double>& medians) {
  std::vector<Series> out;
  for (size_t g = 0; g < kGpus.size(); ++g) {
    out.push_back(Over(kGpus[g], [&](int i) { return medians[g] + 100.0 * ((i + g) % 5 - 2.0); }));
  }
  return out;
}

TEST(GpuHealthPlaybook, PowerNoiseIsNotASpread) {
  // One GPU's median 40 W under the others': more than 5% of 660 W (the old
  // max-min rule flagged it) but well inside its samples' noise.
  CannedPromSource source;
  source.Answer("hw_gpu_power_watts", NoisyPower({620, 660, 660, 665}));
  auto r = RunGpuHealthPlaybook(source, testing::JobContext());
  EXPECT_EQ(Find(r, "power-spread"), nullptr) << r.summary;
  EXPECT_EQ(r.verdict, "healthy") << r.summary;
}

TEST(GpuHealthPlaybook, AGpuReallyLowerIsASpreadThroughTheNoise) {
  CannedPromSource source;
  source.Answer("hw_gpu_power_watts", NoisyPower({460, 660, 670, 665}));
  auto r = RunGpuHealthPlaybook(source, testing::JobContext());
  const Finding* f = Find(r, "power-spread");
  ASSERT_NE(f, nullptr) << r.summary;
  EXPECT_EQ(f->host + ":" + f->gpu, "n1:0");
  EXPECT_NEAR(*f->value, 460 - 665, 1e-9) << "from the median of the GPUs' medians";
  EXPECT_EQ(r.verdict, "anomalous");
}

// A throttle longer than half the job: the GPU's median is the throttled
// clock itself, its steady-state high is not.
std::vector<Series> Clocks(const std::function<double(size_t g, int i)>& mhz) {
  std::vector<Series> out;
  for (size_t g = 0; g < kGpus.size(); ++g) {
    Labels l = kGpus[g];
    l["type"] = "sclk";
    out.push_back(Over(l, [&](int i) { return mhz(g, i); }));
  }
  return out;
}

TEST(GpuHealthPlaybook, AThrottleLongerThanHalfTheJobIsStillAClockDrop) {
  CannedPromSource source;
  source.Answer("hw_gpu_clock_mhz", Clocks([](size_t g, int i) {
                  return g == 0 && i >= 30 ? 1400.0 : 2100.0;  // 50 of 80 scrapes throttled
                }));
  auto r = RunGpuHealthPlaybook(source, testing::JobContext());
  const Finding* f = Find(r, "clock-drop");
  ASSERT_NE(f, nullptr) << r.summary;
  EXPECT_EQ(f->host + ":" + f->gpu, "n1:0");
  EXPECT_EQ(f->value, 1400);
  EXPECT_EQ(f->time, TimeAt(30));
  EXPECT_NE(f->text.find("2100MHz steady-state high"), std::string::npos) << f->text;
}

TEST(GpuHealthPlaybook, APowerCappedClockWanderingBelowItsHighIsNoDrop) {
  // Under a power cap sclk moves between ~1800 and 2100 MHz all job long.
  CannedPromSource source;
  source.Answer("hw_gpu_clock_mhz", Clocks([](size_t g, int i) {
                  return 1800.0 + 75.0 * static_cast<double>((i + g) % 5);
                }));
  auto r = RunGpuHealthPlaybook(source, testing::JobContext());
  EXPECT_EQ(Find(r, "clock-drop"), nullptr) << r.summary;
}

TEST(GpuHealthPlaybook, FailedQueriesArePartialNotHealthyByAccident) {
  struct Failing : CannedPromSource {
    Expected<std::vector<Series>> QueryRange(std::string_view, const TimeRange&, double) override {
      return Error{"connection refused"};
    }
  } source;
  auto r = RunGpuHealthPlaybook(source, testing::JobContext());
  EXPECT_FALSE(r.errors.empty());
}

}  // namespace
}  // namespace jobmon::diagnose
