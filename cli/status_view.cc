#include "status_view.h"

#include <fmt/format.h>

#include "jobmon/common/iso_time.h"
#include "jobmon/common/terminal_text.h"
#include "jobmon/common/text_lines.h"
#include "jobmon/monitor/api_protocol.h"
#include "jobmon/triage/report.h"

namespace jobmon::cli {
namespace {

using nlohmann::json;

template <class T>
json OrNull(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

StatusIncident IncidentOf(const monitor::IncidentRecord& i) {
  StatusIncident out{.id = i.id,
                     .klass = i.klass,
                     .state = i.state,
                     .summary = i.summary,
                     .close_reason = i.close_reason,
                     .opened_at = i.opened_at,
                     .closed_at = i.closed_at};
  out.evidence = i.evidence;
  out.hosts = i.hosts;
  return out;
}

StatusProgress DaemonProgress(const monitor::ProgressRecord& p, bool ended,
                              const triage::StallRule& rule, double now) {
  StatusProgress out;
  out.from_daemon = true;
  out.followed_by = p.profile;
  // "pulse:N: <template>" keeps the pulse's count for a restart; people read the template.
  if (out.followed_by.starts_with("pulse:")) {
    size_t second = out.followed_by.find(':', 6);
    if (second != std::string::npos) out.followed_by = "pulse" + out.followed_by.substr(second);
  }
  out.last_step = p.last_step;
  out.last_step_time = p.last_step_time;
  out.median_step_seconds = p.median_interval;
  out.p99_step_seconds = p.p99_interval;
  out.updated_at = p.updated_at;
  if (p.last_step_time) out.seconds_since_last_step = now - *p.last_step_time;
  if (p.last_step && !ended) {
    // The daemon's own bound when it saved (a phase's, a logging period's);
    // from a daemon that kept none, the one stall rule on what its tracker
    // learned (persisted in the record).
    if (p.threshold_seconds) {
      out.stall_threshold = triage::StallLimit{};
      out.stall_threshold->seconds = *p.threshold_seconds;
      out.stall_threshold->reason = p.threshold_reason;
    } else {
      triage::StallInputs in;
      in.step_interval = p.p99_interval;
      in.at_checkpoint = triage::IsCheckpointStep(*p.last_step, p.checkpoint_period);
      in.longest_checkpoint_pause = p.longest_checkpoint_pause;
      out.stall_threshold = triage::StallThreshold(rule, in);
    }
  }
  if (p.last_step && p.last_step_time && p.median_interval && *p.median_interval > 0 && !ended) {
    out.expected_step_now =
        *p.last_step + static_cast<int64_t>((now - *p.last_step_time) / *p.median_interval);
  }
  return out;
}

StatusProgress ProjectedProgress(const triage::Progress& p) {
  StatusProgress out;
  if (!p.last_step) return out;
  out.followed_by = p.profile;
  out.last_step = p.last_step;
  out.last_step_time = p.last_step_time;
  out.seconds_since_last_step = p.seconds_since_last_step;
  out.expected_step_now = p.expected_step_now;
  return out;
}

json ProgressJson(const StatusProgress& p) {
  json out = json::object();
  if (!p.from_daemon && !p.last_step) return out;  // neither the daemon's nor a projected step
  out["followed_by"] = p.followed_by;
  out["last_step"] = OrNull(p.last_step);
  out["last_step_time"] = OrNull(p.last_step_time);
  out["seconds_since_last_step"] = OrNull(p.seconds_since_last_step);
  if (p.from_daemon) {
    out["median_step_seconds"] = OrNull(p.median_step_seconds);
    out["p99_step_seconds"] = OrNull(p.p99_step_seconds);
    if (p.stall_threshold) {
      out["stall_threshold_seconds"] = p.stall_threshold->seconds;
      out["stall_threshold_reason"] = p.stall_threshold->reason;
    }
    if (p.expected_step_now) out["expected_step_now"] = *p.expected_step_now;
    out["updated_at"] = p.updated_at;
  } else {
    out["expected_step_now"] = OrNull(p.expected_step_now);
  }
  return out;
}

json IncidentJson(const StatusIncident& i) {
  return {{"id", i.id},
          {"class", i.klass},
          {"state", i.state},
          {"opened_at", i.opened_at},
          {"closed_at", OrNull(i.closed_at)},
          {"close_reason", i.close_reason},
          {"summary", i.summary},
          {"evidence", i.evidence},
          {"hosts", i.hosts},
          {"recovery", monitor::api::RecoveryStepsJson(i.recovery)}};
}

}  // namespace

StatusView BuildStatusView(const StatusInputs& in) {
  StatusView view;
  view.now = in.now;
  view.slurm_unreachable_since = in.slurm_unreachable_since;
  view.job_id = in.job_id;
  view.title = in.job_id ? in.argument : in.log_path;
  view.log = in.log_path;
  // Slurm's word is the freshest; the daemon's last one otherwise.
  if (in.slurm) {
    view.slurm_state = in.slurm->state;
    if (!in.slurm->exit_code.empty()) view.slurm_exit_code = in.slurm->exit_code;
  } else if (in.record) {
    view.slurm_state = in.record->slurm_state;
  }
  if (in.record) {
    view.db = in.db;
    view.daemon_source = in.daemon_source;
    view.name = in.record->name;
    view.user = in.record->user;
    view.tracked_as = in.record->source;
    view.final_status = in.record->final_status;
    view.final_class = in.record->final_class;
    if (!in.record->diagnosis.empty()) view.diagnosis = in.record->diagnosis;
  } else if (in.slurm) {
    view.name = in.slurm->name;
    view.user = in.slurm->user;
  }
  const bool ended = in.record && in.record->ended_at;
  const monitor::IncidentRecord* open = nullptr;
  for (const auto& i : in.incidents) {
    if (i.state == "open") open = &i;
  }
  if (ended) {
    view.state = "ended";
  } else if (open) {
    view.state = "incident";
  } else if (in.progress) {
    view.state = in.progress->phase;
  } else if (in.report) {
    view.state = triage::ToString(in.report->status);
  } else {
    view.state = "unknown";
  }
  if (open) {
    view.klass = open->klass;
    view.stall_seconds = in.now - open->opened_at;
  } else if (in.report) {
    view.klass = in.report->primary;
  }
  if (in.progress) {
    view.progress = DaemonProgress(*in.progress, ended, in.stall_rule, in.now);
  } else if (in.report) {
    view.progress = ProjectedProgress(in.report->progress);
  }
  view.report = in.report;
  for (const auto& i : in.incidents) {
    view.incidents.push_back(IncidentOf(i));
    if (auto steps = in.recovery.find(i.id); steps != in.recovery.end())
      view.incidents.back().recovery = steps->second;
  }
  if (!in.diag_dir.empty()) view.diag_dir = in.diag_dir;
  view.prometheus = in.manifest;
  if (in.manifest) view.on_hang = std::string(ToString(in.manifest->on_hang));
  view.recovery_held = in.recovery_held;
  return view;
}

json StatusJson(const StatusView& v) {
  json out = {{"schema", "jobmon.status/v1"},
              {"job_id", OrNull(v.job_id)},
              {"source", v.db ? "daemon" : "log"},
              {"log", v.log},
              {"slurm_state", v.slurm_state},
              {"slurm_exit_code", OrNull(v.slurm_exit_code)},
              {"state", v.state},
              {"class", OrNull(v.klass)},
              {"progress", ProgressJson(v.progress)},
              {"projection", v.report ? triage::ToJson(*v.report)["progress"] : json(nullptr)},
              {"incidents", json::array()},
              {"diag_dir", OrNull(v.diag_dir)},
              {"slurm_unreachable_since", OrNull(v.slurm_unreachable_since)}};
  if (v.db) {
    // Which way the daemon's record came: its socket API or its database.
    out["daemon_source"] = v.daemon_source;
    out[v.daemon_source == "api" ? "api_socket" : "db"] = *v.db;
  }
  if (v.name) out["name"] = *v.name;
  if (v.user) out["user"] = *v.user;
  if (v.tracked_as) out["tracked_as"] = *v.tracked_as;
  if (v.final_status) out["final_status"] = *v.final_status;
  if (v.final_class) out["final_class"] = *v.final_class;
  if (v.diagnosis) out["diagnosis"] = *v.diagnosis;
  if (v.stall_seconds) out["stall_seconds"] = *v.stall_seconds;
  out["on_hang"] = OrNull(v.on_hang.empty() ? std::optional<std::string>{} : v.on_hang);
  out["recovery_held"] = v.recovery_held;
  for (const auto& i : v.incidents) out["incidents"].push_back(IncidentJson(i));
  if (v.prometheus) {
    const monitor::ManifestView& m = *v.prometheus;
    out["prometheus"] = {{"head_node", m.head_node},
                         {"url", m.url},
                         {"tunnel_command", m.tunnel_command},
                         {"state", m.state},
                         {"tsdb_dir", m.tsdb_dir.empty() ? json(nullptr) : json(m.tsdb_dir)}};
    out["archive"] = m.archive_path.empty() ? json(nullptr) : json(m.archive_path);
  }
  return out;
}

std::string StatusText(const StatusView& v) {
  // Names, hosts, paths, summaries and log lines are a job's user's text,
  // and this goes to an admin's terminal: each on one line, no control.
  const auto T = [](std::string_view field) { return TerminalText(field); };
  std::string text = fmt::format("Job {}", T(v.title));
  if (v.name) text += fmt::format(" ({}, {})", T(*v.name), T(v.user.value_or("")));
  text += fmt::format(": {}{}\n", T(v.state),
                      v.slurm_state.empty() ? "" : fmt::format(" (Slurm: {})", T(v.slurm_state)));
  const std::string daemon_where =
      v.daemon_source == "api" ? "the monitor's API " : "the monitor's database ";
  text += fmt::format("  from: {}\n", v.db ? daemon_where + *v.db + " (tracked via " +
                                                 v.tracked_as.value_or("") + ")"
                                           : std::string("the log alone (no daemon record)"));
  text += fmt::format("  log: {}\n", T(v.log));
  if (v.slurm_unreachable_since) {
    text += fmt::format(
        "  note: Slurm has not answered the monitor since {} ({}); it keeps this job and its "
        "incidents as they were until it does\n",
        FormatIsoUtc(*v.slurm_unreachable_since),
        triage::FormatDuration(v.now - *v.slurm_unreachable_since));
  }
  const StatusProgress& p = v.progress;
  if (!p.followed_by.empty()) text += fmt::format("  followed by: {}\n", T(p.followed_by));
  if (p.last_step) {
    text += fmt::format("  last step: {}", *p.last_step);
    if (p.last_step_time) {
      text += fmt::format(" at {} ({} ago)", FormatIsoUtc(*p.last_step_time),
                          triage::FormatDuration(v.now - *p.last_step_time));
    }
    text += "\n";
    if (p.expected_step_now) text += fmt::format("  expected step now: {}\n", *p.expected_step_now);
    if (p.stall_threshold) {
      text += fmt::format("  stall threshold: {} ({})\n",
                          triage::FormatDuration(p.stall_threshold->seconds),
                          p.stall_threshold->reason);
    }
  } else {
    text += "  no step yet\n";
  }
  if (v.stall_seconds) {
    text += fmt::format("  stalled/incident for {}\n", triage::FormatDuration(*v.stall_seconds));
  }
  if (v.final_status && !v.final_status->empty()) {
    text +=
        fmt::format("  at job end: {} ({})\n", T(*v.final_status), T(v.final_class.value_or("")));
  }
  if (v.diagnosis) {
    text += "  diagnosis:\n";
    for (std::string_view line : TextLines(*v.diagnosis)) {
      if (!line.empty()) text += "    " + T(line) + "\n";
    }
  }
  if (!v.on_hang.empty() && v.on_hang != "notify") {
    text += fmt::format("  on a hang: {} (the owner's --diag-on-hang){}\n", T(v.on_hang),
                        v.recovery_held ? "; held: nothing more is done" : "");
  }
  if (v.incidents.empty()) {
    text += "  incidents: none\n";
  } else {
    text += "  incidents:\n";
    for (const auto& i : v.incidents) {
      text += fmt::format("    #{} {} [{}] opened {}{}\n      {}\n", i.id, T(i.klass), T(i.state),
                          FormatIsoUtc(i.opened_at),
                          i.closed_at ? fmt::format(", closed {} ({})", FormatIsoUtc(*i.closed_at),
                                                    T(i.close_reason))
                                      : "",
                          T(i.summary));
      for (size_t k = 0; k < i.evidence.size() && k < 8; ++k) {
        const json& line = i.evidence[k];
        text += "      - " +
                T(line.is_string() ? line.get<std::string>()
                                   : line.dump(-1, ' ', false, json::error_handler_t::replace)) +
                "\n";
      }
      for (const auto& step : i.recovery) {
        text += fmt::format("      recovery {} at {}: {}\n", T(step.step), FormatIsoUtc(step.at),
                            T(step.detail));
      }
    }
  }
  if (v.prometheus) {
    const monitor::ManifestView& m = *v.prometheus;
    text += fmt::format("  Prometheus: {} on {} ({})\n", T(m.url), T(m.head_node), T(m.state));
    text += fmt::format("  tunnel: {}\n", T(m.tunnel_command));
    if (!m.tsdb_dir.empty())
      text += fmt::format("  live TSDB: {} on {}\n", T(m.tsdb_dir), T(m.head_node));
    if (!m.archive_path.empty()) text += fmt::format("  archive: {}\n", T(m.archive_path));
  } else {
    text += "  Prometheus: none (the job did not run with --diag=on)\n";
  }
  if (v.report) {
    text += "\nProgress projection\n" + triage::RenderProjectionTable(v.report->progress);
  }
  return TerminalLines(text);  // what a field above did not cover (the projection)
}

}  // namespace jobmon::cli
