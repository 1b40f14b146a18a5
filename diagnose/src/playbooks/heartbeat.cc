// Playbook 2 (docs/diagnose.md, "Heartbeat playbook"): were the
// accused hosts training when their heartbeats stopped (crash time minus
// the heartbeat timeout)? Utilization, memory, I/O pressure, TCP
// retransmits, the coordinator's listen drops, dirty pages -> its table.
#include <fmt/format.h>

#include <algorithm>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/power_judgement.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/triage/step_series.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

using playbook::MakeFinding;

// "High (active training)": the fake trainer trains at ~97%, checkpoints at
// ~35%, idles at 0; half-busy separates training from a dead task.
constexpr double kTrainingUtilization = 50;
// Inside a checkpoint save the GPUs idle for the D2H copy and the write
// ("Checkpointing interference"; the fake trainer: ~35%): alive still
// reads above this, a dead task reads 0.
constexpr double kCheckpointUtilization = 10;

double StopTime(const DiagnoseContext& context) {
  const auto& t = context.triage;
  if (t.heartbeat_stop) return *t.heartbeat_stop;
  if (t.crash_time && t.heartbeat_timeout_seconds) {
    return *t.crash_time - *t.heartbeat_timeout_seconds;
  }
  return context.window.seconds() > 0 ? context.window.start : context.job_range.end;
}

struct PerHost {
  std::optional<double> util, mem_available, io_full, dirty, retransmit_peak;
  std::optional<playbook::Spike> spike;
};

}  // namespace

PlaybookResult RunHeartbeatPlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = result.analysis_type = "heartbeat";
  playbook::Queries q(source, result);
  const double stop = StopTime(context);
  std::vector<std::string> accused = context.triage.accused_hosts;
  if (accused.empty()) accused = playbook::JobHosts(context);
  const std::string hosts = HostSelector(accused);
  // The minute around the stop: a scrape or two either side of it.
  const double half = std::max(60.0, 4 * context.scrape_interval_seconds);
  const TimeRange at{stop - half, stop + half / 2};
  const double step = StepFor(at, context, 30);

  std::map<std::string, PerHost> view;
  auto gauge = [&](const std::string& family, auto pick) {
    std::string query = hosts.empty() ? family : fmt::format("{}{{{}}}", family, hosts);
    auto answer = q.Range(query, at, step);  // ByHost points into it
    for (const auto& [host, series] : playbook::ByHost(answer)) {
      auto values = playbook::Values(series);
      if (!values.empty()) pick(view[host], values);
    }
    return query;
  };
  // The median: a task that died just before the stop reads dead.
  auto median = [](std::vector<double>& v) { return triage::Percentile(v, 0.5); };
  auto max = [](std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  auto min = [](std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  std::vector<std::string> queries;
  queries.push_back(gauge(metric_names::kGpuUtilizationPercent,
                          [&](PerHost& h, std::vector<double>& v) { h.util = median(v); }));
  queries.push_back(gauge(metric_names::kMemAvailableBytes,
                          [&](PerHost& h, std::vector<double>& v) { h.mem_available = min(v); }));
  queries.push_back(gauge(metric_names::kIoPressureFullPct,
                          [&](PerHost& h, std::vector<double>& v) { h.io_full = max(v); }));
  queries.push_back(gauge(metric_names::kMemDirtyBytes,
                          [&](PerHost& h, std::vector<double>& v) { h.dirty = max(v); }));
  // Retransmits against the host's own rate before, outside checkpoints.
  const TimeRange job{context.job_range.start, at.end};
  std::string retx = RateExpr(metric_names::kTcpRetransmitsTotal, context, hosts);
  queries.push_back(retx);
  for (const auto& s : q.Range(retx, job, StepFor(job, context))) {
    PerHost& h = view[s.Label("host")];
    auto stats = StatsOf(s, at);
    if (stats) h.retransmit_peak = std::max(h.retransmit_peak.value_or(0), stats->max);
    // A stop inside a checkpoint save: its NFS retransmits are named as such below.
    if (auto spike = playbook::RateSpike(s, at, context, playbook::kSpikeFactor, 1,
                                         !context.InCheckpoint(stop))) {
      h.spike = spike;
    }
  }

  EvidenceTable table;
  table.title =
      fmt::format("Accused hosts at the heartbeat-stop time {}", playbook::FormatTime(stop));
  table.query = playbook::Join(queries, "; ");
  bool any_util = false;
  std::optional<double> lowest_util;
  std::vector<std::string> low, network, io;
  const bool in_checkpoint = context.InCheckpoint(stop);
  const double alive = in_checkpoint ? kCheckpointUtilization : kTrainingUtilization;
  for (const auto& host : accused) {
    const PerHost& h = view[host];
    table.rows.push_back(
        {host, "all",
         fmt::format("util {}, mem available {}, I/O full {}, dirty {}, TCP retx {}",
                     h.util ? fmt::format("{:.0f}%", *h.util) : "n/a",
                     h.mem_available ? playbook::FormatBytes(*h.mem_available) : "n/a",
                     h.io_full ? fmt::format("{:.1f}%", *h.io_full) : "n/a",
                     h.dirty ? playbook::FormatBytes(*h.dirty) : "n/a",
                     h.retransmit_peak ? fmt::format("{:.1f}/s", *h.retransmit_peak) : "n/a"),
         !h.util            ? "no GPU samples"
         : *h.util >= alive ? "training"
                            : "not training"});
    if (h.util) {
      any_util = true;
      lowest_util = std::min(lowest_util.value_or(*h.util), *h.util);
    }
    if (!h.util || *h.util < alive) {
      low.push_back(host);
      result.anomalies.push_back(MakeFinding(
          h.util ? "util-low" : "host-missing", Severity::kCritical,
          metric_names::kGpuUtilizationPercent, host, h.util, "%", stop,
          h.util ? fmt::format("{}: GPU util {:.0f}% at the heartbeat stop", host, *h.util)
                 : fmt::format("{}: no GPU samples at the heartbeat stop", host)));
    }
    if (h.spike) {
      network.push_back(host);
      result.anomalies.push_back(MakeFinding(
          in_checkpoint ? "tcp-retransmits-checkpoint-only" : "tcp-retransmits", Severity::kWarning,
          metric_names::kTcpRetransmitsTotal, host, h.spike->value, "/s", h.spike->time,
          fmt::format("{}: TCP retransmits {:.1f}/s at {} (before: {:.1f}/s)", host, h.spike->value,
                      playbook::FormatTime(h.spike->time), h.spike->baseline)));
    }
    if (h.io_full && *h.io_full >= power::kHighIoPressurePercent) {
      io.push_back(host);
      result.anomalies.push_back(MakeFinding(
          "io-pressure", Severity::kWarning, metric_names::kIoPressureFullPct, host, h.io_full, "%",
          stop,
          fmt::format("{}: I/O pressure (full) {:.1f}%{} at the heartbeat stop", host, *h.io_full,
                      h.dirty ? ", " + playbook::FormatBytes(*h.dirty) + " dirty" : "")));
    }
  }
  // Retransmits inside a checkpoint window are NFS writing the checkpoint
  // (docs/diagnose.md, "Expected NFS congestion during checkpoint writes").
  if (in_checkpoint && !network.empty()) {
    io.insert(io.end(), network.begin(), network.end());
    network.clear();
  }
  if (context.triage.coordinator_host) {
    const std::string& coordinator = *context.triage.coordinator_host;
    std::string drops =
        IncreaseExpr(metric_names::kTcpListenDropsTotal, at, HostSelector({coordinator}));
    table.query += "; " + drops;
    for (const auto& s : q.Instant(drops, at.end)) {
      double value = s.samples.empty() ? 0 : s.samples.back().value;
      table.rows.push_back({coordinator, "", fmt::format("{:.0f} listen drops", value),
                            value > 0 ? "coordinator overloaded" : "coordinator accepting"});
      if (value > 0) {
        result.anomalies.push_back(MakeFinding(
            "tcp-listen-drops", Severity::kWarning, metric_names::kTcpListenDropsTotal, coordinator,
            value, "count", stop,
            fmt::format("coordinator {} dropped {:.0f} connections around the heartbeat stop",
                        coordinator, value)));
      }
    }
  }
  result.evidence.push_back(std::move(table));

  const std::string when = playbook::FormatTime(stop);
  if (!any_util) {
    result.verdict = "undetermined";
    result.summary = "No GPU utilization samples of the accused hosts around " + when + ".";
    result.next_steps = {
        "Check that the TSDB covers the heartbeat-stop time (--playbook auto "
        "runs the observability check)"};
  } else if (!low.empty()) {
    result.verdict = "possible-true-positive";
    result.summary = fmt::format(
        "At the heartbeat-stop time ({}) {} of the accused hosts were not training ({}): the tasks "
        "may really have died.",
        when, low.size(), playbook::Join(low));
    result.next_steps = {"Check for OOM, GPU errors or crashes on " + playbook::Join(low) +
                         " (--playbook oom, --playbook hardware)"};
  } else if (!network.empty()) {
    result.verdict = "false-positive-network";
    result.summary = fmt::format(
        "At the heartbeat-stop time ({}) all {} accused hosts were training, but TCP retransmits "
        "jumped on {}: a transient network issue blocked the heartbeat RPCs.",
        when, accused.size(), playbook::Join(network));
    result.next_steps = {
        "Check the network of " + playbook::Join(network) + " (--playbook network)",
        "Raise jax_distributed_heartbeat_timeout_seconds"};
  } else if (!io.empty()) {
    result.verdict = "false-positive-io";
    result.summary = fmt::format(
        "At the heartbeat-stop time ({}) all {} accused hosts were training, with I/O pressure on "
        "{}{}: writeback blocked the heartbeat thread.",
        when, accused.size(), playbook::Join(io), in_checkpoint ? " during a checkpoint save" : "");
    result.next_steps = {
        "Raise jax_distributed_heartbeat_timeout_seconds or use async checkpointing"};
  } else {
    result.verdict = "false-positive";
    result.summary = fmt::format(
        "The TSDB confirms a heartbeat false-positive kill: at the heartbeat-stop time ({}) all {} "
        "accused hosts showed GPU utilization at {:.0f}% or more, TCP retransmit rate near zero "
        "and no I/O pressure. The tasks were alive and training when the heartbeat mechanism "
        "declared them dead (known gRPC bug, docs/jax-heartbeat-false-positive-postmortem.md).",
        when, accused.size(), lowest_util.value_or(0));
    result.next_steps = {"Resubmit; raise jax_distributed_heartbeat_timeout_seconds"};
  }
  SetRootCauseAndChain(result);
  result.correlation =
      context.triage.primary_class == "heartbeat-timeout"
          ? fmt::format("Triage classified this as heartbeat-timeout; the TSDB says {}.",
                        result.verdict)
          : fmt::format("Triage class '{}'; the heartbeat playbook says {}.",
                        context.triage.primary_class, result.verdict);
  return result;
}

}  // namespace jobmon::diagnose
