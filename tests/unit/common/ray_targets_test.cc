#include "jobmon/common/ray_targets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "jobmon/common/private_ip.h"

namespace jobmon::ray_targets {
namespace {

// Ray 2.32's PrometheusServiceDiscoveryWriter (python/ray/_private/
// metrics_agent.py) writes [{"labels": {"job": "ray"}, "targets": [...]}]:
// every node's metrics export port, the autoscaler's and the dashboard's.
TEST(RayTargets, RaysFileAsTheJobsHttpSdAnswer) {
  const std::string ray =
      R"([{"labels": {"job": "ray"}, "targets": ["10.213.0.11:44211", "10.213.0.12:51023",)"
      R"( "10.213.0.11:44217", "10.213.0.11:44227"]}])";
  auto answer = RenderHttpSd(ray, Rfc1918Cidrs());
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto json = nlohmann::json::parse(*answer);
  ASSERT_EQ(json.size(), 4u);
  EXPECT_EQ(json[1]["targets"][0], "10.213.0.12:51023");
  EXPECT_EQ(json[1]["labels"]["host"], "10.213.0.12");
  EXPECT_EQ(json[1]["labels"]["jobmon_source"], "ray");
  EXPECT_EQ(json[1]["labels"]["job"], "ray") << "Ray's own label kept";
}

TEST(RayTargets, AFileTheJobsUserWroteSendsPrometheusNowhereElse) {
  const std::string ray =
      R"([{"labels": {"host": "spoofed", "__address__": "x", "9bad": "y", "ok_name": "z"},)"
      R"( "targets": ["8.8.8.8:80", "127.0.0.1:9100", "10.0.0.1:1,2", "[fd00::1]:80",)"
      R"( "10.0.0.2:9100", 7]}, {"targets": "10.0.0.3:1"}, 5])";
  auto answer = RenderHttpSd(ray, Rfc1918Cidrs());
  ASSERT_TRUE(answer.ok());
  auto json = nlohmann::json::parse(*answer);
  ASSERT_EQ(json.size(), 1u) << *answer;
  EXPECT_EQ(json[0]["targets"][0], "10.0.0.2:9100");
  EXPECT_EQ(json[0]["labels"]["host"], "10.0.0.2") << "ours, not the file's";
  EXPECT_FALSE(json[0]["labels"].contains("__address__"));
  EXPECT_FALSE(json[0]["labels"].contains("9bad"));
  EXPECT_EQ(json[0]["labels"]["ok_name"], "z");
  EXPECT_FALSE(RenderHttpSd("{}", Rfc1918Cidrs()).ok());
  EXPECT_FALSE(RenderHttpSd("not json", Rfc1918Cidrs()).ok());
  EXPECT_EQ(*RenderHttpSd("[]", Rfc1918Cidrs()), "[]\n");
}

// Labelled as the exporters' targets are: host=<node>, from the job's
// target files; the IP where no file names it, and never a name that is
// not a plain node name (the files are the user's).
TEST(RayTargets, EachTargetIsLabelledWithTheNodeTheJobsTargetFilesName) {
  const std::vector<ScrapeTarget> exporters = {{"node1", "10.213.0.11:9400"},
                                               {"node2", "10.213.0.12:9400"},
                                               {"bad name\"}", "10.213.0.13:9400"},
                                               {"10.213.0.14:9400", "10.213.0.14:9400"}};
  auto hosts = HostsByIp(exporters);
  EXPECT_EQ(hosts.size(), 2u);
  const std::string ray =
      R"([{"labels": {"job": "ray"}, "targets": ["10.213.0.11:44211", "10.213.0.12:51023",)"
      R"( "10.213.0.13:1", "10.213.0.14:2"]}])";
  auto answer = RenderHttpSd(ray, Rfc1918Cidrs(), hosts);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto json = nlohmann::json::parse(*answer);
  ASSERT_EQ(json.size(), 4u);
  EXPECT_EQ(json[0]["labels"]["host"], "node1");
  EXPECT_EQ(json[1]["labels"]["host"], "node2");
  EXPECT_EQ(json[2]["labels"]["host"], "10.213.0.13");
  EXPECT_EQ(json[3]["labels"]["host"], "10.213.0.14");
}

}  // namespace
}  // namespace jobmon::ray_targets
