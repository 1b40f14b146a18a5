// host: /proc/stat, /proc/vmstat, /proc/meminfo, /proc/pressure/io.
#include "jobmon/exporter/host_collector.h"

#include "jobmon/common/metric_names.h"
#include "jobmon/exporter/proc_parsers.h"

namespace jobmon::exporter {

Expected<Families> HostCollector::Collect() {
  FamilyBuilder b;
  auto stat_text = ReadSmallFile(procfs_ + "/stat");
  if (!stat_text) return stat_text.error();
  auto stat = ParseSystemStat(*stat_text);
  if (!stat) return stat.error();
  b.Gauge("hw_procs_running", "Runnable processes", {}, static_cast<double>(stat->procs_running));
  b.Gauge(metric_names::kProcsBlocked, "Processes blocked on I/O", {},
          static_cast<double>(stat->procs_blocked));
  b.Counter("hw_context_switches_total", "Context switches", {},
            static_cast<double>(stat->context_switches));

  auto vmstat = ReadSmallFile(procfs_ + "/vmstat");
  if (!vmstat) return vmstat.error();
  auto vm = ParseKeyValues(*vmstat);
  if (auto it = vm.find("oom_kill"); it != vm.end()) {
    b.Counter("hw_oom_kills_total", "OOM killer invocations", {}, static_cast<double>(it->second));
  }

  auto meminfo = ReadSmallFile(procfs_ + "/meminfo");
  if (!meminfo) return meminfo.error();
  auto mem = ParseKeyValues(*meminfo);
  const std::pair<const char*, const char*> memory[] = {{"Dirty", "hw_mem_dirty_bytes"},
                                                        {"Writeback", "hw_mem_writeback_bytes"},
                                                        {"MemAvailable", "hw_mem_available_bytes"}};
  for (const auto& [key, name] : memory) {
    if (auto it = mem.find(key); it != mem.end()) {
      b.Gauge(name, std::string(key) + " memory (/proc/meminfo)", {},
              static_cast<double>(it->second));
    }
  }

  // PSI is absent on kernels built without it: then the io series are too.
  if (auto psi_text = ReadSmallFile(procfs_ + "/pressure/io")) {
    auto psi = ParsePressure(*psi_text);
    if (!psi) return psi.error();
    b.Gauge(metric_names::kIoPressureSomePct, "I/O pressure, some, 10 s average", {},
            psi->some->avg10);
    b.Gauge("hw_io_pressure_some_avg300_pct", "I/O pressure, some, 300 s average", {},
            psi->some->avg300);
    // The reference's hw_io_pressure_*_total_us, in base units: promtool
    // rejects abbreviated units, and no playbook queries it.
    b.Counter("hw_io_pressure_some_stall_seconds_total", "Cumulative I/O stall time, some", {},
              static_cast<double>(psi->some->total_us) / 1e6);
    if (psi->full) {
      b.Gauge(metric_names::kIoPressureFullPct, "I/O pressure, full, 10 s average", {},
              psi->full->avg10);
      b.Gauge("hw_io_pressure_full_avg300_pct", "I/O pressure, full, 300 s average", {},
              psi->full->avg300);
      b.Counter("hw_io_pressure_full_stall_seconds_total", "Cumulative I/O stall time, full", {},
                static_cast<double>(psi->full->total_us) / 1e6);
    }
  }
  return b.Take();
}

}  // namespace jobmon::exporter
