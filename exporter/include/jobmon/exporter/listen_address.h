#pragma once
// --listen ADDR:PORT: a literal IP of this node, never a wildcard.

#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/common/socket_address.h"

namespace jobmon::exporter {

using ListenAddress = SocketAddress;  // ToBindString(): "10.0.0.5:9400", "[fd00::5]:9400"

// "10.0.0.5:9400" or "[fd00::5]:9400": exactly one address (see
// ParseSocketAddress). 0.0.0.0 and :: (also as ::ffff:0.0.0.0) are refused:
// the exporter binds the node's cluster-private address only.
Expected<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace jobmon::exporter
