#include "access/archive_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

namespace jobmon::diagnose {

namespace fs = std::filesystem;

namespace {

struct ReadDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

Error ArchiveError(struct archive* a, const std::string& what) {
  const char* text = archive_error_string(a);
  return Error{what + ": " + (text ? text : "libarchive error")};
}

// Creates the missing directories of `relative` under `dest`, 0700. They
// cannot be links: nothing but this function makes directories there.
Expected<void> MakeParents(const std::string& dest, const fs::path& relative) {
  fs::path at = dest;
  for (const auto& part : relative.parent_path()) {
    at /= part;
    if (mkdir(at.c_str(), 0700) != 0 && errno != EEXIST)
      return Error{at.string() + ": " + std::strerror(errno)};
    struct stat st;
    if (lstat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Error{at.string() + ": not a directory"};
  }
  return {};
}

}  // namespace

Expected<std::string> SafeEntryPath(const std::string& entry_path) {
  if (entry_path.empty()) return Error{"an entry without a name"};
  if (entry_path.front() == '/') return Error{"absolute path " + entry_path};
  fs::path path(entry_path);
  fs::path out;
  for (const auto& part : path) {
    std::string p = part.string();
    if (p == "..") return Error{"path with '..': " + entry_path};
    if (p.empty() || p == ".") continue;
    out /= part;
  }
  if (out.empty()) return std::string();  // "./": the top itself
  return out.string();
}

uint64_t UnpackBudget(const UnpackLimits& limits, uint64_t archive_bytes, uint64_t free_bytes) {
  uint64_t budget = limits.max_bytes;
  if (limits.max_ratio > 0) {
    const uint64_t by_ratio = archive_bytes > UINT64_MAX / limits.max_ratio
                                  ? UINT64_MAX
                                  : archive_bytes * limits.max_ratio;
    budget = std::min(budget, std::max(by_ratio, limits.ratio_floor_bytes));
  }
  const uint64_t usable =
      free_bytes > limits.reserve_free_bytes ? free_bytes - limits.reserve_free_bytes : 0;
  return std::min(budget, usable);
}

Expected<UnpackResult> UnpackArchive(const std::string& archive_path, const std::string& dest,
                                     const UnpackLimits& limits) {
  int fd = open(archive_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Error{archive_path + ": " + std::strerror(errno)};
  auto result = UnpackArchiveFd(fd, archive_path, dest, limits);
  close(fd);
  return result;
}

Expected<UnpackResult> UnpackArchiveFd(int archive_fd, const std::string& archive_path,
                                       const std::string& dest, const UnpackLimits& given) {
  struct stat archive_st {};
  if (fstat(archive_fd, &archive_st) != 0 || !S_ISREG(archive_st.st_mode))
    return Error{archive_path + ": not a regular file"};
  struct statvfs fs_st {};
  if (statvfs(dest.c_str(), &fs_st) != 0) return Error{dest + ": " + std::strerror(errno)};
  UnpackLimits limits = given;
  limits.max_bytes =
      UnpackBudget(given, static_cast<uint64_t>(archive_st.st_size),
                   static_cast<uint64_t>(fs_st.f_bavail) * static_cast<uint64_t>(fs_st.f_frsize));
  auto too_large = [&] {
    return Error{
        fmt::format("{}: refused: more than {} bytes unpacked (the cap: {}x the archive's {} "
                    "bytes, at most {}, "
                    "and the free space less {})",
                    archive_path, limits.max_bytes, given.max_ratio, archive_st.st_size,
                    given.max_bytes, given.reserve_free_bytes)};
  };
  std::unique_ptr<struct archive, ReadDeleter> reader(archive_read_new());
  archive_read_support_format_tar(reader.get());
  archive_read_support_filter_zstd(reader.get());
  archive_read_support_filter_none(reader.get());
  if (archive_read_open_fd(reader.get(), archive_fd, 1 << 20) != ARCHIVE_OK)
    return ArchiveError(reader.get(), archive_path);
  UnpackResult result;
  uint64_t entries = 0;
  std::vector<char> buffer(1 << 20);
  archive_entry* entry = nullptr;
  for (;;) {
    int rc = archive_read_next_header(reader.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return ArchiveError(reader.get(), archive_path);
    if (++entries > limits.max_entries)
      return Error{fmt::format("{}: more than {} entries", archive_path, limits.max_entries)};
    const char* raw_name = archive_entry_pathname(entry);
    auto relative = SafeEntryPath(raw_name ? raw_name : "");
    if (!relative) return Error{archive_path + ": refused: " + relative.error().message};
    const std::string name = raw_name;
    if (archive_entry_hardlink(entry) || archive_entry_symlink(entry))
      return Error{archive_path + ": refused: a link: " + name};
    const auto type = archive_entry_filetype(entry);
    if (relative->empty()) {
      if (type != AE_IFDIR) return Error{archive_path + ": refused: a file named like the top"};
      continue;
    }
    auto parents = MakeParents(dest, *relative);
    if (!parents) return parents.error();
    const fs::path target = fs::path(dest) / *relative;
    if (type == AE_IFDIR) {
      if (mkdir(target.c_str(), 0700) != 0 && errno != EEXIST)
        return Error{target.string() + ": " + std::strerror(errno)};
      struct stat st;
      if (lstat(target.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return Error{target.string() + ": not a directory"};
      continue;
    }
    if (type != AE_IFREG)
      return Error{archive_path + ": refused: not a regular file or directory: " + name};
    if (archive_entry_size_is_set(entry) &&
        static_cast<uint64_t>(archive_entry_size(entry)) > limits.max_bytes - result.bytes)
      return too_large();
    // O_EXCL: a name twice in the archive, or anything already there, fails.
    int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Error{target.string() + ": " + std::strerror(errno)};
    for (;;) {
      la_ssize_t n = archive_read_data(reader.get(), buffer.data(), buffer.size());
      if (n == 0) break;
      if (n < 0) {
        close(fd);
        return ArchiveError(reader.get(), archive_path);
      }
      result.bytes += static_cast<uint64_t>(n);
      if (result.bytes > limits.max_bytes) {
        close(fd);
        return too_large();
      }
      for (la_ssize_t done = 0; done < n;) {
        ssize_t w = write(fd, buffer.data() + done, static_cast<size_t>(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
          int saved = errno;
          close(fd);
          return Error{target.string() + ": " + std::strerror(saved)};
        }
        done += w;
      }
    }
    if (close(fd) != 0) return Error{target.string() + ": " + std::strerror(errno)};
    ++result.files;
  }
  return result;
}

}  // namespace jobmon::diagnose
