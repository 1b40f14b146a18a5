#include "jobmon/monitor/slurm_outage.h"

namespace jobmon::monitor {

void SlurmOutage::Failed(double now, const std::string& why) {
  if (!since_) since_ = now;
  why_ = why;
}

bool SlurmOutage::Answered(double now, size_t tracked, size_t listed) {
  if (tracked > 0 && listed == 0) {
    if (!vanished_since_) vanished_since_ = now;
    if (now - *vanished_since_ < vanish_confirm_) {
      Failed(*vanished_since_, "the answer lacks every job followed, none seen ending");
      return false;
    }
  }
  vanished_since_.reset();
  if (since_) recovered_at_ = now;
  since_.reset();
  why_.clear();
  return true;
}

}  // namespace jobmon::monitor
