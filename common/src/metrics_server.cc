#include "jobmon/common/metrics_server.h"

#include <microhttpd.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace jobmon {

namespace {

constexpr char kMetricsPath[] = "/metrics";
constexpr char kTextFormat[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace

struct MetricsServer::Impl {
  MHD_Daemon* daemon = nullptr;
  uint16_t port = 0;
  std::vector<Cidr> allowed;  // set before the daemon starts, then read only

  std::mutex mutex;  // guards the two below
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables;
  std::map<std::string, Route, std::less<>> routes;

  // libmicrohttpd's messages while it starts (why it could not), then none:
  // a peer refused at its limit must not fill the log.
  std::mutex log_mutex;
  bool logging = true;
  std::string start_log;

  std::string Metrics() {
    std::vector<std::shared_ptr<prometheus::Collectable>> alive;
    {
      std::lock_guard lock(mutex);
      for (const auto& weak : collectables) {
        if (auto collectable = weak.lock()) alive.push_back(std::move(collectable));
      }
    }
    std::vector<prometheus::MetricFamily> families;
    for (const auto& collectable : alive) {
      auto collected = collectable->Collect();
      families.insert(families.end(), std::make_move_iterator(collected.begin()),
                      std::make_move_iterator(collected.end()));
    }
    return prometheus::TextSerializer().Serialize(families);
  }

  HttpAnswer Answer(MHD_Connection* connection, std::string_view path, std::string_view method) {
    const bool get = method == MHD_HTTP_METHOD_GET;
    if (path == kMetricsPath) {
      if (!get && method != MHD_HTTP_METHOD_HEAD) return {405, "text/plain", "GET or HEAD only\n"};
      return {200, kTextFormat, Metrics()};
    }
    Route route;
    {
      std::lock_guard lock(mutex);
      auto found = routes.find(path);
      if (found != routes.end()) route = found->second;
    }
    if (!route) return {404, "text/plain", "not found\n"};
    if (!get) return {405, "text/plain", "GET only\n"};
    return route([connection](const char* name) {
      const char* value = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, name);
      return std::string(value ? value : "");
    });
  }

  // libmicrohttpd's callbacks.
  static MHD_Result Accept(void* cls, const sockaddr* address, socklen_t) {
    const auto* impl = static_cast<const Impl*>(cls);
    if (impl->allowed.empty()) return MHD_YES;
    const std::optional<IpAddress> peer = IpAddressOf(address);
    if (!peer) return MHD_NO;
    for (const Cidr& cidr : impl->allowed) {
      if (cidr.Contains(peer->Unmapped())) return MHD_YES;
    }
    return MHD_NO;
  }

  // Called once the request line and headers are in; the answer is queued
  // then (a request body is not read: the connection closes after it).
  static MHD_Result Handle(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char*, const char*, size_t*, void**) {
    auto* impl = static_cast<Impl*>(cls);
    HttpAnswer answer;
    try {
      answer = impl->Answer(connection, url ? url : "", method ? method : "");
    } catch (const std::exception& e) {
      answer = {500, "text/plain", std::string(e.what()) + "\n"};
    }
    MHD_Response* response = MHD_create_response_from_buffer(answer.body.size(), answer.body.data(),
                                                             MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;
    MHD_Result queued = MHD_NO;
    if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                answer.content_type.c_str()) == MHD_YES &&
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES) {
      queued = MHD_queue_response(connection, static_cast<unsigned>(answer.status), response);
    }
    MHD_destroy_response(response);
    return queued;
  }

  static void Log(void* cls, const char* format, va_list arguments) {
    auto* impl = static_cast<Impl*>(cls);
    std::lock_guard lock(impl->log_mutex);
    if (!impl->logging) return;
    char line[512];
    std::vsnprintf(line, sizeof line, format, arguments);
    std::string text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) impl->start_log += (impl->start_log.empty() ? "" : "; ") + text;
  }
};

Expected<std::unique_ptr<MetricsServer>> MetricsServer::Start(const SocketAddress& bind_to,
                                                              const MetricsServerLimits& limits) {
  for (const Cidr& cidr : limits.allowed) {
    if (cidr.network.family != IpAddress::Family::kV4)
      return Error{"allowed scrapers: " + cidr.ToString() + ": IPv4 blocks only"};
  }
  if (limits.threads < 1 || limits.connections_per_peer < 1 ||
      limits.max_connections < limits.connections_per_peer || limits.idle_timeout_s < 1) {
    return Error{"metrics server: limits out of range"};
  }
  const IpAddress ip = bind_to.address.Unmapped();
  if (ip.IsUnspecified()) return Error{bind_to.ToBindString() + ": refusing a wildcard address"};

  const Sockaddr address = ToSockaddr(ip, bind_to.port);
  unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
  if (ip.family == IpAddress::Family::kV6) flags |= MHD_USE_IPv6;

  auto impl = std::make_unique<Impl>();
  impl->allowed = limits.allowed;
  Impl* raw = impl.get();
  raw->daemon = MHD_start_daemon(
      flags, bind_to.port, &Impl::Accept, raw, &Impl::Handle, raw,  //
      MHD_OPTION_EXTERNAL_LOGGER, &Impl::Log, raw,                  //
      MHD_OPTION_SOCK_ADDR, address.get(),                          //
      MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(limits.threads),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<unsigned>(limits.connections_per_peer),
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(limits.max_connections),
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(limits.idle_timeout_s), MHD_OPTION_END);
  {
    std::lock_guard lock(raw->log_mutex);
    raw->logging = false;
  }
  if (raw->daemon == nullptr) {
    return Error{"libmicrohttpd could not start on " + bind_to.ToBindString() +
                 (raw->start_log.empty() ? std::string() : ": " + raw->start_log)};
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(raw->daemon, MHD_DAEMON_INFO_BIND_PORT);
  raw->port = info != nullptr ? info->port : bind_to.port;
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() { MHD_stop_daemon(impl_->daemon); }

void MetricsServer::RegisterCollectable(const std::weak_ptr<prometheus::Collectable>& collectable) {
  std::lock_guard lock(impl_->mutex);
  impl_->collectables.push_back(collectable);
}

void MetricsServer::AddRoute(const std::string& path, Route route) {
  std::lock_guard lock(impl_->mutex);
  impl_->routes[path] = std::move(route);
}

uint16_t MetricsServer::port() const { return impl_->port; }

}  // namespace jobmon
