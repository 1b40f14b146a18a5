#include "jobmon/common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace jobmon {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-atomic-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t EntriesInDir() {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesReplacesAndSetsTheMode) {
  fs::path target = dir_ / "manifest.json";
  ASSERT_TRUE(WriteFileAtomically(target.string(), "first", 0600).ok());
  EXPECT_EQ(Read(target), "first");
  struct stat st {};
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(WriteFileAtomically(target.string(), std::string(1 << 20, 'x')).ok());
  EXPECT_EQ(Read(target).size(), 1u << 20);
  EXPECT_EQ(EntriesInDir(), 1u) << "no temp file left behind";
}

TEST_F(AtomicFileTest, FailureLeavesTheTargetAndNoTempFile) {
  fs::path target = dir_ / "is-a-directory";
  fs::create_directories(target / "child");
  auto result = WriteFileAtomically(target.string(), "data");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("rename"), std::string::npos) << result.error().message;
  EXPECT_TRUE(fs::is_directory(target / "child"));
  EXPECT_EQ(EntriesInDir(), 1u);

  auto no_dir = WriteFileAtomically((dir_ / "missing" / "file").string(), "data");
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.error().message.find("temp file"), std::string::npos);
}

}  // namespace
}  // namespace jobmon
