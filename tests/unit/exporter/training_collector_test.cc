// The training collector: TensorBoard event files of the job (not a
// previous job's), read incrementally, and never through a link or a FIFO.
#include "jobmon/exporter/training_collector.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "jobmon/tfevents/event.h"
#include "jobmon/tfevents/record.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;

class TrainingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-tb-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "tensorboard");
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string Text(TrainingCollector& collector) {
    auto families = collector.Collect();
    EXPECT_TRUE(families.ok()) << families.error().message;
    return families.ok() ? prometheus::TextSerializer().Serialize(*families) : "";
  }
  static tfevents::ScalarEvent Step(int64_t step, double loss) {
    return {step, 1.8e9 + step, {{"learning/loss", loss}, {"perf/step_time_seconds", 1.5}}, ""};
  }
  fs::path dir_;
};

TEST_F(TrainingTest, IgnoresAPreviousJobsFileAndReadsIncrementally) {
  {
    auto old = tfevents::EventFileWriter::Create(dir_.string(), "old", 1.0);
    ASSERT_TRUE(old.ok());
    ASSERT_TRUE(old.value().Write(Step(999, 0.1)).ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // ctime has 1 s granularity here
  TrainingCollector collector(dir_.string(), std::chrono::system_clock::now());
  EXPECT_EQ(Text(collector), "") << "the previous job's file is never picked";

  auto writer = tfevents::EventFileWriter::Create((dir_ / "tensorboard").string(), "node1", 2.0);
  ASSERT_TRUE(writer.ok());
  for (int step = 0; step < 3; ++step)
    ASSERT_TRUE(writer.value().Write(Step(step, 10 - step)).ok());
  std::string first = Text(collector);
  EXPECT_NE(first.find("tb_step 2\n"), std::string::npos) << first;
  EXPECT_NE(first.find("tb_learning_loss 8\n"), std::string::npos);
  EXPECT_NE(first.find("tb_perf_step_time_seconds 1.5\n"), std::string::npos);
  ASSERT_TRUE(writer.value().Write(Step(3, 6.5)).ok());
  std::string second = Text(collector);
  EXPECT_NE(second.find("tb_step 3\n"), std::string::npos);
  EXPECT_NE(second.find("tb_learning_loss 6.5\n"), std::string::npos);
}

TEST_F(TrainingTest, ARecordStillBeingWrittenWaitsAndACorruptOneServesNothing) {
  TrainingCollector collector(dir_.string(),
                              std::chrono::system_clock::now() - std::chrono::seconds(5));
  std::string path = (dir_ / "events.out.tfevents.1.node1").string();
  std::string one = tfevents::FrameRecord(tfevents::EncodeEvent(Step(1, 3.0)));
  std::string two = tfevents::FrameRecord(tfevents::EncodeEvent(Step(2, 2.0)));
  std::ofstream(path, std::ios::binary) << one << two.substr(0, 10);
  EXPECT_NE(Text(collector).find("tb_step 1\n"), std::string::npos);
  std::ofstream(path, std::ios::binary | std::ios::app) << two.substr(10);
  EXPECT_NE(Text(collector).find("tb_step 2\n"), std::string::npos) << "completed on the next read";
  std::string bad = tfevents::FrameRecord(tfevents::EncodeEvent(Step(3, 1.0)));
  bad[bad.size() - 1] ^= 0x55;  // payload CRC
  std::ofstream(path, std::ios::binary | std::ios::app) << bad;
  auto families = collector.Collect();
  ASSERT_FALSE(families.ok());
  EXPECT_NE(families.error().message.find("CRC"), std::string::npos);
  EXPECT_EQ(TensorBoardMetricName("perf/per device-tokens.sec"), "tb_perf_per_device_tokens_sec");
}

// The job's user owns the tfevents dir: a link named like an event file
// (to a file only the exporter's user may read) was read through, and a
// FIFO swapped in after the scan held the collection on its open.
TEST_F(TrainingTest, AnEventFileThatIsALinkOrAFifoIsNotRead) {
  TrainingCollector collector(dir_.string(),
                              std::chrono::system_clock::now() - std::chrono::seconds(5));
  const fs::path elsewhere =
      fs::temp_directory_path() / ("jobmon-tb-other-" + std::to_string(getpid()));
  std::ofstream(elsewhere, std::ios::binary)
      << tfevents::FrameRecord(tfevents::EncodeEvent(Step(4242, 1.0)));
  fs::create_symlink(elsewhere, dir_ / "events.out.tfevents.2.link");
  std::string text = Text(collector);
  fs::remove(elsewhere);
  EXPECT_EQ(text.find("tb_step 4242"), std::string::npos) << "the link was not followed";
  // The file being followed, swapped for a FIFO: an error, not a wait (in a
  // child, so a wait fails the test instead of hanging it).
  const fs::path real = dir_ / "events.out.tfevents.3.node1";
  std::ofstream(real, std::ios::binary)
      << tfevents::FrameRecord(tfevents::EncodeEvent(Step(1, 1.0)));
  ASSERT_NE(Text(collector).find("tb_step 1\n"), std::string::npos);
  fs::remove(real);
  ASSERT_EQ(mkfifo(real.c_str(), 0600), 0);
  pid_t pid = fork();
  if (pid == 0) _exit(collector.Collect().ok() ? 1 : 0);
  int status = -1;
  for (int i = 0; i < 500 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20'000);
  if (!WIFEXITED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the FIFO was waited on";
}

}  // namespace
}  // namespace jobmon::exporter
