#pragma once
// The client side of the daemon's local API (`jobmon`): one request, one
// answer, within `timeout_seconds`. The server is api_server.h.

#include <nlohmann/json.hpp>
#include <string>

#include "jobmon/common/expected.h"
#include "jobmon/monitor/api_protocol.h"

namespace jobmon::monitor {

Expected<nlohmann::json> CallApi(const std::string& socket_path, const api::Request& request,
                                 double timeout_seconds = 5);

}  // namespace jobmon::monitor
