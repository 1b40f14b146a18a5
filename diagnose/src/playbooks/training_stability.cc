// SCAFFOLD: replaced by the playbook's implementation.
#include "jobmon/diagnose/playbooks.h"

namespace jobmon::diagnose {

PlaybookResult RunTrainingStabilityPlaybook(PromSource&, const DiagnoseContext&) {
  PlaybookResult result;
  result.playbook = "training_stability";
  result.errors.push_back("not implemented yet");
  return result;
}

}  // namespace jobmon::diagnose
