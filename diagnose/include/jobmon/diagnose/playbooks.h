#pragma once
// The playbooks of docs/diagnose.md ("The playbooks"), an explicit
// list: name, docs/diagnose.md's analysis type, the triage classes that pick
// it under --playbook auto ("Integration with Triage"), and the function.

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose {

using PlaybookFn = PlaybookResult (*)(PromSource& source, const DiagnoseContext& context);

struct PlaybookSpec {
  std::string_view name;           // --playbook NAME
  std::string_view analysis_type;  // hang | heartbeat | oom | hardware | gpu-health | ...
  std::string_view description;
  std::vector<std::string_view> triage_classes;
  bool health = false;  // part of --health (the sweep for a live or finished job)
  PlaybookFn run = nullptr;
};

// 1 hang, 2 heartbeat, 3 oom, 4 hardware, 5 gpu, 6 network, 7 training.
const std::vector<PlaybookSpec>& Playbooks();
const PlaybookSpec* FindPlaybook(std::string_view name);
// --playbook auto: the playbooks for a triage class (unknown-death: oom and
// hardware); a class with none, or no class: the health sweep.
std::vector<const PlaybookSpec*> PlaybooksForClass(std::string_view triage_class);
std::vector<const PlaybookSpec*> HealthPlaybooks();

PlaybookResult RunHangPlaybook(PromSource& source, const DiagnoseContext& context);
PlaybookResult RunHeartbeatPlaybook(PromSource& source, const DiagnoseContext& context);
PlaybookResult RunOomPlaybook(PromSource& source, const DiagnoseContext& context);
PlaybookResult RunHardwarePlaybook(PromSource& source, const DiagnoseContext& context);
PlaybookResult RunGpuHealthPlaybook(PromSource& source, const DiagnoseContext& context);
PlaybookResult RunNetworkHealthPlaybook(PromSource& source, const DiagnoseContext& context);
PlaybookResult RunTrainingStabilityPlaybook(PromSource& source, const DiagnoseContext& context);

}  // namespace jobmon::diagnose
