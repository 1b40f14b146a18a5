// The port scan skips every port something listens on or holds
// (port_scan.h), checked with sockets this test opens.
#include "access/port_scan.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace jobmon::diagnose {
namespace {

// A loopback socket on a kernel-chosen port, listening or only bound.
struct HeldPort {
  int fd = -1;
  int port = 0;
  explicit HeldPort(bool listening) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    if (listening) listen(fd, 1);
  }
  ~HeldPort() { close(fd); }
};

std::string ProcNetTcp() {
  std::ifstream in("/proc/net/tcp");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PortScan, ListeningPortsFromProcNetTcp) {
  HeldPort listening(true);
  HeldPort bound(false);
  auto ports = ParseListeningPorts(ProcNetTcp());
  EXPECT_TRUE(ports.count(listening.port));
  EXPECT_FALSE(ports.count(bound.port));  // bound, not LISTEN
  EXPECT_TRUE(ParseListeningPorts("header\n   0: 0100007F:1F90 00000000:0000 0A 0\n").count(8080));
  EXPECT_TRUE(ParseListeningPorts("header\n   0: 0100007F:1F90 00000000:0000 01 0\n").empty());
  EXPECT_TRUE(ParseListeningPorts("").empty());
}

TEST(PortScan, SkipsHeldPorts) {
  HeldPort listening(true);
  EXPECT_FALSE(CanBindLoopback(listening.port));
  auto port = FindFreeLoopbackPort(listening.port, 20);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_GT(*port, listening.port);
  HeldPort bound(false);  // bound but not listening: not in /proc/net/tcp's LISTEN
  auto next = FindFreeLoopbackPort(bound.port, 20);
  ASSERT_TRUE(next);
  EXPECT_NE(*next, bound.port);
  auto skipped = FindFreeLoopbackPort(*port, 20, {*port});
  ASSERT_TRUE(skipped);
  EXPECT_NE(*skipped, *port);
  EXPECT_FALSE(FindFreeLoopbackPort(listening.port, 1));
}

}  // namespace
}  // namespace jobmon::diagnose
