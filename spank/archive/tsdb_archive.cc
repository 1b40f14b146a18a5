#include "archive/tsdb_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

namespace jobmon::archive {
namespace fs = std::filesystem;

namespace {

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

Error ArchiveError(struct archive* a, const std::string& what) {
  const char* text = archive_error_string(a);
  return Error{what + ": " + (text ? text : "libarchive error")};
}

void FsyncDirectory(const std::string& path) {
  int fd = open(fs::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

}  // namespace

Expected<ArchiveResult> ArchiveDirectory(const std::string& source_dir, const std::string& top_name,
                                         const std::string& archive_path, int zstd_level,
                                         const std::function<void(uint64_t, uint64_t)>& progress) {
  std::error_code ec;
  if (!fs::is_directory(source_dir, ec)) return Error{source_dir + ": not a directory"};
  // Sorted: the same TSDB always packs the same way.
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(source_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return Error{source_dir + ": " + ec.message()};
  std::sort(entries.begin(), entries.end());

  const std::string temp = archive_path + ".tmp." + std::to_string(getpid());
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{temp + ": " + std::strerror(errno)};
  auto fail = [&](Error error) {
    close(fd);
    unlink(temp.c_str());
    return error;
  };
  std::unique_ptr<struct archive, ArchiveDeleter> a(archive_write_new());
  if (archive_write_add_filter_zstd(a.get()) != ARCHIVE_OK ||
      archive_write_set_filter_option(a.get(), "zstd", "compression-level",
                                      std::to_string(zstd_level).c_str()) != ARCHIVE_OK ||
      archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK ||
      archive_write_open_fd(a.get(), fd) != ARCHIVE_OK) {
    return fail(ArchiveError(a.get(), temp));
  }
  ArchiveResult result;
  std::vector<char> buffer(1 << 20);
  std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
  for (const fs::path& path : entries) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      // Prometheus has exited; a file vanishing now is a real problem.
      return fail(Error{path.string() + ": " + std::strerror(errno)});
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) continue;
    archive_entry_clear(entry.get());
    std::string name = top_name + "/" + fs::relative(path, source_dir).string();
    archive_entry_set_pathname(entry.get(), name.c_str());
    archive_entry_copy_stat(entry.get(), &st);
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
      return fail(ArchiveError(a.get(), name));
    }
    if (!S_ISREG(st.st_mode)) continue;
    int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return fail(Error{path.string() + ": " + std::strerror(errno)});
    for (;;) {
      ssize_t n = read(in, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int saved = errno;
        close(in);
        return fail(Error{path.string() + ": " + std::strerror(saved)});
      }
      if (n == 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) != n) {
        close(in);
        return fail(ArchiveError(a.get(), name));
      }
      result.input_bytes += static_cast<uint64_t>(n);
    }
    close(in);
    ++result.files;
    if (progress) progress(result.files, result.input_bytes);
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return fail(ArchiveError(a.get(), temp));
  if (fsync(fd) != 0) return fail(Error{temp + ": fsync: " + std::strerror(errno)});
  close(fd);
  if (rename(temp.c_str(), archive_path.c_str()) != 0) {
    int saved = errno;
    unlink(temp.c_str());
    return Error{archive_path + ": rename: " + std::strerror(saved)};
  }
  FsyncDirectory(archive_path);
  struct stat st {};
  stat(archive_path.c_str(), &st);
  result.bytes = static_cast<uint64_t>(st.st_size);
  auto digest = Sha256OfFile(archive_path);
  if (!digest) return digest.error();
  result.sha256 = *digest;
  return result;
}

Expected<std::string> KeepEarlierArchive(const std::string& archive_path,
                                         const std::function<std::string(unsigned)>& earlier) {
  struct stat st {};
  if (lstat(archive_path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::string();
    return Error{"cannot stat " + archive_path + ": " + std::strerror(errno)};
  }
  if (!S_ISREG(st.st_mode)) return Error{archive_path + " is not a regular file; left alone"};
  for (unsigned run = 0; run < 1000; ++run) {
    const std::string to = earlier(run);
    // link() never replaces: a name already taken is an earlier run's.
    if (link(archive_path.c_str(), to.c_str()) == 0) {
      if (unlink(archive_path.c_str()) != 0) {
        return Error{"cannot remove " + archive_path + ": " + std::strerror(errno)};
      }
      return to;
    }
    if (errno != EEXIST) {
      return Error{"cannot keep " + archive_path + " as " + to + ": " + std::strerror(errno)};
    }
  }
  return Error{"1000 earlier archives beside " + archive_path + "; not keeping another"};
}

}  // namespace jobmon::archive
