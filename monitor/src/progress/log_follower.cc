#include "jobmon/monitor/log_follower.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace jobmon::monitor {

Expected<LogChunk> LogFollower::Poll() {
  LogChunk chunk;
  auto file = OpenUserFile(path_, {.user = user_});
  if (!file) {
    // OpenUserFile keeps strerror's text: a log not written yet is no error.
    if (file.error().message == path_ + ": " + std::strerror(ENOENT)) {
      chunk.missing = true;
      return chunk;
    }
    return file.error();
  }
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
  const std::string& buffer = *read;
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
