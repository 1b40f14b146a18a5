#include "jobmon/common/fs_identity.h"

#include <sys/fsuid.h>
#include <unistd.h>

namespace jobmon {

FsIdentity::FsIdentity(uid_t uid, gid_t gid) {
  if (geteuid() != 0 || (uid == 0 && gid == 0)) return;
  // Group first: once the fsuid is not root, setfsgid would be refused.
  saved_gid_ = static_cast<gid_t>(setfsgid(gid));
  saved_uid_ = static_cast<uid_t>(setfsuid(uid));
  active_ = true;
}

FsIdentity::~FsIdentity() {
  if (!active_) return;
  setfsuid(saved_uid_);
  setfsgid(saved_gid_);
}

}  // namespace jobmon
