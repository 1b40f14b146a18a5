#pragma once
// The one way to open a file that a job's user controls (the job's stdout,
// everything in its diag dir) from code with more privilege than that user:
// the SPANK prolog/epilog (root) and slurm_job_monitor (root or a service
// user). The user can replace any such path with a symlink to a file only
// root may read, a FIFO (open and read block forever), or a device such as
// /dev/zero (endless data). Therefore:
//  - the path is first opened O_PATH|O_NOFOLLOW and fstat'ed: only a regular
//    file (or a directory where one is expected) is ever opened for reading,
//    so no FIFO wait and no device open side effect can happen; the real open
//    goes through /proc/self/fd/N (the same inode), O_NONBLOCK|O_CLOEXEC;
//  - with `user` set and the caller root, the open runs under the user's
//    filesystem identity (FsIdentity): permissions and directory traversal
//    are the user's;
//  - with `user` set, whatever the caller's privilege, the file must also be
//    readable by that user from its mode bits (owner, the user's primary
//    group, or world). This covers root's supplementary groups, which
//    setfsuid keeps, and a daemon running as a service user, which cannot
//    impersonate anyone;
//  - reads are capped in size and in time.

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "jobmon/common/expected.h"
#include "jobmon/common/unique_fd.h"

namespace jobmon {

// The job's user, on whose behalf a file is read.
struct JobUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

// The uid and primary gid of a user name (a job Slurm no longer lists, known
// by the name in a record); nullopt when the name does not resolve here.
std::optional<JobUser> LookUpJobUser(const std::string& name);

enum class UserFileKind { kRegular, kDirectory };

struct UserFileOptions {
  std::optional<JobUser> user;  // nullopt: type and size checks only
  UserFileKind kind = UserFileKind::kRegular;
};

struct UserFile {
  UniqueFd fd;
  struct stat st {};
};

// Opens `path` for reading as described above. The error names the path
// and the reason (symlink, FIFO, device, not readable by the user, ...).
Expected<UserFile> OpenUserFile(const std::string& path, const UserFileOptions& options = {});

// True when `st` grants `user` read access by its mode bits (and search
// access for a directory).
bool UserCanRead(const struct stat& st, const JobUser& user);

inline constexpr std::chrono::milliseconds kUserReadDeadline{2000};

// Reads [offset, offset + length) of an open file, stopping early at end of
// file; an error once `deadline` has passed (a file on a stuck filesystem).
Expected<std::string> ReadFdRange(int fd, off_t offset, size_t length,
                                  std::chrono::milliseconds deadline = kUserReadDeadline);

// Opens and reads a whole small file (manifest, targets, notes); a file over
// `max_bytes` is an error, not a truncated read.
Expected<std::string> ReadUserFile(const std::string& path, size_t max_bytes,
                                   const UserFileOptions& options = {},
                                   std::chrono::milliseconds deadline = kUserReadDeadline);

// A regular file named by whoever runs this, opened for reading as in
// ReadFilePrefix below (symlinks followed with the caller's rights, never a
// device or FIFO opened, O_NONBLOCK).
Expected<UserFile> OpenCallerFile(const std::string& path);

// The first `max_bytes` of a file named by whoever runs this (a log given
// on the command line may be a symlink: it is read with the caller's own
// rights), never blocking on a FIFO and never opening a device: a regular
// file only, O_NONBLOCK, bounded in size and time. `cut` says whether the
// file held more.
struct FilePrefix {
  std::string text;
  bool cut = false;
};
Expected<FilePrefix> ReadFilePrefix(const std::string& path, size_t max_bytes,
                                    std::chrono::milliseconds deadline = kUserReadDeadline);

}  // namespace jobmon
