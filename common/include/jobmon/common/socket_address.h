#pragma once
// One listening address, "A.B.C.D:PORT" or "[IPv6]:PORT" (the /metrics
// servers of jobmon-exporter and the daemon bind one: metrics_server.h).

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"

namespace jobmon {

struct SocketAddress {
  IpAddress address;
  uint16_t port = 0;
  // "10.0.0.5:9400", "[fd00::5]:9400"; an IPv4-mapped IPv6 address is
  // written as its IPv4 address, since that is what it means.
  std::string ToBindString() const;
};

// Exactly one literal IP and a decimal port in 1..65535, nothing else
// ("127.0.0.1:1,2", "9188s": civetweb, which served /metrics before
// metrics_server.h, read such lists and suffixes as more ports).
Expected<SocketAddress> ParseSocketAddress(std::string_view text);

// The kernel's form of an address and port (bind(2), libraries that take a
// sockaddr), and back: the one conversion the plugin's port reservation,
// the interface listing and the /metrics server share.
struct Sockaddr {
  sockaddr_storage storage{};
  socklen_t length = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};
Sockaddr ToSockaddr(const IpAddress& address, uint16_t port);
// The IP of an AF_INET or AF_INET6 address; nullopt for any other family.
std::optional<IpAddress> IpAddressOf(const sockaddr* address);

}  // namespace jobmon
