#pragma once
// A listening TCP socket on 127.0.0.1 at a free port, for tests that play
// an HTTP server (or one that never answers) to the code under test.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace jobmon::test_support {

struct LoopbackListener {
  int fd = -1;  // -1: socket, bind or listen failed
  uint16_t port = 0;
  std::string Address() const { return "127.0.0.1:" + std::to_string(port); }
};

// `socket_flags`: e.g. SOCK_NONBLOCK, or'ed into SOCK_STREAM.
inline LoopbackListener ListenOnLoopback(int backlog, int socket_flags = 0) {
  LoopbackListener out;
  int fd = socket(AF_INET, SOCK_STREAM | socket_flags, 0);
  if (fd < 0) return out;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return out;
  }
  out.fd = fd;
  out.port = ntohs(address.sin_port);
  return out;
}

}  // namespace jobmon::test_support
