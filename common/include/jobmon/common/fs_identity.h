#pragma once
// Filesystem access as another user, for the code root runs in job context
// (the SPANK prolog/epilog) when it touches the job's diag dir: a directory
// the user controls, where a root write or chown could be turned against
// the system with a symlink. Under FsIdentity every permission check,
// symlink traversal and file ownership is the user's. setfsuid/setfsgid
// change only the calling thread's filesystem identity; the destructor
// restores it.

#include <sys/types.h>

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
};

}  // namespace jobmon
