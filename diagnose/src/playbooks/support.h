#pragma once
// What playbooks 1-4 share: queries that record their failures in the
// result (a failed query leaves the verdict partial, not wrong), the
// job's hosts, per-host grouping, findings and the numbers in sentences.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"
#include "queries.h"

namespace jobmon::diagnose::playbook {

// The job's hosts: those with samples and those the manifest names.
std::vector<std::string> JobHosts(const DiagnoseContext& context);
// Series by their host label.
std::map<std::string, std::vector<const Series*>> ByHost(const std::vector<Series>& series);
// All sample values of `series` inside `range` (all when nullopt).
std::vector<double> Values(const std::vector<const Series*>& series,
                           const std::optional<TimeRange>& range = std::nullopt);
double Mean(const std::vector<double>& values);

Finding MakeFinding(std::string code, Severity severity, std::string family, std::string host,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text);

// A rate that jumps: the first sample inside `around` (outside checkpoint
// windows) above factor x max(floor, the series' own mean before
// around.start, outside checkpoints; inside them too when
// `skip_checkpoints` is false, to name NFS checkpoint traffic). The monitor's rule for a TCP
// retransmit burst before a stall: 10 x max(1/s, baseline).
struct Spike {
  double time = 0, value = 0, baseline = 0;
};
inline constexpr double kSpikeFactor = 10;
std::optional<Spike> RateSpike(const Series& rate, const TimeRange& around,
                               const DiagnoseContext& context, double factor = kSpikeFactor,
                               double floor = 1, bool skip_checkpoints = true);

// An RDMA port whose state (1 = ACTIVE) fell below 1 in the series:
// rdma-port-down with device/port and the first sample down; nullopt if
// it stayed up.
std::optional<Finding> PortDown(const Series& port_state);

// "2026-11-23 08:47:07 UTC"
std::string FormatTime(double unix_seconds);
// "12.3 GiB"
std::string FormatBytes(double bytes);
std::string Join(const std::vector<std::string>& items, std::string_view separator = ", ");

}  // namespace jobmon::diagnose::playbook
