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

// A request's head (up to its blank line) read from `client`.
inline std::string ReadRequestHead(int client) {
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = read(client, buffer, sizeof buffer);
    if (n <= 0) break;
    request.append(buffer, static_cast<size_t>(n));
  }
  return request;
}

// A 200 answer with `body` sent to `client`, the connection then closed by the server.
inline void SendOk(int client, const std::string& body,
                   const std::string& content_type = "application/json") {
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Type: " + content_type +
                               "\r\nContent-Length: " + std::to_string(body.size()) +
                               "\r\nConnection: close\r\n\r\n" + body;
  for (size_t sent = 0; sent < response.size();) {
    const ssize_t n = send(client, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace jobmon::test_support
