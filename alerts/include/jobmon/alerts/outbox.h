#pragma once
// The durable outbox (docs/alerts.md, "Delivery and the outbox"): every alert event is written to
// the monitor's SQLite, one row per receiver, in the same transaction as
// the incident it reports, before anything is sent. Delivery happens later,
// per receiver in order, with exponential backoff and jitter, a rate limit,
// and the receiver's Retry-After honoured; a row is marked delivered right
// after its receiver acknowledged. A crash therefore loses nothing; what a
// crash can do is repeat the last delivery, which the idempotency key
// (the same on every retry of one event) lets a receiver ignore.

#include <sqlite3.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "jobmon/alerts/alert.h"
#include "jobmon/alerts/notifier.h"
#include "jobmon/alerts/receiver.h"
#include "jobmon/common/expected.h"

namespace jobmon::alerts {

struct OutboxRow {
  int64_t id = 0;
  std::string receiver, idempotency_key, alert_key, status,
      state;  // state: pending|delivered|failed|superseded
  int attempts = 0;
  double next_attempt_at = 0, created_at = 0;
  std::optional<double> delivered_at;
  std::string last_error;
};

struct DeliveryRound {
  int delivered = 0, failed = 0, retried = 0;
  std::vector<std::string> errors;  // "<receiver>: <error>", for the log
};

class Outbox {
 public:
  // `db` belongs to the caller (the monitor's state store); the table is
  // created if missing.
  static Expected<void> EnsureSchema(sqlite3* db);
  explicit Outbox(sqlite3* db, double max_backoff = 600) : db_(db), max_backoff_(max_backoff) {}

  // One row per receiver; an event already queued for a receiver (same
  // idempotency key) is not queued twice. A resolve ends the re-sending of
  // its firing.
  Expected<int> Enqueue(const Alert& alert, const std::vector<std::string>& receivers, double now);

  // Delivers what is due, oldest first per receiver, until `budget_seconds`
  // have passed. A receiver whose delivery failed is not tried again this
  // round, so its events keep their order.
  DeliveryRound DeliverDue(const std::vector<Receiver*>& receivers, double now,
                           double budget_seconds);

  Expected<std::vector<OutboxRow>> Rows();

  static std::string IdempotencyKey(const Alert& alert);

 private:
  sqlite3* db_;
  double max_backoff_;
  std::map<std::string, double> last_delivery_;  // per receiver, for min_interval
  std::mt19937_64 jitter_{std::random_device{}()};
};

// The monitor's Notifier: queues every alert for every receiver.
class OutboxNotifier : public Notifier {
 public:
  OutboxNotifier(Outbox& outbox, std::vector<std::string> receivers)
      : outbox_(outbox), receivers_(std::move(receivers)) {}
  std::string name() const override { return "outbox"; }
  Expected<void> Notify(const Alert& alert) override;

 private:
  Outbox& outbox_;
  std::vector<std::string> receivers_;
};

}  // namespace jobmon::alerts
