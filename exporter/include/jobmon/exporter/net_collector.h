#pragma once
#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// hw_net_{rx,tx}_{bytes,errors,drop}_total{device} from /proc/net/dev.
class NetCollector : public Collector {
 public:
  explicit NetCollector(std::string procfs) : procfs_(std::move(procfs)) {}
  Expected<Families> Collect() override;

 private:
  std::string procfs_;
};

// hw_tcp_* from /proc/net/snmp and /proc/net/netstat.
class TcpCollector : public Collector {
 public:
  explicit TcpCollector(std::string procfs) : procfs_(std::move(procfs)) {}
  Expected<Families> Collect() override;

 private:
  std::string procfs_;
};

}  // namespace jobmon::exporter
