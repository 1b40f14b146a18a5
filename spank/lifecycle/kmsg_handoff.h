#pragma once
// The kernel log for the exporter under kernel.dmesg_restrict=1: the
// exporter runs as the job's (or a service) user and may not open
// /dev/kmsg, so the root prolog opens it read-only and the exporter
// inherits the descriptor (DaemonSpec::inherit_fd, jobmon-exporter
// --kmsg-fd N). The kernel checks the permission at open only (linux
// kernel/printk/printk.c, devkmsg_open), so the descriptor is all the
// exporter gets: no capability, no root process left running for it.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/unique_fd.h"

namespace jobmon::lifecycle {

struct KmsgHandoff {
  // Read-only, non-blocking, close-on-exec (SpawnDaemon clears that in the
  // exporter alone), numbered >= 3. Invalid: nothing to hand over.
  UniqueFd fd;
  std::string note;  // why nothing is handed over when the exporter needs it
};

// Opens <dev>/kmsg unless <procfs>/sys/kernel/dmesg_restrict says "0" (then
// the exporter opens it itself and gets nothing it does not need).
KmsgHandoff OpenKmsgForExporter(const std::string& procfs = "/proc",
                                const std::string& dev = "/dev");

// Why the descriptor must not be handed to processes of `uid`/`gid` started
// from `programs` (the supervisor and the exporter); nullopt: it may. Each
// program must be one that user cannot read: the kernel makes a process
// started from such a binary non-dumpable from exec on (linux fs/exec.c,
// would_dump), so no process of the user can take the descriptor with
// pidfd_getfd or /proc/PID/fd in the moment between exec and the
// program's own prctl(PR_SET_DUMPABLE, 0), and a killed exporter gives no
// new moment on restart. The package installs both 0711. Root (uid 0)
// needs no check: it could open the kernel log itself.
std::optional<std::string> WhyNotHandOverKmsg(const std::vector<std::string>& programs, uid_t uid,
                                              gid_t gid);

}  // namespace jobmon::lifecycle
