#pragma once
// Filesystem access as another user, for the code root runs in job context
// (the SPANK prolog/epilog) when it touches the job's diag dir: a directory
// the user controls, where a root write or chown could be turned against
// the system with a symlink. Under FsIdentity every permission check,
// symlink traversal and file ownership is the user's, with the user's
// primary group alone (root's supplementary groups are dropped for the
// guard's life). setfsuid/setfsgid and the raw setgroups system call change
// only the calling thread's credentials; the destructor restores them.

#include <sys/types.h>

#include <vector>

namespace jobmon {

class FsIdentity {
 public:
  // No-op unless the process runs as root and the target differs.
  FsIdentity(uid_t uid, gid_t gid);
  ~FsIdentity();
  FsIdentity(const FsIdentity&) = delete;
  FsIdentity& operator=(const FsIdentity&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  uid_t saved_uid_ = 0;
  gid_t saved_gid_ = 0;
  std::vector<gid_t> saved_groups_;
  bool groups_changed_ = false;
};

}  // namespace jobmon
