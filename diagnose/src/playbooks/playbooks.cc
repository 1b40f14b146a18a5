#include "jobmon/diagnose/playbooks.h"

namespace jobmon::diagnose {

const std::vector<PlaybookSpec>& Playbooks() {
  // The reference's "Integration with Triage" table picks them under auto.
  static const std::vector<PlaybookSpec> kPlaybooks = {
      {"hang",
       "hang",
       "RCCL/NCCL hang: busy-wait, straggler, node death, network trigger",
       {"hang"},
       false,
       RunHangPlaybook},
      {"heartbeat",
       "heartbeat",
       "heartbeat timeout: were the accused tasks alive?",
       {"heartbeat-timeout"},
       false,
       RunHeartbeatPlaybook},
      {"oom",
       "oom",
       "host OOM: the memory trajectory",
       {"oom-host", "unknown-death"},
       false,
       RunOomPlaybook},
      {"hardware",
       "hardware",
       "node failure / hardware: RAS, PCIe, dmesg, RDMA port, thermal",
       {"node-fail", "signal-kill", "unknown-death"},
       false,
       RunHardwarePlaybook},
      {"gpu",
       "gpu-health",
       "GPU health: temperature, power, clocks, VRAM, error counters",
       {},
       true,
       RunGpuHealthPlaybook},
      {"network",
       "network-health",
       "network health, with the node-exclusion priority",
       {"nccl-timeout"},
       true,
       RunNetworkHealthPlaybook},
      {"training",
       "training-stability",
       "training stability: loss, step time, throughput, the contention checklist",
       {},
       true,
       RunTrainingStabilityPlaybook},
  };
  return kPlaybooks;
}

const PlaybookSpec* FindPlaybook(std::string_view name) {
  for (const auto& spec : Playbooks()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::vector<const PlaybookSpec*> HealthPlaybooks() {
  std::vector<const PlaybookSpec*> out;
  for (const auto& spec : Playbooks()) {
    if (spec.health) out.push_back(&spec);
  }
  return out;
}

std::vector<const PlaybookSpec*> PlaybooksForClass(std::string_view triage_class) {
  std::vector<const PlaybookSpec*> out;
  for (const auto& spec : Playbooks()) {
    for (auto c : spec.triage_classes) {
      if (c == triage_class) out.push_back(&spec);
    }
  }
  return out.empty() ? HealthPlaybooks() : out;
}

}  // namespace jobmon::diagnose
