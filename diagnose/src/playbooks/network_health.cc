// SCAFFOLD: replaced by the playbook's implementation.
#include "jobmon/diagnose/playbooks.h"

namespace jobmon::diagnose {

PlaybookResult RunNetworkHealthPlaybook(PromSource&, const DiagnoseContext&) {
  PlaybookResult result;
  result.playbook = "network_health";
  result.errors.push_back("not implemented yet");
  return result;
}

}  // namespace jobmon::diagnose
