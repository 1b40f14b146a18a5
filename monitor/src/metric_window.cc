#include "jobmon/monitor/metric_window.h"

#include <algorithm>

#include "jobmon/monitor/step_series.h"

namespace jobmon::monitor {

bool IsWindowSeries(const std::string& name) {
  static const char* const kKept[] = {
      "hw_gpu_utilization_percent",
      "hw_gpu_power_watts",
      "hw_tcp_retransmits_total",
      "hw_rdma_tx_retx_pkts_total",
      "hw_rdma_tx_ack_timeout_total",
      "hw_rdma_port_state",
      "hw_io_pressure_some_pct",
      "hw_io_pressure_full_pct",
      "hw_procs_blocked",
      "hw_dmesg_gpu_errors_total",
      "tb_step",
  };
  return std::find(std::begin(kKept), std::end(kKept), name) != std::end(kKept);
}

void MetricWindow::Trim(std::deque<Point>& points, double now) const {
  while (!points.empty() && (points.front().t < now - horizon_ || points.size() > max_points_)) {
    points.pop_front();
  }
}

void MetricWindow::AddScrape(const std::string& host, double t, const Exposition& scrape) {
  HostState& state = hosts_[host];
  state.last_seen = t;
  state.last_ok = true;
  // Counters summed over devices (RDMA ports, NICs) per host; gauges per GPU.
  std::map<std::string, double> sums;
  for (const Sample& sample : scrape.samples) {
    if (!IsWindowSeries(sample.name)) continue;
    auto gpu = sample.labels.find("gpu");
    if (gpu != sample.labels.end()) {
      auto& points = series_[{host, sample.name, gpu->second}];
      points.push_back({t, sample.value});
      Trim(points, t);
    } else {
      sums[sample.name] += sample.value;
    }
  }
  for (const auto& [name, value] : sums) {
    auto& points = series_[{host, name, ""}];
    points.push_back({t, value});
    Trim(points, t);
  }
}

void MetricWindow::AddFailedScrape(const std::string& host, double t) {
  hosts_[host].last_ok = false;
  (void)t;
}

size_t MetricWindow::point_count() const {
  size_t n = 0;
  for (const auto& [key, points] : series_) n += points.size();
  return n;
}

std::vector<std::string> MetricWindow::hosts() const {
  std::vector<std::string> out;
  for (const auto& [host, state] : hosts_) out.push_back(host);
  return out;
}

StallEvidence MetricWindow::Evidence(double now, double training_from, double training_until,
                                     double stale_after_seconds) const {
  StallEvidence evidence;
  evidence.stale_after_seconds = stale_after_seconds;
  for (const auto& [host, state] : hosts_) {
    HostEvidence h;
    h.host = host;
    h.exporter_up = state.last_ok;
    h.seconds_since_seen = state.last_seen ? now - *state.last_seen : 1e9;
    std::vector<double> baseline_samples;
    std::optional<double> retx_before, retx_start, retx_end;
    double retx_before_t = 0, retx_start_t = 0, retx_end_t = 0;
    // (retx_start: the oldest point, for the baseline rate)
    for (const auto& [key, points] : series_) {
      const auto& [series_host, name, gpu] = key;
      if (series_host != host || points.empty()) continue;
      if (name == "hw_gpu_utilization_percent" && points.back().t >= now - stale_after_seconds) {
        h.gpu_utilization.push_back(points.back().value);
      } else if (name == "hw_gpu_power_watts") {
        if (points.back().t >= now - stale_after_seconds)
          h.gpu_power.push_back(points.back().value);
        for (const Point& p : points) {
          if (p.t >= training_from && p.t <= training_until) baseline_samples.push_back(p.value);
        }
      } else if (name == "hw_tcp_retransmits_total" && points.size() >= 2) {
        // Rate over the last minute before the stall began, against the
        // rate over the window before that.
        for (const Point& p : points) {
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
    if (!baseline_samples.empty()) h.baseline_power = triage::Percentile(baseline_samples, 0.5);
    if (retx_before && retx_end && retx_end_t > retx_before_t) {
      h.tcp_retransmit_rate = (*retx_end - *retx_before) / (retx_end_t - retx_before_t);
      if (retx_before_t > retx_start_t) {
        h.tcp_retransmit_baseline = (*retx_before - *retx_start) / (retx_before_t - retx_start_t);
      }
    }
    evidence.hosts.push_back(std::move(h));
  }
  return evidence;
}

}  // namespace jobmon::monitor
