// The kernel log's descriptor: inherited from the root prolog or opened here.
#include "jobmon/exporter/kmsg_source.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jobmon::exporter {

namespace {

std::string Describe(int fd) {
  char target[PATH_MAX];
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
  std::string out = "fd " + std::to_string(fd);
  if (n > 0) out += " (" + std::string(target, static_cast<size_t>(n)) + ")";
  return out;
}

}  // namespace

const char* ToString(KmsgSource::Kind kind) {
  switch (kind) {
    case KmsgSource::Kind::kInheritedFd:
      return "inherited_fd";
    case KmsgSource::Kind::kDevice:
      return "dev_kmsg";
    case KmsgSource::Kind::kNone:
      return "none";
  }
  return "none";
}

Expected<UniqueFd> AdoptInheritedFd(int fd) {
  std::string name = "--kmsg-fd " + std::to_string(fd);
  if (fd < 3) return Error{name + ": not a descriptor above stderr"};
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return Error{name + ": " + std::strerror(errno) + " (not inherited?)"};
  if ((flags & O_ACCMODE) == O_WRONLY) return Error{name + ": not open for reading"};
  UniqueFd owned(fd);
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return Error{name + ": " + std::strerror(errno)};
  }
  // /dev/kmsg and regular files: from now on only. A pipe has no position
  // (ESPIPE): what its writer sends is new by definition.
  lseek(fd, 0, SEEK_END);
  return owned;
}

KmsgSource OpenKmsgSource(std::optional<int> inherited_fd, const std::string& dev,
                          std::vector<std::string>* notes) {
  KmsgSource source;
  if (inherited_fd) {
    auto adopted = AdoptInheritedFd(*inherited_fd);
    if (adopted) {
      source.kind = KmsgSource::Kind::kInheritedFd;
      source.where = Describe(*inherited_fd);
      source.fd = std::move(adopted).value();
      return source;
    }
    notes->push_back(adopted.error().message + "; trying " + dev + "/kmsg");
  }
  std::string path = dev + "/kmsg";
  source.fd.reset(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!source.fd.valid()) {
    int saved = errno;
    source.where = path + ": " + std::strerror(saved);
    if (saved == EPERM || saved == EACCES) {
      source.where += " (kernel.dmesg_restrict=1: the prolog passes an open one, --kmsg-fd)";
    }
    notes->push_back(source.where);
    return source;
  }
  lseek(source.fd.get(), 0, SEEK_END);
  source.kind = KmsgSource::Kind::kDevice;
  source.where = path;
  return source;
}

Families KmsgSourceFamilies(const KmsgSource& source) {
  FamilyBuilder families;
  Labels labels = {{"source", ToString(source.kind)}};
  if (source.kind == KmsgSource::Kind::kNone) labels["error"] = source.where;
  families.Gauge("hw_dmesg_source",
                 "How the exporter reads the kernel log (inherited_fd: opened by the root "
                 "prolog; none: GPU error detection is off, error says why)",
                 labels, 1);
  return families.Take();
}

}  // namespace jobmon::exporter
