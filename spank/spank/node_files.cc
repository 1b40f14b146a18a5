#include "spank/node_files.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobmon/common/atomic_file.h"

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

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<ProcessIdentity> ReadPidRecord(const std::string& path) {
  std::string text = ReadText(path);
  if (text.empty()) return std::nullopt;
  return ParsePidRecord(text);
}

void AppendLine(const std::string& path, const std::string& line) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string text = line + "\n";
  (void)!write(fd, text.data(), text.size());
  close(fd);
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
  std::string text = ReadText(path);
  return text.substr(0, text.find('\n'));
}

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

std::string DegradedNotesPath(const lifecycle::DiagLayout& layout, const std::string& node) {
  return layout.logs_dir() + "/degraded-" + node + ".txt";
}

std::vector<NodeNote> ReadDegradedNotes(const lifecycle::DiagLayout& layout) {
  constexpr std::string_view kPrefix = "degraded-", kSuffix = ".txt";
  std::vector<NodeNote> notes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(layout.logs_dir(), ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || name.size() < kPrefix.size() + kSuffix.size()) continue;
    std::string node = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    for (std::string& line : NonEmptyLines(ReadText(entry.path().string()))) {
      notes.push_back({node, std::move(line)});
    }
  }
  return notes;
}

}  // namespace jobmon::spank
