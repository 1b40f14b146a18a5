#pragma once
// A free loopback port for a read-only Prometheus, found by scanning first
// (docs/diagnose.md, step 2, Case B): an ssh tunnel to a live
// job's Prometheus, another diagnosis's instance, anything listening is
// skipped, never shadowed. A port counts as free only when nothing listens
// on it (/proc/net/tcp and tcp6, any address) and 127.0.0.1:<port> binds.

#include <set>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon::diagnose {

// The local ports in state LISTEN (0A) of a /proc/net/tcp or tcp6 text.
std::set<int> ParseListeningPorts(std::string_view proc_net_tcp);

// True when a TCP socket binds 127.0.0.1:port (closed again at once).
bool CanBindLoopback(int port);

// The first free port in [first, first + tries), skipping `also_skip`.
Expected<int> FindFreeLoopbackPort(int first, int tries, const std::set<int>& also_skip = {},
                                   const std::string& procfs = "/proc");

}  // namespace jobmon::diagnose
