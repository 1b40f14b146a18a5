// SCAFFOLD: replaced by the playbook's implementation.
#include "jobmon/diagnose/playbooks.h"

namespace jobmon::diagnose {

PlaybookResult RunHardwarePlaybook(PromSource&, const DiagnoseContext&) {
  PlaybookResult result;
  result.playbook = "hardware";
  result.errors.push_back("not implemented yet");
  return result;
}

}  // namespace jobmon::diagnose
