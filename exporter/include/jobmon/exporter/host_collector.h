#pragma once
#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// hw_procs_*, hw_context_switches_total, hw_oom_kills_total, hw_mem_*,
// hw_io_pressure_* (stall time as hw_io_pressure_{some,full}_stall_seconds_total).
class HostCollector : public Collector {
 public:
  explicit HostCollector(std::string procfs) : procfs_(std::move(procfs)) {}
  Expected<Families> Collect() override;

 private:
  std::string procfs_;
};

}  // namespace jobmon::exporter
