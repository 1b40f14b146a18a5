#include "jobmon/monitor/stall_classifier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "jobmon/common/percentile.h"
#include "jobmon/common/power_judgement.h"

namespace jobmon::monitor {
namespace {

// Busy-wait signals for the band the power ratio cannot decide.
constexpr double kMaxClockFraction = 0.95;    // "at its maximum SM clock"
constexpr double kIdleMemoryUtilization = 5;  // percent; a spin touches one flag
constexpr double kFlatPowerSpread = 0.10;     // +-5% around the mean

enum class HostState { kGone, kDead, kActive, kBusyWait, kIdle, kUnknown };

// The NVIDIA signals other than power: every one that is present must say
// "spinning", and clock and memory must both be present.
bool SpinsLikeABusyWait(const HostEvidence& host) {
  if (Mean(host.gpu_utilization) < power::kBusyUtilizationPercent) return false;
  if (host.sm_clock_mhz.empty() || !host.sm_clock_max_mhz || host.memory_utilization.empty()) {
    return false;
  }
  if (host.power_capped.value_or(false)) return false;  // capped: the clock says nothing
  double lowest_clock = *std::min_element(host.sm_clock_mhz.begin(), host.sm_clock_mhz.end());
  if (lowest_clock < kMaxClockFraction * *host.sm_clock_max_mhz) return false;
  double busiest_memory =
      *std::max_element(host.memory_utilization.begin(), host.memory_utilization.end());
  if (busiest_memory > kIdleMemoryUtilization) return false;
  return !host.power_spread || *host.power_spread <= kFlatPowerSpread;
}

HostState Judge(const HostEvidence& host, double stale_after) {
  if (!host.exporter_up || host.seconds_since_seen > stale_after) return HostState::kGone;
  if (host.job_gpu_processes && *host.job_gpu_processes == 0) return HostState::kDead;
  if (host.gpu_power.empty()) return HostState::kUnknown;
  switch (power::JudgePower(Mean(host.gpu_utilization), Mean(host.gpu_power), host.baseline_power,
                            host.idle_power_floor)) {
    case power::PowerState::kDead:
      return HostState::kDead;
    case power::PowerState::kActive:
      return HostState::kActive;
    case power::PowerState::kBusyWait:
      return HostState::kBusyWait;
    case power::PowerState::kIdle:
      return HostState::kIdle;
    case power::PowerState::kBetween:
    case power::PowerState::kUnknown:
      break;
  }
  // The band power cannot decide, or no baseline: the NVIDIA signals.
  return SpinsLikeABusyWait(host) ? HostState::kBusyWait : HostState::kUnknown;
}

}  // namespace

std::string SharedNodeNote(const HostEvidence& host) {
  if (!host.node_shared) return "";
  std::string gpus =
      host.served_gpus && host.node_gpus
          ? fmt::format("the job's {} of the node's {} GPUs", *host.served_gpus, *host.node_gpus)
          : "the job's GPUs";
  return "; node shared with other jobs: GPU figures are " + gpus +
         ", host-level series (TCP, I/O pressure, D state) are node-wide";
}

std::string DescribeProcess(const ProcessWait& p) {
  std::string out =
      fmt::format("{}{} pid {} {} in {}", p.task.empty() ? "" : "task " + p.task + ": ", p.comm,
                  p.pid, p.state, p.wchan);
  int threads = 0;
  for (const auto& [state, n] : p.threads) threads += n;
  if (threads > 1) {
    std::string states, wchans;
    for (const auto& [state, n] : p.threads) {
      states += fmt::format("{}{} {}", states.empty() ? "" : ", ", n, state);
    }
    for (const auto& [wchan, n] : p.thread_wchans) {
      wchans += fmt::format("{}{} {}", wchans.empty() ? "" : ", ", wchan, n);
    }
    out +=
        fmt::format(" ({} threads: {}{}{})", threads, states, wchans.empty() ? "" : "; ", wchans);
  }
  return out;
}

namespace {

// A process, or one of its threads, in uninterruptible sleep: waiting on a
// filesystem or a device, which no collective timeout ends.
bool InDState(const ProcessWait& p) {
  auto d = p.threads.find("D");
  return p.state == "D" || (d != p.threads.end() && d->second > 0);
}

constexpr size_t kProcessesShown = 4;

}  // namespace

StallClassification ClassifyStall(const StallEvidence& evidence) {
  StallClassification out;
  std::vector<std::string> gone, active, busy, idle, blocked_hosts, blocked;
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
      if (host.idle_power_floor) {
        line += fmt::format(", idle floor {:.0f} W", *host.idle_power_floor);
      }
      if (!host.sm_clock_mhz.empty() && host.sm_clock_max_mhz) {
        line += fmt::format(", SM clock {:.0f} of {:.0f} MHz{}", Mean(host.sm_clock_mhz),
                            *host.sm_clock_max_mhz,
                            host.power_capped.value_or(false) ? " (power-capped)" : "");
      }
      if (!host.memory_utilization.empty()) {
        line += fmt::format(", memory util {:.0f}%", Mean(host.memory_utilization));
      }
      if (host.job_gpu_processes && *host.job_gpu_processes == 0) {
        line += ", no process of the job left on its GPUs";
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
    if (host.io_pressure_some && *host.io_pressure_some >= power::kHighIoPressurePercent) {
      line += fmt::format("; I/O pressure {:.0f}%", *host.io_pressure_some);
    }
    if (host.procs_blocked && *host.procs_blocked >= 1) {
      line += fmt::format("; {:.0f} processes blocked in D state", *host.procs_blocked);
    }
    line += SharedNodeNote(host);
    if (!host.job_processes.empty()) {
      // A task's processes (the ranks) before the batch script's, srun's
      // and Slurm's own.
      std::vector<const ProcessWait*> shown;
      for (const ProcessWait& p : host.job_processes) {
        if (!p.task.empty()) shown.push_back(&p);
      }
      for (const ProcessWait& p : host.job_processes) {
        if (p.task.empty()) shown.push_back(&p);
      }
      std::string waits;
      for (size_t i = 0; i < shown.size() && i < kProcessesShown; ++i) {
        waits += (i ? "; " : "") + DescribeProcess(*shown[i]);
      }
      if (host.job_processes.size() > kProcessesShown) {
        waits += fmt::format("; {} more", host.job_processes.size() - kProcessesShown);
      }
      line += "; the job's processes wait on: " + waits;
    }
    bool host_blocked = false;
    const bool sustained =
        !host.d_state_seconds || *host.d_state_seconds >= kSustainedDStateSeconds;
    for (const ProcessWait& p : host.job_processes) {
      if (!sustained) break;
      if (!InDState(p)) continue;
      host_blocked = true;
      if (blocked.size() < kProcessesShown)
        blocked.push_back(host.host + ": " + DescribeProcess(p));
    }
    if (host_blocked && state != HostState::kGone) blocked_hosts.push_back(host.host);
    out.evidence.push_back(line);
  }
  const size_t n = evidence.hosts.size();
  if (!gone.empty()) {
    out.klass = "hang/node-death";
    out.hosts = gone;
    out.summary = fmt::format(
        "{} of {} hosts gone, at 0 W or without the job's process ({}); the others wait for them",
        gone.size(), n, fmt::join(gone, ", "));
  } else if (!blocked_hosts.empty()) {
    // What the others wait for in the collective is stuck in the kernel:
    // not a collective deadlock, and no collective timeout will end it.
    out.klass = "hang/io-wait";
    out.hosts = blocked_hosts;
    out.summary = fmt::format(
        "the job's processes in D state (uninterruptible: a filesystem or device) on {}: {}; "
        "the other ranks wait for them, not a collective deadlock",
        fmt::join(blocked_hosts, ", "), fmt::format("{}", fmt::join(blocked, "; ")));
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
    out.summary =
        fmt::format("{} still at training-level power while the others wait: the straggler",
                    fmt::join(active, ", "));
  } else {
    out.klass = "hang";
    out.summary = "training stopped; the system evidence fits no known pattern";
  }
  return out;
}

}  // namespace jobmon::monitor
