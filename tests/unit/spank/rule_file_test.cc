// The plugin's rule_file argument: parsed like the other paths, rendered as
// prometheus.yml's rule_files, accepted by promtool with the project's own
// rules, and checked readable as the job's user before Prometheus starts.
#include "lifecycle/rule_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"
#include "lifecycle/prometheus_config.h"

namespace jobmon::lifecycle {
namespace {

namespace fs = std::filesystem;

const std::string kRules = JOBMON_SOURCE_DIR "/contrib/prometheus/jobmon-rules.yml";

struct Scratch {
  fs::path path = fs::temp_directory_path() /
                  ("jobmon-rules-" + std::to_string(getpid()) + "-" +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  Scratch() { fs::create_directories(path); }
  ~Scratch() { fs::remove_all(path); }
};

JobEnv OneNodeJob() {
  std::map<std::string, std::string> env = {{"SLURM_JOB_ID", "77"},
                                            {"SLURM_JOB_UID", "1000"},
                                            {"SLURM_JOB_GID", "1000"},
                                            {"SLURM_JOB_USER", "alice"},
                                            {"SLURMD_NODENAME", "node1"},
                                            {"SLURM_NODELIST", "node1"},
                                            {"SLURM_JOB_WORK_DIR", "/home/alice"}};
  return ReadJobEnv([env](const char* name) -> const char* {
           auto it = env.find(name);
           return it == env.end() ? nullptr : it->second.c_str();
         })
      .value();
}

// promtool's exit status and output for a config file.
std::pair<int, std::string> Promtool(const fs::path& yml, const fs::path& out) {
  std::string cmd =
      "/usr/bin/promtool check config " + yml.string() + " >" + out.string() + " 2>&1";
  int status = std::system(cmd.c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(RuleFile, AnAbsolutePathWithoutGlobCharactersDefaultNone) {
  EXPECT_EQ(ParsePluginConfig({}).value().rule_file, "");
  auto set = ParsePluginConfig({"rule_file=/usr/share/jobmon/jobmon-rules.yml"});
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->rule_file, "/usr/share/jobmon/jobmon-rules.yml");
  for (const char* bad : {"rule_file=", "rule_file=rules.yml", "rule_file=/etc/rules/*.yml",
                          "rule_file=/r?.yml", "rule_file=/r[1].yml"}) {
    auto parsed = ParsePluginConfig({bad});
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("rule_file"), std::string::npos)
        << "the error names the argument: " << parsed.error().message;
  }
}

TEST(RuleFile, RenderedAsRuleFilesAndPromtoolLoadsTheProjectsRules) {
  Scratch dir;
  DiagLayout layout{dir.path.string()};
  fs::create_directories(layout.targets_dir());
  JobEnv job = OneNodeJob();
  auto config = ParsePluginConfig({}).value();
  EXPECT_EQ(RenderPrometheusConfig(config, job, layout).find("rule_files"), std::string::npos);
  config.rule_file = kRules;
  std::string yml = RenderPrometheusConfig(config, job, layout);
  EXPECT_NE(yml.find("rule_files:\n  - \"" + kRules + "\"\n"), std::string::npos) << yml;
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "no promtool";
  std::ofstream(layout.prometheus_config()) << yml;
  auto [status, out] = Promtool(layout.prometheus_config(), dir.path / "promtool.out");
  EXPECT_EQ(status, 0) << yml << out;
  EXPECT_NE(out.find("SUCCESS"), std::string::npos) << out;
  EXPECT_NE(out.find(kRules), std::string::npos) << "promtool read the rules: " << out;
  // promtool does read the file: a broken one fails the same config.
  const fs::path broken = dir.path / "broken.yml";
  std::ofstream(broken)
      << "groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: rate(\n";
  config.rule_file = broken.string();
  std::ofstream(layout.prometheus_config()) << RenderPrometheusConfig(config, job, layout);
  EXPECT_NE(Promtool(layout.prometheus_config(), dir.path / "promtool.out").first, 0);
}

TEST(RuleFile, CheckedReadableAsTheJobsUserAndARegularFile) {
  Scratch dir;
  const fs::path rules = dir.path / "rules.yml";
  std::ofstream(rules) << "groups: []\n";
  EXPECT_TRUE(CheckRuleFile(rules.string(), getuid(), getgid()).ok());
  auto missing = CheckRuleFile((dir.path / "none.yml").string(), getuid(), getgid());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot read it"), std::string::npos);
  auto directory = CheckRuleFile(dir.path.string(), getuid(), getgid());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("not a regular file"), std::string::npos);
  if (geteuid() != 0) GTEST_SKIP() << "checking as another user needs root";
  // Root can read a 0600 file; the job's user (nobody here) cannot.
  fs::permissions(rules, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(CheckRuleFile(rules.string(), 0, 0).ok());
  auto denied = CheckRuleFile(rules.string(), 65534, 65534);
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.error().message.find("uid 65534"), std::string::npos);
}

}  // namespace
}  // namespace jobmon::lifecycle
