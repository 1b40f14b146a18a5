#pragma once
// Where alerts go. The monitor calls Notify once per incident event; an
// implementation that cannot deliver returns an error (the monitor logs it;
// the durable outbox of the alerts issue retries).

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

// One JSON object per line, appended to `path` ("-": stdout) and flushed
// (fsync for a file) before Notify returns.
std::unique_ptr<Notifier> MakeJsonLinesNotifier(const std::string& path);

}  // namespace jobmon::alerts
