// LogFollower: complete lines once, a persisted position resumed, truncation
// and rotation, a bounded poll and a runaway line cut.
#include "jobmon/monitor/log_follower.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

using test_support::Append;
using test_support::TempDir;
namespace fs = std::filesystem;

TEST(LogFollowerTest, ReturnsCompleteLinesOnceAndWaitsForPartialOnes) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  LogFollower follower(log.string());
  auto missing = follower.Poll();
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->missing);
  Append(log, "0: completed step: 0\r\n0: completed step: 1\n0: compl");
  auto first = follower.Poll().value();
  EXPECT_EQ(first.lines,
            (std::vector<std::string>{"0: completed step: 0", "0: completed step: 1"}));
  EXPECT_TRUE(follower.Poll()->lines.empty()) << "the partial line waits";
  Append(log, "eted step: 2\n");
  EXPECT_EQ(follower.Poll()->lines, std::vector<std::string>{"0: completed step: 2"});
}

TEST(LogFollowerTest, ResumesFromAPersistedPositionWithoutRereadingOrLosing) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "a\nb\n");
  LogFollower before(log.string());
  ASSERT_EQ(before.Poll()->lines.size(), 2u);
  LogPosition saved = before.position();  // what the daemon stores in SQLite
  Append(log, "c\n");                     // written while the daemon was down
  LogFollower after(log.string(), saved);
  EXPECT_EQ(after.Poll()->lines, std::vector<std::string>{"c"});
}

TEST(LogFollowerTest, TruncationAndRotationRestartAtZero) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "one\ntwo\nthree\n");
  LogFollower follower(log.string());
  ASSERT_EQ(follower.Poll()->lines.size(), 3u);
  fs::resize_file(log, 0);  // copytruncate
  Append(log, "new\n");
  auto truncated = follower.Poll().value();
  EXPECT_TRUE(truncated.truncated);
  EXPECT_EQ(truncated.lines, std::vector<std::string>{"new"});
  fs::rename(log, dir.path / "job.log.1");  // rotation
  Append(log, "rotated\n");
  auto rotated = follower.Poll().value();
  EXPECT_TRUE(rotated.rotated);
  EXPECT_EQ(rotated.lines, std::vector<std::string>{"rotated"});
}

TEST(LogFollowerTest, BoundedPerPollAndARunawayLineIsCut) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "line " + std::to_string(i) + "\n";
  Append(log, many);
  LogFollower follower(log.string(), {}, 1000);
  size_t total = 0, polls = 0;
  for (; polls < 100; ++polls) {
    auto chunk = follower.Poll().value();
    if (chunk.lines.empty()) break;
    EXPECT_LE(chunk.lines.size(), 200u);
    total += chunk.lines.size();
  }
  EXPECT_EQ(total, 1000u);
  EXPECT_GT(polls, 5u);
  Append(log, std::string(LogFollower::kMaxLine + 10, 'x'));
  LogFollower big(log.string(), follower.position(), 8 << 20);
  auto chunk = big.Poll().value();
  ASSERT_EQ(chunk.lines.size(), 1u);
  EXPECT_EQ(chunk.lines[0].size(), LogFollower::kMaxLine);
}

}  // namespace
}  // namespace jobmon::monitor
