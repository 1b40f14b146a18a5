#include "lifecycle/port_reservation.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "jobmon/common/socket_address.h"

namespace jobmon::lifecycle {
namespace fs = std::filesystem;

bool PortIsFree(const IpAddress& address, int port) {
  const Sockaddr where = ToSockaddr(address, static_cast<uint16_t>(port));
  int fd = socket(where.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool free = bind(fd, where.get(), where.length) == 0;
  close(fd);
  return free;
}

namespace {

// Ports other jobs of this node reserved recently.
std::set<int> RecentReservations(const RunDir& run, int reservation_seconds) {
  std::set<int> ports;
  std::error_code ec;
  const std::time_t now = std::time(nullptr);
  for (const auto& job : fs::directory_iterator(run.node_dir, ec)) {
    if (job.path() == fs::path(run.dir)) continue;
    std::string file = (job.path() / "ports").string();
    struct stat st {};
    if (stat(file.c_str(), &st) != 0 || now - st.st_mtime > reservation_seconds) continue;
    std::ifstream in(file);
    std::string kind;
    int port = 0;
    while (in >> kind >> port) ports.insert(port);
  }
  return ports;
}

}  // namespace

Expected<int> ReservePort(const RunDir& run, const std::string& kind, const IpAddress& address,
                          int base, int tries, int reservation_seconds) {
  std::error_code ec;
  fs::create_directories(run.dir, ec);
  if (ec) return Error{run.dir + ": " + ec.message()};
  std::string lock_path = run.node_dir + "/.ports.lock";
  int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) return Error{lock_path + ": " + std::strerror(errno)};
  // Bounded: a prolog never waits long for another one.
  bool locked = false;
  for (int attempt = 0; attempt < 200 && !locked; ++attempt) {
    locked = flock(lock, LOCK_EX | LOCK_NB) == 0;
    if (!locked) usleep(10000);
  }
  if (!locked) {
    close(lock);
    return Error{lock_path + ": still locked after 2 s"};
  }
  std::set<int> taken = RecentReservations(run, reservation_seconds);
  {
    std::ifstream mine(run.ports());
    std::string k;
    int p = 0;
    while (mine >> k >> p) taken.insert(p);
  }
  int chosen = 0;
  for (int port = base; port < base + tries && port <= 65535; ++port) {
    if (taken.count(port) || !PortIsFree(address, port)) continue;
    chosen = port;
    break;
  }
  Expected<int> result = Error{"no free port in " + std::to_string(base) + "-" +
                               std::to_string(base + tries - 1) + " on " + address.ToString()};
  if (chosen) {
    std::ofstream out(run.ports(), std::ios::app);
    out << kind << " " << chosen << "\n";
    out.flush();
    result = out ? Expected<int>(chosen) : Expected<int>(Error{run.ports() + ": write failed"});
  }
  flock(lock, LOCK_UN);
  close(lock);
  return result;
}

}  // namespace jobmon::lifecycle
