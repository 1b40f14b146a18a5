#include "jobmon/monitor/stall_classifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace jobmon::monitor {
namespace {

constexpr double kActiveFraction = 0.7;
constexpr double kIdleFraction = 0.5;
constexpr double kBusyUtilization = 90;
constexpr double kDeadWatts = 5;

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

enum class HostState { kGone, kDead, kActive, kBusyWait, kIdle, kUnknown };

HostState Judge(const HostEvidence& host, double stale_after) {
  if (!host.exporter_up || host.seconds_since_seen > stale_after) return HostState::kGone;
  if (host.gpu_power.empty()) return HostState::kUnknown;
  double power = Mean(host.gpu_power);
  if (power < kDeadWatts) return HostState::kDead;
  if (!host.baseline_power || *host.baseline_power <= 0) return HostState::kUnknown;
  double fraction = power / *host.baseline_power;
  if (fraction >= kActiveFraction) return HostState::kActive;
  if (fraction < kIdleFraction) {
    return Mean(host.gpu_utilization) >= kBusyUtilization ? HostState::kBusyWait : HostState::kIdle;
  }
  return HostState::kUnknown;
}

}  // namespace

StallClassification ClassifyStall(const StallEvidence& evidence) {
  StallClassification out;
  std::vector<std::string> gone, active, busy, idle;
  for (const HostEvidence& host : evidence.hosts) {
    HostState state = Judge(host, evidence.stale_after_seconds);
    std::string line = host.host + ": ";
    if (state == HostState::kGone) {
      line += host.exporter_up
                  ? fmt::format("exporter not seen for {:.0f}s", host.seconds_since_seen)
                  : "exporter down";
      gone.push_back(host.host);
    } else {
      line += fmt::format("GPU util {:.0f}%, power {:.0f} W", Mean(host.gpu_utilization),
                          Mean(host.gpu_power));
      if (host.baseline_power) {
        line +=
            fmt::format(" ({:.0f}% of its training baseline {:.0f} W)",
                        100 * Mean(host.gpu_power) / *host.baseline_power, *host.baseline_power);
      }
      if (state == HostState::kDead) gone.push_back(host.host);
      if (state == HostState::kActive) active.push_back(host.host);
      if (state == HostState::kBusyWait) busy.push_back(host.host);
      if (state == HostState::kIdle) idle.push_back(host.host);
    }
    if (host.tcp_retransmit_rate && host.tcp_retransmit_baseline &&
        *host.tcp_retransmit_rate > 10 * std::max(1.0, *host.tcp_retransmit_baseline)) {
      line += fmt::format("; TCP retransmits {:.1f}/s before the stall (baseline {:.1f}/s)",
                          *host.tcp_retransmit_rate, *host.tcp_retransmit_baseline);
    }
    if (host.io_pressure_some && *host.io_pressure_some >= 10) {
      line += fmt::format("; I/O pressure {:.0f}%", *host.io_pressure_some);
    }
    if (host.procs_blocked && *host.procs_blocked >= 1) {
      line += fmt::format("; {:.0f} processes blocked in D state", *host.procs_blocked);
    }
    out.evidence.push_back(line);
  }
  const size_t n = evidence.hosts.size();
  if (!gone.empty()) {
    out.klass = "hang/node-death";
    out.hosts = gone;
    out.summary = fmt::format("{} of {} hosts gone or at 0 W ({}); the others wait for them",
                              gone.size(), n, Join(gone));
  } else if (n > 0 && active.size() == n) {
    out.klass = "slow-not-hung";
    out.summary =
        "every host's GPUs are still at training-level power: the job is computing, not hung";
  } else if (n > 0 && busy.size() + idle.size() == n && !busy.empty()) {
    out.klass = "hang/busy-wait";
    out.summary = fmt::format(
        "GPUs busy at idle-level power on {} of {} hosts: a collective busy-wait (RCCL/NCCL)",
        busy.size(), n);
  } else if (!active.empty() && active.size() < n) {
    out.klass = "hang/straggler";
    out.hosts = active;
    out.summary = fmt::format(
        "{} still at training-level power while the others wait: the straggler", Join(active));
  } else {
    out.klass = "hang";
    out.summary = "training stopped; the system evidence fits no known pattern";
  }
  return out;
}

}  // namespace jobmon::monitor
