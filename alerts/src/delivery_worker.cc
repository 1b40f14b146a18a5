#include "jobmon/alerts/delivery_worker.h"

#include <chrono>

namespace jobmon::alerts {

Expected<std::unique_ptr<DeliveryWorker>> DeliveryWorker::Open(DeliveryWorkerOptions options,
                                                               std::vector<Receiver*> receivers,
                                                               RoundCallback on_round, Clock now) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(options.state_db.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string error = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Error{"delivery: cannot open " + options.state_db + ": " + error};
  }
  // The cycle's transaction holds the write lock briefly; wait for it.
  sqlite3_busy_timeout(db, 10000);
  if (auto schema = Outbox::EnsureSchema(db); !schema) {
    sqlite3_close(db);
    return schema.error();
  }
  return std::unique_ptr<DeliveryWorker>(new DeliveryWorker(
      std::move(options), db, std::move(receivers), std::move(on_round), std::move(now)));
}

DeliveryWorker::DeliveryWorker(DeliveryWorkerOptions options, sqlite3* db,
                               std::vector<Receiver*> receivers, RoundCallback on_round, Clock now)
    : options_(std::move(options)),
      db_(db),
      outbox_(db, options_.max_backoff),
      receivers_(std::move(receivers)),
      on_round_(std::move(on_round)),
      now_(std::move(now)) {}

DeliveryWorker::~DeliveryWorker() {
  Stop();
  sqlite3_close(db_);
}

void DeliveryWorker::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void DeliveryWorker::Wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  wake_.notify_one();
}

void DeliveryWorker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

DeliveryRound DeliveryWorker::RunRound() {
  DeliveryRound round = outbox_.DeliverDue(receivers_, now_(), options_.budget_seconds);
  if (on_round_) on_round_(round);
  return round;
}

void DeliveryWorker::Loop() {
  const auto interval = std::chrono::duration<double>(options_.interval_seconds);
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, interval, [this] { return woken_ || stopping_; });
      if (stopping_) return;
      woken_ = false;
    }
    RunRound();
  }
}

}  // namespace jobmon::alerts
