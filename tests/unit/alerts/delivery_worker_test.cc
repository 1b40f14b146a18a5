// Deliveries on their own thread and connection: an alert queued by the
// cycle reaches its receiver while the cycle's own thread is busy (waiting
// on a slow Slurm), and the worker stops cleanly.
#include "jobmon/alerts/delivery_worker.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

namespace jobmon::alerts {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class CountingReceiver : public Receiver {
 public:
  std::string name() const override { return "count"; }
  std::string kind() const override { return "test"; }
  Delivery Deliver(const Alert& alert, const std::string&) override {
    std::lock_guard<std::mutex> lock(mutex);
    keys.push_back(alert.key);
    thread = std::this_thread::get_id();
    Delivery delivered;
    delivered.ok = true;
    return delivered;
  }
  std::mutex mutex;
  std::vector<std::string> keys;
  std::thread::id thread;
};

TEST(DeliveryWorker, DeliversWhileTheCycleThreadIsBusy) {
  char tmpl[] = "/tmp/jobmon-delivery-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/state.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_TRUE(Outbox::EnsureSchema(db).ok());
  Outbox cycle_outbox(db);

  CountingReceiver receiver;
  std::atomic<int> rounds{0};
  auto worker = DeliveryWorker::Open(
      {.state_db = path, .interval_seconds = 0.05}, {&receiver},
      [&](const DeliveryRound&) { ++rounds; }, Now);
  ASSERT_TRUE(worker.ok()) << worker.error().message;
  (*worker)->Start();

  Alert alert;
  alert.status = "firing";
  alert.klass = "hang/busy-wait";
  alert.job_id = 7;
  alert.key = AlertKey("c", 7, alert.klass);
  ASSERT_TRUE(cycle_outbox.Enqueue(alert, {"count"}, Now()).ok());
  (*worker)->Wake();
  // The "cycle" now waits on a slow Slurm; the alert must not wait with it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(receiver.mutex);
      if (!receiver.keys.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard<std::mutex> lock(receiver.mutex);
    ASSERT_EQ(receiver.keys.size(), 1u);
    EXPECT_EQ(receiver.keys[0], "c/7/hang/busy-wait");
    EXPECT_NE(receiver.thread, std::this_thread::get_id()) << "delivered by the worker";
  }
  (*worker)->Stop();
  const int after_stop = rounds.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(rounds.load(), after_stop) << "no round after Stop";
  auto rows = cycle_outbox.Rows();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].state, "delivered") << "seen by the cycle's own connection";
  auto owned = std::move(worker).value();
  owned.reset();
  sqlite3_close(db);
  std::filesystem::remove_all(dir);
}

TEST(DeliveryWorker, AMissingDatabaseIsAnError) {
  auto worker = DeliveryWorker::Open({.state_db = "/nonexistent/state.db"}, {}, nullptr, Now);
  EXPECT_FALSE(worker.ok());
}

}  // namespace
}  // namespace jobmon::alerts
