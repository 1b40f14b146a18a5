// training: TensorBoard event files, read incrementally.
#include "jobmon/exporter/training_collector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/user_file.h"
#include "jobmon/tfevents/event.h"
#include "jobmon/tfevents/record.h"

namespace jobmon::exporter {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxReadPerCollect = 64 << 20;  // catch up over several scrapes
constexpr uint64_t kMaxRecordBytes = 16 << 20;

std::optional<fs::path> NewestEventFile(const fs::path& dir,
                                        std::chrono::system_clock::time_point not_before) {
  std::error_code ec;
  std::optional<fs::path> best;
  timespec best_time{};
  const auto limit = std::chrono::system_clock::to_time_t(not_before);
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 4) it.disable_recursion_pending();
    const std::string name = it->path().filename().string();
    // lstat: a link is never taken for the file (its target could be a
    // file only the exporter's user, not the job's, may read).
    if (name.rfind("events.out.tfevents.", 0) != 0) continue;
    struct stat st {};
    if (lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_ctim.tv_sec < limit)
      continue;
    if (!best || st.st_ctim.tv_sec > best_time.tv_sec ||
        (st.st_ctim.tv_sec == best_time.tv_sec && st.st_ctim.tv_nsec > best_time.tv_nsec)) {
      best = it->path();
      best_time = st.st_ctim;
    }
  }
  return best;
}

}  // namespace

std::string TensorBoardMetricName(std::string_view tag) {
  std::string name = "tb_";
  for (char c : tag) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name.push_back(ok ? c : '_');
  }
  return name;
}

Expected<Families> TrainingCollector::Collect() {
  auto newest = NewestEventFile(dir_, not_before_);
  if (newest && newest->string() != file_) {  // a new run: start over on its file
    file_ = newest->string();
    offset_ = 0;
    pending_.clear();
    step_.reset();
    latest_.clear();
  }
  if (!file_.empty()) {
    // No link, no FIFO (a swap after the scan above would hold every
    // scrape on its open), never blocking: the job's user owns the dir.
    auto file = OpenUserFile(file_);
    if (!file) return file.error();
    const int fd = file->fd.get();
    const struct stat& st = file->st;
    if (static_cast<uint64_t>(st.st_size) < offset_) {  // truncated: read it again
      offset_ = 0;
      pending_.clear();
    }
    std::string chunk(
        std::min<uint64_t>(kMaxReadPerCollect, static_cast<uint64_t>(st.st_size) - offset_), '\0');
    ssize_t n =
        chunk.empty() ? 0 : pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(offset_));
    if (n < 0) return Error{file_ + ": " + std::strerror(errno)};
    chunk.resize(static_cast<size_t>(n));
    offset_ += static_cast<uint64_t>(n);
    pending_ += chunk;
    auto batch = tfevents::ParseRecords(pending_, kMaxRecordBytes);
    if (!batch) {
      // A corrupt file serves nothing rather than wrong values.
      std::string message = file_ + ": " + batch.error().message;
      pending_.clear();
      latest_.clear();
      step_.reset();
      return Error{message};
    }
    for (const std::string& payload : batch->payloads) {
      auto event = tfevents::DecodeEvent(payload);
      if (!event || !event->file_version.empty()) continue;
      if (event->scalars.empty()) continue;
      step_ = event->step;
      for (const auto& scalar : event->scalars)
        latest_[TensorBoardMetricName(scalar.tag)] = scalar.value;
    }
    pending_.erase(0, batch->consumed);
  }
  FamilyBuilder b;
  if (step_)
    b.Gauge(metric_names::kTbStep, "Current training step (TensorBoard)", {},
            static_cast<double>(*step_));
  for (const auto& [name, value] : latest_) b.Gauge(name, "Latest TensorBoard scalar", {}, value);
  return b.Take();
}

}  // namespace jobmon::exporter
