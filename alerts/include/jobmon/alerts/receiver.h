#pragma once
// A place alerts are delivered to. Implementations: the JSON-lines file,
// the generic webhook, Alertmanager v2 (and Telegram). The outbox calls
// Deliver with an idempotency key that is the same for every retry of one
// alert event, so a receiver that honours it never shows an event twice.

#include <memory>
#include <optional>
#include <string>

#include "jobmon/alerts/alert.h"
#include "jobmon/common/http_client.h"

namespace jobmon::alerts {

struct Delivery {
  bool ok = false;
  bool permanent = false;             // retrying cannot help (a 4xx other than 408/429)
  std::optional<double> retry_after;  // the receiver asked for this pause (429)
  std::string error;                  // never contains a secret
};

class Receiver {
 public:
  virtual ~Receiver() = default;
  virtual std::string name() const = 0;
  virtual std::string kind() const = 0;
  virtual Delivery Deliver(const Alert& alert, const std::string& idempotency_key) = 0;
  // While firing, deliver again this often (Alertmanager forgets alerts that
  // are not re-sent); 0: once.
  virtual double resend_interval() const { return 0; }
  // At most one delivery per this many seconds (rate limit).
  virtual double min_interval() const { return 0; }
};

// Classifies an HTTP answer: 2xx ok; 408, 429, 5xx and no answer retried
// (429 with its Retry-After); other 4xx permanent.
Delivery FromHttp(const HttpResponse& response);

std::unique_ptr<Receiver> MakeFileReceiver(const std::string& path);

}  // namespace jobmon::alerts
