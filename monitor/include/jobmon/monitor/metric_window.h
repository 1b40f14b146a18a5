#pragma once
// A job's recent system evidence in bounded memory: the series the
// playbooks need, per host, for a fixed horizon (60 min by default). Fed
// with each scrape of the job's exporters; read when a stall is detected.

#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "jobmon/common/power_judgement.h"
#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/monitor/time_ring.h"

namespace jobmon::monitor {

// The series kept (everything else in a scrape is dropped on arrival).
bool IsWindowSeries(const std::string& name);
const std::vector<std::string>& WindowSeriesNames();
// `name`'s place in WindowSeriesNames(); its size() when not kept.
size_t SeriesNameIndex(const std::string& name);
// The series a training baseline is learned from (power, the clock maximum,
// TCP retransmits) and tb_step: all a healthy job's window keeps
// (scrape_cadence.h).
bool IsBaselineSeries(const std::string& name);
// Everything AddScrape reads: the kept series, the GPU-sharing facts
// (hw_gpu_served, hw_gpu_node_shared, hw_gpu_node_gpus) and what the job's
// processes wait on (hw_job_process*). What the monitor asks a central
// store for.
const std::vector<std::string>& WindowInputNames();

// What a job's window keeps at most, whatever its exporters answer (or its
// Prometheus writes to a central store): a job's own HTTP server on its
// node can answer each scrape with `gpu` labels never seen before.
// A host holds at most WindowSeriesNames().size() x (max_gpus_per_host + 1)
// = 16 x 65 series (each kept name per GPU, and host-wide), a job at most
// max_series, a series at most max_points_per_series points. A series
// costs ~0.3 KiB with one point, 6.6 KiB with the daemon's 360 (a scrape
// per 10 s over 3600 s), 16.3 KiB with 1024 (its key and TimeRing, glibc). So
// a host that invents labels costs <= 1,040 series (~7 MiB at 360 points),
// and a job <= 2^18 series (~1.7 GiB at 360 points, ~4.1 GiB at 1024): the shape
// of 4,032 hosts of 8 NVIDIA GPUs (65 series each).
struct WindowLimits {
  // The job's nodes, generously (the window is not told how many): the
  // scrapes of hosts beyond it are dropped.
  size_t max_hosts = 4096;
  size_t max_series = size_t{1} << 18;
  // Distinct GPU labels per host, the first seen kept: a node has at most
  // 16 GPUs today. With hw_gpu_served, only served GPUs count at all.
  size_t max_gpus_per_host = 64;
};
// GPU labels are device indices (exporter/src/gpu_nvml_collector.cc); a
// longer one is dropped: 64 labels cannot each hold a whole scrape body
// (kMaxScrapeBody, jobmon/monitor/scrape.h: 2 MiB).
inline constexpr size_t kMaxGpuLabelBytes = 64;

// A GPU's learned idle power (see MetricWindow::IdleFloor).
struct IdleFloors {
  std::optional<double> with_context;  // a process on the GPU, idle
  std::optional<double> device;        // no process, idle
  bool operator==(const IdleFloors&) const = default;
};

// What a host's evidence takes from before the stall, as Evidence computes
// it for a training span: the power baseline, the TCP retransmit rate of
// the minute before the stall and the rate before that, the SM clock
// maximum and the learned idle floors. Taken out while the job trains and
// kept in the state store, it goes back into the window of a daemon
// restarted after the job hung, which has no sample of the training.
struct HostBaseline {
  std::optional<double> power;                    // HostEvidence::baseline_power
  std::optional<double> tcp_retransmit_rate;      // HostEvidence::tcp_retransmit_rate
  std::optional<double> tcp_retransmit_baseline;  // HostEvidence::tcp_retransmit_baseline
  std::optional<double> sm_clock_max;             // HostEvidence::sm_clock_max_mhz
  std::map<std::string, IdleFloors> idle_floors;  // per GPU label
  double training_from = 0, training_until = 0;   // the span it was computed for
  bool empty() const {
    return !power && !tcp_retransmit_rate && !tcp_retransmit_baseline && !sm_clock_max &&
           idle_floors.empty();
  }
  bool operator==(const HostBaseline&) const = default;
};

class MetricWindow {
 public:
  explicit MetricWindow(double horizon_seconds = 3600, size_t max_points_per_series = 1024,
                        WindowLimits limits = {})
      : horizon_(horizon_seconds), max_points_(max_points_per_series), limits_(limits) {}

  // Which of a scrape's series are kept: all, the baseline's only
  // (IsBaselineSeries), or (a history filling in, older than the window's
  // own scrapes) the others, only into series that have no newer point,
  // its outcome not recorded. The GPU sets, the floors and the processes
  // are read from every scrape.
  enum class Keep { kAll, kBaseline, kLacking };
  // One scrape of `host` at time `t`: its samples, or a failed scrape.
  void AddScrape(const std::string& host, double t, const Exposition& scrape,
                 Keep keep = Keep::kAll);
  void AddFailedScrape(const std::string& host, double t);
  // Drops every series but the baseline's (a job back to being scraped
  // only for its baseline: the rest would go stale, and hold memory).
  void KeepBaselineSeriesOnly();
  // Drops `host`'s scrapes and points newer than `t`, so that a fuller
  // answer for that span (a central store's, whose newest scrapes may be
  // partly written yet) replaces them. Learnt floors and GPU sets stay.
  void ForgetSince(const std::string& host, double t);

  // GPU series of GPUs outside the served set (another job's, on a shared
  // node) are dropped on arrival: the classifier, the heartbeat verdict and
  // `jobmon status` judge the job by its own GPUs.
  //
  // Per-host evidence as it stood at time `at` (now, or a moment in the
  // past such as crash_time - heartbeat_timeout): only samples and scrapes
  // at or before `at` count. Each host's training power baseline comes from
  // samples between the first and the last step's times (the compile phase
  // and the stall itself stay out of it). On NVIDIA hosts it adds the SM
  // clock and its maximum, the power cap, memory utilization, the power
  // spread over the later half of the stall, the job's compute processes
  // and the learned idle floor (see IdleFloor).

  StallEvidence Evidence(double at, double training_from, double training_until,
                         double stale_after_seconds) const;

  // Each scraped host's HostBaseline for a training span, as Evidence with
  // the same arguments computes it (restored values included); hosts with
  // none left out.
  std::map<std::string, HostBaseline> Baselines(double at, double training_from,
                                                double training_until,
                                                double stale_after_seconds) const;
  // Puts back a baseline taken out of an earlier window of the job. Evidence
  // uses a restored value only where the host's own samples give none, and
  // only for a span that ends at or after the restored one's (a stall after
  // it); its idle floors count as floors seen (the lowest of both wins). At
  // most limits_.max_hosts hosts and max_gpus_per_host floors per host.
  void RestoreBaseline(const std::string& host, const HostBaseline& baseline);
  // Whether some host has a training power baseline restored: without one a
  // restarted daemon's window knows nothing of the training it missed.
  bool HasRestoredPower() const;

  // The newest sample of a per-host series (`tb_step`), the largest value
  // across hosts at the newest time; nullopt when no host has one.
  struct Latest {
    double t = 0;
    double value = 0;
  };
  std::optional<Latest> LatestOf(const std::string& name) const;

  size_t point_count() const;
  // Scrapes of training needed before a host's power baseline counts.
  static constexpr size_t kMinBaselineScrapes = power::kMinBaselineSamples;
  size_t series_count() const { return series_.size(); }
  // Samples and scrapes dropped by the WindowLimits (not GPUs outside
  // hw_gpu_served: those are another job's, dropped by design).
  size_t dropped_by_limits() const { return dropped_; }

  // A GPU's idle power, learned from every scrape (not trimmed with the
  // window): the lowest power seen while a compute process was on it and
  // its utilization was at most power::kIdleUtilizationPercent (a context open, no work:
  // ~120 W on an H100), else the lowest seen with no process and no work
  // (the device's own idle, 71 W on an H100, which only makes power look
  // further above the floor, towards "active"). Only GPUs that report
  // hw_gpu_compute_processes (NVML) learn one: AMD keeps its measured rules.
  // A restored floor (RestoreBaseline) counts as seen.
  std::optional<double> IdleFloor(const std::string& host, const std::string& gpu) const;
  std::vector<std::string> hosts() const;

  // `host`'s points of series `name` by label (a GPU series: one per GPU
  // the job is served), time order, for the incident's chart.
  std::map<std::string, std::vector<std::pair<double, double>>> PointsOf(
      const std::string& host, const std::string& name) const;
  // When `host`'s last successful scrape at or before `at` was.
  std::optional<double> LastSeen(const std::string& host, double at) const;
  // Since when one of the job's processes on `host` has been in D state
  // without a break (nullopt: none is now).
  std::optional<double> UninterruptibleSince(const std::string& host) const;

 private:
  struct Point {
    double t;
    double value;
  };
  struct Scrape {
    double t;
    bool ok;
  };
  void Trim(TimeRing<Point>& points, double now) const;
  bool AdmitHost(const std::string& host);
  // Erases `host`'s series with no point within the horizon of `now`, so a
  // label seen once does not hold its series for the daemon's lifetime.
  void DropStale(const std::string& host, double now);
  // The series, created within max_series; nullptr beyond it.
  TimeRing<Point>* SeriesOf(const std::string& host, const std::string& name,
                            const std::string& gpu);

  double horizon_;
  size_t max_points_;
  WindowLimits limits_;
  size_t dropped_ = 0;
  // (host, name, gpu/device label) -> points; found by a tuple of references
  // (std::less<>), so a lookup copies no string.
  std::map<std::tuple<std::string, std::string, std::string>, TimeRing<Point>, std::less<>> series_;
  std::map<std::string, TimeRing<Scrape>> hosts_;  // scrape outcomes per host
  // The names a series was ever made for (SeriesNameIndex), so that asking
  // for a name the window never had walks nothing.
  std::bitset<32> names_seen_;
  void LearnFloors(const std::string& host, const Exposition& scrape);
  std::map<std::pair<std::string, std::string>, IdleFloors> floors_;  // (host, gpu)
  // A GPU's floors, learned here or restored.
  IdleFloors FloorsOf(const std::string& host, const std::string& gpu) const;
  // The one computation of a host's HostBaseline, for Evidence and Baselines.
  HostBaseline BaselineOf(const std::string& host, double at, double training_from,
                          double training_until, double stale_after_seconds) const;
  std::map<std::string, HostBaseline> restored_;  // by host (RestoreBaseline)
  // The job's GPUs per host, from the exporter's hw_gpu_served (absent: an
  // exporter that does not say, so every GPU it reports counts), and the
  // node's sharing (hw_gpu_node_shared, hw_gpu_node_gpus), from the newest scrape.
  struct Served {
    std::set<std::string> gpus;
    bool shared = false;
    std::optional<int> node_gpus;
  };
  std::map<std::string, Served> served_;
  // The job's processes per host from its latest scrape that reported them
  // (hw_job_process_*), with the scrape's time; bounded like the labels.
  struct Processes {
    double t = 0;
    std::vector<ProcessWait> waits;
  };
  std::map<std::string, Processes> processes_;
  std::map<std::string, double> d_state_since_;  // by host (UninterruptibleSince)
  void ReadProcesses(const std::string& host, double t, const Exposition& scrape);
  Served ReadServed(const Exposition& scrape) const;
  bool Serves(const std::string& host, const std::string& gpu) const;
  // Each host's GPU labels kept so far (max_gpus_per_host, first seen win;
  // never forgotten, so that floors_ stays as bounded as series_).
  std::map<std::string, std::set<std::string>> gpus_;
  bool AdmitGpu(const std::string& host, const std::string& gpu);
  bool Admitted(const std::string& host, const std::string& gpu) const;
  // Hosts whose GPUs have carried a compute process: only there does a
  // count of 0 mean the job's process is gone (not "not started yet").
  std::set<std::string> had_processes_;
};

}  // namespace jobmon::monitor
