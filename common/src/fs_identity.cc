#include "jobmon/common/fs_identity.h"

#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace jobmon {
namespace {

// The raw system call changes the calling thread's groups only; glibc's
// setgroups() would change every thread's (it signals them all), and the
// daemon's other threads must keep theirs.
int SetThreadGroups(size_t count, const gid_t* groups) {
  return static_cast<int>(syscall(SYS_setgroups, count, groups));
}

}  // namespace

FsIdentity::FsIdentity(uid_t uid, gid_t gid) {
  if (geteuid() != 0 || (uid == 0 && gid == 0)) return;
  // Root's supplementary groups stay under setfsuid: a directory or file
  // open to one of them (group root, adm, ...) would be open to the user's
  // read too. The user's primary group alone, for the guard's life.
  const int count = getgroups(0, nullptr);
  if (count > 0) {
    saved_groups_.resize(static_cast<size_t>(count));
    if (getgroups(count, saved_groups_.data()) != count) saved_groups_.clear();
  }
  groups_changed_ = SetThreadGroups(1, &gid) == 0;
  // Group first: once the fsuid is not root, setfsgid would be refused.
  saved_gid_ = static_cast<gid_t>(setfsgid(gid));
  saved_uid_ = static_cast<uid_t>(setfsuid(uid));
  active_ = true;
}

FsIdentity::~FsIdentity() {
  if (!active_) return;
  setfsuid(saved_uid_);
  setfsgid(saved_gid_);
  if (groups_changed_) SetThreadGroups(saved_groups_.size(), saved_groups_.data());
}

}  // namespace jobmon
