// OpenUserFile/ReadUserFile against what a job's user can plant in a path
// that root or the monitor reads: symlinks, FIFOs, devices, huge files,
// files only root may read.
#include "jobmon/common/user_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using jobmon::JobUser;
using jobmon::OpenUserFile;
using jobmon::ReadUserFile;
using jobmon::UserFileKind;
using jobmon::UserFileOptions;

namespace {

class UserFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("user_file_test." + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    std::string path = dir_ / name;
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  fs::path dir_;
};

constexpr JobUser kNobody{65534, 65534};

TEST_F(UserFileTest, ReadsARegularFile) {
  auto text = ReadUserFile(Write("manifest.json", "{}\n"), 1024);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "{}\n");
}

TEST_F(UserFileTest, RefusesASymlinkAsTheLastComponent) {
  std::string target = Write("secret", "root only\n", 0600);
  fs::create_symlink(target, dir_ / "link");
  auto text = ReadUserFile(dir_ / "link", 1024);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("symlink"), std::string::npos) << text.error().message;
}

TEST_F(UserFileTest, RefusesAFifoWithoutBlocking) {
  std::string fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  auto start = std::chrono::steady_clock::now();
  auto text = ReadUserFile(fifo, 1024);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("FIFO"), std::string::npos) << text.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(UserFileTest, RefusesADeviceReachedThroughADirectorySymlink) {
  // O_NOFOLLOW guards only the last component; the type check guards the rest.
  fs::create_directory_symlink("/dev", dir_ / "devlink");
  auto text = ReadUserFile(dir_ / "devlink" / "zero", 1024);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("character device"), std::string::npos)
      << text.error().message;
}

TEST_F(UserFileTest, RefusesAFileOverTheCapInsteadOfTruncating) {
  std::string big = Write("big", std::string(4096, 'x'));
  auto text = ReadUserFile(big, 1000);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("more than 1000"), std::string::npos);
  EXPECT_TRUE(ReadUserFile(big, 4096));
}

TEST_F(UserFileTest, DirectoryOnlyWhereOneIsExpected) {
  EXPECT_FALSE(OpenUserFile(dir_.string()));
  UserFileOptions want_dir;
  want_dir.kind = UserFileKind::kDirectory;
  EXPECT_TRUE(OpenUserFile(dir_.string(), want_dir));
  EXPECT_FALSE(OpenUserFile(Write("plain", "x"), want_dir));
}

TEST(UserCanReadTest, ModeBitsAsTheUserSeesThem) {
  struct stat st {};
  st.st_mode = S_IFREG | 0600;
  st.st_uid = 0;
  st.st_gid = 0;
  EXPECT_FALSE(jobmon::UserCanRead(st, kNobody));  // root's own file
  st.st_mode = S_IFREG | 0640;
  EXPECT_FALSE(jobmon::UserCanRead(st, kNobody));  // root's group is not the user's
  st.st_gid = kNobody.gid;
  EXPECT_TRUE(jobmon::UserCanRead(st, kNobody));
  st.st_mode = S_IFREG | 0604;
  st.st_gid = 0;
  EXPECT_TRUE(jobmon::UserCanRead(st, kNobody));  // world-readable
  st.st_uid = kNobody.uid;
  st.st_mode = S_IFREG | 0044;
  EXPECT_FALSE(jobmon::UserCanRead(st, kNobody));  // owner bits win for the owner
  st.st_mode = S_IFDIR | 0400;
  EXPECT_FALSE(jobmon::UserCanRead(st, kNobody));  // a directory needs search too
  EXPECT_TRUE(jobmon::UserCanRead(st, JobUser{0, 0}));
}

TEST_F(UserFileTest, RootReadsOnlyWhatTheUserCould) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (setfsuid)";
  UserFileOptions as_nobody;
  as_nobody.user = kNobody;
  fs::permissions(dir_, fs::perms::all);  // the user may traverse the test dir
  std::string secret = Write("secret", "root only\n", 0600);
  auto refused = ReadUserFile(secret, 1024, as_nobody);
  ASSERT_FALSE(refused);
  std::string open = Write("open", "anyone\n", 0644);
  EXPECT_TRUE(ReadUserFile(open, 1024, as_nobody));
  // A directory the user cannot enter hides even a world-readable file.
  fs::create_directory(dir_ / "private");
  chmod((dir_ / "private").c_str(), 0700);
  std::string hidden = dir_ / "private" / "world";
  std::ofstream(hidden) << "x";
  chmod(hidden.c_str(), 0644);
  EXPECT_FALSE(ReadUserFile(hidden, 1024, as_nobody));
  EXPECT_TRUE(ReadUserFile(hidden, 1024));  // as root itself
}

}  // namespace

namespace jobmon {
namespace {

TEST(LookUpJobUser, ResolvesANameToItsUidAndPrimaryGid) {
  auto root = LookUpJobUser("root");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->uid, 0u);
  EXPECT_EQ(root->gid, 0u);
  EXPECT_FALSE(LookUpJobUser(""));
  EXPECT_FALSE(LookUpJobUser("no-such-user-jobmon-test"));
}

}  // namespace
}  // namespace jobmon
