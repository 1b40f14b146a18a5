#pragma once
// The daemon's local API on a Unix socket (api_protocol.h's requests). One
// thread with a poll loop serves every client, so nothing a client does
// reaches the monitor's cycle: requests are answered from a read-only
// connection to the state database, and a watch request is handed over
// through TakeWatches(). Every client has a deadline (request read and
// answer written), a size cap, and connection caps per uid and in all, with
// the last slots kept for root and the admin group; a slow or hostile client
// only loses its own connections, never anyone else's.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/unique_fd.h"
#include "jobmon/monitor/api_protocol.h"
#include "jobmon/monitor/state_store.h"

namespace jobmon::monitor {

struct ApiServerOptions {
  std::string socket_path;
  std::string state_db;
  std::string admin_group;  // empty: only root is privileged
  double client_timeout_seconds = 2;
  size_t max_clients = 32;
  // A user (neither root nor of admin_group) holds at most this many
  // connections at once, and only the first max_clients - admin_reserved
  // slots: one user cannot lock out the others, nor all users the admins.
  size_t max_clients_per_user = 4;
  size_t admin_reserved = 8;
  // A user's watch requests not yet taken by the daemon's Slurm poll (each
  // one unknown to Slurm costs the daemon a query and a log line).
  size_t max_pending_watches_per_user = 16;
};

struct ApiServerStats {
  uint64_t answered = 0, refused = 0, timed_out = 0, dropped = 0;
};

// Root, or a member of `admin_gid` (primary or supplementary, as
// getgrouplist says for the uid's passwd entry).
bool IsPrivileged(uid_t uid, std::optional<gid_t> admin_gid);

// Whether a new connection is served, given `open` connections in all and
// `open_of_uid` of its uid. Root and admins: any free slot.
bool AdmitClient(const ApiServerOptions& options, size_t open, size_t open_of_uid, bool privileged);

class ApiServer {
 public:
  // Creates the socket's directory (0755) when missing, replaces a stale
  // socket (none answering) and refuses a path another daemon serves or
  // that is not a socket; the socket itself is 0666 since every request is
  // judged by the caller's credentials.
  static Expected<std::unique_ptr<ApiServer>> Start(const ApiServerOptions& options);
  ~ApiServer();  // stops the thread, removes the socket
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  std::vector<WatchRequest> TakeWatches();
  ApiServerStats stats() const;

 private:
  ApiServer(ApiServerOptions options, UniqueFd listener, UniqueFd wake,
            std::unique_ptr<StateStore> store, std::optional<gid_t> admin_gid);
  void Run();
  bool QueueWatch(const WatchRequest& request);  // false: over the user's cap

  ApiServerOptions options_;
  UniqueFd listener_, wake_;
  std::unique_ptr<StateStore> store_;  // used by the server thread only
  std::optional<gid_t> admin_gid_;
  mutable std::mutex mutex_;  // guards watches_ and stats_
  std::vector<WatchRequest> watches_;
  ApiServerStats stats_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace jobmon::monitor
