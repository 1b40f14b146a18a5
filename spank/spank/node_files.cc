#include "spank/node_files.h"

#include <fcntl.h>
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

}  // namespace jobmon::spank
