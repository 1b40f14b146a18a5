// Playbook 6 (docs/diagnose.md, "Network playbook"): TCP and RDMA
// counters as rates inside the job's window, RDMA port state, and the
// reference's node-exclusion priority as a ranked node list.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "jobmon/common/metric_names.h"
#include "jobmon/diagnose/playbooks.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

using playbook::At;
using playbook::MakeFinding;
using playbook::Where;

constexpr double kTcpRetransmitsPerSecond = 10;  // ">10/s sustained = concern"
// "Sustained": this many consecutive samples of the rate (each already a
// rate window's average).
constexpr size_t kSustainedSamples = 3;

// The exclusion priority of a node (1 highest, 4 lowest, 5: nothing).
enum Priority {
  kRetryExhaustion = 1,
  kRdmaRetransmits = 2,
  kCongestion = 3,
  kTcpOnly = 4,
  kNone = 5
};

struct Signal {
  const char* counter;
  const char* code;
  Severity severity;
  bool sustained;  // needs kSustainedSamples samples > 0; else any sample > 0
  Priority priority;
  const char* meaning;
};

// Rows 2, 3, 5-10 of docs/diagnose.md's query table.
constexpr Signal kSignals[] = {
    {metric_names::kRdmaReqTxRetryExcdErrTotal, "rdma-retry-exhaustion", Severity::kCritical, false,
     kRetryExhaustion, "packets permanently lost: hard link failure"},
    {metric_names::kRdmaTxRetxPktsTotal, "rdma-retransmits", Severity::kWarning, true,
     kRdmaRetransmits, "sustained RDMA retransmits slow every collective"},
    {metric_names::kRdmaTxAckTimeoutTotal, "rdma-ack-timeouts", Severity::kWarning, false,
     kRdmaRetransmits, "link or switch issue"},
    {metric_names::kRdmaReqRxCqeErrTotal, "rdma-cqe-errors", Severity::kWarning, false,
     kRdmaRetransmits, "RDMA completion errors"},
    {metric_names::kRdmaRxCnpPktsTotal, "rdma-congestion", Severity::kWarning, true, kCongestion,
     "congestion notifications: switch-level congestion"},
    {metric_names::kNetRxErrorsTotal, "nic-errors", Severity::kWarning, false, kTcpOnly,
     "NIC RX errors"},
    {metric_names::kNetTxErrorsTotal, "nic-errors", Severity::kWarning, false, kTcpOnly,
     "NIC TX errors"},
    {metric_names::kTcpAbortOnTimeoutTotal, "tcp-aborts", Severity::kCritical, false, kTcpOnly,
     "TCP connections aborted on timeout: severe"},
};

struct Node {
  Priority priority = kNone;
  std::vector<std::string> reasons;
  void Raise(Priority p, std::string reason) {
    priority = std::min(priority, p);
    reasons.push_back(std::move(reason));
  }
};

const char* PriorityText(Priority p) {
  switch (p) {
    case kRetryExhaustion:
      return "1 (highest): permanent packet loss or a port down, hard link failure";
    case kRdmaRetransmits:
      return "2: active RDMA link degradation slowing every collective";
    case kCongestion:
      return "3: congestion, may be switch-level rather than the node";
    case kTcpOnly:
      return "4 (lowest): TCP only, does not degrade training TGS; do not exclude for this";
    case kNone:
      break;
  }
  return "-";
}

}  // namespace

PlaybookResult RunNetworkHealthPlaybook(PromSource& source, const DiagnoseContext& context) {
  PlaybookResult result;
  result.playbook = "network";
  result.analysis_type = "network-health";
  const TimeRange range = playbook::WindowOrJob(context);
  std::map<std::string, Node> nodes;
  bool port_down = false, tcp_outside = false, tcp_checkpoint_only = false;

  // 1. TCP retransmits: NFS retransmits during checkpoint writes are
  // expected ("Expected NFS congestion during checkpoint writes").
  const std::string tcp = RateExpr(metric_names::kTcpRetransmitsTotal, context);
  for (const Series& s : playbook::Range(source, result, tcp, range, context)) {
    auto high = [](double v) { return v > kTcpRetransmitsPerSecond; };
    auto in_checkpoint = [&](double t) { return playbook::RateTouchesCheckpoint(t, context); };
    auto outside = playbook::LongestRun(s, high, in_checkpoint);
    if (outside && outside->samples >= kSustainedSamples) {
      tcp_outside = true;
      nodes[s.Label("host")].Raise(kTcpOnly,
                                   fmt::format("TCP retransmits {:.0f}/s", outside->peak));
      result.anomalies.push_back(MakeFinding(
          "tcp-retransmits", Severity::kWarning, metric_names::kTcpRetransmitsTotal, s.labels,
          outside->peak, "/s", outside->start,
          fmt::format("{}: TCP retransmits up to {:.0f}/s outside checkpoint windows, {} to {} "
                      "(>{:.0f}/s sustained)",
                      Where(s.labels), outside->peak, At(outside->start), At(outside->end),
                      kTcpRetransmitsPerSecond)));
      continue;
    }
    auto inside = playbook::LongestRun(s, high, [&](double t) { return !in_checkpoint(t); });
    if (!inside) continue;
    tcp_checkpoint_only = true;
    result.anomalies.push_back(MakeFinding(
        "tcp-retransmits-checkpoint-only", Severity::kInfo, metric_names::kTcpRetransmitsTotal,
        s.labels, inside->peak, "/s", inside->start,
        fmt::format("{}: TCP retransmits up to {:.0f}/s only during checkpoint writes: NFS "
                    "retransmitting under heavy writes, expected",
                    Where(s.labels), inside->peak)));
  }

  // 2, 3, 5-10: RDMA and NIC error rates.
  for (const Signal& signal : kSignals) {
    if (!playbook::Wanted(context, signal.counter)) continue;
    const std::string promql = RateExpr(signal.counter, context);
    for (const Series& s : playbook::Range(source, result, promql, range, context)) {
      auto run = playbook::LongestRun(s, [](double v) { return v > 0; });
      if (!run || (signal.sustained && run->samples < kSustainedSamples)) continue;
      auto first = FirstTimeAbove(s, 0);
      nodes[s.Label("host")].Raise(signal.priority,
                                   fmt::format("{} {:.3g}/s", signal.code, run->peak));
      result.anomalies.push_back(MakeFinding(
          signal.code, signal.severity, signal.counter, s.labels, run->peak, "/s", first,
          fmt::format("{}: {} up to {:.3g}/s from {} ({})", Where(s.labels), signal.counter,
                      run->peak, At(first.value_or(run->start)), signal.meaning)));
    }
  }

  // 4. Port state (a gauge): any 0 is a link down.
  for (const Series& s :
       playbook::Range(source, result, metric_names::kRdmaPortState, range, context)) {
    std::optional<double> down;
    for (const auto& x : s.samples) {
      if (x.value < 0.5) {
        down = x.time;
        break;
      }
    }
    if (!down) continue;
    port_down = true;
    nodes[s.Label("host")].Raise(kRetryExhaustion, "RDMA port " + Where(s.labels) + " down");
    result.anomalies.push_back(MakeFinding(
        "rdma-port-down", Severity::kCritical, metric_names::kRdmaPortState, s.labels, 0, "state",
        down,
        fmt::format("{}: RDMA port state 0 (down) from {}: physical layer, check cable and "
                    "switch port",
                    Where(s.labels), At(*down))));
  }

  // The ranked node list: what to exclude first when spares are few.
  EvidenceTable ranking{"Node exclusion priority",
                        tcp + ", rate(hw_rdma_*[...]), " + metric_names::kRdmaPortState,
                        {}};
  std::vector<std::pair<std::string, Node>> ranked(nodes.begin(), nodes.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](auto& a, auto& b) { return a.second.priority < b.second.priority; });
  std::string list;
  int rank = 0;
  for (const auto& [host, node] : ranked) {
    std::string reasons;
    for (const auto& r : node.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
    ranking.rows.push_back({host, "", reasons, PriorityText(node.priority)});
    list += fmt::format("\n  {}. {} (priority {}: {})", ++rank, host,
                        static_cast<int>(node.priority), reasons);
  }
  auto worst = ranked.empty() ? kNone : ranked.front().second.priority;
  auto has = [&](const char* code) {
    return std::any_of(result.anomalies.begin(), result.anomalies.end(),
                       [&](const Finding& f) { return f.code == code; });
  };
  if (port_down) {
    result.verdict = "rdma-port-down";
  } else if (has("rdma-retry-exhaustion")) {
    result.verdict = "retry-exhaustion";
  } else if (worst == kRdmaRetransmits) {
    result.verdict = "rdma-degraded";
  } else if (worst == kCongestion) {
    result.verdict = "congestion";
  } else if (worst == kTcpOnly) {
    result.verdict = "tcp-only";
  } else {
    result.verdict = "healthy";
  }
  result.summary = fmt::format("Network: {}.", result.verdict);
  if (!ranked.empty()) result.summary += " Nodes by exclusion priority:" + list;
  if (worst == kTcpOnly) {
    result.summary +=
        "\nTCP retransmits only, RDMA clean: the IP/TCP path (NFS, coordinator "
        "gRPC), not the collectives; TCP retransmits only do not degrade TGS.";
  }
  if (tcp_checkpoint_only && !tcp_outside) {
    result.summary += "\nTCP retransmits only inside checkpoint windows: expected NFS congestion.";
  }
  if (!ranked.empty()) result.evidence.push_back(std::move(ranking));
  SetRootCauseAndChain(result);
  if (worst <= kRdmaRetransmits) {
    result.next_steps.push_back(
        "Exclude priority 1-2 nodes first; check the cable and switch "
        "port of the devices named.");
  }
  return result;
}

}  // namespace jobmon::diagnose
