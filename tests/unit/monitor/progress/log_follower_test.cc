// LogFollower: complete lines once, a persisted position resumed, truncation
// and rotation, a bounded poll and a runaway line cut, growth past one read;
// each with logs opened at every poll and kept open between polls; then the budget of logs kept
// open, and a replaced log drained before its successor is read.
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

// The parameter: logs kept open between polls (else opened at each poll).
class LogFollowerTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { LogFollower::KeepOpenAtMost(GetParam() ? 100 : 0); }
  void TearDown() override { LogFollower::KeepOpenAtMost(0); }
};
INSTANTIATE_TEST_SUITE_P(OpenedOrKept, LogFollowerTest, ::testing::Bool(),
                         [](const auto& test) { return test.param ? "Kept" : "Opened"; });

TEST_P(LogFollowerTest, ReturnsCompleteLinesOnceAndWaitsForPartialOnes) {
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

TEST_P(LogFollowerTest, ResumesFromAPersistedPositionWithoutRereadingOrLosing) {
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

TEST_P(LogFollowerTest, TruncationAndRotationRestartAtZero) {
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

TEST_P(LogFollowerTest, BoundedPerPollAndARunawayLineIsCut) {
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
    if (total + chunk.lines.size() < 1000) {
      EXPECT_FALSE(chunk.at_end) << "capped: more to read";
    }
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

// A kept log is read on without an fstat while one read takes what grew;
// more than that, and the usual way reads the rest.
TEST_P(LogFollowerTest, GrowthPastOneReadComesWholeAndInOrder) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "first\n");
  LogFollower follower(log.string());
  ASSERT_EQ(follower.Poll()->lines.size(), 1u);
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "line " + std::to_string(i) + "\n";
  ASSERT_GT(many.size(), size_t{64} << 10);
  Append(log, many);
  auto chunk = follower.Poll().value();
  ASSERT_EQ(chunk.lines.size(), 20000u);
  EXPECT_EQ(chunk.lines.front(), "line 0");
  EXPECT_EQ(chunk.lines.back(), "line 19999");
  EXPECT_TRUE(chunk.at_end) << "all of it read: a drain stops here";
  Append(log, "small\npartial");
  auto small = follower.Poll().value();
  EXPECT_EQ(small.lines, std::vector<std::string>{"small"});
  EXPECT_TRUE(small.at_end);
  EXPECT_TRUE(follower.Poll()->lines.empty()) << "the partial line waits";
  Append(log, "\n");
  EXPECT_EQ(follower.Poll()->lines, std::vector<std::string>{"partial"});
  EXPECT_FALSE(follower.Poll()->truncated);
}

TEST(LogFollowerKeptOpen, AtMostTheBudgetAndReleasedWithTheFollower) {
  TempDir dir;
  Append(dir.path / "a.log", "a\n");
  Append(dir.path / "b.log", "b\n");
  LogFollower::KeepOpenAtMost(1);
  {
    LogFollower a((dir.path / "a.log").string());
    LogFollower b((dir.path / "b.log").string());
    ASSERT_EQ(a.Poll()->lines.size(), 1u);
    ASSERT_EQ(b.Poll()->lines.size(), 1u);
    EXPECT_EQ(LogFollower::KeptOpen(), 1u) << "the budget is one";
    LogFollower moved(std::move(a));
    EXPECT_EQ(LogFollower::KeptOpen(), 1u) << "a move keeps the count";
    Append(dir.path / "b.log", "b2\n");
    EXPECT_EQ(b.Poll()->lines, std::vector<std::string>{"b2"}) << "opened again, read as before";
    moved.set_user(JobUser{getuid(), getgid()});
    EXPECT_EQ(LogFollower::KeptOpen(), 0u) << "a new user opens the log again, as that user";
    ASSERT_TRUE(moved.Poll().ok());
    EXPECT_EQ(LogFollower::KeptOpen(), 1u);
  }
  EXPECT_EQ(LogFollower::KeptOpen(), 0u) << "released with the followers";
  LogFollower::KeepOpenAtMost(0);
}

// A kept job.log in `dir`, read once (its one line `first`), then renamed
// to job.log.1 (the file its writer still writes) with a successor at its
// path holding "new 1".
LogFollower FollowThenReplace(const TempDir& dir, const std::string& first) {
  const fs::path log = dir.path / "job.log";
  Append(log, first + "\n");
  LogFollower follower(log.string());
  EXPECT_EQ(follower.Poll()->lines, std::vector<std::string>{first});
  fs::rename(log, dir.path / "job.log.1");
  Append(log, "new 1\n");
  return follower;
}

// A log replaced at its path while its writer still writes to the old file:
// the old file is read on while it grows, then its successor from its start.
TEST(LogFollowerKeptOpen, AReplacedLogIsDrainedBeforeItsSuccessor) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  LogFollower::KeepOpenAtMost(10);
  LogFollower follower = FollowThenReplace(dir, "old 1");
  Append(dir.path / "job.log.1", "old 2\n");  // the writer's descriptor
  auto drained = follower.Poll().value();
  EXPECT_EQ(drained.lines, std::vector<std::string>{"old 2"});
  EXPECT_FALSE(drained.rotated);
  Append(dir.path / "job.log.1", "old 3\n");  // still growing: still the one read
  EXPECT_EQ(follower.Poll()->lines, std::vector<std::string>{"old 3"});
  auto next = follower.Poll().value();
  EXPECT_TRUE(next.rotated);
  EXPECT_EQ(next.lines, std::vector<std::string>{"new 1"});
  EXPECT_TRUE(next.at_end);
  fs::remove(log);
  EXPECT_TRUE(follower.Poll()->missing);
  EXPECT_EQ(LogFollower::KeptOpen(), 0u) << "a log gone from its path is let go";
  LogFollower::KeepOpenAtMost(0);
}

// A replaced log whose writer goes on writing it: its path is looked up
// every few polls (not at each, which cost an lstat a poll), and the drain
// then turns to the path's file once the old one is read to its end.
TEST(LogFollowerKeptOpen, AGrowingReplacedLogHasItsPathLookedUpEveryFewPolls) {
  TempDir dir;
  LogFollower::KeepOpenAtMost(10);
  LogFollower follower = FollowThenReplace(dir, "old 0");
  bool looked_up = false;
  for (int poll = 1; poll <= LogFollower::kLookUpPathEvery && !looked_up; ++poll) {
    Append(dir.path / "job.log.1", "old " + std::to_string(poll) + "\n");
    auto chunk = follower.Poll().value();
    EXPECT_EQ(chunk.lines, std::vector<std::string>{"old " + std::to_string(poll)});
    looked_up = !chunk.at_end;
  }
  EXPECT_TRUE(looked_up) << "another file at the path: the drain polls on";
  auto next = follower.Poll().value();
  EXPECT_TRUE(next.rotated);
  EXPECT_EQ(next.lines, std::vector<std::string>{"new 1"});
  LogFollower::KeepOpenAtMost(0);
}

}  // namespace
}  // namespace jobmon::monitor
