#pragma once
// Where the monitor hands alerts: Notify once per incident event, inside
// the cycle's transaction. The daemon's implementation is the outbox
// (outbox.h), which queues the event for every receiver.

#include <memory>
#include <string>

#include "jobmon/alerts/alert.h"
#include "jobmon/common/expected.h"

namespace jobmon::alerts {

class Notifier {
 public:
  virtual ~Notifier() = default;
  virtual std::string name() const = 0;
  virtual Expected<void> Notify(const Alert& alert) = 0;
};

}  // namespace jobmon::alerts
