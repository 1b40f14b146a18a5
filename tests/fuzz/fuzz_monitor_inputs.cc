// The monitor's other untrusted inputs: its config file (parsed again on
// every SIGHUP), the file_sd target files a job's prolog writes into a
// user-writable diag dir, squeue's JSON job list (arbitrary bytes in its
// strings included) and sinfo's JSON node list.
// The first input byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobmon/common/target_file.h"
#include "jobmon/common/valid_utf8.h"
#include "jobmon/monitor/monitor_config.h"
#include "jobmon/monitor/scrape.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/slurm/nodes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto config = jobmon::monitor::ParseMonitorConfig(text);
      if (config && config->poll_interval < 0.1) __builtin_trap();  // validated minimum
      break;
    }
    case 1: {
      auto targets = jobmon::ParseFileSdTargets(text);
      if (targets) {
        for (const auto& t : *targets) {
          if (t.address.empty() && t.host.empty()) continue;
        }
      }
      break;
    }
    case 3: {
      if (auto answer = jobmon::slurm::ParseNodesJson(text)) {
        const auto* nodes = &answer->nodes;
        for (const auto& node : *nodes) {
          if (node.name.empty() || node.address.empty()) __builtin_trap();  // skipped
        }
        // Host names are not resolved here: only literal NodeAddr values count.
        auto known = jobmon::slurm::ResolveNodeAddresses(
            *nodes, [](const std::string&) { return std::vector<jobmon::IpAddress>{}; });
        if (known.size() > nodes->size()) __builtin_trap();
      }
      break;
    }
    default: {
      if (auto answer = jobmon::slurm::ParseJobsJson(std::string(text))) {
        for (const auto& job : answer->jobs) {
          if (job.job_id == 0) __builtin_trap();  // a job without an id is skipped
          // Invalid UTF-8 anywhere is read as U+FFFD, never kept.
          if (jobmon::ValidUtf8(job.name) != job.name) __builtin_trap();
          (void)jobmon::slurm::IsTerminalState(job.state);
        }
      }
    }
  }
  return 0;
}
