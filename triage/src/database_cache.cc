#include "database_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "jobmon/common/unique_fd.h"
#include "jobmon/common/user_file.h"

namespace jobmon::triage {
namespace {

constexpr std::string_view kMagic = "jobmon-signatures-v1\n";
constexpr size_t kMaxFileBytes = size_t{256} << 20;

// The caller's, writable by nobody else.
bool Private(const struct stat& st) {
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The name only spreads the pattern sets over files; the header decides
// (LoadCachedDatabase). Not SHA-256: OpenSSL's digest set-up alone was 2 ms
// of every `jobmon triage` (perf). libstdc++'s string hash can change with
// its version: then the set is compiled once more.
std::string FileFor(const std::string& dir, const std::string& key) {
  return dir + "/signatures-" + fmt::format("{:016x}", std::hash<std::string>{}(key)) + ".hs";
}

bool DirIsPrivate(const std::string& dir) {
  struct stat st {};
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && Private(st);
}

// The oldest files beyond kKeptDatabases go (each pattern set has its own:
// a left-out pattern, a new release).
void Prune(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> listing(opendir(dir.c_str()), closedir);
  if (!listing) return;
  std::vector<std::pair<time_t, std::string>> files;
  while (dirent* entry = readdir(listing.get())) {
    std::string_view name = entry->d_name;
    if (!name.starts_with("signatures-") || !name.ends_with(".hs")) continue;
    struct stat st {};
    const std::string path = dir + "/" + std::string(name);
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.emplace_back(st.st_mtime, path);
    if (files.size() > 4 * kKeptDatabases) break;
  }
  if (files.size() <= kKeptDatabases) return;
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + kKeptDatabases < files.size(); ++i) unlink(files[i].second.c_str());
}

}  // namespace

std::string DatabaseCacheDir() {
  if (const char* dir = std::getenv("JOBMON_CACHE_DIR")) {
    if (std::string_view(dir) == "off" || dir[0] != '/') return "";
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') {
    return std::string(xdg) + "/jobmon";
  }
  if (const char* home = std::getenv("HOME"); home && home[0] == '/' && home[1] != '\0') {
    return std::string(home) + "/.cache/jobmon";
  }
  return "";
}

hs_database_t* LoadCachedDatabase(const std::string& dir, const std::string& key) {
  if (dir.empty() || !DirIsPrivate(dir)) return nullptr;
  // A regular file only, no symlink, never blocking (user_file.h), bounded.
  auto file = OpenUserFile(FileFor(dir, key));
  if (!file || !Private(file->st)) return nullptr;
  const size_t size = static_cast<size_t>(file->st.st_size);
  if (size > kMaxFileBytes) return nullptr;
  auto text = ReadFdRange(file->fd.get(), 0, size);
  if (!text || text->size() != size) return nullptr;
  // The header holds the pattern set whole: a file of another set (however
  // its name came to collide) is never used.
  const std::string header = std::string(kMagic) + std::to_string(key.size()) + "\n" + key;
  if (text->size() <= header.size() || text->compare(0, header.size(), header) != 0) return nullptr;
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(text->data() + header.size(), text->size() - header.size(), &db) !=
      HS_SUCCESS) {
    return nullptr;
  }
  return db;
}

void StoreCachedDatabase(const std::string& dir, const std::string& key, const hs_database_t* db) {
  if (dir.empty()) return;
  // The dir and its parent (~/.cache) as the user's umask would make them, the dir private.
  const std::string parent = dir.substr(0, dir.rfind('/'));
  if (!parent.empty()) mkdir(parent.c_str(), 0700);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return;
  if (!DirIsPrivate(dir)) return;
  char* bytes = nullptr;
  size_t length = 0;
  if (hs_serialize_database(db, &bytes, &length) != HS_SUCCESS) return;
  std::unique_ptr<char, void (*)(void*)> owned(bytes, std::free);
  const std::string header = std::string(kMagic) + std::to_string(key.size()) + "\n" + key;
  const std::string path = FileFor(dir, key);
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  UniqueFd fd(open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return;
  auto write_all = [&](const char* data, size_t n) {
    while (n > 0) {
      ssize_t w = write(fd.get(), data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  };
  if (!write_all(header.data(), header.size()) || !write_all(bytes, length) ||
      rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return;
  }
  Prune(dir);
}

}  // namespace jobmon::triage
