// The daemon's end-of-job diagnosis in a child process (child_diagnoser.h):
// it becomes the job's user, gets none of the daemon's environment, and a
// child stuck on what the job's user made (a FIFO) is stopped at the
// timeout, with nothing left running and nothing for shutdown to wait on.
// The child here is a shell script standing in for `jobmon diagnose`.

#include "jobmon/monitor/child_diagnoser.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "jobmon/monitor/end_diagnosis.h"

namespace jobmon::monitor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using diagnose::TargetOutcome;
using diagnose::TargetRequest;

class ChildDiagnoserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/jobmon-child-diag-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    chmod(dir_.c_str(), 0755);  // the script runs as another user too
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  ChildDiagnoserOptions Options(const std::string& binary) {
    ChildDiagnoserOptions o;
    o.jobmon_binary = binary;
    o.grace = 200ms;
    return o;
  }
  fs::path dir_;
};

// Running, not a zombie waiting for a reaper.
bool Alive(pid_t pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

// Prints a report whose verdicts are who it ran as and what it was given.
constexpr const char* kReportWho =
    R"x(printf '{"schema":"jobmon.diagnose-report/v1","status":"diagnosed","error":"",)x"
    R"x("markdown":"# report","verdicts":"uid %s gid %s groups %s secret [%s] args %s"}' )x"
    R"x("$(id -u)" "$(id -g)" "$(id -G)" "$JOBMON_TEST_SECRET" "$*")x";

TEST_F(ChildDiagnoserTest, TheReportComesBackAndTheTargetFollowsDoubleDash) {
  auto diagnoser = ChildDiagnoser(Options(Script("jobmon", kReportWho)));
  TargetRequest request;
  request.argument = "--not-an-option";
  auto report = diagnoser(request);
  ASSERT_EQ(report.status, TargetOutcome::Status::kDiagnosed) << report.error;
  EXPECT_EQ(report.markdown, "# report");
  EXPECT_NE(report.verdicts.find("args diagnose --for-monitor --quiet --config /dev/null "
                                 "--playbook auto -- --not-an-option"),
            std::string::npos)
      << report.verdicts;
}

// The daemon's own environment (a store token, a webhook secret) never
// reaches a process of the job's user.
TEST_F(ChildDiagnoserTest, TheDaemonsEnvironmentDoesNotReachTheChild) {
  setenv("JOBMON_TEST_SECRET", "hunter2", 1);
  auto report = ChildDiagnoser(Options(Script("jobmon", kReportWho)))(TargetRequest{});
  unsetenv("JOBMON_TEST_SECRET");
  EXPECT_NE(report.verdicts.find("secret []"), std::string::npos) << report.verdicts;
}

// The diagnosis read the job's files as root; it now runs as the job's
// user, with no supplementary group of root's.
TEST_F(ChildDiagnoserTest, TheDiagnosisRunsAsTheJobsUserWithItsGroupAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  TargetRequest request;
  request.user = JobUser{65534, 65534};
  auto report = ChildDiagnoser(Options(Script("jobmon", kReportWho)))(request);
  ASSERT_EQ(report.status, TargetOutcome::Status::kDiagnosed) << report.error;
  EXPECT_NE(report.verdicts.find("uid 65534 gid 65534 groups 65534 "), std::string::npos)
      << report.verdicts;
}

TEST_F(ChildDiagnoserTest, AChildThatPrintsNoReportIsAFailureThatSaysSo) {
  auto report = ChildDiagnoser(Options(Script("jobmon", "echo oops; exit 3")))(TargetRequest{});
  EXPECT_EQ(report.status, TargetOutcome::Status::kAccessError);
  EXPECT_NE(report.error.find("exited 3 without a report"), std::string::npos) << report.error;
  auto missing = ChildDiagnoser(Options((dir_ / "no-such-jobmon").string()))(TargetRequest{});
  EXPECT_NE(missing.error.find("not found"), std::string::npos) << missing.error;
}

// A meta.json made a FIFO held the diagnosis thread for good, and
// ~EndDiagnosis joined it: SIGTERM, restart and upgrade hung. The child
// blocked on the FIFO is now stopped at the timeout, its process group
// with it, and destroying EndDiagnosis waits on nothing.
TEST_F(ChildDiagnoserTest, ADiagnosisStuckOnAFifoIsStoppedAtTheTimeoutAndShutdownDoesNotWait) {
  const std::string fifo = (dir_ / "meta.json").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  const std::string pids = (dir_ / "pids").string();
  // A grandchild in the group too (as a helper the diagnosis started).
  const std::string stuck =
      Script("jobmon", "sleep 300 & echo $! >" + pids + "; echo $$ >>" + pids + "; cat " + fifo);
  EndDiagnosis diagnosis(ChildDiagnoser(Options(stuck)), 0.5);
  diagnosis.Submit(7, 1, "/diag", EndDiagnosis::Clock::now(), std::nullopt);
  std::vector<EndDiagnosis::Result> results;
  for (int i = 0; i < 500 && results.empty(); ++i) {
    std::this_thread::sleep_for(20ms);
    results = diagnosis.Poll();
  }
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].timed_out);
  pid_t sleeper = 0, script = 0;
  ASSERT_TRUE(std::ifstream(pids) >> sleeper >> script);
  for (int i = 0; i < 250 && (Alive(sleeper) || Alive(script)); ++i) {
    std::this_thread::sleep_for(20ms);
    diagnosis.Poll();  // joins the stopped one
  }
  EXPECT_FALSE(Alive(sleeper)) << "the grandchild in its group is stopped too";
  EXPECT_FALSE(Alive(script)) << "the child is stopped";
}

}  // namespace
}  // namespace jobmon::monitor
