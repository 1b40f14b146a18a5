#include "jobmon/common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace jobmon {
namespace {

Error Fail(const std::string& what, const std::string& path) {
  return Error{what + " " + path + ": " + std::strerror(errno)};
}

}  // namespace

Expected<void> WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string temp_template = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> temp_path(temp_template.begin(), temp_template.end());
  temp_path.push_back('\0');
  int fd = mkostemp(temp_path.data(), O_CLOEXEC);
  if (fd < 0) return Fail("cannot create a temp file in", dir.string());
  std::string temp(temp_path.data());
  auto abandon = [&](Error error) {
    close(fd);
    unlink(temp.c_str());
    return error;
  };
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return abandon(Fail("write", temp));
    written += static_cast<size_t>(n);
  }
  if (fchmod(fd, mode) != 0) return abandon(Fail("chmod", temp));
  if (fsync(fd) != 0) return abandon(Fail("fsync", temp));
  if (close(fd) != 0) {
    unlink(temp.c_str());
    return Fail("close", temp);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    Error error = Fail("rename to", path);
    unlink(temp.c_str());
    return error;
  }
  // The rename is durable only once the directory entry is on disk.
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return {};
}

}  // namespace jobmon
