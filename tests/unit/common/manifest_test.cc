// The diag dir's contract (common/diag_dir.h, common/manifest.h): the
// layout's names and the two manifest parsers (strict for the plugin's own
// file, field by field for a reader of the user's file).
#include "jobmon/common/manifest.h"

#include <gtest/gtest.h>

#include "jobmon/common/diag_dir.h"

namespace jobmon {
namespace {

TEST(DiagLayout, NamesThePlacesInsideTheDiagDir) {
  DiagLayout layout{"/d/jobmon-diag-7"};
  EXPECT_EQ(layout.manifest(), "/d/jobmon-diag-7/manifest.json");
  EXPECT_EQ(layout.targets_dir(), "/d/jobmon-diag-7/targets");
  EXPECT_EQ(layout.target_file("node1"), "/d/jobmon-diag-7/targets/node1.json");
  EXPECT_EQ(layout.prometheus_config(), "/d/jobmon-diag-7/prometheus.yml");
  EXPECT_EQ(layout.tsdb_dir(), "/d/jobmon-diag-7/prometheus");
  EXPECT_EQ(layout.logs_dir(), "/d/jobmon-diag-7/logs");
  EXPECT_EQ(layout.archive(), "/d/jobmon-diag-7/tsdb.tar.zst");
  EXPECT_EQ(kDefaultDiagDirPattern, "%o/jobmon-diag-%j");
}

TEST(ManifestFields, WrongTypedFieldsAreNamedAndLeftOutTheRestIsTaken) {
  auto parsed = ParseManifestFields(R"({
    "job_id": -3, "user": 7, "nodes": ["n1", 2], "state": "running",
    "prometheus": {"port": 9190.5, "address": "127.0.0.1"},
    "versions": "x", "archive": {"path": "/d/tsdb.tar.zst", "bytes": "9"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Manifest& m = parsed->manifest;
  EXPECT_EQ(m.job_id, 0u) << "a negative id is not wrapped";
  EXPECT_EQ(m.user, "");
  EXPECT_TRUE(m.nodes.empty());
  EXPECT_EQ(m.state, "running");
  EXPECT_EQ(m.prometheus_port, 0) << "a float is not truncated";
  EXPECT_EQ(m.prometheus_address, "127.0.0.1");
  ASSERT_TRUE(m.archive);
  EXPECT_EQ(m.archive->path, "/d/tsdb.tar.zst");
  EXPECT_EQ(m.archive->bytes, 0u);
  const std::vector<std::string> expected = {"schema is not jobmon.manifest/v1",
                                             "job_id: not an integer in range",
                                             "user: not a string",
                                             "nodes: not an array of strings",
                                             "prometheus.port: not an integer in range",
                                             "versions: not an object",
                                             "archive.bytes: not an integer in range"};
  EXPECT_EQ(parsed->problems, expected);
  EXPECT_FALSE(
      ParseManifest(R"({"schema": "jobmon.manifest/v1", "prometheus": {"port": 1.5}})").ok());
  EXPECT_FALSE(ParseManifestFields("[1]").ok()) << "not an object";
}

TEST(ManifestFields, APortBeyondIntIsRefusedNotWrapped) {
  auto parsed = ParseManifestFields(R"({"prometheus": {"port": 4294976486}})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->manifest.prometheus_port, 0);
  EXPECT_EQ(parsed->problems.size(), 2u);
}

TEST(ManifestFields, AWrittenManifestParsesWithoutProblems) {
  Manifest m;
  m.job_id = 12;
  m.nodes = {"a", "b"};
  m.prometheus_port = 9191;
  auto parsed = ParseManifestFields(ToJson(m));
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->problems.empty());
  EXPECT_FALSE(parsed->manifest.archive) << "archive: null";
  EXPECT_EQ(ToJson(parsed->manifest), ToJson(m));
}

}  // namespace
}  // namespace jobmon
