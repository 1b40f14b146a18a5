// host: /proc/stat, /proc/vmstat, /proc/meminfo, /proc/pressure/io.
#include "jobmon/exporter/host_collector.h"

#include "jobmon/common/metric_names.h"
#include "jobmon/exporter/proc_parsers.h"

namespace jobmon::exporter {

Expected<Families> HostCollector::Collect() {
  FamilyBuilder b;
  // Each file's series stand alone: a broken one drops its own and is a
  // problem (collector.h), the others are still served.
  auto read = [&](const std::string& file) -> std::optional<std::string> {
    auto text = ReadSmallFile(procfs_ + file);
    if (!text) {
      Problem(text.error().message);
      return std::nullopt;
    }
    return std::move(text).value();
  };
  auto stat_text = read("/stat");
  auto stat = stat_text ? ParseSystemStat(*stat_text) : Expected<SystemStat>(Error{""});
  if (stat_text && !stat) Problem(procfs_ + "/stat: " + stat.error().message);
  if (stat) {
    b.Gauge(metric_names::kProcsRunning, "Runnable processes", {},
            static_cast<double>(stat->procs_running));
    b.Gauge(metric_names::kProcsBlocked, "Processes blocked on I/O", {},
            static_cast<double>(stat->procs_blocked));
    b.Counter(metric_names::kContextSwitchesTotal, "Context switches", {},
              static_cast<double>(stat->context_switches));
  }

  auto vmstat = read("/vmstat");
  auto vm = vmstat ? ParseKeyValues(*vmstat) : std::map<std::string, uint64_t>{};
  if (auto it = vm.find("oom_kill"); it != vm.end()) {
    b.Counter(metric_names::kOomKillsTotal, "OOM killer invocations", {},
              static_cast<double>(it->second));
  }

  auto meminfo = read("/meminfo");
  auto mem = meminfo ? ParseKeyValues(*meminfo) : std::map<std::string, uint64_t>{};
  const std::pair<const char*, const char*> memory[] = {
      {"Dirty", metric_names::kMemDirtyBytes},
      {"Writeback", metric_names::kMemWritebackBytes},
      {"MemAvailable", metric_names::kMemAvailableBytes}};
  for (const auto& [key, name] : memory) {
    if (auto it = mem.find(key); it != mem.end()) {
      b.Gauge(name, std::string(key) + " memory (/proc/meminfo)", {},
              static_cast<double>(it->second));
    }
  }

  // PSI is absent on kernels built without it: then the io series are too.
  if (auto psi_text = ReadSmallFile(procfs_ + "/pressure/io")) {
    auto psi = ParsePressure(*psi_text);
    if (!psi) {
      Problem(procfs_ + "/pressure/io: " + psi.error().message);
      return b.Take();
    }
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
