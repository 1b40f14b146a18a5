// The gpu_amd collector: amdgpu's sysfs tree numbered by PCI address, the
// job's GPUs only, the parsers of its files, and a broken file dropping only
// its own series.
#include "jobmon/exporter/gpu_amd_collector.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cstdint>
#include <string>
#include <utility>

#include "collector_test_support.h"
#include "jobmon/exporter/gpu_selection.h"

namespace jobmon::exporter {
namespace {

using test_support::kFixtures;
using test_support::Sample;
using test_support::Text;
using test_support::TreeCopy;

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

TEST(GpuAmd, Parsers) {
  EXPECT_EQ(ParseCurrentDpmMhz("0: 500Mhz\n1: 1500Mhz *\n2: 2100Mhz\n"), 1500);
  EXPECT_FALSE(ParseCurrentDpmMhz("0: 500Mhz\n"));
  EXPECT_EQ(ParseRasCount("ue: 4\nce: 9\n"), (std::pair<uint64_t, uint64_t>{4, 9}));
  EXPECT_FALSE(ParseRasCount("garbage"));
  EXPECT_EQ(ParseAerTotal("RxErr 2\nTOTAL_ERR_COR 3\n"), 3u);
  EXPECT_FALSE(ParseAerTotal("RxErr 2\n"));
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

}  // namespace
}  // namespace jobmon::exporter
