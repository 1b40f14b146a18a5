#include "jobmon/alerts/outbox.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace jobmon::alerts {
namespace {

const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  receiver TEXT NOT NULL, idempotency_key TEXT NOT NULL, alert_key TEXT NOT NULL,
  status TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending'
    CHECK (state IN ('pending', 'delivered', 'failed', 'superseded')),
  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL, created_at REAL NOT NULL,
  delivered_at REAL, last_error TEXT NOT NULL DEFAULT '',
  UNIQUE (receiver, idempotency_key));
CREATE INDEX IF NOT EXISTS outbox_due ON outbox(state, next_attempt_at);
)sql";

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

Error SqlError(sqlite3* db, const std::string& what) {
  return Error{"outbox: " + what + ": " + sqlite3_errmsg(db)};
}

void Bind(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

std::string Text(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace

Expected<void> Outbox::EnsureSchema(sqlite3* db) {
  char* message = nullptr;
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    return Error{"outbox schema: " + text};
  }
  return {};
}

std::string Outbox::IdempotencyKey(const Alert& alert) {
  // A follow-up (a diagnosis, each recovery step) is an event of its own,
  // not a repeat of the incident's last one.
  return alert.key + "/" + std::to_string(alert.incident_id) + "/" + alert.status +
         (alert.diagnosis.empty() ? "" : "/diagnosis") +
         (alert.recovery.empty() ? "" : "/recovery/" + alert.recovery_step);
}

Expected<int> Outbox::Enqueue(const Alert& alert, const std::vector<std::string>& receivers,
                              double now) {
  const std::string key = IdempotencyKey(alert);
  const std::string incident_key = alert.key + "/" + std::to_string(alert.incident_id);
  const std::string payload =
      ToJson(alert).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  int queued = 0;
  for (const std::string& receiver : receivers) {
    Stmt insert;
    if (sqlite3_prepare_v2(db_,
                           "INSERT INTO outbox (receiver, idempotency_key, alert_key, status, "
                           "payload, next_attempt_at, created_at) VALUES (?1,?2,?3,?4,?5,?6,?6) "
                           "ON CONFLICT DO NOTHING",
                           -1, &insert.s, nullptr) != SQLITE_OK) {
      return SqlError(db_, "prepare");
    }
    Bind(insert.s, 1, receiver);
    Bind(insert.s, 2, key);
    Bind(insert.s, 3, incident_key);
    Bind(insert.s, 4, alert.status);
    Bind(insert.s, 5, payload);
    sqlite3_bind_double(insert.s, 6, now);
    if (sqlite3_step(insert.s) != SQLITE_DONE) return SqlError(db_, "enqueue");
    queued += sqlite3_changes(db_);
    if (alert.status == "resolved") {
      // A firing that was delivered and waits to be re-sent stops here; one
      // never delivered still goes first, so the receiver sees both.
      Stmt stop;
      sqlite3_prepare_v2(db_,
                         "UPDATE outbox SET state='superseded' WHERE receiver=?1 AND alert_key=?2 "
                         "AND status='firing' AND state='pending' AND delivered_at IS NOT NULL",
                         -1, &stop.s, nullptr);
      Bind(stop.s, 1, receiver);
      Bind(stop.s, 2, incident_key);
      if (sqlite3_step(stop.s) != SQLITE_DONE) return SqlError(db_, "supersede");
    }
  }
  return queued;
}

DeliveryRound Outbox::DeliverDue(const std::vector<Receiver*>& receivers, double now,
                                 double budget_seconds) {
  DeliveryRound round;
  const auto started = std::chrono::steady_clock::now();
  for (Receiver* receiver : receivers) {
    const std::string name = receiver->name();
    while (true) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >
          budget_seconds) {
        return round;
      }
      auto last = last_delivery_.find(name);
      if (last != last_delivery_.end() && now < last->second + receiver->min_interval()) break;
      Stmt next;
      // The oldest event not yet delivered goes first even when a later one
      // is due sooner; re-sends of delivered firings are due on their own.
      sqlite3_prepare_v2(db_,
                         "SELECT id, payload, attempts, idempotency_key, status, next_attempt_at "
                         "FROM outbox WHERE receiver=?1 AND state='pending' AND "
                         "(delivered_at IS NULL OR next_attempt_at<=?2) ORDER BY id LIMIT 1",
                         -1, &next.s, nullptr);
      Bind(next.s, 1, name);
      sqlite3_bind_double(next.s, 2, now);
      if (sqlite3_step(next.s) != SQLITE_ROW) break;
      if (sqlite3_column_double(next.s, 5) > now) break;  // backing off
      const int64_t id = sqlite3_column_int64(next.s, 0);
      const Alert alert = AlertFromJson(nlohmann::json::parse(Text(next.s, 1), nullptr, false));
      const int attempts = sqlite3_column_int(next.s, 2) + 1;
      const std::string key = Text(next.s, 3);
      const bool firing = Text(next.s, 4) == "firing";
      // The read ends before the send and the write: a write on a connection
      // still reading a snapshot that another connection (the cycle's, or
      // another receiver's worker) has since changed fails at once
      // (SQLITE_BUSY_SNAPSHOT, no busy wait), and the row would go again.
      sqlite3_reset(next.s);
      Delivery d = receiver->Deliver(alert, key);
      last_delivery_[name] = now;
      Stmt update;
      if (d.ok) {
        ++round.delivered;
        const double resend = firing ? receiver->resend_interval() : 0;
        // Delivered; a receiver that forgets firing alerts gets it again later.
        sqlite3_prepare_v2(db_,
                           "UPDATE outbox SET state=?2, attempts=?3, delivered_at=?4, "
                           "next_attempt_at=?5, last_error='' WHERE id=?1",
                           -1, &update.s, nullptr);
        Bind(update.s, 2, resend > 0 ? "pending" : "delivered");
        sqlite3_bind_double(update.s, 5, now + resend);
      } else {
        double delay = std::min(max_backoff_, 2.0 * std::pow(2.0, std::min(attempts - 1, 20)));
        delay *= std::uniform_real_distribution<double>(0.5, 1.0)(jitter_);
        if (d.retry_after) delay = std::max(*d.retry_after, 0.0);
        if (d.permanent) {
          ++round.failed;
        } else {
          ++round.retried;
        }
        round.errors.push_back(name + ": " + d.error);
        sqlite3_prepare_v2(db_,
                           "UPDATE outbox SET state=?2, attempts=?3, last_error=?6, "
                           "next_attempt_at=?5 WHERE id=?1",
                           -1, &update.s, nullptr);
        Bind(update.s, 2, d.permanent ? "failed" : "pending");
        sqlite3_bind_double(update.s, 5, now + delay);
        Bind(update.s, 6, d.error);
      }
      sqlite3_bind_int64(update.s, 1, id);
      sqlite3_bind_int(update.s, 3, attempts);
      if (d.ok) sqlite3_bind_double(update.s, 4, now);
      if (sqlite3_step(update.s) != SQLITE_DONE) {
        // Not recorded: stop here rather than send the same row again now.
        round.errors.push_back(name + ": recording the delivery: " + sqlite3_errmsg(db_));
        break;
      }
      if (!d.ok) break;  // keep this receiver's order; try it again when due
    }
  }
  return round;
}

Expected<std::vector<OutboxRow>> Outbox::Rows() {
  Stmt s;
  if (sqlite3_prepare_v2(db_,
                         "SELECT id, receiver, idempotency_key, alert_key, status, state, "
                         "attempts, next_attempt_at, created_at, delivered_at, last_error "
                         "FROM outbox ORDER BY id",
                         -1, &s.s, nullptr) != SQLITE_OK) {
    return SqlError(db_, "rows");
  }
  std::vector<OutboxRow> out;
  while (sqlite3_step(s.s) == SQLITE_ROW) {
    OutboxRow r;
    r.id = sqlite3_column_int64(s.s, 0);
    r.receiver = Text(s.s, 1);
    r.idempotency_key = Text(s.s, 2);
    r.alert_key = Text(s.s, 3);
    r.status = Text(s.s, 4);
    r.state = Text(s.s, 5);
    r.attempts = sqlite3_column_int(s.s, 6);
    r.next_attempt_at = sqlite3_column_double(s.s, 7);
    r.created_at = sqlite3_column_double(s.s, 8);
    if (sqlite3_column_type(s.s, 9) != SQLITE_NULL) r.delivered_at = sqlite3_column_double(s.s, 9);
    r.last_error = Text(s.s, 10);
    out.push_back(r);
  }
  return out;
}

Expected<void> OutboxNotifier::Notify(const Alert& alert) {
  auto queued = outbox_.Enqueue(alert, receivers_, alert.at);
  if (!queued) return queued.error();
  return {};
}

}  // namespace jobmon::alerts
