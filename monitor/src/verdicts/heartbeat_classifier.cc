#include "jobmon/monitor/heartbeat_classifier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "jobmon/common/percentile.h"
#include "jobmon/common/power_judgement.h"

namespace jobmon::monitor {
namespace {

// nullopt: the window does not know this host at that time.
std::optional<bool> AliveIn(const StallEvidence& evidence, const std::string& host,
                            std::string& line) {
  for (const HostEvidence& h : evidence.hosts) {
    if (h.host != host) continue;
    if (!h.exporter_up || h.seconds_since_seen > evidence.stale_after_seconds) {
      line = h.exporter_up ? fmt::format("exporter not seen for {:.0f}s", h.seconds_since_seen)
                           : "exporter down";
      return false;
    }
    if (h.gpu_power.empty()) {
      line = "exporter up (no GPU power series)" + SharedNodeNote(h);
      return true;
    }
    double power = Mean(h.gpu_power);
    // Utilization is not kept between a healthy job's sparse scrapes
    // (scrape_cadence.h): unknown then, not 0%.
    line = h.gpu_utilization.empty() ? fmt::format("exporter up, power {:.0f} W", power)
                                     : fmt::format("exporter up, GPU util {:.0f}%, power {:.0f} W",
                                                   Mean(h.gpu_utilization), power);
    if (h.baseline_power && *h.baseline_power > 0) {
      line += fmt::format(" ({:.0f}% of its training baseline)", 100 * power / *h.baseline_power);
    }
    line += SharedNodeNote(h);
    // NVIDIA: a crashed rank leaves its GPUs at 71-121 W, never 0 W; NVML's
    // process list says it is gone.
    if (h.job_gpu_processes && *h.job_gpu_processes == 0) {
      line += ", no process of the job left on its GPUs";
      return false;
    }
    return power >= power::kDeadWatts;
  }
  return std::nullopt;
}

}  // namespace

HeartbeatVerdict ClassifyHeartbeat(const HeartbeatInput& in) {
  HeartbeatVerdict out;
  std::vector<std::string> hosts = in.accused_hosts;
  if (hosts.empty() && in.at_accusation) {
    for (const auto& h : in.at_accusation->hosts) hosts.push_back(h.host);
  }
  out.hosts = hosts;
  std::vector<std::string> dead, alive;
  bool known = false;
  for (const std::string& host : hosts) {
    bool host_dead = false, host_alive = true, host_known = false;
    for (auto [evidence, label] :
         {std::pair{&in.at_silence,
                    fmt::format("at accusation - timeout ({:.0f}s earlier)", in.timeout)},
          std::pair{&in.at_accusation, std::string("at the accusation")}}) {
      if (!*evidence) continue;
      std::string line;
      auto alive_then = AliveIn(**evidence, host, line);
      if (!alive_then) continue;
      host_known = true;
      out.evidence.push_back(fmt::format("{} {}: {}", host, label, line));
      if (!*alive_then) host_dead = true;
      host_alive = host_alive && *alive_then;
    }
    if (!host_known) continue;
    known = true;
    if (host_dead) {
      dead.push_back(host);
    } else if (host_alive) {
      alive.push_back(host);
    }
  }
  std::string log_verdict = in.checklist ? in.checklist->verdict : "no checklist";
  if (in.checklist) {
    for (const std::string& reason : in.checklist->reasons)
      out.evidence.push_back("log: " + reason);
    for (const auto& proof : in.checklist->proof) {
      out.evidence.push_back(fmt::format("log line {}: {}", proof.line, proof.text));
    }
  }
  if (known) {
    out.decided_by_system_evidence = true;
    if (!dead.empty()) {
      out.klass = "heartbeat/true-positive";
      out.summary = fmt::format(
          "the accused host(s) {} really stopped (exporter gone or GPUs at 0 W) around the "
          "heartbeat timeout; log checklist: {}",
          fmt::join(dead, ", "), log_verdict);
    } else {
      out.klass = "heartbeat/false-positive";
      out.summary = fmt::format(
          "the accused host(s) {} were alive and at work both {:.0f}s before and at the "
          "accusation: the coordination service was wrong; log checklist: {}",
          fmt::join(alive, ", "), in.timeout, log_verdict);
    }
    return out;
  }
  if (in.checklist && in.checklist->verdict == "likely-false-positive") {
    out.klass = "heartbeat/false-positive";
    out.summary =
        "no system evidence for the accused hosts; the log checklist says "
        "likely-false-positive";
  } else {
    out.klass = "heartbeat/true-positive";
    out.summary = "no system evidence for the accused hosts; the log checklist says " +
                  log_verdict + ": treated as a real death";
  }
  return out;
}

}  // namespace jobmon::monitor
