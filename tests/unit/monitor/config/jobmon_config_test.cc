// The one jobmon.toml loader (monitor/jobmon_config.h) and its path rule
// (common/config_path.h): which file, missing files, unknown keys in every
// section with file:line, and durations in each section.

#include "jobmon/monitor/jobmon_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace jobmon::monitor {
namespace {

namespace fs = std::filesystem;

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char pattern[] = "/tmp/jobmon-config-test-XXXXXX";
    int fd = mkstemp(pattern);
    close(fd);
    path_ = pattern;
    std::ofstream(path_) << text;
  }
  ~TempFile() { fs::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets $JOBMON_CONFIG for one test, restoring it after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* value) {
    if (const char* old = std::getenv(kConfigEnvVar)) old_ = old;
    if (value) {
      setenv(kConfigEnvVar, value, 1);
    } else {
      unsetenv(kConfigEnvVar);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(kConfigEnvVar, old_->c_str(), 1);
    } else {
      unsetenv(kConfigEnvVar);
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(ConfigPath, FlagThenEnvironmentThenTheOptionalDefault) {
  ConfigPath flag = ResolveConfigPath("/a.toml", "/b.toml");
  EXPECT_EQ(flag.path, "/a.toml");
  EXPECT_TRUE(flag.required);
  ConfigPath env = ResolveConfigPath("", "/b.toml");
  EXPECT_EQ(env.path, "/b.toml");
  EXPECT_TRUE(env.required);
  for (const char* unset : {static_cast<const char*>(nullptr), ""}) {
    ConfigPath fallback = ResolveConfigPath("", unset);
    EXPECT_EQ(fallback.path, "/etc/jobmon/jobmon.toml");
    EXPECT_FALSE(fallback.required);
  }
}

TEST(ConfigPath, TheProcessEnvironmentIsRead) {
  TempFile file("[monitor]\ncluster = \"from-env\"\n");
  {
    ScopedEnv env(file.path().c_str());
    EXPECT_EQ(ResolveConfigPath("").path, file.path());
    auto loaded = LoadJobmonConfig("");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->monitor.cluster, "from-env");
    EXPECT_EQ(loaded->path, file.path());
    // The flag wins over the environment.
    TempFile other("[monitor]\ncluster = \"from-flag\"\n");
    auto flagged = LoadJobmonConfig(other.path());
    ASSERT_TRUE(flagged.ok()) << flagged.error().message;
    EXPECT_EQ(flagged->monitor.cluster, "from-flag");
  }
  {
    ScopedEnv env("/nonexistent/jobmon-from-env.toml");
    auto missing = LoadJobmonConfig("");
    ASSERT_FALSE(missing.ok()) << "a file the environment names must exist";
    EXPECT_NE(missing.error().message.find("/nonexistent/jobmon-from-env.toml"), std::string::npos);
  }
}

TEST(JobmonConfig, AMissingDefaultIsTheDefaultsAMissingNamedFileAnError) {
  auto absent = LoadJobmonConfig(ConfigPath{"/nonexistent/jobmon.toml", false});
  ASSERT_TRUE(absent.ok()) << absent.error().message;
  EXPECT_TRUE(absent->path.empty());
  EXPECT_EQ(absent->monitor.poll_interval, MonitorConfig{}.poll_interval);
  EXPECT_TRUE(absent->alerts.receivers.empty());
  EXPECT_FALSE(absent->triage.stall_min_seconds);
  auto named = LoadJobmonConfig(ConfigPath{"/nonexistent/jobmon.toml", true});
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.error().message.find("/nonexistent/jobmon.toml: cannot read"), std::string::npos)
      << named.error().message;
}

TEST(JobmonConfig, UnknownKeysAreRefusedInEverySectionWithFileAndLine) {
  struct Case {
    const char* toml;
    const char* message;
  };
  for (const Case& c : {
           Case{"[monitr]\ncluster = \"a\"\n", "x.toml:1: unknown key 'monitr' in [top level]"},
           Case{"cluster = \"a\"\n", "x.toml:1: unknown key 'cluster' in [top level]"},
           Case{"[monitor]\ncluster = \"a\"\nclustr = \"b\"\n",
                "x.toml:3: unknown key 'clustr' in [monitor]"},
           Case{"[monitor.stall]\n\nk = 3\nkk = 4\n",
                "x.toml:4: unknown key 'kk' in [monitor.stall]"},
           Case{"[monitor.select]\nnames = []\n",
                "x.toml:2: unknown key 'names' in [monitor.select]"},
           Case{"[alerts]\nsecret_file = \"/x\"\n",
                "x.toml:2: unknown key 'secret_file' in [alerts]"},
           Case{"[[alerts.webhook]]\nurl = \"http://x\"\n[[alerts.webhook]]\nurl = \"http://y\"\n"
                "header = {}\n",
                "x.toml:5: unknown key 'header' in [[alerts.webhook]]"},
           Case{"[triage]\nprofile = \"hf\"\nstep_regexp = 'x'\n",
                "x.toml:3: unknown key 'step_regexp' in [triage]"},
           Case{"[diagnose]\nstore = \"http://x\"\n",
                "x.toml:2: unknown key 'store' in [diagnose]"},
           Case{"[diagnose]\nstore_url = \"127.0.0.1:8428\"\n",
                "diagnose.store_url must be an http:// or https:// URL"},
       }) {
    auto parsed = ParseJobmonConfig(c.toml, "x.toml");
    ASSERT_FALSE(parsed.ok()) << c.toml;
    EXPECT_NE(parsed.error().message.find(c.message), std::string::npos) << c.toml << "\n"
                                                                         << parsed.error().message;
  }
  // Every section of the shipped example is known.
  std::ifstream in(JOBMON_SOURCE_DIR "/etc/jobmon.toml");
  std::stringstream shipped;
  shipped << in.rdbuf();
  auto example = ParseJobmonConfig(shipped.str(), "jobmon.toml");
  EXPECT_TRUE(example.ok()) << example.error().message;
}

TEST(JobmonConfig, TheCentralStoreForDiagnose) {
  auto none = ParseJobmonConfig("", "x.toml");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->diagnose.store_url.empty()) << "no store: no fallback";
  auto set = ParseJobmonConfig(
      "[diagnose]\nstore_url = \"http://127.0.0.1:8428\"\ncluster = \"c1\"\n"
      "store_token_file = \"/etc/jobmon/store-token\"\nstore_lookback = \"48h\"\n",
      "x.toml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->diagnose.store_url, "http://127.0.0.1:8428");
  EXPECT_EQ(set->diagnose.cluster, "c1");
  EXPECT_EQ(set->diagnose.store_token_file, "/etc/jobmon/store-token");
  EXPECT_EQ(set->diagnose.store_lookback_seconds, 48 * 3600);
}

TEST(JobmonConfig, DurationsInEverySection) {
  auto parsed = ParseJobmonConfig(R"(
[triage]
profile = "maxtext"
[monitor]
poll_interval = "1m30s"
scrape_timeout = 1.5
[stall]
min_stall = "1m30s"
[alerts]
max_backoff = "5m"
[[alerts.webhook]]
url = "http://x"
timeout = "2s"
)",
                                  "x.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->monitor.poll_interval, 90);
  EXPECT_EQ(parsed->monitor.scrape_timeout, 1.5);
  EXPECT_EQ(parsed->monitor.stall.min_stall_seconds, 90);
  EXPECT_EQ(parsed->alerts.max_backoff, 300);
  ASSERT_EQ(parsed->alerts.receivers.size(), 1u);
  EXPECT_EQ(parsed->alerts.receivers[0].timeout, 2);
}

TEST(JobmonConfig, TheEndOfJobDiagnosisKeys) {
  auto defaults = ParseJobmonConfig("[monitor]\n", "x.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_TRUE(defaults->monitor.diagnose_at_end);
  EXPECT_EQ(defaults->monitor.diagnose_timeout, 60);
  auto parsed = ParseJobmonConfig(
      "[monitor]\ndiagnose_at_end = false\ndiagnose_timeout = \"2m30s\"\n", "x.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_FALSE(parsed->monitor.diagnose_at_end);
  EXPECT_EQ(parsed->monitor.diagnose_timeout, 150);
  struct Case {
    const char* toml;
    const char* message;
  };
  for (const Case& c : {
           Case{"[monitor]\ndiagnose_at_end = true\ndiagnose_at_ends = true\n",
                "x.toml:3: unknown key 'diagnose_at_ends' in [monitor]"},
           Case{"[monitor]\ndiagnose_at_end = \"yes\"\n", "diagnose_at_end"},
           Case{"[monitor]\ndiagnose_timeout = \"soon\"\n",
                "x.toml: monitor.diagnose_timeout invalid duration 'soon'"},
           Case{"[monitor]\ndiagnose_timeout = \"500ms\"\n",
                "x.toml: monitor.diagnose_timeout must be at least"},
       }) {
    auto refused = ParseJobmonConfig(c.toml, "x.toml");
    ASSERT_FALSE(refused.ok()) << c.toml;
    EXPECT_NE(refused.error().message.find(c.message), std::string::npos)
        << c.toml << "\n"
        << refused.error().message;
  }
}

TEST(JobmonConfig, DurationErrorsNameTheKey) {
  struct Case {
    const char* toml;
    const char* message;
  };
  for (const Case& c : {
           Case{"[monitor]\npoll_interval = \"soon\"\n",
                "x.toml: monitor.poll_interval invalid duration 'soon'"},
           Case{"[monitor.stall]\nmin_stall = \"500ms\"\n",
                "x.toml: monitor.stall.min_stall must be at least"},
           Case{"[stall]\nfirst_phase_grace = \"500ms\"\n",
                "x.toml: stall.first_phase_grace must be at least"},
           Case{"[alerts]\nmax_backoff = true\n", "x.toml: alerts.max_backoff must be a duration"},
           Case{"[triage]\nstall_min_seconds = \"1x\"\n",
                "x.toml: triage.stall_min_seconds invalid duration"},
       }) {
    auto parsed = ParseJobmonConfig(c.toml, "x.toml");
    ASSERT_FALSE(parsed.ok()) << c.toml;
    EXPECT_NE(parsed.error().message.find(c.message), std::string::npos) << c.toml << "\n"
                                                                         << parsed.error().message;
  }
}

}  // namespace
}  // namespace jobmon::monitor

namespace jobmon::monitor {
namespace {

// One stall rule for the monitor and `jobmon triage`: [stall], with its old
// names read as aliases, and never two values for one term.
TEST(JobmonConfig, OneStallRuleForTheMonitorAndTriage) {
  auto defaults = ParseJobmonConfig("", "x.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->monitor.stall.min_stall_seconds, triage::StallRule{}.min_stall_seconds);
  EXPECT_EQ(defaults->monitor.slowdown.window_seconds, 300) << "a slowdown is minutes long";
  auto set = ParseJobmonConfig(
      "[stall]\nk = 4\nmin_stall = \"8s\"\nphase_grace_factor = 2\nfirst_phase_grace = \"20m\"\n"
      "[monitor]\nslowdown_window = \"10m\"\nslowdown_min_steps = 50\n",
      "x.toml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->monitor.stall.k, 4);
  EXPECT_EQ(set->monitor.stall.min_stall_seconds, 8);
  EXPECT_EQ(set->monitor.stall.phase_grace_factor, 2);
  EXPECT_EQ(set->monitor.stall.first_phase_grace_seconds, 1200);
  EXPECT_EQ(set->monitor.slowdown.window_seconds, 600);
  EXPECT_EQ(set->monitor.slowdown.min_steps, 50);
  auto old_monitor = ParseJobmonConfig("[monitor.stall]\nmin_stall = \"9s\"\n", "x.toml");
  ASSERT_TRUE(old_monitor.ok()) << old_monitor.error().message;
  EXPECT_EQ(old_monitor->monitor.stall.min_stall_seconds, 9);
  auto old_triage = ParseJobmonConfig("[triage]\nstall_min_seconds = \"7s\"\n", "x.toml");
  ASSERT_TRUE(old_triage.ok()) << old_triage.error().message;
  EXPECT_EQ(old_triage->monitor.stall.min_stall_seconds, 7) << "the same floor for both";
  for (const char* twice :
       {"[stall]\nk = 3\n[monitor.stall]\nk = 4\n",
        "[stall]\nmin_stall = \"8s\"\n[triage]\nstall_min_seconds = \"2s\"\n",
        "[monitor.stall]\nmin_stall = \"8s\"\n[triage]\nstall_min_seconds = 2\n"}) {
    auto refused = ParseJobmonConfig(twice, "x.toml");
    ASSERT_FALSE(refused.ok()) << twice;
    EXPECT_NE(refused.error().message.find("stall"), std::string::npos) << refused.error().message;
  }
}

}  // namespace
}  // namespace jobmon::monitor
