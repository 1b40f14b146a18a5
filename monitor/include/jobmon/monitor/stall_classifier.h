#pragma once
// What a stall is, from system evidence at the moment it was detected
// (reference/tsdb-diagnosis.md, Playbook 1 "Interpretation"): GPU power is
// the ground truth, judged against this job's own training baseline, not a
// vendor constant.

#include <optional>
#include <string>
#include <vector>

namespace jobmon::monitor {

struct HostEvidence {
  std::string host;
  bool exporter_up = true;                    // its last scrape succeeded
  double seconds_since_seen = 0;              // since its last successful scrape
  std::vector<double> gpu_utilization;        // percent, per GPU, now
  std::vector<double> gpu_power;              // watts, per GPU, now
  std::optional<double> baseline_power;       // median per-GPU watts while training
  std::optional<double> tcp_retransmit_rate;  // per second, just before the stall
  std::optional<double> tcp_retransmit_baseline;
  std::optional<double> io_pressure_some;  // percent, now
  std::optional<double> procs_blocked;     // now
};

struct StallEvidence {
  std::vector<HostEvidence> hosts;
  double stale_after_seconds = 30;  // a host not seen for this long is gone
};

struct StallClassification {
  std::string klass;    // hang/busy-wait, hang/node-death, hang/straggler, slow-not-hung, hang
  std::string summary;  // one sentence with the deciding numbers
  std::vector<std::string> evidence;  // one line per host
  std::vector<std::string> hosts;     // the hosts the class names (dead, straggling)
};

// Power relative to baseline: >= 70% "active", < 50% "idle-level".
StallClassification ClassifyStall(const StallEvidence& evidence);

}  // namespace jobmon::monitor
