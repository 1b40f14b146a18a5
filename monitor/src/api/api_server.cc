#include "jobmon/monitor/api_server.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <list>

#include "jobmon/common/text_lines.h"
#include "unix_socket.h"

namespace jobmon::monitor {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using unix_socket::Errno;
using unix_socket::UnixAddress;

// Whether a daemon answers on `path` now (then it is not stale).
bool SomeoneListens(const sockaddr_un& address) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  return connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
}

Expected<std::optional<gid_t>> ResolveGroup(const std::string& name) {
  if (name.empty()) return std::optional<gid_t>{};
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return Error{"monitor.admin_group: no group named \"" + name + "\""};
  }
  return std::optional<gid_t>{found->gr_gid};
}

struct Client {
  UniqueFd fd;
  api::Caller caller;
  std::string in, out;
  size_t written = 0;
  bool answering = false;
  Clock::time_point deadline;
};

// The caller behind `uid` and how many connections it holds. Judged again
// only when it holds none, so a flood from one uid costs one group lookup.
std::pair<api::Caller, size_t> CallerOf(const std::list<Client>& clients, uid_t uid,
                                        std::optional<gid_t> admin_gid) {
  size_t open = 0;
  std::optional<bool> privileged;
  for (const Client& c : clients) {
    if (c.caller.uid != uid) continue;
    ++open;
    privileged = c.caller.privileged;
  }
  if (!privileged) privileged = IsPrivileged(uid, admin_gid);
  return {api::Caller{.uid = uid, .privileged = *privileged}, open};
}

// Tells a caller turned away why, if its socket takes the line now; the
// connection is closed either way.
void SayBusy(int fd, const ApiServerOptions& options) {
  const std::string line =
      api::Refusal("busy", "the monitor's API is serving too many connections (a user at most " +
                               std::to_string(options.max_clients_per_user) +
                               " at once); try again")
          .dump() +
      "\n";
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    // Nothing more to do: it is closed next.
  }
}

}  // namespace

bool AdmitClient(const ApiServerOptions& options, size_t open, size_t open_of_uid,
                 bool privileged) {
  if (privileged) return open < options.max_clients;
  const size_t shared = options.max_clients > options.admin_reserved
                            ? options.max_clients - options.admin_reserved
                            : 0;
  return open < shared && open_of_uid < options.max_clients_per_user;
}

bool IsPrivileged(uid_t uid, std::optional<gid_t> admin_gid) {
  if (uid == 0) return true;
  if (!admin_gid) return false;
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || !found) return false;
  std::vector<gid_t> groups(64);
  int count = static_cast<int>(groups.size());
  if (getgrouplist(found->pw_name, found->pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count));  // count now says how many there are
    if (getgrouplist(found->pw_name, found->pw_gid, groups.data(), &count) < 0) return false;
  }
  groups.resize(static_cast<size_t>(count));
  return std::find(groups.begin(), groups.end(), *admin_gid) != groups.end();
}

Expected<std::unique_ptr<ApiServer>> ApiServer::Start(const ApiServerOptions& options) {
  auto address = UnixAddress(options.socket_path);
  if (!address) return address.error();
  auto admin_gid = ResolveGroup(options.admin_group);
  if (!admin_gid) return admin_gid.error();
  auto store = StateStore::OpenReadOnly(options.state_db);
  if (!store) return store.error();

  const std::filesystem::path dir = std::filesystem::path(options.socket_path).parent_path();
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Error{dir.string() + ": cannot create: " + ec.message()};
    // Users must reach the socket; what they may ask is decided per request.
    if (chmod(dir.c_str(), 0755) != 0) return Errno(dir.string() + ": chmod");
  }
  struct stat st {};
  if (lstat(options.socket_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Error{options.socket_path + ": exists and is not a socket; not replaced"};
    }
    if (SomeoneListens(*address)) {
      return Error{options.socket_path + ": another slurm_job_monitor answers there"};
    }
    unlink(options.socket_path.c_str());  // stale: its daemon is gone
  }
  UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener.valid()) return Errno("socket");
  if (bind(listener.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0)
    return Errno(options.socket_path + ": bind");
  if (chmod(options.socket_path.c_str(), 0666) != 0 || listen(listener.get(), 64) != 0) {
    Error error = Errno(options.socket_path);
    unlink(options.socket_path.c_str());
    return error;
  }
  UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) {
    unlink(options.socket_path.c_str());
    return Errno("eventfd");
  }
  std::unique_ptr<ApiServer> server(new ApiServer(options, std::move(listener), std::move(wake),
                                                  std::move(store).value(), *admin_gid));
  server->thread_ = std::thread([s = server.get()] { s->Run(); });
  return server;
}

ApiServer::ApiServer(ApiServerOptions options, UniqueFd listener, UniqueFd wake,
                     std::unique_ptr<StateStore> store, std::optional<gid_t> admin_gid)
    : options_(std::move(options)),
      listener_(std::move(listener)),
      wake_(std::move(wake)),
      store_(std::move(store)),
      admin_gid_(admin_gid) {}

ApiServer::~ApiServer() {
  stop_ = true;
  const uint64_t one = 1;
  if (write(wake_.get(), &one, sizeof(one)) < 0) {
    // The thread still sees stop_ within its poll timeout.
  }
  if (thread_.joinable()) thread_.join();
  unlink(options_.socket_path.c_str());
}

std::vector<WatchRequest> ApiServer::TakeWatches() {
  std::lock_guard lock(mutex_);
  return std::exchange(watches_, {});
}

bool ApiServer::QueueWatch(const WatchRequest& request) {
  // Pending: written by the daemon but not yet taken by its Slurm poll (read
  // before the lock: the monitor's loop never waits on this thread's query),
  // and queued here.
  size_t pending = 0;
  if (request.uid) {
    // Unreadable: counted as none; the queue below still bounds each cycle.
    if (auto stored = store_->PendingWatches(*request.uid)) pending = *stored;
  }
  std::lock_guard lock(mutex_);
  if (request.uid) {
    for (const WatchRequest& w : watches_) pending += w.uid == request.uid;
    if (pending >= options_.max_pending_watches_per_user) return false;
  }
  watches_.push_back(request);
  return true;
}

ApiServerStats ApiServer::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void ApiServer::Run() {
  std::list<Client> clients;
  const auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.client_timeout_seconds));
  auto count = [this](uint64_t ApiServerStats::*field) {
    std::lock_guard lock(mutex_);
    ++(stats_.*field);
  };
  auto answer = [&](Client& c) {
    c.answering = true;
    auto request = api::ParseRequest(FirstLine(c.in));
    json response;
    if (!request) {
      response = api::Refusal("bad_request", request.error().message);
    } else {
      response = api::Answer(*store_, c.caller, *request,
                             [this](const WatchRequest& w) { return QueueWatch(w); });
    }
    c.out = response.dump(-1, ' ', false, json::error_handler_t::replace);
    if (c.out.size() > api::kMaxResponseBytes) {
      c.out = api::Refusal("too_large", "the answer exceeds the API's size limit").dump();
    }
    c.out += '\n';
    count(response.value("ok", false) ? &ApiServerStats::answered : &ApiServerStats::refused);
  };

  while (!stop_) {
    std::vector<pollfd> fds;
    fds.push_back({wake_.get(), POLLIN, 0});
    fds.push_back({listener_.get(), POLLIN, 0});
    auto wait = std::chrono::milliseconds(1000);
    const auto now = Clock::now();
    for (Client& c : clients) {
      fds.push_back({c.fd.get(), static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(
                                std::max(c.deadline - now, Clock::duration::zero())));
    }
    if (poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0 && errno != EINTR) break;
    if (stop_) break;

    size_t i = 2;
    for (auto it = clients.begin(); it != clients.end(); ++i) {
      Client& c = *it;
      const short revents = fds[i].revents;
      bool done = false;
      if (c.answering && (revents & (POLLOUT | POLLERR | POLLHUP))) {
        const ssize_t n = send(c.fd.get(), c.out.data() + c.written, c.out.size() - c.written,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) c.written += static_cast<size_t>(n);
        done = (n < 0 && errno != EAGAIN && errno != EINTR) || c.written == c.out.size();
      } else if (!c.answering && (revents & (POLLIN | POLLERR | POLLHUP))) {
        char buffer[1024];
        const ssize_t n = recv(c.fd.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
        if (n > 0) {
          c.in.append(buffer, static_cast<size_t>(n));
          if (c.in.find('\n') != std::string::npos) {
            answer(c);
          } else if (c.in.size() > api::kMaxRequestBytes) {
            c.in.clear();
            c.answering = true;
            c.out = api::Refusal("bad_request", "request longer than 4096 bytes").dump() + "\n";
            count(&ApiServerStats::refused);
          }
        } else if (n == 0 && !c.in.empty()) {
          answer(c);  // the request without its newline, then end of input
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          done = true;
          count(&ApiServerStats::dropped);
        }
      }
      if (!done && Clock::now() >= c.deadline) {
        done = true;
        count(&ApiServerStats::timed_out);
      }
      it = done ? clients.erase(it) : std::next(it);
    }

    if (fds[1].revents & POLLIN) {
      while (true) {
        UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd.valid()) break;
        ucred peer{};
        socklen_t length = sizeof(peer);
        if (clients.size() >= options_.max_clients ||
            getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
          count(&ApiServerStats::dropped);
          continue;  // closed: every slot taken, or no credentials to judge by
        }
        auto [caller, open_of_uid] = CallerOf(clients, peer.uid, admin_gid_);
        if (!AdmitClient(options_, clients.size(), open_of_uid, caller.privileged)) {
          SayBusy(fd.get(), options_);
          count(&ApiServerStats::dropped);
          continue;  // closed: over its uid's cap, or only admins' slots are left
        }
        Client c;
        c.fd = std::move(fd);
        c.caller = caller;
        c.deadline = Clock::now() + timeout;
        clients.push_back(std::move(c));
      }
    }
  }
}

}  // namespace jobmon::monitor
