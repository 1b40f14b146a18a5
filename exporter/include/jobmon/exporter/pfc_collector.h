#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// A NIC's `ethtool -S` statistics: names and values in driver order.
struct EthtoolStats {
  std::vector<std::string> names;
  std::vector<uint64_t> values;
};

// Reads them with the SIOCETHTOOL ioctl (ETHTOOL_GSSET_INFO, GSTRINGS,
// GSTATS), the calls ethtool itself makes. A device without driver
// statistics (lo) gives an empty result, not an error.
Expected<EthtoolStats> ReadEthtoolStats(const std::string& interface);

// Pause-frame counters among the statistics: mlx5 `rx_prio<N>_pause`,
// `rx_pause_ctrl_phy`, `rx_global_pause`; bnxt `rx_pfc_ena_frames_pri<N>`, `rx_pause_frames`;
// the generic `rx_pause`, and the tx_ forms of each. priority is "0".."7"
// for PFC, "link" for IEEE 802.3x link-level pause.
struct PauseCounter {
  std::string direction;  // rx | tx
  std::string priority;
  uint64_t frames = 0;
};
std::vector<PauseCounter> FindPauseCounters(const EthtoolStats& stats);

// pfc: hw_net_pfc_pause_frames_total{device,direction,priority} for every
// interface of <procfs>/net/dev (procfs's net/ is the reading process's
// network namespace) whose driver counts pause frames. Under a fixture root
// (--procfs or --sysfs not the live one) no statistics are read: no file
// holds them, and the ioctl would answer for this machine's interface of the
// same name. The interface list and the reader are injectable for tests.
class PfcCollector : public Collector {
 public:
  using ListInterfaces = std::function<Expected<std::vector<std::string>>()>;
  using ReadStats = std::function<Expected<EthtoolStats>(const std::string&)>;
  PfcCollector(const std::string& procfs, const std::string& sysfs);
  PfcCollector(ListInterfaces list, ReadStats read)
      : list_(std::move(list)), read_(std::move(read)) {}
  Expected<Families> Collect() override;

 private:
  ListInterfaces list_;
  ReadStats read_;
};

// The interfaces of <procfs>/net/dev except loopback, sorted.
Expected<std::vector<std::string>> InterfacesIn(const std::string& procfs);

// Whether `root` (a --procfs/--sysfs value) is the live tree `live`.
bool IsLiveRoot(const std::string& root, const std::string& live);

}  // namespace jobmon::exporter
