#include "jobmon/monitor/log_follower.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace jobmon::monitor {
namespace {

std::atomic<size_t> keep_open_limit{0};
std::atomic<size_t> kept_open{0};

}  // namespace

void LogFollower::KeepOpenAtMost(size_t descriptors) { keep_open_limit = descriptors; }
size_t LogFollower::KeptOpen() { return kept_open; }

LogFollower::LogFollower(LogFollower&& other) noexcept
    : path_(std::move(other.path_)),
      position_(other.position_),
      max_bytes_(other.max_bytes_),
      user_(other.user_),
      kept_(std::exchange(other.kept_, std::nullopt)),
      grown_since_look_up_(other.grown_since_look_up_) {}

LogFollower& LogFollower::operator=(LogFollower&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::move(other.path_);
    position_ = other.position_;
    max_bytes_ = other.max_bytes_;
    user_ = other.user_;
    kept_ = std::exchange(other.kept_, std::nullopt);
    grown_since_look_up_ = other.grown_since_look_up_;
  }
  return *this;
}

void LogFollower::Release() {
  if (!kept_) return;
  kept_.reset();
  --kept_open;
}

void LogFollower::Keep(std::optional<UserFile>& fresh) {
  if (!fresh) return;
  if (!kept_) {
    // Within the budget, else this poll's descriptor closes with it.
    size_t now = kept_open;
    do {
      if (now >= keep_open_limit) return;
    } while (!kept_open.compare_exchange_weak(now, now + 1));
  }
  kept_ = std::move(fresh);
}

bool LogFollower::PathIsKept(struct stat& at) const {
  return lstat(path_.c_str(), &at) == 0 && at.st_ino == kept_->st.st_ino &&
         at.st_dev == kept_->st.st_dev;
}

Expected<UserFile*> LogFollower::Current(std::optional<UserFile>& fresh) {
  if (kept_) {
    // The path still names the kept file: its lstat is the file's status
    // (size included), so no fstat. Another file at the path (a link put
    // there is another file, which the open below refuses): the kept one
    // is read to its end first, then the path's file is opened as the user.
    struct stat st {};
    if (PathIsKept(st) || (fstat(kept_->fd.get(), &st) == 0 && st.st_size != position_.offset)) {
      kept_->st = st;
      return &*kept_;
    }
  }
  auto file = OpenUserFile(path_, {.user = user_});
  if (!file) {
    Release();
    return file.error();
  }
  fresh = std::move(file.value());
  return &*fresh;
}

std::optional<std::string> LogFollower::ReadOnKept() {
  char head[64 << 10];
  const size_t want = std::min(sizeof head, max_bytes_);
  ssize_t n = 0;
  do {
    n = pread(kept_->fd.get(), head, want, position_.offset);
  } while (n < 0 && errno == EINTR);
  if (n <= 0 || static_cast<size_t>(n) == want) return std::nullopt;
  return std::string(head, static_cast<size_t>(n));
}

Expected<LogChunk> LogFollower::Poll() {
  // A kept log that grew is read on with one pread: at 10,000 jobs an
  // fstat and an lstat of each log at each poll were a sixth of the
  // monitor's store-mode cycle (tests/bench/monitor_bench.py, perf). The
  // read came short: the file's end, so a drain stops there. Its path is
  // looked up (an lstat) at every kLookUpPathEvery-th such poll: another
  // file there (a requeue's log, or a FIFO or link put in its place by the
  // job's user, which the open refuses) and the drain polls on, so that
  // once this file is read to its end Current() turns to the path's file.
  // Nothing new: Current() tells unchanged, truncated and replaced apart.
  if (kept_) {
    if (auto grown = ReadOnKept()) {
      LogChunk chunk = TakeLines(*grown);
      chunk.at_end = true;
      if (++grown_since_look_up_ >= kLookUpPathEvery) {
        grown_since_look_up_ = 0;
        struct stat at {};
        chunk.at_end = PathIsKept(at);
      }
      return chunk;
    }
  }
  LogChunk chunk;
  std::optional<UserFile> fresh;
  auto current = Current(fresh);
  if (!current) {
    // OpenUserFile keeps strerror's text: a log not written yet is no error.
    if (current.error().message == path_ + ": " + std::strerror(ENOENT)) {
      chunk.missing = true;
      return chunk;
    }
    return current.error();
  }
  const UserFile* file = *current;
  const struct stat& st = file->st;
  if (position_.inode == 0) {
    position_.inode = st.st_ino;
    position_.device = st.st_dev;
  } else if (position_.inode != st.st_ino || position_.device != st.st_dev) {
    // The old file's unread tail (if any) is gone with it; the new one is
    // read from its start.
    chunk.rotated = true;
    position_ = {st.st_ino, st.st_dev, 0};
  }
  if (st.st_size < position_.offset) {
    chunk.truncated = true;
    position_.offset = 0;
  }
  const off_t available = st.st_size - position_.offset;
  const size_t want =
      static_cast<size_t>(std::min<off_t>(available, static_cast<off_t>(max_bytes_)));
  auto read = ReadFdRange(file->fd.get(), position_.offset, want);
  if (!read) return Error{path_ + ": " + read.error().message};
  LogChunk lines = TakeLines(*read);
  lines.truncated = chunk.truncated;
  lines.rotated = chunk.rotated;
  lines.at_end = static_cast<off_t>(want) == available && read->size() == want;
  Keep(fresh);
  return lines;
}

LogChunk LogFollower::TakeLines(const std::string& buffer) {
  LogChunk chunk;
  size_t start = 0;
  for (;;) {
    size_t newline = buffer.find('\n', start);
    if (newline == std::string::npos) break;
    size_t end = newline;
    if (end > start && buffer[end - 1] == '\r') --end;
    chunk.lines.emplace_back(buffer, start, end - start);
    start = newline + 1;
  }
  // A line longer than kMaxLine without a newline: return it cut, so one
  // runaway line cannot stall following forever.
  if (start == 0 && buffer.size() >= kMaxLine) {
    chunk.lines.emplace_back(buffer, 0, kMaxLine);
    start = kMaxLine;
  }
  position_.offset += static_cast<off_t>(start);
  return chunk;
}

}  // namespace jobmon::monitor
