#pragma once
// When Slurm's answer is not to be believed, and for how long it has not
// been. A failed answer (slurm/client.h: non-zero exit, timeout, `errors`)
// and an answer that suddenly lacks every job the daemon follows, with none
// of them seen ending, both count as "Slurm unreachable": every job and
// incident stays as it is. The lack is believed once it has lasted
// `vanish_confirm_seconds` (jobs purged while the daemon was down). An
// outage that lasts `alert_after_seconds` is alerted once, and resolved
// when Slurm answers again. Pure: the monitor feeds it each poll.

#include <cstddef>
#include <optional>
#include <string>

namespace jobmon::monitor {

class SlurmOutage {
 public:
  SlurmOutage(double vanish_confirm_seconds, double alert_after_seconds)
      : vanish_confirm_(vanish_confirm_seconds), alert_after_(alert_after_seconds) {}

  // A poll whose answer failed.
  void Failed(double now, const std::string& why);
  // A poll that answered: `tracked` live jobs followed, `listed` of them in
  // the answer. False: the answer is not believed this time (every tracked
  // job missing, not for long enough yet), so nothing may be ended.
  bool Answered(double now, size_t tracked, size_t listed);

  bool unreachable() const { return since_.has_value(); }
  // Slurm answers again since less than `grace`: a controller back from an
  // outage still reports RUNNING for jobs that ended meanwhile until their
  // nodes tell it (seconds).
  bool Recovering(double now, double grace) const {
    return recovered_at_ && now - *recovered_at_ < grace;
  }
  std::optional<double> since() const { return since_; }
  const std::string& why() const { return why_; }
  // The outage alert is due now (once per outage).
  bool AlertDue(double now) const { return since_ && !alerted_ && now - *since_ >= alert_after_; }
  void MarkAlerted() { alerted_ = true; }
  // Slurm answered after an alerted outage: resolve it (once).
  bool ResolveDue() const { return !since_ && alerted_; }
  void MarkResolved() { alerted_ = false; }
  // After a restart: the outage recorded before it.
  void Restore(double since, bool alerted, const std::string& why) {
    since_ = since;
    alerted_ = alerted;
    why_ = why;
  }

 private:
  double vanish_confirm_, alert_after_;
  std::optional<double> since_;
  std::optional<double> vanished_since_;
  std::optional<double> recovered_at_;
  bool alerted_ = false;
  std::string why_;
};

}  // namespace jobmon::monitor
