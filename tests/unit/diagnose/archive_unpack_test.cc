// Unpacking refuses what a hostile archive could hold (archive_unpack.h);
// the archives are written with libarchive here, as spank/archive does.
#include "access/archive_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <vector>

#include "archive/tsdb_archive.h"
#include "diagnose_test_support.h"

namespace jobmon::diagnose {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

struct Entry {
  std::string path;
  mode_t type = AE_IFREG;
  std::string data;
  std::string link;      // symlink target
  std::string hardlink;  // hard link target
};

Entry File(std::string path, std::string data) {
  Entry e;
  e.path = std::move(path);
  e.data = std::move(data);
  return e;
}
Entry Node(std::string path, mode_t type) {
  Entry e;
  e.path = std::move(path);
  e.type = type;
  return e;
}
Entry Symlink(std::string path, std::string target) {
  Entry e = Node(std::move(path), AE_IFLNK);
  e.link = std::move(target);
  return e;
}
Entry HardLink(std::string path, std::string target) {
  Entry e = Node(std::move(path), AE_IFREG);
  e.hardlink = std::move(target);
  return e;
}

void MakeArchive(const fs::path& path, const std::vector<Entry>& entries) {
  struct archive* a = archive_write_new();
  archive_write_add_filter_zstd(a);
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, 0644);
    if (!e.link.empty()) archive_entry_set_symlink(entry, e.link.c_str());
    if (!e.hardlink.empty()) archive_entry_set_hardlink(entry, e.hardlink.c_str());
    if (e.type == AE_IFCHR) archive_entry_set_rdev(entry, makedev(1, 3));
    archive_entry_set_size(entry, e.type == AE_IFREG && e.hardlink.empty()
                                      ? static_cast<la_int64_t>(e.data.size())
                                      : 0);
    archive_write_header(a, entry);
    if (!e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
}

TEST(ArchiveUnpack, UnpacksFilesAndDirectoriesPrivately) {
  TempDir dir;
  MakeArchive(
      dir.path / "a.tar.zst",
      {Node("prometheus/", AE_IFDIR), File("prometheus/01HZZZZZZZZZZZZZZZZZZZZZZA/meta.json", "{}"),
       File("./prometheus/wal/00000000", "wal data")});
  fs::create_directories(dir.path / "out");
  auto result = UnpackArchive((dir.path / "a.tar.zst").string(), (dir.path / "out").string());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->files, 2u);
  EXPECT_EQ(result->bytes, 10u);
  const fs::path wal = dir.path / "out" / "prometheus" / "wal" / "00000000";
  ASSERT_TRUE(fs::exists(wal));
  EXPECT_EQ(fs::status(wal).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(dir.path / "out" / "prometheus").permissions() & fs::perms::all,
            fs::perms::owner_all);
}

struct Refusal {
  const char* name;
  std::vector<Entry> entries;
  const char* reason;
};

TEST(ArchiveUnpack, RefusesHostileEntries) {
  const std::vector<Refusal> cases = {
      {"absolute", {File("/etc/evil", "x")}, "absolute"},
      {"dotdot", {File("prometheus/../../evil", "x")}, ".."},
      {"symlink", {Symlink("prometheus/link", "/etc")}, "link"},
      {"hardlink", {File("prometheus/a", "x"), HardLink("prometheus/b", "/etc/passwd")}, "link"},
      {"device", {Node("prometheus/null", AE_IFCHR)}, "not a regular file"},
      {"fifo", {Node("prometheus/fifo", AE_IFIFO)}, "not a regular file"},
      {"twice", {File("prometheus/a", "x"), File("prometheus/a", "y")}, "exists"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    MakeArchive(dir.path / "a.tar.zst", c.entries);
    fs::create_directories(dir.path / "out");
    auto result = UnpackArchive((dir.path / "a.tar.zst").string(), (dir.path / "out").string());
    ASSERT_FALSE(result) << c.name;
    EXPECT_NE(result.error().message.find(c.reason), std::string::npos)
        << c.name << ": " << result.error().message;
    EXPECT_FALSE(fs::exists(dir.path / "evil")) << c.name;
    EXPECT_FALSE(fs::exists("/etc/evil")) << c.name;
  }
}

TEST(ArchiveUnpack, CapsTotalSizeAndEntries) {
  TempDir dir;
  MakeArchive(dir.path / "a.tar.zst",
              {File("a", std::string(600, 'a')), File("b", std::string(600, 'b'))});
  fs::create_directories(dir.path / "out");
  UnpackLimits limits;
  limits.max_bytes = 1000;
  auto big = UnpackArchive((dir.path / "a.tar.zst").string(), (dir.path / "out").string(), limits);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("1000 bytes"), std::string::npos) << big.error().message;
  fs::remove_all(dir.path / "out");
  fs::create_directories(dir.path / "out");
  limits = UnpackLimits{};
  limits.max_entries = 1;
  auto many = UnpackArchive((dir.path / "a.tar.zst").string(), (dir.path / "out").string(), limits);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("entries"), std::string::npos);
}

// A 67 KB archive that unpacked to 2 GiB (64 GiB allowed) on the daemon's
// root filesystem: now bounded by a ratio to the archive's own size.
TEST(ArchiveUnpack, ADecompressionBombIsStoppedByTheRatioToTheArchivesSize) {
  TempDir dir;
  MakeArchive(dir.path / "bomb.tar.zst", {File("zeros", std::string(size_t{96} << 20, '\0'))});
  ASSERT_LT(fs::file_size(dir.path / "bomb.tar.zst"), 1u << 20);
  fs::create_directories(dir.path / "out");
  auto result = UnpackArchive((dir.path / "bomb.tar.zst").string(), (dir.path / "out").string());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("refused"), std::string::npos) << result.error().message;
}

TEST(ArchiveUnpack, TheBudgetIsTheRatioTheCapAndTheFreeSpaceWhicheverIsLeast) {
  UnpackLimits limits;  // 50x, floor 64 MiB, cap 64 GiB, 1 GiB kept free
  const uint64_t mib = 1 << 20, gib = uint64_t{1} << 30;
  EXPECT_EQ(UnpackBudget(limits, 67'000, 100 * gib), 64 * mib);        // the floor
  EXPECT_EQ(UnpackBudget(limits, 10 * gib, 1000 * gib), 64 * gib);     // the cap
  EXPECT_EQ(UnpackBudget(limits, 100 * mib, 1000 * gib), 5000 * mib);  // the ratio
  EXPECT_EQ(UnpackBudget(limits, 100 * mib, 3 * gib), 2 * gib);        // the free space
  EXPECT_EQ(UnpackBudget(limits, 100 * mib, gib / 2), 0u);             // a full disk
}

// What was hashed is what is unpacked: the descriptor, not the path, which
// its user may swap between the two.
TEST(ArchiveUnpack, UnpacksTheOpenArchiveEvenWhenItsPathIsSwapped) {
  TempDir dir;
  const fs::path path = dir.path / "tsdb.tar.zst";
  MakeArchive(path, {File("checked", "the archive that was checked")});
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  fs::remove(path);
  MakeArchive(path, {File("swapped", "another")});
  fs::create_directories(dir.path / "out");
  auto result = UnpackArchiveFd(fd, path.string(), (dir.path / "out").string());
  close(fd);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(fs::exists(dir.path / "out" / "checked"));
  EXPECT_FALSE(fs::exists(dir.path / "out" / "swapped"));
}

TEST(ArchiveUnpack, NotAnArchive) {
  TempDir dir;
  testing::Write(dir.path / "a.tar.zst", "plain text, not zstd or tar");
  auto result = UnpackArchive((dir.path / "a.tar.zst").string(), dir.path.string());
  EXPECT_FALSE(result);
}

TEST(ArchiveUnpack, WhatTheArchiverPacks) {
  TempDir dir;
  const fs::path tsdb = dir.path / "tsdb";
  testing::FakeBlock(tsdb, "01HZZZZZZZZZZZZZZZZZZZZZZA", 0, 1000);
  testing::Write(tsdb / "wal" / "00000003", std::string(100000, 'w'));
  const fs::path archive = dir.path / "tsdb.tar.zst";
  auto packed = archive::ArchiveDirectory(tsdb.string(), "prometheus", archive.string(), 3);
  ASSERT_TRUE(packed) << packed.error().message;
  fs::create_directories(dir.path / "out");
  auto result = UnpackArchive(archive.string(), (dir.path / "out").string());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->files, packed->files);
  EXPECT_EQ(result->bytes, packed->input_bytes);
  EXPECT_EQ(fs::file_size(dir.path / "out" / "prometheus" / "wal" / "00000003"), 100000u);
}

TEST(ArchiveUnpack, SafeEntryPath) {
  EXPECT_EQ(SafeEntryPath("./a/b").value(), "a/b");
  EXPECT_EQ(SafeEntryPath("a//b/./c").value(), "a/b/c");
  EXPECT_EQ(SafeEntryPath("./").value(), "");
  EXPECT_FALSE(SafeEntryPath("/a"));
  EXPECT_FALSE(SafeEntryPath("a/../b"));
  EXPECT_FALSE(SafeEntryPath(""));
}

}  // namespace
}  // namespace jobmon::diagnose
