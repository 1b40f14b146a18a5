#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobmon/alerts/notifier.h"

namespace jobmon::alerts {
namespace {

class JsonLinesNotifier : public Notifier {
 public:
  explicit JsonLinesNotifier(std::string path) : path_(std::move(path)) {}
  std::string name() const override { return "file:" + path_; }

  Expected<void> Notify(const Alert& alert) override {
    // error_handler::replace: a summary cut mid-UTF-8 must not abort the alert.
    std::string line =
        ToJson(alert).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const bool to_stdout = path_ == "-";
    int fd = to_stdout ? STDOUT_FILENO
                       : open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0) return Error{path_ + ": " + std::strerror(errno)};
    // One write of the whole line: O_APPEND keeps concurrent writers' lines whole.
    ssize_t written = write(fd, line.data(), line.size());
    int saved = errno;
    if (!to_stdout) {
      fsync(fd);
      close(fd);
    }
    if (written != static_cast<ssize_t>(line.size())) {
      return Error{path_ + ": short write: " + std::strerror(saved)};
    }
    return {};
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<Notifier> MakeJsonLinesNotifier(const std::string& path) {
  return std::make_unique<JsonLinesNotifier>(path);
}

}  // namespace jobmon::alerts
