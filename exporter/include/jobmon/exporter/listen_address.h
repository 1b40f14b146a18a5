#pragma once
// --listen ADDR:PORT: a literal IP of this node, never a wildcard.

#include <cstdint>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"

namespace jobmon::exporter {

struct ListenAddress {
  IpAddress address;
  uint16_t port = 0;
  std::string ToBindString() const;  // "10.0.0.5:9400", "[fd00::5]:9400"
};

// "10.0.0.5:9400" or "[fd00::5]:9400". 0.0.0.0 and :: are refused: the
// exporter binds the node's cluster-private address only.
Expected<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace jobmon::exporter
