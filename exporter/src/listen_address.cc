#include "jobmon/exporter/listen_address.h"

#include <string>

namespace jobmon::exporter {

Expected<ListenAddress> ParseListenAddress(std::string_view text) {
  auto parsed = ParseSocketAddress(text);
  if (!parsed) return Error{"--listen " + parsed.error().message};
  if (parsed->address.IsUnspecified()) {
    return Error{"--listen '" + std::string(text) +
                 "': refusing a wildcard address; bind this node's cluster-private address"};
  }
  return parsed;
}

}  // namespace jobmon::exporter
