#include "jobmon/common/close_fds.h"

#include <sys/resource.h>
#include <unistd.h>

namespace jobmon {

void CloseFdsFrom(int first, const int (&keep)[2]) {
  // close_range is one syscall; the loop covers kernels (and sandboxes) without it.
  bool ranges_ok = true;
  unsigned from = static_cast<unsigned>(first);
  for (int fd : keep) {
    if (fd < 0) continue;
    if (static_cast<unsigned>(fd) > from) ranges_ok &= close_range(from, fd - 1, 0) == 0;
    from = static_cast<unsigned>(fd) + 1;
  }
  if (ranges_ok && close_range(from, ~0U, 0) == 0) return;
  rlimit limit{};
  int max_fd = (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
                   ? static_cast<int>(limit.rlim_cur)
                   : 65536;
  for (int fd = first; fd < max_fd; ++fd) {
    if (fd != keep[0] && fd != keep[1]) close(fd);
  }
}

}  // namespace jobmon
