// Ray's series standing in for the exporter's where it is absent
// (diagnose/src/ray_stand_ins.h).

#include "ray_stand_ins.h"

#include <gtest/gtest.h>

#include "canned_prom_source.h"

namespace jobmon::diagnose {
namespace {

TEST(RayStandIns, OnlyWhereTheExportersFamilyIsAbsentAndRaysIsThere) {
  EXPECT_TRUE(StandInsFor({"hw_gpu_utilization_percent", "ray_node_gpus_utilization"}).empty());
  EXPECT_TRUE(StandInsFor({"up", "hw_procs_running"}).empty()) << "no Ray, nothing stands in";
  auto found = StandInsFor({"up", "ray_node_gpus_utilization", "ray_node_gram_used",
                            "ray_node_gram_available", "ray_node_mem_available"});
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].family, "hw_gpu_utilization_percent");
}

TEST(RayStandIns, EachUseOfTheFamilyIsAskedOfRayWithItsSelectorAndRange) {
  auto util = StandInsFor({"ray_node_gpus_utilization"});
  EXPECT_EQ(RewriteWithStandIns("hw_gpu_utilization_percent", util),
            R"q(label_replace(ray_node_gpus_utilization{}, "gpu", "$1", "GpuIndex", "(.*)"))q");
  EXPECT_EQ(
      RewriteWithStandIns(R"(max by (host) (hw_gpu_utilization_percent{host=~"node1|n}2"}))", util),
      R"q(max by (host) (label_replace(ray_node_gpus_utilization{host=~"node1|n}2"}, "gpu", "$1", "GpuIndex", "(.*)")))q");
  EXPECT_EQ(
      RewriteWithStandIns(R"(max_over_time(hw_gpu_utilization_percent{host="a"}[5m]))", util),
      R"q(max_over_time((label_replace(ray_node_gpus_utilization{host="a"}, "gpu", "$1", "GpuIndex", "(.*)"))[5m:]))q");
  // Other families, a longer name and a label value are left alone.
  EXPECT_EQ(RewriteWithStandIns("hw_gpu_power_watts", util), "hw_gpu_power_watts");
  EXPECT_EQ(RewriteWithStandIns("hw_gpu_utilization_percent_x", util),
            "hw_gpu_utilization_percent_x");
  EXPECT_EQ(RewriteWithStandIns(R"(up{job="hw_gpu_utilization_percent"})", util),
            R"(up{job="hw_gpu_utilization_percent"})");
  EXPECT_EQ(RewriteWithStandIns("hw_gpu_utilization_percent{", util), "hw_gpu_utilization_percent{")
      << "not PromQL: asked as it was";
  EXPECT_EQ(RewriteWithStandIns("hw_mem_available_bytes", {}), "hw_mem_available_bytes");
}

TEST(RayStandIns, GpuMemoryInBytesFromRaysMebibytes) {
  auto gram = StandInsFor({"ray_node_gram_used", "ray_node_gram_available"});
  ASSERT_EQ(gram.size(), 2u);
  EXPECT_EQ(
      RewriteWithStandIns(R"(hw_gpu_vram_total_bytes{host="n1"})", gram),
      R"q(label_replace((ray_node_gram_used{host="n1"} + ray_node_gram_available{host="n1"}) * 1048576, "gpu", "$1", "GpuIndex", "(.*)"))q");
}

TEST(RayStandIns, TheSourceAsksRayAndPassesEverythingElseThrough) {
  testing::CannedPromSource canned;
  canned.Answer("ray_node_gpus_utilization",
                {Series{{{"host", "node2"}, {"gpu", "0"}}, {{10, 97}}}});
  StandInPromSource source(canned, StandInsFor({"ray_node_gpus_utilization"}));
  auto answer = source.QueryRange("hw_gpu_utilization_percent", {0, 20}, 1);
  ASSERT_TRUE(answer.ok());
  ASSERT_EQ(answer->size(), 1u);
  EXPECT_EQ((*answer)[0].Label("host"), "node2");
  ASSERT_TRUE(source.QueryInstant("up", 10).ok());
  EXPECT_EQ(canned.asked().back(), "up");
}

}  // namespace
}  // namespace jobmon::diagnose
