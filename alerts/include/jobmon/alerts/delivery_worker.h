#pragma once
// Delivery on its own schedule: the outbox is drained by a thread of its own
// with its own connection to the state database, so a slow Slurm, a slow
// scrape or a long cycle never holds an alert back beyond its backoff. The
// daemon runs one per receiver: a round stops at its time budget, and a slow
// receiver must hold back only its own events. The cycle only queues
// (Outbox::Enqueue, in its transaction) and wakes them.

#include <sqlite3.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jobmon/alerts/outbox.h"
#include "jobmon/alerts/receiver.h"
#include "jobmon/common/expected.h"

namespace jobmon::alerts {

struct DeliveryWorkerOptions {
  std::string state_db;         // the database the monitor queues into
  double max_backoff = 600;     // as the outbox's
  double interval_seconds = 1;  // how often due rows are looked for without a wake-up
  double budget_seconds = 10;   // one round's time limit (a slow receiver's)
};

class DeliveryWorker {
 public:
  // Called after every round, on the worker's thread.
  using RoundCallback = std::function<void(const DeliveryRound&)>;
  using Clock = std::function<double()>;  // wall-clock seconds

  static Expected<std::unique_ptr<DeliveryWorker>> Open(DeliveryWorkerOptions options,
                                                        std::vector<Receiver*> receivers,
                                                        RoundCallback on_round, Clock now);
  ~DeliveryWorker();
  DeliveryWorker(const DeliveryWorker&) = delete;
  DeliveryWorker& operator=(const DeliveryWorker&) = delete;

  // Starts the thread (once).
  void Start();
  // Something was queued: deliver now rather than at the next interval.
  void Wake();
  // One round on the caller's thread (the daemon's --once; tests).
  DeliveryRound RunRound();
  // Ends the thread after its current round; called by the destructor.
  void Stop();

 private:
  DeliveryWorker(DeliveryWorkerOptions options, sqlite3* db, std::vector<Receiver*> receivers,
                 RoundCallback on_round, Clock now);
  void Loop();

  DeliveryWorkerOptions options_;
  sqlite3* db_;
  Outbox outbox_;
  std::vector<Receiver*> receivers_;
  RoundCallback on_round_;
  Clock now_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool woken_ = false, stopping_ = false;
  std::thread thread_;
};

}  // namespace jobmon::alerts
