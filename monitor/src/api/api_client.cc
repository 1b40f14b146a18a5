#include "jobmon/monitor/api_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

#include "jobmon/common/unique_fd.h"
#include "unix_socket.h"

namespace jobmon::monitor {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using unix_socket::Errno;
using unix_socket::UnixAddress;

}  // namespace

Expected<nlohmann::json> CallApi(const std::string& socket_path, const api::Request& request,
                                 double timeout_seconds) {
  auto address = UnixAddress(socket_path);
  if (!address) return address.error();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds));
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Errno("socket");
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0)
    return Errno(socket_path + ": connect");
  // Waits for `events` until the deadline.
  auto ready = [&](short events) -> Expected<void> {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Error{socket_path + ": no answer within the timeout"};
    pollfd p{fd.get(), events, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return Error{socket_path + ": no answer within the timeout"};
    return {};
  };
  const std::string line = RequestJson(request).dump() + "\n";
  for (size_t sent = 0; sent < line.size();) {
    if (auto r = ready(POLLOUT); !r) return r.error();
    const ssize_t n = send(fd.get(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return Errno(socket_path + ": send");
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string answer;
  while (true) {
    if (auto r = ready(POLLIN); !r) return r.error();
    char buffer[65536];
    const ssize_t n = recv(fd.get(), buffer, sizeof(buffer), 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Errno(socket_path + ": recv");
    }
    answer.append(buffer, static_cast<size_t>(n));
    if (answer.size() > api::kMaxResponseBytes + 1)
      return Error{socket_path + ": answer too large"};
  }
  json parsed = json::parse(answer, nullptr, false);
  if (!parsed.is_object()) return Error{socket_path + ": the answer is not a JSON object"};
  return parsed;
}

}  // namespace jobmon::monitor
