// The explicit list of collectors, in exposition order.
#include "jobmon/exporter/collector.h"
#include "jobmon/exporter/gpu_amd_collector.h"
#include "jobmon/exporter/host_collector.h"
#include "jobmon/exporter/net_collector.h"
#include "jobmon/exporter/rdma_collector.h"
#include "jobmon/exporter/training_collector.h"

namespace jobmon::exporter {

std::vector<CollectorFactory> BuiltinCollectors(const SourcePaths& paths) {
  std::vector<CollectorFactory> all = {
      {"host", [p = paths.procfs] { return std::make_unique<HostCollector>(p); }},
      {"net", [p = paths.procfs] { return std::make_unique<NetCollector>(p); }},
      {"tcp", [p = paths.procfs] { return std::make_unique<TcpCollector>(p); }},
      {"rdma", [s = paths.sysfs] { return std::make_unique<RdmaCollector>(s); }},
      {"gpu_amd", [s = paths.sysfs] { return std::make_unique<GpuAmdCollector>(s); }},
      {"training", [d = paths.tfevents,
                    t = paths.started] { return std::make_unique<TrainingCollector>(d, t); }},
  };
  if (paths.tfevents.empty()) all.pop_back();  // training needs --tfevents
  return all;
}

}  // namespace jobmon::exporter
