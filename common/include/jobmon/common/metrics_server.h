#pragma once
// The /metrics server of jobmon-exporter and of the daemon's own listener:
// the one place that bounds what a peer may hold.
//
// GNU libmicrohttpd serves it. prometheus::Exposer (civetweb 1.15) handed
// each accepted connection to a worker that then waited out the request
// timeout for it, and has no per-peer bound (its init_connection callback
// cannot refuse a connection): 200 idle connections from one peer held its
// 8 workers for 50 s, so every scrape from another peer failed.
// libmicrohttpd polls every connection from a few threads (epoll), so an
// idle connection holds no thread, and bounds connections per peer address
// and in all (MetricsServerLimits). prometheus-cpp still gives the format
// (prometheus::TextSerializer).

#include <prometheus/collectable.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "jobmon/common/socket_address.h"

namespace jobmon {

struct MetricsServerLimits {
  // Threads that poll the connections and answer requests. A connection
  // holds none while it is idle; a request being answered (a collection, up
  // to the exporter's --deadline) holds its thread.
  int threads = 4;
  // Connections one peer address may hold at once; a new one past this is
  // closed at accept. A peer's idle connections cost only that peer, never
  // a scraper at another address (the monitor, the job's Prometheus).
  int connections_per_peer = 4;
  // All peers together; past it new connections wait in the listen backlog.
  int max_connections = 256;
  // A connection silent this long is closed: idle ones, half-sent requests
  // and responses not taken alike (libmicrohttpd counts whole seconds).
  // Prometheus sends its request at once.
  int idle_timeout_s = 1;
  // Only these may connect (refused at accept, before anything is read);
  // empty: anyone who reaches the address. IPv4 blocks only (the plugin's
  // `scrapers`): an IPv6 block here is an error.
  std::vector<Cidr> allowed;

  // A server on loopback (the daemon's own /metrics): every local client is
  // the one peer 127.0.0.1 (and may pick any 127/8 source), so a per-peer
  // bound there would let any local user refuse the scraper with four idle
  // sockets. Only the total bound applies: past it a new connection waits
  // in the listen backlog until idle ones are closed (about 1 s: 300 idle
  // connections delayed a scrape by 0.8 s, where a per-peer bound of 4
  // refused it).
  static MetricsServerLimits Loopback() {
    MetricsServerLimits limits;
    limits.connections_per_peer = limits.max_connections;
    return limits;
  }
};

// What a route answers.
struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

class MetricsServer {
 public:
  // The decoded query-string argument `name` of the request being answered;
  // empty when absent.
  using QueryArgument = std::function<std::string(const char* name)>;
  using Route = std::function<HttpAnswer(const QueryArgument& argument)>;

  // Listens on `bind` (never 0.0.0.0 or ::; port 0: an ephemeral one) and
  // serves GET/HEAD /metrics: the registered collectables, in the text
  // format, one request per connection (Connection: close).
  static Expected<std::unique_ptr<MetricsServer>> Start(const SocketAddress& bind,
                                                        const MetricsServerLimits& limits = {});
  ~MetricsServer();  // stops serving; waits for a request being answered
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Held weakly, as prometheus::Exposer does: the owner keeps it alive.
  void RegisterCollectable(const std::weak_ptr<prometheus::Collectable>& collectable);
  // GET `path` (exactly; any query string) is answered by `route`; another
  // method there is answered 405. Anything but /metrics and the routes: 404.
  void AddRoute(const std::string& path, Route route);
  uint16_t port() const;

  struct Impl;

 private:
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace jobmon
