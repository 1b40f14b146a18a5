#include "jobmon/common/socket_address.h"

#include <charconv>

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
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return Error{quoted + ": bad port (one address:port, the port 1..65535)"};
  }
  return SocketAddress{*address, static_cast<uint16_t>(port)};
}

}  // namespace jobmon
