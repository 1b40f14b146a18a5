#include "jobmon/triage/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jobmon/common/iso_time.h"
#include "jobmon/common/valid_utf8.h"

namespace jobmon::triage {
namespace {

template <typename T>
nlohmann::json Opt(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json Lines(const std::vector<LineRef>& lines) {
  nlohmann::json out = nlohmann::json::array();
  for (const LineRef& ref : lines) out.push_back({{"line", ref.line}, {"text", ref.text}});
  return out;
}

// Markdown code spans cannot hold a backtick run of the same length; evidence
// goes into fenced blocks, whose fence grows past any backticks inside.
std::string Fence(const std::vector<LineRef>& lines) {
  size_t longest = 0;
  for (const LineRef& ref : lines) {
    size_t run = 0;
    for (char c : ref.text) {
      run = c == '`' ? run + 1 : 0;
      longest = std::max(longest, run);
    }
  }
  std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string out = fence + "\n";
  for (const LineRef& ref : lines) out += fmt::format("{:>7}: {}\n", ref.line, ref.text);
  return out + fence + "\n";
}

nlohmann::json KernelJson(const std::vector<KernelFinding>& kernel) {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelFinding& k : kernel) {
    const KernelEvent& e = k.event;
    out.push_back({{"kind", ToString(e.kind)},
                   {"file", e.file},
                   {"line", e.line},
                   {"text", e.text},
                   {"matched", k.match.matched},
                   {"weak", k.match.weak},
                   {"basis", k.match.basis},
                   {"pid", Opt(e.pid)},
                   {"task", e.task.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.task)},
                   {"memcg", e.memcg.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.memcg)},
                   {"xid", e.kind == KernelEventKind::kNvidiaXid ? nlohmann::json(e.xid)
                                                                 : nlohmann::json(nullptr)},
                   {"wall_time", Opt(e.wall_time)},
                   {"boot_seconds", Opt(e.boot_seconds)}});
  }
  return out;
}

}  // namespace

std::string RenderProjectionTable(const Progress& p) {
  std::string md;
  if (!p.last_step) {
    md += "No step lines found";
    if (p.total_steps) md += fmt::format(" (steps={} configured)", *p.total_steps);
    md += ".\n\n";
  } else {
    md += "| Metric | Value |\n|--------|-------|\n";
    md += fmt::format("| Start | {} |\n",
                      p.restored ? fmt::format("restored from ckpt {}", p.Printed(*p.restored_from))
                                 : std::string("fresh"));
    // As the program printed them (a loop from 1 shows 1, not 0).
    md += fmt::format("| Steps completed (this run) | {} steps (step {} through {}) |\n",
                      p.steps_this_run,
                      p.Printed(*p.last_step + 1 - static_cast<int64_t>(p.steps_this_run)),
                      p.Printed(*p.last_step));
    md += fmt::format("| Overall progress | {} / {}{} |\n", *p.last_step + 1,
                      p.total_steps ? std::to_string(*p.total_steps) : "?",
                      p.percent ? fmt::format(" ({:.1f}%)", *p.percent) : "");
    md +=
        fmt::format("| Steady-state step time | {} |\n",
                    p.steady_step_seconds ? fmt::format("{:.3f}s", *p.steady_step_seconds) : "n/a");
    if (p.recent_median_seconds) {
      md += fmt::format("| Recent step time (median / p99) | {:.3f}s / {:.3f}s |\n",
                        *p.recent_median_seconds, *p.recent_p99_seconds);
    }
    md += fmt::format("| Last step at | {} |\n",
                      p.last_step_time ? FormatIsoUtc(*p.last_step_time) + " (estimated)"
                                       : "unknown (no timestamps)");
    md += fmt::format("| Expected step by now | {} |\n",
                      p.expected_step_now
                          ? fmt::format("{} (at {}; last step {} ago)",
                                        p.Printed(*p.expected_step_now), FormatIsoUtc(*p.now),
                                        FormatDuration(p.seconds_since_last_step.value_or(0)))
                          : std::string("n/a"));
    std::string ckpt =
        !p.checkpointing ? "none — checkpointing off"
        : p.last_periodic_checkpoint
            ? fmt::format("step {}{}", p.Printed(*p.last_periodic_checkpoint),
                          p.checkpoint_save_line
                              ? fmt::format(" (saved, line {})", *p.checkpoint_save_line)
                              : std::string())
            : fmt::format("none — didn't reach checkpoint_period ({})",
                          p.checkpoint_period.value_or(0));
    md += fmt::format("| Last periodic ckpt this run | {} |\n", ckpt);
    md += fmt::format(
        "| Progress lost | {} |\n",
        p.last_periodic_checkpoint
            ? fmt::format("{} steps ({}) since last periodic ckpt", *p.steps_lost,
                          p.seconds_lost ? FormatDuration(*p.seconds_lost) : "?")
            : fmt::format("all — no periodic ckpt ({} steps{})", p.steps_lost.value_or(0),
                          p.seconds_lost ? ", " + FormatDuration(*p.seconds_lost) : ""));
    md += fmt::format(
        "| Estimated time remaining | {} |\n",
        p.eta_seconds ? FormatDuration(*p.eta_seconds) + " (from last step, if healthy)" : "n/a");
    md += "\n";
  }
  return md;
}

std::string RenderMarkdown(const TriageReport& r) {
  const Progress& p = r.progress;
  std::string md;
  md += fmt::format("## Job triage: {}\n\n", r.log_path);
  md += fmt::format("**Status:** {}{}  \n", ToString(r.status),
                    r.slurm_state ? fmt::format(" (Slurm: {}{})", *r.slurm_state,
                                                r.slurm_exit_code ? " " + *r.slurm_exit_code : "")
                                  : "");
  md += fmt::format("**Primary failure:** {}  \n", r.primary);
  md += fmt::format("**Stage:** {}\n\n", r.stage.empty() ? "-" : r.stage);
  md += "### What happened\n" + r.what_happened + "\n\n";
  md += fmt::format("_Status from: {}._\n\n", r.status_basis);

  md += "### Evidence\n";
  md += r.evidence.empty() ? "(no matching log lines)\n\n" : Fence(r.evidence) + "\n";
  if (!r.kernel.empty()) {
    md += "### Kernel log\n";
    for (const KernelFinding& k : r.kernel) {
      md +=
          fmt::format("- {} {} line {}: {} — {}\n", k.match.matched ? "**job's**" : "not the job's",
                      k.event.file, k.event.line, ToString(k.event.kind), k.match.basis);
    }
    std::vector<LineRef> lines;
    for (const KernelFinding& k : r.kernel) lines.push_back({k.event.line, k.event.text});
    md += "\n" + Fence(lines) + "\n";
  }

  md += "### Training progress projection\n";
  md += RenderProjectionTable(p);

  if (r.heartbeat) {
    const HeartbeatChecklist& h = *r.heartbeat;
    md += "### Heartbeat-timeout checklist\n";
    md += fmt::format("**Verdict:** {}\n\n", h.verdict);
    for (int task : h.accused) {
      auto host = h.hosts.find(task);
      md += fmt::format("- accused task {} on {}{}\n", task,
                        host == h.hosts.end() ? "unknown host" : host->second,
                        host == h.hosts.end() ? "" : " (from " + h.host_source + ")");
    }
    for (const std::string& reason : h.reasons) md += "- " + reason + "\n";
    md += "\n" + Fence(h.proof) + "\n";
  }

  if (r.ranks) {
    md += "### Ranks\n";
    md += fmt::format("{} ranks printed their own steps. {}.\n\n", r.ranks->seen, r.ranks->summary);
    md += "| Rank | Last step | Line |\n|---|---|---|\n";
    for (const RankReport::Rank& rank : r.ranks->lowest) {
      md += fmt::format("| {} | {}{} | {} |\n", rank.rank,
                        rank.last.epoch ? fmt::format("epoch {} ", *rank.last.epoch) : "",
                        rank.last.step, rank.last.line);
    }
    md += "\n";
  }

  md += "### Additional findings\n";
  if (r.findings.empty() && r.node_exits.empty() && r.warnings.empty()) md += "None.\n";
  for (const std::string& finding : r.findings) md += "- " + finding + "\n";
  for (const DecodedNodeExit& e : r.node_exits) {
    md += fmt::format("- NODE_EXIT {} exit={}: {} (line {})\n", e.host, e.code, e.meaning, e.line);
  }
  for (const std::string& warning : r.warnings) md += "- warning: " + warning + "\n";
  md += "\n";

  md += "### Live dashboards\n";
  if (r.tunnel_command) {
    md += fmt::format("Tunnel command from the log:\n\n```\n{}\n```\n", *r.tunnel_command);
    if (r.head_node)
      md += fmt::format("Head node {}, Prometheus port {}.\n", *r.head_node,
                        r.prometheus_port ? std::to_string(*r.prometheus_port) : "?");
    md += (r.status == JobStatus::kRunning || r.status == JobStatus::kHanging)
              ? "The job is live: its Prometheus is reachable through that tunnel.\n\n"
              : "The job has ended: the live dashboards are gone; use the archived TSDB "
                "(`jobmon diagnose`).\n\n";
  } else {
    md += "No tunnel command in the log.\n\n";
  }

  md += "### Recommended next steps\n";
  for (size_t i = 0; i < r.next_steps.size(); ++i)
    md += fmt::format("{}. {}\n", i + 1, r.next_steps[i]);
  return md;
}

namespace {

std::string EventTitle(const CausalChain& chain, size_t i) {
  const CausalEvent& e = chain.events[i];
  std::string where;
  if (e.line) where += fmt::format(", line {}", *e.line);
  if (!e.rank.empty()) where += ", " + e.rank;
  if (!e.host.empty()) where += ", host " + e.host;
  if (e.time) where += ", " + FormatIsoUtc(*e.time);
  if (e.survived) where += fmt::format(", survived ({} step lines after it)", e.step_lines_after);
  return fmt::format("#{} {} `{}`{}", i + 1, ToString(e.kind), e.class_id, where);
}

}  // namespace

std::string RenderChain(const CausalChain& chain) {
  std::string out = "## Causal chain\n\n";
  if (chain.events.empty()) return out + "No failure event in the log or from Slurm.\n";
  out += "Events in the order they were weighed; the primary explains the others.\n\n";
  std::vector<std::string_view> used;
  for (size_t i = 0; i < chain.events.size(); ++i) {
    out += "- " + EventTitle(chain, i);
    if (chain.primary == i) {
      out += " — **primary**: no other event explains it";
    } else if (!chain.primary) {
      out += " — not fatal";
    } else {
      for (const CausalLink& link : chain.links) {
        if (link.effect != i) continue;
        if (!link.cause) {
          out += " — not explained by the primary: an independent event";
          continue;
        }
        out += fmt::format(" — explained by #{} ({})", *link.cause + 1, link.rule);
        if (std::find(used.begin(), used.end(), link.rule) == used.end()) used.push_back(link.rule);
      }
    }
    out += "\n";
    if (!chain.events[i].text.empty())
      out +=
          fmt::format("  `{}`\n", ValidUtf8(std::string_view(chain.events[i].text).substr(0, 200)));
  }
  if (!chain.no_primary_because.empty()) out += "\nNo primary: " + chain.no_primary_because + ".\n";
  if (!used.empty()) {
    out += "\nRules used:\n";
    for (const CauseRule& rule : CauseRules()) {
      if (std::find(used.begin(), used.end(), rule.name) != used.end())
        out += fmt::format("- {}: {}\n", rule.name, rule.reads);
    }
  }
  return out;
}

nlohmann::json ChainJson(const CausalChain& chain) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t i = 0; i < chain.events.size(); ++i) {
    const CausalEvent& e = chain.events[i];
    nlohmann::json cause = nullptr, rule = nullptr;
    for (const CausalLink& link : chain.links) {
      if (link.effect != i) continue;
      cause = Opt(link.cause);
      if (link.cause) rule = std::string(link.rule);
    }
    events.push_back({{"kind", std::string(ToString(e.kind))},
                      {"class", e.class_id},
                      {"line", Opt(e.line)},
                      {"rank", e.rank.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.rank)},
                      {"host", e.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.host)},
                      {"time", Opt(e.time)},
                      {"text", e.text},
                      {"step_lines_after", e.step_lines_after},
                      {"survived", e.survived},
                      {"explained_by", cause},
                      {"rule", rule}});
  }
  return {{"events", events},
          {"primary_event", Opt(chain.primary)},
          {"no_primary_because", chain.no_primary_because.empty()
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(chain.no_primary_because)}};
}

nlohmann::json ToJson(const TriageReport& r) {
  const Progress& p = r.progress;
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassFinding& c : r.classes) {
    classes.push_back({{"class", c.id},
                       {"category", ToString(c.category)},
                       {"count", c.count},
                       {"first_line", Opt(c.first_line)},
                       {"evidence", Lines(c.evidence)}});
  }
  nlohmann::json exits = nlohmann::json::array();
  for (const DecodedNodeExit& e : r.node_exits) {
    exits.push_back({{"host", e.host}, {"exit", e.code}, {"meaning", e.meaning}, {"line", e.line}});
  }
  nlohmann::json ranks = nullptr;
  if (r.ranks) {
    nlohmann::json lowest = nlohmann::json::array();
    for (const RankReport::Rank& rank : r.ranks->lowest) {
      lowest.push_back({{"rank", rank.rank},
                        {"step", rank.last.step},
                        {"epoch", Opt(rank.last.epoch)},
                        {"line", rank.last.line},
                        {"time", Opt(rank.last.at)}});
    }
    nlohmann::json stopped = nullptr;
    if (const auto& s = r.ranks->stopped_first) {
      nlohmann::json named = nlohmann::json::array();
      for (const RankId& id : s->ranks) named.push_back(ToString(id));
      stopped = {{"ranks", named},
                 {"count", s->count},
                 {"step", s->at.step},
                 {"epoch", Opt(s->at.epoch)},
                 {"others_step", s->others_step},
                 {"steps_behind", Opt(s->steps_behind)},
                 {"seconds_behind", Opt(s->seconds_behind)}};
    }
    ranks = {{"seen", r.ranks->seen},
             {"summary", r.ranks->summary},
             {"stopped_first", stopped},
             {"lowest", lowest}};
  }
  nlohmann::json heartbeat = nullptr;
  if (r.heartbeat) {
    const HeartbeatChecklist& h = *r.heartbeat;
    nlohmann::json hosts = nlohmann::json::object();
    for (const auto& [task, host] : h.hosts) hosts[std::to_string(task)] = host;
    heartbeat = {{"verdict", h.verdict},
                 {"accused_tasks", h.accused},
                 {"accused_hosts", hosts},
                 {"host_source", h.host_source},
                 {"self_reported_death", h.self_reported},
                 {"earlier_errors", h.with_earlier_errors},
                 {"step_seconds_sum", Opt(h.step_seconds_sum)},
                 {"wall_seconds", Opt(h.wall_seconds)},
                 {"reasons", h.reasons},
                 {"proof", Lines(h.proof)}};
  }
  return {
      {"schema", kTriageJsonSchema},
      {"log", r.log_path},
      {"job_dir", r.job_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.job_dir)},
      {"job_id", Opt(r.job_id)},
      {"status", ToString(r.status)},
      {"status_basis", r.status_basis},
      {"slurm_state", Opt(r.slurm_state)},
      {"slurm_exit_code", Opt(r.slurm_exit_code)},
      {"exit_code", ExitCodeFor(r.status)},
      {"primary_failure", r.primary},
      {"stage", r.stage},
      {"what_happened", r.what_happened},
      {"evidence", Lines(r.evidence)},
      {"classes", classes},
      {"chain", ChainJson(r.chain)},
      {"progress",
       {{"profile", p.profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.profile)},
        {"start",
         p.last_step ? nlohmann::json(p.restored ? "restored" : "fresh") : nlohmann::json(nullptr)},
        {"restored_from_checkpoint", Opt(p.restored_from)},
        {"printed_offset", p.printed_offset},
        {"first_step", Opt(p.first_step)},
        {"last_step", Opt(p.last_step)},
        {"total_steps", Opt(p.total_steps)},
        {"steps_this_run", p.steps_this_run},
        {"percent", Opt(p.percent)},
        {"steady_step_seconds", Opt(p.steady_step_seconds)},
        {"recent_median_seconds", Opt(p.recent_median_seconds)},
        {"recent_p99_seconds", Opt(p.recent_p99_seconds)},
        {"last_step_time", Opt(p.last_step_time)},
        {"now", Opt(p.now)},
        {"expected_step_now", Opt(p.expected_step_now)},
        {"seconds_since_last_step", Opt(p.seconds_since_last_step)},
        {"stall_threshold_seconds", Opt(p.stall_threshold_seconds)},
        {"stalled", p.stalled},
        {"checkpointing", p.checkpointing},
        {"checkpoint_period", Opt(p.checkpoint_period)},
        {"last_periodic_checkpoint", Opt(p.last_periodic_checkpoint)},
        {"checkpoint_save_line", Opt(p.checkpoint_save_line)},
        {"steps_lost", Opt(p.steps_lost)},
        {"seconds_lost", Opt(p.seconds_lost)},
        {"eta_seconds", Opt(p.eta_seconds)},
        {"tail_slowdown", Opt(p.tail_slowdown)}}},
      {"heartbeat", heartbeat},
      {"ranks", ranks},
      {"node_exits", exits},
      {"kernel_evidence", KernelJson(r.kernel)},
      {"findings", r.findings},
      {"dashboards",
       {{"tunnel_command", Opt(r.tunnel_command)},
        {"head_node", Opt(r.head_node)},
        {"prometheus_port", Opt(r.prometheus_port)}}},
      {"runtimes", r.runtimes},
      {"next_steps", r.next_steps},
      {"scan",
       {{"lines", r.lines},
        {"bytes", r.bytes},
        {"harmless_lines", r.harmless_lines},
        {"long_lines", r.long_lines},
        {"warnings", r.warnings},
        {"matched_patterns", r.matched_patterns}}},
  };
}

std::string SummaryLine(const TriageReport& r) {
  const Progress& p = r.progress;
  std::string progress = p.last_step
                             ? fmt::format("step {}/{}", p.Printed(*p.last_step),
                                           p.total_steps ? std::to_string(*p.total_steps) : "?")
                             : "no steps";
  return fmt::format("{:<14} {:<20} {:<16} {}", ToString(r.status), r.primary, progress,
                     r.log_path);
}

}  // namespace jobmon::triage
