#pragma once
// A job's recent system evidence in bounded memory: the series the
// playbooks need, per host, for a fixed horizon (60 min by default). Fed
// with each scrape of the job's exporters; read when a stall is detected.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/stall_classifier.h"

namespace jobmon::monitor {

// The series kept (everything else in a scrape is dropped on arrival).
bool IsWindowSeries(const std::string& name);
const std::vector<std::string>& WindowSeriesNames();
// Everything AddScrape reads: the kept series and the GPU-sharing facts
// (hw_gpu_served, hw_gpu_node_shared, hw_gpu_node_gpus). What the monitor
// asks a central store for.
const std::vector<std::string>& WindowInputNames();

class MetricWindow {
 public:
  explicit MetricWindow(double horizon_seconds = 3600, size_t max_points_per_series = 1024)
      : horizon_(horizon_seconds), max_points_(max_points_per_series) {}

  // One scrape of `host` at time `t`: its samples, or a failed scrape.
  void AddScrape(const std::string& host, double t, const Exposition& scrape);
  void AddFailedScrape(const std::string& host, double t);
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

  // The newest sample of a per-host series (`tb_step`), the largest value
  // across hosts at the newest time; nullopt when no host has one.
  struct Latest {
    double t = 0;
    double value = 0;
  };
  std::optional<Latest> LatestOf(const std::string& name) const;

  size_t point_count() const;
  // Scrapes of training needed before a host's power baseline counts.
  static constexpr size_t kMinBaselineScrapes = 5;
  size_t series_count() const { return series_.size(); }

  // A GPU's idle power, learned from every scrape (not trimmed with the
  // window): the lowest power seen while a compute process was on it and
  // its utilization was at most kIdleUtilization (a context open, no work:
  // ~120 W on an H100), else the lowest seen with no process and no work
  // (the device's own idle, 71 W on an H100, which only makes power look
  // further above the floor, towards "active"). Only GPUs that report
  // hw_gpu_compute_processes (NVML) learn one: AMD keeps its measured rules.
  static constexpr double kIdleUtilization = 5;
  std::optional<double> IdleFloor(const std::string& host, const std::string& gpu) const;
  std::vector<std::string> hosts() const;

 private:
  struct Point {
    double t;
    double value;
  };
  struct Scrape {
    double t;
    bool ok;
  };
  void Trim(std::deque<Point>& points, double now) const;

  double horizon_;
  size_t max_points_;
  // (host, name, gpu/device label) -> points
  std::map<std::tuple<std::string, std::string, std::string>, std::deque<Point>> series_;
  std::map<std::string, std::deque<Scrape>> hosts_;  // scrape outcomes per host
  struct Floors {
    std::optional<double> with_context;  // a process on the GPU, idle
    std::optional<double> device;        // no process, idle
  };
  void LearnFloors(const std::string& host, const Exposition& scrape);
  std::map<std::pair<std::string, std::string>, Floors> floors_;  // (host, gpu)
  // The job's GPUs per host, from the exporter's hw_gpu_served (absent: an
  // exporter that does not say, so every GPU it reports counts), and the
  // node's sharing (hw_gpu_node_shared, hw_gpu_node_gpus), from the newest scrape.
  struct Served {
    std::set<std::string> gpus;
    bool shared = false;
    std::optional<int> node_gpus;
  };
  std::map<std::string, Served> served_;
  bool Serves(const std::string& host, const std::string& gpu) const;
  // Hosts whose GPUs have carried a compute process: only there does a
  // count of 0 mean the job's process is gone (not "not started yet").
  std::set<std::string> had_processes_;
};

}  // namespace jobmon::monitor
