// Slurm's own hostlist code (scontrol show hostnames) as the oracle for ours.
// Needs only the scontrol binary and a minimal config file: no daemon, no
// network. Skipped where Slurm is not installed.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "jobmon/common/hostlist.h"

namespace jobmon {
namespace {

namespace fs = std::filesystem;

struct ScontrolResult {
  int exit_code;
  std::vector<std::string> hosts;
  // scontrol reports a bad list on stdout and still exits 0.
  bool Rejected() const {
    return exit_code != 0 || hosts.empty() || hosts[0].rfind("Invalid hostlist", 0) == 0;
  }
};

class SlurmOracle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access("/usr/bin/scontrol", X_OK) != 0) return;
    conf_ = fs::temp_directory_path() / ("jobmon-oracle-" + std::to_string(getpid()) + ".conf");
    std::ofstream(conf_) << "ClusterName=oracle\nSlurmctldHost=localhost\n";
  }
  static void TearDownTestSuite() {
    if (!conf_.empty()) fs::remove(conf_);
  }
  void SetUp() override {
    if (conf_.empty()) GTEST_SKIP() << "scontrol not installed";
  }
  static ScontrolResult Scontrol(const std::string& expression) {
    // The expression goes through argv, not a shell.
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      int null_fd = open("/dev/null", O_WRONLY);
      dup2(null_fd, STDERR_FILENO);
      close(out[0]);
      setenv("SLURM_CONF", conf_.c_str(), 1);
      execl("/usr/bin/scontrol", "scontrol", "show", "hostnames", expression.c_str(), nullptr);
      _exit(127);
    }
    close(out[1]);
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = read(out[0], buffer, sizeof buffer)) > 0) text.append(buffer, n);
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ScontrolResult result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, {}};
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
      result.hosts.push_back(text.substr(start, nl - start));
    }
    return result;
  }
  static inline fs::path conf_;
};

TEST_F(SlurmOracle, ExpansionMatchesSlurm) {
  for (const char* expression :
       {"node[01-04,7],gpu-a[1-2]", "node[08-11]", "node[8-11]", "rack[1-2]-n[1-2]", "login",
        "a,b,c", "node1-ib,node2-ib", "n[001-010,100]", "x[9-12],y[099-101]", "gpu[0-3,5,7-8]"}) {
    auto ours = ExpandHostlist(expression);
    ScontrolResult slurm = Scontrol(expression);
    ASSERT_TRUE(ours.ok()) << expression;
    ASSERT_FALSE(slurm.Rejected()) << expression;
    EXPECT_EQ(*ours, slurm.hosts) << expression;
  }
}

TEST_F(SlurmOracle, BothRejectMalformedRanges) {
  for (const char* expression : {"node[3-1]", "node[a-b]", "node[1-2]-ib"}) {
    EXPECT_FALSE(ExpandHostlist(expression).ok()) << expression;
    EXPECT_TRUE(Scontrol(expression).Rejected()) << expression;
  }
}

TEST_F(SlurmOracle, SlurmExpandsOurCompressionToTheSameHosts) {
  const std::vector<std::vector<std::string>> inputs = {
      {"node01", "node02", "node03", "node04", "node7", "gpu-a1", "gpu-a2"},
      {"node9", "node10", "node11", "node1"},
      {"n010", "n11", "n009", "login", "n12"},
      {"c1", "c3", "c5", "c4"},
  };
  for (const auto& hosts : inputs) {
    std::string compressed = CompressHostlist(hosts);
    ScontrolResult slurm = Scontrol(compressed);
    ASSERT_FALSE(slurm.Rejected()) << compressed;
    EXPECT_EQ(std::set<std::string>(slurm.hosts.begin(), slurm.hosts.end()),
              std::set<std::string>(hosts.begin(), hosts.end()))
        << compressed;
  }
}

}  // namespace
}  // namespace jobmon
