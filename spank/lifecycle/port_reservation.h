#pragma once
// Choosing a port for a job's daemon: the first from `base` that binds on
// the address and that no other job of this node has just taken. A
// reservation covers the gap between the prolog's choice and the daemon's
// own bind (Prometheus takes a second to listen; two prologs can run at
// once), so it is made under an flock of the node's run dir.

#include <string>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "lifecycle/diag_paths.h"

namespace jobmon::lifecycle {

// True if a listening socket could be bound to address:port right now.
bool PortIsFree(const IpAddress& address, int port);

// Reserves a port for `kind` ("exporter", "prometheus") of this job: records
// "<kind> <port>" in the job's run dir. Reservations older than
// `reservation_seconds` no longer count (by then the daemon holds the port,
// or never will).
Expected<int> ReservePort(const RunDir& run, const std::string& kind, const IpAddress& address,
                          int base, int tries, int reservation_seconds = 600);

}  // namespace jobmon::lifecycle
