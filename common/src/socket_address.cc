#include "jobmon/common/socket_address.h"

#include <netinet/in.h>

#include <cstring>

#include "jobmon/common/whole_number.h"

namespace jobmon {

std::string SocketAddress::ToBindString() const {
  const IpAddress ip = address.Unmapped();
  std::string text = ip.ToString();
  if (ip.family == IpAddress::Family::kV6) text = "[" + text + "]";
  return text + ":" + std::to_string(port);
}

Expected<SocketAddress> ParseSocketAddress(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::string_view host, port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find("]:");
    if (close == text.npos) return Error{quoted + ": expected [IPv6]:PORT"};
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == text.npos || text.find(':') != colon)
      return Error{quoted + ": expected ADDR:PORT (IPv6 as [ADDR]:PORT)"};
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  auto address = IpAddress::Parse(host);
  if (!address) return Error{quoted + ": " + address.error().message + " (a literal IP is needed)"};
  // The whole rest must be the port: nothing such as "9188,0.0.0.0:2" or
  // "9188s" follows the digits.
  const std::optional<unsigned> port = WholeNumber<unsigned>(port_text);
  if (!port || *port == 0 || *port > 65535) {
    return Error{quoted + ": bad port (one address:port, the port 1..65535)"};
  }
  return SocketAddress{*address, static_cast<uint16_t>(*port)};
}

Sockaddr ToSockaddr(const IpAddress& address, uint16_t port) {
  Sockaddr out;
  if (address.family == IpAddress::Family::kV4) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    std::memcpy(&in.sin_addr, address.bytes.data(), 4);
    std::memcpy(&out.storage, &in, sizeof in);
    out.length = sizeof in;
  } else {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    std::memcpy(&in6.sin6_addr, address.bytes.data(), 16);
    std::memcpy(&out.storage, &in6, sizeof in6);
    out.length = sizeof in6;
  }
  return out;
}

std::optional<IpAddress> IpAddressOf(const sockaddr* address) {
  IpAddress ip;
  if (address->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof in);
    ip.family = IpAddress::Family::kV4;
    std::memcpy(ip.bytes.data(), &in.sin_addr, 4);
  } else if (address->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof in6);
    ip.family = IpAddress::Family::kV6;
    std::memcpy(ip.bytes.data(), &in6.sin6_addr, 16);
  } else {
    return std::nullopt;
  }
  return ip;
}

}  // namespace jobmon
