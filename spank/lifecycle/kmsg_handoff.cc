#include "lifecycle/kmsg_handoff.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "jobmon/common/user_file.h"

namespace jobmon::lifecycle {

KmsgHandoff OpenKmsgForExporter(const std::string& procfs, const std::string& dev) {
  KmsgHandoff out;
  std::string restrict_value;
  if (std::ifstream in(procfs + "/sys/kernel/dmesg_restrict"); in) in >> restrict_value;
  // Unreadable counts as restricted: handing over is the safe way to count Xids.
  if (restrict_value == "0") return out;
  std::string path = dev + "/kmsg";
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    out.note = "kernel log not handed to the exporter (GPU error detection is off): " + path +
               ": " + std::strerror(errno);
    return out;
  }
  // 0-2 become the daemon's stdin, stdout and stderr.
  if (fd.get() < 3) {
    UniqueFd moved(fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
    if (!moved.valid()) {
      out.note = "kernel log not handed to the exporter: dup: " + std::string(std::strerror(errno));
      return out;
    }
    fd = std::move(moved);
  }
  out.fd = std::move(fd);
  return out;
}

std::optional<std::string> WhyNotHandOverKmsg(const std::vector<std::string>& programs, uid_t uid,
                                              gid_t gid) {
  if (uid == 0) return std::nullopt;
  for (const std::string& program : programs) {
    struct stat st {};
    if (stat(program.c_str(), &st) != 0) return program + ": " + std::strerror(errno);
    if (UserCanRead(st, JobUser{uid, gid}) || st.st_uid == uid)
      return "kernel log not handed to the exporter (GPU error detection is off): " + program +
             " is readable by uid " + std::to_string(uid) +
             ", so a process of that user could take the descriptor before the exporter hides "
             "it; install it mode 0711 owned by root, as the package does";
  }
  return std::nullopt;
}

}  // namespace jobmon::lifecycle
