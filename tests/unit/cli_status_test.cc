// Hardening item 13: `jobmon status` with a job id that does not fit 32 bits
// and with a FIFO as its log argument, run as the real binary (bounded by
// RunCommand's deadline: a hang is a failure, not a stuck test).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "jobmon/common/run_command.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/job_input.h"

namespace jobmon {
namespace {

namespace fs = std::filesystem;

class StatusCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "jobmon.toml") << "";  // defaults; never /etc/jobmon
    auto store = monitor::StateStore::Open((dir_ / "state.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    monitor::JobRecord job;  // job 1: what a wrapped 4294967297 would show
    job.job_id = 1;
    job.name = "job-one";
    job.first_seen = job.last_seen = 1;
    ASSERT_TRUE((*store)->UpsertJob(job).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // stdout and stderr together; exit code, or -1 when killed at the deadline.
  CommandResult Status(const std::string& argument) {
    const std::string command = std::string("'") + JOBMON_CLI + "' status '" + argument +
                                "' --db '" + (dir_ / "state.db").string() + "' -c '" +
                                (dir_ / "jobmon.toml").string() + "' 2>&1";
    auto result = RunCommand({"/bin/sh", "-c", command}, std::chrono::seconds(10));
    EXPECT_TRUE(result.ok());
    return result.ok() ? *result : CommandResult{};
  }
  fs::path dir_;
};

TEST_F(StatusCliTest, AJobIdBeyond32BitsIsRefusedNotWrapped) {
  auto wrapped = Status("4294967297");
  EXPECT_EQ(wrapped.exit_code, 2) << wrapped.output;
  EXPECT_NE(wrapped.output.find("out of range"), std::string::npos) << wrapped.output;
  EXPECT_EQ(wrapped.output.find("job-one"), std::string::npos) << "job 1 shown for 2^32+1";
  auto huge = Status("12345678901234567890123");
  EXPECT_EQ(huge.exit_code, 2) << huge.output;
  EXPECT_NE(huge.output.find("out of range"), std::string::npos) << huge.output;
  EXPECT_EQ(huge.output.find("internal error"), std::string::npos) << huge.output;
  auto one = Status("1");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("job-one"), std::string::npos) << one.output;
}

TEST_F(StatusCliTest, AFifoAsTheLogIsRefusedWithoutOpeningIt) {
  const std::string fifo = (dir_ / "trap.log").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto result = Status(fifo);
  EXPECT_FALSE(result.timed_out) << "opened the FIFO and waited for a writer";
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("not a regular file"), std::string::npos) << result.output;
}

TEST(ParseJobId, DigitsInRangeOnly) {
  EXPECT_EQ(triage::ParseJobId("1").value(), 1u);
  EXPECT_EQ(triage::ParseJobId("4294967295").value(), 4294967295u);
  EXPECT_EQ(triage::ParseJobId("007").value(), 7u);
  for (const char* bad :
       {"0", "4294967296", "4294967297", "12345678901234567890123", "", "-1", "+1", "1x", " 1"}) {
    EXPECT_FALSE(triage::ParseJobId(bad).ok()) << bad;
  }
  EXPECT_NE(triage::ParseJobId("4294967297").error().message.find("out of range"),
            std::string::npos);
}

TEST(CheckRegularFile, RefusesFifosAndDirectories) {
  const fs::path dir = fs::temp_directory_path() / ("jobmon-regular-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "log") << "x\n";
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir / "fifo", dir / "link-to-fifo");
  EXPECT_TRUE(triage::CheckRegularFile((dir / "log").string()).ok());
  EXPECT_NE(triage::CheckRegularFile((dir / "fifo").string()).error().message.find("FIFO"),
            std::string::npos);
  EXPECT_FALSE(triage::CheckRegularFile((dir / "link-to-fifo").string()).ok());
  EXPECT_FALSE(triage::CheckRegularFile(dir.string()).ok());
  EXPECT_FALSE(triage::CheckRegularFile((dir / "missing").string()).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace jobmon
