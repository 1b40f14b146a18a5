#include "unix_socket.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace jobmon::monitor::unix_socket {

Error Errno(const std::string& what) { return Error{what + ": " + std::strerror(errno)}; }

Expected<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return Error{path + ": not a usable socket path (1 to " +
                 std::to_string(sizeof(address.sun_path) - 1) + " bytes)"};
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

}  // namespace jobmon::monitor::unix_socket
