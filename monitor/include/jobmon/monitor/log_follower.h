#pragma once
// Follows a growing job log the way `tail -F` does, but restart-safe: the
// position (inode, offset) is plain data the daemon persists, so after a
// restart reading resumes where it stopped: no line is read twice and none
// is lost. Truncation (copytruncate) restarts at 0; a new inode at the path
// (rotation, or a requeued job's new log) is read from its start once the old
// file has been drained. The log belongs to the job's user: it is opened
// with OpenUserFile as that user (a FIFO, device or symlink is refused, never
// waited on or followed) and each read is bounded in time. Within a
// process-wide budget (KeepOpenAtMost) the log stays open between polls: a
// log that grew is read on with one pread (opening 10,000 logs as their
// users was most of the monitor's log following), its path looked up only
// at every kLookUpPathEvery-th such poll; one that did not grow is looked
// up at its path (an lstat), which is when a new file there is seen and
// opened as the user.

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/user_file.h"

namespace jobmon::monitor {

struct LogPosition {
  ino_t inode = 0;
  dev_t device = 0;
  off_t offset = 0;  // of the first byte not yet returned as part of a line
  auto operator<=>(const LogPosition&) const = default;
};

struct LogChunk {
  std::vector<std::string> lines;  // complete lines, without '\n' (and '\r')
  bool truncated = false;          // the file shrank: reading restarted at 0
  bool rotated = false;            // a new file at the path: reading restarted at 0
  bool missing = false;            // no file at the path (yet)
  // Read to the end of the file at the path: another poll now would find
  // nothing (a drain can stop here instead of polling once more).
  bool at_end = false;
};

class LogFollower {
 public:
  explicit LogFollower(std::string path, LogPosition start = {},
                       size_t max_bytes_per_poll = 4 << 20, std::optional<JobUser> user = {})
      : path_(std::move(path)), position_(start), max_bytes_(max_bytes_per_poll), user_(user) {}
  LogFollower(LogFollower&& other) noexcept;
  LogFollower& operator=(LogFollower&& other) noexcept;
  ~LogFollower() { Release(); }

  // At most `descriptors` logs kept open between polls in this process, all
  // followers together (0, the default: every poll opens its log).
  static void KeepOpenAtMost(size_t descriptors);
  static size_t KeptOpen();

  // Reads what was appended since the last poll, up to max_bytes_per_poll.
  // A partial last line stays unread until its newline arrives (or until it
  // exceeds max_line, when it is returned cut).
  Expected<LogChunk> Poll();

  const LogPosition& position() const { return position_; }
  const std::string& path() const { return path_; }
  // The job's user, as whom the log is read (nullopt: the caller's own view).
  void set_user(std::optional<JobUser> user) {
    user_ = user;
    Release();  // opened as the user it had
  }
  const std::optional<JobUser>& user() const { return user_; }

  static constexpr size_t kMaxLine = 1 << 20;
  // A kept log that keeps growing has its path looked up at every this
  // many polls that read it (LogFollower::Poll).
  static constexpr int kLookUpPathEvery = 4;

 private:
  // The log to read this poll: the kept one when it changed size, else
  // the path's file as it is now.
  Expected<UserFile*> Current(std::optional<UserFile>& fresh);
  // What the kept log holds past the offset, read with one pread; nullopt
  // when it holds nothing more (or more than one read takes).
  std::optional<std::string> ReadOnKept();
  // The path still names the kept file (one lstat, which reads nothing);
  // its status is then the kept file's.
  bool PathIsKept(struct stat& at) const;
  // The complete lines of what was read at the offset, which moves past them.
  LogChunk TakeLines(const std::string& buffer);
  void Keep(std::optional<UserFile>& fresh);
  void Release();

  std::string path_;
  LogPosition position_;
  size_t max_bytes_;
  std::optional<JobUser> user_;
  std::optional<UserFile> kept_;  // counted in the process-wide budget
  int grown_since_look_up_ = 0;   // polls of the kept log since its path was looked up
};

}  // namespace jobmon::monitor
