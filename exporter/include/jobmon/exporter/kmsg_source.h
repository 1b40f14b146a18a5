#pragma once
// Where the dmesg collector reads the kernel log. Under
// kernel.dmesg_restrict=1 (the default on current distributions) opening
// /dev/kmsg needs CAP_SYSLOG, and the exporter runs as the job's or a
// service user. The kernel checks that permission at open only
// (linux kernel/printk/printk.c: devkmsg_open -> check_syslog_permissions;
// devkmsg_read checks nothing), so the root prolog opens it and the exporter
// inherits the open descriptor (--kmsg-fd N).

#include <memory>
#include <optional>
#include <string>

#include "jobmon/common/expected.h"
#include "jobmon/common/unique_fd.h"
#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

struct KmsgSource {
  enum class Kind { kInheritedFd, kDevice, kNone };
  Kind kind = Kind::kNone;
  std::string where;  // "fd 7 (/dev/kmsg)", "/dev/kmsg"; kNone: why not
  // Non-blocking, close-on-exec, at the end of the log (when seekable).
  UniqueFd fd;
};

// inherited_fd | dev_kmsg | none: the source label of hw_dmesg_source.
const char* ToString(KmsgSource::Kind kind);

// Takes over an inherited descriptor: it must be open and readable; it is
// made close-on-exec (nothing the exporter starts gets it), non-blocking,
// and positioned at the end (a previous job's errors are not this job's).
Expected<UniqueFd> AdoptInheritedFd(int fd);

// The inherited descriptor when given and usable, else <dev>/kmsg opened
// here, else kNone saying why. `notes` gets one line per refused way.
KmsgSource OpenKmsgSource(std::optional<int> inherited_fd, const std::string& dev,
                          std::vector<std::string>* notes);

// hw_dmesg_source{source, error} 1: which way the kernel log is read; with
// source="none" GPU error detection is off on this node and `error` says why.
Families KmsgSourceFamilies(const KmsgSource& source);

}  // namespace jobmon::exporter
