#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobmon/alerts/receiver.h"

namespace jobmon::alerts {
namespace {

class FileReceiver : public Receiver {
 public:
  explicit FileReceiver(std::string path) : path_(std::move(path)) {}
  std::string name() const override { return path_ == "-" ? "stdout" : "file:" + path_; }
  std::string kind() const override { return "file"; }

  Delivery Deliver(const Alert& alert, const std::string& idempotency_key) override {
    nlohmann::json json = ToJson(alert);
    json["idempotency_key"] = idempotency_key;
    // error_handler::replace: a summary cut mid-UTF-8 must not abort the alert.
    std::string line = json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const bool to_stdout = path_ == "-";
    int fd = to_stdout ? STDOUT_FILENO
                       : open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    Delivery d;
    if (fd < 0) {
      d.error = path_ + ": " + std::strerror(errno);
      return d;
    }
    // One write of the whole line: O_APPEND keeps concurrent writers' lines whole.
    ssize_t written = write(fd, line.data(), line.size());
    int saved = errno;
    if (!to_stdout) {
      fsync(fd);
      close(fd);
    }
    d.ok = written == static_cast<ssize_t>(line.size());
    if (!d.ok) d.error = path_ + ": short write: " + std::strerror(saved);
    return d;
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<Receiver> MakeFileReceiver(const std::string& path) {
  return std::make_unique<FileReceiver>(path);
}

}  // namespace jobmon::alerts
