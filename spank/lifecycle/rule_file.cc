#include "lifecycle/rule_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "jobmon/common/fs_identity.h"
#include "jobmon/common/unique_fd.h"

namespace jobmon::lifecycle {

Expected<void> CheckRuleFile(const std::string& path, uid_t uid, gid_t gid) {
  FsIdentity as_user(uid, gid);
  // O_NONBLOCK: a FIFO put there must not hold the prolog.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    return Error{path + ": the user Prometheus runs as (uid " + std::to_string(uid) +
                 ") cannot read it: " + std::strerror(errno)};
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Error{path + ": " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return Error{path + ": not a regular file"};
  return {};
}

}  // namespace jobmon::lifecycle
