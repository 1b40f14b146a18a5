// Hardening item 10: half-sent requests must not starve a /metrics server
// built with MetricsServerOptions (jobmon-exporter, the daemon's listener).
// A real civetweb server on 127.0.0.1, loopback only.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "jobmon/common/socket_address.h"

namespace jobmon {
namespace {

// A connected TCP socket to 127.0.0.1:port (-1 on failure), reads bounded by
// `read_timeout`.
int Connect(int port, std::chrono::milliseconds read_timeout) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(read_timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((read_timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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

TEST(MetricsServer, HalfSentRequestsDoNotStarveAScrape) {
  SocketAddress bind{IpAddress::Parse("127.0.0.1").value(), 0};  // an ephemeral port
  const MetricsServerLimits limits;                              // what production uses
  prometheus::Exposer exposer(MetricsServerOptions(bind, limits).value());
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("probe_total").Help("probe").Register(*registry).Add({});
  exposer.RegisterCollectable(registry);
  ASSERT_EQ(exposer.GetListeningPorts().size(), 1u);
  const int port = exposer.GetListeningPorts().front();

  // More stalled clients than workers: each sends half a request and stops.
  std::vector<int> stalled;
  for (int i = 0; i < limits.threads + 4; ++i) {
    int fd = Connect(port, std::chrono::seconds(1));
    ASSERT_GE(fd, 0) << "connect " << i;
    stalled.push_back(fd);
    EXPECT_TRUE(SendAll(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"));  // no blank line
  }

  const auto start = std::chrono::steady_clock::now();
  int scrape = Connect(port, std::chrono::seconds(6));
  ASSERT_GE(scrape, 0);
  ASSERT_TRUE(SendAll(scrape, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"));
  std::string response;
  char buffer[4096];
  for (int reads = 0; reads < 1000; ++reads) {  // bounded; each read waits at most 6 s
    ssize_t n = recv(scrape, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(scrape);
  for (int fd : stalled) close(fd);
  RecordProperty("scrape_seconds", std::to_string(seconds));

  EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << response.substr(0, 200);
  EXPECT_NE(response.find("probe_total"), std::string::npos);
  EXPECT_LT(seconds, limits.request_timeout_ms / 1000.0 + 2.0)
      << "the scrape waited for the stalled clients";
}

// Any host that reached an exporter's address could hold its workers with
// half-open connections (64 made every scrape of the job fail): only the
// allowed scrapers may connect at all.
TEST(MetricsServer, OnlyTheAllowedScrapersAreServed) {
  auto serve = [](const std::string& allowed) {
    SocketAddress bind{IpAddress::Parse("127.0.0.1").value(), 0};
    MetricsServerLimits limits;
    limits.allowed = {Cidr::Parse(allowed).value()};
    prometheus::Exposer exposer(MetricsServerOptions(bind, limits).value());
    auto registry = std::make_shared<prometheus::Registry>();
    prometheus::BuildCounter().Name("probe_total").Help("probe").Register(*registry).Add({});
    exposer.RegisterCollectable(registry);
    int fd = Connect(exposer.GetListeningPorts().front(), std::chrono::seconds(5));
    if (fd < 0) return std::string();
    SendAll(fd, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    std::string response;
    char buffer[4096];
    for (int reads = 0; reads < 1000; ++reads) {
      ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      response.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
    return response;
  };
  EXPECT_NE(serve("127.0.0.0/8").find("probe_total"), std::string::npos) << "an allowed scraper";
  const std::string refused = serve("10.0.0.0/8");
  EXPECT_EQ(refused.find("probe_total"), std::string::npos) << refused.substr(0, 200);
  EXPECT_FALSE(refused.starts_with("HTTP/1.1 200")) << refused.substr(0, 200);
  SocketAddress bind{IpAddress::Parse("127.0.0.1").value(), 0};
  MetricsServerLimits v6;
  v6.allowed = {Cidr::Parse("fd00::/8").value()};
  EXPECT_FALSE(MetricsServerOptions(bind, v6)) << "IPv6 blocks are refused, not ignored";
}

}  // namespace
}  // namespace jobmon
