// The explicit list of collectors, in exposition order.
#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "jobmon/exporter/collector.h"
#include "jobmon/exporter/dmesg_collector.h"
#include "jobmon/exporter/gpu_amd_collector.h"
#include "jobmon/exporter/gpu_nvml_collector.h"
#include "jobmon/exporter/gpu_process_collector.h"
#include "jobmon/exporter/host_collector.h"
#include "jobmon/exporter/job_process_collector.h"
#include "jobmon/exporter/net_collector.h"
#include "jobmon/exporter/pfc_collector.h"
#include "jobmon/exporter/rdma_collector.h"
#include "jobmon/exporter/training_collector.h"

namespace jobmon::exporter {

namespace {

// NVML is loaded once, when the pool asks whether the collector can run,
// and shared by every instance made afterwards.
CollectorFactory NvmlFactory(const SourcePaths& paths) {
  const std::string& library = paths.nvml_library;
  auto loaded = std::make_shared<std::shared_ptr<NvmlLibrary>>();
  CollectorFactory factory;
  factory.name = "gpu_nvml";
  factory.why_off = [library, loaded]() -> std::optional<std::string> {
    auto nvml = LoadNvml(library);
    if (!nvml) return nvml.error().message;
    *loaded = *nvml;
    return std::nullopt;
  };
  factory.make = [loaded, gpus = paths.gpus, procfs = paths.procfs, job = paths.job_id] {
    return std::make_unique<GpuNvmlCollector>(*loaded, gpus, procfs, job);
  };
  return factory;
}

ListPidsOptions ListPidsOptionsOf(const SourcePaths& paths) {
  ListPidsOptions options;
  options.scontrol = paths.scontrol;
  options.job_id = paths.job_id;
  options.node = paths.slurm_node;
  options.slurm_conf = paths.slurm_conf;
  return options;
}

}  // namespace

std::vector<CollectorFactory> BuiltinCollectors(const SourcePaths& paths) {
  std::vector<CollectorFactory> all = {
      {"host", [p = paths.procfs] { return std::make_unique<HostCollector>(p); }, {}},
      {"net", [p = paths.procfs] { return std::make_unique<NetCollector>(p); }, {}},
      {"tcp", [p = paths.procfs] { return std::make_unique<TcpCollector>(p); }, {}},
      {"rdma", [s = paths.sysfs] { return std::make_unique<RdmaCollector>(s); }, {}},
      {"pfc",
       [p = paths.procfs, s = paths.sysfs] { return std::make_unique<PfcCollector>(p, s); },
       {}},
      {"dmesg",
       [d = paths.dev, k = paths.kmsg] {
         return k ? std::make_unique<DmesgCollector>(*k) : std::make_unique<DmesgCollector>(d);
       },
       {}},
      {"gpu_processes",
       [p = paths.procfs, d = paths.dev] { return std::make_unique<GpuProcessCollector>(p, d); },
       {}},
      {"gpu_amd",
       [s = paths.sysfs, g = paths.gpus] { return std::make_unique<GpuAmdCollector>(s, g); },
       {}},
      NvmlFactory(paths),
      {"job_processes",
       [p = paths.procfs, j = paths.job_id, listpids = ListPidsOptionsOf(paths)] {
         // Each instance keeps its own answer: one abandoned while stuck
         // never shares it with its replacement.
         auto command = std::make_shared<ListPidsCommand>(listpids);
         return std::make_unique<JobProcessCollector>(p, j, JobProcessLimits{},
                                                      [command] { return command->Get(); });
       },
       [j = paths.job_id]() -> std::optional<std::string> {
         if (j.empty()) return "needs --job-id";
         return std::nullopt;
       }},
  };
  // training needs --tfevents
  if (!paths.tfevents.empty()) {
    all.push_back({"training",
                   [d = paths.tfevents, t = paths.started] {
                     return std::make_unique<TrainingCollector>(d, t);
                   },
                   {}});
  }
  return all;
}

Expected<std::vector<CollectorFactory>> SelectCollectors(std::vector<CollectorFactory> all,
                                                         const std::string& names) {
  if (names.empty()) return all;
  std::vector<CollectorFactory> selected;
  std::set<std::string> seen;
  std::stringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& f) { return f.name == name; });
    if (it == all.end()) {
      std::string known;
      for (const auto& f : all) known += " " + f.name;
      return Error{"unknown collector '" + name + "' (known:" + known + ")"};
    }
    if (seen.insert(name).second) selected.push_back(*it);
  }
  return selected;
}

std::vector<std::string> DropUnavailable(std::vector<CollectorFactory>& collectors) {
  std::vector<std::string> messages;
  std::erase_if(collectors, [&](const CollectorFactory& f) {
    if (!f.why_off) return false;
    auto why = f.why_off();
    if (why) messages.push_back(f.name + " off: " + *why);
    return why.has_value();
  });
  return messages;
}

}  // namespace jobmon::exporter
