#include "jobmon/monitor/metric_window.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <tuple>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/whole_number.h"
#include "jobmon/triage/step_series.h"

namespace jobmon::monitor {

const std::vector<std::string>& WindowSeriesNames() {
  static const std::vector<std::string> kKept = {
      metric_names::kGpuUtilizationPercent,
      metric_names::kGpuPowerWatts,
      // NVIDIA (gpu_nvml): the busy-wait and dead-process signals.
      metric_names::kGpuClockMhz,  // type="sclk" only
      metric_names::kGpuClockMaxMhz,
      metric_names::kGpuPowerCapped,
      metric_names::kGpuMemoryUtilizationPercent,
      metric_names::kGpuComputeProcesses,
      metric_names::kTcpRetransmitsTotal,
      metric_names::kRdmaTxRetxPktsTotal,
      metric_names::kRdmaTxAckTimeoutTotal,
      metric_names::kRdmaPortState,
      metric_names::kIoPressureSomePct,
      metric_names::kIoPressureFullPct,
      metric_names::kProcsBlocked,
      metric_names::kDmesgGpuErrorsTotal,
      metric_names::kTbStep,
  };
  return kKept;
}

const std::vector<std::string>& WindowInputNames() {
  static const std::vector<std::string> kRead = [] {
    std::vector<std::string> names = WindowSeriesNames();
    names.insert(names.end(), {metric_names::kGpuServed, metric_names::kGpuNodeShared,
                               metric_names::kGpuNodeGpus, metric_names::kJobProcesses,
                               metric_names::kJobProcessInfo, metric_names::kJobProcessThreads,
                               metric_names::kJobProcessWchanThreads});
    return names;
  }();
  return kRead;
}

bool IsWindowSeries(const std::string& name) {
  return SeriesNameIndex(name) < WindowSeriesNames().size();
}

bool IsBaselineSeries(const std::string& name) {
  return name == metric_names::kGpuPowerWatts || name == metric_names::kGpuClockMaxMhz ||
         name == metric_names::kTcpRetransmitsTotal || name == metric_names::kTbStep;
}

size_t SeriesNameIndex(const std::string& name) {
  const auto& kept = WindowSeriesNames();
  return static_cast<size_t>(std::find(kept.begin(), kept.end(), name) - kept.begin());
}

namespace {

// Drops what is older than the horizon; the ring itself holds at most
// max_points_ (it drops its oldest to make room).
template <typename T>
void TrimRing(TimeRing<T>& items, double now, double horizon) {
  while (!items.empty() && items.front().t < now - horizon) items.pop_front();
}

// One series per (host, name, gpu): of the clocks only the SM clock is kept.
bool KeptLabels(const Sample& sample) {
  if (sample.name != metric_names::kGpuClockMhz && sample.name != metric_names::kGpuClockMaxMhz) {
    return true;
  }
  auto type = sample.labels.find("type");
  return type != sample.labels.end() && type->second == "sclk";
}

template <typename T>
void KeepLowest(std::optional<T>& lowest, T value) {
  if (!lowest || value < *lowest) lowest = value;
}

// The last point at or before `at`, if it is no older than `max_age`.
template <typename T>
const T* LatestAt(const TimeRing<T>& items, double at, double max_age) {
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (it->t <= at) return it->t >= at - max_age ? &*it : nullptr;
  }
  return nullptr;
}

// (max - min) / mean; nullopt from fewer than two samples.
std::optional<double> Spread(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  double mean = 0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  if (mean <= 0) return std::nullopt;
  return (*high - *low) / mean;
}

}  // namespace

void MetricWindow::Trim(TimeRing<Point>& points, double now) const {
  TrimRing(points, now, horizon_);
}

bool MetricWindow::Serves(const std::string& host, const std::string& gpu) const {
  auto it = served_.find(host);
  return it == served_.end() || it->second.gpus.empty() || it->second.gpus.count(gpu) > 0;
}

bool MetricWindow::AdmitGpu(const std::string& host, const std::string& gpu) {
  if (!Serves(host, gpu)) return false;  // another job's GPU, not a cap
  auto& known = gpus_[host];
  if (known.count(gpu)) return true;
  if (gpu.size() > kMaxGpuLabelBytes || known.size() >= limits_.max_gpus_per_host) {
    ++dropped_;
    return false;
  }
  known.insert(gpu);
  return true;
}

bool MetricWindow::Admitted(const std::string& host, const std::string& gpu) const {
  auto it = gpus_.find(host);
  return it != gpus_.end() && it->second.count(gpu) > 0 && Serves(host, gpu);
}

bool MetricWindow::AdmitHost(const std::string& host) {
  if (hosts_.count(host) || hosts_.size() < limits_.max_hosts) return true;
  ++dropped_;
  return false;
}

void MetricWindow::DropStale(const std::string& host, double now) {
  for (auto it = series_.lower_bound({host, "", ""});
       it != series_.end() && std::get<0>(it->first) == host;) {
    const bool stale = it->second.empty() || it->second.back().t < now - horizon_;
    it = stale ? series_.erase(it) : std::next(it);
  }
}

TimeRing<MetricWindow::Point>* MetricWindow::SeriesOf(const std::string& host,
                                                      const std::string& name,
                                                      const std::string& gpu) {
  const auto key = std::tie(host, name, gpu);
  auto it = series_.lower_bound(key);
  if (it != series_.end() && it->first == key) return &it->second;
  if (series_.size() >= limits_.max_series) {
    ++dropped_;
    return nullptr;
  }
  if (const size_t index = SeriesNameIndex(name); index < names_seen_.size())
    names_seen_.set(index);
  return &series_.emplace_hint(it, std::make_tuple(host, name, gpu), TimeRing<Point>(max_points_))
              ->second;
}

MetricWindow::Served MetricWindow::ReadServed(const Exposition& scrape) const {
  Served served;
  for (const Sample& sample : scrape.samples) {
    if (sample.name == metric_names::kGpuServed && sample.value >= 1) {
      auto gpu = sample.labels.find("gpu");
      if (gpu != sample.labels.end() && gpu->second.size() <= kMaxGpuLabelBytes &&
          served.gpus.size() < limits_.max_gpus_per_host) {
        served.gpus.insert(gpu->second);
      }
    } else if (sample.name == metric_names::kGpuNodeShared && sample.value >= 1) {
      served.shared = true;
    } else if (sample.name == metric_names::kGpuNodeGpus) {
      served.node_gpus = served.node_gpus.value_or(0) + static_cast<int>(sample.value);
    }
  }
  return served;
}

void MetricWindow::AddScrape(const std::string& host, double t, const Exposition& scrape,
                             Keep keep) {
  if (!AdmitHost(host)) return;
  auto& scrapes = hosts_.try_emplace(host, max_points_).first->second;
  if (keep != Keep::kLacking) {
    scrapes.push_back({t, true});
    TrimRing(scrapes, t, horizon_);
  }
  served_[host] = ReadServed(scrape);
  DropStale(host, t);
  // A point into its series; a history filling in (kLacking) only into a
  // series with nothing as new, so that each stays in time order.
  auto append = [&](TimeRing<Point>* points, double value) {
    if (!points) return;
    if (keep == Keep::kLacking && !points->empty() && points->back().t >= t) return;
    points->push_back({t, value});
    Trim(*points, t);
  };
  // Counters summed over devices (RDMA ports, NICs) per host; gauges per GPU.
  std::map<std::string, double> sums;
  for (const Sample& sample : scrape.samples) {
    if (!IsWindowSeries(sample.name) || !KeptLabels(sample)) continue;
    if (keep == Keep::kBaseline && !IsBaselineSeries(sample.name)) continue;
    if (keep == Keep::kLacking && IsBaselineSeries(sample.name)) continue;
    auto gpu = sample.labels.find("gpu");
    if (gpu != sample.labels.end()) {
      if (!AdmitGpu(host, gpu->second)) continue;
      append(SeriesOf(host, sample.name, gpu->second), sample.value);
    } else {
      sums[sample.name] += sample.value;
    }
  }
  for (auto& [name, value] : sums) {
    // The step is a position, not a quantity: several event files on one
    // host report the same run, so the furthest one counts.
    if (name == metric_names::kTbStep) {
      value = 0;
      for (const Sample& sample : scrape.samples) {
        if (sample.name == name) value = std::max(value, sample.value);
      }
    }
    append(SeriesOf(host, name, ""), value);
  }
  LearnFloors(host, scrape);
  // A history filling in is older than what the window read last.
  if (auto read = processes_.find(host);
      keep != Keep::kLacking || read == processes_.end() || read->second.t < t) {
    ReadProcesses(host, t, scrape);
  }
  if (auto kept = processes_.find(host); kept != processes_.end() && kept->second.t == t) {
    const auto& waits = kept->second.waits;
    const bool d_state = std::any_of(waits.begin(), waits.end(), [](const ProcessWait& p) {
      auto d = p.threads.find("D");
      return p.state == "D" || (d != p.threads.end() && d->second > 0);
    });
    if (!d_state) {
      d_state_since_.erase(host);
    } else if (!d_state_since_.count(host)) {
      d_state_since_[host] = t;
    }
  }
}

void MetricWindow::ReadProcesses(const std::string& host, double t, const Exposition& scrape) {
  // The exporter caps these (docs/exporter.md, job_processes); a job's own
  // HTTP server answering as its exporter is capped here again.
  constexpr size_t kMaxProcesses = 64, kMaxLabelBytes = 64, kMaxPerProcess = 16;
  auto label = [&](const Sample& s, const char* key) {
    auto found = s.labels.find(key);
    return found == s.labels.end() ? std::string() : found->second.substr(0, kMaxLabelBytes);
  };
  bool reported = false;
  std::map<std::string, ProcessWait> by_pid;
  for (const Sample& s : scrape.samples) {
    if (s.name == metric_names::kJobProcesses) reported = true;
    if (s.name == metric_names::kJobProcessInfo && by_pid.size() < kMaxProcesses) {
      ProcessWait& p = by_pid[label(s, "pid")];
      p.pid = label(s, "pid");
      p.comm = label(s, "comm");
      p.state = label(s, "state");
      p.wchan = label(s, "wchan");
      // A Slurm task id, or nothing: it names the rank's node in an alert.
      const std::string task = label(s, "task");
      if (task.size() <= 9 && WholeNumber<unsigned>(task)) p.task = task;
    }
  }
  if (!reported) return;
  for (const Sample& s : scrape.samples) {
    const bool by_state = s.name == metric_names::kJobProcessThreads;
    if (!by_state && s.name != metric_names::kJobProcessWchanThreads) continue;
    auto p = by_pid.find(label(s, "pid"));
    if (p == by_pid.end()) continue;
    auto& counts = by_state ? p->second.threads : p->second.thread_wchans;
    if (counts.size() < kMaxPerProcess) {
      counts[label(s, by_state ? "state" : "wchan")] = static_cast<int>(s.value);
    }
  }
  Processes& kept = processes_[host];
  kept.t = t;
  kept.waits.clear();
  for (auto& [pid, p] : by_pid) kept.waits.push_back(std::move(p));
}

void MetricWindow::LearnFloors(const std::string& host, const Exposition& scrape) {
  struct Now {
    std::optional<double> power, utilization, processes;
  };
  std::map<std::string, Now> gpus;
  for (const Sample& sample : scrape.samples) {
    auto gpu = sample.labels.find("gpu");
    if (gpu == sample.labels.end() || !Admitted(host, gpu->second)) continue;
    if (sample.name == metric_names::kGpuPowerWatts) gpus[gpu->second].power = sample.value;
    if (sample.name == metric_names::kGpuUtilizationPercent) {
      gpus[gpu->second].utilization = sample.value;
    }
    if (sample.name == metric_names::kGpuComputeProcesses) {
      gpus[gpu->second].processes = sample.value;
    }
  }
  for (const auto& [gpu, now] : gpus) {
    if (!now.processes) continue;  // not NVML
    if (*now.processes > 0) had_processes_.insert(host);
    if (!now.power || !now.utilization || *now.utilization > power::kIdleUtilizationPercent)
      continue;
    IdleFloors& floors = floors_[{host, gpu}];
    KeepLowest(*now.processes > 0 ? floors.with_context : floors.device, *now.power);
  }
}

IdleFloors MetricWindow::FloorsOf(const std::string& host, const std::string& gpu) const {
  IdleFloors floors;
  if (auto it = floors_.find({host, gpu}); it != floors_.end()) floors = it->second;
  if (auto r = restored_.find(host); r != restored_.end()) {
    if (auto it = r->second.idle_floors.find(gpu); it != r->second.idle_floors.end()) {
      if (it->second.with_context) KeepLowest(floors.with_context, *it->second.with_context);
      if (it->second.device) KeepLowest(floors.device, *it->second.device);
    }
  }
  return floors;
}

std::optional<double> MetricWindow::IdleFloor(const std::string& host,
                                              const std::string& gpu) const {
  IdleFloors floors = FloorsOf(host, gpu);
  return floors.with_context ? floors.with_context : floors.device;
}

void MetricWindow::KeepBaselineSeriesOnly() {
  std::erase_if(series_,
                [](const auto& entry) { return !IsBaselineSeries(std::get<1>(entry.first)); });
}

void MetricWindow::AddFailedScrape(const std::string& host, double t) {
  if (!AdmitHost(host)) return;
  auto& scrapes = hosts_.try_emplace(host, max_points_).first->second;
  scrapes.push_back({t, false});
  TrimRing(scrapes, t, horizon_);
  DropStale(host, t);
}

void MetricWindow::ForgetSince(const std::string& host, double t) {
  if (auto it = hosts_.find(host); it != hosts_.end()) {
    while (!it->second.empty() && it->second.back().t > t) it->second.pop_back();
  }
  for (auto it = series_.lower_bound({host, "", ""});
       it != series_.end() && std::get<0>(it->first) == host; ++it) {
    auto& points = it->second;
    while (!points.empty() && points.back().t > t) points.pop_back();
  }
  if (auto it = processes_.find(host); it != processes_.end() && it->second.t > t) {
    processes_.erase(it);
  }
  if (auto it = d_state_since_.find(host); it != d_state_since_.end() && it->second > t) {
    d_state_since_.erase(it);
  }
}

std::optional<MetricWindow::Latest> MetricWindow::LatestOf(const std::string& name) const {
  // Asked of every job every cycle (tb_step, which most jobs lack): a bit
  // first, then a look-up per host, never a walk of the window's series.
  if (const size_t index = SeriesNameIndex(name); index < names_seen_.size() && !names_seen_[index])
    return std::nullopt;
  std::optional<Latest> best;
  for (const auto& [host, scrapes] : hosts_) {
    for (auto it = series_.lower_bound({host, name, ""});
         it != series_.end() && std::get<0>(it->first) == host && std::get<1>(it->first) == name;
         ++it) {
      if (it->second.empty()) continue;
      const Point& p = it->second.back();
      if (!best || p.value > best->value) best = Latest{p.t, p.value};
    }
  }
  return best;
}

size_t MetricWindow::point_count() const {
  size_t n = 0;
  for (const auto& [key, points] : series_) n += points.size();
  return n;
}

std::vector<std::string> MetricWindow::hosts() const {
  std::vector<std::string> out;
  for (const auto& [host, scrapes] : hosts_) out.push_back(host);
  return out;
}

HostBaseline MetricWindow::BaselineOf(const std::string& host, double at, double training_from,
                                      double training_until, double stale_after_seconds) const {
  HostBaseline b;
  b.training_from = training_from;
  b.training_until = training_until;
  std::vector<double> baseline_samples;
  std::set<double> baseline_times;
  std::optional<double> retx_before, retx_start, retx_end;
  double retx_before_t = 0, retx_start_t = 0, retx_end_t = 0;
  // (retx_start: the oldest point, for the baseline rate)
  for (auto it = series_.lower_bound({host, "", ""});
       it != series_.end() && std::get<0>(it->first) == host; ++it) {
    const std::string& name = std::get<1>(it->first);
    const auto& points = it->second;
    if (points.empty()) continue;
    if (name == metric_names::kGpuClockMaxMhz) {
      // The highest maximum: a mixed host must reach the higher one.
      if (const Point* current = LatestAt(points, at, stale_after_seconds)) {
        b.sm_clock_max = std::max(b.sm_clock_max.value_or(0), current->value);
      }
    } else if (name == metric_names::kGpuPowerWatts) {
      for (const Point& p : points) {
        if (p.t >= training_from && p.t <= training_until) {
          baseline_samples.push_back(p.value);
          baseline_times.insert(p.t);
        }
      }
    } else if (name == metric_names::kTcpRetransmitsTotal && points.size() >= 2) {
      // Rate over the last minute before the stall began, against the
      // rate over the window before that.
      for (const Point& p : points) {
        if (p.t > at) break;
        if (p.t <= training_until - 60) {
          retx_before = p.value;
          retx_before_t = p.t;
        }
        if (p.t <= training_until) {
          retx_end = p.value;
          retx_end_t = p.t;
        }
      }
      retx_start = points.front().value;
      retx_start_t = points.front().t;
    }
  }
  // A baseline from a handful of scrapes (a stall a few seconds into
  // training) could be the compile phase or the stall itself: none then.
  if (baseline_times.size() >= kMinBaselineScrapes) {
    b.power = triage::Percentile(baseline_samples, 0.5);
  }
  if (retx_before && retx_end && retx_end_t > retx_before_t) {
    b.tcp_retransmit_rate = (*retx_end - *retx_before) / (retx_end_t - retx_before_t);
    if (retx_before_t > retx_start_t) {
      b.tcp_retransmit_baseline = (*retx_before - *retx_start) / (retx_before_t - retx_start_t);
    }
  }
  // The floors learned here first (at most max_gpus_per_host: gpus_), then
  // restored ones up to the same cap.
  for (auto it = floors_.lower_bound({host, ""}); it != floors_.end() && it->first.first == host;
       ++it) {
    b.idle_floors.emplace(it->first.second, FloorsOf(host, it->first.second));
  }
  auto restored = restored_.find(host);
  if (restored == restored_.end()) return b;
  const HostBaseline& r = restored->second;
  for (const auto& [gpu, floors] : r.idle_floors) {
    if (b.idle_floors.size() >= limits_.max_gpus_per_host) break;
    b.idle_floors.emplace(gpu, FloorsOf(host, gpu));
  }
  // Before a restart the window had the training's samples: where its own
  // give none, the values it had, for a stall after the span they are of.
  if (r.training_until <= training_until) {
    if (!b.power) b.power = r.power;
    if (!b.tcp_retransmit_rate) b.tcp_retransmit_rate = r.tcp_retransmit_rate;
    if (!b.tcp_retransmit_baseline) b.tcp_retransmit_baseline = r.tcp_retransmit_baseline;
    if (!b.sm_clock_max) b.sm_clock_max = r.sm_clock_max;
  }
  return b;
}

std::map<std::string, HostBaseline> MetricWindow::Baselines(double at, double training_from,
                                                            double training_until,
                                                            double stale_after_seconds) const {
  std::map<std::string, HostBaseline> out;
  for (const auto& [host, scrapes] : hosts_) {
    HostBaseline b = BaselineOf(host, at, training_from, training_until, stale_after_seconds);
    if (!b.empty()) out.emplace(host, std::move(b));
  }
  return out;
}

void MetricWindow::RestoreBaseline(const std::string& host, const HostBaseline& baseline) {
  auto it = restored_.find(host);
  if (it == restored_.end() && restored_.size() >= limits_.max_hosts) return;
  HostBaseline kept = baseline;
  kept.idle_floors.clear();
  for (const auto& [gpu, floors] : baseline.idle_floors) {
    if (kept.idle_floors.size() >= limits_.max_gpus_per_host) break;
    if (gpu.size() <= kMaxGpuLabelBytes) kept.idle_floors.emplace(gpu, floors);
  }
  if (kept.empty()) return;
  restored_[host] = std::move(kept);
}

bool MetricWindow::HasRestoredPower() const {
  return std::any_of(restored_.begin(), restored_.end(),
                     [](const auto& entry) { return entry.second.power.has_value(); });
}

StallEvidence MetricWindow::Evidence(double at, double training_from, double training_until,
                                     double stale_after_seconds) const {
  StallEvidence evidence;
  evidence.stale_after_seconds = stale_after_seconds;
  for (const auto& [host, scrapes] : hosts_) {
    HostEvidence h;
    h.host = host;
    if (auto served = served_.find(host); served != served_.end()) {
      h.node_shared = served->second.shared;
      if (!served->second.gpus.empty()) {
        h.served_gpus = static_cast<int>(served->second.gpus.size());
      }
      h.node_gpus = served->second.node_gpus;
    }
    const Scrape* latest = LatestAt(scrapes, at, horizon_);
    h.exporter_up = latest && latest->ok;
    h.seconds_since_seen = 1e9;
    for (auto it = scrapes.rbegin(); it != scrapes.rend(); ++it) {
      if (it->t <= at && it->ok) {
        h.seconds_since_seen = at - it->t;
        break;
      }
    }
    // What comes from before the stall (own samples, else restored ones).
    const HostBaseline baseline =
        BaselineOf(host, at, training_from, training_until, stale_after_seconds);
    h.baseline_power = baseline.power;
    h.sm_clock_max_mhz = baseline.sm_clock_max;
    h.tcp_retransmit_rate = baseline.tcp_retransmit_rate;
    h.tcp_retransmit_baseline = baseline.tcp_retransmit_baseline;
    std::vector<double> floors;
    std::optional<int> processes;
    // Power flatness over the later half of the stall.
    const double spread_from = power::LaterHalfStart(training_until, at);
    for (auto it = series_.lower_bound({host, "", ""});
         it != series_.end() && std::get<0>(it->first) == host; ++it) {
      const std::string& name = std::get<1>(it->first);
      const std::string& gpu = std::get<2>(it->first);
      const auto& points = it->second;
      if (points.empty()) continue;
      const Point* current = LatestAt(points, at, stale_after_seconds);
      if (name == metric_names::kGpuUtilizationPercent) {
        if (current) h.gpu_utilization.push_back(current->value);
      } else if (name == metric_names::kIoPressureSomePct) {
        if (current) h.io_pressure_some = current->value;
      } else if (name == metric_names::kProcsBlocked) {
        if (current) h.procs_blocked = current->value;
      } else if (name == metric_names::kGpuClockMhz) {
        if (current) h.sm_clock_mhz.push_back(current->value);
      } else if (name == metric_names::kGpuPowerCapped) {
        if (current) h.power_capped = h.power_capped.value_or(false) || current->value >= 1;
      } else if (name == metric_names::kGpuMemoryUtilizationPercent) {
        if (current) h.memory_utilization.push_back(current->value);
      } else if (name == metric_names::kGpuComputeProcesses) {
        if (current) processes = processes.value_or(0) + static_cast<int>(current->value);
      } else if (name == metric_names::kGpuPowerWatts) {
        if (current) h.gpu_power.push_back(current->value);
        if (auto floor = IdleFloor(host, gpu)) floors.push_back(*floor);
        std::vector<double> stalled;
        for (const Point& p : points) {
          if (p.t >= spread_from && p.t <= at) stalled.push_back(p.value);
        }
        if (auto spread = Spread(stalled)) {
          h.power_spread = std::max(h.power_spread.value_or(0), *spread);
        }
      }
    }
    if (!floors.empty()) {
      double sum = 0;
      for (double f : floors) sum += f;
      h.idle_power_floor = sum / static_cast<double>(floors.size());
    }
    if (processes && had_processes_.count(host)) h.job_gpu_processes = processes;
    if (auto waits = processes_.find(host); waits != processes_.end() && waits->second.t <= at &&
                                            at - waits->second.t <= stale_after_seconds) {
      h.job_processes = waits->second.waits;
      const auto since = d_state_since_.find(host);
      h.d_state_seconds = since == d_state_since_.end() ? 0 : waits->second.t - since->second;
    }
    evidence.hosts.push_back(std::move(h));
  }
  return evidence;
}

std::map<std::string, std::vector<std::pair<double, double>>> MetricWindow::PointsOf(
    const std::string& host, const std::string& name) const {
  std::map<std::string, std::vector<std::pair<double, double>>> out;
  for (auto it = series_.lower_bound({host, name, ""});
       it != series_.end() && std::get<0>(it->first) == host && std::get<1>(it->first) == name;
       ++it) {
    auto& points = out[std::get<2>(it->first)];
    for (const Point& p : it->second) points.emplace_back(p.t, p.value);
  }
  return out;
}

std::optional<double> MetricWindow::LastSeen(const std::string& host, double at) const {
  auto found = hosts_.find(host);
  if (found == hosts_.end()) return std::nullopt;
  for (auto it = found->second.rbegin(); it != found->second.rend(); ++it) {
    if (it->t <= at && it->ok) return it->t;
  }
  return std::nullopt;
}

std::optional<double> MetricWindow::UninterruptibleSince(const std::string& host) const {
  auto found = d_state_since_.find(host);
  if (found == d_state_since_.end()) return std::nullopt;
  return found->second;
}

}  // namespace jobmon::monitor
