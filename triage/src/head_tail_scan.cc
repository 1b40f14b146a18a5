#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "jobmon/common/user_file.h"
#include "jobmon/triage/log_scan.h"

// The status fast path: the header from the file's head, the rest from its
// tail, without reading the middle.
namespace jobmon::triage {

namespace {

Expected<std::string> ReadRange(int fd, off_t offset, size_t length) {
  std::string out(length, '\0');
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, out.data() + got, length - got, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{std::string("read: ") + std::strerror(errno)};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace

Expected<ScanFacts> LogScanner::ScanHeadAndTail(const std::string& path, size_t head_bytes,
                                                size_t tail_bytes) const {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  auto facts = ScanHeadAndTail(fd, head_bytes, tail_bytes);
  close(fd);
  if (!facts) return Error{path + ": " + facts.error().message};
  return facts;
}

Expected<ScanFacts> LogScanner::ScanHeadAndTail(int fd, size_t head_bytes,
                                                size_t tail_bytes) const {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Error{"not a regular file"};
  auto size = static_cast<uint64_t>(st.st_size);
  if (size <= head_bytes + tail_bytes) return ScanFd(fd);  // the whole file is head and tail
  auto head = ReadRange(fd, 0, head_bytes);
  auto tail = ReadRange(fd, static_cast<off_t>(size - tail_bytes), tail_bytes);
  if (!head) return head.error();
  if (!tail) return tail.error();
  auto facts = MergeHeadAndTail(*head, *tail, size);
  if (!facts) return facts;
  if (!facts->exit_code && !facts->last_timestamp && size <= kWholeScanFallbackBytes) {
    // Without a summary or a timestamp near the end, a stall cannot be
    // measured from the tail alone: fall back to the whole file, when it is
    // small enough to read (a sparse terabyte is not).
    if (lseek(fd, 0, SEEK_SET) != 0) return Error{std::string("seek: ") + std::strerror(errno)};
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return ScanFd(fd);
  }
  return facts;
}

Expected<ScanFacts> LogScanner::ScanHeadAndTailBounded(int fd, uint64_t size, size_t head_bytes,
                                                       size_t tail_bytes) const {
  if (size <= head_bytes + tail_bytes) {
    auto whole = ReadFdRange(fd, 0, static_cast<size_t>(size));
    if (!whole) return whole.error();
    return ScanText(*whole);
  }
  auto head = ReadFdRange(fd, 0, head_bytes);
  if (!head) return head.error();
  auto tail = ReadFdRange(fd, static_cast<off_t>(size - tail_bytes), tail_bytes);
  if (!tail) return tail.error();
  return MergeHeadAndTail(*head, *tail, size);
}

Expected<ScanFacts> LogScanner::MergeHeadAndTail(const std::string& head_bytes,
                                                 const std::string& tail_bytes,
                                                 uint64_t size) const {
  const std::string* head = &head_bytes;
  const std::string* tail = &tail_bytes;
  // Whole lines only: cut the head after its last newline, the tail after its first.
  std::string_view head_text(*head);
  head_text = head_text.substr(0, head_text.rfind('\n') + 1);
  std::string_view tail_text(*tail);
  tail_text.remove_prefix(std::min(tail_text.size(), tail_text.find('\n') + 1));
  auto head_facts = ScanText(head_text);
  if (!head_facts) return head_facts.error();
  auto facts = ScanText(tail_text);
  if (!facts) return facts.error();
  ScanFacts& f = facts.value();
  const ScanFacts& h = head_facts.value();
  if (!f.job_id) f.job_id = h.job_id;
  if (!f.total_steps) f.total_steps = h.total_steps;
  f.checkpointing = f.checkpointing || h.checkpointing;
  if (!f.checkpoint_period) f.checkpoint_period = h.checkpoint_period;
  if (!f.heartbeat_timeout) f.heartbeat_timeout = h.heartbeat_timeout;
  if (!f.nnodes) f.nnodes = h.nnodes;
  if (!f.node_list) f.node_list = h.node_list;
  if (!f.restore_step) f.restore_step = h.restore_step;
  if (h.first_timestamp) f.first_timestamp = h.first_timestamp;
  if (!f.timestamp_year) f.timestamp_year = h.timestamp_year;
  if (!f.tunnel) f.tunnel = h.tunnel;
  for (const auto& [task, host] : h.task_hosts) f.task_hosts.emplace(task, host);
  f.head = h.head;
  f.bytes = size;
  f.lines = 0;
  return facts;
}

}  // namespace jobmon::triage
