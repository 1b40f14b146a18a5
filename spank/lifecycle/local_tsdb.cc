#include "lifecycle/local_tsdb.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "jobmon/common/unique_fd.h"
#include "lifecycle/diag_paths.h"

namespace jobmon::lifecycle {
namespace {

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  for (size_t start = 0; start < path.size();) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

Error Errno(const std::string& what) { return Error{what + ": " + std::strerror(errno)}; }

// Removes everything in the directory `fd` (consumed).
Expected<void> EmptyDirectory(int fd, const std::string& shown) {
  DIR* listing = fdopendir(fd);
  if (listing == nullptr) {
    close(fd);
    return Errno(shown);
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  int dir = dirfd(listing);
  Expected<void> result;
  for (const std::string& name : names) {
    if (unlinkat(dir, name.c_str(), 0) == 0) continue;
    if (errno != EISDIR && errno != EPERM) {
      if (errno != ENOENT) result = Errno(shown + "/" + name);
      continue;
    }
    int child = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      result = Errno(shown + "/" + name);
      continue;
    }
    if (auto emptied = EmptyDirectory(child, shown + "/" + name); !emptied) result = emptied;
    if (unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0) result = Errno(shown + "/" + name);
  }
  closedir(listing);
  return result;
}

}  // namespace

Expected<std::string> TsdbDirFor(const PluginConfig& config, const DiagLayout& layout,
                                 const JobEnv& job) {
  auto expanded = slurm_pattern::ExpandLetters(
      config.tsdb_dir,
      {{'n', job.node}, {'j', std::to_string(job.job_id)}, {'u', job.user}, {'d', layout.dir}});
  if (!expanded) return Error{"tsdb_dir: " + expanded.error().message};
  std::string dir = *expanded;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir.front() != '/') return Error{"tsdb_dir '" + dir + "' is not absolute"};
  for (const std::string& part : Components(dir)) {
    if (part == "." || part == "..") return Error{"tsdb_dir '" + dir + "' has . or .."};
  }
  if (dir == "/") return Error{"tsdb_dir is /"};
  return dir;
}

bool IsInside(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

Expected<void> CheckTrustedParent(const std::string& path, uid_t owner, mode_t mode) {
  if (owner != 0) return Error{path + ": not owned by root"};
  if ((mode & (S_IWGRP | S_IWOTH)) != 0 && (mode & S_ISVTX) == 0) {
    return Error{path + ": writable by others"};
  }
  return {};
}

Expected<LocalTsdb> PrepareLocalTsdb(const std::string& path, uid_t uid, gid_t gid,
                                     uint64_t min_free_mb) {
  std::vector<std::string> parts = Components(path);
  if (parts.empty()) return Error{"tsdb_dir is /"};
  UniqueFd dir(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return Errno("/");
  std::string shown = "/", so_far;
  struct stat st {};
  // Every parent: checked, then the next opened below it, never through a
  // symlink, made 0755 by root when missing.
  for (size_t i = 0;; ++i) {
    if (fstat(dir.get(), &st) != 0) return Errno(shown);
    if (auto trusted = CheckTrustedParent(shown, st.st_uid, st.st_mode); !trusted) {
      return trusted.error();
    }
    if (i + 1 >= parts.size()) break;
    so_far += "/" + parts[i];
    if (mkdirat(dir.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) return Errno(so_far);
    UniqueFd next(
        openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return Errno(so_far);
    dir = std::move(next);
    shown = so_far;
  }
  LocalTsdb out{path, "", 0};
  struct statvfs vfs {};
  if (fstatvfs(dir.get(), &vfs) != 0) return Errno(shown);
  out.free_mb = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize >> 20;
  if (out.free_mb < min_free_mb) {
    return Error{shown + ": " + std::to_string(out.free_mb) +
                 " MiB free, below tsdb_min_free_mb=" + std::to_string(min_free_mb)};
  }
  const std::string& leaf = parts.back();
  if (mkdirat(dir.get(), leaf.c_str(), 0700) != 0) {
    if (errno != EEXIST) return Errno(path);
    // An earlier job with this id (Slurm's ids restart after a state reset)
    // left it: kept for whoever wants it, never mixed into this job's data.
    out.moved_aside = path + ".stale-" + std::to_string(time(nullptr));
    std::string aside = leaf + ".stale-" + std::to_string(time(nullptr));
    if (renameat(dir.get(), leaf.c_str(), dir.get(), aside.c_str()) != 0) return Errno(path);
    if (mkdirat(dir.get(), leaf.c_str(), 0700) != 0) return Errno(path);
  }
  UniqueFd made(openat(dir.get(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!made.valid()) return Errno(path);
  if (fchown(made.get(), uid, gid) != 0 || fchmod(made.get(), 0700) != 0) return Errno(path);
  return out;
}

void SweepEmptyTsdbDirs(const std::string& parent, const std::function<bool(uint32_t)>& is_live) {
  UniqueFd fd(open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return;
  DIR* listing = fdopendir(dup(fd.get()));
  if (listing == nullptr) return;
  std::vector<std::string> names;
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (!name.empty() && name.size() <= 10 &&
        name.find_first_not_of("0123456789") == std::string::npos) {
      names.push_back(name);
    }
  }
  closedir(listing);
  for (const std::string& name : names) {
    uint64_t id = std::stoull(name);
    // rmdir removes an empty directory only, and never a symlink's target.
    if (id <= UINT32_MAX && !is_live(static_cast<uint32_t>(id))) {
      (void)unlinkat(fd.get(), name.c_str(), AT_REMOVEDIR);
    }
  }
}

Expected<void> RemoveTreeNoFollow(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return Error{path + ": not an absolute path"};
  std::string parent = slash == 0 ? "/" : path.substr(0, slash), name = path.substr(slash + 1);
  UniqueFd up(open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!up.valid()) return Errno(parent);
  int fd = openat(up.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno(path);
  if (auto emptied = EmptyDirectory(fd, path); !emptied) return emptied;
  // The directory itself: its parent may be root's (the archiver empties
  // it; the epilog, as root, removes the empty directory).
  if (unlinkat(up.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != EACCES && errno != EPERM) {
    return Errno(path);
  }
  return {};
}

}  // namespace jobmon::lifecycle
