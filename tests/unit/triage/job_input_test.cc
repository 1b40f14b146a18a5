#include "jobmon/triage/job_input.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace jobmon::triage {
namespace {

namespace fs = std::filesystem;

class JobInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outputs_ = fs::temp_directory_path() / ("jobmon-outputs-" + std::to_string(getpid()));
    fs::create_directories(outputs_);
    MakeJob("7877-llama");
    MakeJob("7880-mixtral");
    std::ofstream(outputs_ / "7890-loose.log") << "x\n";
    fs::create_directories(outputs_ / "checkpoints-shared");  // no log symlink: not a job
  }
  void TearDown() override { fs::remove_all(outputs_); }
  void MakeJob(const std::string& name) {
    std::ofstream(outputs_ / (name + ".log")) << "log of " << name << "\n";
    fs::create_directories(outputs_ / name);
    fs::create_directory_symlink("../" + name + ".log", outputs_ / name / "log");
  }
  fs::path outputs_;
};

TEST_F(JobInputTest, LogFileFindsItsJobDir) {
  auto job = ResolveJobInput((outputs_ / "7877-llama.log").string(), "unused");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->job_dir, (outputs_ / "7877-llama").string());
  EXPECT_EQ(job->job_id, "7877");
}

TEST_F(JobInputTest, JobDirFollowsItsLogSymlink) {
  auto job = ResolveJobInput((outputs_ / "7880-mixtral").string(), "unused");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(fs::path(job->log_path).filename(), "7880-mixtral.log");
  auto not_a_job = ResolveJobInput((outputs_ / "checkpoints-shared").string(), "unused");
  ASSERT_FALSE(not_a_job.ok());
  EXPECT_NE(not_a_job.error().message.find("no `log` symlink"), std::string::npos);
}

TEST_F(JobInputTest, JobIdUnderOutputs) {
  auto dir_job = ResolveJobInput("7877", outputs_.string());
  ASSERT_TRUE(dir_job.ok());
  EXPECT_EQ(dir_job->job_dir, (outputs_ / "7877-llama").string());
  auto log_only = ResolveJobInput("7890", outputs_.string());
  ASSERT_TRUE(log_only.ok());
  EXPECT_EQ(fs::path(log_only->log_path).filename(), "7890-loose.log");
  auto missing = ResolveJobInput("1234", outputs_.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no job 1234"), std::string::npos);
  EXPECT_FALSE(ResolveJobInput("7877", "/nonexistent").ok());
  EXPECT_FALSE(ResolveJobInput("not-a-file", outputs_.string()).ok());
}

TEST_F(JobInputTest, AllSkipsDirsWithoutALogSymlink) {
  auto jobs = ListOutputJobs(outputs_.string());
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_id, "7877");
  EXPECT_EQ((*jobs)[1].job_id, "7880");
}

TEST(Squeue, JobState) {
  const std::string answer = R"({"jobs": [
      {"job_id": 5, "user_id": 0, "group_id": 0, "name": "x JobState=COMPLETED",
       "job_state": "RUNNING"},
      {"job_id": 6, "user_id": 0, "group_id": 0, "job_state": "FAILED"}]})";
  EXPECT_EQ(JobStateFromSqueueJson(answer, "5")->state, "RUNNING") << "the name is only a name";
  EXPECT_EQ(JobStateFromSqueueJson(answer, "6")->state, "FAILED");
  EXPECT_FALSE(JobStateFromSqueueJson(answer, "7"));
  EXPECT_FALSE(JobStateFromSqueueJson("slurm_load_jobs error: Unable to contact", "5"));
}

}  // namespace
}  // namespace jobmon::triage
