#include "jobmon/exporter/listen_address.h"

#include <charconv>

namespace jobmon::exporter {

std::string ListenAddress::ToBindString() const {
  std::string ip = address.ToString();
  if (address.family == IpAddress::Family::kV6) ip = "[" + ip + "]";
  return ip + ":" + std::to_string(port);
}

Expected<ListenAddress> ParseListenAddress(std::string_view text) {
  std::string_view host, port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find("]:");
    if (close == text.npos)
      return Error{"--listen '" + std::string(text) + "': expected [IPv6]:PORT"};
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == text.npos || text.find(':') != colon) {
      return Error{"--listen '" + std::string(text) +
                   "': expected ADDR:PORT (IPv6 as [ADDR]:PORT)"};
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  auto address = IpAddress::Parse(host);
  if (!address)
    return Error{"--listen '" + std::string(text) + "': " + address.error().message +
                 " (a literal IP is needed)"};
  if (address->IsUnspecified()) {
    return Error{"--listen '" + std::string(text) +
                 "': refusing a wildcard address; bind this node's cluster-private address"};
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return Error{"--listen '" + std::string(text) + "': bad port"};
  }
  return ListenAddress{*address, static_cast<uint16_t>(port)};
}

}  // namespace jobmon::exporter
