#pragma once
#include <optional>
#include <string_view>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// RDMA/RoCE ports under <sysfs>/class/infiniband/<dev>/ports/<port>/:
// hw_rdma_* counters {device, port} from hw_counters/ (driver-specific
// names, mapped by an explicit alias list: first file present wins) or the
// standard counters/ (port_*_data counts 4-byte words), and
// hw_rdma_port_state (1 = ACTIVE). Counters a NIC lacks, or that read
// "N/A (no PMA)", are skipped; a file holding anything but a counter drops
// its own series and is a problem (collector.h). Each file is served under
// one name only, so sums over hw_rdma_* count nothing twice.
class RdmaCollector : public Collector {
 public:
  explicit RdmaCollector(std::string sysfs) : sysfs_(std::move(sysfs)) {}
  Expected<Families> Collect() override;

 private:
  std::string sysfs_;
};

// A port's state file, as drivers/infiniband/core/sysfs.c state_show prints
// it ("%d: %s\n", enum ib_port_state: 0 NOP, 1 DOWN, 2 INIT, 3 ARMED,
// 4 ACTIVE, 5 ACTIVE_DEFER): 1 for 4 only, 0 for any other number, nullopt
// for text without the number.
std::optional<int> ParsePortActive(std::string_view text);

}  // namespace jobmon::exporter
