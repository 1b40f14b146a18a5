#pragma once
#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// RDMA/RoCE ports under <sysfs>/class/infiniband/<dev>/ports/<port>/:
// hw_rdma_* counters {device, port} from hw_counters/ (driver-specific
// names, mapped by an explicit alias list: first file present wins) or the
// standard counters/ (port_*_data counts 4-byte words), and
// hw_rdma_port_state (1 = ACTIVE). Counters a NIC lacks are skipped.
class RdmaCollector : public Collector {
 public:
  explicit RdmaCollector(std::string sysfs) : sysfs_(std::move(sysfs)) {}
  Expected<Families> Collect() override;

 private:
  std::string sysfs_;
};

}  // namespace jobmon::exporter
