// The compiled signature database kept between runs (triage/src/database_cache.h).

#include "database_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jobmon/triage/log_scan.h"

namespace jobmon::triage {
namespace {

namespace fs = std::filesystem;

class DatabaseCache : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/jobmon-hs-cache-XXXXXX";
    root_ = mkdtemp(tmpl);
    dir_ = root_ / "cache";
    setenv("JOBMON_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("JOBMON_CACHE_DIR");
    fs::remove_all(root_);
  }
  std::vector<fs::path> Files() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_)) {
      for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    }
    return out;
  }
  // The primary facts a scan of a small log gives: the same with or without the cache.
  static std::string Scan(const LogScanner& scanner) {
    auto facts = scanner.ScanText(
        "step 1 loss 2.0\nstep 2 loss 1.9\ntorch.OutOfMemoryError: CUDA out of memory.\n");
    EXPECT_TRUE(facts.ok());
    if (!facts.ok()) return "";
    std::string out = std::to_string(facts->lines);
    for (const auto& [klass, hits] : facts->classes)
      out += " " + klass + ":" + std::to_string(hits.count);
    return out;
  }
  fs::path root_, dir_;
};

TEST_F(DatabaseCache, CompiledOnceThenLoadedGivingTheSameScan) {
  EXPECT_EQ(DatabaseCacheDir(), dir_.string());
  auto first = LogScanner::Create({});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(Files().size(), 1u) << "stored after the compile";
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const auto stored = fs::last_write_time(Files()[0]);
  auto second = LogScanner::Create({});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Files().size(), 1u);
  EXPECT_EQ(fs::last_write_time(Files()[0]), stored) << "loaded, not written again";
  EXPECT_EQ(Scan(**first), Scan(**second));
  EXPECT_NE(Scan(**second).find("oom-gpu:1"), std::string::npos) << Scan(**second);
  // Another pattern set (one left out) is a database of its own.
  ScanOptions fewer;
  fewer.patterns_left_out = {0};
  ASSERT_TRUE(LogScanner::Create(fewer).ok());
  EXPECT_EQ(Files().size(), 2u);
}

TEST_F(DatabaseCache, ADamagedForeignOrSharedCacheIsNeverUsed) {
  ASSERT_TRUE(LogScanner::Create({}).ok());
  const fs::path file = Files().at(0);
  // Truncated: compiled again, and replaced.
  fs::resize_file(file, fs::file_size(file) / 2);
  auto again = LogScanner::Create({});
  ASSERT_TRUE(again.ok());
  EXPECT_GT(fs::file_size(file), 1000u) << "replaced whole";
  // Another pattern set's file under this name: its header says so.
  EXPECT_EQ(LoadCachedDatabase(dir_.string(), "another pattern set"), nullptr);
  // A dir others may write: neither read nor written.
  fs::permissions(dir_, fs::perms::group_write, fs::perm_options::add);
  EXPECT_EQ(LoadCachedDatabase(dir_.string(), "x"), nullptr);
  fs::permissions(dir_, fs::perms::group_write, fs::perm_options::remove);
  // A symlink where the file goes is not followed.
  const fs::path target = root_ / "elsewhere.hs";
  fs::rename(file, target);
  fs::create_symlink(target, file);
  ASSERT_TRUE(LogScanner::Create({}).ok());
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file))) << "not read; replaced by a file";
  setenv("JOBMON_CACHE_DIR", "off", 1);
  EXPECT_EQ(DatabaseCacheDir(), "");
}

}  // namespace
}  // namespace jobmon::triage
