#include "spank/node_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "jobmon/common/atomic_file.h"
#include "jobmon/common/fs_identity.h"
#include "jobmon/common/text_lines.h"
#include "jobmon/common/unique_fd.h"

namespace jobmon::spank {
namespace fs = std::filesystem;

Expected<void> MakeDirectory(const std::string& path, mode_t mode) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Error{path + ": " + ec.message()};
  if (!fs::is_directory(path, ec)) return Error{path + ": not a directory"};
  chmod(path.c_str(), mode);
  // Writable by whoever will write into it (the test also catches a
  // read-only filesystem, where mkdir of an existing dir succeeds).
  if (access(path.c_str(), W_OK) != 0) return Error{path + ": " + std::strerror(errno)};
  return {};
}

namespace {
constexpr size_t kMaxRunFileBytes = 64 << 10;
constexpr size_t kMaxStatusBytes = 4096;
}  // namespace

std::string ReadText(const std::string& path) {
  auto text = ReadUserFile(path, kMaxRunFileBytes);
  return text ? *text : "";
}

std::optional<ProcessIdentity> ReadPidRecord(const std::string& path) {
  std::string text = ReadText(path);
  if (text.empty()) return std::nullopt;
  return ParsePidRecord(text);
}

void AppendLine(const std::string& path, const std::string& line) {
  // O_NONBLOCK: a FIFO without a reader fails at once instead of waiting.
  UniqueFd fd(open(path.c_str(),
                   O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                   0644));
  struct stat st {};
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::string text = line + "\n";
  (void)!write(fd.get(), text.data(), text.size());
}

Expected<void> MakeDirectoryFor(const std::string& path, uid_t uid, gid_t gid) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error{path + ": " + std::strerror(errno)};
  }
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() || fchown(fd.get(), uid, gid) != 0 || fchmod(fd.get(), 0700) != 0) {
    return Error{path + ": " + std::strerror(errno)};
  }
  return {};
}

std::string ReadExporterStatus(const lifecycle::RunDir& run) {
  // The prolog made the directory and gave it to the supervisor's user; it
  // cannot give it away again, so its owner is who writes the status.
  auto dir =
      OpenUserFile(run.supervisor_dir(), {.user = std::nullopt, .kind = UserFileKind::kDirectory});
  if (!dir) return "";
  JobUser owner{dir->st.st_uid, dir->st.st_gid};
  auto text = ReadUserFile(run.exporter_status(), kMaxStatusBytes,
                           {.user = owner, .kind = UserFileKind::kRegular});
  return text ? *text : "";
}

void RemoveRunDir(const lifecycle::RunDir& run) {
  std::error_code ec;
  const std::string sub = run.supervisor_dir();
  struct stat st {};
  if (lstat(sub.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    // Its contents are the user's: removed with their rights, so a symlink
    // swapped in mid-way leads nowhere they could not go themselves.
    {
      FsIdentity as_owner(st.st_uid, st.st_gid);
      for (const auto& entry : fs::directory_iterator(sub, ec)) fs::remove_all(entry.path(), ec);
    }
    rmdir(sub.c_str());
    if (lstat(sub.c_str(), &st) == 0) {
      // Refilled meanwhile: leave it (and the run dir around it) rather than
      // recurse into it as root; the rest is root's own.
      for (const auto& entry : fs::directory_iterator(run.dir, ec)) {
        if (entry.path() != sub) fs::remove_all(entry.path(), ec);
      }
      return;
    }
  }
  fs::remove_all(run.dir, ec);
}

const std::vector<std::string>& DaemonEnvironment() {
  static const std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                               "LANG=C.UTF-8"};
  return env;
}

gid_t JobGroup(const lifecycle::JobEnv& job) {
  if (job.gid != static_cast<gid_t>(-1)) return job.gid;
  passwd* pw = getpwuid(job.uid);
  return pw ? pw->pw_gid : 0;
}

std::string ReadFirstLine(const std::string& path) {
  return std::string(FirstLine(ReadText(path)));
}

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::string_view line : TextLines(text)) {
    if (!line.empty()) lines.emplace_back(line);
  }
  return lines;
}

std::string DegradedNotesPath(const DiagLayout& layout, const std::string& node) {
  return layout.logs_dir() + "/degraded-" + node + ".txt";
}

std::vector<NodeNote> ReadDegradedNotes(const DiagLayout& layout, const JobUser& user) {
  constexpr std::string_view kPrefix = "degraded-", kSuffix = ".txt";
  std::vector<NodeNote> notes;
  auto dir = OpenUserFile(layout.logs_dir(), {.user = user, .kind = UserFileKind::kDirectory});
  if (!dir) return notes;
  DIR* listing = fdopendir(dir.value().fd.get());
  if (listing == nullptr) return notes;
  dir.value().fd.release();  // closedir closes it
  std::vector<std::string> names;
  while (dirent* entry = readdir(listing)) {
    std::string_view name = entry->d_name;
    if (name.size() < kPrefix.size() + kSuffix.size() ||
        name.substr(0, kPrefix.size()) != kPrefix ||
        name.substr(name.size() - kSuffix.size()) != kSuffix) {
      continue;
    }
    names.emplace_back(name);
    if (names.size() >= kMaxNoteFiles) break;
  }
  closedir(listing);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string node = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    auto text = ReadUserFile(layout.logs_dir() + "/" + name, kMaxNoteFileBytes,
                             {.user = user, .kind = UserFileKind::kRegular});
    if (!text) {
      notes.push_back({node, "degraded note not read: " + text.error().message});
    } else {
      for (std::string& line : NonEmptyLines(*text)) {
        if (notes.size() >= kMaxNotes) break;
        if (line.size() > kMaxNoteLineBytes) line = line.substr(0, kMaxNoteLineBytes) + "...";
        notes.push_back({node, std::move(line)});
      }
    }
    if (notes.size() >= kMaxNotes) break;
  }
  return notes;
}

}  // namespace jobmon::spank
