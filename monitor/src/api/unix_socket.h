#pragma once
// What the daemon's API server (api_server.cc) and its client (api_client.cc)
// share about a Unix socket: its address from a path, and errno as an Error.

#include <sys/un.h>

#include <string>

#include "jobmon/common/expected.h"

namespace jobmon::monitor::unix_socket {

// `what`: strerror(errno).
Error Errno(const std::string& what);
// The address of `path`, or why it cannot be one (empty, too long).
Expected<sockaddr_un> UnixAddress(const std::string& path);

}  // namespace jobmon::monitor::unix_socket
