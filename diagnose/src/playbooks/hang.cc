// Playbook 1 (docs/diagnose.md, "Hang playbook"): GPU utilization and
// power per host in the hang window, judged against each host's own
// training baseline (common/include/jobmon/common/power_judgement.h), and the network just before
// the hang.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/power_judgement.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/triage/step_series.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

using playbook::MakeFinding;
using power::JudgePower;
using power::kMinBaselineSamples;
using power::PowerState;
using power::TrainingBaseline;

struct HostView {
  std::string host;
  bool reporting = false;           // power samples in the later half of the window
  std::optional<double> last_seen;  // its last power sample
  std::optional<double> baseline;
  double power = 0, util_max = 0;
  std::string busiest_gpu;
  PowerState state = PowerState::kUnknown;
  std::optional<double> since;  // first sample in the window in this state
};

TimeRange HangWindow(const DiagnoseContext& context) {
  if (context.triage.hang_start) return {*context.triage.hang_start, context.job_range.end};
  return playbook::WindowOrJob(context);
}

// The scrapes after the job's processes ended (an operator's scancel of the
// hung job; its exporter stops a few scrapes later, at the job's end): a GPU
// spinning in a collective does not fall idle while its process lives, so
// busy-wait followed by idle GPUs to the end is the job's teardown, and the
// hang is judged up to its last spinning sample. A host that went idle from
// computing (a host-side hang) keeps its idle samples. nullopt: no teardown.
std::optional<double> LastSpinBeforeTeardown(const std::vector<const Series*>& power,
                                             const std::vector<const Series*>& util,
                                             const TimeRange& window,
                                             std::optional<double> baseline) {
  struct AtTime {
    double util_max = 0, power_sum = 0;
    int power_count = 0;
  };
  std::map<double, AtTime> host;  // the host's GPUs, scrape by scrape
  for (const Series* s : util) {
    for (const auto& p : s->samples) {
      if (window.Contains(p.time)) host[p.time].util_max = std::max(host[p.time].util_max, p.value);
    }
  }
  for (const Series* s : power) {
    for (const auto& p : s->samples) {
      auto it = host.find(p.time);
      if (it == host.end()) continue;
      it->second.power_sum += p.value;
      ++it->second.power_count;
    }
  }
  auto last_work = std::find_if(host.rbegin(), host.rend(), [](const auto& at) {
    return at.second.util_max > power::kIdleUtilizationPercent;
  });
  if (last_work == host.rbegin() || last_work == host.rend()) return std::nullopt;
  const AtTime& at = last_work->second;
  if (at.power_count == 0) return std::nullopt;
  if (JudgePower(at.util_max, at.power_sum / at.power_count, baseline) != PowerState::kBusyWait) {
    return std::nullopt;
  }
  return last_work->first;
}

HostView Judge(const std::string& host, const std::vector<const Series*>& power,
               const std::vector<const Series*>& util, const TimeRange& window,
               const DiagnoseContext& context) {
  HostView v;
  v.host = host;
  std::vector<double> training, all;
  for (const Series* s : power) {
    for (const auto& p : s->samples) {
      v.last_seen = std::max(v.last_seen.value_or(p.time), p.time);
      if (context.InCheckpoint(p.time)) continue;
      all.push_back(p.value);
      if (p.time < window.start) training.push_back(p.value);
    }
  }
  v.baseline = TrainingBaseline(training);
  // No training before the window (it is the whole job): the job's high power.
  if (!v.baseline && all.size() >= kMinBaselineSamples) v.baseline = triage::Percentile(all, 0.9);
  const double end = LastSpinBeforeTeardown(power, util, window, v.baseline).value_or(window.end);
  const TimeRange late{power::LaterHalfStart(window.start, end), end};
  auto late_power = playbook::Values(power, late);
  v.reporting = !late_power.empty();
  if (!v.reporting) return v;
  v.power = Mean(late_power);
  for (const Series* s : util) {
    auto stats = StatsOf(*s, late);
    if (stats && stats->mean >= v.util_max) {
      v.util_max = stats->mean;
      v.busiest_gpu = s->Label("gpu");
    }
  }
  v.state = JudgePower(v.util_max, v.power, v.baseline);
  for (const Series* s : power) {
    for (const auto& p : s->samples) {
      if (!window.Contains(p.time)) continue;
      if (JudgePower(v.util_max, p.value, v.baseline) == v.state) {
        v.since = std::min(v.since.value_or(p.time), p.time);
        break;
      }
    }
  }
  return v;
}

// Retransmits, ACK timeouts, port down just before the hang: its trigger.
std::vector<Finding> NetworkTrigger(playbook::Queries& q, const DiagnoseContext& context,
                                    const TimeRange& window, PlaybookResult& result) {
  std::vector<Finding> out;
  const TimeRange job{context.job_range.start, window.end};
  const double step = StepFor(job, context);
  const TimeRange before{window.start - context.rate_window_seconds - 60,
                         window.start + context.rate_window_seconds};
  // floor: the monitor's 1/s for TCP; RDMA errors are ~0 on a clean fabric.
  struct Rate {
    const char *family, *code, *what;
    double floor;
  };
  const Rate rates[] = {
      {metric_names::kTcpRetransmitsTotal, "tcp-retransmits", "TCP retransmits", 1},
      {metric_names::kRdmaTxRetxPktsTotal, "rdma-retransmits", "RDMA retransmits", 0.1},
      {metric_names::kRdmaTxAckTimeoutTotal, "rdma-ack-timeouts", "RDMA ACK timeouts", 0.1},
      {metric_names::kRdmaRxCnpPktsTotal, "rdma-congestion", "congestion notifications", 1}};
  EvidenceTable table;
  table.title = "Network just before the hang (rate per second)";
  for (const auto& r : rates) {
    if (!playbook::Wanted(context, r.family)) continue;
    std::string query = RateExpr(r.family, context);
    table.query += (table.query.empty() ? "" : "; ") + query;
    for (const auto& s : q.Range(query, job, step)) {
      auto spike = playbook::RateSpike(s, before, context, playbook::kSpikeFactor, r.floor);
      if (!spike) continue;
      Finding f = MakeFinding(
          r.code, Severity::kWarning, r.family, s.Label("host"), spike->value, "/s", spike->time,
          fmt::format("{} on {}{} rose to {:.1f}/s at {} (before: {:.1f}/s), as the job hung",
                      r.what, s.Label("host"),
                      s.Label("device").empty() ? "" : " " + s.Label("device"), spike->value,
                      playbook::FormatTime(spike->time), spike->baseline));
      f.device = s.Label("device");
      table.rows.push_back({f.host, f.device, fmt::format("{:.1f}/s", spike->value), f.text});
      out.push_back(std::move(f));
    }
  }
  if (playbook::Wanted(context, metric_names::kRdmaPortState)) {
    const TimeRange around{before.start, window.end};
    const double port_step = StepFor(around, context);
    const std::string ports = OverTimeExpr("min", metric_names::kRdmaPortState, port_step);
    for (const auto& s : q.Range(ports, around, port_step)) {
      if (auto f = playbook::PortDown(s)) {
        table.rows.push_back({f->host, f->device, "0 (down)", f->text});
        out.push_back(std::move(*f));
      }
    }
    table.query += "; " + ports;
  }
  result.evidence.push_back(std::move(table));
  return out;
}

}  // namespace

PlaybookResult RunHangPlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = result.analysis_type = "hang";
  playbook::Queries q(source, result);
  const TimeRange window = HangWindow(context);
  const TimeRange job{context.job_range.start, window.end};
  const double step = StepFor(job, context);
  auto power = q.Range(metric_names::kGpuPowerWatts, job, step);
  auto util = q.Range(metric_names::kGpuUtilizationPercent, job, step);
  auto power_by_host = playbook::ByHost(power);
  auto util_by_host = playbook::ByHost(util);

  EvidenceTable gpus;
  gpus.title = "GPUs during the hang (later half of the window)";
  gpus.query =
      fmt::format("{}; {}", metric_names::kGpuPowerWatts, metric_names::kGpuUtilizationPercent);
  std::vector<std::string> gone, active, busy, idle;
  for (const auto& host : playbook::JobHosts(context)) {
    HostView v = Judge(host, power_by_host[host], util_by_host[host], window, context);
    if (!v.reporting) {
      std::string text = v.last_seen ? fmt::format("{} stopped reporting GPU power at {}", host,
                                                   playbook::FormatTime(*v.last_seen))
                                     : fmt::format("{} has no GPU power samples at all", host);
      result.anomalies.push_back(MakeFinding("host-missing", Severity::kCritical,
                                             metric_names::kGpuPowerWatts, host, std::nullopt, "",
                                             v.last_seen, text));
      gpus.rows.push_back({host, "", "no samples", text});
      gone.push_back(host);
      continue;
    }
    std::string value =
        fmt::format("util {:.0f}% (GPU {}), power {:.0f} W", v.util_max, v.busiest_gpu, v.power);
    if (v.baseline)
      value +=
          fmt::format(" = {:.0f}% of training {:.0f} W", 100 * v.power / *v.baseline, *v.baseline);
    gpus.rows.push_back({host, "all", value, ToString(v.state)});
    auto add = [&](const char* code, Severity severity, std::string text) {
      Finding f = MakeFinding(code, severity, metric_names::kGpuPowerWatts, host, v.power, "W",
                              v.since, std::move(text));
      f.gpu = v.busiest_gpu;
      result.anomalies.push_back(std::move(f));
    };
    switch (v.state) {
      case PowerState::kDead:
        add("node-dead", Severity::kCritical, fmt::format("{}: GPUs at {:.0f} W", host, v.power));
        gone.push_back(host);
        break;
      case PowerState::kActive:
        active.push_back(host);
        break;
      case PowerState::kBusyWait:
        add("util-high-power-idle", Severity::kWarning,
            fmt::format("{}: GPU util {:.0f}% at {:.0f} W, {:.0f}% of its training power: spinning "
                        "in a collective",
                        host, v.util_max, v.power, 100 * v.power / v.baseline.value_or(v.power)));
        busy.push_back(host);
        break;
      case PowerState::kIdle:
        idle.push_back(host);
        break;
      default:
        break;
    }
  }
  result.evidence.push_back(std::move(gpus));
  auto network = NetworkTrigger(q, context, window, result);
  const bool triggered = std::any_of(network.begin(), network.end(), [](const Finding& f) {
    return f.code != "rdma-congestion";  // congestion slows; it does not stall
  });
  result.anomalies.insert(result.anomalies.end(), network.begin(), network.end());

  const size_t n = playbook::JobHosts(context).size();
  if (!gone.empty()) {
    result.verdict = "node-death";
    result.summary = fmt::format(
        "{} of {} hosts died ({}): no GPU power samples or 0 W; the others waited for them.",
        gone.size(), n, playbook::Join(gone));
    result.next_steps = {"Check hw_dmesg_gpu_errors_total and hw_gpu_ras_* on " +
                             playbook::Join(gone) + " (jobmon diagnose --playbook hardware)",
                         "Check the nodes' state in Slurm (scontrol show node) and their syslog"};
  } else if (n > 0 && active.size() == n) {
    result.verdict = "not-a-hang";
    result.summary =
        "Every host's GPUs stayed at training-level power: the job was computing, "
        "not hung.";
    result.next_steps = {"Re-check the triage classification: a slow step is not a hang"};
  } else if (!busy.empty() && busy.size() + idle.size() == n) {
    result.verdict = triggered ? "network-triggered-hang" : "busy-wait-hang";
    result.summary = fmt::format(
        "GPUs busy at idle-level power on {} of {} hosts ({}): a collective busy-wait (RCCL/NCCL) "
        "hang{}.",
        busy.size(), n, playbook::Join(busy),
        triggered ? ", after a network event just before it (see the network findings)"
                  : ", with a clean network before it");
    result.next_steps = {"Get stack traces of the hung ranks (py-spy dump) before cancelling",
                         triggered ? "Check the links and switch ports named in the findings"
                                   : "Look for the rank that never entered the collective"};
  } else if (!active.empty() && active.size() < n) {
    result.verdict = "straggler";
    for (const auto& host : active) {
      result.anomalies.push_back(MakeFinding(
          "power-spread", Severity::kWarning, metric_names::kGpuPowerWatts, host, std::nullopt, "W",
          window.start, host + " stayed at training-level power while the others waited"));
    }
    result.summary = fmt::format(
        "{} still at training-level power while the other {} hosts "
        "waited: the straggler.",
        playbook::Join(active), n - active.size());
    result.next_steps = {"Inspect " + playbook::Join(active) +
                         " (thermal, clocks, CPU contention: --playbook gpu)"};
  } else {
    result.verdict = "undetermined";
    result.summary =
        "The GPU power and utilization in the hang window fit no known pattern "
        "(no training baseline, or hosts between idle and training power).";
    result.next_steps = {"Look at hw_gpu_power_watts per GPU around the hang start"};
  }
  SetRootCauseAndChain(result);
  const bool triaged_hang = context.triage.primary_class == "hang";
  result.correlation =
      triaged_hang
          ? (result.verdict == "not-a-hang"
                 ? "Triage classified this as a hang; the TSDB refutes it: " + result.summary
                 : "Triage classified this as a hang; the TSDB confirms: " + result.summary)
          : fmt::format("Triage class '{}'; the hang playbook says: {}",
                        context.triage.primary_class, result.verdict);
  return result;
}

}  // namespace jobmon::diagnose
