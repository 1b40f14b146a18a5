// pfc: per-priority pause frames through the ethtool ioctl (no subprocess).
#include "jobmon/exporter/pfc_collector.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <re2/re2.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "jobmon/exporter/proc_parsers.h"

namespace jobmon::exporter {

namespace {

// Drivers report a few thousand statistics at most; more is a broken driver
// or a hostile fixture.
constexpr uint32_t kMaxStats = 1 << 16;

class Socket {
 public:
  Socket() : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int Ethtool(int fd, const std::string& interface, void* command) {
  ifreq request{};
  std::strncpy(request.ifr_name, interface.c_str(), IFNAMSIZ - 1);
  request.ifr_data = static_cast<char*>(command);
  return ioctl(fd, SIOCETHTOOL, &request);
}

// The ethtool structs end in flexible arrays; 8-byte alignment suits all.
std::unique_ptr<uint64_t[]> Buffer(size_t bytes) {
  auto buffer = std::make_unique<uint64_t[]>((bytes + 7) / 8);
  std::memset(buffer.get(), 0, bytes);
  return buffer;
}

}  // namespace

Expected<EthtoolStats> ReadEthtoolStats(const std::string& interface) {
  if (interface.empty() || interface.size() >= IFNAMSIZ) {
    return Error{"invalid interface name '" + interface + "'"};
  }
  Socket sock;
  if (sock.fd() < 0) return Error{std::string("socket: ") + std::strerror(errno)};
  auto unsupported = [](int err) { return err == EOPNOTSUPP || err == ENOTSUP; };

  auto info_buffer = Buffer(sizeof(ethtool_sset_info) + sizeof(uint32_t));
  auto* info = reinterpret_cast<ethtool_sset_info*>(info_buffer.get());
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ULL << ETH_SS_STATS;
  if (Ethtool(sock.fd(), interface, info) < 0) {
    if (unsupported(errno)) return EthtoolStats{};
    return Error{interface + ": ETHTOOL_GSSET_INFO: " + std::strerror(errno)};
  }
  if (!(info->sset_mask & (1ULL << ETH_SS_STATS))) return EthtoolStats{};
  uint32_t count = info->data[0];
  if (count == 0) return EthtoolStats{};
  if (count > kMaxStats) return Error{interface + ": " + std::to_string(count) + " statistics"};

  auto strings_buffer = Buffer(sizeof(ethtool_gstrings) + size_t{count} * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buffer.get());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = count;
  if (Ethtool(sock.fd(), interface, strings) < 0) {
    return Error{interface + ": ETHTOOL_GSTRINGS: " + std::strerror(errno)};
  }
  auto stats_buffer = Buffer(sizeof(ethtool_stats) + size_t{count} * sizeof(uint64_t));
  auto* stats = reinterpret_cast<ethtool_stats*>(stats_buffer.get());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = count;
  if (Ethtool(sock.fd(), interface, stats) < 0) {
    return Error{interface + ": ETHTOOL_GSTATS: " + std::strerror(errno)};
  }
  // The kernel may shrink the lists if the driver's count changed between
  // calls; use what both agree on.
  uint32_t n = std::min({count, strings->len, stats->n_stats});
  EthtoolStats out;
  out.names.reserve(n);
  out.values.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const char* name = reinterpret_cast<const char*>(strings->data) + size_t{i} * ETH_GSTRING_LEN;
    out.names.emplace_back(name, strnlen(name, ETH_GSTRING_LEN));
    out.values.push_back(stats->data[i]);
  }
  return out;
}

std::vector<PauseCounter> FindPauseCounters(const EthtoolStats& stats) {
  static const RE2 per_priority(R"((rx|tx)_(?:prio(\d)_pause|pfc_ena_frames_pri(\d)))");
  static const RE2 link_level(R"((rx|tx)_(?:pause(?:_ctrl_phy|_frames)?|global_pause))");
  std::vector<PauseCounter> out;
  // A driver can name one counter twice (mlx5: rx_pause_ctrl_phy and
  // rx_global_pause); the first one wins so every series is unique.
  auto add = [&](PauseCounter counter) {
    for (const auto& seen : out) {
      if (seen.direction == counter.direction && seen.priority == counter.priority) return;
    }
    out.push_back(std::move(counter));
  };
  size_t n = std::min(stats.names.size(), stats.values.size());
  for (size_t i = 0; i < n; ++i) {
    std::string direction, mlx5_priority, bnxt_priority;
    if (RE2::FullMatch(stats.names[i], per_priority, &direction, &mlx5_priority, &bnxt_priority)) {
      add({direction, mlx5_priority.empty() ? bnxt_priority : mlx5_priority, stats.values[i]});
    } else if (RE2::FullMatch(stats.names[i], link_level, &direction)) {
      add({direction, "link", stats.values[i]});
    }
  }
  return out;
}

Expected<std::vector<std::string>> InterfacesIn(const std::string& procfs) {
  auto text = ReadSmallFile(procfs + "/net/dev");
  if (!text) return text.error();
  auto devices = ParseNetDev(*text);
  if (!devices) return Error{procfs + "/net/dev: " + devices.error().message};
  std::vector<std::string> names;
  for (const NetDevice& device : *devices) {
    if (device.name != "lo") names.push_back(device.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool IsLiveRoot(const std::string& root, const std::string& live) {
  std::error_code ec;
  return std::filesystem::equivalent(root, live, ec);
}

PfcCollector::PfcCollector(const std::string& procfs, const std::string& sysfs)
    : list_([procfs] { return InterfacesIn(procfs); }) {
  if (IsLiveRoot(procfs, "/proc") && IsLiveRoot(sysfs, "/sys")) {
    read_ = ReadEthtoolStats;
  } else {
    read_ = [](const std::string&) -> Expected<EthtoolStats> { return EthtoolStats{}; };
  }
}

Expected<Families> PfcCollector::Collect() {
  auto interfaces = list_();
  if (!interfaces) return interfaces.error();
  FamilyBuilder b;
  for (const std::string& interface : *interfaces) {
    auto stats = read_(interface);
    // An interface can vanish between listing and reading (a veth of a job
    // that just ended); the others still count.
    if (!stats) continue;
    for (const PauseCounter& counter : FindPauseCounters(*stats)) {
      b.Counter(
          "hw_net_pfc_pause_frames_total", "Pause frames (priority 0-7: PFC; link: IEEE 802.3x)",
          {{"device", interface}, {"direction", counter.direction}, {"priority", counter.priority}},
          static_cast<double>(counter.frames));
    }
  }
  return b.Take();
}

}  // namespace jobmon::exporter
