// The /metrics server of jobmon-exporter and the daemon's listener
// (metrics_server.h, libmicrohttpd): idle and half-sent connections must not starve a
// scrape, only the allowed scrapers are served. A real server on 127.0.0.1;
// other peers are other addresses of 127/8, which loopback answers.

#include "jobmon/common/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace jobmon {
namespace {

// Sockets closed however the test ends.
struct Sockets {
  std::vector<int> fds;
  Sockets() = default;
  Sockets(const Sockets&) = delete;
  Sockets& operator=(const Sockets&) = delete;
  ~Sockets() {
    for (int fd : fds) close(fd);
  }
};

// A connected TCP socket to 127.0.0.1:port from `from` (127.0.0.1 unless
// given), -1 on failure; reads and writes bounded by `timeout`.
int Connect(int port, std::chrono::milliseconds timeout, const char* from = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (from != nullptr) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    inet_pton(AF_INET, from, &source.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
      close(fd);
      return -1;
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// What the server sends on `fd` until it closes or `timeout` has passed.
std::string ReadAll(int fd, std::chrono::milliseconds timeout) {
  std::string response;
  const auto end = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (int reads = 0; reads < 1000 && std::chrono::steady_clock::now() < end; ++reads) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);  // each waits at most `timeout`
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  return response;
}

// `request` from 127.0.0.1 (a GET of /metrics unless given): the response.
std::string Scrape(int port, std::chrono::milliseconds timeout,
                   const std::string& request = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n") {
  Sockets socket;
  int fd = Connect(port, timeout);
  if (fd < 0) return {};
  socket.fds.push_back(fd);
  if (!SendAll(fd, request)) return {};
  return ReadAll(fd, timeout);
}

// A server with production's limits (but `allowed`) serving probe_total.
struct ProbeServer {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<MetricsServer> server;
  MetricsServerLimits limits;
  explicit ProbeServer(std::vector<Cidr> allowed = {}, MetricsServerLimits base = {})
      : limits(std::move(base)) {
    limits.allowed = std::move(allowed);
    prometheus::BuildCounter().Name("probe_total").Help("probe").Register(*registry).Add({});
    SocketAddress bind{IpAddress::Parse("127.0.0.1").value(), 0};  // an ephemeral port
    server = MetricsServer::Start(bind, limits).value();
    server->RegisterCollectable(registry);
  }
  int port() const { return server->port(); }
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The connection closed by the server (EOF or reset, no response)
// within `wait`.
bool ClosedWithin(int fd, std::chrono::milliseconds wait) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(wait.count())) != 1) return false;
  char byte;
  return recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

TEST(MetricsServer, HalfSentRequestsDoNotStarveAScrape) {
  ProbeServer probe;
  // More stalled clients than threads, each at its own address: each sends
  // half a request and stops.
  Sockets stalled;
  for (int i = 0; i < probe.limits.threads + 4; ++i) {
    const std::string from = "127.0.0." + std::to_string(10 + i);
    int fd = Connect(probe.port(), std::chrono::seconds(1), from.c_str());
    ASSERT_GE(fd, 0) << "connect " << i;
    stalled.fds.push_back(fd);
    EXPECT_TRUE(SendAll(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"));  // no blank line
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string response = Scrape(probe.port(), std::chrono::seconds(6));
  const double seconds = SecondsSince(start);
  RecordProperty("scrape_seconds", std::to_string(seconds));
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << response.substr(0, 200);
  EXPECT_NE(response.find("probe_total"), std::string::npos);
  EXPECT_LT(seconds, 1.0) << "the scrape waited for the stalled clients";
}

// 200 idle TCP connections from another user made every
// /metrics request fail at the monitor's 2-s scrape timeout (civetweb: 8
// workers each waiting out the request timeout, the scrape queued behind
// them, 50 s). Here the idle peer is 127.0.0.2 and the monitor 127.0.0.1.
TEST(MetricsServer, IdleConnectionsFromOnePeerDoNotStarveAnother) {
  ProbeServer probe;
  Sockets idle;
  for (int i = 0; i < 200; ++i) {  // connected, never a byte sent
    int fd = Connect(probe.port(), std::chrono::seconds(1), "127.0.0.2");
    if (fd >= 0) idle.fds.push_back(fd);
  }
  EXPECT_GE(idle.fds.size(), 100u) << "the idle peer could not connect";
  const auto start = std::chrono::steady_clock::now();
  const std::string response = Scrape(probe.port(), std::chrono::seconds(2));  // the monitor's
  const double seconds = SecondsSince(start);
  RecordProperty("scrape_seconds", std::to_string(seconds));
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << seconds << " s: " << response.substr(0, 200);
  EXPECT_NE(response.find("probe_total"), std::string::npos);
  EXPECT_LT(seconds, 2.0) << "the scrape waited behind another peer's idle connections";
}

// A peer holds at most connections_per_peer: the next one is closed at once
// (even with a whole request), while another peer is served; the ones it
// holds are closed after the idle timeout, and then it is served again.
TEST(MetricsServer, APeersConnectionsAreBoundedAndIdleOnesClosed) {
  ProbeServer probe;
  const int extra = 6;
  Sockets held;
  for (int i = 0; i < probe.limits.connections_per_peer; ++i) {
    int fd = Connect(probe.port(), std::chrono::seconds(1), "127.0.0.3");
    ASSERT_GE(fd, 0) << "connect " << i;
    held.fds.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  Sockets refused;
  for (int i = 0; i < extra; ++i) {
    int fd = Connect(probe.port(), std::chrono::seconds(1), "127.0.0.3");
    ASSERT_GE(fd, 0) << "connect " << i;  // the kernel's handshake; then closed
    refused.fds.push_back(fd);
    SendAll(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  for (int i = 0; i < extra; ++i) {
    EXPECT_TRUE(ClosedWithin(refused.fds[i], std::chrono::milliseconds(500)))
        << "connection " << probe.limits.connections_per_peer + i << " was not refused";
  }
  const std::string response = Scrape(probe.port(), std::chrono::seconds(2));  // another peer
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << response.substr(0, 200);
  for (int fd : held.fds) {
    EXPECT_TRUE(ClosedWithin(fd, std::chrono::seconds(4))) << "an idle connection was kept";
  }
  const double seconds = SecondsSince(start);
  RecordProperty("idle_closed_seconds", std::to_string(seconds));
  EXPECT_GE(seconds, probe.limits.idle_timeout_s * 0.5) << "closed before the idle timeout";
  EXPECT_LT(seconds, probe.limits.idle_timeout_s + 2.0);
  // The server frees a slot just after it closes the socket: the peer may
  // need a retry or two.
  std::string response_again;
  for (int attempt = 0; attempt < 20 && !response_again.starts_with("HTTP/1.1 200"); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Sockets again;
    int fd = Connect(probe.port(), std::chrono::seconds(2), "127.0.0.3");
    ASSERT_GE(fd, 0);
    again.fds.push_back(fd);
    if (SendAll(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
      response_again = ReadAll(fd, std::chrono::seconds(2));
  }
  EXPECT_TRUE(response_again.starts_with("HTTP/1.1 200")) << "the peer's slots were not given back";
}

// The daemon's loopback listener: every local client is one peer, so the
// scraper shares its address with anyone's idle connections. More idle
// connections than the total bound delay its scrape by the idle timeout at
// most (it waits in the backlog); they never refuse it.
TEST(MetricsServer, OnLoopbackIdleConnectionsFromTheScrapersAddressDoNotStarveIt) {
  ProbeServer probe({}, MetricsServerLimits::Loopback());
  Sockets idle;
  for (int i = 0; i < probe.limits.max_connections + 44; ++i) {
    int fd = Connect(probe.port(), std::chrono::seconds(1));
    if (fd >= 0) idle.fds.push_back(fd);
  }
  EXPECT_GE(idle.fds.size(), static_cast<size_t>(probe.limits.max_connections));
  const auto start = std::chrono::steady_clock::now();
  const std::string response = Scrape(probe.port(), std::chrono::seconds(4));
  const double seconds = SecondsSince(start);
  RecordProperty("scrape_seconds", std::to_string(seconds));
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << seconds << " s: " << response.substr(0, 200);
  EXPECT_LT(seconds, probe.limits.idle_timeout_s + 2.0);
}

TEST(MetricsServer, ServesMetricsOnly) {
  ProbeServer probe;
  const auto timeout = std::chrono::seconds(2);
  const std::string get =
      Scrape(probe.port(), timeout, "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(get.starts_with("HTTP/1.1 200")) << get.substr(0, 200);
  EXPECT_NE(get.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << get;
  EXPECT_NE(get.find("probe_total 0"), std::string::npos) << get;
  const std::string head =
      Scrape(probe.port(), timeout, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200")) << head;
  EXPECT_EQ(head.find("probe_total"), std::string::npos) << "HEAD: no body";
  EXPECT_TRUE(Scrape(probe.port(), timeout, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                  .starts_with("HTTP/1.1 404"));
  EXPECT_TRUE(Scrape(probe.port(), timeout, "GET /api/v1/query_range HTTP/1.1\r\nHost: x\r\n\r\n")
                  .starts_with("HTTP/1.1 404"))
      << "no route registered";
  EXPECT_TRUE(Scrape(probe.port(), timeout, "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                  .starts_with("HTTP/1.1 405"));
  // Not HTTP: answered 400, or closed unanswered (libmicrohttpd's choice).
  const std::string garbage = Scrape(probe.port(), timeout, "hello\r\n\r\n");
  EXPECT_TRUE(garbage.empty() || garbage.starts_with("HTTP/1.1 400")) << garbage;
  EXPECT_TRUE(Scrape(probe.port(), timeout, "hello world\r\n\r\n").starts_with("HTTP/1.1 400"));
  const std::string large =
      Scrape(probe.port(), timeout,
             "GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + std::string(40000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(large.starts_with("HTTP/1.1 431")) << large.substr(0, 200);
  SocketAddress wildcard{IpAddress::Parse("0.0.0.0").value(), 0};
  EXPECT_FALSE(MetricsServer::Start(wildcard)) << "never 0.0.0.0";
  SocketAddress wildcard6{IpAddress::Parse("::").value(), 0};
  EXPECT_FALSE(MetricsServer::Start(wildcard6)) << "never ::";
  SocketAddress taken{IpAddress::Parse("127.0.0.1").value(), static_cast<uint16_t>(probe.port())};
  auto second = MetricsServer::Start(taken);
  ASSERT_FALSE(second) << "the port is taken";
  EXPECT_NE(second.error().message.find("127.0.0.1:"), std::string::npos) << second.error().message;
}

TEST(MetricsServer, ARouteGetsTheDecodedQueryArgumentsOnGetOnly) {
  ProbeServer probe;
  std::vector<std::string> seen;
  probe.server->AddRoute("/echo", [&](const MetricsServer::QueryArgument& argument) {
    seen = {argument("query"), argument("step"), argument("absent")};
    return HttpAnswer{202, "application/json", "{\"ok\":true}"};
  });
  const auto timeout = std::chrono::seconds(2);
  const std::string answer =
      Scrape(probe.port(), timeout,
             "GET /echo?query=%7B__name__%3D~%22a%7Cb%22%7D&step=15 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 202")) << answer;
  EXPECT_NE(answer.find("Content-Type: application/json"), std::string::npos) << answer;
  EXPECT_TRUE(answer.ends_with("{\"ok\":true}")) << answer;
  EXPECT_EQ(seen, (std::vector<std::string>{R"({__name__=~"a|b"})", "15", ""}));
  seen.clear();
  EXPECT_TRUE(Scrape(probe.port(), timeout, "POST /echo HTTP/1.1\r\nHost: x\r\n\r\n")
                  .starts_with("HTTP/1.1 405"));
  EXPECT_TRUE(Scrape(probe.port(), timeout, "HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n")
                  .starts_with("HTTP/1.1 405"));
  EXPECT_TRUE(seen.empty()) << "the route ran for another method";
}

// Any host that reached an exporter's address could hold its workers with
// half-open connections (64 made every scrape of the job fail): only the
// allowed scrapers may connect at all.
TEST(MetricsServer, OnlyTheAllowedScrapersAreServed) {
  auto serve = [](const std::string& allowed) {
    ProbeServer probe({Cidr::Parse(allowed).value()});
    return Scrape(probe.port(), std::chrono::seconds(5));
  };
  EXPECT_NE(serve("127.0.0.0/8").find("probe_total"), std::string::npos) << "an allowed scraper";
  const std::string refused = serve("10.0.0.0/8");
  EXPECT_EQ(refused.find("probe_total"), std::string::npos) << refused.substr(0, 200);
  EXPECT_FALSE(refused.starts_with("HTTP/1.1 200")) << refused.substr(0, 200);
  SocketAddress bind{IpAddress::Parse("127.0.0.1").value(), 0};
  MetricsServerLimits v6;
  v6.allowed = {Cidr::Parse("fd00::/8").value()};
  EXPECT_FALSE(MetricsServer::Start(bind, v6)) << "IPv6 blocks are refused, not ignored";
}

}  // namespace
}  // namespace jobmon
