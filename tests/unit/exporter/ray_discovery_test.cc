// The head exporter serves Ray's discovery file to the job's Prometheus,
// only the job's user's (exporter/include/jobmon/exporter/ray_discovery.h).

#include "jobmon/exporter/ray_discovery.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "jobmon/common/private_ip.h"
#include "jobmon/common/target_file.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/jobmon-ray-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(RayDiscovery, AnswersTheJobsUsersRayTargetsAndNothingBeforeRayStarts) {
  TempDir dir;
  const std::string file = (dir.path / "prom_metrics_service_discovery.json").string();
  RayDiscovery ray(file, getuid(), Rfc1918Cidrs());
  HttpAnswer before = ray.Answer();
  EXPECT_EQ(before.status, 200);
  EXPECT_EQ(before.body, "[]\n") << "no Ray yet: nothing to scrape";
  std::ofstream(file) << R"([{"labels": {"job": "ray"}, "targets": ["10.0.0.2:44211"]}])";
  HttpAnswer now = ray.Answer();
  EXPECT_EQ(now.status, 200);
  EXPECT_EQ(now.content_type, "application/json");
  EXPECT_NE(now.body.find("\"10.0.0.2:44211\""), std::string::npos) << now.body;

  RayDiscovery someone_elses(file, getuid() + 1, Rfc1918Cidrs());
  HttpAnswer refused = someone_elses.Answer();
  EXPECT_EQ(refused.status, 503) << "another user's Ray is not the job's";
  EXPECT_EQ(refused.body.find("10.0.0.2"), std::string::npos);
}

TEST(RayDiscovery, NamesEachTargetsNodeFromTheJobsTargetFiles) {
  TempDir dir;
  const std::string file = (dir.path / "prom_metrics_service_discovery.json").string();
  std::ofstream(file) << R"([{"targets": ["10.0.0.2:44211", "10.0.0.3:44211"]}])";
  const fs::path diag = dir.path / "jobmon-diag-7";
  fs::create_directories(diag / "targets");
  std::ofstream(diag / "targets" / "node2.json") << RenderTargetFile("10.0.0.2:9400", "node2");
  // A FIFO among them is skipped, not waited on.
  ASSERT_EQ(mkfifo((diag / "targets" / "node3.json").c_str(), 0600), 0);
  HttpAnswer answer = RayDiscovery(file, getuid(), Rfc1918Cidrs(), diag.string()).Answer();
  EXPECT_EQ(answer.status, 200);
  EXPECT_NE(answer.body.find(R"("host":"node2")"), std::string::npos) << answer.body;
  EXPECT_NE(answer.body.find(R"("host":"10.0.0.3")"), std::string::npos) << answer.body;
}

TEST(RayDiscovery, NeitherAFifoNorASymlinkNorAHugeFileIsRead) {
  TempDir dir;
  const std::string fifo = (dir.path / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(RayDiscovery(fifo, getuid(), Rfc1918Cidrs()).Answer().status, 503)
      << "answered at once, no wait for a writer";
  const std::string target = (dir.path / "real.json").string();
  std::ofstream(target) << "[]";
  const std::string link = (dir.path / "link.json").string();
  fs::create_symlink(target, link);
  EXPECT_EQ(RayDiscovery(link, getuid(), Rfc1918Cidrs()).Answer().status, 503);
  const std::string huge = (dir.path / "huge.json").string();
  std::ofstream(huge) << std::string((1 << 20) + 10, ' ');
  EXPECT_EQ(RayDiscovery(huge, getuid(), Rfc1918Cidrs()).Answer().status, 503);
}

}  // namespace
}  // namespace jobmon::exporter
