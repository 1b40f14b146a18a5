#pragma once
// One listening address, "A.B.C.D:PORT" or "[IPv6]:PORT", and the civetweb
// options for the /metrics servers bound to it (jobmon-exporter and the
// daemon's own listener).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"

namespace jobmon {

struct SocketAddress {
  IpAddress address;
  uint16_t port = 0;
  // "10.0.0.5:9400", "[fd00::5]:9400"; an IPv4-mapped IPv6 address is
  // written as its IPv4 address, since that is what it means.
  std::string ToBindString() const;
};

// Exactly one literal IP and a decimal port in 1..65535, nothing else.
// civetweb reads its listening_ports option as a comma-separated list whose
// entries take suffixes ('s' TLS, 'r' redirect) and a '+' wildcard form, so
// "127.0.0.1:1,2" would also bind *:2; the text is parsed here and civetweb
// only ever sees ToBindString().
Expected<SocketAddress> ParseSocketAddress(std::string_view text);

struct MetricsServerLimits {
  // Workers: a scrape is served as long as one is free.
  int threads = 8;
  // A connection that has not sent a whole request by then is dropped, so a
  // handful of half-sent requests cannot hold every worker (civetweb's
  // default is 30 s). Prometheus sends its request at once.
  int request_timeout_ms = 2000;
  // Only these may connect (civetweb's access_control_list, checked before
  // a worker reads anything); empty: anyone who reaches the address. IPv4
  // blocks only: an IPv6 block here is an error.
  std::vector<Cidr> allowed;
};

// civetweb options (key, value, ...) for prometheus::Exposer's
// vector<string> constructor.
Expected<std::vector<std::string>> MetricsServerOptions(const SocketAddress& bind,
                                                        const MetricsServerLimits& limits = {});

}  // namespace jobmon
